"""Distributed execution of user vertex programs on MPI ranks (BSP and ASAP).

Rationale
---------
What: :func:`run` executes any :class:`asapgraph.programs.VertexProgram` on a graph
partitioned over the ranks of a communicator, with the semantics of the single-process
runner (:mod:`asapgraph.engine.single`): same callbacks, called collectively with
arrays over the rank's owned vertices, same termination tests, same result layout.

Which engine.  Accumulative sum programs with the standard callbacks (sum combiner, edge
op copy/mul, float64, no ``aggregate``/``post_delta``/``direction_at`` override) are
compiled by :mod:`.sum_program` onto the tuned PageRank stack (NOTIFY-ACK, stochastic
reduce, 16-bit messages, counting-wave termination, emulation; ``stats["engine"] ==
"tuned-sum"``, ``stats["error_bound"]``), and the built-in ``PageRankProgram`` runs on the
PageRank solvers themselves.  Accumulative min/max programs (min/max combiner, edge op
copy/mul/add/add_one, int64 or float64, no ``direction_at``; the built-in SSSP, BFS, WCC)
run on the same loops with a min/max state (:mod:`.minmax_program`: exact (slot, value)
messages combined per peer, ``stats["engine"] == "tuned-minmax"``), except for
``run(..., steps=k)``, which keeps the single-process meaning of a step (one hop).
Everything else -- value-form programs, sum programs with hooks, min/max programs with
``direction_at`` or exact steps -- runs on the general program engine, with the same
messages (:mod:`.exchange`), network/straggler emulation and, in ASAP, the same
NOTIFY-ACK windows, expander schedule and termination waves.

That engine is in three parts: the graph side
(:mod:`asapgraph.partition.program_graph`: :class:`ProgramGraph`, :func:`load`), the
BSP edge map and loops with the typed messages (:mod:`.bsp_programs`) and the ASAP loop
with its termination waves (:mod:`.asap_programs`).  This module is the public entry:
:func:`run` (and :func:`load`, :class:`ProgramGraph`, re-exported), the rank context,
the choice of the engine and the gathering of the results.

Results: gathered to rank 0 (values ordered by increasing original id, as the
single-process result); other ranks get a partial :class:`ProgramResult` with
``values = None`` and ``ids = None`` (iterations, converged and stats are the same).

References: Malewicz et al., "Pregel", SIGMOD 2010; Zhu et al., "Gemini", OSDI 2016
(dense/sparse signal-slot modes, chunked partitions); Zhang, Gao, Gao, Wang, "Maiter",
IEEE TPDS 25(8), 2014; Mattern, Distributed Computing 2(3), 1987.
"""
from __future__ import annotations

import os
import time

import numpy as np

from asapgraph import options as _options
from asapgraph.comm.mpi import OutOfStep, agree, gatherv, mpi, oversubscribed
from asapgraph.engine import minmax_program as MM  # (imported here: not part of a run's time)
from asapgraph.engine import sum_program as SP
from asapgraph.engine.asap_programs import DEBUG, run_asap
from asapgraph.engine.bsp_programs import BSPMapper, bsp_delta, bsp_value, collective
from asapgraph.engine.program import (Context, VertexProgram, check_finite_weights,
                                     exact_steps, finish_steps, validate_program)
from asapgraph.engine.result import ProgramResult
from asapgraph.engine.stats import traffic_totals
from asapgraph.errors import InputError
from asapgraph.kernels import _programs as K
from asapgraph.partition.program_graph import ProgramGraph, load

__all__ = ["run", "load", "ProgramGraph"]

_RUNS = 0
#: raise (collectively) when an ASAP run saw a stale or late message; on in debug runs,
#: with ASAPGRAPH_STRICT_ASAP=1, or by setting ``asapgraph.engine.distributed.STRICT = True``
STRICT = DEBUG or os.environ.get("ASAPGRAPH_STRICT_ASAP", "") not in ("", "0")


# ============================================================================ context


