"""Program subcommands (katz, wcc, sssp, bfs, labelprop, hits, run) on MPI ranks.

``run_distributed_program`` relaunches the command under ``mpiexec`` (``--np K``) or, on
a rank, loads the partitioned graph, builds the program the command names and runs it on
:func:`asapgraph.engine.distributed.run`; rank 0 writes the output exactly as the
single-process command does.
"""
from __future__ import annotations

import sys
import time

from asapgraph.cli.common import err as _err
from asapgraph.cli.common import input_summary
from asapgraph.comm.mpi import agree
from asapgraph.engine.distributed import load, run
from asapgraph.errors import InputError

def _strip_np(argv):
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
            continue
        if a in ("--np", "--mpiexec"):
            skip = True
            continue
        if a.startswith("--np=") or a.startswith("--mpiexec="):
            continue
        out.append(a)
    return out


def run_distributed_program(args):
    """CLI entry of the program subcommands with ``--np > 1`` or under ``mpiexec``.

    Not under a launcher: re-runs the same command line (``sys.argv``, or
    ``args._argv`` when set) under ``mpiexec -n args.np``.  Under ``mpiexec``: every
    rank loads its share and runs the program; rank 0 writes the output exactly as the
    single-process command.  Bad input: one line ``FILE:LINE: message`` from rank 0,
    exit status 2; any other failure of one rank aborts the job.  Returns the exit status.
    """
    from asapgraph.cli.common import mpi_world_size_from_env

    if mpi_world_size_from_env() is None and getattr(args, "np", 1) > 1:
        from asapgraph.comm.launch import find_mpiexec, reads_stdin, run_ranks

        argv = getattr(args, "_argv", None) or getattr(args, "_cli_argv", None) or sys.argv[1:]
        exe = find_mpiexec(getattr(args, "mpiexec", None))
        return run_ranks(exe, args.np, _strip_np(argv), stdin=reads_stdin(args))
    from asapgraph.cli.distributed import run_on_world

    return run_on_world(_cli_run, args)


def _refuse_engine_options(args, prog):
    """``asapgraph run``: refuse the ASAP and emulation options its program's engine
    does not use (the command-level table cannot know the program)."""
    from asapgraph.engine.distributed import engine_kind
    from asapgraph.errors import InputError
    from asapgraph.options import engine_option_refusal

    engine = engine_kind(prog)
    for dest in sorted(getattr(args, "_given", None) or ()):
        why = engine_option_refusal(dest, getattr(prog, "name", "program"), engine,
                                    prog.combiner)
        if why is not None:
            raise InputError("asapgraph", None, why)


def _cli_program(args, g):
    from asapgraph.cli import programs as commands
    from asapgraph.programs import (BFSProgram, KatzProgram, LabelPropProgram, SSSPProgram,
                                    WCCProgram)
    from asapgraph.programs.hits import HITSProgram

    c = args.command
    if c == "katz":
        return commands.KATZ, KatzProgram(alpha=args.alpha, beta=args.beta,
                                           normalized=args.normalized, weighted=g.weighted)
    if c == "wcc":
        return commands.WCC, WCCProgram()
    source = getattr(args, "_source_dense", getattr(args, "source", None))  # (--labels)
    if c == "sssp":
        return commands.SSSP, SSSPProgram(g.dense_id(source))
    if c == "bfs":
        return commands.BFS, BFSProgram(g.dense_id(source))
    if c == "labelprop":
        return commands.LABELPROP, LabelPropProgram()
    if c == "hits":
        return commands.HITS, HITSProgram()
    if c == "run":
        prog = getattr(args, "_program_obj", None) or commands.load_user_program(args)
        commands.check_steps(args)
        algo = commands.Algo("run", None, True, None, top="values", extra_summary=commands.run_summary)
        return algo, prog
    raise InputError(f"asapgraph {c}", None, "no distributed version of this command")


