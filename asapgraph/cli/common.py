"""Helpers shared by the command drivers: exit statuses, the MPI launcher's
environment, progress, loading the input, the early ``-o`` check, stderr lines."""
from __future__ import annotations

import os
import sys
import time

from asapgraph.errors import InputError
from asapgraph.comm.launch import mpi_rank_from_env, mpi_world_size_from_env

__all__ = ["EXIT_OK", "EXIT_INTERNAL", "EXIT_INPUT", "EXIT_UNCONVERGED", "EXIT_INTERRUPTED",
           "EXIT_PIPE", "peak_rss_bytes", "mpi_world_size_from_env", "mpi_rank_from_env",
           "wants_distributed", "progress_for", "load_input", "check_output_path",
           "whole_file_checked",
           "read_vertex_values", "dense_vector", "err", "quiet_stdout", "write_stdout",
           "flush_stdout", "says_interrupted", "exit_interrupted"]

EXIT_OK, EXIT_INTERNAL, EXIT_INPUT, EXIT_UNCONVERGED = 0, 1, 2, 3
EXIT_INTERRUPTED, EXIT_PIPE = 130, 141


def peak_rss_bytes():
    """Peak resident set size of this process, in bytes (see :mod:`asapgraph._rss`)."""
    from asapgraph._rss import peak_rss_bytes as peak

    return peak()


def says_interrupted(environ=None):
    """Whether this process prints ``asapgraph: interrupted`` on Ctrl-C: one process, the
    ``--np`` launcher, and rank 0 under a user's own ``mpiexec``; not a rank of the
    launcher's job (the launcher says it once: every rank said ``error on rank N:
    KeyboardInterrupt`` or ``asapgraph: interrupted``, and MPI_Abort its own line)."""
    env = os.environ if environ is None else environ
    size = mpi_world_size_from_env(env)
    if size is None or size <= 1:
        return True
    return env.get("ASAPGRAPH_LAUNCHED", "") in ("", "0") and not mpi_rank_from_env(env)


def exit_interrupted(comm, say=False):
    """End this rank of a job interrupted by Ctrl-C, status 130: ``comm.Abort`` (mpiexec
    stops the ranks that are still running, quietly; ranks that merely exit make Hydra
    kill the others and print a "BAD TERMINATION" banner on stdout), with this rank's
    standard error closed first so that MPICH writes no ``Abort(130) on node N`` line
    (never returns).  Further SIGINTs are ignored from here on: mpiexec passes the
    terminal's Ctrl-C on to the ranks, which got it already, and a second
    KeyboardInterrupt before the abort would end the rank without it (Hydra's banner).
    ``say``: print ``asapgraph: interrupted`` first (the job's one line)."""
    import signal

    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    except (ValueError, OSError):  # (not the main thread)
        pass
    if say:
        err("asapgraph: interrupted")
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            pass
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 2)
        comm.Abort(EXIT_INTERRUPTED)
    finally:
        os._exit(EXIT_INTERRUPTED)


def wants_distributed(args, environ=None):
    """True when the run must go through :func:`asapgraph.cli.distributed.run_distributed`."""
    if getattr(args, "np", 1) > 1:
        return True
    size = mpi_world_size_from_env(environ)
    return size is not None and size > 1


def progress_for(args):
    from asapgraph.progress import Progress

    return Progress(quiet=getattr(args, "quiet", False))


def load_input(args, progress=None):
    """Load ``args.input`` with the input options; returns ``(graph, load_seconds)``."""
    from asapgraph.graph import io as _io

    weighted = bool(args.weighted or args.weight_col is not None)
    t0 = time.perf_counter()
    header = bool(getattr(args, "header", False))
    g = _io.load_graph(args.input, weighted=weighted, undirected=args.undirected,
                       weight_col=args.weight_col, progress=progress,
                       labels=getattr(args, "labels", False), header=header)
    if weighted and hasattr(g, "indptr"):  # where a refusal finds the weights' line
        g.weight_col = args.weight_col
        g.header = header
    return g, time.perf_counter() - t0


def whole_file_checked(args):
    """A Matrix Market or Parquet ``args.input`` read on rank 0 for K ranks, after the
    checks one process makes on the same command line, so that a bad file reads the same
    on 1 and K ranks: the reader's (banner, size line, entries, columns), PageRank's and
    sssp's refusal of negative weights, the personalization and dangling files, katz's
    alpha, a ``--source``, a user's program.  Returns the graph (the ranks scatter it:
    :func:`asapgraph.cli.distributed.whole_file_agreed`), or None when ``args.input`` is
    neither.  Loads the whole file: call it on one rank."""
    path = getattr(args, "input", None)
    if not isinstance(path, str) or path == "-" or getattr(args, "labels", False):
        return None
    try:
        from asapgraph.graph.io._readers import whole_file_format

        if not os.path.isfile(path) or whole_file_format(path) is None:
            return None
    except Exception:  # noqa: BLE001 - the ranks' own reading reports it
        return None
    graph, _ = load_input(args)
    weighted = graph.weights is not None and graph.m > 0
    if args.command == "pagerank" and weighted and graph.weights.min() < 0:
        from asapgraph.options import negative_weights_error

        raise negative_weights_error(graph.source, args.input, args.weight_col,
                                     header=bool(getattr(args, "header", False)))
    if args.command == "pagerank":
        for opt in ("personalization", "dangling"):
            if getattr(args, opt, None) is not None:
                dense_vector(graph, getattr(args, opt))
    else:  # katz's alpha against its bound, sssp's and bfs's --source, a user's program
        _check_program_run(args, graph)
    return graph


