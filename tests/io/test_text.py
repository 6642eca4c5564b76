"""Text edge lists: formats, quirks of the real datasets, streaming, chunking, byte ranges."""
import bz2
import gzip
import io
import lzma
import re
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from asapgraph.graph.io import (count_lines_before,
    iter_edge_chunks,
    load_graph,
    parse_byte_range,
    read_edges)

SHARED_FILES = [
    "karate.txt", "foodweb-baydry.txt", "email-Eu-core.txt", "p2p-Gnutella08.txt", "ca-GrQc.txt",
    "soc-sign-bitcoinotc.csv.gz", "CollegeMsg.txt.gz", "wordassociation-2011.txt",
    "wiki-Vote.txt.gz", "p2p-Gnutella31.txt.gz", "law-enron.txt.gz", "cit-HepTh.txt.gz",
    "ca-AstroPh.txt.gz", "cit-HepPh.txt.gz", "soc-Epinions1.txt.gz", "soc-Slashdot0902.txt.gz",
    "web-NotreDame.txt.gz", "cnr-2000.txt.gz",
]


def readme_table(readme):
    """``{file: (nodes, edges)}`` from the summary table of the datasets README."""
    out = {}
    for line in readme.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) > 3 and re.match(r"^[\w.-]+\.(txt|csv)(\.gz)?$", cells[0]):
            nodes = int(cells[1].replace(",", ""))
            edges = int(cells[2].split()[0].replace(",", ""))
            out[cells[0]] = (nodes, edges)
    return out


@pytest.mark.shared
@pytest.mark.parametrize("name", SHARED_FILES)
def test_shared_dataset_counts(shared, name):
    p = shared(name)
    table = readme_table(p.parent / "README.md")
    assert name in table, f"{name} missing from the README table"
    nodes, edges = table[name]
    weighted = name in ("foodweb-baydry.txt", "soc-sign-bitcoinotc.csv.gz")
    g = load_graph(p, weighted=weighted)
    assert (g.n, g.m) == (nodes, edges)
    assert int(g.indptr[-1]) == g.m and int(g.out_degree.sum()) == g.m
    e = read_edges(p)
    assert len(e) == edges
    assert np.array_equal(np.unique(np.concatenate([e.src, e.dst])), g.original_ids())


def _loadtxt_edges(path, delimiter=None, usecols=(0, 1)):
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt") as f:
        a = np.loadtxt(f, comments=["#", "%"], delimiter=delimiter, usecols=usecols, ndmin=2)
    return a


@pytest.mark.shared
@pytest.mark.parametrize("name,delim", [
    ("p2p-Gnutella08.txt", None),          # CRLF, SNAP header
    ("email-Eu-core.txt", None),           # space separated, no header
    ("CollegeMsg.txt.gz", None),           # timestamps in column 3, duplicates
    ("soc-sign-bitcoinotc.csv.gz", ","),   # commas, signed weights, timestamps
    ("wiki-Vote.txt.gz", None),            # trailing blank in the header, CRLF, sparse ids
    ("foodweb-baydry.txt", None),          # float weights
])
def test_shared_edges_equal_loadtxt(shared, name, delim):
    p = shared(name)
    ref = _loadtxt_edges(p, delim, usecols=(0, 1, 2) if name in (
        "soc-sign-bitcoinotc.csv.gz", "foodweb-baydry.txt") else (0, 1))
    e = read_edges(p, weighted=ref.shape[1] == 3)
    assert e.src.dtype == np.int64 and e.dst.dtype == np.int64
    assert np.array_equal(e.src, ref[:, 0].astype(np.int64))
    assert np.array_equal(e.dst, ref[:, 1].astype(np.int64))
    if ref.shape[1] == 3:
        assert np.array_equal(e.weights, ref[:, 2])  # exact: both correctly rounded


@pytest.mark.shared
def test_multigraph_semantics_vs_networkx(shared):
    """CollegeMsg has 39,539 duplicate lines: parallel edges count, as in nx.MultiDiGraph."""
    nx = pytest.importorskip("networkx")
    p = shared("CollegeMsg.txt.gz")
    G = nx.read_edgelist(p, create_using=nx.MultiDiGraph, nodetype=int, data=False)
    g = load_graph(p)
    assert g.n == G.number_of_nodes() and g.m == G.number_of_edges()
    A = nx.to_scipy_sparse_array(G, nodelist=list(g.original_ids()), format="csr")
    assert abs(g.to_scipy() - A).max() == 0


