"""COST: the single process (1 and T threads) against K ranks x T threads, BSP and ASAP.

Usage::

    python benchmarks/bench_cost.py [--graphs rmat:20] [--np 2] [--threads 2] [--repeat 3]
        [--modes bsp,asap] [--error 1e-6] [--report benchmarks/REPORT.md]

Every configuration is the command a user types, in a fresh process (so loading, the
rank start-up and the result gather are all in the wall time)::

    asapgraph pagerank GRAPH --tol ERROR --json -q -o OUT.npy [--threads T]
        [--np K --mode bsp|asap]

``--tol`` is a certified bound on the L1 error (BSP and one process: ``alpha / (1 -
alpha)`` times the last L1 change; ASAP: its error bound), so each run stops as soon as it
can prove L1 error <= ERROR; the error actually reached is measured against a reference
solved to 1e-13 on one process in this script (L1 over all vertices, by id).  Rounds
interleave every configuration (load from other processes hits them alike); figures are
medians over the rounds: ``compute_seconds`` (one process: relabelling and sweeps; ranks:
the pull layout build, the supersteps and their exchanges, the slowest rank's clock),
``load_seconds`` and the wall time of the whole command, each also as a ratio to the
single process with 1 thread of the same round set.  Configurations: one process with 1
thread and with T threads; K ranks x 1 thread and K ranks x T threads in BSP; K ranks x 1
thread in ASAP (an ASAP rank sweeps with one thread).  On a machine with fewer than
K x T cores the last ones oversubscribe it: that is reported, not hidden.

With ``--report`` the table replaces the section between ``<!-- bench_cost:begin -->``
and ``<!-- bench_cost:end -->`` of that Markdown file (appended when absent; ``--section
NAME``: between ``<!-- bench_cost:NAME:begin -->`` and ``...:end -->``, so several runs,
e.g. one per graph, keep their own tables).
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
SHARED = Path(os.environ.get("ASAPGRAPH_SHARED_DATASETS", HERE.parent.parent / "shared" / "datasets"))


def markers(section):
    """The comment lines around the section ``section`` of the report."""
    tag = "bench_cost" + (f":{section}" if section else "")
    return f"<!-- {tag}:begin -->", f"<!-- {tag}:end -->"


def source_of(name):
    if name.startswith(("rmat:", "er:")):
        return name
    p = SHARED / (name if "." in name else name + ".txt.gz")
    if not p.exists():
        sys.exit(f"{p} not found (set ASAPGRAPH_SHARED_DATASETS)")
    return str(p)


def configs(k, t, modes):
    """(label, extra argv) of every configuration, in the order they run."""
    out = [("1 process x 1 thread", ["--threads", "1"])]
    if t > 1:
        out.append((f"1 process x {t} threads", ["--threads", str(t)]))
    for mode in modes:
        ths = [1] + ([t] if t > 1 and mode == "bsp" else [])
        for th in ths:
            out.append((f"{mode.upper()} {k} ranks x {th} thread{'s' if th > 1 else ''}",
                        ["--np", str(k), "--mode", mode, "--threads", str(th)]))
    return out


def reference(source):
    """Ids and values solved to L1 1e-13 on one process."""
    from asapgraph import pagerank
    from asapgraph.graph.io import load_graph

    r = pagerank(load_graph(source), tol=1e-13, max_iter=10_000)
    order = np.argsort(r.ids)
    return np.asarray(r.ids)[order], np.asarray(r.ranks)[order]


def run_one(exe, source, error, extra, ref, cwd):
    out = Path(cwd) / "out.npy"
    argv = [exe, "pagerank", source, "--tol", repr(error), "--json", "-q", "-o", str(out),
            *extra]
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    r = subprocess.run(argv, capture_output=True, text=True, cwd=cwd, timeout=3600)
    wall = time.perf_counter() - t
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (ru1.ru_utime + ru1.ru_stime) - (ru0.ru_utime + ru0.ru_stime)
    if r.returncode:
        sys.exit(f"{' '.join(argv)} failed ({r.returncode}):\n{r.stderr[-2000:]}")
    d = json.loads(r.stdout)
    a = np.load(out)
    out.unlink()
    names = a.dtype.names
    ids, vals = np.asarray(a[names[0]]), np.asarray(a[names[1]], dtype=np.float64)
    o = np.argsort(ids)
    if not np.array_equal(ids[o], ref[0]):
        sys.exit(f"{' '.join(argv)}: ids differ from the reference")
    per = d.get("per_rank") or []
    return {"compute": d["compute_seconds"], "load": d["load_seconds"], "wall": wall,
            "cpu": cpu,
            "iterations": d["iterations"], "l1": float(np.abs(vals[o] - ref[1]).sum()),
            "setup": max((q["pull_setup_seconds"] for q in per
                          if "pull_setup_seconds" in q), default=None),
            "sweep_cpu_ns": max((q["sweep_cpu_ns_per_edge"] for q in per
                                 if q.get("sweep_cpu_ns_per_edge")), default=None),
            "wait": max((q.get("wait_seconds", 0.0) for q in per), default=None),
            "loadavg": os.getloadavg()[0]}


def table(results, graphs, cfgs, args):
    med = statistics.median
    begin, end = markers(args.section)
    lines = [begin, "",
             f"### COST: single process vs ranks x threads, {', '.join(graphs)}, to L1 "
             f"{args.error:g}", "",
             f"`python benchmarks/bench_cost.py --graphs {','.join(graphs)} --np {args.k} "
             f"--threads {args.threads} --repeat {args.repeat} --modes {','.join(args.modes)}"
             + (f" --section {args.section}" if args.section else "") + "`"
             f" ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} cores). "
             "Each configuration is the user's command in a fresh process, rounds "
             "interleave them, medians over the rounds; ratios to the single process "
             "with 1 thread. `compute` = `compute_seconds` of `--json` (ranks: layout build "
             "+ supersteps); `setup` = the slowest rank's pull layout build (inside compute); "
             "`wait` = the slowest rank's blocking receives and reductions (inside compute); "
             "`sweep CPU ns/edge` = the slowest rank's median superstep sweep (CPU time); "
             "`min` = the fastest round (the least disturbed by other processes); "
             "`CPU s` = user + system time of every process of the command (launcher and "
             "ranks included): the core-seconds it cost.", "",
             "| graph | configuration | compute s | compute / 1x1 | min compute s | wall s | "
             "wall / 1x1 | min wall s | CPU s | load s | setup s | wait s | "
             "sweep CPU ns/edge | iterations | L1 error | load average |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for g in graphs:
        base = results[(g, cfgs[0][0])]
        bc, bw = med(r["compute"] for r in base), med(r["wall"] for r in base)
        for label, _ in cfgs:
            rs = results[(g, label)]
            c, w = med(r["compute"] for r in rs), med(r["wall"] for r in rs)

            def opt(key, fmt):
                v = [r[key] for r in rs if r[key] is not None]
                return format(med(v), fmt) if v else "–"
            la = [r["loadavg"] for r in rs]
            lines.append(
                f"| {g} | {label} | {c:.3f} | {c / bc:.2f}x | "
                f"{min(r['compute'] for r in rs):.3f} | {w:.2f} | {w / bw:.2f}x | "
                f"{min(r['wall'] for r in rs):.2f} | {med(r['cpu'] for r in rs):.2f} | "
                f"{med(r['load'] for r in rs):.2f} | {opt('setup', '.3f')} | "
                f"{opt('wait', '.3f')} | {opt('sweep_cpu_ns', '.2f')} | "
                f"{med(r['iterations'] for r in rs):g} | {max(r['l1'] for r in rs):.1e} | "
                f"{min(la):.1f}-{max(la):.1f} |")
    lines += ["", end]
    return "\n".join(lines)


def write_report(path, text, section=""):
    p = Path(path)
    old = p.read_text() if p.exists() else ""
    begin, end = markers(section)
    if begin in old and end in old:
        head, rest = old.split(begin, 1)
        new = head + text + rest.split(end, 1)[1]
    else:
        new = old.rstrip("\n") + "\n\n" + text + "\n"
    p.write_text(new)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graphs", default="rmat:20")
    ap.add_argument("--np", type=int, default=2, dest="k")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--modes", default="bsp,asap", type=lambda s: s.split(","))
    ap.add_argument("--error", type=float, default=1e-6)
    ap.add_argument("--exe", default=str(Path(sys.executable).with_name("asapgraph")))
    ap.add_argument("--report", default=None, help="Markdown file to write the table into")
    ap.add_argument("--section", default="", help="name of the report section (several "
                                                  "runs keep one table each)")
    a = ap.parse_args(argv)
    graphs = a.graphs.split(",")
    cfgs = configs(a.k, a.threads, a.modes)
    refs = {g: reference(source_of(g)) for g in graphs}
    results = {(g, label): [] for g in graphs for label, _ in cfgs}
    with tempfile.TemporaryDirectory() as cwd:   # not a source tree
        for rnd in range(a.repeat):
            for g in graphs:
                for label, extra in cfgs:
                    r = run_one(a.exe, source_of(g), a.error, extra, refs[g], cwd)
                    results[(g, label)].append(r)
                    print(f"round {rnd + 1}/{a.repeat} {g} {label}: compute {r['compute']:.3f} "
                          f"s, wall {r['wall']:.2f} s, CPU {r['cpu']:.2f} s, load {r['load']:.2f} s, "
                          f"{r['iterations']} it, L1 {r['l1']:.1e} (load avg "
                          f"{r['loadavg']:.1f})", flush=True)
    text = table(results, graphs, cfgs, a)
    print("\n" + text)
    if a.report:
        write_report(a.report, text, a.section)


if __name__ == "__main__":
    t0 = time.perf_counter()
    main()
    print(f"({time.perf_counter() - t0:.0f} s)")
