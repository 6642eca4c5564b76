"""The ``asapgraph`` command line: :func:`main`, :func:`build_parser`, exit statuses.

Structure
---------
Each subcommand is one ``register_<name>(subparsers)`` function that builds its
parser and sets ``func`` (a function ``args -> int`` exit status).  Options shared
between commands are added by helpers (:func:`add_input_options`,
:func:`add_output_options`, :func:`add_iteration_options`,
:func:`add_distributed_options`), so a new command (``katz``, ``wcc``, ``bfs`` ...)
is a ``register_xxx`` function appended to :data:`COMMANDS`.  The drivers live in

* :mod:`.options` -- argument types and the shared option groups;
* :mod:`.common` -- exit statuses, MPI environment, input loading, the ``-o`` check;
* :mod:`.emit` -- the one emitter (``-o``, ``--json``, ``--top``, result columns);
* :mod:`.pagerank` -- ``pagerank``;  :mod:`.programs` -- ``katz``, ``hits``, ``wcc``,
  ``sssp``, ``bfs``, ``labelprop``, ``run``;  :mod:`.graphs` -- ``info``, ``convert``,
  ``generate``;
* :mod:`.distributed` and :mod:`.program_ranks` -- the same commands on MPI ranks.

Every name documented here stays importable from :mod:`asapgraph.cli`.

Exit status
-----------
0 success; 1 internal error (a bug: one line on stderr, ``ASAPGRAPH_DEBUG=1`` for the
traceback); 2 bad input or usage (one line ``FILE:LINE: message`` on stderr, no output
file written); 3 the iteration did not converge (unless ``--allow-unconverged``);
130 interrupted (Ctrl-C); 141 stdout closed early (e.g. ``| head``), quietly.
"""
from __future__ import annotations

import argparse
import os
import sys

from asapgraph._version import __version__
from asapgraph.cli.common import (EXIT_INPUT, EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_OK,
                                  EXIT_PIPE, EXIT_UNCONVERGED, check_output_path, err,
                                  exit_interrupted, load_input, mpi_rank_from_env,
                                  mpi_world_size_from_env, peak_rss_bytes, quiet_stdout,
                                  read_vertex_values, says_interrupted, wants_distributed)
from asapgraph.cli.emit import emit_program, emit_results, result_columns
from asapgraph.cli.graphs import (cmd_convert, cmd_generate, cmd_info, graph_stats,
                                  register_convert, register_generate, register_info,
                                  write_edge_list)
from asapgraph.cli.options import (add_distributed_options, add_input_options,
                                   add_iteration_options, add_output_options)
from asapgraph.cli.pagerank import cmd_pagerank, register_pagerank
from asapgraph.cli.programs import (BFS, HITS, KATZ, LABELPROP, SSSP, WCC, Algo, check_steps,
                                    cmd_run, load_user_program, parse_param, register_bfs,
                                    register_hits, register_katz, register_labelprop,
                                    register_run, register_sssp, register_wcc, run_summary)
from asapgraph.errors import InputError, NotConvergedError

__all__ = [
    "main", "build_parser", "COMMANDS", "check_output_path", "graph_stats",
    "add_input_options", "add_output_options",
    "add_iteration_options", "add_distributed_options", "load_input", "read_vertex_values",
    "mpi_world_size_from_env", "wants_distributed", "peak_rss_bytes", "emit_results",
    # the commands (registrars are in COMMANDS) and their drivers
    "cmd_pagerank", "cmd_run", "cmd_info", "cmd_convert", "cmd_generate", "write_edge_list",
]

# the names of the single-module CLI, still importable from here
(_err, _check_output_path, _parse_param, _Algo, _load_user_program, _check_steps, _run_summary,
 _emit_program, _result_columns) = (err, check_output_path, parse_param, Algo, load_user_program,
                                    check_steps, run_summary, emit_program, result_columns)
_KATZ, _WCC, _SSSP, _BFS, _LABELPROP, _HITS = KATZ, WCC, SSSP, BFS, LABELPROP, HITS

_EPILOG = """\
examples:
  asapgraph pagerank datasets/rmat-12.txt.gz --top 10
  asapgraph pagerank web.txt.gz -o ranks.csv --tol 1e-12 --json
  asapgraph pagerank rmat:20 --np 4 --mode asap --top 5
  asapgraph wcc web.txt.gz -o components.csv
  asapgraph sssp roads.txt --weighted --source 1 -o dist.csv
  asapgraph run my_module:MyProgram web.txt.gz --param k=3 -o out.csv
  asapgraph info datasets/rmat-12.txt.gz
  asapgraph convert web.txt.gz web.asg
  asapgraph generate rmat --scale 20 -o rmat-20.txt.gz

Run 'asapgraph COMMAND --help' for the options of a command.
"""


