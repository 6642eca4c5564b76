"""Python API of the distributed engines: :func:`pagerank` on an mpi4py communicator."""
from __future__ import annotations

import os
import time
from dataclasses import dataclass, field

import numpy as np

from asapgraph import options as _options
from asapgraph.errors import InputError
from asapgraph.comm.mpi import agree, gatherv, mpi
from asapgraph.engine import evtrace
from asapgraph.engine.emulation import Emulator
from asapgraph.engine.stats import virtual_figures

__all__ = ["pagerank", "load", "LoadedGraph", "DistResult"]


@dataclass
class LoadedGraph:
    """A partitioned graph loaded once (collective), reusable by several runs.

    Pass it as ``source`` to :func:`pagerank` on the same communicator; the runs then
    skip reading, id mapping and the shuffle.
    """

    lg: object
    part: object
    idmap: object
    source: object
    load_seconds: float
    weighted: bool


def load(source, comm=None, partition="range", weighted=False, undirected=False,
         weight_col=None, chunk_bytes=1 << 21, seed=None, header=False):
    """Read, map ids, partition and shuffle ``source`` once (collective); see :func:`pagerank`.

    ``weight_col`` is 1-based (default 3, as :func:`asapgraph.load_graph`); ``seed`` seeds
    a generator spec that names none (``rmat:S`` is ``rmat:S:16:0`` otherwise); ``header``
    as :func:`pagerank`."""
    from asapgraph.partition.loader import load_partitioned

    if comm is None:
        comm = mpi().COMM_WORLD
    source = _check_source(source, weighted, header)
    t = time.perf_counter()
    lg, part, idmap = load_partitioned(source, comm, partition, weighted, undirected,
                                       _options.weight_col_index(weight_col), chunk_bytes, seed,
                                       header=bool(header))
    return LoadedGraph(lg, part, idmap, source, time.perf_counter() - t, bool(weighted))


@dataclass
class DistResult:
    """Result of a distributed PageRank (complete on rank 0 only).

    Attributes
    ----------
    ranks : float64 array or None
        PageRank of every vertex, ordered by original id (rank 0; None elsewhere).
    ids : int64 array or None
        Original ids, increasing (rank 0).
    iterations : int
        Supersteps (BSP) or rounds of the slowest rank (ASAP).
    converged : bool
    residual : float
        The L1 change of the last sweep (BSP), as on one process; ASAP, which has no
        change between sweeps: the change that certifies its bound,
        ``error_bound * (1 - alpha) / alpha`` (``error_bound`` at alpha 0).
    stats : dict
        Accounting (see :mod:`asapgraph.engine.stats`); rank 0 has totals and ``per_rank``.
    error_bound : float
        Certified L1 error of the result (``converged`` means ``error_bound <= tol``).
    """

    ranks: object
    ids: object
    iterations: int
    converged: bool
    residual: float
    stats: dict = field(default_factory=dict)
    error_bound: float = float("nan")


def _peak_rss_mb():
    from asapgraph._rss import peak_rss_bytes

    return peak_rss_bytes() / 2**20


_NO_KEY = object()


def _is_vertex_id(k):
    """An original vertex id of a personalization dict: an integer (an int, a numpy
    integer, a float without a fraction), not a string or a bool."""
    if isinstance(k, (str, bytes, bool, np.bool_)):
        return False
    try:
        return int(k) == k
    except (TypeError, ValueError, OverflowError):
        return False