@pytest.mark.shared
def test_undirected_doubles_edges(shared):
    nx = pytest.importorskip("networkx")
    p = shared("karate.txt")
    g = load_graph(p, undirected=True)
    G = nx.read_edgelist(p, create_using=nx.MultiGraph, nodetype=int, data=False)
    A = nx.to_scipy_sparse_array(G, nodelist=list(g.original_ids()), format="csr")
    assert g.m == 2 * G.number_of_edges()
    assert abs(g.to_scipy() - A).max() == 0


def write(tmp_path, name, data):
    p = tmp_path / name
    p.write_bytes(data)
    return p


QUIRKY = (b"# header \r\n% other comment\n\n  \t\n1\t2\r\n3 4 \n5,6\n  7   8\t\t9 extra\n"
          b"10 , 11\n12 13")  # no final newline


def test_quirks(tmp_path):
    e = read_edges(write(tmp_path, "q.txt", QUIRKY))
    assert e.src.tolist() == [1, 3, 5, 7, 10, 12]
    assert e.dst.tolist() == [2, 4, 6, 8, 11, 13]


@pytest.mark.parametrize("comp", ["gz", "bz2", "xz"])
def test_compressed(tmp_path, comp):
    mod = {"gz": gzip, "bz2": bz2, "xz": lzma}[comp]
    e = read_edges(write(tmp_path, "q.txt." + comp, mod.compress(QUIRKY)))
    assert e.src.tolist() == [1, 3, 5, 7, 10, 12]
    # recognised by magic bytes, not only by name
    e2 = read_edges(write(tmp_path, "misnamed.txt", mod.compress(QUIRKY)))
    assert e2.dst.tolist() == e.dst.tolist()


@pytest.mark.parametrize("comp", [None, "gz"])
def test_stdin(monkeypatch, comp):
    data = QUIRKY if comp is None else gzip.compress(QUIRKY)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    e = read_edges("-")
    assert e.src.tolist() == [1, 3, 5, 7, 10, 12] and e.path == "<stdin>"


def test_weights_and_columns(tmp_path):
    p = write(tmp_path, "w.txt", b"1 2 0.5 100\n2 3 -1e-3 200\n3 1 +7 300\n4 4 2.5E2 400\n")
    e = read_edges(p, weighted=True)
    assert e.weights.tolist() == [0.5, -1e-3, 7.0, 250.0]
    e4 = read_edges(p, weight_col=4)
    assert e4.weights.tolist() == [100.0, 200.0, 300.0, 400.0]
    e_sw = read_edges(p, src_col=2, dst_col=1)
    assert e_sw.src.tolist() == [2, 3, 1, 4] and e_sw.dst.tolist() == [1, 2, 3, 4]


def test_weight_parsing_matches_python_float(rng):
    vals = np.concatenate([rng.standard_normal(2000) * 10.0 ** rng.integers(-20, 20, 2000),
                           rng.integers(-10**6, 10**6, 500).astype(float)])
    texts = [repr(float(v)) for v in vals] + [f"{v:.6f}" for v in vals[:300]] + \
        [f"{v:.17e}" for v in vals[:300]]
    from asapgraph.kernels import _parse

    for t in texts:
        rc, v = _parse.parse_weight(t.encode())
        assert rc == 0 and v == float(t), t


def test_large_ids_sparse_and_unordered(tmp_path):
    big = 2**63 - 1
    p = write(tmp_path, "big.txt", f"{big} 5\n5 {big - 10}\n0 {big}\n".encode())
    e = read_edges(p)
    assert e.src.tolist() == [big, 5, 0] and e.dst.tolist() == [5, big - 10, big]
    g = load_graph(p)
    assert g.original_ids().tolist() == [0, 5, big - 10, big]
    s, d, _ = g.edges()
    ids = g.original_ids()
    assert sorted(zip(ids[s].tolist(), ids[d].tolist())) == sorted(zip(e.src.tolist(),
                                                                          e.dst.tolist()))


