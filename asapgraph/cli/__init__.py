"""The ``asapgraph`` command line.

Structure
---------
Each subcommand is one ``register_<name>(subparsers)`` function that builds its
parser and sets ``func`` (a function ``args -> int`` exit status).  Options shared
between commands are added by helpers (:func:`add_input_options`,
:func:`add_output_options`, :func:`add_iteration_options`,
:func:`add_distributed_options`), so a new command (``katz``, ``wcc``, ``bfs`` ...)
is a ``register_xxx`` function appended to :data:`COMMANDS`.

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
import time

import numpy as np

from asapgraph._version import __version__
from asapgraph.errors import InputError, NotConvergedError

__all__ = [
    "main", "build_parser", "COMMANDS", "check_output_path", "graph_stats",
    "add_input_options", "add_output_options",
    "add_iteration_options", "add_distributed_options", "load_input", "read_vertex_values",
    "mpi_world_size_from_env", "wants_distributed", "peak_rss_bytes", "emit_results",
]

EXIT_OK, EXIT_INTERNAL, EXIT_INPUT, EXIT_UNCONVERGED = 0, 1, 2, 3
EXIT_INTERRUPTED, EXIT_PIPE = 130, 141

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


class _Formatter(argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
    pass


# ----------------------------------------------------------------------------- arg types


def _checked(convert, ok, what):
    """An argparse type: ``convert(text)`` that must satisfy ``ok``, else "expected WHAT"."""
    def parse(text):
        try:
            v = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if not ok(v):
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
        return v
    return parse


_positive_int = _checked(int, lambda v: v >= 1, "a positive integer")
_nonneg_int = _checked(int, lambda v: v >= 0, "an integer >= 0")
_nonneg_float = _checked(float, lambda v: 0.0 <= v < float("inf"), "a finite number >= 0")
_positive_float = _checked(float, lambda v: 0.0 < v < float("inf"), "a finite number > 0")


def _alpha(text):
    from asapgraph.options import check_alpha

    try:
        return check_alpha(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


_SUFFIX = {"": 1, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}


def _bandwidth(text):
    """Bytes per second: a number with an optional decimal suffix k, M, G, T (``1.25G``)."""
    t = text.strip()
    suffix = t[-1:].lower() if t[-1:].isalpha() else ""
    try:
        v = float(t[:-1] if suffix else t) * _SUFFIX[suffix]
    except (ValueError, KeyError):
        raise argparse.ArgumentTypeError(
            f"expected bytes/s such as 1e9 or 1.25G, got {text!r}") from None
    if not (v >= 0.0) or v == float("inf"):
        raise argparse.ArgumentTypeError(f"bandwidth must be >= 0, got {text!r}")
    return v


def _straggler(text):
    """``RANK:FACTOR`` (rank >= 0, factor >= 1), or a comma list of them: those ranks
    compute FACTOR times slower."""
    try:
        for part in text.split(","):
            r, f = part.split(":")
            if int(r) < 0 or not (float(f) >= 1.0):
                raise ValueError
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected RANK:FACTOR with RANK >= 0 and FACTOR >= 1, got {text!r}") from None
    return text


# ----------------------------------------------------------------------------- shared options


def add_input_options(p, positional=True):
    """``INPUT`` plus ``--weighted``, ``--undirected``, ``--weight-col``."""
    if positional:
        p.add_argument("input", metavar="INPUT",
                       help="edge list (text, .gz/.bz2/.xz, .mtx, .npy, .asg), '-' for stdin, "
                            "or a generator spec such as rmat:20 or er:1000:5000")
    g = p.add_argument_group("input options")
    g.add_argument("--weighted", action="store_true",
                   help="read edge weights (third column unless --weight-col)")
    g.add_argument("--undirected", action="store_true",
                   help="treat every edge u v as the two arcs u->v and v->u")
    g.add_argument("--weight-col", type=_positive_int, default=None, metavar="K",
                   help="1-based column holding the weight (implies --weighted)")
    g.add_argument("--labels", action="store_true",
                   help="vertices are named by arbitrary tokens (strings), not integers; "
                        "outputs use the names")
    return g


def _node(x):
    """A vertex id or label as a plain Python value (int for ids, str for text labels)."""
    return int(x) if isinstance(x, (int, np.integer)) else (x.item() if hasattr(x, "item") else x)


def add_output_options(p, value_name="value"):
    """``-o``, ``--top``, ``--json``, ``--quiet``."""
    g = p.add_argument_group("output options")
    g.add_argument("-o", "--output", metavar="OUT", default=None,
                   help=f"write every vertex as 'node,{value_name}' (original ids); format by "
                        "extension: .csv, .tsv (+ .gz), .npy, .parquet (needs pyarrow); the "
                        "file appears atomically")
    g.add_argument("--top", type=_nonneg_int, default=None, metavar="K",
                   help=f"print the K vertices with the highest {value_name} as a table")
    g.add_argument("--json", action="store_true",
                   help="print one JSON object with the run's figures on stdout (nothing else)")
    g.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    return g


def add_iteration_options(p, tol_default, max_iter_default=100, tol=True, threads=True,
                          tol_help=None, max_iter_help=None):
    """``--tol``, ``--max-iter``, ``--allow-unconverged``, ``--threads``.

    ``tol=False`` / ``threads=False`` leave out ``--tol`` / ``--threads`` (programs with
    no tolerance, kernels without a thread knob); ``tol_help``/``max_iter_help`` replace
    the default help texts (``max_iter_default=None`` means "no cap").
    """
    g = p.add_argument_group("iteration options")
    if tol:
        g.add_argument("--tol", type=_nonneg_float, default=tol_default, metavar="T",
                       help=tol_help or "bound on the L1 error of the result: stop when the "
                                        "certified bound (--json: error_bound) is <= T "
                                        "(absolute, not scaled by n; BSP: alpha/(1-alpha) "
                                        "times the L1 change of a sweep)")
    g.add_argument("--max-iter", type=_nonneg_int, default=max_iter_default, metavar="N",
                   help=max_iter_help or "give up after N iterations (exit status 3 unless "
                                         "--allow-unconverged)")
    g.add_argument("--allow-unconverged", action="store_true",
                   help="write the results and exit 0 even when --max-iter was reached")
    if threads:
        from asapgraph.options import Given

        g.add_argument("--threads", action=Given, type=_positive_int, default=None, metavar="N",
                       help="OpenMP threads per process (default: all cores / OMP_NUM_THREADS)")
    return g


def add_distributed_options(p):
    """MPI options (``--np``, ``--mode`` ...) and network emulation, for run_distributed."""
    from asapgraph.options import Given, GivenAppend

    g = p.add_argument_group("distributed options (MPI)")
    g.add_argument("--np", type=_positive_int, default=1, metavar="P",
                   help="number of MPI processes; > 1 launches mpiexec (or runs under your "
                        "own mpiexec)")
    g.add_argument("--mode", choices=("bsp", "asap"), default="bsp",
                   help="bsp: synchronous supersteps; asap: asynchronous approximate "
                        "(with --np 1 both run the single-process kernel)")
    g.add_argument("--partition", action=Given, choices=("range", "hash"), default="range",
                   help="how vertices are assigned to processes")
    g.add_argument("--fanout", action=Given, type=_positive_int, default=2, metavar="F",
                   help="asap: fan-out of the stochastic reduction")
    g.add_argument("--window", action=Given, type=_positive_int, default=1, metavar="W",
                   help="asap: un-ACKed messages allowed per peer (NOTIFY-ACK flow control)")
    g.add_argument("--approx", action=Given, type=_nonneg_float, default=0.0, metavar="EPS",
                   help="asap: a peer's buffer holding less than EPS x the residual per peer "
                        "waits (fewer, larger messages; flushed before the end, so the answer "
                        "does not change; 0: send at once)")
    g.add_argument("--asap-form", action=Given, choices=("jacobi", "push"), default="jacobi",
                   help="asap PageRank local solver: jacobi (signed delta sweeps, teleport and "
                        "dangling mass spread by the messages; default) or push (leaky "
                        "Gauss-Seidel residual push)")
    g.add_argument("--seed", action=Given, type=_nonneg_int, default=0, metavar="S",
                   help="seed of the randomised parts (asap reduction order)")
    g.add_argument("--mpiexec", action=Given, default=None, metavar="PATH",
                   help="mpiexec to launch with (default: the one next to this Python, then PATH)")
    e = p.add_argument_group("network emulation (distributed runs)")
    e.add_argument("--latency", action=Given, type=_nonneg_float, default=0.0, metavar="SEC",
                   help="added one-way latency per message, in seconds")
    e.add_argument("--bandwidth", action=Given, type=_bandwidth, default=0.0, metavar="BYTES_PER_S",
                   help="link bandwidth in bytes/s, decimal suffixes k M G allowed "
                        "(1.25G = 10 Gbit/s); 0 = unlimited")
    e.add_argument("--jitter", action=Given, type=_nonneg_float, default=0.0, metavar="SEC",
                   help="random extra latency, uniform in [0, SEC]")
    e.add_argument("--straggler", type=_straggler, action=GivenAppend, default=[],
                   metavar="RANK:FACTOR",
                   help="make RANK compute FACTOR times slower (repeatable)")
    e.add_argument("--emulate-seed", action=Given, type=_nonneg_int, default=0, metavar="S",
                   help="seed of the emulated jitter")
    return g


# ----------------------------------------------------------------------------- helpers


def peak_rss_bytes():
    """Peak resident set size of this process, in bytes (see :mod:`asapgraph._rss`)."""
    from asapgraph._rss import peak_rss_bytes as peak

    return peak()


def mpi_world_size_from_env(environ=None):
    """World size announced by an MPI launcher, read from the environment (no MPI import).

    Returns
    -------
    int or None
        The size from ``PMI_SIZE`` (MPICH hydra) or ``OMPI_COMM_WORLD_SIZE`` (Open MPI);
        1 when only a rank variable (``PMI_RANK``, ``PMIX_RANK``) is present; None when
        not launched by mpiexec.
    """
    env = os.environ if environ is None else environ
    for key in ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "MPI_LOCALNRANKS"):
        v = env.get(key)
        if v:
            try:
                return int(v)
            except ValueError:
                pass
    if env.get("PMI_RANK") or env.get("PMIX_RANK"):
        return 1
    return None


def mpi_rank_from_env(environ=None):
    """This process's rank announced by an MPI launcher (``PMI_RANK``,
    ``OMPI_COMM_WORLD_RANK``, ``PMIX_RANK``), or None (no MPI import)."""
    env = os.environ if environ is None else environ
    for key in ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK"):
        v = env.get(key, "")
        if v.isdigit():
            return int(v)
    return None


def _report_input_error(exc_line):
    """Print a bad-input line; on MPI ranks before MPI started (checks every rank makes
    alike: -o, --mode, the program file) only rank 0 does, so K ranks print it once."""
    mpi = sys.modules.get("mpi4py.MPI")
    started = mpi is not None and mpi.Is_initialized()
    if started or (mpi_world_size_from_env() or 1) <= 1 or not mpi_rank_from_env():
        _err(exc_line)


def wants_distributed(args, environ=None):
    """True when the run must go through :func:`asapgraph.cli.distributed.run_distributed`."""
    if getattr(args, "np", 1) > 1:
        return True
    size = mpi_world_size_from_env(environ)
    return size is not None and size > 1


def _progress(args):
    from asapgraph.progress import Progress

    return Progress(quiet=getattr(args, "quiet", False))


def load_input(args, progress=None):
    """Load ``args.input`` with the input options; returns ``(graph, load_seconds)``."""
    from asapgraph.graph import io as _io

    weighted = bool(args.weighted or args.weight_col is not None)
    t0 = time.perf_counter()
    g = _io.load_graph(args.input, weighted=weighted, undirected=args.undirected,
                       weight_col=args.weight_col, progress=progress,
                       labels=getattr(args, "labels", False))
    return g, time.perf_counter() - t0


def check_output_path(path):
    """Fail before any work when ``-o`` cannot be written (bad extension, no directory,
    not a directory, no file can be created there)."""
    if path is None:
        return
    from asapgraph.graph.io.output import check_output_dir, output_format

    output_format(path)
    check_output_dir(path)


_check_output_path = check_output_path  # used by asapgraph.cli.distributed


def read_vertex_values(path):
    """Read a ``node value`` file; see :func:`asapgraph.options.read_vertex_values`."""
    from asapgraph.options import read_vertex_values as read

    return read(path)


def _dense_vector(graph, path):
    """A node-value file as a dense float64 vector over the graph's vertices."""
    from asapgraph.options import dense_vertex_values

    return dense_vertex_values(graph.original_ids(), path)


