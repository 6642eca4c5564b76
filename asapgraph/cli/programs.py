"""The vertex-program subcommands: ``katz``, ``wcc``, ``sssp``, ``bfs``, ``labelprop``,
``hits`` and ``run`` (a user's program), one :class:`Algo` each and one shared driver."""
from __future__ import annotations

import argparse
import os

from asapgraph.cli.common import (EXIT_INTERNAL, EXIT_OK, check_output_path, err, input_summary,
                                  load_input, progress_for, wants_distributed)
from asapgraph.cli.emit import emit_program, named_groups, result_columns
from asapgraph.cli.options import (Formatter, add_distributed_options, add_input_options,
                                   add_iteration_options, add_output_options, nonneg_float,
                                   nonneg_int, positive_float)
from asapgraph.errors import InputError, NotConvergedError
from asapgraph.options import ASAP_WORK_FACTOR

__all__ = ["Algo", "KATZ", "WCC", "SSSP", "BFS", "LABELPROP", "HITS", "parse_param",
           "unconverged_message", "user_program_line", "UserProgramError",
           "load_user_program", "check_steps", "run_summary", "cmd_run", "register_katz",
           "register_wcc", "register_sssp", "register_bfs", "register_labelprop",
           "register_hits", "register_run"]


# ----------------------------------------------------------------------------- vertex programs
#
# katz, wcc, sssp, bfs, labelprop, hits and run (a user's program) share one driver,
# _run_program_command: check -o and --mode before any work, hand off to the MPI engine
# when distributed, load, run the program, refuse unconverged results (exit 3), then
# write/print through emit_program (same -o/--json/--top/--quiet behaviour as pagerank).

_NONFINITE_NOTE = (
    "Unreachable vertices are written as 'inf' (sssp) or -1 (bfs) in .csv/.tsv (Python's "
    "float('inf'), numpy.loadtxt and pandas.read_csv parse 'inf' back to infinity), as "
    "IEEE inf in .npy/.parquet, and as null in --json.")


class Algo:
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


def parse_param(text):
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
    """The text as given: an integer id, or a vertex name with ``--labels``, decided by
    :func:`_check_source`, which knows whether ``--labels`` was given (``--labels
    --source 01`` names the vertex '01', not the one named '1')."""
    return text


def _check_source(args):
    src = getattr(args, "source", None)
    if not isinstance(src, str) or getattr(args, "labels", False):
        return
    from asapgraph.options import plain_id   # (light: the launcher imports no numpy)

    try:   # as an edge list's ids
        args.source = plain_id(src)
    except ValueError as e:
        raise InputError(f"asapgraph {args.command}", None,
                         f"--source: vertex id {src!r} has a sign (ids are plain digits)"
                         if str(e) == "has a sign" else
                         f"--source: expected an integer vertex id, got {src!r} (vertices "
                         "named by text need --labels)") from None


#: commands whose programs never read an edge weight (use_weights = False)
_UNWEIGHTED = {"wcc": "components follow the edges whatever their weights",
               "bfs": "levels count hops (sssp reads the weights)",
               "labelprop": "a vertex takes its neighbours' most frequent label, each "
                            "edge counting once"}


def _weights_option(args):
    """The option that asked for edge weights (``--weight-col`` or ``--weighted``), or None."""
    if getattr(args, "weight_col", None) is not None:
        return "--weight-col"
    return "--weighted" if getattr(args, "weighted", False) else None


def _check_weights_used(args):
    """``--weighted``/``--weight-col`` for a command that ignores weights: refused (it read
    the weights and reported them in --json, never using them)."""
    why = _UNWEIGHTED.get(args.command)
    opt = _weights_option(args)
    if why and opt:
        raise InputError(f"asapgraph {args.command}", None,
                         f"{opt} does not apply to {args.command}: {why}")


def _program_parser(sub, name, help, description, examples):
    """A subcommand parser with the input options and an option group for the algorithm."""
    p = sub.add_parser(name, help=help, formatter_class=Formatter, description=description,
                       epilog="examples:\n" + "".join(f"  {e}\n" for e in examples))
    add_input_options(p)
    g = p.add_argument_group(f"{name} options")
    return p, g


