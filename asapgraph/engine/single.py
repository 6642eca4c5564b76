"""Single-process executor of vertex programs: BSP (value or delta form) and ASAP.

Rationale
---------
The runner owns traversal, direction and termination; the program only supplies the
operators (:mod:`asapgraph.engine.program`).  Per superstep it picks, like Ligra's edgeMap,
a dense pull over the CSR of sources (no atomics, one thread per target) or a sparse push
from the active vertices (atomics), by the Beamer/Ligra threshold: push when the active
vertices have fewer than ``m / 20`` out-edges.  The undirected view (``direction="both"``)
is one CSR holding in- then out-neighbours of each vertex, built once per graph.

Min/max (monotone) accumulative programs with built-in operators and a fixed direction
run entirely inside one kernel call: BSP as ``_kernels.bsp_minmax`` (the sparse/dense
choice is made per superstep in C from the frontier's edge count, work proportional to the
frontier on sparse supersteps), ASAP as ``_kernels.async_fixpoint_minmax`` (a priority or
FIFO worklist run to local quiescence; reported as one iteration) or, for ``copy`` over
the undirected view from identity values (WCC), ``_kernels.union_find_fixpoint``.  The
ASAP one-call engine is used when ``max_iter > n`` (a sweep cap that could bind keeps the
per-sweep loop, so ``max_iter`` keeps its meaning).  ``run(..., threads=k)`` caps the
kernels' OpenMP threads for fair single-threaded comparisons.

ASAP on one process is Maiter's asynchronous delta processing in Gauss-Seidel order: one
"iteration" is a sweep over the vertices with pending deltas, and updates are visible to
vertices later in the same sweep.  Invariant (sum programs): ``value + delta`` summed along
any processing order converges to the same fixed point because the edge functions are
linear and the combine is commutative and associative; (min/max programs): values only
improve monotonically, so the result is the same least (greatest) fixed point.

The superstep pieces this engine shares with the BSP engine on MPI ranks (the numpy
edge map, the value-form loop, aggregates) are in :mod:`asapgraph.engine.supersteps`;
the result type in :mod:`asapgraph.engine.result`.
"""
from __future__ import annotations

import time

import numpy as np

from asapgraph import options as _options
from asapgraph import progress as _progress
from asapgraph.kernels import _programs as K
from asapgraph.engine.program import (COMBINERS, EDGE_OPS, Context, VertexProgram,
                                     check_finite_weights, combiner_identity, exact_steps,
                                     finish_steps, validate_program)
from asapgraph.engine.result import ProgramResult
from asapgraph.errors import InputError
from asapgraph.engine.supersteps import (EMPTY_W, PUSH_FRACTION, better, delta_loop,
                                        generic_edge_map, minmax_diverged, minmax_growth_flags,
                                        minmax_init_flags, reduce_aggregates, value_form_loop)

__all__ = ["run", "ProgramResult", "check_run"]

_PUSH_FRACTION = PUSH_FRACTION   # Ligra's threshold: sparse push when frontier work < m / 20
REORDER_MIN_EDGES = 1 << 20   # relabel sources of dense pulls from this many edges on
_PARALLEL_SWEEP_MIN = 4096    # ASAP min/max sweeps over at least this many queued vertices use threads
_EMPTY_U8 = np.empty(0, dtype=np.uint8)


