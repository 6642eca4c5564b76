"""CLI glue for distributed runs: :func:`run_distributed` (called by :mod:`asapgraph.cli`).

Behaviour
---------
* not under a launcher and ``--np K > 1``: start K ranks with :func:`.launch.launch`;
* under ``mpiexec`` (any world size): every rank runs :func:`asapgraph.engine.api` on
  ``COMM_WORLD``; rank 0 alone writes ``-o``/``--json``/``--top`` with the same format as
  the single-process run (:func:`asapgraph.cli.emit_results`), plus the distributed
  accounting in ``--json``.
* errors: bad input seen by any rank (including a failed write of ``-o`` on rank 0) is
  agreed collectively and printed once by rank 0 (``FILE:LINE: message``, exit 2) -- no
  rank is left waiting.  Any other exception on
  one rank prints ``error on rank r: ...`` once (from that rank) and aborts the whole job
  (``MPI_Abort``), so nothing ever hangs.
"""
from __future__ import annotations

import os
import sys
import time

__all__ = ["run_distributed", "emulation_from_args", "emit_agreed", "check_output_agreed",
           "whole_file_agreed"]


def emulation_from_args(args):
    from asapgraph.engine.emulation import Emulation, parse_straggler

    strag = {}
    for s in getattr(args, "straggler", None) or []:
        strag.update(parse_straggler(s))
    lo, hi, every = getattr(args, "pauses", None) or (0.0, 0.0, 0.0)
    return Emulation(latency=float(getattr(args, "latency", 0.0) or 0.0),
                     bandwidth=float(getattr(args, "bandwidth", 0.0) or 0.0),
                     jitter=float(getattr(args, "jitter", 0.0) or 0.0),
                     straggler=strag, seed=int(getattr(args, "emulate_seed", 0) or 0),
                     clock=getattr(args, "clock", None) or "wall",
                     pause_every=every, pause_seconds=lo, pause_max=hi,
                     compute=getattr(args, "compute", None) or "cpu")


def labelled_input(args, comm, weighted):
    """``(source, names)``: with ``--labels``, rank 0 reads the named edge list and
    scatters it (:func:`asapgraph.partition.reading.scatter_labelled`); ``names`` (rank 0
    only) are the names of the dense ids, for the outputs.  Otherwise ``(args.input,
    None)``.  Collective."""
    if not getattr(args, "labels", False):
        return args.input, None
    from asapgraph.partition.reading import scatter_labelled

    return scatter_labelled(args.input, comm, weighted, getattr(args, "weight_col", None),
                            bool(getattr(args, "header", False)),
                            bool(getattr(args, "undirected", False)))


def named(names, ids):
    """The output's vertex column: the names of ``ids`` (``--labels``), else the ids."""
    return ids if names is None else names[ids]


def _err(msg):
    sys.stderr.write(msg.rstrip("\n") + "\n")
    sys.stderr.flush()


def run_distributed(args):
    """Run ``asapgraph pagerank`` on several ranks; returns the exit status."""
    from asapgraph.cli.common import mpi_world_size_from_env

    if mpi_world_size_from_env() is None and getattr(args, "np", 1) > 1:
        from asapgraph.cli.common import check_output_path
        from asapgraph.comm.launch import launch

        check_output_path(args.output, args)  # as on one process: one line, before any rank starts
        return launch(args)
    return run_on_world(_run, args)


#: how long a failed rank waits for the others to fail too before it aborts the job
#: (:func:`run_on_world`); ranks that fail in the same step arrive within milliseconds
FAILURE_AGREE_SECONDS = 2.0


def run_on_world(fn, args):
    """Run ``fn(args, COMM_WORLD)`` on every rank; one line and a clean exit on failure.

    An error agreed by all ranks (:class:`RankFailure`) is printed once by rank 0 (exit 2
    for bad input, else 1).  An exception raised outside an agreement (e.g. in a
    callback the engine calls on every rank without a collective) is agreed here when
    every rank fails within :data:`FAILURE_AGREE_SECONDS` (a non-blocking barrier on a
    channel of its own): rank 0's line is printed once, exit cleanly as above.  Otherwise
    the failed rank prints its line and aborts the whole job, so the other ranks never
    hang.  ``ASAPGRAPH_DEBUG=1``: the failed rank's traceback is printed first.
    """
    from asapgraph.comm.mpi import RankFailure, debug_traceback, mpi

    MPI = mpi()
    comm = MPI.COMM_WORLD
    failures = comm.Dup()  # collective, before any work: the channel of _agree_failure
    try:
        code = fn(args, comm)
    except RankFailure as e:  # agreed on every rank: print once, exit cleanly
        if e.stdout_closed:  # rank 0's reader went away ('| head'): 141, quietly
            from asapgraph.cli.common import EXIT_PIPE, quiet_stdout

            quiet_stdout()
            code = EXIT_PIPE
        else:
            if comm.Get_rank() == 0:
                _err(e.message)
            code = 2 if e.input_error else 1
    except KeyboardInterrupt:  # Ctrl-C (mpiexec passes it to every rank): one line
        from asapgraph.cli.common import exit_interrupted, says_interrupted

        exit_interrupted(comm, say=says_interrupted() and comm.Get_rank() == 0)
    except BaseException as e:  # noqa: BLE001 - agreed if every rank failed, else abort
        msg, input_error = _failure_line(e, comm.Get_rank())
        agreed = _agree_failure(failures, msg, input_error)
        if agreed is None:  # this rank alone (so far): abort the job
            debug_traceback(e.__cause__ if getattr(e, "one_line", False) and e.__cause__
                            else e)
            _err(msg)
            code = 2 if input_error else 1
            time.sleep(0.2)  # let mpiexec forward the line before the abort tears stdio down
            comm.Abort(code)
            os._exit(code)  # MPICH's MPI_Abort may return: a second Abort line otherwise
        if comm.Get_rank() == 0:
            debug_traceback(e.__cause__ if getattr(e, "one_line", False) and e.__cause__
                            else e)
            _err(agreed[0])
        code = 2 if agreed[1] else 1
    failures.Free()
    # finalize here so that asapgraph.cli.main does not call MPI_Abort on a clean error
    comm.Barrier()
    MPI.Finalize()
    return code