def _local_vector(comm, spec, orig, name, where):
    """Distribute a per-vertex vector (dict / (ids, values) / file path) to owned vertices,
    normalised to sum 1; the checks and messages of the single-process run
    (:func:`asapgraph.options.read_vertex_values`, an unknown id is refused)."""
    MPI = mpi()
    if spec is None:
        return None
    err, ids, vals, lines, path = None, None, None, None, None
    if comm.Get_rank() == 0:
        try:
            if isinstance(spec, _options.LabelledValues):  # --labels: names -> dense ids
                path = spec.path
                ids, vals, lines = spec.read()
            elif isinstance(spec, (str, os.PathLike)):
                path = os.fspath(spec)
                ids, vals, lines = _options.read_vertex_values(path)
            else:
                if isinstance(spec, dict):
                    bad = next((k for k in spec if not _is_vertex_id(k)), _NO_KEY)
                    if bad is not _NO_KEY:  # (int('a') failed on rank 0 as "invalid
                        # literal for int()", and int(3.7) read vertex 3)
                        raise InputError(where, None, f"{name}: vertex ids must be "
                                                      f"integers, got {bad!r}")
                    ids = np.fromiter((int(k) for k in spec), dtype=np.int64, count=len(spec))
                    vals = np.fromiter((float(v) for v in spec.values()), dtype=np.float64,
                                       count=len(spec))
                else:
                    ids, vals = (np.asarray(a) for a in spec)
                    whole = ids.dtype.kind in "iu" or (ids.dtype.kind == "f" and bool(
                        np.all(np.isfinite(ids) & (ids == np.trunc(ids)))))
                    if not whole:  # (a float 3.7 read vertex 3, strings failed in int())
                        raise InputError(where, None, f"{name}: vertex ids must be "
                                                      f"integers, got an array of {ids.dtype}")
                    ids, vals = ids.astype(np.int64), vals.astype(np.float64)
                if not np.all(np.isfinite(vals)):
                    raise InputError(where, None, f"{name}: values must be finite")
                if np.any(vals < 0):
                    raise InputError(where, None, f"{name}: values must be >= 0")
        except Exception as e:  # noqa: BLE001
            err = e
    agree(comm, err)
    path = comm.bcast(path, root=0)
    cnt = comm.bcast(0 if ids is None else len(ids), root=0)
    if comm.Get_rank() != 0:
        ids, vals = np.empty(cnt, np.int64), np.empty(cnt, np.float64)
        lines = np.zeros(cnt, np.int64)
    elif lines is None:
        lines = np.zeros(cnt, np.int64)
    comm.Bcast([ids, MPI.INT64_T], root=0)
    comm.Bcast([vals, MPI.DOUBLE], root=0)
    comm.Bcast([lines, MPI.INT64_T], root=0)
    o = np.argsort(orig, kind="stable")
    so = orig[o]
    pos = np.minimum(np.searchsorted(so, ids), max(len(so) - 1, 0))
    hit = (so[pos] == ids) if len(so) else np.zeros(len(ids), bool)
    held = hit.astype(np.int64)
    comm.Allreduce(MPI.IN_PLACE, [held, MPI.INT64_T], op=MPI.SUM)
    if not held.all():  # the first missing entry in file order, as on one process
        missing = np.flatnonzero(held == 0)
        if path is not None:
            agree(comm, _options.unknown_vertex_error(path, lines, ids, int(missing[0])))
        agree(comm, InputError(where, None, f"{name}: {missing.size} vertex id(s) not in the "
                                            f"graph, e.g. {ids[missing[:5]].tolist()}"))
    with np.errstate(over="ignore"):
        big = not np.isfinite(vals.sum())  # the same full vector on every rank
    if big:  # 1e308 + 1e308: divided by the largest first (as on one process)
        vals = vals / float(vals.max())
    v = np.zeros(len(orig), dtype=np.float64)
    np.add.at(v, o[pos[hit]], vals[hit])
    tot = comm.allreduce(float(v.sum()), op=MPI.SUM)
    if not tot > 0:
        agree(comm, _options.zero_sum_error(path) if path is not None else
              InputError(where, None, f"{name}: values sum to 0 (need a positive sum)"))
    return v / tot


def _check_source(source, weighted, header=False):
    """``source`` as :func:`pagerank` reads it, or TypeError saying what it takes: a
    networkx graph or a :class:`~asapgraph.Graph` reached the file reader and failed with
    "expected str, bytes or os.PathLike object, not DiGraph".  A generator spec with
    ``weighted`` is refused as the command line refuses ``--weighted`` with one, and
    ``header`` with an input that is not read here as a file (it skips a text edge list's
    header line; the other files are refused by the loader, as on one process)."""
    from asapgraph.graph.io._readers import _check_args, header_refusal
    from asapgraph.partition.reading import DenseEdges

    _check_args(header=header)
    if isinstance(source, (LoadedGraph, DenseEdges)):
        if header:   # (a LoadedGraph was read already: pass header to load())
            raise header_refusal(str(getattr(source, "source", source)),
                                 f"a {type(source).__name__}, not a file read here")
        return source
    if isinstance(source, os.PathLike):   # (DenseEdges is path-like too: its name)
        source = os.fspath(source)
    if isinstance(source, str) and weighted and not os.path.exists(source):
        from asapgraph.graph.generators import is_spec

        if is_spec(source):  # (as the command line: a weighted run was unweighted)
            raise InputError(source, None, "a generator spec has no edge weights (every "
                                           "edge weighs 1): drop weighted=True")
    if not isinstance(source, str):
        kind = type(source)
        raise TypeError(f"source must be an edge-list path, a generator spec, a "
                        f"LoadedGraph (asapgraph.engine.api.load) or DenseEdges, not "
                        f"{kind.__module__}.{kind.__qualname__} (a networkx graph on ranks: "
                        f"nx.pagerank with nx.config.backends.asapgraph.np, or "
                        f"asapgraph.run(program, G, comm=comm))")
    return source