def _check_program_run(args, graph):
    """The checks of a program command on one process before its first iteration
    (:func:`asapgraph.engine.single.check_run`), on the program the command builds."""
    from asapgraph import programs as P
    from asapgraph.engine.single import check_run
    from asapgraph.programs._util import dense_id

    c, mode, max_iter = args.command, getattr(args, "mode", "bsp"), getattr(args, "max_iter", None)
    tol = getattr(args, "tol", None)
    if c == "katz":
        prog = P.KatzProgram(alpha=args.alpha, beta=args.beta, normalized=args.normalized,
                             weighted=graph.weights is not None)
    elif c in ("sssp", "bfs"):
        src = dense_id(graph, args.source)
        prog = P.SSSPProgram(src) if c == "sssp" else P.BFSProgram(src)
    elif c == "run":
        from asapgraph.cli.programs import (UserProgramError, load_user_program,
                                            user_program_line)

        prog = getattr(args, "_program_obj", None) or load_user_program(args)
        if getattr(args, "steps", None) is not None:
            from asapgraph.engine.program import exact_steps

            max_iter, tol = exact_steps(prog, args.steps, mode)
        try:
            check_run(prog, graph, mode, max_iter, tol)
        except InputError:
            raise
        except Exception as exc:  # noqa: BLE001 - worded as one process words it
            raise UserProgramError(user_program_line(args.program, type(exc).__name__,
                                                     exc)) from None
        return
    elif c == "hits":   # its negative weights (setup)
        prog = P.HITSProgram()
    else:   # wcc, labelprop: nothing is refused before they run
        return
    check_run(prog, graph, mode, max_iter, tol)


def check_output_path(path, args=None):
    """Fail before any work when ``-o`` cannot be written (bad extension, no directory,
    not a directory, no file can be created there) or is one of the run's input files
    (``args.input``, ``--personalization``, ``--dangling``): the rename would replace
    the user's graph by the results."""
    if path is None:
        return
    from asapgraph.graph.io.atomic import check_output_dir, output_format

    output_format(path)
    for opt in ("input", "personalization", "dangling"):
        src = getattr(args, opt, None) if args is not None else None
        if not isinstance(src, (str, os.PathLike)) or src == "-" or not os.path.isfile(path):
            continue
        try:
            same = os.path.isfile(src) and os.path.samefile(path, src)
        except OSError:
            same = False
        if same:
            what = "the input graph" if opt == "input" else f"the --{opt} file"
            raise InputError(path, None, f"is {what} ({src}); -o would overwrite it "
                                         "with the results: write them elsewhere")
    check_output_dir(path)


def read_vertex_values(path):
    """Read a ``node value`` file; see :func:`asapgraph.options.read_vertex_values`."""
    from asapgraph.options import read_vertex_values as read

    return read(path)


def input_summary(args, weighted):
    """The input options of a run, for ``--json`` (an option that applies shows there):
    ``undirected``, ``labels``, ``header`` (a header line skipped), ``weight_col`` (the
    1-based column read, None unweighted)
    and, for the commands that take them, the ``personalization`` / ``dangling`` files and
    ``allow_unconverged`` (results written although the run did not converge)."""
    wc = getattr(args, "weight_col", None)
    out = {"undirected": bool(getattr(args, "undirected", False)),
           "labels": bool(getattr(args, "labels", False)),
           "header": bool(getattr(args, "header", False)),
           "weight_col": (int(wc) if wc is not None else 3) if weighted else None}
    for k in ("personalization", "dangling", "allow_unconverged"):
        if hasattr(args, k):
            out[k] = getattr(args, k)
    return out


def dense_vector(graph, path):
    """A node-value file as a dense float64 vector over the graph's vertices."""
    from asapgraph.options import LabelledValues, dense_vertex_values

    if getattr(graph, "labels", None) is not None:  # --labels: the file names vertices
        path = LabelledValues(path, graph.labels)
    return dense_vertex_values(graph.original_ids(), path)



def quiet_stdout():
    """After a write to a closed stdout (``BrokenPipeError``): point descriptor 1 at
    ``/dev/null``, so that the flush at exit finds nothing to complain about (Python
    would print "Exception ignored ... BrokenPipeError" and exit 120)."""
    import os

    if sys.stdout is None:  # closed from the start: nothing to flush
        return
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def write_stdout(out, text):
    """``out.write(text)``, every byte or an exception.  Under ``python -u`` /
    ``PYTHONUNBUFFERED`` stdout has no buffer layer, and its text layer drops what a
    short write of the file left (a pipe whose reader went away mid-write): ``... --top
    3000 | head -1`` exited 0 there, 141 with buffering.  Written here in a loop on the
    raw file: the second write raises ``BrokenPipeError``.  ``out`` None (Python's
    ``sys.stdout`` when descriptor 1 was closed at start) raises it at once."""
    import errno
    import io

    if out is None:  # the process started with descriptor 1 closed ('>&-')
        raise BrokenPipeError(errno.EPIPE, "standard output is closed")
    raw = getattr(out, "buffer", None)
    if not isinstance(raw, io.RawIOBase):
        out.write(text)
        return
    out.flush()
    data = memoryview(text.encode(out.encoding or "utf-8", out.errors or "strict"))
    while len(data):
        n = raw.write(data)
        if n is None:  # a non-blocking stdout that is full
            raise BlockingIOError(11, "standard output is not ready for writing")
        data = data[n:]


def flush_stdout(out):
    """``out.flush()`` unless stdout is closed from the start (``out`` None)."""
    if out is not None:
        out.flush()


def err(msg):
    try:
        sys.stderr.write(msg.replace("\n", " ") + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass

