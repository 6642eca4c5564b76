"""A corrupt binary ``.asg`` graph is refused with one InputError naming the file and what
is wrong (never a segfault, never a wrong answer): every section is corrupted in turn, at
offsets computed from the file's own header, through the Python API and the CLI."""
import os
import struct
import subprocess
import sys

import numpy as np
import pytest

import asapgraph as ag
from asapgraph.errors import InputError
from asapgraph.graph.io._binary import load_binary, read_header, save_binary

PREFIX = "corrupt asapgraph binary graph"

# sparse original ids (an ids section), parallel edges, a self-loop, no isolated vertex
EDGES = [(10, 20, 1.0), (20, 30, 2.0), (30, 10, 0.5), (30, 40, 1.5), (40, 50, 3.0),
         (50, 30, 0.25), (20, 50, 1.0), (60, 10, 2.0), (40, 70, 1.0), (70, 70, 0.5),
         (20, 30, 4.0)]


def write_graphs(d):
    """``g.asg`` (unweighted) and ``gw.asg`` (weighted), both with an ids section."""
    d = str(d)
    txt = os.path.join(d, "g.txt")
    with open(txt, "w") as f:
        f.writelines(f"{u} {v} {w!r}\n" for u, v, w in EDGES)
    save_binary(ag.load_graph(txt), os.path.join(d, "g.asg"))
    save_binary(ag.load_graph(txt, weighted=True), os.path.join(d, "gw.asg"))
    return os.path.join(d, "g.asg"), os.path.join(d, "gw.asg")


_FMT = {"indptr": "<q", "out_degree": "<q", "ids": "<q", "weights": "<d", "out_weight": "<d"}


def section(path, name):
    """The section ``name`` as a numpy array, read at the offset its header gives."""
    h = read_header(path)
    off, nb = h["sections"][name]
    assert nb, name
    dt = {"indices": "<i4" if h["itemsize"] == 4 else "<i8"}.get(name, _FMT.get(name))
    with open(path, "rb") as f:
        f.seek(off)
        return np.frombuffer(f.read(nb), dtype=dt).copy(), off, dt


def patch(path, out, name, i, value):
    """Copy ``path`` to ``out`` with element ``i`` of section ``name`` set to ``value``
    (``value`` may be a function of the old value)."""
    a, off, dt = section(path, name)
    old = a[i]
    new = value(old) if callable(value) else value
    data = bytearray(open(path, "rb").read())
    sz = np.dtype(dt).itemsize
    data[off + i * sz: off + (i + 1) * sz] = np.array([new], dtype=dt).tobytes()
    with open(out, "wb") as f:
        f.write(data)
    return out


# (name, weighted file?, section, element (negative: from the end), value, message words)
CORRUPTIONS = [
    ("indptr_start", False, "indptr", 0, 1, "indptr does not start at 0"),
    ("indptr_order", False, "indptr", 2, 2**31 - 1, "indptr not non-decreasing at vertex 2"),
    ("indptr_end", False, "indptr", -1, lambda m: m + 1, "indptr does not end at the edge count"),
    ("indices_big", False, "indices", 4, 2**31 - 1, "indices out of range"),
    ("indices_neg", False, "indices", 0, -1, "indices out of range"),
    ("out_degree", False, "out_degree", 1, lambda d: d + 1, "out_degree does not match the rows"),
    ("ids_duplicate", False, "ids", 3, lambda x: x - 10, "duplicate original id 30"),
    ("ids_negative", False, "ids", 0, -1, "negative original id"),
    ("weight_nan", True, "weights", 2, float("nan"), "non-finite edge weight"),
    ("weight_inf", True, "weights", 5, float("inf"), "non-finite edge weight"),
    ("weight_changed", True, "weights", 1, lambda w: w + 0.5, "out_weight does not match the rows"),
    ("out_weight", True, "out_weight", 2, lambda w: w * 1.02, "out_weight does not match the rows"),
    ("out_weight_nan", True, "out_weight", 0, float("nan"), "out_weight does not match the rows"),
    ("out_degree_w", True, "out_degree", 0, 0, "out_degree does not match the rows"),
]
IDS = [c[0] for c in CORRUPTIONS]


def corrupt(tmp_path, case):
    _name, weighted, sec, i, value, words = case
    g, gw = write_graphs(tmp_path)
    src = gw if weighted else g
    n = len(section(src, sec)[0])
    return patch(src, str(tmp_path / "bad.asg"), sec, i % n, value), words


