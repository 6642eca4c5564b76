"""Driver: run :class:`~asapgraph.bench.scenarios.RunSpec` lists under ``mpiexec`` and score them.

Rationale
---------
* *Isolation with little start-up cost.*  Runs on the same graph and communicator size
  form one batch: one ``mpiexec -n K python -m asapgraph.bench.worker`` process group,
  which appends one JSON line per finished run.  A watchdog kills the group (by its
  process-group id) when no line arrives within ``run_timeout`` seconds; the hung run is
  recorded as failed and the rest of the batch is started again in a fresh job.  Ranks
  run with ``OMP_NUM_THREADS=1`` (K ranks already share the cores).
* *Time to error.*  For BSP the true L1 error after superstep ``k`` is the error of the
  ``k``-th power iterate (see :mod:`.reference`), so ``time_to_error[L]`` is the time of
  the first trace sample whose superstep has error ``<= L`` and ``bytes_to_error[L]`` is
  ``k`` supersteps' worth of bytes (BSP sends the same messages every superstep).  For
  ASAP every rank records the L1 error of its part of ``x / sum(x)`` whenever a
  termination wave completes (``error_reference`` of :func:`asapgraph.engine.api`);
  their sum is the true error at that event, dated by rank 0's record or, when a rank's
  part is the state of a sweep that ended later, by that sweep's end (a rank in a sweep
  reads its part after it).  ``time_to_error[L]`` is the first event
  from which it stays ``<= L`` (ranks record at slightly different moments, hence
  "stays") and ``bytes_to_error[L]`` the bytes sent by then.
  ``time_to_bound[L]`` is the same for the certified bound of the waves (what the
  engine's own termination sees; it is >= the true error).
* *Records* carry the spec, the engine's accounting (rounds, messages, bytes, wait
  time, spectral gap, peak RSS per rank), the final L1 error against the reference, the
  machine and the versions.
"""
from __future__ import annotations

import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time
from collections import OrderedDict
from pathlib import Path

import numpy as np

from asapgraph.bench.reference import ensure_reference, load_reference, resolve_graph
from asapgraph.bench.scenarios import LEVELS
from asapgraph.comm.watchdog import die_with

__all__ = ["run_specs", "machine_info", "score_record", "level_key"]


def level_key(level):
    return f"{level:.0e}"


def machine_info():
    """Machine and package versions (the MPI library's comes from the worker)."""
    import numpy

    import asapgraph

    info = {"platform": platform.platform(), "machine": platform.machine(),
            "processor": platform.processor(), "cpu_count": os.cpu_count(),
            "python": platform.python_version(), "numpy": numpy.__version__,
            "asapgraph": asapgraph.__version__}
    try:
        import scipy

        info["scipy"] = scipy.__version__
    except ImportError:
        pass
    from asapgraph.comm.mpi import mpi4py_version

    if mpi4py_version() is not None:
        info["mpi4py"] = mpi4py_version()
    try:
        with open("/proc/meminfo") as f:
            info["mem_total_kb"] = int(f.readline().split()[1])
    except (OSError, ValueError, IndexError):
        pass
    try:
        info["loadavg_start"] = os.getloadavg()
    except OSError:
        pass
    return info


def _mpiexec():
    from asapgraph.comm.launch import find_mpiexec

    return find_mpiexec(os.environ.get("ASAPGRAPH_MPIEXEC") or None)


def _worker_env():
    env = dict(os.environ)
    env["OMP_NUM_THREADS"] = "1"
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


