"""Vertex programs on R-MAT vs the built-in PageRank kernel and scipy.sparse.csgraph.

Run::

    python benchmarks/bench_programs.py [--scale 20] [--repeat 3] [--iters 10]

Measures, in one run on the same graph (construction not timed), medians of ``--repeat``:

* PageRank written as a user program on the public API (``pagerank_program``, BSP delta
  form and ASAP) vs the built-in kernel ``asapgraph.pagerank.pagerank`` (Jacobi and its
  default method) vs a scipy CSR power iteration: **seconds per iteration**.
* WCC (``programs.wcc``, BSP and ASAP) vs ``scipy.sparse.csgraph.connected_components``
  (weak; scipy is single-threaded).
* SSSP from the highest-degree vertex (``programs.sssp``, BSP and ASAP; integer weights
  1..64) vs ``scipy.sparse.csgraph.dijkstra`` (single source; single-threaded).

Prints a table with ratios (``peer time / our time``: above 1 means we are faster).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np
import scipy.sparse as sp
from scipy.sparse import csgraph


def rmat_edges(scale, edge_factor, seed):
    try:
        from asapgraph.generators import rmat
        return rmat(scale, edge_factor, seed=seed)
    except ImportError:   # fallback: plain numpy R-MAT, Graph500 parameters
        rng = np.random.default_rng(seed)
        m = edge_factor << scale
        src = np.zeros(m, np.int64)
        dst = np.zeros(m, np.int64)
        for bit in range(scale):
            r = rng.random(m)
            src |= ((r >= 0.57 + 0.19)).astype(np.int64) << bit
            dst |= (((r >= 0.57) & (r < 0.76)) | (r >= 0.95)).astype(np.int64) << bit
        perm = rng.permutation(1 << scale)
        return perm[src], perm[dst]


def timed(fn, repeat):
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=int, default=20)
    ap.add_argument("--edge-factor", type=int, default=16)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--iters", type=int, default=10, help="PageRank iterations per timing")
    ap.add_argument("--only", default="pagerank,wcc,sssp", help="comma-separated subset to run")
    args = ap.parse_args(argv)

    from asapgraph import Graph
    import asapgraph.programs as P

    t0 = time.perf_counter()
    src, dst = rmat_edges(args.scale, args.edge_factor, args.seed)
    n = 1 << args.scale
    w = (1 + (np.arange(src.size, dtype=np.int64) * 2654435761) % 64).astype(np.float64)
    g = Graph.from_edges(src, dst, n=n)
    gw = Graph.from_edges(src, dst, n=n, weights=w)
    A = sp.csr_matrix((np.ones(src.size), (src, dst)), shape=(n, n))
    order = np.lexsort((w, dst, src))        # scipy would add parallel weights up; keep the lightest
    first = np.ones(src.size, dtype=bool)
    first[1:] = (src[order][1:] != src[order][:-1]) | (dst[order][1:] != dst[order][:-1])
    keep = order[first]
    Aw = sp.csr_matrix((w[keep], (src[keep], dst[keep])), shape=(n, n))
    del order, first, keep
    g.out_csr(); gw.out_csr()
    print(f"# rmat:{args.scale} edge factor {args.edge_factor}: n={n:,} m={src.size:,}; "
          f"setup {time.perf_counter() - t0:.1f} s; OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'default')}, "
          f"{os.cpu_count()} cpus", flush=True)
    rows = []

    only = set(args.only.split(","))
    # ---------------------------------------------------------------- PageRank per iteration
    k = args.iters
    per_bsp = None
    if "pagerank" in only:
        per_bsp = _bench_pagerank(args, g, A, n, k, rows)
    if "wcc" in only:
        _bench_wcc(args, g, A, rows)
    if "sssp" in only:
        _bench_sssp(args, gw, Aw, rows)
    _report(rows, per_bsp)
    return 0


def _bench_pagerank(args, g, A, n, k, rows):
    import asapgraph.programs as P
    P.pagerank_program(g, tol=0.0, max_iter=2)           # warm-up (builds caches)

    def prog(mode):
        r = P.pagerank_program(g, tol=0.0, max_iter=k, mode=mode)
        return statistics.median(r.stats["iteration_seconds"])

    per_bsp = statistics.median(prog("bsp") for _ in range(args.repeat))
    per_asap = statistics.median(prog("asap") for _ in range(args.repeat))
    rows.append(("pagerank program, BSP (s/iter)", per_bsp))
    rows.append(("pagerank program, ASAP sweep (s/iter)", per_asap))
    try:
        from asapgraph.pagerank import pagerank
        for method in ("jacobi", "auto"):
            per = []
            for _ in range(args.repeat):
                r = pagerank(g, tol=0.0, max_iter=k, method=method)
                its = getattr(r, "iteration_seconds", None)
                per.append(statistics.median(its) if its else r.compute_seconds / r.iterations)
            rows.append((f"built-in pagerank {method} (s/iter)", statistics.median(per)))
    except ImportError:
        pass
    out_deg = np.asarray(A.sum(axis=1)).ravel()
    inv = np.where(out_deg > 0, 1.0 / np.maximum(out_deg, 1), 0.0)
    AT = A.T.tocsr()
    dangling = out_deg == 0

    def scipy_pr():
        x = np.full(n, 1.0 / n)
        for _ in range(k):
            x = 0.85 * (AT @ (x * inv) + x[dangling].sum() / n) + 0.15 / n
        return x

    t, _ = timed(scipy_pr, args.repeat)
    rows.append(("scipy CSR power iteration (s/iter)", t / k))
    return per_bsp


def _bench_wcc(args, g, A, rows):
    import asapgraph.programs as P
    t_sc, (nc, lab) = timed(lambda: csgraph.connected_components(A, directed=True, connection="weak"),
                            args.repeat)
    rows.append(("scipy connected_components weak (s)", t_sc))
    for mode in ("bsp", "asap"):
        t, r = timed(lambda: P.wcc(g, mode=mode), args.repeat)
        assert len(np.unique(r.values)) == nc
        rows.append((f"programs.wcc {mode} (s) [{r.iterations} it]", t))



def _bench_sssp(args, gw, Aw, rows):
    import asapgraph.programs as P
    s = int(np.argmax(np.diff(gw.out_csr()[0])))
    t_dj, ref = timed(lambda: csgraph.dijkstra(Aw, indices=s), args.repeat)
    rows.append(("scipy dijkstra 1 source (s)", t_dj))
    for mode in ("bsp", "asap"):
        t, r = timed(lambda: P.sssp(gw, s, mode=mode), args.repeat)
        assert np.array_equal(r.values, ref)
        rows.append((f"programs.sssp {mode} (s) [{r.iterations} it]", t))


def _report(rows, per_bsp):
    width = max(len(r[0]) for r in rows)
    for name, secs in rows:
        print(f"{name:<{width}}  {secs:9.4f}")
    d = dict(rows)
    print("# ratios (peer / ours; > 1: ours faster)")
    bi = d.get("built-in pagerank jacobi (s/iter)")
    if bi and per_bsp:
        print(f"pagerank program BSP per-iteration vs built-in jacobi: ours is {per_bsp / bi:.2f}x its time")
        print(f"pagerank program BSP per-iteration vs built-in auto:   ours is {per_bsp / d['built-in pagerank auto (s/iter)']:.2f}x its time")
    if per_bsp:
        print(f"pagerank program BSP per-iteration vs scipy: {d['scipy CSR power iteration (s/iter)'] / per_bsp:.2f}")
    for algo, peer in (("wcc", "scipy connected_components weak (s)"), ("sssp", "scipy dijkstra 1 source (s)")):
        for mode in ("bsp", "asap"):
            keys = [k_ for k_ in d if k_.startswith(f"programs.{algo} {mode}")]
            if keys:
                print(f"{algo} {mode}: scipy / ours = {d[peer] / d[keys[0]]:.2f}")


if __name__ == "__main__":
    sys.exit(main())