def test_id_widening_midstream(tmp_path):
    """ids < 2**31 for many blocks, then a 64-bit id: storage widens, nothing lost."""
    n = 20000
    src = np.arange(n, dtype=np.int64)
    dst = (src * 7919) % n
    dst[-1] = 2**40 + 3
    text = "".join(f"{a}\t{b}\n" for a, b in zip(src, dst)).encode()
    p = write(tmp_path, "w.txt", text)
    e = read_edges(p, chunk_bytes=4096)
    assert np.array_equal(e.src, src) and np.array_equal(e.dst, dst)
    g = load_graph(p, chunk_bytes=4096)
    assert g.m == n and g.ids[-1] == 2**40 + 3


def test_long_line_and_small_blocks(tmp_path):
    text = b"#" + b"x" * 10000 + b"\n1 2\n" + b"3 4 " + b"9" * 9000 + b"\n5 6\n"
    e = read_edges(write(tmp_path, "l.txt", text), chunk_bytes=4096)
    assert e.src.tolist() == [1, 3, 5]


def test_parallel_pieces_and_error_line(tmp_path, rng):
    """> 2 MiB block: parsed as several OpenMP pieces; error line numbers stay exact."""
    m = 300000
    src = rng.integers(0, 10**6, m)
    dst = rng.integers(0, 10**6, m)
    lines = [f"{a} {b}\n" for a, b in zip(src, dst)]
    lines.insert(1000, "# comment in the middle\n")
    p = write(tmp_path, "big.txt", "".join(lines).encode())
    e = read_edges(p)
    assert np.array_equal(e.src, src) and np.array_equal(e.dst, dst)
    bad_at = 250000
    lines[bad_at] = "17 x17\n"
    p2 = write(tmp_path, "bad.txt", "".join(lines).encode())
    from asapgraph.errors import InputError

    with pytest.raises(InputError) as ei:
        read_edges(p2)
    assert ei.value.line == bad_at + 1
    assert ei.value.message == "expected an integer vertex id in column 2, got 'x17'"


# ------------------------------------------------------------------ property tests
SEPS = st.sampled_from([" ", "\t", ",", "  ", " \t ", ", "])
EOLS = st.sampled_from(["\n", "\r\n", " \n", "\t\r\n"])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2**63 - 1), st.integers(0, 2**63 - 1),
                          st.floats(allow_nan=False, allow_infinity=False, width=64),
                          SEPS, EOLS, st.booleans()), min_size=1, max_size=40),
       st.booleans())
def test_property_roundtrip(tmp_path_factory, rows, final_newline):
    parts = []
    for i, (a, b, w, sep, eol, comment) in enumerate(rows):
        if comment:
            parts.append(("# c" if i % 2 else "% c") + eol)
        parts.append(f"{a}{sep}{b}{sep}{w!r}{eol}")
    text = "".join(parts)
    if not final_newline:
        text = text.rstrip("\r\n")
    p = tmp_path_factory.mktemp("prop") / "e.txt"
    p.write_bytes(text.encode())
    e = read_edges(p, weighted=True, chunk_bytes=4096)
    assert e.src.tolist() == [r[0] for r in rows]
    assert e.dst.tolist() == [r[1] for r in rows]
    assert e.weights.tolist() == [r[2] for r in rows]


# ------------------------------------------------------------------ chunks and ranges
def _edges_text(rng, m, hi=10**9):
    src = rng.integers(0, hi, m)
    dst = rng.integers(0, hi, m)
    body = []
    for i, (a, b) in enumerate(zip(src, dst)):
        if i % 97 == 0:
            body.append("# comment line\n")
        body.append(f"{a}\t{b}\r\n" if i % 5 == 0 else f"{a} {b}\n")
    return src, dst, "".join(body).encode()


def test_parse_byte_range_partition(tmp_path, rng):
    src, dst, text = _edges_text(rng, 5000)
    p = write(tmp_path, "r.txt", text)
    size = len(text)
    for _ in range(15):
        k = int(rng.integers(1, 12))
        cuts = np.unique(np.concatenate([[0, size], rng.integers(0, size, k - 1)]))
        parts = [parse_byte_range(p, a, b) for a, b in zip(cuts[:-1], cuts[1:])]
        assert np.array_equal(np.concatenate([q.src for q in parts]), src)
        assert np.array_equal(np.concatenate([q.dst for q in parts]), dst)
        for q in parts:  # the parser's largest id (the rank loader skips its own pass)
            assert q.max_id == (max(int(q.src.max()), int(q.dst.max())) if len(q) else -1)
    big = write(tmp_path, "big.txt", b"1 2\n# c\n3 4294967296\n5 6\n")
    for a, b, mx in ((0, 4, 2), (0, 100, 4294967296), (4, 100, 4294967296), (20, 100, 6)):
        q = parse_byte_range(big, a, b, id32=True)
        assert q.max_id == mx and (q.src.dtype == np.int64) == (mx > 2**31 - 1)


