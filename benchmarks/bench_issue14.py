"""Issue 14's emulated cells (4 ranks, 1 ms, 1 Gbit/s; time and bytes to true L1 error 1e-6)
on either compute charge, so the model's figures can be set beside what the ranks' code
costs on this host.

Usage::

    python benchmarks/bench_issue14.py [--graphs rmat:20,cnr-2000] [--compute model|cpu]
        [--seeds 1] [--repeat 1] [--transient] [--cells persistent,...] [--out DIR]

Cells (the README's table): a persistent 3x straggler (rank 1) and heterogeneous speeds
(1, 1.5, 2, 3), ASAP ``--rebalance start`` against static BSP; with ``--transient`` also
20-100 ms pauses every ~250 ms, both modes static.  Each cell is one ``asapgraph bench
--grid`` job per mode (``--clock virtual``, the given ``--compute``), JSON under ``--out``.
Prints per cell and seed the medians of both modes' times to 1e-6, BSP / ASAP (above 1:
ASAP sooner), the bytes' ratio and every ASAP run's time.  ``--compute model`` repeats to
the last bit; ``--compute cpu`` charges each rank's thread CPU time (four ranks on two
cores: it includes the contention), so take ``--repeat 3`` or more.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

CELLS = {"persistent": ["--straggler", "1:3"], "heterogeneous": ["--straggler", "1:1.5,2:2,3:3"]}
TRANSIENT = ["--straggler", "none", "--pauses", "0.02:0.1:0.25"]
NET = ["--latency", "0.001", "--bandwidth", "125e6"]


def _at(d, level=1e-6):
    for k, v in (d or {}).items():
        if abs(float(k) - level) <= 1e-12:
            return v
    return None


def job(graph, mode, rebalance, cell_args, compute, seed, repeat, out, exe):
    path = os.path.join(out, f"{graph.replace(':', '_')}_{mode}_{rebalance}_"
                             f"{'_'.join(cell_args).replace(':', '-').replace(',', '+')}"
                             f"_{compute}_s{seed}.json")
    schedule = ["--schedule", "sweep"] if mode == "asap" else []
    cmd = [exe, "bench", "--grid", "--graphs", graph, "--ranks", "4", "--modes", mode,
           *schedule, "--rebalance", rebalance, *NET, *cell_args, "--clock", "virtual",
           "--compute", compute, "--repeat", str(repeat), "--no-peers", "--seed", str(seed),
           "-q", "--json-out", path, "--results-dir", out, "--outdir", out]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        sys.exit(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stderr[-2000:]}")
    recs = json.load(open(path))["records"]
    times = [_at(r.get("time_to_error")) for r in recs]
    nbytes = [_at(r.get("bytes_to_error")) for r in recs]
    errs = [r.get("final_error") for r in recs]
    if None in times:
        sys.exit(f"{path}: a run did not reach 1e-6")
    return times, nbytes, errs


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--graphs", default="rmat:20,cnr-2000")
    ap.add_argument("--compute", choices=("model", "cpu"), default="model")
    ap.add_argument("--seeds", default="1")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--transient", action="store_true")
    ap.add_argument("--cells", default=None,
                    help="comma-separated subset of persistent,heterogeneous,transient")
    ap.add_argument("--out", default="benchmarks/results/issue14")
    ap.add_argument("--exe", default="asapgraph")
    a = ap.parse_args(argv)
    os.makedirs(a.out, exist_ok=True)
    cells = [(name, args, "start", "off") for name, args in CELLS.items()]
    if a.transient or (a.cells and "transient" in a.cells.split(",")):
        cells.append(("transient", TRANSIENT, "off", "off"))
    if a.cells:
        cells = [c for c in cells if c[0] in a.cells.split(",")]
    for graph in a.graphs.split(","):
        for name, args, reb_asap, reb_bsp in cells:
            for seed in a.seeds.split(","):
                tb, bb, eb = job(graph, "bsp", reb_bsp, args, a.compute, seed, a.repeat,
                                 a.out, a.exe)
                ta, ba, ea = job(graph, "asap", reb_asap, args, a.compute, seed, a.repeat,
                                 a.out, a.exe)
                mb, ma = statistics.median(tb), statistics.median(ta)
                print(f"{graph} {name} ({a.compute}, seed {seed}, {a.repeat} run(s)): BSP "
                      f"{mb:.4f} s, ASAP {ma:.4f} s, BSP/ASAP {mb / ma:.3f}; bytes BSP/ASAP "
                      f"{statistics.median(bb) / statistics.median(ba):.1f}; ASAP runs "
                      f"{[round(t, 4) for t in ta]}; final L1 <= {max(eb + ea):.1e}",
                      flush=True)


if __name__ == "__main__":
    main()