def _report_input_error(exc_line):
    """Print a bad-input line; on MPI ranks before MPI started (checks every rank makes
    alike: -o, --mode, the program file) only rank 0 does, so K ranks print it once."""
    mpi = sys.modules.get("mpi4py.MPI")
    started = mpi is not None and mpi.Is_initialized()
    if started or (mpi_world_size_from_env() or 1) <= 1 or not mpi_rank_from_env():
        err(exc_line)


# ----------------------------------------------------------------------------- bench


def register_bench(sub):
    """``asapgraph bench``: BSP vs ASAP on an emulated cluster (see asapgraph.bench)."""
    from asapgraph.bench.commands import register

    return register(sub)


# ----------------------------------------------------------------------------- parser, main

#: Subcommand registrars, in ``--help`` order.  Another command is added by appending
#: a ``register(subparsers) -> parser`` function that sets ``func`` on its parser.
COMMANDS = [register_pagerank, register_katz, register_hits, register_wcc, register_sssp,
            register_bfs, register_labelprop, register_run, register_info,
            register_convert, register_generate, register_bench]


def _own_command(reg):
    """``X`` for a registrar named ``register_X`` in :data:`COMMANDS`, else None."""
    name = getattr(reg, "__name__", "")
    return name[len("register_"):] if name.startswith("register_") else None


class _Parser(argparse.ArgumentParser):
    """A usage error is one line on stderr, exit status 2: ``asapgraph pagerank: error:
    ... (see asapgraph pagerank --help)`` (argparse's default printed the whole usage
    first, 17 lines for ``pagerank``).  Subcommand parsers inherit the class."""

    def error(self, message):
        # under the user's own mpiexec every rank parses the same command line: rank 0
        # prints the line, so K ranks print it once (was: once per rank), as bad input
        _report_input_error(f"{self.prog}: error: {message} (see {self.prog} --help)")
        self.exit(2)