def _program_common(p, value_help, tol_default=None, max_iter_default=None, tol=True,
                    tol_help=None, max_iter_help=None, mode_note=None, top_help=None):
    add_iteration_options(p, tol_default, max_iter_default, tol=tol, threads=False,
                          tol_help=tol_help, max_iter_help=max_iter_help)
    add_output_options(p, value_help, top_help)
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




def _run_program_command(args, algo):
    """The driver shared by the program subcommands; returns the exit status."""
    check_output_path(args.output, args)
    _check_mode(args, algo.accumulative, algo.why_bsp)
    _check_source(args)
    _check_weights_used(args)
    if wants_distributed(args):
        return _dispatch_distributed(args)
    prog = progress_for(args)
    graph, load_s = load_input(args, prog)
    prog.stage(f"{args.command}: {graph.n:,} vertices, {graph.m:,} edges, mode {args.mode}")
    res = algo.run(args, graph, prog)
    cols = result_columns(algo, res)
    if algo.top == "groups" and getattr(graph, "labels", None) is not None:
        cols = named_groups(graph.labels, cols, graph.ids)
    if not res.converged and not args.allow_unconverged:
        raise NotConvergedError(unconverged_message(args.command, res))
    summary = {
        "command": args.command, "input": args.input, "vertices": graph.n, "edges": graph.m,
        "weighted": graph.weights is not None,
        "tol": summary_tol(args, getattr(args, "_program_obj", None)),
        "max_iter": summary_max_iter(args, getattr(args, "_program_obj", None)),
        "iterations": res.iterations, "converged": res.converged,
        "residual": res.stats.get("residual"), "error_bound": res.stats.get("error_bound"),
        "load_seconds": load_s,
        "compute_seconds": res.stats.get("seconds"), "mode": args.mode,
        "engine": "single-process", "ranks": 1,
        "edges_scanned": res.stats.get("edges_scanned"), "columns": list(cols),
        **input_summary(args, graph.weights is not None),
    }
    if res.stats.get("relative_error_bound") is not None:  # katz: in units of beta
        summary["relative_error_bound"] = res.stats["relative_error_bound"]
    if algo.extra_summary is not None:
        summary.update(algo.extra_summary(args, graph, cols))
    emit_program(args, algo, res.vertices(), cols, summary)
    return EXIT_OK


def unconverged_message(command, res):
    """``COMMAND did not converge after ...`` (after ``asapgraph: ``), on one process and on
    K ranks: what ``--max-iter`` capped, as ``asapgraph pagerank`` words it (ASAP on ranks:
    ``5 supersteps' worth of edge work (40 sweeps of the graph's edges over the ranks,
    127 rounds)``, :func:`asapgraph.options.asap_work_words`; see
    :func:`asapgraph.engine.distributed.run`)."""
    st = res.stats
    counts = st.get("max_iter_counts")
    if counts == "sweeps":
        from asapgraph.options import asap_work_words

        what = asap_work_words(st["max_iter"], res.iterations)
    elif counts == "waves":
        what = f"{res.iterations} rounds (termination waves; --max-iter caps them)"
    else:
        what = f"{res.iterations} iterations"
    resid = st.get("residual")
    rtxt = f", residual {resid:.3e}" if resid is not None else ""
    return (f"{command} did not converge after {what}{rtxt} (raise --max-iter, or pass "
            "--allow-unconverged to write the results anyway)")


def _groups_summary(count_key, size_key):
    def f(args, graph, cols):
        import numpy as np

        lab = next(iter(cols.values()))
        if lab.size == 0:
            return {count_key: 0, size_key: 0}
        _, sizes = np.unique(lab, return_counts=True)
        return {count_key: int(sizes.size), size_key: int(sizes.max())}
    return f


def _reach_summary(max_key):
    def f(args, graph, cols):
        import numpy as np

        v = next(iter(cols.values()))
        ok = np.isfinite(v) & (v >= 0)
        mx = v[ok].max().item() if ok.any() else None
        return {"source": args.source, "reachable": int(np.count_nonzero(ok)), max_key: mx}
    return f