# ---------------------------------------------------------------------- topology
class _Topology:
    """Pull and push CSRs of a graph for each direction (built lazily, cached)."""

    def __init__(self, graph):
        self.graph = graph
        self._both = None
        self._relabelled = {}
        self._min_w = None

    def in_csr(self):
        g = self.graph
        return g.indptr, g.indices, g.weights

    def out_csr(self):
        return self.graph.out_csr()

    def both_csr(self):
        if self._both is None:
            a = self.in_csr()
            b = self.out_csr()
            indptr = a[0] + b[0]
            indices = np.empty(int(indptr[-1]), dtype=a[1].dtype)
            weighted = a[2] is not None
            w = np.empty(indices.shape[0] if weighted else 0, dtype=np.float64)
            K.merge_csr(a[0], a[1], _w(a[2]), b[0], np.ascontiguousarray(b[1], dtype=a[1].dtype),
                        _w(b[2]), indptr, indices, w)
            self._both = (indptr, indices, w if weighted else None)
        return self._both

    def pull(self, direction):
        """CSR listing, for each target, the sources of its messages."""
        return {"out": self.in_csr, "in": self.out_csr, "both": self.both_csr}[direction]()

    def pull_relabelled(self, direction):
        """``(indptr, indices, weights, pos)``: the pull CSR with *sources* relabelled by
        decreasing number of messages they send (log2 buckets, stable), so the values that
        most edges gather sit together in cache (as in :mod:`asapgraph.programs.pagerank`); targets
        keep their order.  ``pos[u]`` is the new label of source ``u``.  ``pos`` is None
        for graphs below ``REORDER_MIN_EDGES`` edges (not worth it: they fit in cache)."""
        if direction not in self._relabelled:
            indptr, indices, w = self.pull(direction)
            if indices.shape[0] < REORDER_MIN_EDGES:
                self._relabelled[direction] = (indptr, indices, w, None)
            else:
                pptr = self.push(direction)[0]
                key = (63 - np.log2(np.diff(pptr) + 1.0).astype(np.int8)).astype(np.int8)
                new2old = np.argsort(key, kind="stable")
                pos = np.empty(new2old.shape[0], dtype=indices.dtype)
                pos[new2old] = np.arange(new2old.shape[0], dtype=indices.dtype)
                nind = np.empty_like(indices)
                K.relabel(indices, pos, nind)
                self._relabelled[direction] = (indptr, nind, w, pos)
        return self._relabelled[direction]

    def min_weight(self, direction):
        """Smallest edge weight (cached; 1.0 when unweighted or without edges)."""
        if self._min_w is None:
            w = self.graph.weights
            self._min_w = float(w.min()) if (w is not None and w.size) else 1.0
        return self._min_w

    def push(self, direction):
        """CSR listing, for each source, the targets of its messages."""
        return {"out": self.out_csr, "in": self.in_csr, "both": self.both_csr}[direction]()


_TOPO_CACHE: list = []   # [(graph, topology)], most recent last, at most 2 graphs


def _topology(graph):
    for g, t in _TOPO_CACHE:
        if g is graph:
            return t
    t = _Topology(graph)
    _TOPO_CACHE.append((graph, t))
    del _TOPO_CACHE[:-2]
    return t


def _w(w):
    return EMPTY_W if w is None else w


# ---------------------------------------------------------------------- edge map
class _EdgeMapper:
    """Runs one edge map (messages of the active sources, combined per target)."""

    def __init__(self, program, ctx, topo):
        self.program = program
        self.ctx = ctx
        self.topo = topo
        self.dtype = np.dtype(program.value_dtype)
        comb = program.combiner
        self.builtin = (isinstance(comb, str) and comb in COMBINERS and program.edge_op is not None
                        and self.dtype in (np.dtype(np.float64), np.dtype(np.int64)))
        self.dense_steps = 0
        self.sparse_steps = 0
        self.edges = 0

    def weights(self, w):
        return w if (w is not None and self.program.use_weights) else None

    def __call__(self, direction, x, active=None, comb=None, op=None, permuted=False):
        """Return ``(combined, has_msg)``; ``active`` is a bool mask over sources or None.

        ``permuted``: ``x`` is already in the relabelled source order of the dense pull
        (only with ``active=None`` and built-in operators)."""
        prog = self.program
        comb = prog.combiner if comb is None else comb
        op = prog.edge_op if op is None else op
        n = self.ctx.n_local
        if self.builtin:
            x = np.ascontiguousarray(x, dtype=self.dtype)
            ident = combiner_identity(comb, self.dtype)
            ccode, ocode = COMBINERS[comb], EDGE_OPS[op]
            if active is not None:
                frontier = np.flatnonzero(active)
                pptr, pind, pw = self.topo.push(direction)
                work = int(np.sum(pptr[frontier + 1] - pptr[frontier]))
                if work + frontier.size < pind.shape[0] // _PUSH_FRACTION:
                    out = np.full(n, ident, dtype=self.dtype)
                    has = np.zeros(n, dtype=np.uint8)
                    self.edges += K.push_sparse(pptr, pind, _w(self.weights(pw)), frontier, x,
                                                ocode, ccode, out, has)
                    self.sparse_steps += 1
                    return out, has.view(bool)
            indptr, indices, w, pos = self.topo.pull_relabelled(direction)
            out = np.empty(n, dtype=self.dtype)
            has = np.empty(n, dtype=np.uint8)
            mask = _EMPTY_U8 if active is None else np.ascontiguousarray(active, dtype=np.uint8)
            if pos is not None and not permuted:
                xp = np.empty_like(x)
                K.scatter_perm(x, pos, xp)
                x = xp
                if active is not None:
                    mp = np.empty_like(mask)
                    K.scatter_perm(mask, pos, mp)
                    mask = mp
            self.edges += K.gather_pull(indptr, indices, _w(self.weights(w)), x, mask, ocode,
                                        ccode, ident, out, has)
            self.dense_steps += 1
            return out, has.view(bool)
        return self._generic(direction, x, active, comb, op)

    def _generic(self, direction, x, active, comb, op):
        """Vectorised numpy path: custom message(), custom ufunc combiner, collect."""
        indptr, indices, w = self.topo.pull(direction)
        out, edges = generic_edge_map(self.program, self.ctx, comb, op, indptr, indices, w, x,
                                      active, self.ctx.n_local)
        self.edges += edges
        self.dense_steps += 1
        return out


