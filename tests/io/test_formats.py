"""Matrix Market, .npy and the binary format (round trip, memory map, version/magic errors)."""
import gzip
import struct

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

from asapgraph.errors import InputError
from asapgraph.graph.core import Graph
from asapgraph.graph.io import (BINARY_FORMAT_VERSION,
    load_binary,
    load_graph,
    read_edges,
    save_binary)


def _random_coo(rng, n, nnz, symmetric=False, integer=False):
    r = rng.integers(0, n, nnz)
    c = rng.integers(0, n, nnz)
    if symmetric:
        r, c = np.maximum(r, c), np.minimum(r, c)
        keep = np.unique(r * n + c, return_index=True)[1]
        r, c = r[keep], c[keep]
    v = rng.integers(-5, 6, r.size).astype(float) if integer else rng.standard_normal(r.size)
    return sp.coo_matrix((v, (r, c)), shape=(n, n))


@pytest.mark.parametrize("field", ["real", "integer", "pattern"])
@pytest.mark.parametrize("symmetry", ["general", "symmetric"])
def test_mtx_vs_scipy(tmp_path, rng, field, symmetry):
    A = _random_coo(rng, 60, 400, symmetric=symmetry == "symmetric", integer=field == "integer")
    p = tmp_path / "m.mtx"
    scipy.io.mmwrite(p, A, field=field, symmetry=symmetry)
    assert symmetry in p.read_text().splitlines()[0]
    ref = scipy.io.mmread(p).tocsr()
    g = load_graph(p, weighted=field != "pattern")
    assert g.n == 60
    assert np.array_equal(g.original_ids(), np.arange(1, 61))
    got = g.to_scipy()
    # pattern entries are 1 each; duplicate entries are parallel edges (they add up)
    assert abs(got - ref).max() < 1e-12 * max(1.0, abs(ref).max())
    # gzip-compressed .mtx
    pz = tmp_path / "m.mtx.gz"
    pz.write_bytes(gzip.compress(p.read_bytes()))
    assert abs(load_graph(pz, weighted=field != "pattern").to_scipy() - got).max() == 0


def test_mtx_errors(tmp_path):
    p = tmp_path / "m.mtx"
    p.write_text("%%MatrixMarket matrix coordinate real general\n% c\n3 3 2\n1 2 1.0\n4 1 2.0\n")
    with pytest.raises(InputError, match="out of range"):
        load_graph(p)
    p.write_text("%%MatrixMarket matrix coordinate real general\n3 3 3\n1 2 1.0\n")
    with pytest.raises(InputError, match="announces 3 entries, found 1"):
        load_graph(p)
    p.write_text("%%MatrixMarket matrix array real general\n3 3\n1\n")
    with pytest.raises(InputError, match="only 'matrix coordinate'"):
        load_graph(p)
    p.write_text("%%MatrixMarket matrix coordinate real general\n3 3 2\n1 2 1.0\n2 x 2\n")
    with pytest.raises(InputError) as ei:
        load_graph(p, weighted=True)
    assert ei.value.line == 4


def test_npy(tmp_path, rng):
    e = rng.integers(0, 10**12, (500, 2))
    p = tmp_path / "e.npy"
    np.save(p, e)
    got = read_edges(p)
    assert np.array_equal(got.src, e[:, 0]) and np.array_equal(got.dst, e[:, 1])
    w = np.column_stack([e.astype(float), rng.random(500)])
    np.save(p, w)
    g = load_graph(p, weighted=True)
    ref = load_graph_from_arrays(e[:, 0], e[:, 1], w[:, 2])
    assert np.array_equal(g.ids, ref.ids)
    assert abs(g.to_scipy() - ref.to_scipy()).max() == 0


def load_graph_from_arrays(s, d, w):
    return Graph.from_original_ids(s, d, weights=w)


