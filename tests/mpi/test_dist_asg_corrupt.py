"""Ranks read a binary ``.asg`` graph by mapping it: a corrupt file (each section corrupted
in turn, at offsets computed from the file's header) is refused on 2 ranks, in both
modes, with the one line and exit 2 of one process (it used to crash a rank, or to answer
with a vertex 2147483647 or -1, or with ranks that disagreed with one process)."""
import os

import numpy as np
import pytest

import asapgraph as ag
from asapgraph.graph.io._binary import read_header, save_binary

pytestmark = pytest.mark.mpi

EDGES = [(10, 20, 1.0), (20, 30, 2.0), (30, 10, 0.5), (30, 40, 1.5), (40, 50, 3.0),
         (50, 30, 0.25), (20, 50, 1.0), (60, 10, 2.0), (40, 70, 1.0), (70, 70, 0.5)]
_DT = {"indptr": "<i8", "out_degree": "<i8", "ids": "<i8", "weights": "<f8",
       "out_weight": "<f8"}

# (weighted file?, section, element (negative: from the end), new value, message words)
CASES = {
    "indptr": (False, "indptr", 2, 2**31 - 1, "indptr not non-decreasing at vertex 2"),
    "indptr_start": (False, "indptr", 0, 2**31 - 1, "indptr does not start at 0"),
    "indices": (False, "indices", 4, 2**31 - 1, "indices out of range"),
    "out_degree": (False, "out_degree", 1, 7, "out_degree does not match the rows"),
    "ids": (False, "ids", 3, 20, "duplicate original id 20"),
    "weight_nan": (True, "weights", 2, float("nan"), "non-finite edge weight"),
    "out_weight": (True, "out_weight", 2, 9.5, "out_weight does not match the rows"),
}


def _bad(tmp_path, weighted, sec, i, value):
    txt = tmp_path / "g.txt"
    txt.write_text("".join(f"{u} {v} {w!r}\n" for u, v, w in EDGES))
    good = str(tmp_path / "good.asg")
    save_binary(ag.load_graph(str(txt), weighted=weighted), good)
    h = read_header(good)
    off, nb = h["sections"][sec]
    dt = np.dtype(_DT.get(sec, "<i4" if h["itemsize"] == 4 else "<i8"))
    i %= nb // dt.itemsize
    data = bytearray(open(good, "rb").read())
    data[off + i * dt.itemsize: off + (i + 1) * dt.itemsize] = np.array([value], dt).tobytes()
    bad = tmp_path / "bad.asg"
    bad.write_bytes(bytes(data))
    return str(bad)


@pytest.mark.timeout(900)
@pytest.mark.parametrize("case", sorted(CASES))
def test_corrupt_asg_refused_alike_on_1_and_2_ranks(case, tmp_path, cli, refused):
    weighted, sec, i, value, words = CASES[case]
    bad = _bad(tmp_path, weighted, sec, i, value)
    w = ["--weighted"] if weighted else []
    out = tmp_path / "o.csv"
    one = cli(["pagerank", bad, *w, "-q", "-o", out], tmp_path, timeout=120)
    refused(one, f"{bad}: corrupt asapgraph binary graph: {words}")
    for mode in ("bsp", "asap"):
        r = cli(["pagerank", bad, *w, "--np", "2", "--mode", mode, "-q", "-o", out], tmp_path,
                timeout=240)
        refused(r, words)
        assert r.stderr.strip() == one.stderr.strip(), (mode, r.stderr, one.stderr)
    assert not os.path.exists(out)
