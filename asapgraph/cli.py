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
import resource
import sys
import time

import numpy as np

from ._version import __version__
from .errors import InputError, NotConvergedError

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
  asapgraph info datasets/rmat-12.txt.gz
  asapgraph convert web.txt.gz web.asg
  asapgraph generate rmat --scale 20 -o rmat-20.txt.gz

Run 'asapgraph COMMAND --help' for the options of a command.
"""


class _Formatter(argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
    pass


# ----------------------------------------------------------------------------- arg types


def _positive_int(text):
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return v


def _nonneg_int(text):
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}")
    return v


def _nonneg_float(text):
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {text!r}") from None
    if not (v >= 0.0) or v == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a finite number >= 0, got {text!r}")
    return v


def _alpha(text):
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number in [0, 1), got {text!r}") from None
    if not (0.0 <= v < 1.0):
        raise argparse.ArgumentTypeError(f"alpha must be in [0, 1), got {text!r}")
    return v


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
    return g


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


def add_iteration_options(p, tol_default, max_iter_default=100):
    """``--tol``, ``--max-iter``, ``--allow-unconverged``, ``--threads``."""
    g = p.add_argument_group("iteration options")
    g.add_argument("--tol", type=_nonneg_float, default=tol_default, metavar="T",
                   help="stop when the L1 norm of the change between iterates is <= T "
                        "(absolute, not scaled by n)")
    g.add_argument("--max-iter", type=_nonneg_int, default=max_iter_default, metavar="N",
                   help="give up after N iterations (exit status 3 unless --allow-unconverged)")
    g.add_argument("--allow-unconverged", action="store_true",
                   help="write the results and exit 0 even when --max-iter was reached")
    g.add_argument("--threads", type=_positive_int, default=None, metavar="N",
                   help="OpenMP threads per process (default: all cores / OMP_NUM_THREADS)")
    return g


def add_distributed_options(p):
    """MPI options (``--np``, ``--mode`` ...) and network emulation, for run_distributed."""
    g = p.add_argument_group("distributed options (MPI)")
    g.add_argument("--np", type=_positive_int, default=1, metavar="P",
                   help="number of MPI processes; > 1 launches mpiexec (or runs under your "
                        "own mpiexec)")
    g.add_argument("--mode", choices=("bsp", "asap"), default="bsp",
                   help="bsp: synchronous supersteps; asap: asynchronous approximate "
                        "(with --np 1 both run the single-process kernel)")
    g.add_argument("--partition", choices=("range", "hash"), default="range",
                   help="how vertices are assigned to processes")
    g.add_argument("--fanout", type=_positive_int, default=2, metavar="F",
                   help="asap: fan-out of the stochastic reduction")
    g.add_argument("--window", type=_positive_int, default=1, metavar="W",
                   help="asap: iterations a process may run ahead of the slowest one")
    g.add_argument("--approx", type=_nonneg_float, default=0.0, metavar="EPS",
                   help="asap: skip sending updates smaller than EPS (0: exact)")
    g.add_argument("--seed", type=_nonneg_int, default=0, metavar="S",
                   help="seed of the randomised parts (asap reduction order)")
    g.add_argument("--mpiexec", default=None, metavar="PATH",
                   help="mpiexec to launch with (default: the one next to this Python, then PATH)")
    e = p.add_argument_group("network emulation (distributed runs)")
    e.add_argument("--latency", type=_nonneg_float, default=0.0, metavar="SEC",
                   help="added one-way latency per message, in seconds")
    e.add_argument("--bandwidth", type=_bandwidth, default=0.0, metavar="BYTES_PER_S",
                   help="link bandwidth in bytes/s, decimal suffixes k M G allowed "
                        "(1.25G = 10 Gbit/s); 0 = unlimited")
    e.add_argument("--jitter", type=_nonneg_float, default=0.0, metavar="SEC",
                   help="random extra latency, uniform in [0, SEC]")
    e.add_argument("--straggler", type=_straggler, action="append", default=[],
                   metavar="RANK:FACTOR",
                   help="make RANK compute FACTOR times slower (repeatable)")
    e.add_argument("--emulate-seed", type=_nonneg_int, default=0, metavar="S",
                   help="seed of the emulated jitter")
    return g


# ----------------------------------------------------------------------------- helpers


def peak_rss_bytes():
    """Peak resident set size of this process, in bytes (Linux reports KiB, macOS bytes)."""
    r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(r if sys.platform == "darwin" else r * 1024)


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


def wants_distributed(args, environ=None):
    """True when the run must go through :func:`asapgraph.dist.cli.run_distributed`."""
    if getattr(args, "np", 1) > 1:
        return True
    size = mpi_world_size_from_env(environ)
    return size is not None and size > 1


def _progress(args):
    from .progress import Progress

    return Progress(quiet=getattr(args, "quiet", False))


def load_input(args, progress=None):
    """Load ``args.input`` with the input options; returns ``(graph, load_seconds)``."""
    from . import io as _io

    weighted = bool(args.weighted or args.weight_col is not None)
    t0 = time.perf_counter()
    g = _io.load_graph(args.input, weighted=weighted, undirected=args.undirected,
                       weight_col=args.weight_col, progress=progress)
    return g, time.perf_counter() - t0


def check_output_path(path):
    """Fail before any work when ``-o`` cannot be written (bad extension, no directory)."""
    if path is None:
        return
    from .output import output_format

    output_format(path)
    d = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(d):
        raise InputError(path, None, f"directory {os.path.dirname(path) or '.'} does not exist")
    if os.path.isdir(path):
        raise InputError(path, None, "is a directory")


_check_output_path = check_output_path  # used by asapgraph.dist.cli


def read_vertex_values(path):
    """Read a two-column file ``node value`` (personalization, dangling distribution).

    Lines are ``ID VALUE`` separated by blanks, a tab or a comma; ``#`` and ``%``
    start comment lines; blank lines are skipped.  Values must be finite and >= 0,
    and an id may appear once.

    Returns
    -------
    ids : int64 array
    values : float64 array
    lines : int64 array
        1-based line number of each entry (for error messages).

    Raises
    ------
    InputError
        ``FILE:LINE: message`` for the first bad line.
    """
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        raise InputError(path, None, exc.strerror or str(exc)) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputError(path, line, "not UTF-8 text") from None
    raw = text.splitlines()
    keep = [(i + 1, ln) for i, ln in enumerate(raw)
            if ln.strip() and not ln.lstrip().startswith(("#", "%"))]
    if not keep:
        raise InputError(path, None, "no entries found (expected lines 'node value')")
    lines = np.fromiter((i for i, _ in keep), dtype=np.int64, count=len(keep))
    fields = [ln.replace(",", " ").split() for _, ln in keep]
    try:  # fast path: every line well formed
        arr = np.array(fields, dtype=object)
        if arr.ndim != 2 or arr.shape[1] != 2:
            raise ValueError
        ids = arr[:, 0].astype(np.int64)
        vals = arr[:, 1].astype(np.float64)
    except (ValueError, OverflowError):
        for (ln_no, _), fl in zip(keep, fields):
            if len(fl) != 2:
                raise InputError(path, ln_no,
                                 f"expected 2 fields 'node value', found {len(fl)}") from None
            try:
                int(fl[0])
            except ValueError:
                raise InputError(path, ln_no, f"node id {fl[0]!r} is not an integer") from None
            try:
                float(fl[1])
            except ValueError:
                raise InputError(path, ln_no, f"value {fl[1]!r} is not a number") from None
        raise InputError(path, None, "could not parse the file") from None
    bad = np.flatnonzero(~np.isfinite(vals) | (vals < 0))
    if bad.size:
        i = bad[0]
        raise InputError(path, int(lines[i]), f"value {float(vals[i])!r} must be finite and >= 0")
    order = np.argsort(ids, kind="stable")
    dup = np.flatnonzero(ids[order][1:] == ids[order][:-1])
    if dup.size:
        second = order[dup + 1]
        i = second[np.argmin(lines[second])]
        raise InputError(path, int(lines[i]), f"node {ids[i]} appears more than once")
    return ids, vals, lines


def _dense_vector(graph, path):
    """A node-value file as a dense float64 vector over the graph's vertices."""
    ids, vals, lines = read_vertex_values(path)
    orig = graph.original_ids()
    order = np.argsort(orig, kind="stable")
    sorted_ids = orig[order]
    pos = np.searchsorted(sorted_ids, ids)
    pos_c = np.minimum(pos, max(graph.n - 1, 0))
    found = (pos < graph.n) & (sorted_ids[pos_c] == ids) if graph.n else np.zeros(ids.shape, bool)
    if not found.all():
        i = int(np.flatnonzero(~found)[0])
        raise InputError(path, int(lines[i]), f"node {ids[i]} is not a vertex of the graph")
    vec = np.zeros(graph.n, dtype=np.float64)
    vec[order[pos]] = vals
    if not vec.sum() > 0:
        raise InputError(path, None, "the values sum to 0; at least one must be positive")
    return vec


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
    from .output import format_top, json_dumps, top_order, write_values

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
            summary["top"] = [[int(i), float(v)] for i, v in zip(ids[sel], values[sel])]
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
    from .pagerank import DEFAULT_MAX_ITER, DEFAULT_TOL

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
    g.add_argument("--method", choices=("auto", "jacobi", "gauss-seidel"), default="auto",
                   help="sweep scheme of the single-process kernel")
    add_iteration_options(p, DEFAULT_TOL, DEFAULT_MAX_ITER)
    add_output_options(p, "rank")
    add_distributed_options(p)
    p.set_defaults(func=cmd_pagerank)
    return p


