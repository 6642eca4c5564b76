"""``asapgraph bench``: run a named scenario or a grid, write JSON, Markdown and PNG plots.

Examples::

    asapgraph bench --quick                       # CI smoke test, about 30 s
    asapgraph bench --report                      # benchmarks/REPORT.md + PNGs, < 20 minutes
    asapgraph bench --scenario rq5
    asapgraph bench --grid --graphs rmat:16,cnr-2000 --ranks 2,4 --modes bsp,asap \\
        --fanout 1,2 --latency 0.001 --bandwidth 125e6 --straggler 1:3 --repeat 2

The lead wires :func:`register` into :mod:`asapgraph.cli`; until then run
``python -m asapgraph.bench.commands ...``.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

__all__ = ["register", "main", "run_command"]


def _floats(text):
    return [float(x) for x in str(text).split(",") if x.strip() != ""]


def _ints(text):
    return [int(x) for x in str(text).split(",") if x.strip() != ""]


def _twice(vals):
    """The first value ``vals`` holds twice (None if none): a list option's duplicate was
    dropped without a word (``--ranks 2,2`` ran once, ``--fanout 1,1`` too), so a typo for
    another value went unseen; refused now, as the engine refuses a rank given twice in a
    straggler spec."""
    seen = []
    for v in vals:
        if v in seen:
            return v
        seen.append(v)
    return None


def _refuse_twice(vals, text):
    dup = _twice(vals)
    if dup is not None:
        raise argparse.ArgumentTypeError(f"{dup!r} is given twice in {text!r}")
    return vals


def _positive_ints(text):
    """Comma-separated integers >= 1 (rank counts; ``--ranks 0`` ran and reported a
    'K=0' row), at most :func:`asapgraph.comm.launch.max_local_ranks`."""
    try:
        vals = _ints(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected integers >= 1, got {text!r}") from None
    if not vals or min(vals) < 1:
        raise argparse.ArgumentTypeError(f"expected integers >= 1, got {text!r}")
    _refuse_twice(vals, text)
    # every rank of a run is started on this host, as --np's (--ranks 100000 hung)
    from asapgraph.comm.launch import local_ranks_refusal

    why = local_ranks_refusal(max(vals), "run the command itself (asapgraph pagerank ...) "
                              "under your own mpiexec with a hostfile")
    if why is not None:
        raise argparse.ArgumentTypeError(why)
    return vals


def _int_at_least(lo, why):
    """An argparse type: an integer in ``[lo, 2**63)`` (a usage error otherwise: ``why``)."""
    def parse(text):
        try:
            v = int(text)
        except ValueError:
            v = lo - 1
        if not lo <= v < 2**63:
            raise argparse.ArgumentTypeError(f"expected an integer >= {lo}, got {text!r}")
        return v
    parse.__doc__ = why
    return parse


#: ``--repeat`` (``--repeat 0`` ran each run once)
_positive_int = _int_at_least(1, "--repeat 0 ran each run once")
#: ``--seed``, as every command's (``-1`` reached the ranks, whose expander's
#: ``default_rng`` refused it: every ASAP run failed, exit 1)
_seed = _int_at_least(0, "--seed -1 failed every ASAP run at the ranks' expander")


def _each(conv, ok, what):
    """An argparse type: a comma-separated list whose every item ``conv(item)`` satisfies
    ``ok`` (a usage error otherwise: ``--latency -1`` ran with a negative latency,
    ``--window 0`` / ``--fanout 0`` ran, ``--tol -1`` and ``--partition foo`` ended in a
    rank's traceback, exit 1)."""
    def parse(text):
        try:
            vals = [conv(x.strip()) for x in str(text).split(",") if x.strip() != ""]
        except ValueError:
            vals = None
        if not vals or not all(ok(v) for v in vals):
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
        return _refuse_twice(vals, text)
    return parse


_FINITE_NONNEG = _each(float, lambda v: 0.0 <= v < float("inf"), "finite numbers >= 0")
_POSITIVE = _each(int, lambda v: 1 <= v <= 2**31 - 1, "integers >= 1")
_PARTITIONS = _each(str, lambda v: v in ("range", "hash"), "range and/or hash")


def _nonneg_seconds(text):
    """``--budget``: 0 plans every run and skips it (tests use it), a negative budget
    was the same in disguise."""
    try:
        v = float(text)
    except ValueError:
        v = -1.0
    if not 0.0 <= v < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a finite number >= 0, got {text!r}")
    return v


def _positive_seconds(text):
    try:
        v = float(text)
    except ValueError:
        v = 0.0
    if not 0.0 < v < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a finite number > 0, got {text!r}")
    return v


def _strs(text):
    return [x.strip() for x in str(text).split(",")]


def _words(text):
    """``--modes``, ``--rebalance``, ``--schedule``: comma-separated words, none given
    twice, none empty in a list (``--schedule sweep,`` ran the engine's default schedule
    too); ``--schedule ""`` alone is the default, ``--modes ""`` an unknown mode."""
    vals = _strs(text)
    if len(vals) > 1 and not all(vals):
        raise argparse.ArgumentTypeError(f"expected comma-separated names, got {text!r} "
                                         "(an empty name)")
    return _refuse_twice(vals, text)


def _names(text):
    """``--graphs``: comma-separated names, none empty (``--graphs ,`` looked up the
    datasets directory itself: '/work/shared/datasets: is a directory')."""
    names = _strs(text)
    if not all(names):
        raise argparse.ArgumentTypeError(f"expected comma-separated graph names, got {text!r} "
                                         "(an empty name)")
    return _refuse_twice(names, text)


#: the file name of the bench's own refusals (``InputError``)
BENCH = "asapgraph bench"


def add_arguments(p):
    """Add the ``bench`` options to an argparse parser."""
    what = p.add_mutually_exclusive_group()
    what.add_argument("--quick", action="store_true",
                      help="CI smoke test: tiny graphs, 2-3 ranks, every plot (about 30 s; "
                           "the plots need matplotlib: pip install \"asapgraph[bench]\")")
    what.add_argument("--report", action="store_true",
                      help="the full RQ1-RQ5 + peers report (benchmarks/REPORT.md, < 20 min)")
    what.add_argument("--scenario", metavar="NAME", help="run a named scenario (see --list)")
    what.add_argument("--grid", action="store_true", help="run the cartesian product of the "
                      "grid options below")
    what.add_argument("--list", action="store_true", help="list the named scenarios")
    what.add_argument("--from-json", metavar="FILE", help="redraw the Markdown and plots of an "
                      "earlier run's JSON (nothing is run)")
    from asapgraph.options import Given, GivenAppend  # record which options were given

    g = p.add_argument_group("grid options (comma-separated lists; with --scenario only "
                             "--graphs, --ranks and --schedule apply, the others are refused)")
    g.add_argument("--graphs", default=None, type=_names, help="generator specs or files / shared "
                   "dataset names (default rmat:16; a spec without a seed gets seed 1 here, "
                   "the seed of benchmarks/REPORT.md's figures, where `asapgraph pagerank "
                   "rmat:S` uses seed 0: rmat:S:16:0 benches that graph); with --scenario: "
                   "keep only these")
    g.add_argument("--ranks", default=None, type=_positive_ints,
                   help="rank counts (default 4); with --scenario: keep only these")
    g.add_argument("--modes", action=Given, default="bsp,asap", type=_words)
    g.add_argument("--fanout", action=Given, default="2", type=_POSITIVE,
                   help="ASAP fanouts, clamped to K-1 on K ranks (records: fanout applied, "
                        "fanout_asked as given, as the engine's --json)")
    g.add_argument("--window", action=Given, default="1", type=_POSITIVE)
    g.add_argument("--approx", action=Given, default="0", type=_FINITE_NONNEG)
    g.add_argument("--latency", action=Given, default="0", type=_FINITE_NONNEG,
                   help="seconds per message")
    g.add_argument("--bandwidth", action=Given, default="0", type=_FINITE_NONNEG,
                   help="bytes/s per link (0: infinite)")
    g.add_argument("--straggler", default=[], action=GivenAppend,
                   help="RANK:FACTOR[,RANK:FACTOR] (repeat the option for several settings; "
                        "'none' for no straggler)")
    g.add_argument("--tol", action=Given, default="1e-6", type=_FINITE_NONNEG)
    g.add_argument("--partition", action=Given, default="range", type=_PARTITIONS)
    g.add_argument("--schedule", action=Given, default="", type=_words,
                   help="ASAP schedules, e.g. sweep,priority (default: the engine's); with "
                        "--scenario: every ASAP run of the engine's default schedule runs "
                        "with each of these, runs of another schedule are dropped")
    g.add_argument("--rebalance", action=Given, default="off", type=_words,
                   help="load balancing of the range partition, e.g. off,start "
                        "(asapgraph.engine.rebalance; default off)")
    g.add_argument("--pauses", action=Given, default=None, metavar="MIN:MAX:EVERY",
                   help="transient stragglers: every rank pauses U(MIN, MAX) seconds at "
                        "exponential gaps of mean EVERY seconds (e.g. 0.02:0.1:0.25)")
    p.add_argument("--clock", action=Given, choices=("wall", "virtual"), default="wall",
                   help="time of the emulated cluster: the host's (wall) or per-rank virtual "
                        "clocks (virtual: every run needs a latency > 0); the figures are "
                        "then virtual seconds, the wall seconds beside them")
    p.add_argument("--compute", action=Given, choices=("cpu", "model"), default="cpu",
                   help="how the emulation charges compute: thread CPU time (cpu) or the "
                        "modelled cost of the edges and vertices a sweep visits (model: "
                        "reproducible; asapgraph.engine.emulation)")
    p.add_argument("--repeat", type=_positive_int, default=None,
                   help="repetitions of every run")
    p.add_argument("--seed", action=Given, type=_seed, default=0,
                   help="seed of the grid's runs (a scenario's runs fix theirs)")
    p.add_argument("--peers", dest="peers", action="store_true", default=None,
                   help="also time single-machine peers (default: on for --report/--quick)")
    p.add_argument("--no-peers", dest="peers", action="store_false")
    p.add_argument("--timeout", type=_positive_seconds, default=None,
                   help="seconds without a finished run before a job is killed")
    p.add_argument("--budget", type=_nonneg_seconds, default=None,
                   help="seconds; runs not started by then are skipped")
    p.add_argument("--json-out", default=None, help="JSON file (default "
                   "benchmarks/results/<name>.json)")
    p.add_argument("--results-dir", default=None, help="reference cache and JSON directory "
                   "(default benchmarks/results)")
    p.add_argument("--outdir", default=None, help="PNG (and Markdown) directory (default "
                   "benchmarks/report)")
    p.add_argument("--markdown", default=None, help="Markdown file (default: "
                   "benchmarks/REPORT.md for --report, else <outdir>/<name>.md). Relative "
                   "paths, the defaults too, are from the working directory; missing "
                   "directories (of these four options) are created before any run, and one "
                   "that cannot be created or written is refused in one line, exit status 2")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    return p


def register(subparsers):
    """Add the ``bench`` subcommand to an ``argparse`` subparsers object."""
    p = subparsers.add_parser("bench", help="benchmark BSP vs ASAP (scenarios, grids, report)",
                              description=__doc__.split("\n")[0])
    add_arguments(p)
    # a hidden --np, refused in one line pointing at --ranks (asapgraph.options.
    # one_process_refusal), as info/convert/generate refuse theirs (cli.options.
    # add_one_process_np: the cli layer, above this one)
    p.add_argument("--np", dest="np_refused", default=None, metavar="K", help=argparse.SUPPRESS)
    p.set_defaults(func=run_command)
    return p


def _plan(args):
    from asapgraph.bench.scenarios import SCENARIOS, grid, scenario

    if args.quick:
        return "quick", scenario("quick", args.repeat), ["rmat:13"], 60.0, 150.0
    if args.report:
        return ("report", scenario("report", args.repeat), ["rmat:20", "cnr-2000"], 120.0,
                14 * 60)
    if args.scenario:
        if args.scenario not in SCENARIOS:   # (was SystemExit: exit 1, not bad input's 2)
            from asapgraph.errors import InputError

            raise InputError(BENCH, None, f"unknown scenario {args.scenario!r}; known: "
                             f"{', '.join(SCENARIOS)}")
        specs = scenario(args.scenario, args.repeat)
        if args.graphs:  # keep only these graphs of the scenario
            keep = set(args.graphs)
            if keep - {s.graph for s in specs}:
                from asapgraph.errors import InputError

                raise InputError(BENCH, None, f"scenario {args.scenario} has no graph "
                                 f"{sorted(keep - {s.graph for s in specs})[0]!r}")
            specs = [s for s in specs if s.graph in keep]
        if args.ranks:  # keep only these rank counts (one the scenario has not: refused,
            # as --graphs is; it kept nothing of it, and with no other count ran 0 runs, exit 0)
            have = {s.ranks for s in specs}
            if set(args.ranks) - have:
                from asapgraph.errors import InputError

                raise InputError(BENCH, None, f"scenario {args.scenario} has no run on "
                                 f"{min(set(args.ranks) - have)} ranks (its rank counts"
                                 f"{' for ' + ','.join(args.graphs) if args.graphs else ''}: "
                                 f"{','.join(map(str, sorted(have)))})")
            specs = [s for s in specs if s.ranks in set(args.ranks)]
        return args.scenario, _scenario_schedules(args, specs), [], 180.0, None
    strag = []
    for s in args.straggler or [""]:
        strag.append("" if s.lower() in ("", "none", "0") else s)
    for i, s in enumerate(strag):  # a setting given twice (ran once: see _twice)
        from asapgraph.engine.emulation import parse_straggler

        try:
            same = [t for t in strag[:i] if parse_straggler(t) == parse_straggler(s)]
        except ValueError:
            continue  # (refused with its reason in run_command)
        if same:
            from asapgraph.errors import InputError

            raise InputError(BENCH, None, f"--straggler {args.straggler[i]!r} is given twice "
                             f"(the same setting as {args.straggler[strag.index(same[0])]!r})")
    pauses = None
    if args.pauses:
        from asapgraph.engine.emulation import parse_pauses

        try:
            pauses = list(parse_pauses(args.pauses))
        except ValueError as e:
            from asapgraph.errors import InputError

            raise InputError(BENCH, None, f"--pauses: {e}") from None
    specs = grid(args.graphs or ["rmat:16"], args.ranks or [4], args.modes, args.fanout, args.window, args.approx,
                 args.latency, args.bandwidth, strag, args.tol, args.repeat or 1, args.partition,
                 args.seed, args.schedule or [""], pauses,
                 args.rebalance or ["off"])
    return "grid", specs, [], 180.0, None


#: grid options a scenario fixes itself (given with --scenario: refused, not ignored)
_GRID_ONLY = ("modes", "fanout", "window", "approx", "latency", "bandwidth", "straggler", "tol",
              "partition", "rebalance", "pauses", "seed")


def _scenario_schedules(args, specs):
    """``--scenario`` with ``--schedule S1[,S2]``: every ASAP run of the engine's default
    schedule (``schedule == ""``) runs once per listed schedule (copies side by side, so
    the interleaving of the repetitions is kept); ASAP runs that fix another schedule
    (the ablations) are dropped, those that fix a listed one are kept; BSP runs are
    unchanged.  Refuses the grid options a scenario fixes itself (an option is applied
    or refused, never ignored)."""
    from asapgraph.bench.scenarios import SCHEDULES, RunSpec
    from asapgraph.errors import InputError

    given = getattr(args, "_given", None) or set()
    for dest in _GRID_ONLY:
        if dest in given:
            raise InputError(BENCH, None, f"--{dest} does not apply to --scenario (the scenario "
                             f"fixes it; use --grid); with --scenario only --graphs, --ranks "
                             f"and --schedule apply")
    want = [x for x in (args.schedule or []) if x]
    if not want:
        return specs
    for sch in want:
        if sch not in SCHEDULES:
            raise InputError(BENCH, None, f"unknown schedule {sch!r} (expected "
                             f"{' or '.join(SCHEDULES)})")
    out = []
    for s in specs:
        if s.mode != "asap":
            out.append(s)
        elif not s.schedule:
            for sch in want:
                d = s.as_dict()
                d["schedule"] = sch
                out.append(RunSpec(**d))
        elif s.schedule in want:
            out.append(s)
    if not any(s.mode == "asap" for s in out):
        raise InputError(BENCH, None, f"scenario {args.scenario} has no ASAP run with schedule "
                         f"{' or '.join(want)}")
    return out


#: what applies besides the action itself: a run's options (fixed scenarios), ``--scenario``'s
#: filters, redrawing; the grid takes every option (its ASAP knobs need an ASAP mode)
_RUN_OPTS = ("repeat", "clock", "compute", "peers", "timeout", "budget", "json_out",
             "results_dir", "outdir", "markdown", "quiet")
_APPLIES = {"list": ("quiet",), "from_json": ("outdir", "markdown", "quiet"), "quick": _RUN_OPTS,
            "report": _RUN_OPTS,
            "scenario": _RUN_OPTS + ("graphs", "ranks", "schedule") + _GRID_ONLY}
_ACTIONS = ("quick", "report", "scenario", "grid", "list", "from_json")
#: grid options that only ASAP runs read (a BSP run ignores them: ``scenarios.grid``)
_ASAP_ONLY = ("fanout", "window", "approx", "schedule")


def _given_options(args):
    """The options of ``args`` given (recorded by :class:`asapgraph.options.Given`) or
    whose value is not the default, without the action flags (an option given with its
    default value was not refused where it does not apply: ``--grid --modes bsp --fanout
    2``, ``--list --modes bsp,asap``, ``--list --clock wall``)."""
    defaults = vars(add_arguments(argparse.ArgumentParser(add_help=False)).parse_args([]))
    given = getattr(args, "_given", None) or set()
    return sorted(k for k, v in defaults.items()
                  if k not in _ACTIONS and (k in given or getattr(args, k, v) != v))


def _check_applies(args, action, default=False):
    """Refuse (InputError) an option that ``action`` would ignore: ``--graphs`` with
    ``--quick`` (or with no action: the quick run), ``--modes`` with ``--list``, an
    output option with ``--list``, ``--fanout`` on a grid of BSP runs only ...  (each
    ran, or listed, without it: an option is applied or refused, never ignored)."""
    from asapgraph.errors import InputError

    given = _given_options(args)
    if action in _APPLIES:
        for dest in given:
            if dest not in _APPLIES[action]:
                what = {"from_json": "--from-json (it redraws an earlier run: only --outdir, "
                                     "--markdown and --quiet apply)",
                        "list": "--list (it lists the scenarios)"}.get(
                    action, f"--{action} (it runs a fixed scenario; use --grid)")
                if default:
                    what = "the default --quick run (it runs a fixed scenario; use --grid)"
                raise InputError(BENCH, None, f"--{dest.replace('_', '-')} does not apply to "
                                 f"{what}")
    elif action == "grid" and "asap" not in set(args.modes):
        for dest in given:
            if dest in _ASAP_ONLY:
                raise InputError(BENCH, None, f"--{dest} does not apply to a grid of BSP runs "
                                 f"only (--modes {','.join(args.modes)}): only ASAP runs read it")


def run_command(args):
    """Entry point of ``asapgraph bench``; returns the exit status.

    0: every run finished within its tolerance; 1: some run failed or timed out;
    2: bad input (unknown graph, bad option); 3: a run's final error exceeds its tolerance.
    """
    from asapgraph.errors import InputError
    from asapgraph.bench.scenarios import SCENARIOS, SCHEDULES

    default = not any(getattr(args, a) for a in _ACTIONS)
    if default:
        args.quick = True
    action = next(a for a in _ACTIONS if getattr(args, a))
    try:
        _check_applies(args, action, default)
    except InputError as e:
        sys.stderr.write(f"{e}\n")
        return 2
    if args.list:
        for name, (desc, _) in SCENARIOS.items():
            print(f"{name:<10} {desc}")
        return 0
    if args.from_json:
        return _rerender(args)
    say = (lambda s: None) if args.quiet else (
        lambda s: (sys.stderr.write(f"asapgraph bench: {s}\n"), sys.stderr.flush()))
    try:
        name, specs, peer_graphs, timeout, budget = _plan(args)
        for m in {s.mode for s in specs} - {"bsp", "asap"}:
            raise InputError(BENCH, None, f"unknown mode {m!r} (expected bsp or asap)")
        if getattr(args, "clock", "wall") == "virtual":
            bad = [s for s in specs if not (s.latency > 0 and s.ranks > 1)]
            if bad:
                raise InputError(BENCH, None, f"--clock virtual needs a latency > 0 and more "
                                 f"than one rank in every run ({bad[0].label()} has not)")
            for s in specs:
                s.clock = "virtual"
        if getattr(args, "compute", "cpu") != "cpu":
            bad = [s for s in specs if not s.emulated]
            if bad:
                raise InputError(BENCH, None, f"--compute {args.compute} needs an emulated run "
                                 f"({bad[0].label()} has no emulation)")
            for s in specs:
                s.compute = args.compute
        from asapgraph.options import REBALANCE_MODES

        for rb in {s.rebalance for s in specs} - set(REBALANCE_MODES):
            raise InputError(BENCH, None, f"unknown rebalance mode {rb!r} (expected "
                             f"{', '.join(REBALANCE_MODES)})")
        from asapgraph.engine.emulation import parse_straggler

        for s in specs:  # a factor for a rank the run has not would slow nothing
            try:
                bad = [r for r in parse_straggler(s.straggler) if not 0 <= r < s.ranks]
            except ValueError as e:
                raise InputError(BENCH, None, f"--straggler: {e}") from None
            if bad:
                raise InputError(BENCH, None, f"--straggler {s.straggler}: rank {bad[0]} is not "
                                 f"one of the {s.ranks} ranks of {s.label()}")
        for sch in {s.schedule for s in specs} - {"", *SCHEDULES}:
            raise InputError(BENCH, None, f"unknown schedule {sch!r} (expected "
                             f"{' or '.join(SCHEDULES)})")
        gap = os.environ.get("ASAPGRAPH_BENCH_GAP", "").strip()
        if gap:  # read by every rank of every job (benchmarks/README): a bad value failed
            try:  # each run with a traceback in its record, exit 1
                ok = 0.0 <= float(gap) < float("inf")
            except ValueError:
                ok = False
            if not ok:
                raise InputError(BENCH, None, f"ASAPGRAPH_BENCH_GAP={gap!r}: expected the "
                                 "seconds the ranks idle before each run, a finite number >= 0")
        from asapgraph.options import asap_tol_refusal, rebalance_refusal

        for s in specs:  # what asapgraph.engine.pagerank refuses: before any run, not a
            # failed run (exit 1, a traceback in the record) per refused combination
            why = ((asap_tol_refusal(s.tol) if s.mode == "asap" else None)
                   or rebalance_refusal(s.rebalance, s.partition, "jacobi", s.mode))
            if why:
                raise InputError(BENCH, None, f"{why} ({s.label()})")
        from asapgraph.bench.reference import resolve_graph

        sources = {}
        for gname in sorted({s.graph for s in specs} | set(peer_graphs)):
            src = resolve_graph(gname)[0]
            if src in sources:   # two names of one graph (rmat:6 and rmat:6:16:1, a
                # dataset's name and its path): the same runs twice under two labels
                raise InputError(BENCH, None, f"--graphs: {sources[src]!r} and {gname!r} are "
                                 f"the same graph ({src})")
            sources[src] = gname
    except InputError as e:
        sys.stderr.write(f"{e}\n")
        return 2
    timeout = args.timeout or timeout
    budget = args.budget if args.budget is not None else budget
    results_dir = Path(args.results_dir or Path("benchmarks") / "results")
    outdir = Path(args.outdir or Path("benchmarks") / "report")
    json_out = Path(args.json_out or results_dir / f"{name}.json")
    md = Path(args.markdown) if args.markdown else (
        Path("benchmarks") / "REPORT.md" if args.report else outdir / f"{name}.md")
    try:   # before any run: a bench of minutes must not fail at its last write
        made = _check_outputs([json_out, md], [outdir, results_dir],
                       given=[args.json_out, args.markdown], examples=["out.json", "out.md"])
    except InputError as e:
        sys.stderr.write(f"{e}\n")
        return 2
    do_peers = args.peers if args.peers is not None else bool(peer_graphs)
    if do_peers and not peer_graphs:
        peer_graphs = sorted({s.graph for s in specs})
    command = "asapgraph bench " + " ".join(getattr(args, "_argv", None) or [f"--{name}"])
    t0 = time.perf_counter()
    say(f"{name}: {len(specs)} runs" + (f", budget {budget / 60:.1f} min" if budget else ""))
    from asapgraph.bench.runner import machine_info, run_specs

    try:   # every graph read (its reference computed or found) before any run: a bad
        # edge-list file was refused only when its turn came, after the other graphs'
        # runs, which were then lost (exit 2, no JSON)
        from asapgraph.bench.reference import ensure_reference, resolve_graph

        for src in dict.fromkeys(resolve_graph(g)[0] for g in
                                 [*(s.graph for s in specs), *(peer_graphs if do_peers else [])]):
            ensure_reference(src, results_dir, progress=say)
    except InputError as e:
        _remove_empty(made)
        sys.stderr.write(f"{e}\n")
        return 2
    try:
        records = run_specs(specs, results_dir, run_timeout=timeout, progress=say, budget=budget)
        peer_rows = []
        if do_peers:
            from asapgraph.bench.peers import run_peers
            from asapgraph.bench.reference import ensure_reference, resolve_graph

            peers_deadline = None if budget is None else t0 + budget + 180.0
            for gname in peer_graphs:
                src, label = resolve_graph(gname)
                if peers_deadline is not None and time.perf_counter() > peers_deadline:
                    peer_rows.append({"graph": label, "impl": "peers", "ok": False,
                                      "skipped": "the time budget of the benchmark was used up"})
                    say(f"peers {label}: skipped (time budget used up)")
                    continue
                ref = ensure_reference(src, results_dir, progress=say)
                try:
                    peer_rows += run_peers(src, label, ref, repeat=1 if args.quick else 2,
                                           progress=say)
                except Exception as e:  # noqa: BLE001 - a peer failing must not lose the runs
                    peer_rows.append({"graph": label, "impl": "peers", "ok": False,
                                      "skipped": f"{type(e).__name__}: {e}"})
    except InputError as e:
        sys.stderr.write(f"{e}\n")
        return 2
    elapsed = time.perf_counter() - t0
    from asapgraph.bench.report import write_markdown

    import datetime

    from asapgraph.graph.io.atomic import atomic_write

    generated = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")

    def write_json(plots):
        json_out.parent.mkdir(parents=True, exist_ok=True)
        doc = {"name": name, "command": command, "machine": machine_info(),
               "elapsed_seconds": elapsed, "generated": generated,
               "levels": [f"{x:.0e}" for x in __import__(
                   "asapgraph.bench.scenarios", fromlist=["LEVELS"]).LEVELS],
               "records": records, "peers": peer_rows,
               "plots": [str(Path(p).resolve()) for p in plots], "markdown": str(md.resolve())}
        # (a temporary file of its own, removed if the write is interrupted: the fixed
        # NAME.json.tmp was left half-written by a Ctrl-C during the write, and two
        # benches writing one file shared it)
        with atomic_write(json_out, "w") as f:
            f.write(json.dumps(doc, indent=1, default=float))

    try:
        plots = _plots(records, outdir)
        write_markdown(md, records, peer_rows, plots, command, elapsed, generated)
    except Exception:   # a bug drawing the report must not lose the runs (the JSON was
        write_json([])  # written after the Markdown: an error there lost both)
        raise
    write_json(plots)
    nbad = sum(1 for r in records if not r.get("ok"))
    nwrong = sum(1 for r in records if r.get("ok") and not r.get("within_tolerance"))
    say(f"{name}: {len(records) - nbad}/{len(records)} runs ok in {elapsed / 60:.1f} min; "
        f"JSON {json_out}, Markdown {md}, {len(plots)} plots in {outdir}")
    if nwrong:
        return 3
    return 1 if nbad else 0


#: the pip extra that brings matplotlib (pyproject.toml, [project.optional-dependencies])
PLOTS_EXTRA = "bench"


def _plots(records, outdir):
    """The PNG plots of ``records`` (:func:`asapgraph.bench.plots.all_plots`), or none and
    one note on stderr when matplotlib is not installed (a plain ``pip install .``): the
    runs, the JSON and the Markdown do not need it."""
    try:
        import matplotlib
    except ImportError:
        sys.stderr.write("asapgraph bench: plots skipped: matplotlib is not installed "
                         f"(pip install \"asapgraph[{PLOTS_EXTRA}]\" or pip install "
                         "matplotlib)\n")
        return []
    del matplotlib  # (only whether it imports matters here)
    from asapgraph.bench.plots import all_plots

    return all_plots(records, outdir)


def _check_outputs(files, dirs, given=(), examples=()):
    """Create the output directories (as the writes would) and refuse, in one line, one
    where a file cannot be written (read-only, ``/proc``, a file in the way) or an output
    file that is a directory, before any run: ``--json-out /proc/x.json`` ran every run
    and then failed at the last write, after the plots and the Markdown were written.
    ``given``: the output files as typed (``--json-out out/`` names a directory: as a
    ``Path`` it lost its slash and the JSON was written to a file ``out``).  When one is
    refused, the directories created here are removed again (``--outdir new --json-out
    /proc/x.json`` left ``new`` and ``benchmarks/results`` behind)."""
    from asapgraph.errors import InputError
    from asapgraph.graph.io.atomic import check_output_dir, refuse_directory

    made = []
    try:
        def named_dirs():   # (examples[i]: a file name for files[i] / given[i])
            for f, ex in [*zip(given, examples), *zip(files, examples)]:
                if f:
                    refuse_directory(f, ex)

        named_dirs()
        for d in [*dirs, *(Path(f).parent for f in files)]:
            missing = []
            p = Path(d)
            while not os.path.lexists(p) and p != p.parent:
                missing.append(p)
                p = p.parent
            try:
                Path(d).mkdir(parents=True, exist_ok=True)
            except FileExistsError:
                raise InputError(os.fspath(d), None, "is a file, not a directory") from None
            except OSError as e:
                raise InputError(os.fspath(d), None, f"cannot create the directory: "
                                 f"{e.strerror or e}") from None
            finally:
                made += [m for m in missing if os.path.isdir(m)]
        named_dirs()   # (--json-out od --outdir od: od is a directory now)
        for f in files:
            check_output_dir(f)
        for d in dirs:
            check_output_dir(Path(d) / ".asapgraph-bench-probe")
    except InputError:
        _remove_empty(made)
        raise
    return made


def _remove_empty(dirs):
    """Remove those of ``dirs`` (created by :func:`_check_outputs`, deepest first) that
    are still empty."""
    for m in sorted(dirs, key=lambda d: len(Path(d).parts), reverse=True):
        for d in (Path(m) / "ref", Path(m)):   # (a results directory's empty cache)
            try:
                os.rmdir(d)
            except OSError:
                pass


def _rerender(args):
    from asapgraph.bench.report import write_markdown

    from asapgraph.errors import InputError

    try:
        doc = json.loads(Path(args.from_json).read_text())
        if not isinstance(doc, dict) or not isinstance(doc.get("records"), list):
            raise ValueError("no 'records' list")
    except (ValueError, UnicodeDecodeError) as exc:   # was 'internal error: JSONDecodeError'
        raise InputError(args.from_json, None, f"not a JSON file written by asapgraph bench "
                         f"({exc})") from None
    outdir = Path(args.outdir or Path("benchmarks") / "report")
    md = Path(args.markdown) if args.markdown else (
        Path("benchmarks") / "REPORT.md" if doc.get("name") == "report"
        else outdir / f"{doc.get('name', 'bench')}.md")
    _check_outputs([md], [outdir], given=[args.markdown], examples=["out.md"])
    plots = _plots(doc["records"], outdir)
    write_markdown(md, doc["records"], doc.get("peers"), plots, doc.get("command", ""),
                   doc.get("elapsed_seconds"), doc.get("generated"))
    if not args.quiet:
        sys.stderr.write(f"asapgraph bench: {md} and {len(plots)} plots in {outdir} redrawn from "
                         f"{args.from_json}\n")
    return 0


def main(argv=None):
    """``python -m asapgraph.bench.commands [options]`` (same options as ``asapgraph bench``)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    p = add_arguments(argparse.ArgumentParser(prog="asapgraph bench",
                                              description=__doc__.split("\n")[0]))
    args = p.parse_args(argv)
    args._argv = argv
    return run_command(args)


if __name__ == "__main__":
    sys.exit(main())
