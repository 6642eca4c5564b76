"""Interleaved A/B of unemulated runs: variants (a mode, and environment such as
``PYTHONPATH=TREE`` for another checkout or an ``ASAPGRAPH_*`` knob) run round-robin, so
load from other processes hits all alike; prints per variant the medians of
``compute_seconds``, the ranks' summed thread CPU, edges and sweeps, and every run's time.

Usage::

    python benchmarks/ab_trees.py GRAPH TOL K N NAME:MODE[:VAR=VALUE...] ...

e.g. ``python benchmarks/ab_trees.py rmat:20 1e-6 4 7 bsp:bsp: base:asap:PYTHONPATH=/old
new:asap:`` (each run ``asapgraph pagerank GRAPH --np K --mode MODE --tol TOL --json``).
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile


def main(argv):
    if len(argv) < 5:
        sys.exit(__doc__)
    graph, tol, k, n = argv[0], argv[1], argv[2], int(argv[3])
    variants = []
    for spec in argv[4:]:
        name, mode, *envs = spec.split(":")
        env = dict(os.environ)
        for e in envs:
            if e:
                key, value = e.split("=", 1)
                env[key] = value
        variants.append((name, mode, env))
    res = {v[0]: [] for v in variants}
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "ranks.npy")
        for _ in range(n):
            for name, mode, env in variants:
                p = subprocess.run(["asapgraph", "pagerank", graph, "--np", k, "--mode", mode,
                                    "--tol", tol, "--json", "-q", "-o", out],
                                   capture_output=True, text=True, env=env)
                if p.returncode:
                    sys.exit(f"{name} failed ({p.returncode}): {p.stderr[-500:]}")
                d = json.loads(p.stdout)
                pr = d.get("per_rank") or []
                res[name].append((d["compute_seconds"], sum(r["cpu_seconds"] for r in pr),
                                  d["edges_scanned"], sum(r.get("sweeps", 0) for r in pr)))
    for name, rs in res.items():
        med = [statistics.median(r[i] for r in rs) for i in range(4)]
        print(f"{name}: time {med[0]:.3f} s, ranks' CPU {med[1]:.3f} s, edges "
              f"{med[2] / 1e6:.0f}M, sweeps {med[3]:.0f}; runs {[round(r[0], 3) for r in rs]}")


if __name__ == "__main__":
    main(sys.argv[1:])