def _same_graph(a, b):
    assert (a.n, a.m) == (b.n, b.m)
    assert np.array_equal(a.indptr, b.indptr) and np.array_equal(a.indices, b.indices)
    assert a.indices.dtype == b.indices.dtype
    assert np.array_equal(a.out_degree, b.out_degree)
    for x, y in ((a.weights, b.weights), (a.out_weight, b.out_weight), (a.ids, b.ids)):
        assert (x is None) == (y is None)
        if x is not None:
            assert np.array_equal(x, y)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("mmap", [True, False])
def test_binary_roundtrip(tmp_path, rng, weighted, mmap):
    s = rng.integers(0, 10**15, 3000)
    d = rng.integers(0, 10**15, 3000)
    g = Graph.from_original_ids(s, d, weights=rng.random(3000) if weighted else None)
    p = tmp_path / "g.asg"
    save_binary(g, p)
    h = load_binary(p, mmap=mmap)
    _same_graph(g, h)
    # every loader accepts it, whatever its name
    p2 = tmp_path / "g.whatever"
    p2.write_bytes(p.read_bytes())
    _same_graph(g, load_graph(p2, weighted=weighted))
    e = read_edges(p2)
    assert sorted(zip(e.src.tolist(), e.dst.tolist())) == sorted(zip(s.tolist(), d.tolist()))
    assert not list(tmp_path.glob("*.tmp"))


@pytest.mark.shared
def test_binary_roundtrip_shared(tmp_path, shared):
    g = load_graph(shared("wiki-Vote.txt.gz"))
    save_binary(g, tmp_path / "w.asg")
    _same_graph(g, load_graph(tmp_path / "w.asg"))


def test_binary_errors(tmp_path, rng):
    g = Graph.from_original_ids(rng.integers(0, 100, 50), rng.integers(0, 100, 50))
    p = tmp_path / "g.asg"
    save_binary(g, p)
    blob = bytearray(p.read_bytes())
    newer = bytearray(blob)
    struct.pack_into("<I", newer, 8, BINARY_FORMAT_VERSION + 1)
    p.write_bytes(bytes(newer))
    with pytest.raises(InputError, match=f"version {BINARY_FORMAT_VERSION + 1} is newer"):
        load_binary(p)
    with pytest.raises(InputError, match="is newer"):
        load_graph(p)
    p.write_bytes(bytes(blob[: len(blob) - 100]))
    with pytest.raises(InputError, match="truncated"):
        load_graph(p)
    p.write_bytes(b"NOTAGRPH" + bytes(blob[8:]))
    with pytest.raises(InputError, match="not an asapgraph binary graph"):
        load_binary(p)


def test_save_binary_failure_leaves_nothing(tmp_path, rng, monkeypatch):
    g = Graph.from_original_ids(rng.integers(0, 100, 50), rng.integers(0, 100, 50))
    p = tmp_path / "g.asg"

    class Boom(Exception):
        pass

    import asapgraph.graph.io._binary as b

    def fail(*a, **k):
        raise Boom()

    monkeypatch.setattr(b.os, "replace", fail)
    with pytest.raises(Boom):
        save_binary(g, p)
    assert list(tmp_path.iterdir()) == []


def test_generator_spec():
    gen = pytest.importorskip("asapgraph.graph.generators")
    g = load_graph("rmat:8:4:3")
    src, dst, n = gen.from_spec("rmat:8:4:3")
    assert (g.n, g.m) == (n, src.size)
    ref = sp.coo_matrix((np.ones(src.size), (src, dst)), shape=(n, n)).tocsr()
    assert abs(g.to_scipy() - ref).max() == 0
    gu = load_graph("rmat:8:4:3", undirected=True)
    assert abs(gu.to_scipy() - (ref + ref.T - sp.diags(ref.diagonal()))).max() == 0


def test_binary_file_mode_follows_umask(tmp_path, rng):
    import os

    g = Graph.from_original_ids(rng.integers(0, 100, 50), rng.integers(0, 100, 50))
    old = os.umask(0o022)
    try:
        save_binary(g, tmp_path / "g.asg")
    finally:
        os.umask(old)
    assert (tmp_path / "g.asg").stat().st_mode & 0o777 == 0o644