def _failure_line(exc, rank):
    """``(line, bad input?)`` of an exception on this rank."""
    from asapgraph.errors import InputError

    if isinstance(exc, InputError):
        return str(exc), True
    if getattr(exc, "one_line", False):  # already worded (asapgraph run: X raised ...)
        return str(exc), False
    if isinstance(exc, MemoryError):  # as one process words it (rmat:40: 'error on rank 0:
        return "asapgraph: out of memory", False  # MemoryError: Unable to allocate 64.0 TiB')
    return f"error on rank {rank}: {type(exc).__name__}: {exc}", False


def _agree_failure(comm, line, input_error, wait=None):
    """Every rank failed (all reached here within ``wait`` seconds): ``(rank 0's line,
    its bad-input flag)`` on every rank.  None when some rank did not fail in time (it is
    busy or waiting on this one): then the caller aborts."""
    req = comm.Ibarrier()
    deadline = time.monotonic() + (FAILURE_AGREE_SECONDS if wait is None else wait)
    while not req.Test():
        if time.monotonic() > deadline:
            return None
        time.sleep(0.002)
    return comm.bcast((line, input_error), root=0)


def whole_file_agreed(comm, args):
    """A Matrix Market or Parquet input on K ranks (collective): rank 0 reads it and makes
    one process's checks (:func:`asapgraph.cli.common.whole_file_checked`: a bad file, or
    a refused option, gets the same line as on one process), then scatters it
    (:func:`asapgraph.partition.reading.scatter_graph`, with the file's vertex ids and
    ``--undirected`` applied).  Returns ``(this rank's local DenseEdges, the vertex names
    on rank 0 when the file names them by text, else None)``, or None when the input is
    neither format."""
    from asapgraph.cli.common import whole_file_checked
    from asapgraph.comm.mpi import agree
    from asapgraph.graph.io._text import display_name
    from asapgraph.partition.reading import scatter_graph

    err, g = None, None
    if comm.Get_rank() == 0:
        try:
            g = whole_file_checked(args)
        except Exception as e:  # noqa: BLE001 - agreed: one line from rank 0
            err = e
    agree(comm, err)
    if not comm.bcast(g is not None if comm.Get_rank() == 0 else None, root=0):
        return None
    names = g.labels if g is not None else None
    return scatter_graph(g, comm, display_name(args.input)), names