# ---------------------------------------------------------------------- engines
def _run_value_form(program, ctx, topo, progress):
    emap = _EdgeMapper(program, ctx, topo)
    state, it, converged, residual, it_times = value_form_loop(
        program, ctx, program.init(ctx), emap, progress.iteration)
    return state, it, converged, residual, emap, it_times


def _run_delta_bsp(program, ctx, topo, progress, coef, inputs):
    """Synchronous (Jacobi) delta processing (:func:`.supersteps.delta_loop`) with the
    single process's two specialisations: the sum selection writes straight in the dense
    pull's relabelled order, and a min/max program with a fixed direction runs every
    superstep in one kernel call (sparse push / dense pull chosen per step)."""
    emap = _EdgeMapper(program, ctx, topo)
    values, deltas = (np.array(a, dtype=program.value_dtype) for a in inputs)
    alone = emap.builtin and ctx.size == 1

    def relabel(direction):
        return topo.pull_relabelled(direction)[3] if alone else None

    def whole(ctx):
        if not (alone and _fixed_direction(program)):
            return None
        ctx.direction = direction = program.direction
        pptr, pind, pw = topo.push(direction)
        qptr, qind, qw = topo.pull(direction)
        if pind.dtype != qind.dtype:
            pind = np.ascontiguousarray(pind, dtype=qind.dtype)
        pw, qw = _w(emap.weights(pw)), _w(emap.weights(qw))
        min_w = topo.min_weight(direction) if pw.shape[0] else 1.0
        secs = np.zeros(min(ctx.max_iter, ctx.n + 2))
        steps, conv, scanned, dense, sparse = K.bsp_minmax(
            pptr, pind, pw, qptr, qind, qw, EDGE_OPS[program.edge_op],
            COMBINERS[program.combiner], values, deltas, ctx.max_iter, _PUSH_FRACTION, min_w,
            secs)
        emap.edges += scanned
        emap.dense_steps += dense
        emap.sparse_steps += sparse
        progress.iteration(steps, 0.0, force=False)
        return steps, bool(conv), secs[:min(steps, secs.shape[0])].tolist()

    values, it, converged, residual, it_times = delta_loop(
        program, ctx, values, deltas, coef, emap, progress.iteration, relabel=relabel,
        whole=whole, on_minmax=lambda i, k: progress.iteration(i, k, force=False),
        push_fraction=_PUSH_FRACTION)
    return values, it, converged, residual, emap, it_times


def _fixed_direction(program):
    return getattr(type(program), "direction_at", None) is VertexProgram.direction_at


def _whole_fixpoint_ok(program, ctx):
    """ASAP min/max programs run to their fixed point in one kernel call when the direction
    is fixed (``direction_at`` not overridden) and the sweep cap cannot bind (``max_iter``
    above ``n``: label-correcting needs at most ``n`` FIFO passes)."""
    return (getattr(type(program), "direction_at", None) is VertexProgram.direction_at
            and ctx.max_iter > ctx.n and np.dtype(program.value_dtype) in (np.dtype(np.float64), np.dtype(np.int64)))