@pytest.mark.parametrize("gz", [False, True])
def test_mtx_errors_name_the_line(tmp_path, gz):
    """An entry index out of range (0-based ids, a wrong size line) and an entry past the
    announced count are refused at their line, comments and blank lines in the body
    counted (the message had no line number)."""
    import gzip as _gzip

    def check(text, line, msg):
        p = tmp_path / ("m.mtx.gz" if gz else "m.mtx")
        p.write_bytes(_gzip.compress(text.encode()) if gz else text.encode())
        with pytest.raises(InputError) as ei:
            load_graph(p)
        assert ei.value.line == line and msg in str(ei.value), str(ei.value)

    head = "%%MatrixMarket matrix coordinate pattern general\n% c\n"
    check(head + "3 3 3\n1 2\n\n% mid\n2 4\n3 1\n", 7,
          "Matrix Market entry (2, 4) is out of range (rows 1..3, columns 1..3)")
    check(head + "3 3 2\n0 1\n1 2\n", 4, "entry (0, 1) is out of range")
    check(head + "3 3 2\n1 2\n2 3\n3 1\n", 6, "announces 2 entries, found 3")


MTX_INT = ("%%MatrixMarket matrix coordinate integer general\n% c\n5 5 7\n"
           "1 2 1\n2 3 2\n3 1 3\n3 4 4\n4 1 5\n2 4 6\n5 1 7\n")


@pytest.mark.parametrize("comp", ["gz", "bz2", "xz"])
def test_compressed_mtx_by_content(tmp_path, comp):
    """A compressed Matrix Market file not named .mtx (``g.gz``) was read as a text edge
    list: its size line '5 5 7' became an edge 5 -> 5 (a wrong answer, exit 0).  The
    banner is now looked for inside the compression, as for a plain file."""
    import bz2
    import lzma

    mod = {"gz": gzip, "bz2": bz2, "xz": lzma}[comp]
    p = tmp_path / f"g.{comp}"
    p.write_bytes(mod.compress(MTX_INT.encode()))
    q = tmp_path / "g.mtx"
    q.write_text(MTX_INT)
    for weighted in (False, True):
        g, ref = load_graph(p, weighted=weighted), load_graph(q, weighted=weighted)
        assert g.m == 7 and abs(g.to_scipy() - ref.to_scipy()).max() == 0


@pytest.mark.parametrize("comp", [None, "gz"])
def test_mtx_on_stdin_refused(monkeypatch, comp):
    """Matrix Market data on stdin (recognised only by a file's banner or name) was read as
    a text edge list, its size line an edge: refused at line 1."""
    import io
    import sys

    data = MTX_INT.encode() if comp is None else gzip.compress(MTX_INT.encode())
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    with pytest.raises(InputError) as ei:
        load_graph("-")
    assert ei.value.line == 1 and "Matrix Market data where a text edge list" in str(ei.value)


def test_labels_refuses_integer_formats(tmp_path):
    """``--labels`` (``labels=True``) on a .mtx file read it as names: the size line became
    an edge 5 -> 5 (exit 0, a wrong answer); on .npy/.asg "binary data" at line 1.  Refused,
    naming the format."""
    from asapgraph.graph.io import save_binary

    q = tmp_path / "g.mtx"
    q.write_text(MTX_INT)
    z = tmp_path / "g.gz"
    z.write_bytes(gzip.compress(MTX_INT.encode()))
    a = tmp_path / "g.asg"
    save_binary(load_graph(q), str(a))
    n = tmp_path / "g.npy"
    np.save(n, np.array([[1, 2], [2, 3]]))
    for path, what in ((q, "a Matrix Market file"), (z, "a Matrix Market file"),
                       (a, "an asapgraph binary graph"), (n, "a .npy edge array")):
        with pytest.raises(InputError) as ei:
            load_graph(path, labels=True)
        assert str(ei.value) == (f"{path}: --labels applies to text edge lists, and this is "
                                 f"{what} (integer vertex ids): drop --labels")
