"""Issue 14 item 1: ASAP's priority schedule against its uniform sweep and against BSP.

Usage::

    python benchmarks/bench_priority.py [--graphs rmat:20,cnr-2000] [--np 2,4] [--repeat 3]
        [--rho 0.5,0.8] [--tol 1e-10] [--results-dir /tmp/prio-bench] [--timeout 1200]

One MPI job per (graph, K) loads the graph once (the benchmark worker's loader cache) and
runs, interleaved per repetition (so load from other processes hits every variant alike):
BSP, ASAP ``--schedule sweep`` and ASAP ``--schedule priority`` at each ``rho``
(``ASAPGRAPH_ASAP_RHO``, set per run), each unemulated and on the emulated cluster of the
issue (1 ms, 1 Gbit/s, rank 1 three times slower), all to ``tol`` (a certified L1 bound).
Figures (medians): seconds of the run to ``tol``, seconds to true L1 error 1e-6 against a
single-process reference solved to 1e-13 (ASAP: termination-wave samples of the true
error; BSP: the power-iteration replay of :func:`asapgraph.bench.runner.score_record`),
edges visited over all ranks (the run to ``tol``), bytes sent, and every ratio to BSP.
Final answers are checked against the reference (L1 <= tol x 10 is printed as ok).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CLUSTER = {"latency": 1e-3, "bandwidth": 125e6, "straggler": "1:3"}


def _worker(batch_path, out_path):
    """Under mpiexec: the benchmark worker's loop, with ``rho`` set per run."""
    import asapgraph.engine as ad
    from asapgraph.bench import worker as W
    from asapgraph.comm.mpi import world

    comm = world()
    me = comm.Get_rank()
    W._memoize_loader({})
    with open(batch_path) as f:
        batch = json.load(f)
    ref = W._load_reference(batch["reference"])
    out = open(out_path, "a") if me == 0 else None
    for cfg in batch["runs"]:
        kw = {k: v for k, v in cfg.items() if k not in ("id", "rho", "variant", "net")}
        if cfg.get("rho") is not None:
            os.environ["ASAPGRAPH_ASAP_RHO"] = repr(cfg["rho"])
        if kw.get("mode") == "asap":
            kw["error_reference"] = ref
        comm.Barrier()
        t0 = time.perf_counter()
        res = ad.pagerank(batch["source"], comm, **kw)
        wall = time.perf_counter() - t0
        if me == 0:
            rec = W._record(cfg, res, ref, wall)
            rec.update(mode=cfg["mode"], variant=cfg["variant"], net=cfg["net"],
                       schedule=res.stats.get("schedule"))
            out.write(json.dumps(rec) + "\n")
            out.flush()
    if out is not None:
        out.close()
    return 0


def _variants(rhos):
    v = [("bsp", {"mode": "bsp"}, None), ("asap sweep", {"mode": "asap", "schedule": "sweep"},
                                           None)]
    for r in rhos:
        v.append((f"asap priority {r:g}", {"mode": "asap", "schedule": "priority"}, r))
    return v


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--graphs", default="rmat:20,cnr-2000")
    ap.add_argument("--np", default="2,4")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--rho", default="0.5,0.8")
    ap.add_argument("--tol", type=float, default=1e-10)
    ap.add_argument("--nets", default="none,cluster")
    ap.add_argument("--results-dir", default=os.path.join(tempfile.gettempdir(), "prio-bench"))
    ap.add_argument("--timeout", type=float, default=1800.0)
    ap.add_argument("--json-out", default=None)
    a = ap.parse_args()
    from asapgraph.bench.reference import ensure_reference, load_reference, resolve_graph
    from asapgraph.bench.runner import _mpiexec, _worker_env, score_record

    rhos = [float(x) for x in a.rho.split(",") if x]
    nets = a.nets.split(",")
    os.makedirs(a.results_dir, exist_ok=True)
    print(f"# load average at start: {os.getloadavg()}", flush=True)
    allrecs = []
    for gname in a.graphs.split(","):
        source, label = resolve_graph(gname)
        ref_path = str(ensure_reference(source, a.results_dir, progress=print))
        ref = load_reference(ref_path)
        for K in (int(x) for x in a.np.split(",")):
            runs = []
            for rep in range(a.repeat):
                for net in nets:
                    for name, kw, rho in _variants(rhos):
                        cfg = dict(kw, id=f"{label}-{K}-{net}-{name}-{rep}", tol=a.tol,
                                   max_iter=10000, seed=rep, variant=name, net=net, rho=rho,
                                   emulation=dict(CLUSTER, seed=rep) if net == "cluster" else None)
                        runs.append(cfg)
            with tempfile.TemporaryDirectory() as td:
                # the records outlive a job that times out (rank 0 appends one per run)
                bp = os.path.join(td, "batch.json")
                op = os.path.join(a.results_dir, f"runs-{label.replace(':', '_')}-{K}.jsonl")
                if os.path.exists(op):
                    os.remove(op)
                with open(bp, "w") as f:
                    json.dump({"source": source, "reference": ref_path, "runs": runs}, f)
                t0 = time.perf_counter()
                subprocess.run([_mpiexec(), "-n", str(K), sys.executable, os.path.abspath(__file__),
                                "--worker", bp, op], env=_worker_env(), timeout=a.timeout,
                               check=True, cwd=td)
                with open(op) as f:
                    recs = [json.loads(line) for line in f if line.strip()]
            print(f"# {label} K={K}: {len(recs)} runs in {time.perf_counter() - t0:.0f} s, "
                  f"load {os.getloadavg()[0]:.1f}", flush=True)
            for r in recs:
                score_record(r, ref)
                r.update(graph=label, ranks=K)
            allrecs += recs
            _table(recs, label, K, nets, rhos, a.tol)
    if a.json_out:
        with open(a.json_out, "w") as f:
            json.dump(allrecs, f)
    return 0


def _med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def _table(recs, label, K, nets, rhos, tol):
    print(f"\n| graph | K | network | variant | s to tol {tol:g} | s to L1 1e-6 | edges visited "
          "| MB sent | final L1 err (max) | edges / BSP | s to 1e-6: BSP / this | "
          "s to tol: BSP / this |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for net in nets:
        rows = {}
        for r in recs:
            if r["net"] != net:
                continue
            rows.setdefault(r["variant"], []).append(r)
        bsp = rows.get("bsp", [])
        b_s = _med([r["seconds"] for r in bsp])
        b_6 = _med([r["time_to_error"].get("1e-06") for r in bsp])
        b_e = _med([r["edges_visited"] for r in bsp])
        for name, rs in rows.items():
            s = _med([r["seconds"] for r in rs])
            t6 = _med([r["time_to_error"].get("1e-06") for r in rs])
            e = _med([r["edges_visited"] for r in rs])
            mb = _med([r["bytes_sent"] / 1e6 for r in rs])
            fe = max((r.get("final_error") or 0.0) for r in rs)
            netl = "none" if net == "none" else "1ms, 1Gb/s, straggler 1:3"
            print(f"| {label} | {K} | {netl} | {name} | {s:.3g} | "
                  f"{'–' if t6 is None else f'{t6:.3g}'} | {e:.3g} | {mb:.3g} | {fe:.1e} | "
                  f"{e / b_e:.2f} | {'–' if not (t6 and b_6) else f'{b_6 / t6:.2f}'} | "
                  f"{b_s / s:.2f} |", flush=True)


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--worker":
        sys.exit(_worker(sys.argv[2], sys.argv[3]))
    sys.exit(main())