class _LocalView:
    """What ``ctx.graph`` shows a program on a rank (its share of the graph)."""

    def __init__(self, g):
        self.n, self.m = g.n, g.m
        self.weights = g.w
        self.src, self.dst = g.src, g.dst   # this rank's edges, dense global ids
        self.source = g.source
        self.weight_col = getattr(g, "weight_col", None)
        self.header = getattr(g, "header", False)
        self.out_degree = g.out_degree
        self.out_weight = g.out_weight
        self.weighted = g.weighted
        self.nloc = g.nloc


def _context(g, comm, mode, tol, max_iter):
    ctx = Context.__new__(Context)
    ctx.graph = _LocalView(g)
    ctx.n = g.n
    ctx.n_local = g.nloc
    ctx.vertices = g.owned.astype(np.int64)
    ctx.ids = g.orig
    ctx.out_degree = g.out_degree
    ctx.in_degree = g.in_degree
    ctx.out_weight = g.out_weight
    ctx.weighted = g.weighted
    ctx.superstep = 0
    ctx.aggregates = {}
    ctx.tol, ctx.max_iter, ctx.mode = tol, max_iter, mode
    ctx.comm = comm
    ctx.rank, ctx.size = comm.Get_rank(), comm.Get_size()
    ctx.direction = "out"
    return ctx



# ============================================================================ public API


