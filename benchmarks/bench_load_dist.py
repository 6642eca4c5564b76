"""Distributed loading against the single process's ``load_graph`` (issue 13, loading).

Usage::

    python benchmarks/bench_load_dist.py rmat:22 /tmp/rmat22.txt [--np 2] [--repeat 3]
        [--before DIR] [--pagerank]

For every input, runs ``asapgraph pagerank INPUT --max-iter 1 --allow-unconverged --json``
in a fresh process on one process and with ``--np K`` (interleaved, ``--repeat`` rounds)
and reports the median ``load_seconds`` of each (the JSON's load phase: reading or
generating, id mapping, partitioning, shuffle, local CSR on every rank) and the peak RSS
per rank.  ``--before DIR`` adds the same runs with another checkout (extensions built in
place) first on ``PYTHONPATH``: before/after in one run.  ``--pagerank`` runs the whole
``asapgraph pagerank INPUT --tol 1e-10 --json`` instead and adds its wall time (the
process, measured from outside: start-up, load, compute, output) and ``compute_seconds``.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time


def run(inp, np_, before, pagerank=False):
    env = dict(os.environ)
    if before:
        env["PYTHONPATH"] = os.pathsep.join(x for x in (before, env.get("PYTHONPATH")) if x)
    if os.path.exists(inp):  # the runs start in / (not a source checkout): a relative
        inp = os.path.abspath(inp)   # path (README's `FILE`) failed every run ("FAILED")
    cmd = [sys.executable, "-m", "asapgraph", "pagerank", inp, "--json", "-q"]
    cmd += ["--tol", "1e-10"] if pagerank else ["--max-iter", "1", "--allow-unconverged"]
    if np_ > 1:
        cmd += ["--np", str(np_)]
    t = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd="/")
    wall = time.perf_counter() - t
    if out.returncode != 0:  # say why (the table only says FAILED)
        why = (out.stderr.strip().splitlines() or [f"exit status {out.returncode}"])[-1]
        sys.stderr.write(f"{inp} (np {np_}): {why}\n")
        return None
    d = json.loads(out.stdout)
    rss = d.get("peak_rss_mb_max_rank") or d.get("peak_rss_bytes", 0) / 2**20
    return d["load_seconds"], rss, wall, d.get("compute_seconds", float("nan"))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("inputs", nargs="+")
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--before", default=None)
    ap.add_argument("--pagerank", action="store_true",
                    help="the whole pagerank --tol 1e-10 run: wall and compute times too")
    a = ap.parse_args(argv)
    variants = [("after", None)] + ([("before", a.before)] if a.before else [])
    res = {}
    load0 = os.getloadavg()[0]
    for _ in range(a.repeat):
        for inp in a.inputs:
            for tag, path in variants:
                for k in (1, a.np):
                    res.setdefault((inp, tag, k), []).append(run(inp, k, path, a.pagerank))
    print(f"load average {load0:.1f} at the start, {os.getloadavg()[0]:.1f} at the end; "
          f"median of {a.repeat}, fresh processes, interleaved")
    print(f"{'input':28s} {'code':7s} {'ranks':>5s} {'load s':>8s} {'peak MB/rank':>13s}"
          f" {'vs 1 process':>13s}" + (f" {'wall s':>8s} {'compute s':>10s} {'wall vs 1':>10s}"
                                       if a.pagerank else ""))
    for inp in a.inputs:
        for tag, _ in variants:
            one = one_w = None
            for k in (1, a.np):
                ok = [x for x in res[(inp, tag, k)] if x]
                if not ok:
                    print(f"{inp:28s} {tag:7s} {k:5d} FAILED")
                    continue
                t = statistics.median(x[0] for x in ok)
                mb = max(x[1] for x in ok)
                w = statistics.median(x[2] for x in ok)
                cs = statistics.median(x[3] for x in ok)
                one = t if k == 1 else one
                one_w = w if k == 1 else one_w
                rel = f"{t / one:12.2f}x" if (one and k > 1) else ""
                line = f"{inp:28s} {tag:7s} {k:5d} {t:8.2f} {mb:13.0f} {rel:>13s}"
                if a.pagerank:
                    relw = f"{w / one_w:9.2f}x" if (one_w and k > 1) else ""
                    line += f" {w:8.2f} {cs:10.2f} {relw:>10s}"
                print(line, flush=True)


if __name__ == "__main__":
    main()