def summary_tol(args, program=None):
    """The ``tol`` of a run for ``--json``, alike on 1 and K ranks: the ``--tol`` given (or
    the command's default); ``run`` without ``--tol``: the program's ``default_tol``, which
    the engines apply; commands that take no ``--tol`` (``wcc``, ``sssp``, ``bfs``,
    ``labelprop``): null (K ranks said 1e-10 and 0.0, one process null)."""
    tol = getattr(args, "tol", None)
    if args.command == "run" and getattr(args, "steps", None) is not None:
        return None  # --steps K replaces the test (it said the program's unused default_tol)
    if tol is None and args.command == "run" and program is not None:
        tol = getattr(program, "default_tol", None)
    return tol


def summary_max_iter(args, program=None):
    """The ``max_iter`` of a run for ``--json``, alike on 1 and K ranks: the ``--max-iter``
    given (or the command's default; null where there is no cap); ``run`` without it: the
    program's ``default_max_iter``, which the engines apply (it said null, where ``tol``
    showed the program's default), null with ``--steps K`` (``steps`` says it)."""
    max_iter = getattr(args, "max_iter", None)
    if (max_iter is None and args.command == "run" and program is not None
            and getattr(args, "steps", None) is None):
        max_iter = getattr(program, "default_max_iter", None)
    return None if max_iter is None else int(max_iter)


def _max_iter_or_none(args):
    return None if args.max_iter is None else int(args.max_iter)


# ---- katz

def _run_katz(args, graph, prog):
    from asapgraph.programs import KatzProgram, run

    p = KatzProgram(alpha=args.alpha, beta=args.beta, normalized=args.normalized,
                    weighted=graph.weights is not None)
    return run(p, graph, mode=args.mode, max_iter=args.max_iter, tol=args.tol, progress=prog)


KATZ = Algo("katz", ["katz"], True, _run_katz,
              extra_summary=lambda a, g, c: {"alpha": a.alpha, "beta": a.beta,
                                             "normalized": a.normalized})


def register_katz(sub):
    p, g = _program_parser(
        sub, "katz", "Katz centrality of every vertex (networkx semantics)",
        "Katz centrality x = alpha A^T x + beta (networkx katz_centrality), L2-normalised "
        "unless --no-normalized.  Parallel edges add up; with --weighted the edge weights "
        "are used.  Converges when alpha < 1 / (largest eigenvalue of A): an --alpha not "
        "below 1/B, B a certified bound of that eigenvalue, is refused with 1/B and a "
        "suggested alpha (networkx's default 0.1 is refused on most graphs).",
        ["asapgraph katz datasets/rmat-12.txt.gz --alpha 0.002 --top 10   # 1/B = 0.0037",
         "asapgraph katz graph.txt.gz --alpha 0.001 -o katz.csv --json --quiet",
         "asapgraph katz rmat:16 --alpha 0.001 --mode asap --json"])
    g.add_argument("--alpha", type=positive_float, default=0.1, metavar="A",
                   help="attenuation factor (networkx's default); must be below 1/B, B a "
                        "certified bound of the largest eigenvalue (else exit status 2 with "
                        "the bound)")
    g.add_argument("--beta", type=nonneg_float, default=1.0, metavar="B",
                   help="constant term of every vertex")
    g.add_argument("--normalized", action=argparse.BooleanOptionalAction, default=True,
                   help="divide the result by its L2 norm")
    _program_common(p, "katz", 1e-10, 1000,
                    tol_help="bound on the L1 error of the unnormalised values in units "
                             "of beta (the error divided by --beta; with beta 1, the error "
                             "itself): stop when the certified bound over beta (--json: "
                             "relative_error_bound; error_bound is the absolute one) is <= T",
                    mode_note="bsp: Jacobi power series; asap: asynchronous delta "
                              "accumulation (Gauss-Seidel order); same fixed point")
    p.set_defaults(func=lambda a: _run_program_command(a, KATZ))
    return p


# ---- wcc

def _run_wcc(args, graph, prog):
    from asapgraph.programs import WCCProgram, run

    return run(WCCProgram(), graph, mode=args.mode, max_iter=_max_iter_or_none(args),
               progress=prog)