@pytest.mark.parametrize("case", CORRUPTIONS, ids=IDS)
@pytest.mark.parametrize("mmap", [True, False])
def test_api_refuses_each_corrupt_section(tmp_path, case, mmap):
    bad, words = corrupt(tmp_path, case)
    with pytest.raises(InputError) as e:
        load_binary(bad, mmap=mmap)
    msg = str(e.value)
    assert msg.startswith(f"{bad}: {PREFIX}: {words}"), msg
    assert "\n" not in msg
    with pytest.raises(InputError) as e2:      # load_graph says the same
        ag.load_graph(bad, weighted=case[1])
    assert str(e2.value) == msg


def test_good_files_load_and_rounding_in_out_weight_is_accepted(tmp_path):
    g, gw = write_graphs(tmp_path)
    for p in (g, gw):
        for mmap in (True, False):
            h = load_binary(p, mmap=mmap)
            assert h.m == len(EDGES) and h.ids is not None
    # the writer may sum out-weights in another order: a last-bit difference is no corruption
    ok = patch(gw, str(tmp_path / "round.asg"), "out_weight", 1, lambda w: w * (1 + 1e-14))
    load_binary(ok)


def test_unsorted_unique_ids_are_accepted(tmp_path):
    """Readers write ids sorted, a graph built through the API may not: unique is enough."""
    g = ag.Graph.from_edges([0, 1, 2, 2], [1, 2, 0, 3], n=4,
                            ids=np.array([40, 10, 30, 20], dtype=np.int64))
    p = tmp_path / "u.asg"
    save_binary(g, p)
    h = load_binary(p)
    assert h.ids.tolist() == [40, 10, 30, 20]
    dup = patch(str(p), str(tmp_path / "d.asg"), "ids", 3, 40)
    with pytest.raises(InputError, match="duplicate original id 40"):
        load_binary(dup)


def test_header_counts_must_match_the_sections(tmp_path):
    g, _ = write_graphs(tmp_path)
    h = read_header(g)
    for field, off in (("n", 24), ("m", 32)):
        data = bytearray(open(g, "rb").read())
        data[off:off + 8] = struct.pack("<Q", h[field] + 1)
        bad = tmp_path / f"bad_{field}.asg"
        bad.write_bytes(bytes(data))
        with pytest.raises(InputError, match="corrupt asapgraph binary graph header"):
            load_binary(bad)


def _cli(args, cwd, timeout=120):
    return subprocess.run([sys.executable, "-m", "asapgraph", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout)


CLI_CASES = [c for c in CORRUPTIONS if c[0] in ("indptr_order", "indices_big", "out_degree",
                                                "ids_duplicate", "weight_nan", "out_weight")]


@pytest.mark.timeout(600)
@pytest.mark.parametrize("case", CLI_CASES, ids=[c[0] for c in CLI_CASES])
def test_cli_refuses_with_one_line(tmp_path, case):
    bad, words = corrupt(tmp_path, case)
    w = ["--weighted"] if case[1] else []
    for argv in (["pagerank", bad, *w, "-q", "-o", tmp_path / "o.csv"], ["info", bad, "-q"],
                 ["convert", bad, tmp_path / "o.asg", *w, "-q"]):
        r = _cli(argv, tmp_path)
        lines = r.stderr.strip().splitlines()
        assert r.returncode == 2 and len(lines) == 1, (argv, r.returncode, r.stderr)
        assert lines[0].startswith(f"{bad}: {PREFIX}: {words}"), lines
    assert not (tmp_path / "o.csv").exists() and not (tmp_path / "o.asg").exists()


def test_int64_indices_and_empty_graphs(tmp_path):
    """The 8-byte index variant of the format is checked too; empty graphs stay valid."""
    from asapgraph.graph.core import Graph

    g = ag.Graph.from_edges([0, 1, 2], [1, 2, 0], n=3)
    p = str(tmp_path / "i64.asg")
    save_binary(Graph(g.indptr, g.indices.astype(np.int64), None, g.out_degree), p)
    assert read_header(p)["itemsize"] == 8 and load_binary(p).m == 3
    bad = patch(p, str(tmp_path / "bad.asg"), "indices", 1, 2**40)
    with pytest.raises(InputError, match="indices out of range .* source 1099511627776"):
        load_binary(bad)
    for n in (0, 3):
        e = str(tmp_path / f"e{n}.asg")
        save_binary(Graph(np.zeros(n + 1, np.int64), np.zeros(0, np.int32)), e)
        assert load_binary(e).n == n
