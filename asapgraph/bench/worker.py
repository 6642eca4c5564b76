"""One batch of benchmark runs under ``mpiexec -n K`` (started by :mod:`asapgraph.bench.runner`).

Usage (internal)::

    mpiexec -n K python -m asapgraph.bench.worker BATCH.json OUT.jsonl

``BATCH.json`` holds ``{"source": ..., "reference": REF.npz or null, "runs": [cfg, ...]}``,
every run on the same graph and communicator size.  Each ``cfg`` has the keyword
arguments of :func:`asapgraph.engine.api` plus an ``"id"``.  After every run, rank 0
appends one JSON line to ``OUT.jsonl`` (flushed at once, so the driver sees progress and
keeps the finished runs when a later run hangs and is killed): the engine's accounting,
the ``(seconds, bound)`` trace, and the L1 error of the final ranks against the reference.
"""
from __future__ import annotations

import json
import os
import sys
import time

import numpy as np

from asapgraph.options import env_knobs

__all__ = ["main"]

#: per-rank accounting fields kept in the record (the rest is dropped to keep files small)
PER_RANK_KEYS = ("rank", "messages_sent", "bytes_sent", "acks_sent", "rounds", "compute_seconds",
                 "cpu_seconds",
                 "comm_seconds", "wait_seconds", "edges_visited", "emulated_delay_seconds",
                 "straggler_sleep_seconds", "peak_rss_mb", "vertices", "edges",
                 "boundary_vertices", "remote_slots", "peers", "sweeps", "virtual_seconds",
                 "virtual_compute_seconds", "virtual_windows", "compute_calibration",
                 "pauses", "pause_seconds", "sweep_patience", "skip_gamma",
                 "idle_prio", "input_waits", "rtt_min_seconds", "stall_sweeps",
                 "stall_guard_wave", "layout_seconds", "sor_omega", "sor_off_wave")

#: totals copied from the engine's stats
TOTAL_KEYS = ("seconds", "rounds", "messages_sent", "data_messages_sent", "bytes_sent",
              "wait_seconds", "compute_seconds", "comm_seconds", "edges_visited", "n", "m",
              "load_seconds", "spectral_gap", "spectral_gap_mean", "schedule_period",
              "peak_rss_mb_max", "partition", "clock", "virtual_seconds", "wall_seconds",
              "rebalance", "schedule", "emulation")


def _versions():
    from asapgraph._version import __version__
    from asapgraph.comm.mpi import versions

    return {**versions(), "asapgraph": __version__}


def _load_reference(path):
    if not path:
        return None
    with np.load(path) as z:
        return z["ids"].copy(), z["ranks"].copy()


def _record(cfg, res, ref, wall):
    st = res.stats
    rec = {"id": cfg["id"], "ok": True, "iterations": int(res.iterations),
           "converged": bool(res.converged), "residual": float(res.residual),
           "error_bound": float(res.error_bound), "wall": wall}
    for k in TOTAL_KEYS:
        if k in st:
            v = st[k]
            rec[k] = v.item() if isinstance(v, np.generic) else v
    for k in ("fanout", "window", "approx"):  # what the ASAP engine actually used
        if k in st:
            rec["engine_" + k] = st[k]
    rec["trace"] = [[float(a), float(b)] for a, b in st.get("trace", [])]
    rec["per_rank"] = [{k: r[k] for k in PER_RANK_KEYS if k in r} for r in st["per_rank"]]
    rec["peak_rss_mb"] = [float(r.get("peak_rss_mb", 0.0)) for r in st["per_rank"]]
    if st.get("clock") == "virtual":   # (wait_seconds is the host's)
        from asapgraph.engine.stats import virtual_wait_seconds

        rec["virtual_wait_seconds"] = virtual_wait_seconds(st["per_rank"])
    rec["emulated_delay_seconds"] = float(sum(r.get("emulated_delay_seconds", 0.0)
                                             for r in st["per_rank"]))
    rec["straggler_sleep_seconds"] = float(sum(r.get("straggler_sleep_seconds", 0.0)
                                               for r in st["per_rank"]))
    if ref is not None:
        ids, x = ref
        if len(ids) == len(res.ids) and np.array_equal(ids, res.ids):
            rec["final_error"] = float(np.abs(res.ranks - x).sum())
            # ASAP: true error of x / sum(x) whenever a termination wave completed
            rec["true_trace"] = [[float(t), float(e), int(b)] for t, e, b in
                                 st.get("error_trace") or []]
            if st.get("error_trace_ranks"):  # the same, rank by rank
                rec["true_trace_ranks"] = st["error_trace_ranks"]
        else:
            rec["final_error"] = None
            rec["error"] = (f"vertex ids differ from the reference ({len(res.ids)} vs "
                            f"{len(ids)} vertices)")
    return rec