def cmd_pagerank(args):
    if wants_distributed(args):
        from .dist.cli import run_distributed

        return run_distributed(args)
    from .pagerank import pagerank

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
            f"PageRank did not converge: residual {res.residual:.3e} > tol {args.tol:g} after "
            f"{res.iterations} iterations (raise --max-iter or --tol, or pass "
            f"--allow-unconverged to write the results anyway)")
    summary = {
        "command": "pagerank", "input": args.input, "vertices": graph.n, "edges": graph.m,
        "weighted": graph.weights is not None, "alpha": args.alpha, "tol": args.tol,
        "max_iter": args.max_iter, "iterations": res.iterations, "converged": res.converged,
        "residual": res.residual, "load_seconds": load_s,
        "compute_seconds": res.compute_seconds, "mode": args.mode, "engine": "single-process",
        "ranks": 1, "method": res.method, "threads": res.threads,
    }
    emit_results(args, res.ids, res.ranks, "rank", summary, score_name="score")
    return EXIT_OK


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
    from .output import json_dumps

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
    from . import io as _io

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
    d = os.path.dirname(os.path.abspath(args.out))
    if not os.path.isdir(d):
        raise InputError(args.out, None, f"directory {os.path.dirname(args.out)} does not exist")
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

    from .output import atomic_write, format_rows

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
    from . import generators
    from .graph import Graph

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
    d = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(d):
        raise InputError(out, None, f"directory {os.path.dirname(out)} does not exist")
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


# ----------------------------------------------------------------------------- parser, main

#: Subcommand registrars, in ``--help`` order.  Another command is added by appending
#: a ``register(subparsers) -> parser`` function that sets ``func`` on its parser.
COMMANDS = [register_pagerank, register_info, register_convert, register_generate]


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
        code = args.func(args)
    except InputError as exc:
        _err(str(exc))
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