def _run(args, comm):
    from asapgraph.cli.emit import emit_results
    from asapgraph.engine.api import pagerank
    from asapgraph.progress import Progress
    from asapgraph.comm.mpi import agree

    me = comm.Get_rank()
    if me == 0:  # --personalization -: read whole before the graph (mpiexec forwards it)
        from asapgraph.options import prefetch_stdin_values

        prefetch_stdin_values(args)
    check_output_agreed(comm, args)
    whole = whole_file_agreed(comm, args)
    weighted = bool(args.weighted or getattr(args, "weight_col", None) is not None)
    emu = emulation_from_args(args)
    if me == 0 and not args.quiet:
        _err(f"asapgraph: distributed pagerank on {comm.Get_size()} ranks, mode {args.mode}, "
             f"partition {args.partition}" + (" (network emulation on)" if emu.active else ""))
    t0 = time.perf_counter()
    source, names = whole if whole is not None else labelled_input(args, comm, weighted)
    pers, dang = args.personalization, getattr(args, "dangling", None)
    # a Matrix Market or Parquet file whose ids are names (a Parquet text or uint64 id
    # column): the files name vertices as on one process (they were read as integer ids:
    # 'node id 'a' is not an integer', 'node id 18446744073709551615 does not fit in int64')
    by_name = whole is not None and comm.bcast(names is not None if me == 0 else None, root=0)
    if getattr(args, "labels", False) or by_name:  # the files name vertices (read on rank 0)
        from asapgraph.options import LabelledValues

        pers = None if pers is None else LabelledValues(pers, names)
        dang = None if dang is None else LabelledValues(dang, names)
    res = pagerank(source, comm, mode=args.mode, partition=args.partition, alpha=args.alpha,
                   tol=args.tol, max_iter=args.max_iter, personalization=pers,
                   dangling=dang, weighted=weighted,
                   undirected=args.undirected and whole is None,  # (applied on rank 0)
                   fanout=args.fanout, window=args.window,
                   approx=args.approx, emulation=emu, seed=args.seed,
                   weight_col=getattr(args, "weight_col", None),
                   asap_form=getattr(args, "asap_form", "jacobi"),
                   schedule=getattr(args, "schedule", None),
                   rebalance=getattr(args, "rebalance", "off"),
                   threads=getattr(args, "threads", None) or 1,
                   # (read on rank 0 when whole or --labels: skipped there)
                   header=bool(getattr(args, "header", False)) and isinstance(source, str),
                   progress=Progress(quiet=args.quiet) if me == 0 else None)
    total = time.perf_counter() - t0
    if me != 0:
        if not (res.converged or args.allow_unconverged):
            return 3
        agree(comm, None)  # rank 0 writes the results
        return 0
    st = res.stats
    if not res.converged and not args.allow_unconverged:
        from asapgraph.options import asap_work_words

        what = (f"{res.iterations} iterations" if args.mode == "bsp" else
                asap_work_words(args.max_iter, res.iterations))
        _err(f"asapgraph: PageRank did not converge: error bound {res.error_bound:.3e} > tol "
             f"{args.tol:g} after {what} (raise --max-iter or --tol, or pass "
             "--allow-unconverged to write the results anyway)")
        return 3
    if not args.quiet:
        _err(f"asapgraph: {'converged' if res.converged else 'NOT converged'} after "
             f"{res.iterations} {'supersteps' if args.mode == 'bsp' else 'rounds'}, residual "
             f"{res.residual:.3e}, {st['seconds']:.3f} s, {st['messages_sent']:,} messages, "
             f"{st['bytes_sent']:,} bytes")
    from asapgraph.cli.common import input_summary

    summary = {
        "command": "pagerank", "input": args.input, "vertices": st["n"], "edges": st["m"],
        "weighted": weighted, "alpha": args.alpha, "tol": args.tol, "max_iter": args.max_iter,
        "iterations": res.iterations, "converged": res.converged, "residual": res.residual,
        "error_bound": res.error_bound, "load_seconds": st["load_seconds"],
        "compute_seconds": st["seconds"],
        "total_seconds": total, "mode": args.mode, "engine": "distributed",
        "ranks": st["ranks"], "threads": st["threads"], "partition": st["partition"],
        "rounds": st["rounds"],
        "messages_sent": st["messages_sent"], "data_messages_sent": st["data_messages_sent"],
        "acks_sent": st["acks_sent"], "bytes_sent": st["bytes_sent"],
        "wait_seconds": st["wait_seconds"], "peak_rss_mb_max_rank": st["peak_rss_mb_max"],
        "edges_scanned": st["edges_visited"], **input_summary(args, weighted),
    }
    if args.mode == "asap":
        for k in ("spectral_gap", "spectral_gap_mean", "fanout", "fanout_asked", "window",
                  "approx", "seed", "work_budget_edges", "work_factor"):
            summary[k] = st.get(k)
        summary["asap_form"] = st.get("form")
        summary["schedule"] = st.get("schedule")
    summary["rebalance"] = st.get("rebalance") or {"mode": "off"}
    if st.get("emulation"):
        summary["emulation"] = st["emulation"]
    summary["clock"] = st.get("clock", "wall")
    if st.get("clock") == "virtual":  # compute_seconds is virtual: the host's beside it
        from asapgraph.engine.stats import virtual_wait_seconds

        summary["virtual_seconds"] = st["virtual_seconds"]
        summary["wall_seconds"] = st["wall_seconds"]
        summary["virtual_wait_seconds"] = virtual_wait_seconds(st["per_rank"])
    summary["per_rank"] = st["per_rank"]
    emit_agreed(comm, emit_results, args, named(names, res.ids), res.ranks, "rank", summary,
                score_name="score")
    return 0


def check_output_agreed(comm, args):
    """Rank 0 checks ``-o`` (as one process does, before any work); every rank raises
    its verdict together."""
    from asapgraph.cli.common import check_output_path
    from asapgraph.comm.mpi import agree

    err = None
    if comm.Get_rank() == 0:
        try:
            check_output_path(args.output, args)
        except Exception as e:  # noqa: BLE001 - agreed, then raised on every rank
            err = e
    agree(comm, err)


def emit_agreed(comm, emit, *a, **kw):
    """Rank 0's ``emit(*a, **kw)`` (the other ranks call ``agree(comm, None)``): a failure
    (``-o`` cannot be written after all) is agreed by every rank and reported as on one
    process (``FILE: reason``, exit 2), with no ``MPI_Abort``."""
    from asapgraph.comm.mpi import agree

    err = None
    try:
        emit(*a, **kw)
    except Exception as e:  # noqa: BLE001 - agreed, then raised on every rank
        err = e
    agree(comm, err)
