"""Argument types and the option groups shared by the ``asapgraph`` subcommands.

A command's parser is built from :func:`add_input_options` (``INPUT``, ``--weighted``
...), :func:`add_output_options` (``-o``, ``--top``, ``--json``, ``--quiet``),
:func:`add_iteration_options` (``--tol``, ``--max-iter`` ...) and
:func:`add_distributed_options` (``--np``, ``--mode``, network emulation), with the
argparse types below (one line "expected ..." on a bad value, exit status 2).
"""
from __future__ import annotations

import argparse

from asapgraph.options import ASAP_WORK_FACTOR

__all__ = ["Formatter", "add_one_process_np", "positive_int", "nonneg_int", "small_int", "rank_count", "thread_count", "nonneg_float", "positive_float", "alpha",
           "add_input_options", "add_output_options", "add_iteration_options",
           "add_distributed_options"]


class Formatter(argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
    """Descriptions as written, and each option's default shown once: ``(default: X)`` is
    appended unless the help text states its default itself (it says "default"), and not
    for an absent value (None, a flag's False, an empty list), which the text explains."""

    def _get_help_string(self, action):
        text = action.help or ""
        d = action.default
        if "default" in text.lower() or d is None or d is False or (isinstance(d, list)
                                                                      and not d):
            return text
        return super()._get_help_string(action)


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


#: the largest value of an integer option (a C ``int64``) and of a count or column that the
#: kernels hold in a C ``int`` (--np, --threads, --weight-col ...): larger values are a
#: usage error, not an internal OverflowError
INT64_MAX = 2**63 - 1
INT32_MAX = 2**31 - 1


def _bounded_int(lo, hi, what):
    """An int type ``>= lo`` ("expected WHAT") and ``<= hi`` ("expected an integer <= HI")."""
    low = _checked(int, lambda v: v >= lo, what)

    def parse(text):
        v = low(text)
        if v > hi:
            raise argparse.ArgumentTypeError(f"expected an integer <= {hi}, got {text!r}")
        return v
    return parse


positive_int = _bounded_int(1, INT64_MAX, "a positive integer")
nonneg_int = _bounded_int(0, INT64_MAX, "an integer >= 0")
small_int = _bounded_int(1, INT32_MAX, "a positive integer")


def rank_count(text):
    """``--np``: :data:`small_int`, and no more ranks than the launcher starts on this host
    (:func:`asapgraph.comm.launch.local_ranks_refusal`: ``--np 100000`` hung)."""
    from asapgraph.comm.launch import local_ranks_refusal

    v = small_int(text)
    why = local_ranks_refusal(v)
    if why is not None:
        raise argparse.ArgumentTypeError(why)
    return v


def thread_count(text):
    """``--threads``: :data:`small_int`, and no more threads than ``--np`` starts ranks on
    this host (:func:`asapgraph.comm.launch.max_local_ranks`: 64 per core, at least 256).
    ``--threads 100000`` crashed one process (SIGSEGV, exit 139, nothing on stderr) and
    ``--threads 2147483647`` ended in libgomp's "Out of memory allocating ... bytes"
    (exit 1), while K ranks of a small graph ran and exited 0."""
    from asapgraph.comm.launch import LOCAL_RANKS_MIN, LOCAL_RANKS_PER_CORE, max_local_ranks

    v = small_int(text)
    limit = max_local_ranks()
    if v > limit:
        raise argparse.ArgumentTypeError(
            f"at most {limit} threads on this host ({LOCAL_RANKS_PER_CORE} per core, at least "
            f"{LOCAL_RANKS_MIN}), got {text!r}")
    return v


nonneg_float = _checked(float, lambda v: 0.0 <= v < float("inf"), "a finite number >= 0")
positive_float = _checked(float, lambda v: 0.0 < v < float("inf"), "a finite number > 0")


def alpha(text):
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


def _pauses(text):
    """``MIN:MAX:EVERY`` seconds (0 <= MIN <= MAX, EVERY > 0): transient stragglers."""
    from asapgraph.engine.emulation import parse_pauses

    try:
        return parse_pauses(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _straggler(text):
    """``RANK:FACTOR`` (rank >= 0, a finite factor >= 1), or a comma list of them (each rank
    once): those ranks compute FACTOR times slower (:func:`asapgraph.engine.emulation.
    parse_straggler`, which the engines and ``asapgraph bench`` read it with)."""
    from asapgraph.engine.emulation import parse_straggler

    try:
        ok = all(r.strip() and f.strip() for r, _, f in (p.partition(":") for p in
                                                            text.split(","))) \
            and parse_straggler(text)
    except ValueError:
        ok = False
    if not ok:
        raise argparse.ArgumentTypeError(
            f"expected RANK:FACTOR with RANK >= 0 and FACTOR a finite number >= 1, each rank "
            f"once, got {text!r}") from None
    return text



# ----------------------------------------------------------------------------- shared options


def add_input_options(p, positional=True):
    """``INPUT`` plus ``--weighted``, ``--undirected``, ``--weight-col``, ``--labels``,
    ``--header``."""
    if positional:
        p.add_argument("input", metavar="INPUT",
                       help="edge list (text, .gz/.bz2/.xz, .mtx, .npy, .asg), '-' for stdin, "
                            "or a generator spec such as rmat:20 or er:1000:5000")
    g = p.add_argument_group("input options")
    g.add_argument("--weighted", action="store_true",
                   help="read edge weights (third column unless --weight-col); an input "
                        "without weights (a generator spec, a binary graph saved unweighted, "
                        "a pattern .mtx) is refused")
    g.add_argument("--undirected", action="store_true",
                   help="treat every edge u v as the two arcs u->v and v->u")
    g.add_argument("--weight-col", type=small_int, default=None, metavar="K",
                   help="1-based column holding the weight (implies --weighted)")
    g.add_argument("--labels", action="store_true",
                   help="vertices are named by arbitrary tokens (strings), not integers; "
                        "outputs use the names")
    g.add_argument("--header", action="store_true",
                   help="the first line of a text edge list that is not blank or a comment "
                        "is a header (e.g. 'source,target,weight'), skipped whatever it "
                        "holds; refused for .mtx, .npy, .asg, .parquet and generator specs")
    return g



def add_output_options(p, value_name="value", top_help=None):
    """``-o``, ``--top``, ``--json``, ``--quiet`` (``top_help``: what ``--top K`` lists, where
    it is not the K vertices of highest value: the largest groups, the farthest reachable)."""
    g = p.add_argument_group("output options")
    g.add_argument("-o", "--output", metavar="OUT", default=None,
                   help=f"write every vertex as 'node,{value_name}' (original ids); format by "
                        "extension: .csv, .tsv (+ .gz), .npy, .parquet (needs pyarrow); the "
                        "file appears atomically")
    g.add_argument("--top", type=nonneg_int, default=None, metavar="K",
                   help=top_help or f"print the K vertices with the highest {value_name} as a "
                                    "table (ties: smaller id)")
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
        g.add_argument("--tol", type=nonneg_float, default=tol_default, metavar="T",
                       help=tol_help or "bound on the L1 error of the result: stop when the "
                                        "certified bound (--json: error_bound) is <= T "
                                        "(absolute, not scaled by n; BSP: alpha/(1-alpha) "
                                        "times the L1 change of a sweep)")
    # N >= 1: with 0 no iteration runs, and BSP (error bound inf) and ASAP (its start-up
    # waves' bound) reported different things about the start vector
    g.add_argument("--max-iter", type=positive_int, default=max_iter_default, metavar="N",
                   help=max_iter_help or "give up after N >= 1 iterations (exit status 3 "
                                         "unless --allow-unconverged): BSP supersteps; "
                                         "ASAP with --np, N supersteps' worth of edge work "
                                         f"({ASAP_WORK_FACTOR} x N sweeps of the graph's "
                                         "edges over the ranks; --json: work_budget_edges)")
    g.add_argument("--allow-unconverged", action="store_true",
                   help="write the results and exit 0 even when --max-iter was reached")
    if threads:
        from asapgraph.options import Given

        g.add_argument("--threads", action=Given, type=thread_count, default=None, metavar="N",
                       help="OpenMP threads of the process for the whole command: loading, "
                            "sweeps, output (default: all cores / OMP_NUM_THREADS; with --np K "
                            "in --mode bsp: sweep threads per rank, default 1); at most 64 "
                            "per core (at least 256)")
    return g


def add_one_process_np(p):
    """A hidden ``--np`` on a command that runs in one process (info, convert, generate,
    bench): refused in one line naming why (:func:`asapgraph.options.one_process_refusal`)
    instead of argparse's "unrecognized arguments: --np 2"."""
    p.add_argument("--np", dest="np_refused", default=None, metavar="K", help=argparse.SUPPRESS)


def add_distributed_options(p, command=None):
    """MPI options (``--np``, ``--mode`` ...) and network emulation, for run_distributed.

    ``command`` (default: the last word of the parser's ``prog``): an option that is always
    refused for it (its :data:`asapgraph.options.RULES` rule names other commands, e.g.
    ``--asap-form`` outside ``pagerank``) is left out of its ``--help`` and usage; it is
    still parsed, and refused in one line (exit 2) as before.
    """
    from asapgraph.options import (DEFAULT_SCHEDULE, REBALANCE_MODES, RULES, RUN_COMMANDS,
                                   SCHEDULES, Given, GivenAppend)

    g = p.add_argument_group("distributed options (MPI)")
    g.add_argument("--np", action=Given, type=rank_count, default=1, metavar="P",
                   help="number of MPI processes; > 1 launches mpiexec with P ranks on this "
                        "host, at most 64 per core (at least 256); for more, or several "
                        "hosts, run under your own mpiexec without --np")
    g.add_argument("--mode", choices=("bsp", "asap"), default="bsp",
                   help="bsp: synchronous supersteps; asap: asynchronous approximate "
                        "(with --np 1 both run the single-process kernel)")
    g.add_argument("--partition", action=Given, choices=("range", "hash"), default="range",
                   help="how vertices are assigned to processes")
    g.add_argument("--fanout", action=Given, type=small_int, default=2, metavar="F",
                   help="asap: fan-out of the stochastic reduction (peers a round "
                        "flushes to; beyond 8 ranks raised to ceil((K-1)/4), so every "
                        "peer is served within 8 rounds; --json: fanout, fanout_asked)")
    g.add_argument("--window", action=Given, type=small_int, default=1, metavar="W",
                   help="asap: un-ACKed messages allowed per peer (NOTIFY-ACK flow control)")
    g.add_argument("--approx", action=Given, type=nonneg_float, default=0.0, metavar="EPS",
                   help="asap: a peer's buffer holding less than EPS x the residual per peer "
                        "waits (fewer, larger messages; flushed before the end, so the answer "
                        "does not change; 0: send at once)")
    g.add_argument("--asap-form", action=Given, choices=("jacobi", "push"), default="jacobi",
                   help="asap PageRank local solver: jacobi (signed delta sweeps, teleport and "
                        "dangling mass spread by the messages; default) or push (leaky "
                        "Gauss-Seidel residual push)")
    g.add_argument("--schedule", action=Given, choices=SCHEDULES, default=None,
                   help="asap (jacobi form): what a sweep pushes -- every block above the "
                        "skip threshold (sweep), or first the blocks of largest residual per "
                        "edge, and only on the ranks that are behind (priority); same answer "
                        f"and bound; default: {DEFAULT_SCHEDULE} (measured: benchmarks/"
                        "REPORT.md, issue 14)")
    g.add_argument("--rebalance", action=Given, choices=REBALANCE_MODES, default="off",
                   help="pagerank, range partition: split the ranges by each rank's "
                        "measured speed -- probed before the graph is loaded, so that "
                        "nothing moves (start; a graph loaded once migrates after a short "
                        "calibration), and then also during the run whenever the measured "
                        "imbalance exceeds 15%% and moving pays (dynamic); default off")
    g.add_argument("--seed", action=Given, type=nonneg_int, default=0, metavar="S",
                   help="seed of the randomised parts (asap reduction order)")
    g.add_argument("--mpiexec", action=Given, default=None, metavar="PATH",
                   help="mpiexec to launch with (default: the one next to this Python, then PATH)")
    e = p.add_argument_group("network emulation (distributed runs)")
    e.add_argument("--latency", action=Given, type=nonneg_float, default=0.0, metavar="SEC",
                   help="added one-way latency per message, in seconds")
    e.add_argument("--bandwidth", action=Given, type=_bandwidth, default=0.0, metavar="BYTES_PER_S",
                   help="link bandwidth in bytes/s, decimal suffixes k M G allowed "
                        "(1.25G = 10 Gbit/s); 0 = unlimited")
    e.add_argument("--jitter", action=Given, type=nonneg_float, default=0.0, metavar="SEC",
                   help="random extra latency, uniform in [0, SEC]")
    e.add_argument("--straggler", type=_straggler, action=GivenAppend, default=[],
                   metavar="RANK:FACTOR",
                   help="make RANK compute FACTOR times slower (repeatable)")
    e.add_argument("--emulate-seed", action=Given, type=nonneg_int, default=0, metavar="S",
                   help="seed of the emulated jitter")
    e.add_argument("--clock", action=Given, choices=("wall", "virtual"), default="wall",
                   help="time of the emulated cluster: the host's (wall) or per-rank virtual "
                        "clocks advanced by CPU time and the network model (virtual: "
                        "reproducible on a shared host; needs --latency > 0)")
    e.add_argument("--pauses", action=Given, type=_pauses, default=None,
                   metavar="MIN:MAX:EVERY",
                   help="transient stragglers: every rank pauses U(MIN, MAX) seconds at "
                        "exponential gaps of mean EVERY seconds of its clock (seeded by "
                        "--emulate-seed), as garbage collection or a noisy neighbour does")
    e.add_argument("--compute", action=Given, choices=("cpu", "model"), default="cpu",
                   help="with --clock virtual: charge compute by thread CPU time (cpu) or by "
                        "a calibrated model of the edges, vertices and messages of the work "
                        "(model: a seeded run repeats exactly; constants in --json)")
    command = command or p.prog.split()[-1]
    if command in RUN_COMMANDS:
        for a in g._group_actions + e._group_actions:
            rule = RULES.get(a.dest)
            if rule is not None and command not in rule.commands:
                a.help = argparse.SUPPRESS
    return g