def _check_asap_knobs(fanout, window, approx, seed, schedule, mode):
    """The ASAP parameters checked as the command line's ``--fanout``, ``--window``,
    ``--approx``, ``--seed`` and ``--schedule`` are (positive integers, a finite number
    >= 0, an integer >= 0, one of :data:`asapgraph.options.SCHEDULES`; a schedule is an
    ASAP setting, refused in BSP), before any collective, in one line.  The engine took
    fanout 0, -3 and 1.5 as 1 and window 0 or -1, approx NaN without a word, seed 'x'
    failed in int(), and a BSP run ignored ``schedule="priority"``."""
    def whole(v, name, low):
        ok = not isinstance(v, bool) and isinstance(v, (int, np.integer)) and v >= low
        if not ok:
            what = "a positive integer" if low == 1 else "an integer >= 0"
            raise ValueError(f"{name} must be {what}, got {v!r}")
        return int(v)

    fanout, window = whole(fanout, "fanout", 1), whole(window, "window", 1)
    seed = whole(seed, "seed", 0)
    a = _options._number(approx, "approx")
    if not 0.0 <= a < float("inf"):
        raise ValueError(f"approx must be a finite number >= 0, got {approx!r}")
    if schedule is not None:
        if schedule not in _options.SCHEDULES:
            raise ValueError(f"schedule must be one of {', '.join(_options.SCHEDULES)} or "
                             f"None, got {schedule!r}")
        if mode != "asap":
            raise ValueError(f"schedule={schedule!r} applies to mode 'asap' (BSP sweeps "
                             f"every vertex each superstep)")
    return fanout, window, a, seed