def emit_results(args, ids, values, name, summary, out=None, score_name=None):
    """Write ``-o``, then print ``--json`` / ``--top`` / the default summary on stdout.

    Parameters
    ----------
    args : argparse.Namespace
        With ``output``, ``top``, ``json`` (see :func:`add_output_options`).
    ids, values : arrays of length n
        Original vertex ids and the per-vertex result.
    name : str
        Name of the value column in files (``rank``, ``distance`` ...).
    summary : dict
        Figures of the run; printed as JSON with ``--json`` (plus ``output`` and
        ``write_seconds``), else as ``key: value`` lines before the default top 10.
    out : file, optional
        Stream for stdout output (default ``sys.stdout``).
    score_name : str, optional
        Heading of the value column in the printed table (default ``name``).
    """
    from asapgraph.graph.io.output import format_top, json_dumps, top_order, write_values

    out = sys.stdout if out is None else out
    score_name = name if score_name is None else score_name
    summary = dict(summary)
    if args.output is not None:
        t0 = time.perf_counter()
        write_values(args.output, ids, {name: values})
        summary["output"] = args.output
        summary["write_seconds"] = time.perf_counter() - t0
    if args.json:
        if args.top:
            sel = top_order(ids, values, args.top)
            summary["top"] = [[_node(i), float(v)] for i, v in zip(ids[sel], values[sel])]
        summary["peak_rss_bytes"] = peak_rss_bytes()
        out.write(json_dumps(summary) + "\n")
    elif args.top is not None:
        out.write(format_top(ids, values, args.top, score_name))
    elif args.output is None:
        for k in ("input", "vertices", "edges", "iterations", "converged", "residual",
                  "load_seconds", "compute_seconds"):
            if k in summary:
                v = summary[k]
                out.write(f"{k}: {v:.3g}\n" if isinstance(v, float) else f"{k}: {v}\n")
        out.write(format_top(ids, values, 10, score_name))
    out.flush()


