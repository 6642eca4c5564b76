"""Unemulated ASAP against BSP on K ranks (issue 14: "ASAP not slower than BSP, visiting no
more edges"), interleaved, medians.

Usage::

    python benchmarks/bench_modes.py [--np 2] [--repeat 5] [--graphs rmat:20,cnr-2000]
        [--tols 1e-6,1e-10] [--exe asapgraph]

Each run is the user's command in a fresh process, ``asapgraph pagerank G --np K --mode
bsp|asap --tol T --json -q``; rounds interleave every (graph, tol, mode), so load from
other processes hits both modes alike.  Prints per cell the medians of
``compute_seconds``, ``edges_scanned`` and the ranks' summed thread CPU
(``per_rank[].cpu_seconds``: what a mode takes from the cores when ranks time-slice them,
MPI's busy waits included), their ratios (BSP / ASAP time: above 1 means ASAP is faster)
and every run's compute time.  Shared graphs are read from ``../shared/datasets`` (or
``ASAPGRAPH_SHARED_DATASETS``).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

from bench_cost import source_of as shared_source  # a spec, or a graph in ../shared/datasets


def source_of(name):
    return name if os.path.exists(name) else shared_source(name)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--np", type=int, default=2, dest="k")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--graphs", default="rmat:20,cnr-2000")
    ap.add_argument("--tols", default="1e-6,1e-10")
    ap.add_argument("--exe", default="asapgraph")
    ap.add_argument("--dump", default=None,
                    help="append every run's full --json (plus graph, tol, mode) to this "
                         "JSON-lines file")
    a = ap.parse_args(argv)
    graphs = [(g, source_of(g)) for g in a.graphs.split(",")]
    tols = a.tols.split(",")
    runs = {}
    for r in range(a.repeat):
        for name, src in graphs:
            for t in tols:
                for mode in ("bsp", "asap"):
                    argv_ = [a.exe, "pagerank", src, "--np", str(a.k), "--mode", mode,
                             "--tol", t, "--json", "-q"]
                    p = subprocess.run(argv_, capture_output=True, text=True, timeout=3600)
                    if p.returncode:
                        sys.exit(f"{' '.join(argv_)} failed ({p.returncode}):\n{p.stderr[-2000:]}")
                    d = json.loads(p.stdout)
                    if a.dump:
                        with open(a.dump, "a") as f:
                            f.write(json.dumps(dict(d, _graph=name, _tol=t, _mode=mode,
                                                    _round=r, _k=a.k,
                                                    _load=os.getloadavg()[0])) + "\n")
                    runs.setdefault((name, t, mode), []).append(
                        (d["compute_seconds"], d["edges_scanned"], d["converged"],
                         sum(q.get("cpu_seconds", 0.0) for q in d["per_rank"])))
        print(f"round {r + 1}/{a.repeat} done (load average {os.getloadavg()[0]:.1f})",
              file=sys.stderr)
    med = statistics.median
    for name, _ in graphs:
        for t in tols:
            b, s = runs[(name, t, "bsp")], runs[(name, t, "asap")]
            tb, ta = med(x[0] for x in b), med(x[0] for x in s)
            eb, ea = med(x[1] for x in b), med(x[1] for x in s)
            cb, ca = med(x[3] for x in b), med(x[3] for x in s)
            print(f"{name} K={a.k} tol={t}: BSP {tb:.3f} s, ASAP {ta:.3f} s, BSP/ASAP "
                  f"{tb / ta:.2f}; edges ASAP/BSP {ea / eb:.2f} ({ea / 1e6:.0f}M / "
                  f"{eb / 1e6:.0f}M); ranks' CPU BSP {cb:.3f} s, ASAP {ca:.3f} s; "
                  f"converged {all(x[2] for x in b + s)}; runs BSP "
                  f"{[round(x[0], 3) for x in b]} ASAP {[round(x[0], 3) for x in s]}")


if __name__ == "__main__":
    main()
