"""A BSP rank's PageRank sweep against the single-process sweep, in ns per edge.

Usage::

    python benchmarks/bench_rank_sweep.py [--graphs rmat:20,cnr-2000] [--np 2] [--repeat 3]
        [--tol 1e-6] [--trees /path/to/other/checkout,...]

Per round and graph (rounds interleave everything, so load from other processes hits all
variants alike): the single-process PageRank at 1 thread in this process, then, once per
tree, ``K`` ranks under ``mpiexec`` that load the graph (:func:`asapgraph.engine.load`) and
run BSP PageRank on it twice (the first run builds what the engine builds once per loaded
graph; the second is measured).  In both, every call of a local kernel of a superstep is
timed from outside -- wall clock and this thread's CPU time -- by wrapping the module
attribute the engine calls:

* single process and pull-layout ranks: ``asapgraph.kernels._pagerank.sweep`` (ranks also pack
  their boundary values, ``asapgraph.kernels._pull.gather``, and combine the partial sums
  of the peers that take the combined form, ``asapgraph.kernels._pull.combine``, whose
  edges count as the rank's edges);
* push-layout ranks (before the pull layout): ``_local.push_sweep``, ``_local.scatter_add``
  (received values) and ``_local.apply_update``.

A figure is (kernel time of the run) / (sweeps x edges the sweep visits: all edges on one
process, the rank's in-edges pulled or out-edges pushed).  CPU time is what to compare on
a shared machine (wall time includes every time slice given to other processes).  Printed:
medians over the rounds, each rank's figure, the ratio slowest rank / single process
(issue 12 asks for at most 1.2) and the ranks' edge-weighted mean over the single process
(the whole superstep's work against one sweep's: a range partition balances vertices
and edges, so a rank with more vertices per edge pays more per edge).  For a graph the
policy does not relabel (locality), each rank is also compared with the single-process
sweep over exactly its rows (``sweep`` with those row bounds): parts of a graph differ in
cost per edge, and that comparison isolates what the engine adds.  ``--trees`` compares checkouts built in place (e.g.
before and after a change); the ranks then import that tree's asapgraph (``PYTHONPATH``).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_cost import source_of  # noqa: E402  (the same graph names, one resolver)

#: wraps the kernels named in the module doc with (wall, cpu) accumulators
TIMERS = r"""
import importlib, time
T = {"wall": 0.0, "cpu": 0.0, "calls": 0}
def _wrap(modname, fname):
    try:
        mod = importlib.import_module(modname)
    except ImportError:
        return
    f = getattr(mod, fname, None)
    if f is None:
        return
    def timed(*a, **k):
        w, c = time.perf_counter(), time.thread_time()
        r = f(*a, **k)
        T["wall"] += time.perf_counter() - w
        T["cpu"] += time.thread_time() - c
        T["calls"] += 1
        return r
    setattr(mod, fname, timed)
"""

RANK = TIMERS + r"""
import json, sys
from mpi4py import MPI
import asapgraph.engine as ad
for m, f in (("asapgraph.kernels._pagerank", "sweep"), ("asapgraph.kernels._pull", "gather"),
             ("asapgraph.kernels._pull", "combine"),
             ("asapgraph.kernels._local", "push_sweep"), ("asapgraph.kernels._local", "scatter_add"),
             ("asapgraph.kernels._local", "apply_update")):
    _wrap(m, f)
src, tol = sys.argv[1], float(sys.argv[2])
comm = MPI.COMM_WORLD
L = ad.load(src, comm)
first = ad.pagerank(L, comm, mode="bsp", tol=tol, max_iter=1000)
T.update(wall=0.0, cpu=0.0, calls=0)
r = ad.pagerank(L, comm, mode="bsp", tol=tol, max_iter=1000)
pg = getattr(L.lg, "_pull", None)
edges = getattr(pg, "m", L.lg.mloc) + getattr(pg, "mcomb", 0)
own = L.lg.owned
rows = None  # the rank's rows as one range of the single process's (same order)
if pg is not None and not pg.reordered and len(own) and own[-1] - own[0] + 1 == len(own):
    rows = [int(own[0]), int(own[-1]) + 1]
rec = {"rank": comm.rank, "wall": T["wall"], "cpu": T["cpu"], "rounds": r.iterations,
       "rows": rows,
       "edges": int(edges), "first_run_seconds": first.stats.get("seconds") if first.stats else None,
       "run_seconds": r.stats.get("seconds") if r.stats else None}
recs = comm.gather(rec, root=0)
if comm.rank == 0:
    print("<<" + json.dumps(recs) + ">>")