# ----------------------------------------------------------------------------- pagerank


def register_pagerank(sub):
    from asapgraph.programs.pagerank import DEFAULT_MAX_ITER, DEFAULT_TOL

    p = sub.add_parser(
        "pagerank", help="PageRank of every vertex (networkx semantics)",
        formatter_class=_Formatter,
        description="PageRank with networkx semantics: parallel edges add up, self-loops "
                    "count, the rank of dangling vertices is redistributed by the "
                    "personalization vector (or --dangling).",
        epilog="examples:\n"
               "  asapgraph pagerank datasets/rmat-12.txt.gz --top 10\n"
               "  asapgraph pagerank graph.txt.gz -o ranks.csv --json --quiet\n"
               "  asapgraph pagerank graph.txt --personalization seeds.txt --top 20\n"
               "  asapgraph pagerank rmat:20 --np 4 --mode asap --json\n")
    add_input_options(p)
    g = p.add_argument_group("PageRank options")
    g.add_argument("--alpha", type=_alpha, default=0.85, metavar="A", help="damping factor")
    g.add_argument("--personalization", metavar="FILE", default=None,
                   help="teleport distribution: lines 'node value' (original ids, normalised "
                        "to sum 1; missing nodes get 0)")
    g.add_argument("--dangling", metavar="FILE", default=None,
                   help="where the rank of dangling vertices goes, same format (default: "
                        "the personalization)")
    from asapgraph.options import Given

    g.add_argument("--method", action=Given, choices=("auto", "jacobi", "gauss-seidel"),
                   default="auto",
                   help="sweep scheme of the single-process kernel")
    add_iteration_options(p, DEFAULT_TOL, DEFAULT_MAX_ITER)
    add_output_options(p, "rank")
    add_distributed_options(p)
    p.set_defaults(func=cmd_pagerank)
    return p


def cmd_pagerank(args):
    if wants_distributed(args):
        from asapgraph.cli.distributed import run_distributed

        return run_distributed(args)
    from asapgraph.programs.pagerank import pagerank

    check_output_path(args.output)
    prog = _progress(args)
    graph, load_s = load_input(args, prog)
    pers = None if args.personalization is None else _dense_vector(graph, args.personalization)
    dang = None if args.dangling is None else _dense_vector(graph, args.dangling)
    prog.stage(f"pagerank: {graph.n:,} vertices, {graph.m:,} edges, alpha {args.alpha}, "
               f"tol {args.tol:g}")
    res = pagerank(graph, alpha=args.alpha, personalization=pers, dangling=dang, tol=args.tol,
                   max_iter=args.max_iter, threads=args.threads, method=args.method,
                   progress=prog)
    status = "converged" if res.converged else "NOT converged"
    prog.done(f"{status} after {res.iterations} iterations, residual {res.residual:.3e}, "
              f"{res.compute_seconds:.3f} s")
    if not res.converged and not args.allow_unconverged:
        raise NotConvergedError(
            f"PageRank did not converge: error bound {res.error_bound:.3e} > tol {args.tol:g} "
            f"after "
            f"{res.iterations} iterations (raise --max-iter or --tol, or pass "
            f"--allow-unconverged to write the results anyway)")
    summary = {
        "command": "pagerank", "input": args.input, "vertices": graph.n, "edges": graph.m,
        "weighted": graph.weights is not None, "alpha": args.alpha, "tol": args.tol,
        "max_iter": args.max_iter, "iterations": res.iterations, "converged": res.converged,
        "residual": res.residual, "error_bound": res.error_bound, "load_seconds": load_s,
        "compute_seconds": res.compute_seconds, "mode": args.mode, "engine": "single-process",
        "ranks": 1, "method": res.method, "threads": res.threads,
    }
    emit_results(args, res.vertices(), res.ranks, "rank", summary, score_name="score")
    return EXIT_OK


# ----------------------------------------------------------------------------- vertex programs
#
# katz, wcc, sssp, bfs, labelprop, hits and run (a user's program) share one driver,
# _run_program_command: check -o and --mode before any work, hand off to the MPI engine
# when distributed, load, run the program, refuse unconverged results (exit 3), then
# write/print through _emit_program (same -o/--json/--top/--quiet behaviour as pagerank).

_NONFINITE_NOTE = (
    "Unreachable vertices are written as 'inf' (sssp) or -1 (bfs) in .csv/.tsv (Python's "
    "float('inf'), numpy.loadtxt and pandas.read_csv parse 'inf' back to infinity), as "
    "IEEE inf in .npy/.parquet, and as null in --json.")


class _Algo:
    """How one library algorithm is exposed on the command line."""

    def __init__(self, command, columns, accumulative, run, top="values", why_bsp=None,
                 extra_summary=None):
        self.command = command          # subcommand name
        self.columns = columns          # value column names, in file order
        self.accumulative = accumulative  # may run with --mode asap
        self.run = run                  # (args, graph, progress) -> ProgramResult
        self.top = top                  # "values" | "groups" | "reachable"
        self.why_bsp = why_bsp          # reason shown when --mode asap is refused
        self.extra_summary = extra_summary  # (args, graph, columns) -> dict


