"""Issue 15's K = 2 calibration with the clocks interleaved: the 2-rank grid (rmat:20 and
cnr-2000, BSP and ASAP, 1 ms / 1 Gbit/s emulated) where each repetition runs once on the
host's clock and once on the virtual clock charging CPU time, one right after the other
in the same worker processes.  Prints per cell the medians, the ranges, and the ratio
virtual / wall of each pair.

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


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit("usage: python benchmarks/bench_clocks_k2_paired.py TREE OUT.json [PAIRS]")
    tree, out = sys.argv[1], sys.argv[2]
    pairs = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    if os.environ.get("_K2_PAIRED_LOCKED") != "1":  # hold the lock for the whole grid
        env = dict(os.environ, PYTHONPATH=tree, _K2_PAIRED_LOCKED="1",
                   ASAPGRAPH_SHARED_DATASETS="/work/shared/datasets")
        sys.exit(subprocess.run(["flock", LOCK, sys.executable, __file__, *sys.argv[1:]],
                                env=env).returncode)
    from asapgraph.bench.runner import run_specs
    from asapgraph.bench.scenarios import RunSpec

    graphs, modes = ("rmat:20", "cnr-2000"), ("bsp", "asap")
    specs = [RunSpec(graph=g, ranks=2, mode=m, latency=0.001, bandwidth=125e6, repeat=i,
                     clock=c)
             for g in graphs for i in range(pairs) for m in modes for c in ("wall", "virtual")]
    la = os.getloadavg()
    recs = run_specs(specs, out + "_o")
    json.dump({"records": recs, "load": [la, os.getloadavg()]}, open(out, "w"))
    print(f"load {la[0]:.1f} -> {os.getloadavg()[0]:.1f}", file=sys.stderr)
    print("graph     mode  wall median [range]   cpu median [range]   cpu/wall  "
          "pairs (sorted)  within")
    for g in graphs:
        for m in modes:
            rs = [r for r in recs if r["graph"] == g and r["mode"] == m]
            w = [r["time_to_error"]["1e-06"] for r in rs if r["clock"] == "wall"]
            c = [r["time_to_error"]["1e-06"] for r in rs if r["clock"] == "virtual"]
            ok = all(r.get("within_tolerance") for r in rs)
            mw, mc = statistics.median(w), statistics.median(c)
            print(f"{g:9s} {m:5s} {mw:.3f} [{min(w):.3f}-{max(w):.3f}]  {mc:.3f} "
                  f"[{min(c):.3f}-{max(c):.3f}]  {mc / mw:.2f}  "
                  f"{sorted(round(b / a, 2) for a, b in zip(w, c))}  {ok}")


if __name__ == "__main__":
    main()
