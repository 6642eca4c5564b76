"""What an ASAP round costs besides its sweep, before/after: virtual clock, CPU-time compute.

Usage::

    python benchmarks/bench_round.py [--graph cnr-2000] [--repeat 5] [--before DIR] [--bsp]

Runs ``asapgraph pagerank GRAPH --np 4 --mode asap --latency 1e-3 --bandwidth 125M
--straggler 1:3 --clock virtual --tol 1e-6 --json`` with this checkout and, with
``--before DIR``, with another checkout (``PYTHONPATH=DIR``, its extensions built in
place), interleaved run by run; ``--bsp`` adds BSP with this checkout.  Per run and rank:
the CPU time of a round other than its sweep, ``(virtual compute - sweep CPU x factor) /
factor / rounds`` (what the virtual clock charged: polling, applying and packing
messages, ACKs, waves), and the sweep's CPU time.  Prints medians: virtual seconds to the
certified ``tol``, edges, the straggler's (rank 1) and the other ranks' (median) round
cost in us, the straggler's CPU per sweep in us.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_cost import source_of  # (benchmarks/ is on sys.path when run as a script)

FACTOR = 3.0


def run(graph, tree, mode, exe):
    src = source_of(graph)
    env = dict(os.environ)
    if tree:
        env["PYTHONPATH"] = str(tree)
    cmd = [exe, "pagerank", src, "--np", "4", "--mode", mode, "--latency", "1e-3",
           "--bandwidth", "125M", "--straggler", f"1:{FACTOR:g}", "--clock", "virtual",
           "--tol", "1e-6", "--json", "-q"]
    with tempfile.TemporaryDirectory() as tmp:
        r = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp, env=env)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{r.stderr[-2000:]}")
    d = json.loads(r.stdout)
    if mode == "bsp":
        return (d["virtual_seconds"],)
    rest, sweep = [], None
    for p in d["per_rank"]:
        f = FACTOR if p["rank"] == 1 else 1.0
        cs = p["compute_calibration"]["push"]["cpu_seconds"]
        rest.append((p["virtual_compute_seconds"] - cs * f) / f / max(p["rounds"], 1) * 1e6)
        if p["rank"] == 1:
            sweep = cs / max(p["sweeps"], 1) * 1e6
    others = statistics.median(rest[:1] + rest[2:])
    return d["virtual_seconds"], d["edges_scanned"], rest[1], others, sweep


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--graph", default="cnr-2000")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--before", default=None, help="another checkout to compare with")
    ap.add_argument("--bsp", action="store_true")
    ap.add_argument("--exe", default=str(Path(sys.executable).with_name("asapgraph")))
    a = ap.parse_args(argv)
    trees = ([("before", a.before)] if a.before else []) + [("this", None)]
    res = {name: [] for name, _ in trees}
    bsp = []
    for i in range(a.repeat):
        for name, tree in trees:
            res[name].append(run(a.graph, tree, "asap", a.exe))
        if a.bsp:
            bsp.append(run(a.graph, None, "bsp", a.exe)[0])
        print(f"round {i + 1}/{a.repeat} done", file=sys.stderr)
    print(f"{a.graph}, 4 ranks, rank 1 {FACTOR:g}x, 1 ms / 125 MB/s, virtual clock (CPU "
          f"time), tol 1e-6, medians of {a.repeat} interleaved runs")
    print("| tree | ASAP virtual s | edges | straggler round us | other ranks' round us "
          "| straggler sweep us |")
    print("|---|---|---|---|---|---|")
    for name, _ in trees:
        c = [statistics.median(col) for col in zip(*res[name])]
        print(f"| {name} | {c[0]:.3f} | {c[1]:.3g} | {c[2]:.0f} | {c[3]:.0f} | {c[4]:.0f} |")
    if bsp:
        print(f"| BSP (this) | {statistics.median(bsp):.3f} | | | | |")


if __name__ == "__main__":
    main()
