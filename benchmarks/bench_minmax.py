"""wcc / sssp / bfs with ``--np 4`` in BSP and ASAP: two checkouts compared (issue 12).

Usage::

    python benchmarks/bench_minmax.py BEFORE_TREE AFTER_TREE [--repeat 3] [--np 4]

Each tree is a source checkout with its extensions built in place (``python setup.py
build_ext --inplace``); a run imports it through ``PYTHONPATH``.  The runs are interleaved
(repeat x graph x command x mode x tree), and the table gives the medians of the CLI's
``compute_seconds`` (the run without loading) and ``bytes_sent`` (``--json``).  Graphs:
rmat:16 and cnr-2000 (from ``ASAPGRAPH_DATASETS``, default /work/shared/datasets), source
vertex 0.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--np", type=int, default=4)
    a = ap.parse_args()
    data = os.environ.get("ASAPGRAPH_DATASETS", "/work/shared/datasets")
    graphs = ["rmat:16", os.path.join(data, "cnr-2000.txt.gz")]
    trees = {"before": a.before, "after": a.after}
    res = {}
    out = os.path.join(tempfile.mkdtemp(prefix="bench_minmax_"), "out.csv")
    for _ in range(a.repeat):
        for g in graphs:
            for cmd in ("wcc", "sssp", "bfs"):
                for mode in ("bsp", "asap"):
                    for name, tree in trees.items():
                        args = [sys.executable, "-m", "asapgraph", cmd, g, "--np", str(a.np),
                                "--mode", mode, "--json", "-q", "-o", out]
                        if cmd != "wcc":
                            args += ["--source", "0"]
                        r = subprocess.run(args, env=dict(os.environ, PYTHONPATH=tree),
                                           capture_output=True, text=True, timeout=900)
                        if r.returncode != 0:
                            sys.exit(f"{name} {cmd} {g} {mode} failed: {r.stderr[-500:]}")
                        d = json.loads(r.stdout.strip().splitlines()[-1])
                        res.setdefault((os.path.basename(g), cmd, mode, name), []).append(
                            (d["compute_seconds"], d["bytes_sent"]))
    print("| graph | cmd | mode | before s | after s | ratio | before bytes | after bytes | ratio |")
    print("|---|---|---|---|---|---|---|---|---|")
    for g in graphs:
        gn = os.path.basename(g)
        for cmd in ("wcc", "sssp", "bfs"):
            for mode in ("bsp", "asap"):
                b, f = res[(gn, cmd, mode, "before")], res[(gn, cmd, mode, "after")]
                tb, tf = (statistics.median(x[0] for x in v) for v in (b, f))
                bb, bf = (statistics.median(x[1] for x in v) for v in (b, f))
                print(f"| {gn} | {cmd} | {mode} | {tb:.3f} | {tf:.3f} | {tf / tb:.2f} | "
                      f"{bb:,.0f} | {bf:,.0f} | {bf / max(bb, 1):.2f} |")


if __name__ == "__main__":
    main()