def test_parse_byte_range_error_line(tmp_path):
    text = b"1 2\n3 4\n5 6\n7 -8\n9 10\n"
    p = write(tmp_path, "r.txt", text)
    from asapgraph.errors import InputError

    with pytest.raises(InputError) as ei:
        parse_byte_range(p, 9, len(text))
    assert ei.value.line == 4
    assert count_lines_before(p, 12) == 3


@pytest.mark.parametrize("comp", [None, "gz"])
def test_iter_edge_chunks(tmp_path, rng, comp):
    src, dst, text = _edges_text(rng, 20000)
    p = write(tmp_path, "c.txt" + (".gz" if comp else ""), gzip.compress(text) if comp else text)
    chunks = list(iter_edge_chunks(p, 8192))
    assert len(chunks) > 10
    assert max(len(c) for c in chunks) <= 8192 // 4
    assert np.array_equal(np.concatenate([c.src for c in chunks]), src)
    assert np.array_equal(np.concatenate([c.dst for c in chunks]), dst)
    assert chunks[0].first_line == 1 and all(
        a.first_line < b.first_line for a, b in zip(chunks, chunks[1:]))


def test_utf8_bom(tmp_path):
    e = read_edges(write(tmp_path, "bom.txt", b"\xef\xbb\xbf1 2\n3 4\n"))
    assert e.src.tolist() == [1, 3]


def test_byte_range_rejects_compressed(tmp_path):
    from asapgraph.errors import InputError

    p = write(tmp_path, "c.txt.gz", gzip.compress(b"1 2\n"))
    with pytest.raises(InputError, match="uncompressed"):
        parse_byte_range(p, 0, 10)


@pytest.mark.parametrize("sep", ["\t", " ", ",", " \t "])
def test_ids_of_every_length(tmp_path, rng, sep):
    """Ids of 1 to 19 digits (the 8-byte digit groups of the parser, and the slow path past
    18 digits), leading zeros, lines cut at every offset of a 4 KiB block, CRLF, no final
    newline: the same numbers as Python's int()."""
    m = 20000
    nd = rng.integers(1, 20, size=(m, 2))
    vals = [[int(rng.integers(10 ** (k - 1) if k > 1 else 0, min(10 ** k, 2**63)))
             for k in row] for row in nd.tolist()]
    lines = []
    for i, (a, b) in enumerate(vals):
        sa = str(a).zfill(3) if i % 11 == 0 else str(a)
        end = "\r\n" if i % 5 == 0 else "\n"
        lines.append(f"{sa}{sep}{b}{end}")
    text = "".join(lines).rstrip("\n").encode()
    p = write(tmp_path, "digits.txt", text)
    for cb in (4096, 1 << 25):
        e = read_edges(p, chunk_bytes=cb)
        assert e.src.tolist() == [a for a, _ in vals]
        assert e.dst.tolist() == [b for _, b in vals]


def test_mapped_and_streamed_reads_agree(tmp_path, rng, monkeypatch):
    """The memory-mapped reader and the streaming one: same edges, same error lines."""
    from asapgraph.graph.io import _text

    m = 50000
    src, dst = rng.integers(0, 10**9, m), rng.integers(0, 10**5, m)
    text = "# header\n" + "".join(f"{a} {b}\n" for a, b in zip(src, dst))
    p = write(tmp_path, "a.txt", b"\xef\xbb\xbf" + text.encode())
    bad = write(tmp_path, "bad.txt", (text + "7 x\n").encode())
    got = []
    for mapped in (True, False):
        if not mapped:
            monkeypatch.setattr(_text, "parse_mapped", lambda *a, **k: False)
        e = read_edges(p, chunk_bytes=4096)
        with pytest.raises(Exception) as err:
            read_edges(bad, chunk_bytes=4096)
        got.append((e.src.tolist(), e.dst.tolist(), str(err.value)))
    assert got[0] == got[1]
    assert got[0][0] == src.tolist() and f":{m + 2}:" in got[0][2]