def _run_delta_async(program, ctx, topo, progress, coef, inputs):
    """Asynchronous delta processing (Gauss-Seidel sweeps, worklist for min/max)."""
    comb = program.combiner
    values, deltas = (np.array(a, dtype=program.value_dtype) for a in inputs)
    ocode = EDGE_OPS[program.edge_op]
    converged, residual, it_times = False, None, []
    edges = 0
    it = 0
    direction = None

    def csr():
        indptr, indices, w = topo.push(direction)
        return indptr, indices, (w if (w is not None and program.use_weights) else EMPTY_W)

    if comb == "sum":
        thr = ctx.tol / max(ctx.n, 1)
        c = np.ones(ctx.n_local) if coef is None else np.ascontiguousarray(coef, dtype=np.float64)
        for it in range(ctx.max_iter):
            ctx.superstep = it
            ctx.direction = direction = program.direction_at(ctx)
            t0 = time.perf_counter()
            indptr, indices, w = csr()
            sent = np.zeros(ctx.n_local)
            nproc, scanned = K.async_sweep_sum(indptr, indices, w, c, ocode, values, deltas, sent, thr)
            edges += scanned
            ctx.aggregates = reduce_aggregates(program, ctx, program.aggregate(ctx, sent))
            deltas = np.ascontiguousarray(program.post_delta(ctx, deltas), dtype=np.float64)
            residual = float(K.add_abs_sum(deltas, EMPTY_W))
            _options.check_residual(residual, program.name, it + 1)
            it_times.append(time.perf_counter() - t0)
            progress.iteration(it + 1, residual)
            if residual <= ctx.tol or nproc == 0:
                converged = residual <= ctx.tol or not np.any(np.abs(deltas) > thr)
                it += 1
                break
        else:
            it = ctx.max_iter
        values += deltas
    elif _whole_fixpoint_ok(program, ctx):
        # the whole local fixed point in one Cython call (no Python between updates)
        ccode = COMBINERS[comb]
        direction = program.direction
        ctx.direction = direction
        t0 = time.perf_counter()
        ident = combiner_identity(comb, values.dtype)
        if ocode == EDGE_OPS["copy"] and direction == "both" and not np.any(values != ident):
            # copy over the undirected view from identity values: the fixed point is the
            # best initial delta of each connected component -> union-find on one CSR
            g = ctx.graph
            comp = np.empty(ctx.n_local, dtype=np.int64)
            edges += K.union_find_fixpoint(g.indptr, g.indices, ccode, values, deltas, comp)
            nproc, quiet = ctx.n_local, 1
        else:
            indptr, indices, w = csr()
            # a program without a fixed point (max with add_one around a cycle) stops at
            # the cap instead of running forever
            budget = _pops_budget(ctx, indices.shape[0])
            nproc, scanned, _pops, quiet = K.async_fixpoint_minmax(
                indptr, indices, w, ocode, ccode, values, deltas, ocode != EDGE_OPS["add_one"],
                budget)
            edges += scanned
        it_times.append(time.perf_counter() - t0)
        it = 1 if quiet else ctx.max_iter
        converged = bool(quiet)
        progress.iteration(1, float(nproc), force=False)
    else:
        ccode = COMBINERS[comb]
        queue = np.flatnonzero(better(comb, deltas, values)).astype(np.int64)
        queued = np.zeros(ctx.n_local, dtype=np.uint8)
        queued[queue] = 1
        buf = np.empty(ctx.n_local, dtype=np.int64)
        for it in range(ctx.max_iter):
            if queue.size == 0:
                converged = True
                break
            ctx.superstep = it
            ctx.direction = direction = program.direction_at(ctx)
            t0 = time.perf_counter()
            indptr, indices, w = csr()
            sweep = K.async_sweep_minmax_par if queue.size >= _PARALLEL_SWEEP_MIN else K.async_sweep_minmax
            nnext, nproc, scanned = sweep(indptr, indices, w, ocode, ccode, values, deltas, queue,
                                          buf, queued)
            edges += scanned
            queue, buf = buf[:nnext].copy(), buf
            it_times.append(time.perf_counter() - t0)
            progress.iteration(it + 1, float(nnext))
        else:
            it = ctx.max_iter
            converged = queue.size == 0
    emap = _EdgeMapper(program, ctx, topo)
    emap.edges = edges
    return values, it, converged, residual, emap, it_times


def _pops_budget(ctx, m):
    """Worklist pops of the one-call min/max fixed point: ``max_iter`` sweeps of the
    vertices and edges, at least ``2**16`` (a K-rank superstep's floor,
    :mod:`.minmax_program`)."""
    return min(max(ctx.max_iter * (ctx.n_local + int(m)), 1 << 16), 1 << 62)


