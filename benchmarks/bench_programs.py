"""Vertex programs vs the built-in PageRank kernel and scipy.sparse.csgraph, in one run.

Run::

    python benchmarks/bench_programs.py [--scale 20] [--repeat 3] [--iters 8] \
        [--threads 1,2] [--dataset ../shared/datasets/cnr-2000.txt.gz]

On R-MAT ``rmat:SCALE`` (Graph500 parameters, edge factor 16; graph construction not timed)
and on every ``--dataset`` file, medians of ``--repeat`` runs, at every thread count of
``--threads`` (the kernels' OpenMP cap, ``run(..., threads=k)``):

* PageRank written as a user program on the public API (``PageRankProgram`` through
  ``asapgraph.programs.run``, BSP delta form) vs the built-in kernel
  ``asapgraph.programs.pagerank.pagerank`` (Jacobi) at the same thread count and a scipy CSR power
  iteration: **seconds per iteration**; ratio = ours / built-in (the target is <= 2).
* WCC (``programs.wcc``, ASAP (its default) and BSP) vs
  ``scipy.sparse.csgraph.connected_components`` (weak; single-threaded).
* SSSP from the highest-out-degree vertex (``programs.sssp``, BSP (its default) and ASAP;
  integer weights 1..64) vs ``scipy.sparse.csgraph.dijkstra`` (one source; single-threaded).
* BFS levels (``programs.bfs``) vs ``scipy.sparse.csgraph.breadth_first_order`` (which
  only orders the vertices: a lower bound for computing levels).

* ``--only user`` (rows "user vs built-in"): the accumulative user programs of
  ``benchmarks/user_programs.py`` (``PersonalizedPageRank``, numpy callbacks) and the
  tutorial's ``SeededKatz`` (docs/tutorial.md, as written) vs the built-in personalised
  PageRank (same seeds) and the built-in Katz (same alpha, ``0.5 / lambda_max``), on
  ``rmat:--user-scale`` at ``--user-tol``: on one process (in this process) and on
  ``--np`` ranks (one ``mpiexec`` launch, BSP and ASAP), every variant timed
  ``--repeat`` times, interleaved; medians of seconds and bytes, and the ratios
  (user / built-in; the issue's targets: PPR <= 2x time and <= 1.5x bytes, SeededKatz <=
  1.2x time).

Every result is checked against its peer (labels -> same partition, distances equal).
Prints one table; ``ratio`` is ``peer time / our time`` (> 1: ours faster) except for the
PageRank rows, where it is ``our time / built-in time`` per iteration.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np
import scipy.sparse as sp
from scipy.sparse import csgraph


def _default_mode(fn):
    import inspect
    return inspect.signature(fn).parameters["mode"].default


def _label(fn, name, mode):
    return f"programs.{name} {mode}{' (default)' if mode == _default_mode(fn) else ''}"


def timed(fn, repeat):
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def _weights(m):
    return (1 + (np.arange(m, dtype=np.int64) * 2654435761) % 64).astype(np.float64)


def _graphs(args):
    """Yield ``(name, g, gw, A, Aw)``: unweighted and weighted Graph, scipy matrices (src->dst;
    of parallel weighted edges the lightest, as our SSSP)."""
    from asapgraph import Graph
    specs = [f"rmat:{args.scale}"] if args.scale > 0 else []
    specs += args.dataset
    for spec in specs:
        t0 = time.perf_counter()
        if spec.startswith("rmat:"):
            from asapgraph.graph.generators import rmat
            scale = int(spec.split(":")[1])
            src, dst = rmat(scale, args.edge_factor, seed=args.seed)
            n = 1 << scale
            name = spec
        else:
            from asapgraph.graph.io import read_edges
            el = read_edges(spec)
            s0, d0 = np.asarray(el.src, dtype=np.int64), np.asarray(el.dst, dtype=np.int64)
            ids, inv = np.unique(np.concatenate([s0, d0]), return_inverse=True)
            src, dst = inv[:s0.size].astype(np.int64), inv[s0.size:].astype(np.int64)
            n = ids.size
            name = os.path.basename(spec).split(".")[0]
        w = _weights(src.size)
        g = Graph.from_edges(src, dst, n=n)
        gw = Graph.from_edges(src, dst, n=n, weights=w)
        A = sp.csr_matrix((np.ones(src.size), (src, dst)), shape=(n, n))
        order = np.lexsort((w, dst, src))
        first = np.ones(src.size, dtype=bool)
        first[1:] = (src[order][1:] != src[order][:-1]) | (dst[order][1:] != dst[order][:-1])
        keep = order[first]
        Aw = sp.csr_matrix((w[keep], (src[keep], dst[keep])), shape=(n, n))
        del order, first, keep, src, dst, w
        g.out_csr()
        gw.out_csr()
        print(f"# {name}: n={n:,} m={g.m:,}; setup {time.perf_counter() - t0:.1f} s", flush=True)
        yield name, g, gw, A, Aw


def bench_pagerank(args, name, g, A, rows):
    import asapgraph.programs as P
    from asapgraph.programs.pagerank import pagerank
    from asapgraph.programs.pagerank_program import PageRankProgram
    n, k = g.n, args.iters
    for t in args.threads:
        P.run(PageRankProgram(), g, tol=0.0, max_iter=2, threads=t)          # warm-up (caches)

        def prog():
            r = P.run(PageRankProgram(), g, tol=0.0, max_iter=k, threads=t)
            return statistics.median(r.stats["iteration_seconds"])

        ours = statistics.median(prog() for _ in range(args.repeat))
        per = []
        for _ in range(args.repeat):
            r = pagerank(g, tol=0.0, max_iter=k, method="jacobi", threads=t)
            its = getattr(r, "iteration_seconds", None)
            per.append(statistics.median(its) if its else r.compute_seconds / r.iterations)
        builtin = statistics.median(per)
        rows.append((name, "pagerank s/iter", "built-in jacobi", t, builtin, None))
        rows.append((name, "pagerank s/iter", "user program (bsp)", t, ours, ours / builtin))
    out_deg = np.asarray(A.sum(axis=1)).ravel()
    inv = np.where(out_deg > 0, 1.0 / np.maximum(out_deg, 1), 0.0)
    AT = A.T.tocsr()
    dangling = out_deg == 0

    def scipy_pr():
        x = np.full(n, 1.0 / n)
        for _ in range(k):
            x = 0.85 * (AT @ (x * inv) + x[dangling].sum() / n) + 0.15 / n
        return x

    ts, _ = timed(scipy_pr, args.repeat)
    rows.append((name, "pagerank s/iter", "scipy power iteration", 1, ts / k, None))


def bench_wcc(args, name, g, A, rows):
    import asapgraph.programs as P
    t_sc, (nc, lab) = timed(lambda: csgraph.connected_components(A, directed=True, connection="weak"),
                            args.repeat)
    rows.append((name, "wcc", "scipy connected_components", 1, t_sc, None))
    P.wcc(g)
    P.wcc(g, mode="bsp")                                        # warm-up (undirected view)
    for t in args.threads:
        for mode in ("asap", "bsp"):
            tm, r = timed(lambda: P.wcc(g, mode=mode, threads=t), args.repeat)
            _, inv = np.unique(r.values, return_inverse=True)
            pairs = np.unique(np.stack([lab, inv.ravel()]), axis=1).shape[1]
            assert pairs == nc == inv.max() + 1, "wcc disagrees with scipy"
            rows.append((name, "wcc", _label(P.wcc, "wcc", mode),
                         t, tm, t_sc / tm))


def bench_sssp(args, name, gw, Aw, rows):
    import asapgraph.programs as P
    s = int(np.argmax(np.diff(gw.out_csr()[0])))
    sid = int(gw.original_ids()[s])
    t_dj, ref = timed(lambda: csgraph.dijkstra(Aw, indices=s), args.repeat)
    rows.append((name, "sssp", "scipy dijkstra (1 source)", 1, t_dj, None))
    for t in args.threads:
        for mode in ("asap", "bsp"):
            tm, r = timed(lambda: P.sssp(gw, sid, mode=mode, threads=t), args.repeat)
            assert np.array_equal(r.values, ref), "sssp disagrees with scipy"
            rows.append((name, "sssp", _label(P.sssp, "sssp", mode),
                         t, tm, t_dj / tm))


def bench_bfs(args, name, g, A, rows):
    import asapgraph.programs as P
    s = int(np.argmax(np.diff(g.out_csr()[0])))
    sid = int(g.original_ids()[s])
    t_b, order = timed(lambda: csgraph.breadth_first_order(A, s, return_predecessors=False), args.repeat)
    rows.append((name, "bfs", "scipy breadth_first_order", 1, t_b, None))
    for t in args.threads:
        for mode in ("asap", "bsp"):
            tm, r = timed(lambda: P.bfs(g, sid, mode=mode, threads=t), args.repeat)
            assert np.count_nonzero(r.values >= 0) == order.size, "bfs reaches other vertices"
            rows.append((name, "bfs", _label(P.bfs, "bfs", mode),
                         t, tm, t_b / tm))


# ---------------------------------------------------------------- user programs vs built-ins
def _seeded_katz_file(tmp):
    import re
    doc = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "tutorial.md")
    block = re.findall(r"```python\n(.*?)```", open(doc).read(), flags=re.S)[0]
    path = os.path.join(tmp, "seeded_katz.py")
    with open(path, "w") as f:
        f.write(block)
    return path


def _user_variants(cfg):
    """``name -> (kind, factory)`` of the compared runs; the same list on every rank."""
    import asapgraph.programs as P
    here = os.path.dirname(os.path.abspath(__file__))
    seeds, alpha = cfg["seeds"], cfg["katz_alpha"]
    ppr = lambda: P.load_program(os.path.join(here, "user_programs.py") + ":PersonalizedPageRank",
                                 seeds=seeds)
    sk = lambda: P.load_program(cfg["seeded_katz"] + ":SeededKatz", seeds=seeds, alpha=alpha)
    kz = lambda: P.KatzProgram(alpha=alpha, normalized=False)
    return {"ppr": ppr, "seeded_katz": sk, "katz": kz}


def _mpi_worker(cfg_path, out_path):
    """Under mpiexec: every variant x mode, interleaved, ``repeat`` times; rank 0 writes JSON."""
    from mpi4py import MPI
    from asapgraph.engine import api
    from asapgraph.engine import distributed as DP
    cfg = json.load(open(cfg_path))
    comm = MPI.COMM_WORLD
    lg = api.load(cfg["spec"], comm)
    pg = DP.load(cfg["spec"], comm)
    progs = _user_variants(cfg)
    pers = {int(s): 1.0 for s in cfg["seeds"]}
    out = {}
    for _ in range(cfg["repeat"]):
        for mode in ("bsp", "asap"):
            r = api.pagerank(lg, comm, mode=mode, tol=cfg["tol"], max_iter=1000,
                             personalization=pers)
            out.setdefault(f"pagerank {mode}", []).append((r.stats.get("seconds"),
                                                           r.stats.get("bytes_sent")))
            for name, mk in progs.items():
                r = DP.run(mk(), pg, comm, mode=mode, tol=cfg["tol"], max_iter=1000)
                assert r.converged, (name, mode)
                out.setdefault(f"{name} {mode}", []).append((r.stats["seconds"],
                                                             r.stats["bytes_sent"]))
    if comm.Get_rank() == 0:
        json.dump(out, open(out_path, "w"))


def bench_user(args, rows):
    import subprocess
    import tempfile
    import asapgraph.programs as P
    from asapgraph.graph.io import load_graph
    from asapgraph.programs.pagerank import pagerank
    from scipy.sparse.linalg import eigs
    spec = f"rmat:{args.user_scale}"
    G = load_graph(spec)
    A = G.to_scipy()
    lam = float(abs(eigs(A.astype(np.float64), k=1, return_eigenvectors=False, tol=1e-6)[0]))
    ids = G.original_ids()
    tmp = tempfile.mkdtemp(prefix="bench_user_")
    cfg = {"spec": spec, "seeds": ids[[0, G.n // 3, G.n - 1]].tolist(), "katz_alpha": 0.5 / lam,
           "tol": args.user_tol, "repeat": args.repeat, "seeded_katz": _seeded_katz_file(tmp)}
    print(f"# {spec}: n={G.n:,} m={G.m:,}, lambda_max {lam:.1f}, katz alpha {cfg['katz_alpha']:.3g}, "
          f"tol {args.user_tol:g}", flush=True)
    progs = _user_variants(cfg)
    pers = {int(s): 1.0 for s in cfg["seeds"]}
    one = {}
    P.run(progs["ppr"](), G, tol=args.user_tol)  # warm-up (topology caches)
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        pagerank(G, tol=args.user_tol, personalization=pers)
        one.setdefault("pagerank", []).append(time.perf_counter() - t0)
        for name, mk in progs.items():
            for mode in ("bsp", "asap"):
                r = P.run(mk(), G, mode=mode, tol=args.user_tol, max_iter=1000)
                assert r.converged, (name, mode)
                one.setdefault(f"{name} {mode}", []).append(r.stats["seconds"])
    med = {k: statistics.median(v) for k, v in one.items()}
    for mode in ("bsp", "asap"):
        rows.append((spec, "user vs built-in, 1 process", f"ppr {mode} / built-in pagerank",
                     1, med[f"ppr {mode}"], med[f"ppr {mode}"] / med["pagerank"]))
        rows.append((spec, "user vs built-in, 1 process", f"seeded_katz {mode} / built-in katz",
                     1, med[f"seeded_katz {mode}"],
                     med[f"seeded_katz {mode}"] / med[f"katz {mode}"]))
    cfg_path, out_path = os.path.join(tmp, "cfg.json"), os.path.join(tmp, "out.json")
    json.dump(cfg, open(cfg_path, "w"))
    exe = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    subprocess.run([exe if os.access(exe, os.X_OK) else "mpiexec", "-n", str(args.np),
                    sys.executable, os.path.abspath(__file__), "--mpi-worker", cfg_path, out_path],
                   check=True, timeout=3600)
    res = json.load(open(out_path))
    sec = {k: statistics.median(t for t, _ in v) for k, v in res.items()}
    byt = {k: statistics.median(b for _, b in v) for k, v in res.items()}
    for mode in ("bsp", "asap"):
        where = f"user vs built-in, {args.np} ranks"
        rows.append((spec, where, f"ppr {mode} / built-in pagerank: seconds", args.np,
                     sec[f"ppr {mode}"], sec[f"ppr {mode}"] / sec[f"pagerank {mode}"]))
        rows.append((spec, where, f"ppr {mode} / built-in pagerank: bytes", args.np,
                     byt[f"ppr {mode}"], byt[f"ppr {mode}"] / byt[f"pagerank {mode}"]))
        rows.append((spec, where, f"seeded_katz {mode} / built-in katz: seconds", args.np,
                     sec[f"seeded_katz {mode}"], sec[f"seeded_katz {mode}"] / sec[f"katz {mode}"]))
        rows.append((spec, where, f"built-in katz {mode}: MB sent", args.np,
                     byt[f"katz {mode}"] / 1e6, None))


def report(rows):
    head = ("graph", "benchmark", "implementation", "threads", "seconds", "ratio")
    cells = [head] + [(g, b, i, str(t), f"{s:.4f}", "" if r is None else f"{r:.2f}")
                      for g, b, i, t, s, r in rows]
    widths = [max(len(c[j]) for c in cells) for j in range(len(head))]
    lines = ["| " + " | ".join(c[j].ljust(widths[j]) for j in range(len(head))) + " |" for c in cells]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    print("\n".join(lines))
    print("# ratio: peer seconds / ours (> 1: ours faster); pagerank rows: ours / built-in per "
          "iteration; user rows: user / built-in (seconds or bytes; < 1: user cheaper)")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=int, default=20, help="R-MAT scale (0: no R-MAT graph)")
    ap.add_argument("--edge-factor", type=int, default=16)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--iters", type=int, default=8, help="PageRank iterations per timing")
    ap.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    ap.add_argument("--dataset", action="append", default=[], help="edge-list file (repeatable)")
    ap.add_argument("--only", default="pagerank,wcc,sssp,bfs",
                    help="comma-separated subset to run (pagerank, wcc, sssp, bfs, user)")
    ap.add_argument("--user-scale", type=int, default=16, help="R-MAT scale of the user rows")
    ap.add_argument("--user-tol", type=float, default=1e-6, help="tol of the user rows")
    ap.add_argument("--np", type=int, default=4, help="ranks of the user rows' MPI launch")
    ap.add_argument("--mpi-worker", nargs=2, metavar=("CFG", "OUT"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.mpi_worker:
        _mpi_worker(*args.mpi_worker)
        return 0
    args.threads = [int(x) for x in args.threads.split(",")]
    only = set(args.only.split(","))
    print(f"# OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'default')}, {os.cpu_count()} cpus; "
          f"median of {args.repeat}", flush=True)
    rows = []
    for name, g, gw, A, Aw in _graphs(args):
        if "pagerank" in only:
            bench_pagerank(args, name, g, A, rows)
        if "wcc" in only:
            bench_wcc(args, name, g, A, rows)
        if "sssp" in only:
            bench_sssp(args, name, gw, Aw, rows)
        if "bfs" in only:
            bench_bfs(args, name, g, A, rows)
        del g, gw, A, Aw
    if "user" in only:
        bench_user(args, rows)
    report(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