def _run_batch(source, ref_path, K, items, run_timeout, log, families=None, hung=None,
               deadline=None):
    """Run ``items`` (list of (uid, kwargs)) in one or more jobs; returns {uid: record}.

    ``families[uid]`` = (narrow, wide) keys: after a timeout, the remaining runs of the same
    narrow family are skipped, and those of a wide family once it timed out twice
    (``hung`` counts timeouts per key across batches).  Past ``deadline`` (monotonic
    seconds) nothing new is started.
    """
    results = {}
    families = families or {}
    hung = {} if hung is None else hung
    pending = list(items)
    exe = _mpiexec()

    def prune():
        keep = []
        for uid, kw in pending:
            fam = families.get(uid, (None, None))
            why = None
            if deadline is not None and time.monotonic() > deadline:
                why = "skipped: the time budget of the benchmark was used up"
            elif fam[0] is not None and hung.get(fam[0], 0) >= 1:
                why = "skipped: a run of the same configuration timed out"
            elif fam[1] is not None and hung.get(fam[1], 0) >= 2:
                why = "skipped: two runs of this mode/network on this graph timed out"
            if why:
                results[uid] = {"id": uid, "ok": False, "skipped": True, "error": why}
                log(results[uid])
            else:
                keep.append((uid, kw))
        return keep

    pending = prune()
    while pending:
        with tempfile.TemporaryDirectory(prefix="asapbench-") as td:
            bpath = Path(td) / "batch.json"
            opath = Path(td) / "out.jsonl"
            bpath.write_text(json.dumps({"source": source, "reference": str(ref_path),
                                         "runs": [dict(kw, id=uid) for uid, kw in pending]}))
            opath.touch()
            cmd = [exe, "-n", str(K), sys.executable, "-m", "asapgraph.bench.worker",
                   str(bpath), str(opath)]
            errf = open(Path(td) / "stderr.txt", "w+b")
            # (die_with: mpiexec and its ranks end when this process dies, however it dies;
            # a bench killed from outside left its job running for ever -- one with a
            # straggler factor inf was found an hour later)
            proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=errf,
                                    env=_worker_env(), start_new_session=True, cwd=td,
                                    preexec_fn=die_with(os.getpid()))
            seen, info, last = 0, {}, time.monotonic()
            timed_out = False
            while True:
                rc = proc.poll()
                lines = opath.read_text().splitlines()
                complete = [ln for ln in lines if ln.endswith("}")]
                for ln in complete[seen:]:
                    rec = json.loads(ln)
                    if "batch_info" in rec:
                        info = rec
                        continue
                    rec["batch_info"] = info.get("batch_info", {})
                    rec["omp_num_threads"] = info.get("omp_num_threads")
                    rec["env"] = info.get("env", {})
                    results[rec["id"]] = rec
                    log(rec)
                    last = time.monotonic()
                seen = len(complete)
                if rc is not None:
                    break
                if time.monotonic() - last > run_timeout:
                    timed_out = True
                    try:
                        os.killpg(proc.pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                    proc.wait()
                    break
                time.sleep(0.1)
            errf.seek(0)
            err_text = errf.read().decode("utf-8", "replace")[-2000:]
            errf.close()
        rest = [(u, kw) for u, kw in pending if u not in results]
        if not rest:
            break
        # the first unfinished run failed (hung or crashed): record it, go on with the others
        uid, _ = rest[0]
        why = (f"timeout: no result within {run_timeout:g} s" if timed_out
               else f"job exited with status {proc.returncode}: {err_text.strip()[-500:]}")
        results[uid] = {"id": uid, "ok": False, "error": why, "timeout": timed_out}
        log(results[uid])
        if timed_out:
            for key in families.get(uid, ()):
                if key is not None:
                    hung[key] = hung.get(key, 0) + 1
        pending = rest[1:]
        pending = prune()
    return results


def score_record(rec, ref):
    """Add ``time_to_error``, ``bytes_to_error`` and ``error_trace`` to a finished record
    (and, for an ASAP run with per-rank traces, ``error_by_rank_at``: each level's errors
    of the ranks' parts at the wave that counted as reaching it, None if never reached)."""
    trace = rec.get("trace") or []
    tte, bte = {}, {}
    err_trace = []
    if rec.get("mode") == "bsp":
        traj = ref["traj"]
        its = max(int(rec.get("iterations", 0)), 1)
        per_step = rec.get("bytes_sent", 0) / its
        for k, (t, _) in enumerate(trace, start=1):
            e = float(traj[k - 1]) if k - 1 < len(traj) else float(traj[-1])
            err_trace.append([t, e, per_step * k])
        rec["error_kind"] = "true L1 error of the superstep's iterate (power-iteration replay)"
    elif rec.get("true_trace"):
        err_trace = [list(s) for s in rec["true_trace"]]
        rec["error_kind"] = ("true L1 error of x/sum(x) when termination waves complete "
                             "(sum of the ranks' parts)")
    else:
        for t, b in trace:
            err_trace.append([t, b, None])
        rec["error_kind"] = "certified L1 bound from the termination waves (>= true error)"
    # ASAP's wave bounds are sums over ranks taken at slightly different moments, so an
    # intermediate sample can dip and rise again; count a level as reached only from the
    # sample after which the bound stays below it (conservative; BSP's error is monotone
    # in practice and the same rule leaves it unchanged).
    suffix_max = []
    m = -np.inf
    for s in reversed(err_trace):
        m = max(m, s[1])
        suffix_max.append(m)
    suffix_max.reverse()
    for L in LEVELS:
        key = level_key(L)
        hit = next((s for s, mx in zip(err_trace, suffix_max) if mx <= L), None)
        tte[key] = None if hit is None else hit[0]
        if hit is not None and hit[2] is not None:
            bte[key] = hit[2]
        else:
            # the certified bound (records written before it was kept: ASAP's residual
            # was its bound then)
            ok = hit is not None and rec.get("error_bound", rec.get("residual", np.inf)) <= L
            bte[key] = rec.get("bytes_sent") if ok else None
    rec["time_to_error"] = tte
    rec["bytes_to_error"] = bte
    ranks = rec.pop("true_trace_ranks", None)
    if ranks and len(ranks) == len(err_trace):  # ASAP: which rank's part held the error
        at = {}
        for L in LEVELS:
            i = next((i for i, mx in enumerate(suffix_max) if mx <= L), None)
            at[level_key(L)] = None if i is None else ranks[i]
        rec["error_by_rank_at"] = at
    if rec.get("mode") != "bsp":  # also: when the certified bound gets (and stays) there
        bmax, tb = -np.inf, {}
        for t, b in reversed(trace):
            bmax = max(bmax, b)
            for L in LEVELS:
                if bmax <= L:
                    tb[level_key(L)] = t
        rec["time_to_bound"] = {level_key(L): tb.get(level_key(L)) for L in LEVELS}
    rec.pop("true_trace", None)
    rec["error_trace"] = _thin(err_trace, 400)
    rec.pop("trace", None)
    return rec


def _thin(samples, cap):
    if len(samples) <= cap:
        return samples
    idx = np.unique(np.linspace(0, len(samples) - 1, cap).astype(int))
    return [samples[i] for i in idx]


def _size_hint(source):
    """Rough edge count of a source (for ordering only)."""
    from asapgraph.graph.generators import is_spec, parse_spec

    if is_spec(source) and not os.path.exists(source):
        return parse_spec(source)[1]["m"]
    try:
        return os.path.getsize(source) / 2.5
    except OSError:
        return 0


def run_specs(specs, results_dir, run_timeout=180.0, progress=None, budget=None):
    """Run every spec; returns the list of records (same order as ``specs``).

    Parameters
    ----------
    specs : list of RunSpec
    results_dir : path
        Reference cache (``ref/``) lives here.
    run_timeout : float
        Seconds without a finished run after which a job is killed.
    progress : callable(str) or None
        Receives one line per event (start of a batch, each finished run).
    budget : float or None
        Seconds; runs not started when it is used up are recorded as skipped.
    """
    say = progress or (lambda s: None)
    results_dir = Path(results_dir).resolve()  # the workers run in a temporary directory
    machine = machine_info()
    groups = OrderedDict()
    resolved = {}
    for i, s in enumerate(specs):
        if s.graph not in resolved:
            resolved[s.graph] = resolve_graph(s.graph)
        src = resolved[s.graph][0]
        groups.setdefault((src, s.ranks), []).append(i)
    # cheap graphs first, so that a budget running out costs the most expensive runs only
    groups = OrderedDict(sorted(groups.items(), key=lambda kv: (_size_hint(kv[0][0]), kv[0][1])))
    refs = {}
    records = [None] * len(specs)
    done = [0]
    total = len(specs)
    t_start = time.perf_counter()
    deadline = None if budget is None else time.monotonic() + float(budget)
    hung = {}
    for (src, K), idxs in groups.items():
        if src not in refs:
            t = time.perf_counter()
            path = ensure_reference(src, results_dir, progress=say)
            refs[src] = (path, load_reference(path))
            if time.perf_counter() - t > 0.5:
                say(f"reference ready ({time.perf_counter() - t:.1f} s)")
        path, ref = refs[src]
        g = specs[idxs[0]].graph
        if src != g and not os.path.exists(src):
            g = f"{g} ({src})"  # the seed a generator spec was given (resolve_graph)
        say(f"{g}: {len(idxs)} runs on {K} ranks")

        def log(rec, _specs=specs):
            done[0] += 1
            i = int(rec["id"])
            s = _specs[i]
            el = time.perf_counter() - t_start
            if rec.get("ok"):
                fe = rec.get("final_error")
                say(f"[{done[0]}/{total}] {s.label()}: {rec['seconds']:.2f} s, "
                    f"{rec['bytes_sent'] / 1e6:.1f} MB, L1 err "
                    f"{'n/a' if fe is None else format(fe, '.1e')} ({el:.0f} s elapsed)")
            else:
                say(f"[{done[0]}/{total}] {s.label()}: "
                    f"{'' if rec.get('skipped') else 'FAILED: '}{rec.get('error')}")

        items = [(str(i), specs[i].engine_kwargs()) for i in idxs]
        fams = {}
        for i in idxs:
            s = specs[i]
            wide = (s.graph, s.ranks, s.mode, s.net_label())
            fams[str(i)] = (wide + (s.fanout, s.window, s.approx, s.schedule), wide)
        res = _run_batch(src, path, K, items, run_timeout, log, fams, hung, deadline)
        for i in idxs:
            rec = res.get(str(i), {"id": str(i), "ok": False, "error": "not run"})
            spec = specs[i]
            out = dict(spec.as_dict())
            out["source"] = src
            out["network"] = spec.net_label()
            out.update({k: v for k, v in rec.items() if k != "id"})
            out["machine"] = machine
            out["reference_n"] = ref.get("n")
            if out.get("ok"):
                score_record(out, ref)
                tol = spec.tol if spec.mode == "asap" else spec.tol * 0.85 / 0.15
                fe = out.get("final_error")
                out["error_bound_asked"] = tol
                out["within_tolerance"] = bool(fe is not None and fe <= tol * (1 + 1e-9) + 1e-12)
            records[i] = out
    return records