WCC = Algo("wcc", ["component"], True, _run_wcc, top="groups",
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
                    top_help="print the K largest components as a table (component, size; "
                             "ties: smaller component)",
                    max_iter_help="superstep cap (default: none; the run ends after at most "
                                  "the component diameter + 1 supersteps)",
                    mode_note="bsp: synchronous label propagation; asap (the default "
                              "here): asynchronous union-find / worklist; same components")
    p.set_defaults(func=lambda a: _run_program_command(a, WCC), mode="asap")
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


SSSP = Algo("sssp", ["distance"], True, _run_sssp, top="reachable",
              extra_summary=_reach_summary("max_distance"))
BFS = Algo("bfs", ["level"], True, _run_bfs, top="reachable",
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
                    top_help="print the K farthest reachable vertices as a table (largest "
                             "distance; unreachable ones are not listed; ties: smaller id)",
                    max_iter_help="superstep cap (default: none)",
                    mode_note="bsp: synchronous Bellman-Ford; asap: asynchronous "
                              "label-correcting worklist; same distances")
    p.set_defaults(func=lambda a: _run_program_command(a, SSSP))
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
                    top_help="print the K farthest reachable vertices as a table (largest "
                             "level; unreachable ones are not listed; ties: smaller id)",
                    mode_note="bsp: level-synchronous BFS; asap: asynchronous worklist; "
                              "same levels")
    p.set_defaults(func=lambda a: _run_program_command(a, BFS))
    return p


# ---- labelprop

def _run_labelprop(args, graph, prog):
    from asapgraph.programs import LabelPropProgram, run

    return run(LabelPropProgram(), graph, mode="bsp", max_iter=args.max_iter, tol=0.0,
               progress=prog)


LABELPROP = Algo(
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
                    max_iter_help="give up after N >= 1 supersteps (BSP only: one label "
                                  "update of every vertex each; exit status 3 unless "
                                  "--allow-unconverged)",
                    top_help="print the K largest communities as a table (label, size; "
                             "ties: smaller label)",
                    mode_note="bsp only (asap is refused with exit status 2: the mode "
                              "combine is not order-independent)")
    p.set_defaults(func=lambda a: _run_program_command(a, LABELPROP))
    return p


# ---- hits

def _run_hits(args, graph, prog):
    from asapgraph.programs import hits

    return hits(graph, tol=args.tol, max_iter=args.max_iter, progress=prog)


HITS = Algo(
    "hits", ["hub", "authority"], False, _run_hits, top="values",
    why_bsp="HITS normalises the hub and authority vectors after every half-step, a global "
            "non-linear operation that asynchronous delta accumulation cannot express")


def register_hits(sub):
    p, g = _program_parser(
        sub, "hits", "HITS hub and authority scores (networkx semantics)",
        "Kleinberg's HITS by alternating power iteration; hubs and authorities each sum "
        "to 1 (networkx hits).  Edge weights are used with --weighted (non-negative: a "
        "negative one is refused, exit status 2); parallel edges add up.  Columns "
        "'hub,authority'.  --top K lists the K best hubs.  BSP only.",
        ["asapgraph hits graph.txt -o hits.csv",
         "asapgraph hits graph.txt.gz --top 10 --json"])
    _program_common(p, "hub,authority", 1e-8, 100,
                    top_help="print the K best hubs (highest hub score, with their "
                             "authority) as a table (ties: smaller id)",
                    tol_help="stop when the L1 change of the hub vector is <= T",
                    max_iter_help="give up after N HITS iterations (two supersteps each; exit "
                                  "status 3 unless --allow-unconverged)",
                    mode_note="bsp only (asap is refused with exit status 2: the "
                              "normalisation is global and non-linear)")
    p.set_defaults(func=lambda a: _run_program_command(a, HITS))
    return p


# ---- run (a user's program)

def _cwd_on_path(spec):
    """``MODULE:CLASS`` is looked up in the current directory first, as ``python -m
    asapgraph`` does (it puts the cwd first on ``sys.path``); the ``asapgraph`` console
    script starts with its own ``bin`` directory there instead, and refused a module
    that ``python -m asapgraph`` found.  The ranks of ``--np`` start with the cwd on
    ``sys.path`` already (``python -c``)."""
    import sys

    mod = spec.rpartition(":")[0]
    if not mod or mod.endswith(".py") or os.sep in mod:  # a file: imported by its path
        return
    try:
        cwd = os.getcwd()
    except OSError:  # the cwd was removed: python -m cannot search it either
        return
    if not any(p in ("", ".", cwd) for p in sys.path):
        sys.path.insert(0, cwd)


