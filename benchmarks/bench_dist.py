"""First distributed benchmark: BSP vs ASAP on 4 ranks, with and without emulation.

Runs one ``mpiexec -n K`` job per graph that loads it once (:func:`asapgraph.engine.load`)
and runs BSP and ASAP with and without emulation on it, then prints one table (time to tol,
rounds, bytes, messages, spectral gap, wait time, peak memory of the largest rank, and the
TRUE L1 error of the final vector against a single-process 1e-13 reference) plus the
single-process peak memory for comparison, and the BSP/ASAP ratios.

Modes are compared at the same certified accuracy: ``bsp`` stops when the L1 change is
``<= tol`` (networkx semantics; its true error is up to ``alpha/(1-alpha)`` times larger),
``bsp-cert`` when the change is ``<= tol (1-alpha)/alpha`` (true error ``<= tol``), ``asap``
when its certified bound is ``<= tol``.

    python benchmarks/bench_dist.py [--graphs rmat:20 cnr-2000] [--np 4] [--tol 1e-6]
                                    [--json out.json]

Emulated network: 1 ms latency, 1 Gbit/s links, rank 1 three times slower.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SHARED = Path(os.environ.get("ASAPGRAPH_SHARED_DATASETS",
                             Path(__file__).resolve().parents[1].parent / "shared" / "datasets"))


def resolve(g):
    if ":" in g:
        return g
    p = SHARED / (g if "." in g else g + ".txt.gz")
    if not p.exists():
        sys.exit(f"dataset {p} not found")
    return str(p)


_WORKER = r"""
import json, sys
import numpy as np
from mpi4py import MPI
import asapgraph.engine as ad
from asapgraph.engine.emulation import Emulation
comm = MPI.COMM_WORLD
src, tol, part, out = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4]
alpha = 0.85
L = ad.load(src, comm, partition=part)  # once; both modes and both networks reuse it
ref = None
if comm.rank == 0:  # reference: single-process power iteration to 1e-13
    from asapgraph.graph.io import load_graph
    from asapgraph.programs.pagerank import pagerank
    rr = pagerank(load_graph(src), alpha=alpha, tol=1e-13, max_iter=100000)
    o = np.argsort(rr.ids, kind="stable")
    ref = (rr.ids[o], rr.ranks[o])
emu = Emulation(latency=1e-3, bandwidth=1.25e8, straggler={1: 3.0}, seed=0)
# BSP stops on its L1 change; ||x_k - x*|| <= alpha/(1-alpha) ||x_k - x_{k-1}||, so the
# certified run uses tol (1-alpha)/alpha.  ASAP stops on its certified bound <= tol.
runs = [("bsp", tol, "bsp"), ("bsp", tol * (1 - alpha) / alpha, "bsp-cert"), ("asap", tol, "asap")]
recs = []
for emulated in (False, True):
    for mode, t, label in runs:
        r = ad.pagerank(L, comm, mode=mode, tol=t, alpha=alpha, max_iter=1000,
                        emulation=emu if emulated else None)
        if comm.rank == 0:
            st = dict(r.stats)
            st["emulated"] = emulated
            st["label"] = label
            st["run_tol"] = t
            st["load_seconds"] = L.load_seconds
            assert np.array_equal(r.ids, ref[0])
            st["l1_error"] = float(np.abs(r.ranks - ref[1]).sum())
            recs.append(st)
if comm.rank == 0:
    json.dump(recs, open(out, "w"))
"""


def mpiexec():
    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    return here if os.access(here, os.X_OK) else "mpiexec"


def run_graph(src, np_, tol, partition, cwd):
    """One mpiexec job per graph: load once, then BSP/ASAP with and without emulation."""
    w = Path(cwd) / "worker.py"
    w.write_text(_WORKER)
    out = Path(cwd) / "out.json"
    r = subprocess.run([mpiexec(), "-n", str(np_), sys.executable, str(w), src, str(tol),
                        partition, str(out)], cwd=cwd, capture_output=True, text=True,
                       env=dict(os.environ))
    if r.returncode != 0:
        raise RuntimeError(f"{src}: rc {r.returncode}: {r.stderr[-2000:]}")
    return json.loads(out.read_text())


def single_peak(g, tol, cwd):
    code = ("import resource,sys,time;from asapgraph.graph.io import load_graph;"
            "from asapgraph.programs.pagerank import pagerank;t=time.perf_counter();"
            f"g=load_graph({g!r});l=time.perf_counter()-t;r=pagerank(g,tol={tol});"
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss/1024, l, r.iterations)")
    r = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True,
                       env=dict(os.environ))
    if r.returncode:
        return None
    mb, load, its = r.stdout.split()
    return float(mb), float(load), int(its)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--graphs", nargs="+", default=["rmat:20", "cnr-2000"])
    ap.add_argument("--np", type=int, default=4)
    ap.add_argument("--tol", type=float, default=1e-6)
    ap.add_argument("--partition", default="range")
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as cwd:
        for g in a.graphs:
            src = resolve(g)
            sp = single_peak(src, a.tol, cwd)
            for js in run_graph(src, a.np, a.tol, a.partition, cwd):
                rows.append({"graph": g, "emulated": js["emulated"], "mode": js["label"],
                             "run_tol": js["run_tol"], "l1_error": js["l1_error"],
                             "seconds": js["seconds"], "rounds": js["rounds"],
                             "messages": js["messages_sent"], "bytes": js["bytes_sent"],
                             "edges_visited": js["edges_visited"],
                             "spectral_gap": js.get("spectral_gap"),
                             "wait_seconds": js["wait_seconds"], "residual": js["residual"],
                             "load_seconds": js["load_seconds"],
                             "peak_mb_max_rank": max(q["peak_rss_mb"] for q in js["per_rank"]),
                             "single_peak_mb": sp[0] if sp else None,
                             "single_load_seconds": sp[1] if sp else None,
                             "trace": js["trace"]})
                r = rows[-1]
                print(f"{g:10s} emu={str(r['emulated']):5s} {r['mode']:8s} time {r['seconds']:8.3f} s  "
                      f"L1 err {r['l1_error']:.2e}  "
                      f"rounds {r['rounds']:6d}  msgs {r['messages']:8d}  "
                      f"bytes {r['bytes']:12,d}  edges {r['edges_visited']:12,d}  "
                      f"gap {r['spectral_gap'] or 0:.3f}  wait {r['wait_seconds']:7.3f} s  "
                      f"res {r['residual']:.2e}  peak/rank {r['peak_mb_max_rank']:.0f} MB "
                      f"(1 process: {r['single_peak_mb'] or 0:.0f} MB)", flush=True)
    print("\nratios BSP (certified, same true accuracy) / ASAP:")
    for g in a.graphs:
        for e in (False, True):
            b = next(r for r in rows if r["graph"] == g and r["emulated"] == e
                     and r["mode"] == "bsp-cert")
            s = next(r for r in rows if r["graph"] == g and r["emulated"] == e
                     and r["mode"] == "asap")
            print(f"{g:10s} emu={str(e):5s} time x{b['seconds'] / s['seconds']:.2f}  "
                  f"bytes x{b['bytes'] / max(s['bytes'], 1):.2f}  "
                  f"edges x{b['edges_visited'] / max(s['edges_visited'], 1):.2f}  "
                  f"L1 err BSP {b['l1_error']:.1e} ASAP {s['l1_error']:.1e}")
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