def test_count_newlines_swar_equals_numpy(rng):
    """The 8-bytes-at-a-time newline count (and its NUL flag, which the parser's binary
    check uses) against numpy, at every length around the word and 255-word boundaries."""
    from asapgraph.kernels import _parse

    lengths = list(range(1, 40)) + [2039, 2040, 2041, 2047, 4095, 4096, 100001]
    for n in lengths:
        for p in (0.0, 0.07, 0.5, 1.0):
            b = np.where(rng.random(n) < p, 10, rng.integers(1, 256, n)).astype(np.uint8)
            assert _parse.count_newlines(b) == np.count_nonzero(b == 10), (n, p)
    acc = _parse.EdgeAccumulator(1, 2, 0, True)
    block = bytearray(b"1 2\n" * 600)
    block[2001] = 0  # a NUL far from the start of a piece: binary data
    assert acc.feed(bytes(block), True) == -1 and acc.error[0] == _parse.BINARY


@pytest.mark.parametrize("comp", [None, "gz"])
def test_labelled_stdin_is_read_whole(monkeypatch, comp):
    """``--labels`` reads its input whole: plain stdin was cut after 1 MiB (one read of
    the sniffing wrapper), a line split in two ("<stdin>:82922: expected 2 columns, got
    1") or, on a line boundary, the rest of the edges silently dropped."""
    from asapgraph.graph.io.labelled import read_labelled

    text = "".join(f"v{i} w{(i * 7) % 1000}\n" for i in range(120_000)).encode()
    assert len(text) > 1.3 * (1 << 20)

    class Pipe(io.RawIOBase):  # a pipe: short reads of at most 64 KiB
        def __init__(self, data):
            self.data, self.pos = data, 0

        def readable(self):
            return True

        def readinto(self, b):
            k = min(len(b), 65536, len(self.data) - self.pos)
            b[:k] = self.data[self.pos:self.pos + k]
            self.pos += k
            return k

    data = text if comp is None else gzip.compress(text)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BufferedReader(Pipe(data))))
    src, dst, w = read_labelled("-")
    assert len(src) == 120_000 and src[-1] == "v119999" and dst[-1] == f"w{119999 * 7 % 1000}"
    assert w is None


@pytest.mark.parametrize("chunk", [None, 64])
def test_bare_cr_is_refused_at_its_line(tmp_path, chunk):
    """Old Mac line ends ("0 1\\r1 2\\r") would read as one line (CR is a blank): refused
    at the first bare CR, also past the first block; CRLF reads as before."""
    from asapgraph.errors import InputError
    from asapgraph.graph.io import read_edges

    kw = {} if chunk is None else {"chunk_bytes": chunk}
    p = tmp_path / "cr.txt"
    p.write_bytes(b"0 1\r1 2\r2 0\r")
    with pytest.raises(InputError) as ei:
        read_edges(p, **kw)
    assert str(ei.value) == (f"{p}:1: line ends with a bare CR (old Mac line endings): "
                             "convert with `tr '\\r' '\\n'`")
    body = b"".join(b"%d %d 1\r\n" % (i, i + 1) for i in range(40))
    p.write_bytes(body + b"# note\r\n7 8 1\r9 10 1\n")
    with pytest.raises(InputError) as ei:
        read_edges(p, weighted=True, **kw)
    assert ei.value.line == 42
    p.write_bytes(body + b"x 1\n5 6\r7 8\n")  # the first problem in file order wins
    with pytest.raises(InputError) as ei:
        read_edges(p, **kw)
    assert ei.value.line == 41 and "'x'" in str(ei.value)
    p.write_bytes(body)
    el = read_edges(p, weighted=True, **kw)
    assert el.src.tolist() == list(range(40)) and el.weights.tolist() == [1.0] * 40