def load_user_program(args):
    from asapgraph.programs import load_program, validate_program

    from asapgraph.engine.program import ProgramError

    params = dict(args.param)
    if len(params) < len(args.param):  # (the last one won: the others were ignored)
        names = [k for k, _ in args.param]
        dup = next(k for k in names if names.count(k) > 1)
        raise InputError("asapgraph run", None, f"--param {dup} given {names.count(dup)} times "
                         f"({', '.join(f'{k}={v!r}' for k, v in args.param if k == dup)}): "
                         "give each parameter once")
    _cwd_on_path(args.program)
    try:
        prog = load_program(args.program, **params)
    except ProgramError as exc:  # loaded, but its declarations are wrong: what is wrong
        raise InputError(args.program, None, exc.message) from None
    except (ValueError, TypeError, ImportError, SyntaxError, AttributeError) as exc:
        msg = str(exc).replace("\n", " ")
        raise InputError(args.program, getattr(exc, "lineno", None) if isinstance(
            exc, SyntaxError) else None, f"cannot load the program: {type(exc).__name__}: {msg}") from None
    except Exception as exc:  # noqa: BLE001 - the user's module or constructor raised
        # (e.g. RuntimeError at import time): the program's error, worded as when a
        # callback raises (exit status 1), not "internal error ... this is a bug"
        raise UserProgramError(user_program_line(args.program, type(exc).__name__, exc)) from exc
    try:  # loaded: what its declarations do not allow (e.g. --mode asap, not accumulative)
        prog = validate_program(prog, args.mode)
    except ProgramError as exc:
        raise InputError(args.program, None, exc.message) from None
    except (ValueError, TypeError) as exc:   # (was "cannot load the program: ...")
        raise InputError(args.program, None, str(exc).replace("\n", " ")) from None
    return prog


def _run_user(args, graph, progress):
    from asapgraph.programs import run

    prog = args._program_obj
    try:
        return run(prog, graph, mode=args.mode, max_iter=args.max_iter, tol=args.tol,
                   progress=progress, steps=args.steps)
    except InputError:
        raise
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - a bug in the user's program, not
        # in asapgraph (a callback's sys.exit(5) too: it left one process with status 5 and
        # no line, K ranks with 'error on rank 0: SystemExit: 5')
        if os.environ.get("ASAPGRAPH_DEBUG", "") not in ("", "0"):
            import traceback

            traceback.print_exc()
        raise UserProgramError(user_program_line(args.program, type(exc).__name__, exc)) from None


def user_program_line(program, exc_type, text):
    """The one line of an exception raised inside a user's program (``asapgraph run``),
    on one process and on K ranks alike (exit status 1)."""
    text = str(text).replace("\n", " ")
    return (f"asapgraph run: {program} raised {exc_type}: {text} (ASAPGRAPH_DEBUG=1 for the "
            "traceback)")


def check_steps(args):
    """``--steps K`` replaces ``--tol``/``--max-iter``: refuse both together, ASAP, and
    ``--allow-unconverged`` (a steps run exits 0 whatever its residual)."""
    if args.steps is None:
        return
    if args.tol is not None or args.max_iter is not None:
        raise InputError("asapgraph run", None, "--steps K sets the supersteps (K, or fewer at a "
                         "fixpoint); it cannot be combined with --tol or --max-iter")
    if getattr(args, "allow_unconverged", False):   # (was accepted and did nothing)
        raise InputError("asapgraph run", None, "--allow-unconverged does not apply to --steps "
                         "K: a run of K supersteps (or fewer at a fixpoint) exits 0 already")
    if args.mode != "bsp":
        raise InputError("asapgraph run", None, "--steps needs --mode bsp (ASAP has no global "
                         "supersteps)")