def _memoize_loader(stats):
    """Load each graph once per job: every run of a batch uses the same partitioned graph.

    :func:`asapgraph.engine.api` loads its input on every call (``load_partitioned``,
    imported at call time); on a 4-rank rmat:20 that costs ~20 s, more than a run.  The
    engines only read the :class:`LocalGraph`, so the worker wraps the loader with a
    one-entry cache keyed by its arguments.  ``stats["load_seconds"]`` keeps the real
    (first) load time.  Workaround until the engine offers a load-once API.
    """
    from asapgraph.partition import loader

    real = loader.load_partitioned
    cache = {}

    def load_partitioned(*args, **kw):
        # (source, comm, partition, weighted, undirected, weight_col, chunk_bytes, seed,
        # progress, layout): the seed only seeds generator specs without one, and the
        # driver always passes specs with an explicit seed (see resolve_graph), so it is
        # left out of the key.  One load serves both modes: the push layout (a fresh BSP
        # load would ship in-rows, which ASAP cannot sweep; BSP builds its pull layout
        # from the push rows once and caches it on the graph)
        if len(args) > 9:
            args = args[:9] + ("push",) + args[10:]
        else:
            kw["layout"] = "push"
        kw = {k: v for k, v in kw.items() if k != "seed"}
        key = repr((args[:1], args[2:7], sorted(kw.items())))
        if key not in cache:
            cache.clear()
            t = time.perf_counter()
            cache[key] = real(*args, **kw)
            stats["load_seconds"] = time.perf_counter() - t
        return cache[key]

    loader.load_partitioned = load_partitioned


def main(argv=None):
    """Run the batch named on the command line; returns 0 (exceptions abort the job)."""
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        sys.stderr.write("usage: python -m asapgraph.bench.worker BATCH.json OUT.jsonl\n")
        return 2
    import asapgraph.engine as ad
    from asapgraph.bench import hostcount
    from asapgraph.comm.mpi import world

    comm = world()
    me = comm.Get_rank()
    load_stats = {}
    if os.environ.get("ASAPGRAPH_BENCH_RELOAD", "") in ("", "0"):
        _memoize_loader(load_stats)
    with open(argv[0]) as f:
        batch = json.load(f)
    # every rank loads the reference: ASAP runs track their true error against it
    ref = _load_reference(batch.get("reference"))
    out = open(argv[1], "a") if me == 0 else None
    # ranks idle this long before each run: under a real-time policy (benchmarks/
    # bench_clocks_k2_paired.py with K2_RT=1) the kernel throttles real-time tasks that ran
    # for 0.95 s of a 1 s period (sched_rt_runtime_us), ~50 ms at once; a pause of 0.4 s
    # before every run keeps a run under 0.65 s out of it
    gap = float(os.environ.get("ASAPGRAPH_BENCH_GAP", "0") or 0)
    if me == 0:
        out.write(json.dumps({"batch_info": _versions(), "ranks": comm.Get_size(),
                              "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
                              "env": env_knobs()}) + "\n")
        out.flush()
    try:
        for cfg in batch["runs"]:
            kw = {k: v for k, v in cfg.items() if k != "id"}
            # the solve is timed, its layout prepared before the clocks start (as the
            # load): one load serves every run of the batch, in the push layout, so a run
            # building its layout in the clock would charge the first run only, and BSP
            # a build from the out-rows the command line's load avoids
            kw["layout_before_clock"] = True
            if kw.get("mode") == "asap" and ref is not None:
                kw["error_reference"] = ref
            if gap > 0:  # a pause between runs (ASAPGRAPH_BENCH_GAP, seconds; below)
                time.sleep(gap)
            comm.Barrier()
            h0 = hostcount.snapshot()
            t0 = time.perf_counter()
            try:
                res = ad.pagerank(batch["source"], comm, **kw)
            except ad.RankFailure as e:  # agreed on every rank: record it and go on
                if me == 0:
                    out.write(json.dumps({"id": cfg["id"], "ok": False,
                                          "error": str(getattr(e, "message", e))}) + "\n")
                    out.flush()
                continue
            wall = time.perf_counter() - t0
            # what the host took from each rank meanwhile (run-queue waits, faults, steal)
            host = comm.gather(hostcount.delta(h0, hostcount.snapshot()), root=0)
            if me == 0:
                rec = _record(cfg, res, ref, wall)
                rec["host"] = host
                rec["graph_load_seconds"] = load_stats.get("load_seconds", rec.get("load_seconds"))
                out.write(json.dumps(rec) + "\n")
                out.flush()
            del res
    finally:
        if out is not None:
            out.close()
    return 0


if __name__ == "__main__":
    try:
        code = main()
    except BaseException as exc:  # noqa: BLE001 - one rank failed alone: end the whole job
        import traceback

        traceback.print_exc()
        try:
            from asapgraph.comm.mpi import abort_world

            abort_world(1)
        finally:
            raise SystemExit(1) from exc
    sys.exit(code)