def _cli_run(args, comm):
    from asapgraph.cli.distributed import (check_output_agreed, emit_agreed,
                                           whole_file_agreed)
    from asapgraph.cli.emit import emit_program, named_groups, result_columns

    me = comm.Get_rank()
    check_output_agreed(comm, args)
    whole = whole_file_agreed(comm, args)
    weighted = bool(getattr(args, "weighted", False) or getattr(args, "weight_col", None) is not None)
    wc = getattr(args, "weight_col", None)  # 1-based, as on one process
    t0 = time.perf_counter()
    g = None
    from asapgraph.cli.distributed import labelled_input, named
    from asapgraph.progress import Progress

    if args.command == "run":  # the program and its options checked before any work,
        err = None             # as on one process (cmd_run)
        try:
            from asapgraph.cli import programs as commands

            args._program_obj = (getattr(args, "_program_obj", None)
                                 or commands.load_user_program(args))
            commands.check_steps(args)
            _refuse_engine_options(args, args._program_obj)
        except Exception as e:  # noqa: BLE001
            err = e
        agree(comm, err)
    # rank 0 reports as one process does: the loading phases, the iterations, the end
    progress = Progress(quiet=getattr(args, "quiet", False)) if me == 0 else None
    mode = args.mode if args.command not in ("labelprop", "hits") else "bsp"
    if progress is not None:
        progress.stage(f"distributed {args.command} on {comm.Get_size()} ranks, mode {mode}, "
                       f"partition {getattr(args, 'partition', 'range')}")
        from asapgraph.graph.io._text import display_name

        progress.stage(f"loading {display_name(args.input)} on {comm.Get_size()} ranks")
    source, names = whole if whole is not None else labelled_input(args, comm, weighted)
    try:
        g = load(source, comm, partition=getattr(args, "partition", "range"), weighted=weighted,
                 undirected=bool(getattr(args, "undirected", False)) and whole is None,
                 weight_col=wc,   # (read on rank 0 when whole or --labels: skipped there)
                 header=bool(getattr(args, "header", False)) and isinstance(source, str),
                 progress=progress)
        err = None
    except Exception as e:  # noqa: BLE001
        err = e
    agree(comm, err)
    if getattr(args, "labels", False) and getattr(args, "source", None) is not None:
        args._source_dense = _dense_source(args, comm, names)
    load_s = time.perf_counter() - t0
    err, algo, prog = None, None, None
    try:
        algo, prog = _cli_program(args, g)
    except Exception as e:  # noqa: BLE001
        err = e
    agree(comm, err)
    tol = getattr(args, "tol", None)
    if args.command == "labelprop":
        tol = 0.0
    from asapgraph.cli.distributed import emulation_from_args

    eopts = {"fanout": getattr(args, "fanout", 2), "window": getattr(args, "window", 1),
             "approx": getattr(args, "approx", 0.0), "seed": getattr(args, "seed", 0) or 0,
             "schedule": getattr(args, "schedule", None),
             "emulation": emulation_from_args(args)}
    max_iter = getattr(args, "max_iter", None)
    per = getattr(prog, "supersteps_per_iteration", 1)   # hits: --max-iter counts HITS iterations
    try:
        res = run(prog, g, comm, mode=mode, max_iter=None if max_iter is None else per * max_iter,
                  tol=tol, progress=progress, engine_options=eopts,
                  steps=getattr(args, "steps", None))
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - worded as on one process (a
        # program's sys.exit() too), then re-raised
        worded = _as_on_one_process(args, exc)
        if worded is exc:
            raise
        raise worded from exc
    if per > 1:
        from asapgraph.programs.hits import hits_iterations

        res = hits_iterations(res)
    if not res.converged and not args.allow_unconverged:
        if me == 0:
            from asapgraph.cli.programs import unconverged_message

            _err(f"asapgraph: {unconverged_message(args.command, res)}")
        return 3
    if me != 0:
        agree(comm, None)  # rank 0 writes the results
        return 0
    from asapgraph.cli.programs import summary_max_iter, summary_tol

    cols = result_columns(algo, res)
    if names is not None and algo.top == "groups":  # a group's vertex, by name
        cols = named_groups(names, cols)
    st = res.stats
    summary = {
        "command": args.command, "input": args.input, "vertices": g.n, "edges": g.m,
        "weighted": g.weighted, "tol": summary_tol(args, prog),
        "max_iter": summary_max_iter(args, prog),
        "iterations": res.iterations, "converged": res.converged, "residual": st.get("residual"),
        "error_bound": st.get("error_bound"), "load_seconds": load_s,
        "compute_seconds": st["seconds"], "mode": mode,
        "engine": "distributed", "ranks": comm.Get_size(), "partition": g.part.kind,
        "edges_scanned": st["edges_scanned"], "messages_sent": st["messages_sent"],
        "bytes_sent": st["bytes_sent"], "columns": list(cols), **input_summary(args, g.weighted),
    }
    # the engine's figures: bound, schedule, traffic, emulation
    for k in ("engine", "error_bound", "relative_error_bound", "spectral_gap", "spectral_gap_mean", "fanout",
              "fanout_asked", "window", "work_budget_edges", "work_factor",
              "approx", "seed", "schedule", "extrapolations", "emulation", "data_messages_sent",
              "acks_sent", "waves", "emulated_delay_seconds", "straggler_sleep_seconds",
              "clock", "virtual_seconds", "wall_seconds"):
        if st.get(k) is not None:
            summary[k] = st[k]
    if summary["max_iter"] is None and "work_budget_edges" in summary:
        summary["work_budget_edges"] = None  # no cap asked (the engine's is 1 << 30 sweeps)
    if algo.extra_summary is not None:
        summary.update(algo.extra_summary(args, g, cols))
    emit_agreed(comm, emit_program, args, algo, named(names, res.ids), cols, summary)
    return 0


def _as_on_one_process(args, exc):
    """``asapgraph run``: an exception of the user's program reads as on one process
    (``asapgraph run: X raised T: ...``, exit status 1), whether agreed by every rank
    (:class:`RankFailure`) or raised on this rank alone; bad input is left as it is."""
    from asapgraph.cli.programs import UserProgramError, user_program_line
    from asapgraph.comm.mpi import RankFailure

    if args.command != "run" or isinstance(exc, InputError):
        return exc
    if isinstance(exc, RankFailure):
        if exc.input_error or exc.exc_type is None:
            return exc
        return RankFailure(exc.rank, user_program_line(args.program, exc.exc_type, exc.exc_text),
                           False)
    return UserProgramError(user_program_line(args.program, type(exc).__name__, exc))


def _dense_source(args, comm, names):
    """The dense id of ``--source NAME`` (rank 0 holds the names; collective): refused
    as on one process when no vertex has that name."""
    from asapgraph.graph.io._text import display_name
    from asapgraph.programs._util import name_index

    err, dense = None, None
    if comm.Get_rank() == 0:
        dense = name_index(names, args.source)
        if dense is None:
            err = InputError(display_name(args.input), None,
                             f"source vertex {args.source!r} is not in the graph")
    agree(comm, err)
    return comm.bcast(dense, root=0)