def run_summary(args, graph, res):
    out = {"program": args.program, "params": dict(args.param)}
    if args.steps is not None:
        out["steps"] = args.steps
    return out


class UserProgramError(Exception):
    """An exception raised inside a user's program (exit status 1, one line: ``str``)."""

    one_line = True   # printed as it is, also by a rank (asapgraph.cli.distributed)


def _check_program_weights(args, prog, name):
    """``run --weighted``/``--weight-col`` for a program whose result cannot depend on
    the weights (:func:`asapgraph.engine.program.reads_edge_weights`: ``use_weights =
    False``, or an edge operator ``copy``/``add_one``, and no ``reads_weights``; a
    program that reads ``ctx.out_weight`` declares ``reads_weights = True``): refused,
    as ``wcc``, ``bfs`` and ``labelprop`` refuse it (:func:`_check_weights_used`).  It
    read the weights, said ``"weighted": true`` in --json and computed the unweighted
    result, on one process and on K ranks alike."""
    from asapgraph.engine.program import WEIGHTED_EDGE_OPS, reads_edge_weights

    opt = _weights_option(args)
    if not opt or reads_edge_weights(prog):
        return
    if not getattr(prog, "use_weights", True):
        why = "it declares use_weights = False"
        fix = "declare use_weights = True for its edge operator to read them, or"
    else:
        why = f"its edge_op {getattr(prog, 'edge_op', None)!r} reads no weight"
        fix = ("use edge_op " + " or ".join(repr(o) for o in WEIGHTED_EDGE_OPS)
               + ", or None with a message() that reads them; or declare")
    raise InputError(args.program, None,
                     f"{opt} does not apply to program {name}: {why}, so every edge counts "
                     f"1 whatever its weight ({fix} reads_weights = True if it reads "
                     "ctx.out_weight)")


def cmd_run(args):
    check_output_path(args.output, args)
    try:
        prog = load_user_program(args)
    except UserProgramError as exc:
        err(str(exc))
        return EXIT_INTERNAL
    name = getattr(prog, "name", type(prog).__name__)
    _check_program_weights(args, prog, name)
    _check_mode(args, bool(getattr(prog, "accumulative", False)),
                f"program {name} does not declare accumulative = True (a delta form "
                "with an order-independent combine)")
    check_steps(args)
    args._program_obj = prog
    algo = Algo("run", None, True, _run_user, top="values",
                 extra_summary=run_summary)
    try:
        return _run_program_command(args, algo)
    except UserProgramError as exc:
        err(str(exc))
        return EXIT_INTERNAL


def register_run(sub):
    p = sub.add_parser(
        "run", help="run your own vertex program (MODULE:CLASS or FILE.py:CLASS)",
        formatter_class=Formatter,
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
    g.add_argument("--param", type=parse_param, action="append", default=[],
                   metavar="NAME=VALUE",
                   help="keyword argument of the program's constructor (repeatable); VALUE "
                        "is read as an int, float, true/false, None or else a string")
    g.add_argument("--steps", type=nonneg_int, default=None, metavar="K",
                   help="run at most K supersteps (BSP), whatever the residual, and exit 0: "
                        "K unless the run reaches a fixpoint first (no active vertex, no "
                        "pending delta, a residual of 0), where more would change nothing "
                        "(--json: iterations); replaces --tol and --max-iter")
    _program_common(p, "<columns>", None, None,
                    top_help="print the K vertices with the highest value of the program's "
                             "first column (every column shown) as a table (ties: smaller id)",
                    tol_help="tolerance of the program's termination test (default: the "
                             "program's default_tol)",
                    max_iter_help="cap on the iterations (default: the program's "
                                  "default_max_iter; exit status 3 when reached unless "
                                  "--allow-unconverged): BSP supersteps; ASAP sweeps (one "
                                  "process) or, with --np, N supersteps' worth of edge work "
                                  f"({ASAP_WORK_FACTOR} x N sweeps of the graph's edges over "
                                  "the ranks; --json: work_budget_edges) (termination waves "
                                  "for programs with hooks)",
                    mode_note="bsp: synchronous supersteps; asap: asynchronous (programs "
                              "declaring accumulative = True only, else exit status 2)")
    p.set_defaults(func=cmd_run)
    return p