def pagerank(source, comm=None, mode="bsp", partition="range", alpha=0.85,
             tol=_options.DEFAULTS["pagerank"][0], max_iter=_options.DEFAULTS["pagerank"][1],
             personalization=None, dangling=None, weighted=False,
             undirected=False, fanout=2, window=1, approx=0.0, emulation=None, seed=0,
             debug_mass=False, weight_col=None, chunk_bytes=1 << 21, progress=None,
             asap_form="jacobi", error_reference=None, threads=1, schedule=None,
             rebalance="off", layout_before_clock=False, header=False):
    """Distributed PageRank over an mpi4py communicator (collective).

    Parameters
    ----------
    source : str or LoadedGraph
        Edge-list file (text, possibly .gz/.bz2/.xz), generator spec (``rmat:S``,
        ``er:N:M``), or a graph already partitioned by :func:`load` (then ``partition``,
        ``weighted``, ``undirected`` are those of the load).
    comm : mpi4py communicator, optional
        Default ``MPI.COMM_WORLD``.
    mode : {"bsp", "asap"}
    partition : {"range", "hash"}
    alpha : float
        Damping factor, ``0 <= alpha < 1`` (as :func:`asapgraph.pagerank`).
    tol : float
        Bound on the L1 error of the result, as :func:`asapgraph.pagerank` (default 1e-10):
        BSP stops when ``alpha / (1 - alpha)`` times the L1 change of a superstep is
        ``<= tol``; ASAP when its certified L1 error bound is ``<= tol``.  The bound
        reached is ``stats["error_bound"]``.
    max_iter : int
        BSP: superstep limit.  ASAP: limit on the ranks' summed edge work, counted in
        BSP supersteps: :data:`asapgraph.engine.asap.WORK_FACTOR` x ``max_iter`` sweeps
        of the whole graph's edges (an ASAP sweep may run on partial input, so it needs
        more edge work than BSP; ``stats["work_budget_edges"]``); a run stopped by it
        flushes everything and returns ``converged`` False with the bound reached.
    personalization, dangling : dict, (ids, values), path or None
        Per-vertex weights by original id (normalised; missing ids get 0, ids that are
        not vertices are refused, as on one process); ``dangling`` defaults to the
        personalization vector (networkx semantics).
    weighted, undirected : bool
        Edge weights from column ``weight_col`` (1-based, default 3); add reverse edges.
    header : bool
        A text edge list's first line that is neither blank nor a comment is a header
        (``source,target,weight``), skipped whatever it holds, as
        :func:`asapgraph.load_graph` skips it; refused for every other input.
    fanout, window, approx : ASAP parameters
        Peers per round of the stochastic reduce, un-ACKed messages per peer, and the
        fraction of the residual below which a buffer may wait (0: always send).
    emulation : :class:`~asapgraph.engine.emulation.Emulation`, dict or None
    seed : int
        Seed of the ASAP communication schedule (a generator spec carries its own seed,
        ``rmat:S:EF:SEED``, default 0, as on one process).
    debug_mass : bool
        ASAP: check mass conservation on consistent snapshots during the run.
    progress : :class:`asapgraph.progress.Progress`, optional
        Used on rank 0 only: a line per loading phase and, throttled, per superstep (BSP)
        or termination wave (ASAP) with the residual or bound and rank 0's bytes sent.
    asap_form : {"jacobi", "push"}
        ASAP local solver (see :mod:`asapgraph.engine.asap`): signed delta Jacobi sweeps
        of the Google matrix (default; converges like power iteration) or the leaky
        Gauss-Seidel residual push (fewer edges on graphs with locality, slow on
        expander-like graphs).  Both certify the same error bound.
    threads : int
        BSP: OpenMP threads inside each rank (its rows split into ``threads`` edge-balanced
        blocks, as on one process; 1: a serial sweep, no OpenMP region).  ASAP ranks sweep
        with one thread (``threads > 1`` is refused).  None: 1.
    schedule : {"sweep", "priority"} or None
        ASAP ``jacobi`` form: what a sweep pushes -- every block of vertices above the skip
        threshold, or first the blocks of largest residual per edge (PrIter-style priority;
        same fixed point, same certified bound).  None: the engine's default
        (:data:`asapgraph.engine.asap.DEFAULT_SCHEDULE`; ``sweep`` for the push form).
    rebalance : {"off", "start", "dynamic"}
        Dynamic load balancing (:mod:`asapgraph.engine.rebalance`, range partition, BSP
        and ASAP's ``jacobi`` form): ranks measure their speed and move vertices off slow
        ranks once after a short calibration (``start``) or whenever the measured
        imbalance is material (``dynamic``); ``stats["rebalance"]`` has the checks and
        the migrations (with their time).
    error_reference : (ids, values) or None
        ASAP, for benchmarks (pass it on every rank): a reference solution by original
        id; each rank then records the L1 error of its part of ``x / sum(x)`` whenever a
        termination wave completes, and rank 0 returns the summed true-error trace as
        ``stats["error_trace"]``: ``[(seconds, L1 error, bytes sent), ...]`` (one O(n/K)
        pass per wave), and ``stats["error_trace_ranks"]``: the same waves' errors of each
        rank's part (``[[rank 0, ..., rank K-1], ...]``, summing to the trace's errors).
    layout_before_clock : bool
        Build the layout the solve sweeps (BSP's pull rows, ASAP's relabelled push rows)
        before the clocks start, as the load is, so that neither clock counts it; its
        host seconds are ``per_rank[].layout_seconds``.  For benchmarks that time the
        solve (the graph and its layouts prepared, as GAP times its kernels): the bench
        loads a graph once in the push layout for both modes, so a BSP run built its
        pull rows from the out-rows, a build the command line's BSP load avoids (it
        ships in-rows), and only the first run on a loaded graph built at all.  Default
        (False): a layout built in the run is charged like compute on both clocks.  Not
        with a rebalancing run that may migrate first (``dynamic``, or ``start`` on a
        graph loaded by :func:`load`): its layout is built after the split, in the run.

    Returns
    -------
    DistResult
        Ranks and ids on rank 0 (ordered by original id); ``None`` on other ranks.

    Raises
    ------
    asapgraph.comm.mpi.RankFailure
        On every rank, when any rank found bad input (``input_error`` True) or failed.
    """
    from asapgraph.partition.loader import load_partitioned
    from asapgraph.engine.stats import RankStats, gather_stats

    MPI = mpi()
    if comm is None:
        comm = MPI.COMM_WORLD
    if mode not in ("bsp", "asap"):
        raise ValueError(f"mode must be 'bsp' or 'asap', got {mode!r}")
    # the ASAP experiment knobs (InputError, as the CLI and ASAP's solver): checked in
    # both modes, before any collective (the same environment on every rank), since BSP
    # reads some of them too (ASAPGRAPH_SPIN_WAITS, ASAPGRAPH_REBALANCE_FORCE: audit 24b)
    _options.check_env()
    alpha = _options.check_alpha(alpha)
    tol = _options.check_tol(tol)
    max_iter = _options.check_max_iter(max_iter)
    wcol = _options.weight_col_index(weight_col)
    # (int(threads) first: 'x' raised "invalid literal for int() with base 10", None
    # "int() argument must be ... not 'NoneType'"; None is the default, one thread)
    threads = _options.check_threads(threads) or 1
    source = _check_source(source, weighted, header)
    fanout, window, approx, seed = _check_asap_knobs(fanout, window, approx, seed, schedule,
                                                     mode)
    why = _options.asap_tol_refusal(tol) if mode == "asap" else None
    if why is not None:
        raise ValueError(why)
    if threads > 1 and mode != "bsp":
        raise ValueError("threads > 1 applies to mode 'bsp' only (an ASAP rank sweeps with "
                         "one thread)")
    K, me = comm.Get_size(), comm.Get_rank()
    why = _options.rebalance_refusal(
        rebalance, source.part.kind if isinstance(source, LoadedGraph) else partition,
        asap_form, mode)
    if why is not None:
        raise ValueError(why)
    prog = progress if me == 0 else None  # lines from rank 0 only
    emu = Emulator(emulation, me, K)
    emu.hold_cores(comm)  # (host clock, a core per rank: the emulated waits spin)
    probe = None
    if isinstance(source, LoadedGraph):  # loaded once by load(): partition/weighted fixed
        lg, part, idmap, t_load = source.lg, source.part, source.idmap, source.load_seconds
    else:
        if rebalance != "off":  # the hosts' speeds first: the loader splits by them
            from asapgraph.engine.rebalance import probe_speeds

            probe = probe_speeds(comm, emu)
            if mode == "asap" and probe["shares"] is not None:  # ASAP's split by them
                from asapgraph.engine.rebalance import asap_shares

                probe["shares"] = asap_shares(probe["shares"], K)
        t_load = time.perf_counter()
        if prog is not None:
            prog.stage(f"loading {'<stdin>' if source == '-' else source} on {K} ranks")
        # BSP PageRank on one fresh load sweeps the pull layout only: the loader ships the
        # in-rows when it can (engine/pull.py builds the layout from them directly); a
        # split by the probed speeds stays (start), dynamic may migrate later
        layout = ("pull" if mode == "bsp" and rebalance in ("off", "start") and not weighted
                  else "push")
        lg, part, idmap = load_partitioned(source, comm, partition, weighted, undirected,
                                           wcol, chunk_bytes, None, prog, layout,
                                           shares=None if probe is None else probe["shares"],
                                           header=bool(header))
        t_load = time.perf_counter() - t_load
    n = lg.n
    where = source if isinstance(source, str) else (
        source.source if isinstance(source, LoadedGraph) and isinstance(source.source, str)
        else "<graph>")
    p = _local_vector(comm, personalization, lg.orig, "personalization", where)
    if p is None:
        p = np.full(lg.nloc, 1.0 / n)
    dvec = _local_vector(comm, dangling, lg.orig, "dangling", where)
    st = RankStats(me)
    st.extra["spin_waits"] = emu.spin  # (Emulator.hold_cores)
    if layout_before_clock and (rebalance == "off" or (rebalance == "start"
                                                       and probe is not None)):
        t_lay = time.perf_counter()
        if mode == "bsp":
            from asapgraph.engine.pull import pull_graph

            pull_graph(comm, lg, threads)
        else:
            from asapgraph.engine.asap import cut_edges, push_rows

            push_rows(comm, lg, asap_form, virtual=emu.virtual)
            cut_edges(lg)
        st.extra["layout_seconds"] = time.perf_counter() - t_lay
    st.progress = prog
    st.progress_what = ("superstep", "L1 change") if mode == "bsp" else ("wave", "error bound")
    if error_reference is not None and mode == "asap":
        rids, rvals = error_reference
        pos = np.minimum(np.searchsorted(rids, lg.orig), max(len(rids) - 1, 0))
        if len(rids) and np.array_equal(rids[pos], lg.orig):
            st.ref = np.ascontiguousarray(rvals[pos], dtype=np.float64)
        ok = comm.allreduce(st.ref is not None or lg.nloc == 0, op=MPI.LAND)
        if not ok:
            st.ref = None
    # the engine's code loads before the clock starts: imports are start-up, not compute
    # (they were inside it: the BSP modules and kernels, and ASAP's numpy.random, whose
    # first use cost ~12 ms)
    if mode == "bsp":
        from asapgraph.engine.bsp import run_bsp
    else:
        from asapgraph.engine.asap_pagerank import run_asap

        np.random.default_rng  # noqa: B018 - loads numpy.random (the schedule's generator)
    if rebalance != "off":
        from asapgraph.engine.rebalance import Balancer, run_asap_rebalanced, run_bsp_rebalanced
    comm.Barrier()
    # the traces' origin on the host's clock: here, as the virtual clock's (it was the
    # stats' creation, before the imports above and the barrier)
    t0 = st.t0 = time.perf_counter()
    c0 = time.thread_time()
    evtrace.ev("T0")  # (diagnostic: the clocks' origin in the ranks' event traces)
    emu.start()
    if emu.virtual:
        st.clock = lambda: emu.vt
    if probe is not None:  # the speed probe is the run's: on both clocks
        t0 -= probe["wall"]
        st.t0 = t0
        if emu.virtual:
            emu.advance(probe["charged"])
            emu.collective(comm, 8 * K)
    extra = {}
    bal = None
    if rebalance != "off":
        bal = Balancer(comm, rebalance, lg, asap=mode == "asap")  # (ASAP: asap_shares)
        if probe is not None:
            bal.probe = probe
            bal.done = rebalance == "start"
    # start on a fresh load: the split is made, nothing more to decide; the plain engines
    rebalanced = bal is not None and not bal.done
    if rebalanced and mode == "bsp":
        x, its, conv, res, lg, part = run_bsp_rebalanced(
            comm, lg, part, p, p if dvec is None else dvec, alpha,
            _options.pagerank_change_tol(alpha, tol), max_iter, emu, st, bal, threads=threads)
        bound = _options.pagerank_error_bound(alpha, res)
    elif rebalanced:
        x, its, conv, res, extra, lg, part = run_asap_rebalanced(
            comm, lg, part, p, dvec, alpha, tol, emu, st, bal, fanout=fanout, window=window,
            approx=approx, seed=seed, debug_mass=debug_mass, max_iter=max_iter,
            schedule=schedule)
        bound = float(res)
    elif mode == "bsp":
        x, its, conv, res = run_bsp(comm, lg, p, p if dvec is None else dvec, alpha,
                                    _options.pagerank_change_tol(alpha, tol), max_iter, emu, st,
                                    threads=threads)
        bound = _options.pagerank_error_bound(alpha, res)
    else:
        x, its, conv, res, extra = run_asap(comm, lg, p, dvec, alpha, tol, emu, st,
                                            fanout=fanout, window=window, approx=approx,
                                            seed=seed, debug_mass=debug_mass, form=asap_form,
                                            max_iter=max_iter,
                                            schedule=schedule)
        bound = float(res)
    if mode == "asap":
        # ASAP has no sweep-to-sweep change: its run certifies ``bound`` directly.  Report
        # as ``residual`` the L1 change that certifies that bound, as one process, BSP and
        # ``run PageRankProgram`` on ranks do (it was the bound itself, 5.67x the others'
        # figure at alpha 0.85); ``error_bound`` is the comparable figure everywhere.
        res = _options.pagerank_change_of_bound(alpha, bound)
    seconds = time.perf_counter() - t0 - st.untimed_wall  # (the bench's instrument)
    # the rank's thread CPU over the same span (MPI's busy waits included): with ranks
    # time-slicing cores, what each mode's rank takes from its peers
    st.extra["cpu_seconds"] = time.thread_time() - c0
    clock = virtual_figures(comm, st, emu)
    if emu.virtual:  # the figures in virtual seconds, the host's beside them
        clock["wall_seconds"], seconds = seconds, clock["virtual_seconds"]
    if bal is not None:
        extra["rebalance"] = bal.figures()
        extra["bounds"] = part.bounds.tolist()  # the final split (the caller's
        # LoadedGraph keeps its own: migration builds new local graphs)
    lay, m, orig = lg.stats(), lg.m, lg.orig
    if not isinstance(source, LoadedGraph):  # this call's own graph: free it before the gather
        del lg, p, dvec
    ids = gatherv(comm, orig)
    vals = gatherv(comm, x)
    del orig, x
    err_trace, err_ranks = (_sum_traces(comm, st.err_trace) if error_reference is not None
                            else (None, None))
    if me == 0:
        ids, vals = _by_id(ids, vals)
    # the peak covers the whole run, the gathered result on rank 0 included
    st.extra.update({"emulated_delay_seconds": emu.delay_s, "straggler_sleep_seconds": emu.sleep_s,
                     "peak_rss_mb": _peak_rss_mb(), "load_seconds": t_load,
                     "compute_calibration": emu.calibration()})
    if emu.cfg.pause_every > 0:
        st.extra.update({"pauses": emu.pauses, "pause_seconds": emu.pause_s})
    extra.update({"partition": part.kind, "n": n, "m": m, "alpha": alpha, "tol": tol,
                  "iterations": its, "converged": bool(conv), "residual": float(res),
                  "error_bound": float(bound), "seed": seed,
                  "emulation": emu.cfg.as_dict() if emu.cfg.active else None,
                  "load_seconds": t_load, "threads": threads, **clock})
    stats = gather_stats(comm, st, lay, mode, seconds, extra)
    if me == 0:
        stats["peak_rss_mb_max"] = max(r["peak_rss_mb"] for r in stats["per_rank"])
        if err_trace:
            stats["error_trace"] = err_trace
            stats["error_trace_ranks"] = err_ranks
        return DistResult(vals, ids, its, bool(conv), float(res), stats, float(bound))
    return DistResult(None, None, its, bool(conv), float(res), {}, float(bound))