def run(program, source_or_loaded, comm=None, mode="bsp", partition="range", max_iter=None,
        tol=None, progress=None, engine_options=None, steps=None, **load_options):
    """Run a vertex program on the ranks of ``comm`` (collective).

    Parameters
    ----------
    program : VertexProgram instance or class
    source_or_loaded : str, ProgramGraph or Graph
        Edge-list path or generator spec (loaded with :func:`load` and ``load_options``:
        ``weighted``, ``undirected``, ``weight_col``, ``seed``), a :class:`ProgramGraph`
        from :func:`load` (reused; ``partition`` ignored), or a single-process ``Graph``
        held by every rank (each rank takes a slice of its edges).
    comm : mpi4py communicator, optional
        Default ``COMM_WORLD``.
    mode : {"bsp", "asap"}
        ASAP needs ``program.accumulative`` (``ValueError`` otherwise, as single-process).
    partition : {"range", "hash"}
    max_iter, tol : as :func:`asapgraph.programs.run`.  What ``max_iter`` caps and what
        ``iterations`` counts depend on the mode and the engine (``stats["max_iter"]``
        and ``stats["max_iter_counts"]`` say which): BSP, ``"supersteps"`` (counted as
        ``iterations``); ASAP on the tuned engines (accumulative sum and min/max
        programs, ``stats["engine"]`` ``"tuned-sum"`` / ``"tuned-minmax"``),
        ``"sweeps"``: the ranks' summed edge work, ``max_iter`` BSP supersteps' worth
        (:data:`.asap.WORK_FACTOR` x ``max_iter`` sweeps of the whole graph's edges,
        ``stats["work_budget_edges"]``), while
        ``iterations`` counts the rounds of the rank that ran most (so a run capped at 5
        supersteps' worth may report 127 iterations); ASAP on the general program engine (programs
        with ``aggregate``/``post_delta``/``direction_at`` hooks), ``"waves"``: the
        termination waves, counted as ``iterations`` (and, as a safety net, ``100 *
        max_iter`` local sweeps per rank).
    progress : asapgraph.progress.Progress, optional (reported by rank 0).
    steps : int, optional
        This many supersteps (BSP; fewer at a fixpoint), as :func:`asapgraph.programs.run`.
    engine_options : dict, optional
        ``fanout``, ``window``, ``approx``, ``seed`` (ASAP) and ``emulation`` for the
        accumulative sum programs that run on the tuned engine
        (:mod:`.sum_program`: ``stats["engine"] == "tuned-sum"``, with ``error_bound``)
        and the min/max programs (:mod:`.minmax_program`: ``"tuned-minmax"``; ``approx``
        does not apply to them).  Value-form programs, sum programs whose hooks that
        engine cannot express (``aggregate``, ``post_delta``, ``direction_at``; see
        :func:`.sum_program.reason_not_compiled`), min/max programs with
        ``direction_at``, and runs given ``steps`` supersteps run on this module's
        engine, which ignores these options.

    Returns
    -------
    ProgramResult
        On rank 0: ``values`` over all vertices ordered by increasing original id, and
        ``ids``.  On other ranks: ``values`` and ``ids`` are None; ``iterations``,
        ``converged`` and ``stats`` are the same everywhere.
    """
    from asapgraph.graph.core import Graph

    MPI = mpi()
    comm = MPI.COMM_WORLD if comm is None else comm
    # the ASAPGRAPH_* knobs checked here, in both modes and before the load, as
    # pagerank() and the command line do (called directly, a BSP run or one on the
    # general engine read none of them and ran with a bad value unchecked)
    _options.check_env()
    program = validate_program(program, mode)
    if steps is not None:  # k hops, as on one process: min/max programs on this module's BSP
        max_iter, tol = exact_steps(program, steps, mode)
        eo = dict(engine_options or {}, hop_supersteps=True)
        return finish_steps(run(program, source_or_loaded, comm, mode, partition, max_iter, tol,
                                progress, engine_options=eo, **load_options), steps)
    if isinstance(source_or_loaded, ProgramGraph):
        g = source_or_loaded
    elif isinstance(source_or_loaded, (str, os.PathLike, Graph)):
        src = os.fspath(source_or_loaded) if isinstance(source_or_loaded, os.PathLike) else source_or_loaded
        g = load(src, comm, partition=partition, **load_options)
    else:
        raise TypeError("source_or_loaded must be a path/spec, a Graph or a ProgramGraph "
                        f"(asapgraph.engine.distributed.load), not {type(source_or_loaded).__name__}")
    max_iter = _options.check_max_iter(program.default_max_iter if max_iter is None else max_iter)
    tol = _options.check_tol(program.default_tol if tol is None else tol)
    if mode == "bsp" and max_iter < g.n and engine_kind(program) == "minmax":
        # a cap that a converging min/max program can reach (one process needs at most n
        # supersteps: n - 1 hops and the check) counts hops, as on one process: the tuned
        # engine's superstep is a whole local fixed point (``bfs --max-iter 4`` of an
        # 11-level chain exited 3 on one process and 0 on 2 ranks, and
        # ``--allow-unconverged`` wrote other levels on every rank count); caps of n or
        # more (the built-in programs' default 1 << 30) keep the tuned engine: both
        # converge to the same fixed point
        engine_options = dict(engine_options or {}, hop_supersteps=True)
    why = _options.program_asap_tol_refusal(program, mode, tol)
    if why is not None:  # (bad input, exit status 2: the same on every rank and on one process)
        raise InputError("asapgraph", None, why)
    global _RUNS
    _RUNS += 1  # runs are collective: the same number on every rank
    rc = g.comm.Dup()  # private channel: no message of this run can match another's
    old = None
    threads = int(os.environ.get("OMP_NUM_THREADS", "0") or 0) or (os.cpu_count() or 1)
    if rc.Get_size() > 1 and oversubscribed(rc, threads, agree=False):
        # ranks sharing the cores: OpenMP teams of all cores per rank spin against each
        # other (measured 12x slower on 2 ranks / 2 cores); run the kernels on one thread
        old = K.set_parallel_threshold(1 << 62)
    try:
        with np.errstate(over="ignore", invalid="ignore"):  # divergence is reported, not warned
            res = _run(program, g, rc, mode, max_iter, tol, progress, _RUNS, engine_options)
    finally:
        if old is not None:
            K.set_parallel_threshold(old)
        rc.Free()
    return _with_labels(res, source_or_loaded)


def _with_labels(res, source):
    """Rank 0's result keyed by the labels of a labelled single-process ``Graph`` (a
    networkx graph's node objects, a DataFrame's names: ``Graph.labels``), as on one
    process.  The ranks load such a graph by its dense ids, so ``to_dict()``,
    ``vertices()`` and ``to_pandas()`` gave 0 .. n-1 on ranks where one process gave
    the nodes ('n0', 'iso', ...).  The result lists every vertex in increasing original
    id, the order ``argsort(original_ids())`` puts the labels in."""
    from asapgraph.graph.core import Graph

    labels = getattr(source, "labels", None) if isinstance(source, Graph) else None
    if labels is not None and res.ids is not None:
        res.labels = labels[np.argsort(source.original_ids(), kind="stable")]
    return res