def _parse_param(text):
    """``NAME=VALUE`` for ``run --param``; VALUE as a Python int/float/bool/None literal,
    ``true``/``false`` (any case) as bool, anything else as a string."""
    import ast

    name, sep, raw = text.partition("=")
    name = name.strip()
    if not sep or not name.isidentifier():
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE with NAME an identifier, "
                                         f"got {text!r}")
    low = raw.strip().lower()
    if low in ("true", "false"):
        return name, low == "true"
    try:
        val = ast.literal_eval(raw.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return name, raw
    if isinstance(val, (int, float, bool, str)) or val is None:
        return name, val
    return name, raw


def _vertex_id(text):
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer vertex id, got {text!r}") from None


def _program_parser(sub, name, help, description, examples):
    """A subcommand parser with the input options and an option group for the algorithm."""
    p = sub.add_parser(name, help=help, formatter_class=_Formatter, description=description,
                       epilog="examples:\n" + "".join(f"  {e}\n" for e in examples))
    add_input_options(p)
    g = p.add_argument_group(f"{name} options")
    return p, g


def _program_common(p, value_help, tol_default=None, max_iter_default=None, tol=True,
                    tol_help=None, max_iter_help=None, mode_note=None):
    add_iteration_options(p, tol_default, max_iter_default, tol=tol, threads=False,
                          tol_help=tol_help, max_iter_help=max_iter_help)
    add_output_options(p, value_help)
    add_distributed_options(p)
    if mode_note:  # refine the --mode help of this command
        for a in p._actions:
            if a.dest == "mode":
                a.help = mode_note
    return p


def _dispatch_distributed(args):
    """Hand a program command to the MPI program driver (:mod:`.program_ranks`)."""
    from asapgraph.cli.program_ranks import run_distributed_program

    return run_distributed_program(args)


def _check_mode(args, accumulative, why):
    if args.mode == "asap" and not accumulative:
        raise InputError(f"asapgraph {args.command}", None,
                         f"--mode asap is not available: {why}; use --mode bsp")


def _format_table(head, rows):
    """Right-aligned text table from string rows (ends with a newline)."""
    if not rows:
        return ""
    w = [max(len(head[c]), *(len(r[c]) for r in rows)) for c in range(len(head))]
    lines = ["  ".join(h.rjust(w[c]) for c, h in enumerate(head))]
    lines += ["  ".join(r[c].rjust(w[c]) for c in range(len(head))) for r in rows]
    return "\n".join(lines) + "\n"


def _fmt(v):
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    return "%.10g" % float(v)


def _top_rows(algo, ids, columns, k):
    """``(heading, json_rows, table_rows)`` of the ``--top`` selection.

    * ``values``: the K highest values of the first column (ties: smaller id), every
      column shown;
    * ``groups``: the K largest groups of equal value (components, communities):
      ``label, size`` (ties: smaller label);
    * ``reachable``: the K farthest reachable vertices (unreachable ones excluded).
    """
    from asapgraph.graph.io.output import top_order

    names = list(columns)
    first = np.asarray(columns[names[0]])
    if algo.top == "groups":
        labels, sizes = np.unique(first, return_counts=True)
        sel = top_order(labels, sizes.astype(np.float64), k)
        head = ("rank", names[0], "size")
        js = [[int(labels[i]), int(sizes[i])] for i in sel]
        rows = [(str(r + 1), str(int(labels[i])), str(int(sizes[i]))) for r, i in enumerate(sel)]
        return head, js, rows
    idx = np.arange(first.shape[0])
    if algo.top == "reachable":
        idx = idx[np.isfinite(first) & (first >= 0)]
    sel = idx[top_order(ids[idx], first[idx].astype(np.float64), k)]
    head = ("rank", "node", *names)
    js = [[_node(ids[i]), *(np.asarray(columns[c])[i].item() for c in names)] for i in sel]
    rows = [(str(r + 1), str(_node(ids[i])), *(_fmt(np.asarray(columns[c])[i]) for c in names))
            for r, i in enumerate(sel)]
    return head, js, rows


def _emit_program(args, algo, ids, columns, summary, out=None):
    """``-o`` then ``--json`` / ``--top`` / default summary, as :func:`emit_results`."""
    from asapgraph.graph.io.output import json_dumps, write_values

    out = sys.stdout if out is None else out
    summary = dict(summary)
    if args.output is not None:
        t0 = time.perf_counter()
        write_values(args.output, ids, columns)
        summary["output"] = args.output
        summary["write_seconds"] = time.perf_counter() - t0
    if args.json:
        if args.top:
            summary["top"] = _top_rows(algo, ids, columns, args.top)[1]
        summary["peak_rss_bytes"] = peak_rss_bytes()
        out.write(json_dumps(summary) + "\n")
    elif args.top is not None:
        head, _, rows = _top_rows(algo, ids, columns, args.top)
        out.write(_format_table(head, rows))
    elif args.output is None:
        keys = ("input", "vertices", "edges", "source", "components", "largest_component",
                "communities", "largest_community", "reachable", "max_distance", "max_level",
                "iterations", "converged", "residual", "load_seconds", "compute_seconds")
        for k in keys:
            if k in summary and summary[k] is not None:
                v = summary[k]
                out.write(f"{k}: {v:.3g}\n" if isinstance(v, float) else f"{k}: {v}\n")
        head, _, rows = _top_rows(algo, ids, columns, 10)
        out.write(_format_table(head, rows))
    out.flush()


def _result_columns(algo, res):
    cols = res.columns()
    if algo.columns is not None:
        missing = [c for c in algo.columns if c not in cols]
        if missing:  # single-column programs name their column after the program
            if len(cols) == 1 and len(algo.columns) == 1:
                cols = {algo.columns[0]: next(iter(cols.values()))}
            else:
                raise RuntimeError(f"{algo.command}: result has columns {list(cols)}, "
                                   f"expected {algo.columns}")
        cols = {c: cols[c] for c in algo.columns}
    return {k: np.asarray(v) for k, v in cols.items()}


def _run_program_command(args, algo):
    """The driver shared by the program subcommands; returns the exit status."""
    check_output_path(args.output)
    _check_mode(args, algo.accumulative, algo.why_bsp)
    if wants_distributed(args):
        return _dispatch_distributed(args)
    prog = _progress(args)
    graph, load_s = load_input(args, prog)
    prog.stage(f"{args.command}: {graph.n:,} vertices, {graph.m:,} edges, mode {args.mode}")
    res = algo.run(args, graph, prog)
    cols = _result_columns(algo, res)
    max_iter = getattr(args, "max_iter", None)
    if not res.converged and not args.allow_unconverged:
        resid = res.stats.get("residual")
        rtxt = f", residual {resid:.3e}" if resid is not None else ""
        raise NotConvergedError(
            f"{args.command} did not converge after {res.iterations} iterations{rtxt} "
            f"(raise --max-iter, or pass --allow-unconverged to write the results anyway)")
    summary = {
        "command": args.command, "input": args.input, "vertices": graph.n, "edges": graph.m,
        "weighted": graph.weights is not None,
        "tol": getattr(args, "tol", None), "max_iter": max_iter,
        "iterations": res.iterations, "converged": res.converged,
        "residual": res.stats.get("residual"), "error_bound": res.stats.get("error_bound"),
        "load_seconds": load_s,
        "compute_seconds": res.stats.get("seconds"), "mode": args.mode,
        "engine": "single-process", "ranks": 1,
        "edges_scanned": res.stats.get("edges_scanned"), "columns": list(cols),
    }
    if algo.extra_summary is not None:
        summary.update(algo.extra_summary(args, graph, cols))
    _emit_program(args, algo, res.vertices(), cols, summary)
    return EXIT_OK


def _groups_summary(count_key, size_key):
    def f(args, graph, cols):
        lab = next(iter(cols.values()))
        if lab.size == 0:
            return {count_key: 0, size_key: 0}
        _, sizes = np.unique(lab, return_counts=True)
        return {count_key: int(sizes.size), size_key: int(sizes.max())}
    return f


def _reach_summary(max_key):
    def f(args, graph, cols):
        v = next(iter(cols.values()))
        ok = np.isfinite(v) & (v >= 0)
        mx = v[ok].max().item() if ok.any() else None
        return {"source": args.source, "reachable": int(np.count_nonzero(ok)), max_key: mx}
    return f


def _max_iter_or_none(args):
    return None if args.max_iter is None else int(args.max_iter)


# ---- katz

def _run_katz(args, graph, prog):
    from asapgraph.programs import KatzProgram, run

    p = KatzProgram(alpha=args.alpha, beta=args.beta, normalized=args.normalized,
                    weighted=graph.weights is not None)
    return run(p, graph, mode=args.mode, max_iter=args.max_iter, tol=args.tol, progress=prog)


_KATZ = _Algo("katz", ["katz"], True, _run_katz,
              extra_summary=lambda a, g, c: {"alpha": a.alpha, "beta": a.beta,
                                             "normalized": a.normalized})


def register_katz(sub):
    p, g = _program_parser(
        sub, "katz", "Katz centrality of every vertex (networkx semantics)",
        "Katz centrality x = alpha A^T x + beta (networkx katz_centrality), L2-normalised "
        "unless --no-normalized.  Parallel edges add up; with --weighted the edge weights "
        "are used.  Converges when alpha < 1 / (largest eigenvalue of A).",
        ["asapgraph katz graph.txt --alpha 0.05 --top 10",
         "asapgraph katz graph.txt.gz -o katz.csv --json --quiet",
         "asapgraph katz rmat:16 --mode asap --json"])
    g.add_argument("--alpha", type=_positive_float, default=0.1, metavar="A",
                   help="attenuation factor (networkx's default); must be below 1/B, B a "
                        "certified bound of the largest eigenvalue (else exit status 2 with "
                        "the bound)")
    g.add_argument("--beta", type=_nonneg_float, default=1.0, metavar="B",
                   help="constant term of every vertex")
    g.add_argument("--normalized", action=argparse.BooleanOptionalAction, default=True,
                   help="divide the result by its L2 norm")
    _program_common(p, "katz", 1e-10, 1000,
                    tol_help="bound on the L1 error of the unnormalised values: stop when the "
                             "certified bound (--json: error_bound) is <= T",
                    mode_note="bsp: Jacobi power series; asap: asynchronous delta "
                              "accumulation (Gauss-Seidel order); same fixed point")
    p.set_defaults(func=lambda a: _run_program_command(a, _KATZ))
    return p


# ---- wcc

def _run_wcc(args, graph, prog):
    from asapgraph.programs import WCCProgram, run

    return run(WCCProgram(), graph, mode=args.mode, max_iter=_max_iter_or_none(args),
               progress=prog)


_WCC = _Algo("wcc", ["component"], True, _run_wcc, top="groups",
             extra_summary=_groups_summary("components", "largest_component"))


def register_wcc(sub):
    p, g = _program_parser(
        sub, "wcc", "weakly connected components",
        "Weakly connected components by min-label propagation.  Every vertex gets the "
        "smallest original id of its component (column 'component').  --top K lists the K "
        "largest components (component, size).",
        ["asapgraph wcc graph.txt -o components.csv",
         "asapgraph wcc graph.txt.gz --top 5 --json",
         "asapgraph wcc rmat:18 --mode asap"])
    _program_common(p, "component", tol=False,
                    max_iter_help="superstep cap (default: none; the run ends after at most "
                                  "the component diameter + 1 supersteps)",
                    mode_note="bsp: synchronous label propagation; asap (the default "
                              "here): asynchronous union-find / worklist; same components")
    p.set_defaults(func=lambda a: _run_program_command(a, _WCC), mode="asap")
    return p


# ---- sssp, bfs

def _run_sssp(args, graph, prog):
    from asapgraph.programs import SSSPProgram, run
    from asapgraph.programs._util import dense_id

    src = dense_id(graph, args.source)
    return run(SSSPProgram(src), graph, mode=args.mode, max_iter=_max_iter_or_none(args),
               progress=prog)


def _run_bfs(args, graph, prog):
    from asapgraph.programs import BFSProgram, run
    from asapgraph.programs._util import dense_id

    src = dense_id(graph, args.source)
    return run(BFSProgram(src), graph, mode=args.mode, max_iter=_max_iter_or_none(args),
               progress=prog)


_SSSP = _Algo("sssp", ["distance"], True, _run_sssp, top="reachable",
              extra_summary=_reach_summary("max_distance"))
_BFS = _Algo("bfs", ["level"], True, _run_bfs, top="reachable",
             extra_summary=_reach_summary("max_level"))


def register_sssp(sub):
    p, g = _program_parser(
        sub, "sssp", "single-source shortest-path distances",
        "Shortest-path distances from --source (Bellman-Ford with a frontier; weights must "
        "be >= 0, unweighted graphs count 1 per edge; of parallel edges the lightest "
        "counts).  Column 'distance'.  " + _NONFINITE_NOTE + "  --top K lists the K "
        "farthest reachable vertices.",
        ["asapgraph sssp roads.txt --weighted --source 1 -o dist.csv",
         "asapgraph sssp graph.txt.gz --source 0 --top 10",
         "asapgraph sssp rmat:16 --source 3 --mode asap --json"])
    g.add_argument("--source", type=_vertex_id, required=True, metavar="ID",
                   help="original id of the source vertex (exit status 2 if not in the graph)")
    _program_common(p, "distance", tol=False,
                    max_iter_help="superstep cap (default: none)",
                    mode_note="bsp: synchronous Bellman-Ford; asap: asynchronous "
                              "label-correcting worklist; same distances")
    p.set_defaults(func=lambda a: _run_program_command(a, _SSSP))
    return p


def register_bfs(sub):
    p, g = _program_parser(
        sub, "bfs", "breadth-first-search levels (hops) from a source",
        "BFS levels (number of hops, weights ignored) from --source.  Column 'level'; "
        "unreachable vertices get -1 (inf is never written).  --top K lists the K farthest "
        "reachable vertices.",
        ["asapgraph bfs graph.txt --source 1 -o levels.csv",
         "asapgraph bfs graph.txt.gz --source 0 --json"])
    g.add_argument("--source", type=_vertex_id, required=True, metavar="ID",
                   help="original id of the source vertex (exit status 2 if not in the graph)")
    _program_common(p, "level", tol=False, max_iter_help="superstep cap (default: none)",
                    mode_note="bsp: level-synchronous BFS; asap: asynchronous worklist; "
                              "same levels")
    p.set_defaults(func=lambda a: _run_program_command(a, _BFS))
    return p


# ---- labelprop

def _run_labelprop(args, graph, prog):
    from asapgraph.programs import LabelPropProgram, run

    return run(LabelPropProgram(), graph, mode="bsp", max_iter=args.max_iter, tol=0.0,
               progress=prog)


_LABELPROP = _Algo(
    "labelprop", ["label"], False, _run_labelprop, top="groups",
    why_bsp="label propagation takes the most frequent neighbour label, which is neither "
            "a monotone (min/max) nor a linear (sum) combine, so its result depends on the "
            "processing order",
    extra_summary=_groups_summary("communities", "largest_community"))


def register_labelprop(sub):
    p, g = _program_parser(
        sub, "labelprop", "label-propagation communities",
        "Synchronous label propagation (Raghavan et al.): each vertex takes the most "
        "frequent label among its neighbours (undirected view, ties to the smallest "
        "label).  Column 'label' (an original vertex id).  Synchronous LPA can oscillate: "
        "then it stops at --max-iter with exit status 3 unless --allow-unconverged.  BSP "
        "only.  --top K lists the K largest communities (label, size).",
        ["asapgraph labelprop graph.txt -o communities.csv --allow-unconverged",
         "asapgraph labelprop graph.txt --top 10 --json"])
    _program_common(p, "label", max_iter_default=100, tol=False,
                    mode_note="bsp only (asap is refused with exit status 2: the mode "
                              "combine is not order-independent)")
    p.set_defaults(func=lambda a: _run_program_command(a, _LABELPROP))
    return p


# ---- hits

def _run_hits(args, graph, prog):
    from asapgraph.programs import hits

    return hits(graph, tol=args.tol, max_iter=args.max_iter, progress=prog)


_HITS = _Algo(
    "hits", ["hub", "authority"], False, _run_hits, top="values",
    why_bsp="HITS normalises the hub and authority vectors after every half-step, a global "
            "non-linear operation that asynchronous delta accumulation cannot express")


def register_hits(sub):
    p, g = _program_parser(
        sub, "hits", "HITS hub and authority scores (networkx semantics)",
        "Kleinberg's HITS by alternating power iteration; hubs and authorities each sum "
        "to 1 (networkx hits).  Edge weights are used with --weighted; parallel edges add "
        "up.  Columns 'hub,authority'.  --top K lists the K best hubs.  BSP only.",
        ["asapgraph hits graph.txt -o hits.csv",
         "asapgraph hits graph.txt.gz --top 10 --json"])
    _program_common(p, "hub,authority", 1e-8, 100,
                    tol_help="stop when the L1 change of the hub vector is <= T",
                    max_iter_help="give up after N HITS iterations (two supersteps each; exit "
                                  "status 3 unless --allow-unconverged)",
                    mode_note="bsp only (asap is refused with exit status 2: the "
                              "normalisation is global and non-linear)")
    p.set_defaults(func=lambda a: _run_program_command(a, _HITS))
    return p


# ---- run (a user's program)

def _load_user_program(args):
    from asapgraph.programs import load_program, validate_program

    params = dict(args.param)
    try:
        prog = load_program(args.program, **params)
        prog = validate_program(prog, args.mode)
    except (ValueError, TypeError, ImportError, SyntaxError, AttributeError) as exc:
        msg = str(exc).replace("\n", " ")
        raise InputError(args.program, getattr(exc, "lineno", None) if isinstance(
            exc, SyntaxError) else None, f"cannot load the program: {type(exc).__name__}: {msg}") from None
    return prog


def _run_user(args, graph, progress):
    from asapgraph.programs import run

    prog = args._program_obj
    try:
        return run(prog, graph, mode=args.mode, max_iter=args.max_iter, tol=args.tol,
                   progress=progress, steps=args.steps)
    except InputError:
        raise
    except Exception as exc:  # noqa: BLE001 - a bug in the user's program, not in asapgraph
        if os.environ.get("ASAPGRAPH_DEBUG", "") not in ("", "0"):
            import traceback

            traceback.print_exc()
        raise _UserProgramError(f"asapgraph run: {args.program} raised "
                                f"{type(exc).__name__}: {exc} (ASAPGRAPH_DEBUG=1 for the "
                                "traceback)") from None


def _check_steps(args):
    """``--steps K`` replaces ``--tol``/``--max-iter``: refuse both together, and ASAP."""
    if args.steps is None:
        return
    if args.tol is not None or args.max_iter is not None:
        raise InputError("asapgraph run", None, "--steps runs exactly K supersteps; it cannot be "
                         "combined with --tol or --max-iter")
    if args.mode != "bsp":
        raise InputError("asapgraph run", None, "--steps needs --mode bsp (ASAP has no global "
                         "supersteps)")


def _run_summary(args, graph, res):
    out = {"program": args.program, "params": dict(args.param)}
    if args.steps is not None:
        out["steps"] = args.steps
    return out


class _UserProgramError(Exception):
    """An exception raised inside a user's program (exit status 1, one line)."""


def cmd_run(args):
    check_output_path(args.output)
    prog = _load_user_program(args)
    name = getattr(prog, "name", type(prog).__name__)
    _check_mode(args, bool(getattr(prog, "accumulative", False)),
                f"program {name} does not declare accumulative = True (a delta form "
                "with an order-independent combine)")
    _check_steps(args)
    args._program_obj = prog
    algo = _Algo("run", None, True, _run_user, top="values",
                 extra_summary=_run_summary)
    try:
        return _run_program_command(args, algo)
    except _UserProgramError as exc:
        _err(str(exc))
        return EXIT_INTERNAL


def register_run(sub):
    p = sub.add_parser(
        "run", help="run your own vertex program (MODULE:CLASS or FILE.py:CLASS)",
        formatter_class=_Formatter,
        description="Load a vertex program (an asapgraph.programs.VertexProgram subclass) "
                    "from an importable module or a .py file, instantiate it with the "
                    "--param values and run it with asapgraph.programs.run.  Columns are "
                    "the names of the program's result (its 'name' for a single array).  "
                    "Non-finite values are written as inf/nan in text files and null in "
                    "--json.",
        epilog="examples:\n"
               "  asapgraph run my_module:MyProgram graph.txt -o out.csv\n"
               "  asapgraph run ./reach.py:Reach graph.txt --param source=3 --param "
               "limit=2.5 --top 10\n"
               "  asapgraph run mypkg.progs:Degree rmat:16 --mode asap --np 4\n")
    p.add_argument("program", metavar="MOD:CLS",
                   help="module path (package.module:Class, must be importable) or file "
                        "path (dir/file.py:Class)")
    add_input_options(p)
    g = p.add_argument_group("program options")
    g.add_argument("--param", type=_parse_param, action="append", default=[],
                   metavar="NAME=VALUE",
                   help="keyword argument of the program's constructor (repeatable); VALUE "
                        "is read as an int, float, true/false, None or else a string")
    g.add_argument("--steps", type=int, default=None, metavar="K",
                   help="run exactly K supersteps (BSP), whatever the residual, and exit 0; "
                        "replaces --tol and --max-iter")
    _program_common(p, "<columns>", None, None,
                    tol_help="tolerance of the program's termination test (default: the "
                             "program's default_tol)",
                    max_iter_help="superstep cap (default: the program's default_max_iter; "
                                  "exit status 3 when reached unless --allow-unconverged)",
                    mode_note="bsp: synchronous supersteps; asap: asynchronous (programs "
                              "declaring accumulative = True only, else exit status 2)")
    p.set_defaults(func=cmd_run)
    return p



# ----------------------------------------------------------------------------- info


def graph_stats(graph):
    """Counts of a graph, vectorised: self-loops, duplicates, dangling, degree summary.

    Returns
    -------
    dict
        ``vertices, edges, self_loops, duplicate_edges`` (edges whose ``(src, dst)`` pair
        occurred before), ``dangling`` (out-degree 0), ``in_degree``/``out_degree``
        ``{min, median, max}``, ``weighted``, ``original_id_min/max``.
    """
    n, m = graph.n, graph.m
    indptr = np.asarray(graph.indptr)
    dst = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
    src = np.asarray(graph.indices, dtype=np.int64)
    loops = int(np.count_nonzero(src == dst))
    if m:
        key = src * np.int64(n) + dst if n < 3_037_000_499 else None
        if key is not None:
            uniq = np.unique(key).shape[0]
        else:
            uniq = np.unique(np.stack([src, dst], axis=1), axis=0).shape[0]
    else:
        uniq = 0
    indeg = np.diff(indptr)
    outdeg = np.asarray(graph.out_degree)

    def summ(d):
        if d.size == 0:
            return {"min": 0, "median": 0.0, "max": 0}
        return {"min": int(d.min()), "median": float(np.median(d)), "max": int(d.max())}

    ids = graph.original_ids()
    return {
        "vertices": n, "edges": m, "self_loops": loops, "duplicate_edges": m - uniq,
        "dangling": int(np.count_nonzero(outdeg == 0)),
        "in_degree": summ(indeg), "out_degree": summ(outdeg),
        "weighted": graph.weights is not None,
        "original_id_min": int(ids.min()) if n else None,
        "original_id_max": int(ids.max()) if n else None,
    }


def register_info(sub):
    p = sub.add_parser("info", help="counts and degree summary of a graph",
                       formatter_class=_Formatter,
                       description="Vertices, edges, self-loops, duplicate edges, dangling "
                                   "vertices, in/out-degree min/median/max, weighted or not.",
                       epilog="example:\n  asapgraph info datasets/rmat-12.txt.gz --json\n")
    add_input_options(p)
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    p.set_defaults(func=cmd_info)
    return p


def cmd_info(args):
    from asapgraph.graph.io.output import json_dumps

    prog = _progress(args)
    graph, load_s = load_input(args, prog)
    st = {"input": args.input, **graph_stats(graph), "load_seconds": load_s}
    if args.json:
        sys.stdout.write(json_dumps(st) + "\n")
    else:
        lines = [
            f"input:            {args.input}",
            f"vertices:         {st['vertices']:,}",
            f"edges:            {st['edges']:,}",
            f"self-loops:       {st['self_loops']:,}",
            f"duplicate edges:  {st['duplicate_edges']:,}",
            f"dangling:         {st['dangling']:,}",
            "in-degree:        min {min}  median {median:g}  max {max}".format(**st["in_degree"]),
            "out-degree:       min {min}  median {median:g}  max {max}".format(**st["out_degree"]),
            f"weighted:         {'yes' if st['weighted'] else 'no'}",
            f"original ids:     {st['original_id_min']}..{st['original_id_max']}",
        ]
        sys.stdout.write("\n".join(lines) + "\n")
    sys.stdout.flush()
    return EXIT_OK


# ----------------------------------------------------------------------------- convert


def _atomic_save_binary(graph, out):
    """``io.save_binary`` to a temporary name next to ``out``, then rename."""
    from asapgraph.graph import io as _io

    d = os.path.dirname(os.path.abspath(out))
    tmp = os.path.join(d, f".{os.path.basename(out)}.{os.getpid()}.tmp.asg")
    try:
        _io.save_binary(graph, tmp)
        os.replace(tmp, out)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def register_convert(sub):
    p = sub.add_parser("convert", help="convert a graph to the binary .asg format",
                       formatter_class=_Formatter,
                       description="Read any supported input and write asapgraph's binary "
                                   "format (.asg), which loads at memory speed.",
                       epilog="example:\n  asapgraph convert web.txt.gz web.asg\n")
    add_input_options(p)
    p.add_argument("out", metavar="OUT", help="output file, must end in .asg")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    p.set_defaults(func=cmd_convert)
    return p


def cmd_convert(args):
    if not args.out.lower().endswith(".asg"):
        raise InputError(args.out, None, "the binary format needs the extension .asg")
    from asapgraph.graph.io.output import check_output_dir

    check_output_dir(args.out)
    prog = _progress(args)
    graph, load_s = load_input(args, prog)
    t0 = time.perf_counter()
    _atomic_save_binary(graph, args.out)
    prog.done(f"wrote {args.out}: {graph.n:,} vertices, {graph.m:,} edges "
              f"(load {load_s:.2f} s, write {time.perf_counter() - t0:.2f} s)")
    return EXIT_OK


# ----------------------------------------------------------------------------- generate

_TEXT_EXT = (".txt", ".el", ".tsv", ".edges")
_COMPRESS = {".gz": "gzip", ".bz2": "bz2", ".xz": "xz"}


def register_generate(sub):
    p = sub.add_parser("generate", help="write a synthetic graph (R-MAT, Erdős–Rényi)",
                       formatter_class=_Formatter,
                       description="Generate a graph from a seed and write it as a text "
                                   "edge list (.txt/.el/.tsv, optionally .gz/.bz2/.xz) or "
                                   "in the binary format (.asg).",
                       epilog="examples:\n"
                              "  asapgraph generate rmat --scale 20 -o rmat-20.txt.gz\n"
                              "  asapgraph generate er --vertices 1000000 --edges 16000000 "
                              "-o er.asg\n")
    gs = p.add_subparsers(dest="model", metavar="MODEL", required=True)
    r = gs.add_parser("rmat", help="R-MAT / Graph500 Kronecker (a=0.57, b=0.19, c=0.19)",
                      formatter_class=_Formatter)
    r.add_argument("--scale", type=_nonneg_int, required=True, metavar="S",
                   help="2**S vertices")
    r.add_argument("--edge-factor", type=_nonneg_int, default=16, metavar="EF",
                   help="EF * 2**S edges")
    e = gs.add_parser("er", help="Erdős–Rényi G(n, m), edges drawn with replacement",
                      formatter_class=_Formatter)
    e.add_argument("--vertices", type=_positive_int, required=True, metavar="N")
    e.add_argument("--edges", type=_nonneg_int, required=True, metavar="M")
    for q in (r, e):
        q.add_argument("--seed", type=_nonneg_int, default=0, metavar="N", help="random seed")
        q.add_argument("-o", "--output", required=True, metavar="FILE",
                       help="text edge list (.txt, .el, .tsv, + .gz/.bz2/.xz) or .asg")
        q.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
        q.set_defaults(func=cmd_generate)
    return p


def _generate_command_line(args):
    if args.model == "rmat":
        opts = f"--scale {args.scale} --edge-factor {args.edge_factor}"
    else:
        opts = f"--vertices {args.vertices} --edges {args.edges}"
    return (f"asapgraph generate {args.model} {opts} --seed {args.seed} "
            f"-o {os.path.basename(args.output)}")


def write_edge_list(path, src, dst, header_lines=(), compresslevel=9):
    """Write ``src<TAB>dst`` lines (with ``#`` header lines) atomically; compression by
    extension (.gz, .bz2, .xz; gzip with mtime 0 so the bytes are reproducible)."""
    import bz2
    import gzip
    import lzma

    from asapgraph.graph.io.output import atomic_write, format_rows

    low = path.lower()
    comp = next((c for ext, c in _COMPRESS.items() if low.endswith(ext)), None)
    with atomic_write(path, "wb") as raw:
        if comp == "gzip":
            f = gzip.GzipFile(filename="", fileobj=raw, mode="wb", compresslevel=compresslevel,
                              mtime=0)
        elif comp == "bz2":
            f = bz2.BZ2File(raw, "wb", compresslevel=compresslevel)
        elif comp == "xz":
            f = lzma.LZMAFile(raw, "wb")
        else:
            f = raw
        try:
            f.write("".join(f"# {h}\n" for h in header_lines).encode())
            step = 1 << 21
            for s in range(0, len(src), step):
                f.write(format_rows([src[s:s + step], dst[s:s + step]], sep="\t"))
        finally:
            if f is not raw:
                f.close()


def cmd_generate(args):
    from asapgraph.graph import generators
    from asapgraph.graph.core import Graph

    out = args.output
    low = out.lower()
    base = low
    for ext in _COMPRESS:
        if base.endswith(ext):
            base = base[: -len(ext)]
    binary = low.endswith(".asg")
    if not binary and os.path.splitext(base)[1] not in _TEXT_EXT:
        raise InputError(out, None, "unknown output format; use .txt, .el, .tsv or .edges "
                                    "(optionally + .gz/.bz2/.xz) or .asg")
    from asapgraph.graph.io.output import check_output_dir

    check_output_dir(out)
    prog = _progress(args)
    t0 = time.perf_counter()
    try:
        if args.model == "rmat":
            n = 1 << args.scale
            src, dst = generators.rmat(args.scale, args.edge_factor, args.seed)
            what = (f"R-MAT scale {args.scale} (Graph500 a=0.57 b=0.19 c=0.19, permuted ids), "
                    f"edge factor {args.edge_factor}, seed {args.seed}")
        else:
            n = args.vertices
            src, dst = generators.erdos_renyi(args.vertices, args.edges, args.seed)
            what = f"Erdős–Rényi G(n={n}, m={args.edges}) with replacement, seed {args.seed}"
    except ValueError as exc:
        raise InputError(f"generate {args.model}", None, str(exc)) from None
    prog.stage(f"generated {len(src):,} edges in {time.perf_counter() - t0:.2f} s; writing {out}")
    if binary:
        _atomic_save_binary(Graph.from_edges(src, dst, n=n, source=out), out)
    else:
        header = [
            f"Directed graph: {what}",
            f"Made by asapgraph {__version__}: {_generate_command_line(args)}",
            f"Nodes: {n} Edges: {len(src)} (duplicate edges and self-loops kept; vertices "
            "without edges do not appear)",
            "FromNodeId\tToNodeId",
        ]
        write_edge_list(out, src, dst, header)
    prog.done(f"wrote {out}: {n:,} vertices, {len(src):,} edges")
    return EXIT_OK


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


def build_parser():
    """The top-level ``argparse`` parser with every registered subcommand."""
    p = argparse.ArgumentParser(
        prog="asapgraph", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="asapgraph: graph processing (PageRank and vertex programs) on one "
                    "machine or over MPI, in BSP or ASAP (asynchronous approximate) mode.",
        epilog=_EPILOG)
    p.add_argument("--version", action="version", version=f"asapgraph {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for reg in COMMANDS:
        reg(sub)
    return p


def _mpi_abort_if_needed(code):
    """Under MPI with several ranks, a failing rank aborts the job instead of hanging it."""
    mpi = sys.modules.get("mpi4py.MPI")
    if mpi is None or code in (EXIT_OK, EXIT_UNCONVERGED):
        return
    try:
        if mpi.Is_initialized() and not mpi.Is_finalized() and mpi.COMM_WORLD.Get_size() > 1:
            sys.stderr.flush()
            mpi.COMM_WORLD.Abort(code)
    except Exception:  # noqa: BLE001 - aborting is best effort
        pass


def _err(msg):
    try:
        sys.stderr.write(msg.replace("\n", " ") + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def main(argv=None):
    """Run the ``asapgraph`` command line; returns the exit status (never raises).

    Parameters
    ----------
    argv : list of str, optional
        Arguments without the program name (default ``sys.argv[1:]``).
    """
    try:
        parser = build_parser()
        try:
            args = parser.parse_args(argv)
        except SystemExit as exc:  # --help, --version, usage errors (status 2)
            return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
        # the command line --np relaunches under mpiexec (main(argv) from Python included)
        args._cli_argv = [str(a) for a in (sys.argv[1:] if argv is None else argv)]
        if os.environ.get("ASAPGRAPH_LAUNCHED", "") in ("", "0"):  # the launcher checked
            from asapgraph.options import check_cli

            check_cli(args, wants_distributed(args),
                      args.np if getattr(args, "np", 1) > 1 else mpi_world_size_from_env())
        code = args.func(args)
    except InputError as exc:
        _report_input_error(str(exc))
        code = EXIT_INPUT
    except NotConvergedError as exc:
        _err(f"asapgraph: {exc}")
        code = EXIT_UNCONVERGED
    except KeyboardInterrupt:
        _err("asapgraph: interrupted")
        code = EXIT_INTERRUPTED
    except BrokenPipeError:
        # stdout was closed by the reader (e.g. '| head'): stop quietly
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        code = EXIT_PIPE
    except OSError as exc:
        if getattr(exc, "filename", None):
            _err(f"{exc.filename}: {exc.strerror or exc}")
            code = EXIT_INPUT
        else:
            code = _internal(exc)
    except MemoryError:
        _err("asapgraph: out of memory")
        code = EXIT_INTERNAL
    except Exception as exc:  # noqa: BLE001 - any other exception is a bug
        code = _internal(exc)
    _mpi_abort_if_needed(code)
    return code


def _internal(exc):
    if os.environ.get("ASAPGRAPH_DEBUG", "") not in ("", "0"):
        import traceback

        traceback.print_exc()
    _err(f"asapgraph: internal error: {type(exc).__name__}: {exc} "
         "(this is a bug; rerun with ASAPGRAPH_DEBUG=1 for the traceback)")
    return EXIT_INTERNAL


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
