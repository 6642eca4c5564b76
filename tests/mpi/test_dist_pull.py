"""BSP ranks sweep with the single-process kernel over their pull layout (engine/pull.py).

The relabelled, prefetching layout is what large graphs get; here the single-process
policy's thresholds are lowered inside the ranks so small graphs exercise it too.  The
BSP answer must equal the single-process one (itself checked against networkx in
tests/test_pagerank.py) to 1e-10 in L1, on range and hash partitions, weighted or not,
with several peers per rank, one thread or two per rank (hybrid ranks x threads: the
rows split into edge-balanced blocks, as on one process); and two runs must agree bit for
bit.
"""
import json
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.mpi

WORKER = (Path(__file__).with_name("_abort_hook.py").read_text() + r'''
import asapgraph.engine as ad
import asapgraph.engine.pull as pull
from asapgraph.graph.io import load_graph
from asapgraph.programs.pagerank import pagerank
mode, out, sources = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
threads = int(sys.argv[4])
if mode == "force":  # relabel and prefetch whatever the size and order of the graph
    pull.REORDER_MIN_EDGES, pull.LOCALITY_WINDOW, pull.PREFETCH_MIN_BYTES = 0, 0, 0
comm = MPI.COMM_WORLD
recs = []
for src, weighted in sources:
    ref = None
    if comm.rank == 0:
        g = load_graph(src, weighted=weighted, weight_col=3 if weighted else None)  # 1-based
        r = pagerank(g, tol=1e-14, max_iter=3000, weighted=weighted, threads=1)
        ref = dict(zip(r.ids.tolist(), r.ranks.tolist()))
    for part in ("range", "hash"):
        runs = [ad.pagerank(src, comm=comm, mode="bsp", partition=part, tol=1e-14,
                            max_iter=3000, weighted=weighted, threads=threads)
                for _ in range(2)]
        if comm.rank == 0:
            a, b = runs
            x = np.array([ref[i] for i in a.ids.tolist()])
            per = a.stats["per_rank"]
            recs.append({"src": src, "part": part, "weighted": weighted,
                         "l1": float(np.abs(a.ranks - x).sum()),
                         "same_ids": len(a.ids) == len(ref),
                         "identical": bool(np.array_equal(a.ranks, b.ranks)),
                         "converged": bool(a.converged),
                         "m": a.stats["m"],
                         "sweep_edges": sum(q["sweep_edges"] for q in per),
                         "combined": sum(q["combine_edges"] - q["combined_values"]
                                         for q in per),
                         "reordered": [q["reordered"] for q in per],
                         "threads": [a.stats["threads"]] + [q["threads"] for q in per],
                         "prefetch": [q["prefetch"] for q in per]})
if comm.rank == 0:
    json.dump(recs, open(out, "w"))
''')


def _edges_file(tmp_path):
    """Sparse ids, duplicates, self-loops, dangling vertices and weights."""
    rng = np.random.default_rng(12)
    n, m = 300, 2500
    ids = np.sort(rng.choice(100_000, n, replace=False)) * 3 + 1
    s = rng.integers(0, n, m) ** 2 // n   # skewed: low ids have many out-edges
    d = rng.integers(0, n, m)
    s[:50], d[:50] = s[50:100], d[50:100]
    d[100:130] = s[100:130]
    keep = s < int(0.85 * n)
    p = tmp_path / "g.txt"
    p.write_text("".join(f"{ids[a]} {ids[b]} {w:.5f}\n" for a, b, w in
                         zip(s[keep], d[keep], rng.uniform(0.2, 3.0, int(keep.sum())))))
    return str(p)


@pytest.mark.parametrize("k,mode,threads", [(2, "force", 1), (3, "force", 1),
                                            (3, "policy", 1), (2, "force", 2)])
def test_bsp_pull_equals_single_process(k, mode, threads, mpirun, tmp_path):
    f = _edges_file(tmp_path)
    sources = [["rmat:10:8:3", False], [f, False], [f, True]]
    out = tmp_path / "out.json"
    r = mpirun(k, [sys.executable, "-c", WORKER, mode, str(out), json.dumps(sources),
                   str(threads)],
               timeout=240)
    assert r.returncode == 0, r.stderr[-3000:]
    recs = json.loads(out.read_text())
    assert len(recs) == 2 * len(sources)
    for rec in recs:
        assert rec["same_ids"] and rec["converged"], rec
        assert rec["l1"] <= 1e-10, rec
        assert rec["identical"], rec                     # deterministic
        # every edge summed exactly once: pulled, or inside a combined partial sum
        # (its sender's combine edges, one pulled edge per slot at the receiver)
        assert rec["sweep_edges"] + rec["combined"] == rec["m"], rec
        assert all(rec["reordered"]) == (mode == "force"), rec
        assert all(rec["prefetch"]) == (mode == "force"), rec
        assert rec["threads"] == [threads] * (k + 1), rec
