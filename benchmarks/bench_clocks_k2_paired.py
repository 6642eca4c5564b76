"""Issue 15's K = 2 calibration with the clocks interleaved: the 2-rank grid (rmat:20 and
cnr-2000, BSP and ASAP, 1 ms / 1 Gbit/s emulated) where each repetition runs once on the
host's clock and once on the virtual clock charging CPU time, one right after the other
in the same worker processes, the clocks' order alternating pair by pair (wall first in
even pairs, virtual first in odd ones).  Prints per cell both clocks' median [quartiles;
range], the ratio of the medians, the median and range of the pairs' ratios, the wall
runs' run-queue wait (the worse rank's, ms: median / max; each record's ``host``, from
``/proc/self/task/*/schedstat``, asapgraph.bench.hostcount) and the median ratio over the
*undisturbed* pairs (the wall run's worse rank waited on the run queue for at most 2 % of
its run).  ``K2_GRAPHS=cnr-2000`` runs one graph; ``--report OUT.json [MORE.json ...]`` re-prints
grids, their pairs pooled.  The pairs' median ratio comes with its distribution-free 95 %
confidence interval from 6 pairs on (order statistics).

``K2_RT=1`` runs the job under ``chrt -r 1`` (SCHED_RR): on this shared 2-core VM other
sessions' processes (a nice-0 one, or nice-19 ones in their autogroups) otherwise take the
ranks' cores for 0-50 % of a wall run (benchmarks/REPORT.md, twenty-first session); the
ranks then own their cores as the issue's calibration presumes.  Real-time tasks get no
timer slack, so their sleeps end sooner than a nice-0 task's on a quiet host (tens of us).

Usage::

    python benchmarks/bench_clocks_k2_paired.py TREE OUT.json [PAIRS]

Why beside ``bench_clocks_k2.py`` (which runs the wall grid, then the CPU-time grid): on
this 2-core VM a sweep's CPU time per edge moves by up to a third between grids a minute
apart, in either direction (benchmarks/REPORT.md, nineteenth session: cnr-2000's rank 0
swept at 3.4-3.9 ns per edge in one session's wall grid and 2.8-3.1 in its CPU-time grid;
today the reverse), so the ratio of two grids' medians measures the host's drift as much
as the clock model.  Pairs sample the same host state.  Takes ``/tmp/wallclock.lock``
itself (never wrap it in another ``flock``); report ``uptime`` beside the figures.
"""
import json
import os
import statistics
import subprocess
import sys

LOCK = "/tmp/wallclock.lock"
WARMUP = 99  # the warm-up runs' repeat index


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit("usage: python benchmarks/bench_clocks_k2_paired.py TREE OUT.json [PAIRS]\n"
                 "       python benchmarks/bench_clocks_k2_paired.py --report OUT.json ...")
    tree, out = sys.argv[1], sys.argv[2]
    pairs = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    if os.environ.get("_K2_PAIRED_LOCKED") != "1":  # hold the lock for the whole grid
        env = dict(os.environ, PYTHONPATH=tree, _K2_PAIRED_LOCKED="1",
                   ASAPGRAPH_SHARED_DATASETS="/work/shared/datasets")
        cmd = ["flock", LOCK, sys.executable, __file__, *sys.argv[1:]]
        if os.environ.get("K2_RT") == "1":
            # the whole job (mpiexec, its proxy, the ranks) under SCHED_RR priority 1:
            # no other session's process -- nice 0 or nice 19 -- takes a rank's core
            # while it runs; ranks pause 0.4 s before each run against the kernel's
            # real-time throttling (asapgraph.bench.worker)
            env.setdefault("ASAPGRAPH_BENCH_GAP", "0.4")
            cmd = ["chrt", "-r", "1"] + cmd
        sys.exit(subprocess.run(cmd, env=env).returncode)
    from asapgraph.bench.runner import run_specs
    from asapgraph.bench.scenarios import RunSpec

    graphs, modes = ("rmat:20", "cnr-2000"), ("bsp", "asap")
    only = os.environ.get("K2_GRAPHS")  # e.g. K2_GRAPHS=cnr-2000 for a short grid
    if only:
        graphs = tuple(only.split(","))
    # the clocks' order alternates pair by pair (wall first, then virtual first): a drift
    # of the host within a pair then falls on either clock equally often
    # each graph's job starts with one warm-up run a mode and clock (repeat WARMUP, not
    # reported): a job's first runs pay its first touches (the first BSP run 1.6 s of
    # wall time against 0.6, 26-48 K page faults a rank against 2-5 K)
    specs = [RunSpec(graph=g, ranks=2, mode=m, latency=0.001, bandwidth=125e6, repeat=i,
                     clock=c)
             for g in graphs for i in [WARMUP] + list(range(pairs)) for m in modes
             for c in (("wall", "virtual") if i % 2 == 0 else ("virtual", "wall"))]
    la = os.getloadavg()
    recs = run_specs(specs, out + "_o")
    json.dump({"records": recs, "load": [la, os.getloadavg()]}, open(out, "w"))
    print(f"load {la[0]:.1f} -> {os.getloadavg()[0]:.1f}", file=sys.stderr)
    report(recs, graphs, modes)