def _sum_traces(comm, trace):
    """Rank 0: ``([(seconds, summed error, summed bytes), ...], [[error of rank 0's part,
    ..., of rank K-1's], ...])``, one row per termination wave (collective; other ranks:
    ``(None, None)``).  The per-rank rows tell which rank's part holds the error
    (benchmarks/REPORT.md: with heterogeneous speeds the slowest rank's).

    Each rank reads its part when it sees the wave's result (a rank in a sweep, after the
    sweep).  A row is dated at rank 0's reading, or later when another rank's part is a
    state that began later (a sweep that ended after rank 0's reading): never before every
    part read existed.  (Until the eighteenth session always at rank 0's reading: a part
    read after a later sweep was dated before that sweep ended.  A rank that reads late
    without sweeping -- paused, or in its round's coding -- reads the state it had.)"""
    traces = comm.gather(trace, root=0)
    if comm.Get_rank() != 0:
        return None, None
    k = min(len(t) for t in traces)
    ranks = [[float(t[i][1]) for t in traces] for i in range(k)]
    return [(max([traces[0][i][0]] + [t[i][3] for t in traces if len(t[i]) > 3]),
             float(sum(row)), int(sum(t[i][2] for t in traces)))
            for i, row in enumerate(ranks)], ranks


def _by_id(ids, vals):
    """``(ids, vals)`` ordered by id; no copy when they already are (range partition:
    ranks hold increasing id ranges, each in increasing order)."""
    if len(ids) < 2 or bool((ids[1:] > ids[:-1]).all()):
        return ids, vals
    o = np.argsort(ids, kind="stable")
    return ids[o], vals[o]
