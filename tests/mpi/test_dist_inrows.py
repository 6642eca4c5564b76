"""BSP PageRank's pull layout built from in-rows (partition/rows.py ``layout="pull"``,
engine/pull.py ``_build_from_rows``): the loader ships every edge to the owner of its
destination and the rank builds its pull layout without the push rows.

On 1-4 ranks, range and hash partitions, directed and undirected, with the per-pair
message forms chosen, forced to pull and forced to combined, relabelled or not, the full
vector must equal the single process's (1e-10 in L1, both solved to 1e-13) and a
scipy power iteration's (1e-10 in L1) -- on a text file with sparse ids, duplicate
edges, self-loops and dangling vertices (sources only, targets only), and on an R-MAT
spec (isolated vertices).  The layout it builds must be the one the transposition of the
push rows builds (every per-rank layout figure equal, against a graph loaded once with
``load()``, which keeps the push rows); weighted inputs keep the transposition.
"""
import json
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.mpi

LAYOUT_KEYS = ("sweep_edges", "combine_edges", "ghost_values", "pull_peers", "combined_peers",
               "pull_values", "combined_values", "values_if_pull", "values_if_combined",
               "reordered", "prefetch", "vertices", "edges", "boundary_vertices",
               "remote_slots", "peers", "out_peers", "in_peers")

WORKER = (Path(__file__).with_name("_abort_hook.py").read_text() + r'''
import asapgraph.engine as ad
import asapgraph.engine.pull as pull
from asapgraph.graph.io import load_graph
from asapgraph.programs.pagerank import pagerank

DEFAULTS = (pull.REORDER_MIN_EDGES, pull.LOCALITY_WINDOW, pull.PREFETCH_MIN_BYTES)
out, sources, keys = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
comm = MPI.COMM_WORLD
recs = []
for src, undirected, weighted in sources:
    ref = None
    if comm.rank == 0:
        g = load_graph(src, undirected=undirected, weighted=weighted,
                       weight_col=3 if weighted else None)
        r = pagerank(g, tol=1e-13, max_iter=3000, weighted=weighted, threads=1)
        ref = (r.ids, r.ranks)
    for part in ("range", "hash"):
        for form in (None, "pull", "combined"):
            for force in (False, True):
                pull.FORM = form
                if force:  # relabel and prefetch whatever the size and order of the graph
                    pull.REORDER_MIN_EDGES, pull.LOCALITY_WINDOW = 0, 0
                    pull.PREFETCH_MIN_BYTES = 0
                kw = dict(comm=comm, mode="bsp", tol=1e-13, max_iter=3000,
                          weighted=weighted, weight_col=3 if weighted else None)
                a = ad.pagerank(src, partition=part, undirected=undirected, **kw)
                lg = ad.load(src, comm, partition=part, undirected=undirected,
                             weighted=weighted, weight_col=3 if weighted else None)
                b = ad.pagerank(lg, **kw)   # a graph loaded once keeps the push rows
                pull.REORDER_MIN_EDGES, pull.LOCALITY_WINDOW, pull.PREFETCH_MIN_BYTES = \
                    DEFAULTS
                if comm.rank == 0:
                    lay = [[q[k] for k in keys] for q in a.stats["per_rank"]]
                    lay_b = [[q[k] for k in keys] for q in b.stats["per_rank"]]
                    recs.append({
                        "src": src, "undirected": undirected, "weighted": weighted,
                        "part": part, "form": form, "force": force,
                        "ids": np.array_equal(a.ids, ref[0]) and np.array_equal(b.ids, ref[0]),
                        "l1": float(np.abs(a.ranks - ref[1]).sum()),
                        "l1_push": float(np.abs(b.ranks - ref[1]).sum()),
                        "ranks": a.ranks.tolist(), "conv": bool(a.converged),
                        "m": a.stats["m"],
                        "built": [q["pull_built_from"] for q in a.stats["per_rank"]],
                        "built_push": [q["pull_built_from"] for q in b.stats["per_rank"]],
                        "layout": lay, "layout_push": lay_b,
                        "per": [{k: q[k] for k in ("sweep_edges", "combine_edges",
                                                   "combined_values", "pull_peers",
                                                   "combined_peers")}
                                for q in a.stats["per_rank"]]})
pull.FORM = None
if comm.rank == 0:
    json.dump(recs, open(out, "w"))
''')


def _edges(rng, n_ids=260):
    """Sparse ids; skewed sources; duplicate edges; self-loops; vertices with out-edges
    only and vertices with in-edges only (dangling); a dense block so that some pairs
    combine."""
    ids = np.sort(rng.choice(10**9, n_ids, replace=False)) * 7 + 3
    n = n_ids
    s = rng.integers(0, n - 40, 1800) ** 2 // (n - 40)
    d = rng.integers(0, n - 20, 1800)
    s = np.concatenate([s, s[:60], np.arange(100, 110), np.repeat(np.arange(150, 190), 3),
                        np.arange(n - 40, n - 20)])
    d = np.concatenate([d, d[:60], np.arange(100, 110), rng.integers(0, 8, 120),
                        rng.integers(0, n - 20, 20)])
    # ids n-20..n-1: targets only (dangling); n-40..n-21: sources only
    d = np.concatenate([d, np.arange(n - 20, n)])
    s = np.concatenate([s, rng.integers(0, n - 40, 20)])
    return ids[s], ids[d], rng.uniform(0.2, 3.0, len(s))


def _write(tmp_path, s, d, w):
    p = tmp_path / "sparse.txt"
    p.write_text("".join(f"{a} {b} {x:.5f}\n" for a, b, x in zip(s, d, w)))
    return str(p)