def _q(v):
    """median [quartiles; range] of ``v``."""
    v = sorted(v)
    q = statistics.quantiles(v, n=4, method="inclusive") if len(v) > 1 else [v[0]] * 3
    return f"{q[1]:.3f} [{q[0]:.3f}-{q[2]:.3f}; {v[0]:.3f}-{v[-1]:.3f}]"


def _ci(v):
    """`` (95 % CI lo-hi)`` of the median of ``v``, distribution-free (order statistics
    of a Binomial(n, 1/2)); empty below 6 values, where it would be the range."""
    n = len(v)
    if n < 6:
        return ""
    from math import comb
    k, tail = 0, 0.0  # the largest k with P(Bin(n, 1/2) < k) <= 2.5 %
    while tail + comb(n, k) / 2 ** n <= 0.025:
        tail += comb(n, k) / 2 ** n
        k += 1
    v = sorted(v)
    return f" (CI {v[k - 1]:.2f}-{v[n - k]:.2f})" if k >= 1 else ""


def host_of(r):
    """(max over ranks of the run-queue wait, its share of the run, faults, steal) or None."""
    h = [x for x in (r.get("host") or []) if x]
    if not h:
        return None
    rq = max(x.get("run_delay_s", 0.0) for x in h)
    return {"rq": rq, "rq_share": rq / max(r.get("wall") or 1e-9, 1e-9),
            "minflt": sum(x.get("minflt", 0) for x in h),
            "steal": max(x.get("steal_s", 0.0) for x in h),
            "nivcsw": sum(x.get("nivcsw", 0) for x in h)}


def report(recs, graphs, modes, disturbed=0.02):
    """Per cell: both clocks' median [quartiles; range], the ratio of the medians, the
    median and range of the pairs' ratios, and the host's take from the wall runs
    (run-queue wait of the worse rank, ms: median and max).  A pair is *disturbed* when
    its wall run's worse rank waited on the run queue for more than ``disturbed`` of the
    run's time (the CPU clock's run does not see the host's scheduling: a rank
    descheduled by the host keeps its virtual times); the last column repeats the ratio
    over the undisturbed pairs."""
    print("graph     mode  wall median [quartiles; range]       cpu clock median [...]"
          "              cpu/wall  pairs: median [range]  wall rq ms med/max  "
          "undisturbed pairs: n, median ratio  within")
    for g in graphs:
        for m in modes:
            rs = [r for r in recs if r["graph"] == g and r["mode"] == m
                  and r["repeat"] != WARMUP]
            w = {(r.get("_src"), r["repeat"]): r for r in rs if r["clock"] == "wall"}
            c = {(r.get("_src"), r["repeat"]): r for r in rs if r["clock"] == "virtual"}
            keys = sorted(set(w) & set(c))
            tw = [w[k]["time_to_error"]["1e-06"] for k in keys]
            tc = [c[k]["time_to_error"]["1e-06"] for k in keys]
            ok = all(r.get("within_tolerance") for r in rs)
            ratios = [b / a for a, b in zip(tw, tc)]
            hw = [host_of(w[k]) for k in keys]
            hc = [host_of(c[k]) for k in keys]
            rq = [h["rq"] * 1e3 for h in hw if h]
            good = [x for x, a in zip(ratios, hw) if a and a["rq_share"] <= disturbed]
            print(f"{g:9s} {m:5s} {_q(tw)}  {_q(tc)}  "
                  f"{statistics.median(tc) / statistics.median(tw):.2f}  "
                  f"{statistics.median(ratios):.2f} [{min(ratios):.2f}-{max(ratios):.2f}]"
                  f"{_ci(ratios)}  "
                  + (f"{statistics.median(rq):.1f}/{max(rq):.1f}  " if rq else "n/a  ")
                  + (f"{len(good)}, {statistics.median(good):.2f}  " if good else "0, -  ")
                  + f"{ok}")


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "--report":  # re-print saved grids, pooled
        recs = []
        for i, f in enumerate(sys.argv[2:]):
            recs += [dict(r, _src=i) for r in json.load(open(f))["records"]]
        gs = tuple(dict.fromkeys(r["graph"] for r in recs))
        report(recs, gs, ("bsp", "asap"))
    else:
        main()