"""


_SINGLE = {}


def single_ns(g, tol):
    """(wall, cpu) ns per edge of the single-process sweeps of one run (1 thread), sweeps."""
    from asapgraph.programs.pagerank import pagerank

    if not _SINGLE:
        exec(TIMERS, _SINGLE)
        _SINGLE["_wrap"]("asapgraph.kernels._pagerank", "sweep")
    T = _SINGLE["T"]
    T.update(wall=0.0, cpu=0.0, calls=0)
    r = pagerank(g, tol=tol, threads=1)
    per = r.iterations * g.m / 1e9
    return T["wall"] / per, T["cpu"] / per, r.iterations


def rows_ns(g, lo, hi, sweeps=15):
    """CPU ns per edge of single-process sweeps restricted to rows ``[lo, hi)`` (1 thread,
    the graph's own order: what a rank owning exactly those rows would have to match)."""
    import numpy as np

    from asapgraph.kernels import _pagerank as k

    indptr = np.ascontiguousarray(g.indptr, dtype=np.int64)
    deg = np.asarray(g.out_degree)
    inv = np.zeros(g.n)
    np.divide(1.0, deg, out=inv, where=deg != 0)
    x = np.full(g.n, 1.0 / g.n)
    c, c2, e = x * inv, np.empty(g.n), np.zeros(0)
    st, b = np.zeros((1, k.NSTATS)), np.array([lo, hi], dtype=np.int64)
    ts = []
    for _ in range(sweeps):
        t = time.thread_time()
        k.sweep(indptr, g.indices, e, inv, x, c, c2, e, e, 0.85, 0.0, b, st, False)
        ts.append(time.thread_time() - t)
    return statistics.median(ts) / max(1, int(indptr[hi] - indptr[lo])) * 1e9


def rank_ns(source, k, tol, tree):
    """Per rank ``(wall, cpu)`` ns per edge of its superstep kernels; the rank records."""
    env = dict(os.environ)
    if tree:
        env["PYTHONPATH"] = tree + os.pathsep + env.get("PYTHONPATH", "")
    from asapgraph.comm.launch import find_mpiexec, rank_env

    exe = find_mpiexec()
    with tempfile.TemporaryDirectory() as cwd:  # not a source tree: import what is asked
        r = subprocess.run([exe, "-n", str(k), sys.executable, "-c", RANK, source, str(tol)],
                           cwd=cwd, env=rank_env(exe, env), capture_output=True, text=True,
                           timeout=1800)
    if r.returncode or "<<" not in r.stdout:
        sys.exit(f"rank run failed ({tree or 'installed'}):\n{r.stderr[-2000:]}")
    recs = json.loads(r.stdout.split("<<", 1)[1].split(">>", 1)[0])
    per = [(q["wall"] / (q["rounds"] * q["edges"]) * 1e9,
            q["cpu"] / (q["rounds"] * q["edges"]) * 1e9) for q in recs]
    return per, recs


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graphs", default="rmat:20,cnr-2000")
    ap.add_argument("--np", type=int, default=2, dest="k")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--tol", type=float, default=1e-6)
    ap.add_argument("--trees", default="", help="comma-separated checkouts to compare "
                                                "(default: the installed asapgraph)")
    a = ap.parse_args(argv)
    from asapgraph.graph.io import load_graph

    trees = [t for t in a.trees.split(",") if t] or [""]
    graphs = {name: load_graph(source_of(name)) for name in a.graphs.split(",")}
    single = {name: [] for name in graphs}
    ranks = {(name, t): [] for name in graphs for t in trees}
    info = {}
    for rnd in range(a.repeat):
        for name, g in graphs.items():
            w, c, its = single_ns(g, a.tol)
            single[name].append((w, c))
            for t in trees:
                per, recs = rank_ns(source_of(name), a.k, a.tol, t)
                ranks[(name, t)].append(per)
                info[(name, t)] = (its, recs)
            print(f"round {rnd + 1}/{a.repeat} {name}: single {c:.2f} CPU ns/edge "
                  f"({w:.2f} wall); ranks " +
                  "; ".join(f"{t or 'installed'}: " +
                            " ".join(f"{cc:.2f}" for _, cc in ranks[(name, t)][-1])
                            for t in trees) + f" (load avg {os.getloadavg()[0]:.1f})",
                  flush=True)
    print(f"\nmedians over {a.repeat} interleaved rounds, {a.k} ranks, tol {a.tol:g}; ns per "
          "edge per sweep, CPU time (wall in brackets); single process: 1 thread")
    print("| graph | tree | single | each rank | slowest rank / single (CPU) | "
          "all ranks / single (CPU) | sweeps 1p/BSP | BSP run s: first / second |")
    print("|---|---|---|---|---|---|---|---|")
    med = statistics.median
    for name in graphs:
        sw, sc = med(x[0] for x in single[name]), med(x[1] for x in single[name])
        for t in trees:
            rows = ranks[(name, t)]
            w = [med(r[i][0] for r in rows) for i in range(a.k)]
            c = [med(r[i][1] for r in rows) for i in range(a.k)]
            its, recs = info[(name, t)]
            agg = sum(ci * q["edges"] for ci, q in zip(c, recs)) / sum(q["edges"] for q in recs)
            print(f"| {name} | {t or 'installed'} | {sc:.2f} ({sw:.2f}) | " +
                  " / ".join(f"{ci:.2f} ({wi:.2f})" for ci, wi in zip(c, w)) +
                  f" | {max(c) / sc:.2f}x | {agg / sc:.2f}x | {its}/{recs[0]['rounds']} | "
                  f"{recs[0]['first_run_seconds']:.2f} / {recs[0]['run_seconds']:.2f} |")
    same = [(name, t, q) for (name, t), (_, recs) in info.items() for q in recs if q["rows"]]
    if same:
        print("\nnot relabelled (range partition): each rank against the single-process "
              "sweep over the same rows (CPU ns per edge, median of 15 sweeps)")
        print("| graph | tree | rank | rows | single, same rows | rank | rank / single |")
        print("|---|---|---|---|---|---|---|")
        for name, t, q in same:
            s1 = rows_ns(graphs[name], *q["rows"])
            rk = med(r[q["rank"]][1] for r in ranks[(name, t)])
            print(f"| {name} | {t or 'installed'} | {q['rank']} | {q['rows'][0]}:{q['rows'][1]} "
                  f"| {s1:.2f} | {rk:.2f} | {rk / s1:.2f}x |")


if __name__ == "__main__":
    t0 = time.perf_counter()
    main()
    print(f"({time.perf_counter() - t0:.0f} s)")