def _check_growth(program, ctx, topo, mode, inputs, values, converged):
    """Raise the InputError of a min/max run whose values overflowed (as on K ranks,
    :func:`.supersteps.minmax_diverged`).  A run stopped by ``max_iter`` first is run
    again from ``inputs``, asynchronously, with the ASAP budget (:func:`_pops_budget`,
    the one-call fixed point): BSP's supersteps are hops here, where a superstep on
    K ranks is a rank's whole local fixed point, so a program without a fixed point
    (max/mul with weights > 1) overflowed on K ranks and in ASAP but only hit
    ``max_iter`` on one process; this tells "no fixed point" from "not enough
    iterations" the same way in every configuration (exit 2, else 3)."""
    push = None
    if _fixed_direction(program):
        pptr, pind, pw = topo.push(program.direction)
        push = (pptr, pw if (pw is not None and program.use_weights) else None)
    init = minmax_init_flags(program, *inputs)
    e = minmax_diverged(program, init, minmax_growth_flags(program, values, push))
    if e is None and not converged and push is not None and not (
            mode == "asap" and _whole_fixpoint_ok(program, ctx)):  # (that was this run)
        v, d = (np.array(a, dtype=program.value_dtype) for a in inputs)
        budget = _pops_budget(ctx, pind.shape[0])
        ocode = EDGE_OPS[program.edge_op]
        K.async_fixpoint_minmax(pptr, pind, _w(push[1]), ocode, COMBINERS[program.combiner],
                                v, d, ocode != EDGE_OPS["add_one"], budget)
        e = minmax_diverged(program, init, minmax_growth_flags(program, v, push))
    if e is not None:
        raise e


def run(program, graph, mode="bsp", max_iter=None, tol=None, comm=None, progress=None, threads=None,
        steps=None):
    """Run a vertex program on a graph.

    Parameters
    ----------
    program : VertexProgram instance or class
        The program (a class is instantiated without arguments).
    graph : Graph
    mode : {"bsp", "asap"}
        BSP: synchronous supersteps (any program).  ASAP: asynchronous delta processing
        (programs declaring ``accumulative = True`` only; otherwise ``ValueError``).
    max_iter : int, optional
        Superstep / sweep cap (default ``program.default_max_iter``).
    tol : float, optional
        Default ``program.default_tol``.  For programs with an ``error_factor(ctx)`` (the
        built-in Katz and PageRank): a bound on the L1 error of the result, the same in
        every mode and on every rank count (the engines stop when the residual is <=
        ``tol / error_factor``; see :mod:`asapgraph.options`).  Otherwise the threshold
        of the program's own termination test.  ``stats["error_bound"]`` is the bound
        reached (None when the program has none).
    comm : mpi4py communicator, optional
        With more than one rank, runs on the distributed engine (``asapgraph.engine``).
    progress : asapgraph.progress.Progress, optional
    threads : int, optional
        Cap on the OpenMP threads of the kernels for this run (default: ``OMP_NUM_THREADS``
        or all cores); ``threads=1`` gives single-threaded figures.  On ranks: each rank's
        cap (ranks sharing cores still run their kernels on one thread).
    steps : int, optional
        Run this many supersteps (BSP; overrides ``max_iter`` and ``tol``) and report
        ``converged=True``; fewer only at a fixpoint (no active vertex, no pending delta, a
        residual of 0), where more would change nothing (``iterations``: the number run).

    Returns
    -------
    ProgramResult
    """
    program = validate_program(program, mode)
    # the ASAP experiment knobs in the environment, as the command line checks them (every
    # run command, either mode): BSP reads some too (ASAPGRAPH_EXTRAPOLATE in the sum
    # programs' rounds, ASAPGRAPH_SPIN_WAITS, ASAPGRAPH_REBALANCE_FORCE), and "yes" was
    # read there as on where ASAP's solver refused it (audit 24b)
    _options.check_env()
    from asapgraph.graph.convert import as_engine_graph

    graph = as_engine_graph(graph)   # (networkx, scipy, an edge array ...: converted)
    hops = steps is not None
    if hops:
        max_iter, tol = exact_steps(program, steps, mode)
    # checked and applied on ranks too (each rank's kernels): on a communicator of more
    # than one rank ``threads`` was neither, so threads="x" or 0 ran without a word
    threads = _options.check_threads(threads)
    if comm is not None and not callable(getattr(comm, "Get_size", None)):
        # ("x": AttributeError "'str' object has no attribute 'Get_size'")
        raise TypeError(f"comm must be an mpi4py communicator or None, got {comm!r}")
    old = None if threads is None else K.set_num_threads(threads)
    try:
        if comm is not None and comm.Get_size() > 1:
            try:
                from asapgraph.engine import distributed as _dist_programs
            except ImportError:
                raise NotImplementedError("distributed programs: coming with the MPI "
                                          "engine") from None
            if hops:  # the ranks' own exact steps (one hop each: the delta form's supersteps)
                return _dist_programs.run(program, graph, mode=mode, comm=comm,
                                          progress=progress, steps=steps)
            return _dist_programs.run(program, graph, mode=mode, max_iter=max_iter, tol=tol,
                                      comm=comm, progress=progress)
        res = _run_single(program, graph, mode, max_iter, tol, comm, progress, hops, threads)
    finally:
        if old is not None:
            K.set_num_threads(old)
    return finish_steps(res, steps) if hops else res