def engine_kind(program):
    """Which engine runs ``program`` on ranks: "minmax", "sum" (the tuned loops), or the
    reason it runs on the general program engine."""
    if MM.reason_not_compiled(program) is None:
        return "minmax"
    reason = SP.reason_not_compiled(program)
    if reason is None or SP.is_plain_pagerank(program):
        return "sum"
    return reason


def _run(program, g, comm, mode, max_iter, tol, progress, epoch, engine_options=None):
    ctx = _context(g, comm, mode, tol, max_iter)
    comm.Barrier()
    t0 = time.perf_counter()
    collective(comm, check_finite_weights, program, ctx)
    collective(comm, program.setup, ctx)
    ctx.tol = collective(comm, _options.engine_tol, program, ctx, tol)  # (checks error_factor)
    try:
        return _run_engine(program, g, comm, mode, max_iter, tol, progress, epoch, ctx, t0,
                           engine_options)
    except InputError as e:  # a residual that became non-finite: the same on every rank
        if isinstance(e, OutOfStep):  # the ranks are out of step: no agreement possible
            raise
        agree(comm, e)
        raise


def _run_engine(program, g, comm, mode, max_iter, tol, progress, epoch, ctx, t0, engine_options):
    emap = BSPMapper(program, g, comm, (engine_options or {}).get("emulation"))
    if emap.emu.virtual:  # a collective of the program costs the modelled collective
        ctx.allreduce = _virtual_allreduce(ctx, emap.emu, comm)
    extra, bound = {}, None
    kind = engine_kind(program)
    if (kind == "sum" and (engine_options or {}).get("hop_supersteps")
            and SP.reason_not_compiled(program) is not None):
        # exact steps of PageRankProgram: its delta form's supersteps, as on one process
        # (PageRank's own solvers iterate another form: the same limit, other iterates)
        kind = "general"
    # exact steps (``run(..., steps=k)``) keep the single-process meaning of a step (one
    # hop): min/max programs then run on the general engine's supersteps
    if kind == "minmax" and not (engine_options or {}).get("hop_supersteps"):
        # min/max programs: the same loops with the min/max state and messages
        inputs = collective(comm, program.init_delta, ctx)
        state, iters, conv, residual, extra = MM.run_minmax_program(
            program, ctx, g, comm, mode, max_iter, engine_options, progress, inputs)
        residual = None  # as on one process (the pending count is ``error_bound``)
        it_times = []
    elif kind == "sum" and SP.is_plain_pagerank(program):  # PageRank's own solvers (pools for dangling)
        state, iters, conv, residual, extra = SP.run_pagerank_program(
            program, ctx, g, comm, mode, tol, max_iter, engine_options)
        bound = extra.pop("error_bound")  # the solvers' own certified bound
        it_times = []
    elif kind == "sum":  # the tuned engine (PageRank's solver, the program's coefficients)
        inputs = collective(comm, SP.prepare, program, ctx)
        state, iters, conv, residual, extra = SP.run_sum_program(
            program, ctx, g, comm, mode, ctx.tol, max_iter, engine_options, progress, inputs)
        _options.check_residual(residual, program.name, iters)
        it_times = []  # the totals are in ``extra``
    elif program.accumulative:
        coef = collective(comm, program.coef, ctx)
        coef = None if coef is None else np.ascontiguousarray(coef, dtype=np.float64)
        inputs = collective(comm, program.init_delta, ctx)
        if mode == "bsp":
            state, iters, conv, residual, it_times = bsp_delta(program, ctx, emap, progress, coef,
                                                               inputs)
            extra = traffic_totals(comm, emap.st, emap.emu)
        else:
            state, st, conv, residual, extra = run_asap(program, ctx, g, comm, progress, coef,
                                                        engine_options, strict=STRICT,
                                                        inputs=inputs)
            iters = st.waves  # global rounds (the same on every rank)
            it_times = []
            if STRICT and (extra["stale_messages"] or extra["late_messages"]):
                # the same decision on every rank (reduced counts): no hang
                raise AssertionError(f"{program.name} ASAP run {epoch}: "
                                     f"{extra['stale_messages']} stale and "
                                     f"{extra['late_messages']} late messages (termination "
                                     f"is unsound)")
        if program.combiner in ("min", "max"):  # values that overflowed: as on one process
            fixed = getattr(type(program), "direction_at", None) is VertexProgram.direction_at
            push = None
            if fixed:
                sd = g.side(program.direction, "push")
                push = (sd.indptr, sd.w if (sd.w is not None and program.use_weights) else None)
            MM.check_growth(program, comm, inputs, state, push)
    else:
        state, iters, conv, residual, it_times = bsp_value(program, ctx, emap, progress)
        extra = traffic_totals(comm, emap.st, emap.emu)
    values = collective(comm, program.result, ctx, state)  # (raised on one rank: on every rank)
    seconds = time.perf_counter() - t0
    if extra.get("clock") == "virtual":  # the figures in virtual seconds, the host's beside
        extra["wall_seconds"], seconds = seconds, extra["virtual_seconds"]
    # every engine reports its totals over the ranks in ``extra`` (edges, messages, bytes)
    counts = ("supersteps" if mode == "bsp" else
              "sweeps" if extra.get("engine") in (SP.ENGINE, MM.ENGINE) else "waves")
    stats = {"max_iter": max_iter, "max_iter_counts": counts,
             "mode": mode, "seconds": seconds, "iteration_seconds": it_times, "dense_steps": emap.dense_steps,
             "sparse_steps": emap.sparse_steps, "residual": residual, "ranks": comm.Get_size(),
             "partition": g.part.kind, "engine": "distributed", **extra, "tol": tol,
             "error_bound": (bound if bound is not None
                             else _options.error_bound(program, ctx, residual, conv))}
    if bound is None:  # (Katz: the bound in units of beta, what the run stopped on)
        rel = _options.error_bound(program, ctx, residual, conv, relative=True)
        if rel is not None:
            stats["relative_error_bound"] = rel
    # (Katz: the engines' pending mass in the values' unit, as error_bound and as on one
    # process, :func:`.single._relative_bound`)
    stats["residual"] = _options.values_residual(program, ctx, residual)
    ids = gatherv(comm, g.orig)
    cols = values if isinstance(values, dict) else {None: values}
    gathered = {k: _gather_any(comm, np.asarray(v)) for k, v in cols.items()}
    name = getattr(program, "name", "program")
    if comm.Get_rank() == 0:
        o = np.argsort(ids, kind="stable")
        gathered = {k: v[o] for k, v in gathered.items()}
        out = gathered if not (None in gathered) else gathered[None]
        if progress is not None:
            unit = "iterations" if mode == "bsp" else "rounds"
            state = "converged" if conv else "NOT converged"  # (as one process says it)
            progress.done(f"{name}: {state} after {iters} {unit}, {seconds:.3f} s, {mode}, "
                          f"{comm.Get_size()} ranks")
        return ProgramResult(out, ids[o], iters, bool(conv), stats, name=name)
    return ProgramResult(None, None, iters, bool(conv), stats, name=name)



def _virtual_allreduce(ctx, emu, comm):
    reduce = Context.allreduce.__get__(ctx)

    def allreduce(value, op="sum"):
        out = reduce(value, op)
        emu.collective(comm, 8 * max(int(np.size(value)), 1))
        return out
    return allreduce


def _gather_any(comm, arr):
    if arr.dtype == np.bool_:
        out = gatherv(comm, arr.view(np.uint8))
        return None if out is None else out.view(np.bool_)
    if arr.dtype in (np.dtype(np.int64), np.dtype(np.float64), np.dtype(np.int32), np.dtype(np.uint8)):
        return gatherv(comm, arr)
    parts = comm.gather(arr, root=0)  # unusual dtypes: small control path (pickled)
    return None if parts is None else np.concatenate(parts)