@pytest.mark.parametrize("final_newline", [True, False])
def test_load_graph_releasing_build_equals_read_edges(tmp_path, rng, monkeypatch,
                                                      final_newline):
    """``load_graph`` of a text file hands the parser's arrays to the build to consume
    (pages released while they are placed): the Graph is the one built from
    ``read_edges`` (comments, blank lines, duplicate edges, self-loops, absent ids, a last
    line without its newline, a file size that is no multiple of a page); weighted files
    take the plain placement and agree as well."""
    from asapgraph.graph import core
    from asapgraph.graph.core import Graph

    monkeypatch.setattr(core, "BLOCKED_MIN_EDGES", 1000)
    monkeypatch.setattr(core, "BLOCK_EDGES_SMALL_PAGES", 8192)
    monkeypatch.setattr(core, "RELEASE_EDGES", 3000)
    m, N = 250000, 40000
    src = rng.integers(0, N, m)
    dst = rng.integers(0, N, m)
    src[100:200], dst[100:200] = src[:100], dst[:100]  # duplicates
    dst[::13] = src[::13]  # self-loops
    dst[dst % 101 == 7] = 9  # absent ids: the Graph keeps the original ids
    src[src % 101 == 7] = 9
    w = rng.integers(1, 9, m)
    lines = [f"{a}\t{b}\t{c}" for a, b, c in zip(src, dst, w)]
    lines.insert(0, "# header")
    lines.insert(5000, "% a comment")
    lines.insert(70000, "")
    text = "\n".join(lines) + ("\n" if final_newline else "")
    p = tmp_path / "g.txt"
    p.write_text(text)
    assert p.stat().st_size % 4096
    el = read_edges(p)
    ref = Graph.from_original_ids(el.src, el.dst)
    from asapgraph.kernels import _graph

    calls = []
    real = _graph.counted_place
    monkeypatch.setattr(_graph, "counted_place",
                        lambda *a, **k: calls.append(k.get("release_step")) or real(*a, **k))
    g = load_graph(p)
    assert calls == [3000]  # the build from the parser's counts, releasing
    assert isinstance(g.indices.base, type(_graph.small_page_empty(1, np.int32).base))
    assert g.ids is not None
    for a, b in ((g.indptr, ref.indptr), (g.indices, ref.indices),
                 (g.out_degree, ref.out_degree), (g.ids, ref.ids)):
        assert np.array_equal(a, b) and a.dtype == b.dtype
    gw = load_graph(p, weighted=True)
    refw = Graph.from_original_ids(el.src, el.dst, weights=w.astype(float))
    assert np.array_equal(gw.indices, refw.indices) and np.array_equal(gw.weights, refw.weights)


def _graph_arrays(g):
    return [g.indptr, g.indices, g.out_degree, g.ids, g.weights, g.out_weight]


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("chunk", [1 << 12, 1 << 16, 32 << 20])
def test_load_graph_counted_build_equals_read_edges(tmp_path, rng, monkeypatch, threads,
                                                    chunk):
    """``load_graph`` of a plain text file builds the CSR from the degree counts the
    parser took block by block (:meth:`EdgeAccumulator.enable_counts`,
    ``core.counted_build``): the same Graph as the build from ``read_edges`` for any
    thread count and block size (many blocks, pieces of unequal size, comment and blank
    lines, self-loops, duplicates, absent ids, ids only seen as sources or only as
    destinations, a heavy destination spread over the threads)."""
    from asapgraph.graph import core
    from asapgraph.graph.core import Graph
    from asapgraph.kernels import _graph

    monkeypatch.setattr(core, "BLOCKED_MIN_EDGES", 1000)
    monkeypatch.setattr(core, "BLOCK_EDGES_SMALL_PAGES", 4096)
    monkeypatch.setattr(core, "RELEASE_EDGES", 2500)
    m, N = 120000, 20000
    src = rng.integers(0, N, m)
    dst = rng.integers(0, N, m)
    dst[::50] = 777  # heavy in-row
    src[src % 97 == 3] = 5  # absent ids ...
    dst[dst % 97 == 3] = 6
    dst[src % 89 == 11] = 8  # ... ids seen only as sources
    src[src % 83 == 13] = 12  # ... only as destinations (some)
    dst[::17] = src[::17]
    lines = [f"{a} {b}" for a, b in zip(src, dst)]
    lines.insert(0, "% header")
    lines.insert(999, "")
    lines.insert(40000, "# comment")
    p = tmp_path / "g.txt"
    p.write_text("\n".join(lines) + "\n")
    el = read_edges(p)
    ref = Graph.from_original_ids(el.src, el.dst)
    calls = []
    real = _graph.counted_place
    monkeypatch.setattr(_graph, "counted_place",
                        lambda *a, **k: calls.append(1) or real(*a, **k))
    old = _graph.set_max_threads(threads)
    try:
        g = load_graph(p, chunk_bytes=chunk)
    finally:
        _graph.set_max_threads(old)
    assert calls == [1]
    assert g.n == ref.n and g.m == ref.m and g.ids is not None
    for a, b in zip(_graph_arrays(g), _graph_arrays(ref)):
        assert (a is None) == (b is None)
        if a is not None:
            assert np.array_equal(a, b) and a.dtype == b.dtype