def check_run(program, graph, mode="bsp", max_iter=None, tol=None):
    """What :func:`run` checks on one process before its first iteration (the program's
    declarations, ``max_iter``, ``tol``, finite weights, ``program.setup``: Katz's bound of
    the largest eigenvalue, sssp's non-negative weights), without running it: rank 0 makes
    them on a Matrix Market or Parquet input before it scatters it, so that a refusal reads
    as on one process (:func:`asapgraph.cli.common.whole_file_checked`)."""
    program = validate_program(program, mode)
    max_iter = _options.check_max_iter(program.default_max_iter if max_iter is None else max_iter)
    tol = _options.check_tol(program.default_tol if tol is None else tol)
    ctx = Context(graph, mode=mode, tol=tol, max_iter=max_iter, comm=None)
    check_finite_weights(program, ctx)
    with np.errstate(over="ignore", invalid="ignore"):
        program.setup(ctx)


def _run_single(program, graph, mode, max_iter, tol, comm, progress, hops=False, threads=None):
    """Single-process body of :func:`run` (``program`` already validated; ``hops``: a run
    of exact steps, :func:`.program.exact_steps`)."""
    progress = _progress.get(progress)
    max_iter = _options.check_max_iter(program.default_max_iter if max_iter is None else max_iter)
    tol = _options.check_tol(program.default_tol if tol is None else tol)
    why = _options.program_asap_tol_refusal(program, mode, tol)
    if why is not None:  # (as on ranks: asapgraph.engine.distributed.run)
        raise InputError("asapgraph", None, why)
    ctx = Context(graph, mode=mode, tol=tol, max_iter=max_iter, comm=comm)
    topo = _topology(graph)
    with np.errstate(over="ignore", invalid="ignore"):  # a divergence is reported, not warned
        return _run_single_ctx(program, ctx, graph, topo, mode, max_iter, tol, progress, hops,
                               threads)


