"""BSP's per-pair message forms (engine/pull.py): pull (one value per distinct cut source)
or combined (one partial sum per distinct remote target), combined when that is shorter
and the values saved pay for the combine's edges (kernels/tuning.py).

The answer must equal the single-process one (itself checked against networkx in
tests/test_pagerank.py) to 1e-10 in L1 whatever the forms: every pair forced to pull,
every pair forced to combine, and the per-pair choice, on 2, 3 and 4 ranks, range and hash
partitions, weighted or not, on a graph with dangling vertices, self-loops and duplicate
edges built so that both forms occur.  The ``--json`` layout fields must tell the truth
(edges conserved, bytes = values shipped), the choice must ship no more than pull
everywhere, and the CLI must pick combined where targets are much fewer than sources, pull
in the reverse case and pull where the two forms ship about as many values but combining
would move many edges.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.mpi

HEADER = 7  # asapgraph.engine.emulation.HEADER (values of a message's header)

WORKER = (Path(__file__).with_name("_abort_hook.py").read_text() + r'''
import asapgraph.engine as ad
import asapgraph.engine.pull as pull
from asapgraph.graph.io import load_graph
from asapgraph.programs.pagerank import pagerank
out, sources = sys.argv[1], json.loads(sys.argv[2])
comm = MPI.COMM_WORLD
recs = []
for src, weighted in sources:
    ref = None
    if comm.rank == 0:
        g = load_graph(src, weighted=weighted, weight_col=3 if weighted else None)
        r = pagerank(g, tol=1e-14, max_iter=3000, weighted=weighted, threads=1)
        ref = dict(zip(r.ids.tolist(), r.ranks.tolist()))
    for part in ("range", "hash"):
        for form in (None, "pull", "combined"):
            pull.FORM = form
            a = ad.pagerank(src, comm=comm, mode="bsp", partition=part, tol=1e-14,
                            max_iter=3000, weighted=weighted, weight_col=3 if weighted else None)
            if comm.rank == 0:
                x = np.array([ref[i] for i in a.ids.tolist()])
                per = a.stats["per_rank"]
                recs.append({"src": src, "part": part, "weighted": weighted, "form": form,
                             "l1": float(np.abs(a.ranks - x).sum()),
                             "same_ids": len(a.ids) == len(ref),
                             "converged": bool(a.converged), "m": a.stats["m"],
                             "bytes": a.stats["bytes_sent"],
                             "messages": a.stats["messages_sent"],
                             "per": [{k: q[k] for k in (
                                 "sweep_edges", "combine_edges", "pull_peers",
                                 "combined_peers", "pull_values", "combined_values",
                                 "values_if_pull", "values_if_combined", "ghost_values")}
                                 for q in per]})
pull.FORM = None
if comm.rank == 0:
    json.dump(recs, open(out, "w"))
''')


def _hybrid_file(tmp_path):
    """Left half: 180 vertices with 2 edges each into 5 right hubs (many sources, few
    targets); the right hubs: 30 edges each into the left half (few sources, many
    targets); random edges inside each half; 10 self-loops, 20 duplicates, dangling
    vertices on both sides, sparse ids, weights."""
    rng = np.random.default_rng(7)
    n = 400
    ids = np.sort(rng.choice(50_000, n, replace=False)) * 5 + 2
    src = [np.repeat(np.arange(180), 2), np.repeat(np.arange(200, 205), 30),
           rng.integers(0, 180, 300), rng.integers(200, 390, 300)]
    dst = [rng.integers(200, 205, 360), rng.integers(0, 200, 150),
           rng.integers(0, 200, 300), rng.integers(200, 400, 300)]
    s, d = np.concatenate(src), np.concatenate(dst)
    loops = rng.integers(0, 180, 10)
    dup = rng.integers(0, len(s), 20)
    s = np.concatenate([s, loops, s[dup]])
    d = np.concatenate([d, loops, d[dup]])
    w = rng.uniform(0.2, 3.0, len(s))
    p = tmp_path / "hybrid.txt"
    p.write_text("".join(f"{ids[a]} {ids[b]} {x:.5f}\n" for a, b, x in zip(s, d, w)))
    return str(p)


def _values(per):
    return sum(q["pull_values"] + q["combined_values"] for q in per)


def _pairs(per):
    return sum(q["pull_peers"] + q["combined_peers"] for q in per)


# above pyproject's 300 s: one launch of up to 420 s, plus 60 s
@pytest.mark.timeout(480)
@pytest.mark.parametrize("k", [2, 3, 4])
def test_bsp_forms_equal_single_process(k, mpirun, tmp_path):
    f = _hybrid_file(tmp_path)
    sources = [[f, False], [f, True], ["rmat:9:8:5", False]]
    out = tmp_path / "out.json"
    r = mpirun(k, [sys.executable, "-c", WORKER, str(out), json.dumps(sources)], timeout=420)
    assert r.returncode == 0, r.stderr[-3000:]
    recs = json.loads(out.read_text())
    assert len(recs) == 6 * len(sources)
    by = {}
    for rec in recs:
        per = rec["per"]
        assert rec["same_ids"] and rec["converged"], rec
        assert rec["l1"] <= 1e-10, rec
        # every edge summed once: pulled by its row, or combined by its sender and then
        # pulled as one edge per slot by the receiver
        assert (sum(q["sweep_edges"] + q["combine_edges"] - q["combined_values"] for q in per)
                == rec["m"]), rec
        # the bytes are the values shipped: (HEADER + values) doubles per message
        npairs = _pairs(per)
        assert rec["messages"] % npairs == 0, rec
        rounds = rec["messages"] // npairs
        assert rec["bytes"] == 8 * rounds * (HEADER * npairs + _values(per)), rec
        if rec["form"] == "pull":
            assert sum(q["combined_peers"] for q in per) == 0, rec
            assert all(q["combine_edges"] == 0 for q in per), rec
        if rec["form"] == "combined":
            assert sum(q["pull_peers"] for q in per) == 0, rec
        by[rec["src"], rec["part"], rec["weighted"], rec["form"]] = rec
    for (src, part, weighted, form), rec in by.items():
        if form is not None:
            continue
        per = rec["per"]
        vp = _values(by[src, part, weighted, "pull"]["per"])
        vc = _values(by[src, part, weighted, "combined"]["per"])
        assert sum(q["values_if_pull"] for q in per) == vp, rec
        assert sum(q["values_if_combined"] for q in per) == vc, rec
        assert _values(per) <= vp, rec
        if src.endswith("hybrid.txt") and part == "range":
            # the graph is built so that both forms occur, and the choice pays
            assert sum(q["pull_peers"] for q in per) > 0, rec
            assert sum(q["combined_peers"] for q in per) > 0, rec
            assert _values(per) < min(vp, vc), rec


def _fan_file(tmp_path):
    """Left (ids 0..199): every vertex has 2 edges into 4 hubs of the right; right
    (200..399): its hubs have 25 edges each back into the left, every other right
    vertex one edge inside the right.  Rank 0 -> 1 (range, 2 ranks): 200 sources, 4
    targets; rank 1 -> 0: 4 sources, about 100 targets."""
    rng = np.random.default_rng(3)
    s = np.concatenate([np.repeat(np.arange(200), 2), np.repeat(np.arange(200, 204), 25),
                        np.arange(204, 400)])
    d = np.concatenate([rng.integers(200, 204, 400), rng.integers(0, 200, 100),
                        rng.integers(200, 400, 196)])
    p = tmp_path / "fan.txt"
    p.write_text("".join(f"{a} {b}\n" for a, b in zip(s, d)))
    return str(p)


def _cli_two_ranks(tmp_path, f):
    exe = os.path.join(os.path.dirname(sys.executable), "asapgraph")
    r = subprocess.run([exe, "pagerank", f, "--np", "2", "--mode", "bsp", "--tol", "1e-9",
                        "--json", "-q"], cwd=tmp_path, capture_output=True, text=True,
                       timeout=240)
    assert r.returncode == 0, r.stderr[-3000:]
    js = json.loads(r.stdout)
    assert len(js["per_rank"]) == 2 and js["converged"], js
    return js


def test_cli_json_reports_the_chosen_forms(tmp_path):
    js = _cli_two_ranks(tmp_path, _fan_file(tmp_path))
    r0, r1 = js["per_rank"]
    # rank 0 -> 1: 200 distinct sources, 4 targets: combined (4 values instead of 200)
    assert (r0["combined_peers"], r0["pull_peers"]) == (1, 0), r0
    # (the range partition's split is near, not exactly at, id 200)
    assert r0["combined_values"] == 4 and r0["values_if_pull"] >= 150, r0
    assert r0["combine_edges"] == 2 * r0["values_if_pull"], r0
    # rank 1 -> 0: 4 distinct sources, about 100 targets: pull
    assert (r1["pull_peers"], r1["combined_peers"]) == (1, 0), r1
    assert r1["pull_values"] == 4 and r1["values_if_combined"] > 50, r1
    assert r1["combine_edges"] == 0, r1
    # bytes: what was shipped, below what pull everywhere would have shipped
    rounds = js["messages_sent"] // 2
    assert js["bytes_sent"] == 8 * rounds * (2 * HEADER + 4 + 4), js
    pull_only = 8 * rounds * (2 * HEADER + r0["values_if_pull"] + r1["values_if_pull"])
    assert js["bytes_sent"] * 5 < pull_only, js     # headers included


def test_cli_dense_cut_stays_pulled(tmp_path):
    """Left vertices 0..149 have 20 edges each into 80 right vertices (300..379), right
    vertices one edge each inside the right: rank 0 -> 1 would ship fewer values combined
    (80 targets against its 100-odd sources: the range split falls near vertex 115) but
    combine some 2300 edges per superstep to save about 35 values; the pair stays pulled."""
    rng = np.random.default_rng(5)
    s = np.concatenate([np.repeat(np.arange(150), 20), np.arange(150, 400)])
    d = np.concatenate([300 + (np.arange(3000) * 7 + rng.integers(0, 3, 3000)) % 80,
                        rng.integers(200, 400, 250)])
    f = tmp_path / "dense.txt"
    f.write_text("".join(f"{a} {b}\n" for a, b in zip(s, d)))
    r0, r1 = _cli_two_ranks(tmp_path, str(f))["per_rank"]
    assert r0["values_if_combined"] < r0["values_if_pull"], r0   # combined is shorter...
    assert (r0["pull_peers"], r0["combined_peers"], r0["combine_edges"]) == (1, 0, 0), r0