def build_parser(command=None):
    """The top-level ``argparse`` parser with every registered subcommand.

    ``command``: the subcommand the caller is about to parse (the first argument of its
    command line); registrars named ``register_<another command>`` are then skipped, with
    their imports (``asapgraph pagerank ... --np 2``: building and parsing took 19-24 ms
    in the launcher and again in each rank, 10-14 ms with ``pagerank`` alone; most of the
    difference is ``bench``'s module).  Registrars named otherwise always run.  None (or
    a name no registrar has): every subcommand, as ``--help`` and the usage errors list
    them.
    """
    names = {_own_command(reg) for reg in COMMANDS} - {None}
    if command not in names:
        command = None
    p = _Parser(
        prog="asapgraph", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="asapgraph: graph processing (PageRank and vertex programs) on one "
                    "machine or over MPI, in BSP or ASAP (asynchronous approximate) mode.",
        epilog=_EPILOG)
    p.add_argument("--version", action="version", version=f"asapgraph {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for reg in COMMANDS:
        if command is None or _own_command(reg) in (None, command):
            reg(sub)
    return p


def _mpi_abort_if_needed(code):
    """Under MPI with several ranks, a failing rank aborts the job instead of hanging it."""
    mpi = sys.modules.get("mpi4py.MPI")
    if mpi is None or code in (EXIT_OK, EXIT_UNCONVERGED):
        return
    try:
        if mpi.Is_initialized() and not mpi.Is_finalized() and mpi.COMM_WORLD.Get_size() > 1:
            if code == EXIT_INTERRUPTED:  # Ctrl-C: quietly (no 'Abort(130) on node' line)
                exit_interrupted(mpi.COMM_WORLD)
            sys.stderr.flush()
            mpi.COMM_WORLD.Abort(code)
    except Exception:  # noqa: BLE001 - aborting is best effort
        pass


def main(argv=None):
    """Run the ``asapgraph`` command line; returns the exit status (never raises).

    Parameters
    ----------
    argv : list of str, optional
        Arguments without the program name (default ``sys.argv[1:]``).
    """
    args = None
    try:
        words = sys.argv[1:] if argv is None else [str(a) for a in argv]
        parser = build_parser(words[0] if words else None)
        try:
            args = parser.parse_args(argv)
        except SystemExit as exc:  # --help, --version, usage errors (status 2)
            return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
        # the command line --np relaunches under mpiexec (main(argv) from Python included)
        args._cli_argv = [str(a) for a in (sys.argv[1:] if argv is None else argv)]
        if os.environ.get("ASAPGRAPH_LAUNCHED", "") in ("", "0"):  # the launcher checked
            from asapgraph.options import check_cli

            world = mpi_world_size_from_env()
            _drain_stdin_under_mpiexec(args, world)
            if (world is not None and "np" in (getattr(args, "_given", None) or ())
                    and args.np != world):  # (it ran on the launcher's ranks, --np unused)
                raise InputError("asapgraph", None,
                                 f"--np {args.np} but this command runs on {world} MPI "
                                 f"rank(s) (under your mpiexec): drop --np, or give --np "
                                 f"{world}")
            # --mpiexec names the mpiexec that --np K starts; under the user's own mpiexec
            # nothing is started, and the path was accepted and never looked at (one
            # process refuses it, RULES["mpiexec"]; K ranks of --np never see it)
            if (world is not None and world > 1
                    and "mpiexec" in (getattr(args, "_given", None) or ())):
                raise InputError("asapgraph", None,
                                 f"--mpiexec does not apply under your own mpiexec: this "
                                 f"command already runs on {world} MPI ranks (--mpiexec "
                                 "names the mpiexec that --np K starts): drop --mpiexec")

            check_cli(args, wants_distributed(args),
                      args.np if getattr(args, "np", 1) > 1 else mpi_world_size_from_env())
        # --threads N on one process: the whole command's OpenMP threads (restored after:
        # main may run in a caller's process); ranks apply their own (per-rank) counts, and
        # the --np launcher imports no kernel module at all
        threads = getattr(args, "threads", None)
        if threads and not wants_distributed(args):
            from asapgraph.kernels.tuning import omp_threads

            with omp_threads(threads):
                code = args.func(args)
        else:
            code = args.func(args)
    except InputError as exc:
        _report_input_error(str(exc))
        code = EXIT_INPUT
    except NotConvergedError as exc:
        err(f"asapgraph: {exc}")
        code = EXIT_UNCONVERGED
    except KeyboardInterrupt:
        if says_interrupted():
            err("asapgraph: interrupted")
        code = EXIT_INTERRUPTED
    except BrokenPipeError:
        # stdout was closed by the reader (e.g. '| head'): stop quietly
        quiet_stdout()
        code = EXIT_PIPE
    except OSError as exc:
        if getattr(exc, "filename", None):
            err(f"{exc.filename}: {exc.strerror or exc}")
            code = EXIT_INPUT
        else:
            code = _internal(exc)
    except MemoryError:
        err("asapgraph: out of memory")
        code = EXIT_INTERNAL
    except Exception as exc:  # noqa: BLE001 - any other exception is a bug
        code = _internal(exc)
    _mpi_abort_if_needed(code)
    if argv is None and args is not None and getattr(args, "np", 1) > 1 \
            and mpi_world_size_from_env() is None:
        _launcher_exits()
    return code


def _drain_stdin_under_mpiexec(args, world):
    """Rank 0 of the user's own mpiexec that reads standard input (``INPUT``,
    ``--personalization`` or ``--dangling`` is ``-``) drains it from now on into a
    spool (:mod:`asapgraph.comm.stdin_spool`): Hydra forwards it only as fast as rank 0
    reads, and stopped the job when it lagged.  (``--np K``: rank 0 reads the launcher's
    standard input directly, ``ASAPGRAPH_LAUNCHED``; one process: no mpiexec.)"""
    if world is None:
        return
    from asapgraph.comm.launch import mpi_rank_from_env, reads_stdin

    if mpi_rank_from_env() == 0 and reads_stdin(args):
        from asapgraph.comm import stdin_spool

        stdin_spool.start()


def _launcher_exits():
    """The ``--np`` launcher run as the program (``main()`` reading ``sys.argv``) only
    exits once ``mpiexec`` returned: every object alive goes to the collector's permanent
    generation, so the shutdown skips its full collections (launcher-like process: 15-26
    ms from its last exit handler to its end, 2-7 ms frozen; busy host).  Exit handlers,
    flushes and the status are unchanged; a caller passing ``argv`` keeps its collector."""
    import gc

    gc.disable()
    gc.freeze()


def _internal(exc):
    if os.environ.get("ASAPGRAPH_DEBUG", "") not in ("", "0"):
        import traceback

        traceback.print_exc()
    err(f"asapgraph: internal error: {type(exc).__name__}: {exc} "
         "(this is a bug; rerun with ASAPGRAPH_DEBUG=1 for the traceback)")
    return EXIT_INTERNAL


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