def _run_single_ctx(program, ctx, graph, topo, mode, max_iter, tol, progress, hops=False,
                    threads=None):
    t0 = time.perf_counter()
    check_finite_weights(program, ctx)
    program.setup(ctx)
    ctx.tol = _options.engine_tol(program, ctx, tol)
    from asapgraph.engine import sum_program as _sum  # no MPI: the tuned engine's rounds on one process

    if mode == "bsp" and not hops and _sum.is_plain_pagerank(program):
        return _pagerank_solver(program, ctx, graph, tol, max_iter, progress, threads, t0)
    if _sum.reason_not_compiled(program) is None:
        state, iters, converged, residual, extra = _sum.run_local(program, ctx, graph, ctx.tol,
                                                                  max_iter, progress)
        _options.check_residual(residual, program.name, iters)
        values = program.result(ctx, state)
        seconds = time.perf_counter() - t0
        stats = {"mode": mode, "seconds": seconds, "iteration_seconds": [], "dense_steps": iters,
                 "sparse_steps": 0, "residual": residual, "threads": 1, **extra, "tol": tol,
                 "error_bound": _options.error_bound(program, ctx, residual, converged)}
        _relative_bound(stats, program, ctx, residual, converged)
        progress.done(f"{program.name}: {_status(converged)} after {iters} iterations, "
                      f"{seconds:.3f} s, {mode}")
        result = ProgramResult(values, ctx.ids, iters, bool(converged), stats,
                               name=getattr(program, "name", "program"))
        result.labels = getattr(graph, "labels", None)
        return result
    if program.accumulative:
        coef = program.coef(ctx)
        coef = None if coef is None else np.ascontiguousarray(coef, dtype=np.float64)
        inputs = program.init_delta(ctx)
        engine = _run_delta_bsp if mode == "bsp" else _run_delta_async
        state, iters, converged, residual, emap, it_times = engine(program, ctx, topo, progress,
                                                                   coef, inputs)
        if program.combiner in ("min", "max"):  # values that overflowed: no fixed point
            _check_growth(program, ctx, topo, mode, inputs, state, converged)
    else:
        state, iters, converged, residual, emap, it_times = _run_value_form(program, ctx, topo, progress)
    values = program.result(ctx, state)
    seconds = time.perf_counter() - t0
    stats = {"mode": mode, "seconds": seconds, "edges_scanned": int(emap.edges),
             "iteration_seconds": it_times, "dense_steps": emap.dense_steps,
             "sparse_steps": emap.sparse_steps, "residual": residual,
             "threads": K.num_threads(), "tol": tol,
             "error_bound": _options.error_bound(program, ctx, residual, converged)}
    _relative_bound(stats, program, ctx, residual, converged)
    progress.done(f"{program.name}: {_status(converged)} after {iters} iterations, "
                  f"{seconds:.3f} s, {mode}")
    result = ProgramResult(values, ctx.ids, iters, bool(converged), stats,
                           name=getattr(program, "name", "program"))
    result.labels = getattr(graph, "labels", None)
    return result


def _status(converged):
    """The progress line's word for a run's end, as ``pagerank`` says it (a run capped by
    ``max_iter`` and written with ``--allow-unconverged`` said only "N iterations")."""
    return "converged" if converged else "NOT converged"


def _relative_bound(stats, program, ctx, residual, converged):
    """``stats["relative_error_bound"]``: the bound in the unit of ``tol`` (Katz: the
    L1 error over beta; what the run stopped on), for programs solving in a scaled unit
    (:func:`asapgraph.options.error_bound`); absent otherwise.  ``stats["residual"]``
    (the engines' ``residual``) becomes the values' unit, as ``error_bound``
    (:func:`asapgraph.options.values_residual`)."""
    rel = _options.error_bound(program, ctx, residual, converged, relative=True)
    if rel is not None:
        stats["relative_error_bound"] = rel
    stats["residual"] = _options.values_residual(program, ctx, residual)


def _pagerank_solver(program, ctx, graph, tol, max_iter, progress, threads, t0):
    """A plain :class:`~asapgraph.programs.PageRankProgram` in BSP (no exact ``steps``) on
    PageRank's own single-process Jacobi solver (:func:`asapgraph.programs.pagerank.pagerank`),
    as MPI ranks run it on theirs (:func:`.sum_program.run_pagerank_program`): the same
    iterates from the same uniform start, so ``max_iter=k`` gives the same truncated vector
    on 1 and K ranks (the delta form's k-th partial sum, which one process wrote before,
    is another vector with another bound: audit 21), and ~7x fewer supersteps to a
    tolerance.  ``program.setup`` has run (``p``, ``q``: the normalised teleport and
    dangling vectors).  Exact ``steps`` stay on the delta form (one hop per superstep)."""
    # (the solver is the program's own: the engine layer imports no program module)
    r = program.single_process_solve(graph, tol, max_iter, bool(ctx.weighted), threads,
                                     progress)
    seconds = time.perf_counter() - t0
    from asapgraph.engine.sum_program import ENGINE

    stats = {"mode": "bsp", "seconds": seconds, "iteration_seconds": list(r.iteration_seconds),
             "dense_steps": r.iterations, "sparse_steps": 0, "residual": float(r.residual),
             "threads": int(r.threads), "edges_scanned": int(r.iterations) * int(graph.m),
             "tol": tol, "error_bound": float(r.error_bound), "engine": ENGINE}
    progress.done(f"{program.name}: {_status(r.converged)} after {r.iterations} iterations, "
                  f"{seconds:.3f} s, bsp")
    result = ProgramResult(program.result(ctx, r.ranks), ctx.ids, r.iterations,
                           bool(r.converged), stats, name=getattr(program, "name", "program"))
    result.labels = getattr(graph, "labels", None)
    return result