def test_load_graph_counted_build_all_ids_present(tmp_path, monkeypatch):
    """Every id 0..N-1 present: the counted build leaves ``ids`` None, as the others."""
    from asapgraph.graph import core
    from asapgraph.graph.core import Graph

    monkeypatch.setattr(core, "BLOCKED_MIN_EDGES", 1000)
    N = 3000
    src = np.arange(4 * N * 4) % N
    dst = (src * 7 + 3) % N
    p = tmp_path / "g.txt"
    p.write_text("".join(f"{a}\t{b}\n" for a, b in zip(src, dst)))
    g = load_graph(p)
    ref = Graph.from_original_ids(src, dst)
    assert g.ids is None and ref.ids is None
    for a, b in zip(_graph_arrays(g), _graph_arrays(ref)):
        assert (a is None and b is None) or (np.array_equal(a, b) and a.dtype == b.dtype)


@pytest.mark.parametrize("big", [10**6, 2**31 + 5])
def test_load_graph_counts_dropped(tmp_path, monkeypatch, big):
    """An id past the counters' capacity (the file's size / 16: the fused build cannot
    apply) or past int32 (the ids widen) drops the parser's counts; the Graph is the
    one of ``read_edges``, built without them."""
    from asapgraph.graph.core import Graph
    from asapgraph.graph.io import _text
    from asapgraph.kernels import _graph

    rng = np.random.default_rng(5)
    src = rng.integers(0, 50, 3000)
    dst = rng.integers(0, 50, 3000)
    dst[2000] = big
    p = tmp_path / "g.txt"
    p.write_text("".join(f"{a} {b}\n" for a, b in zip(src, dst)))
    s, d, w, info = _text.read_text(p, counts=True, chunk_bytes=4096)
    assert info["counts"] is None
    called = []
    real = _graph.counted_place
    monkeypatch.setattr(_graph, "counted_place",
                        lambda *a, **k: called.append(1) or real(*a, **k))
    g = load_graph(p)
    assert not called
    ref = Graph.from_original_ids(src, dst)
    for a, b in zip(_graph_arrays(g), _graph_arrays(ref)):
        assert (a is None and b is None) or (np.array_equal(a, b) and a.dtype == b.dtype)


def test_parser_counts(tmp_path):
    """:meth:`EdgeAccumulator.take_counts`: per-thread out-degree rows and destination bit
    maps that sum / or to the counts of the edges parsed."""
    from asapgraph.kernels import _parse

    rng = np.random.default_rng(3)
    src = rng.integers(0, 1000, 50000)
    dst = rng.integers(0, 1000, 50000)
    data = "".join(f"{a} {b}\n" for a, b in zip(src, dst)).encode()
    acc = _parse.EdgeAccumulator(1, 2, 0, True)
    assert acc.enable_counts(len(data) // 16 + 64) and acc.counting
    pos = 0
    while pos < len(data):
        end = min(len(data), pos + 7000)
        pos += acc.feed(data[pos:end], end == len(data))
    odeg, bits = acc.take_counts()
    assert not acc.counting and acc.take_counts() is None
    assert np.array_equal(odeg.sum(axis=0)[:1000], np.bincount(src, minlength=1000))
    assert not odeg[:, 1000:].any()
    seen = np.unpackbits(np.bitwise_or.reduce(bits, axis=0).view(np.uint8),
                         bitorder="little")
    assert np.array_equal(np.flatnonzero(seen), np.unique(dst))
    weighted = _parse.EdgeAccumulator(1, 2, 3, True)
    assert not weighted.enable_counts(1000) and not weighted.counting