def _scipy_pagerank(s, d, undirected, alpha=0.85):
    """Ids and power-iteration PageRank (unweighted, multi-edges counted, dangling mass
    spread uniformly), to 1e-15 in L1."""
    import scipy.sparse as sp

    ids, inv = np.unique(np.concatenate([s, d]), return_inverse=True)
    n = len(ids)
    u, v = inv[:len(s)], inv[len(s):]
    if undirected:
        nl = u != v
        u, v = np.concatenate([u, v[nl]]), np.concatenate([v, u[nl]])
    a = sp.csr_matrix((np.ones(len(u)), (v, u)), shape=(n, n))  # a[v, u]: edges u -> v
    out = np.asarray(a.sum(axis=0)).ravel()
    dang = out == 0
    inv_out = np.where(dang, 0.0, 1.0 / np.maximum(out, 1))
    x = np.full(n, 1.0 / n)
    for _ in range(2000):
        y = alpha * (a @ (x * inv_out) + x[dang].sum() / n) + (1 - alpha) / n
        if np.abs(y - x).sum() < 1e-15:
            x = y
            break
        x = y
    return ids, x


# above pyproject's 300 s: one launch of up to 600 s, plus 60 s
@pytest.mark.timeout(660)
@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_bsp_in_rows_equal_one_process_and_scipy(k, mpirun, tmp_path):
    s, d, w = _edges(np.random.default_rng(20 + k))
    f = _write(tmp_path, s, d, w)
    sources = [[f, False, False], [f, True, False], ["rmat:9:8:5", False, False],
               [f, False, True]]
    out = tmp_path / "out.json"
    r = mpirun(k, [sys.executable, "-c", WORKER, str(out), json.dumps(sources),
                   json.dumps(LAYOUT_KEYS)], timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    recs = json.loads(out.read_text())
    assert len(recs) == len(sources) * 2 * 3 * 2
    ref = {und: _scipy_pagerank(s, d, und) for und in (False, True)}
    combined_seen = False
    for rec in recs:
        assert rec["ids"] and rec["conv"], rec["src"]
        assert rec["l1"] <= 1e-10 and rec["l1_push"] <= 1e-10, rec
        what = {k2: rec[k2] for k2 in ("src", "undirected", "part", "form", "force")}
        if rec["src"] == f and not rec["weighted"]:
            ids, x = ref[rec["undirected"]]
            assert np.abs(np.array(rec["ranks"]) - x).sum() <= 1e-10, what
        # unweighted: built from the in-rows; weighted (and load()) transpose the push rows
        assert rec["built"] == ["out_rows" if rec["weighted"] else "in_rows"] * k, what
        assert rec["built_push"] == ["out_rows"] * k, what
        # the same layout as the transposition: every per-rank figure
        assert rec["layout"] == rec["layout_push"], what
        per = rec["per"]
        # every edge summed exactly once: pulled, or in a combined partial sum
        assert sum(q["sweep_edges"] + q["combine_edges"] - q["combined_values"]
                   for q in per) == rec["m"], what
        if rec["form"] == "combined":
            assert sum(q["pull_peers"] for q in per) == 0, what
        if rec["form"] == "pull":
            assert sum(q["combined_peers"] for q in per) == 0, what
        combined_seen |= rec["form"] is None and sum(q["combined_peers"] for q in per) > 0
    if k > 1:  # the chosen forms include combined pairs on this graph
        assert combined_seen


CAP_WORKER = Path(__file__).with_name("_abort_hook.py").read_text() + r'''
import os
from asapgraph.comm.mpi import host_core_share
from asapgraph.kernels import _graph
from asapgraph.partition import loader

comm = MPI.COMM_WORLD
seen = []
inner = loader._load_partitioned


def spy(*a, **kw):
    seen.append(_graph.max_threads())
    return inner(*a, **kw)


loader._load_partitioned = spy
before = _graph.max_threads()
share = host_core_share(comm)
lg, part, idmap = loader.load_partitioned(sys.argv[2], comm, "range", layout="pull")
after = _graph.max_threads()
rows = comm.gather({"before": before, "share": share, "seen": seen, "after": after,
                    "cores": len(os.sched_getaffinity(0)), "m": int(lg.m)}, root=0)
if comm.Get_rank() == 0:
    with open(sys.argv[1], "w") as f:
        json.dump(rows, f)
'''


@pytest.mark.parametrize("k", [2, 3])
def test_loader_caps_openmp_at_the_host_share(k, mpirun, tmp_path):
    """A rank's loader runs its OpenMP regions on at most the host's cores per rank (the
    ranks of one host would otherwise spin against each other), and gives the caller's
    thread count back afterwards."""
    src = tmp_path / "g.txt"
    rng = np.random.default_rng(3)
    with open(src, "w") as f:
        f.writelines(f"{a * 7 + 1} {b * 7 + 1}\n" for a, b in rng.integers(0, 500, (6000, 2)))
    out = tmp_path / "cap.json"
    r = mpirun(k, [sys.executable, "-c", CAP_WORKER, str(out), str(src)], timeout=240,
               env={"OMP_NUM_THREADS": "4"})
    assert r.returncode == 0, r.stderr[-3000:]
    rows = json.loads(out.read_text())
    assert len(rows) == k
    for q in rows:
        assert q["before"] == 4 and q["after"] == 4  # restored
        assert q["share"] == max(1, q["cores"] // k)
        assert q["seen"] == [min(4, q["share"])]
        assert q["m"] == 6000
