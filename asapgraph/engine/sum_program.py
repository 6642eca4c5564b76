"""Accumulative sum programs on the tuned BSP/ASAP engine (the PageRank solver, generalised).

Rationale
---------
An accumulative sum program (``accumulative = True``, combiner ``"sum"``, edge op
``"copy"`` or ``"mul"``; see :mod:`asapgraph.engine.program`) is the linear fixed point
``v = v0 + d0 + A_c^T v`` with ``A_c[u, w] = coef_u * w_uw`` (``w_uw = 1`` for ``copy`` or
without weights).  The Maiter delta form pushes a pending delta ``r_u`` as ``coef_u r_u
w_uw`` along the out-edges -- exactly what the PageRank solvers of :mod:`.asap` push,
``alpha r_u w_uw / outw_u``, with the coefficient vector in place of ``alpha / outw`` and
without the teleport and dangling pools.  So this module only *compiles* a program to
that solver's input, once per run:

* ``coef(ctx)`` and ``init_delta(ctx)`` are evaluated ONCE, as numpy arrays over the
  rank's vertices (``setup`` before them); the coefficient is folded into the local
  out-CSR (``vcoef[u] = coef_u`` per vertex, or ``coef[e] = coef_u w_e`` per edge for
  ``mul`` on weighted graphs), so a sweep costs what PageRank's sweep costs per edge;
* the local graph is the program engine's push side
  (:class:`asapgraph.partition.program_graph._Side`: rows owned,
  columns owned or per-peer slots ordered by peer then vertex -- the layout of
  :class:`.loader.LocalGraph`), viewed without copying except for the int32 targets;
* ASAP is :class:`.asap._Solver` itself (``jacobi`` form with ``alpha = 1``, no pools,
  ``delta0`` as the initial residual): NOTIFY-ACK with the window, the stochastic reduce
  on the circulant expander, the approximation knob, 16-bit messages with error
  feedback, counting-wave termination, the work limit, traffic accounting and the
  network/straggler emulation are PageRank's, unchanged;
* BSP is the same local kernel (:func:`._local.jacobi_push` with threshold 0, i.e. every
  pending delta is pushed: synchronous Jacobi, the delta form of power iteration) with
  PageRank's exchange (one message per out-peer per superstep, dense or sparse float64,
  whichever is smaller, with the emulation header) and one ``Allreduce`` per superstep.

Termination and ``tol``: the measured quantity is the certified *pending mass*
``sum |r|`` over residuals, buffered slots and (ASAP) messages in flight -- the solver's
own bound with ``1 - alpha`` replaced by 1, i.e. the program API's rule "stop when the
pending mass ``sum |delta|`` is at most ``tol``".  It is returned as ``error_bound``.
(For a contraction ``||A_c||_1 = c < 1`` the L1 error of the values is at most
``error_bound * c / (1 - c)``.)  The values returned fold the residuals still pending in
(they are part of the next round's sum).  Initial deltas whose largest magnitude lies
outside [2^-64, 2^64] are solved in a scaled unit (:func:`_delta_scale`: a power of two,
exact, ``tol`` scaled alike), so the pending-mass sums neither overflow nor underflow.

What is not compiled (runs on the older engine of :mod:`.programs`, which calls every
hook): programs that override ``aggregate`` or ``post_delta`` (global terms such as
PageRank-as-a-program's dangling mass), ``direction_at`` (a direction per superstep),
non-float64 values, a custom ``message()``, or an ``edge_op`` other than copy/mul.
:func:`reason_not_compiled` names the reason; the result's ``stats["engine"]`` says which
engine ran.

References: Zhang, Gao, Gao, Wang, "Maiter", IEEE TPDS 25(8), 2014; the rationale of
:mod:`.asap` (NOTIFY-ACK, stochastic reduce, Mattern's counting waves).
"""
from __future__ import annotations

import os
import time

import numpy as np

from asapgraph.engine.program import VertexProgram, program_class
from asapgraph.kernels import _local
from asapgraph.comm.mpi import mpi
from asapgraph.engine import exchange as ex
from asapgraph.engine.stats import traffic_totals

__all__ = ["reason_not_compiled", "prepare", "run_sum_program", "run_local", "is_plain_pagerank",
           "run_pagerank_program", "ENGINE"]

#: ``stats["engine"]`` of runs compiled here
ENGINE = "tuned-sum"

_BLOCK = 16


def _overrides(program, name):
    return getattr(type(program), name, None) is not getattr(VertexProgram, name)


def reason_not_compiled(program):
    """Why ``program`` cannot run on the tuned engine (None: it can)."""
    if not program.accumulative or program.combiner != "sum":
        return "not an accumulative sum program"
    if program.edge_op not in ("copy", "mul"):
        return f"edge_op {program.edge_op!r}"
    if np.dtype(program.value_dtype) != np.float64:
        return "value_dtype is not float64"
    for hook in ("aggregate", "post_delta", "direction_at"):
        if _overrides(program, hook):
            return f"it defines {hook}()"
    return None


class _SumGraph:
    """A :class:`.loader.LocalGraph` view of a program engine side with folded coefficients."""

    dangling = None

    def __init__(self, g, sd, coef, w):
        nloc = sd.nloc
        self.n, self.nloc, self.nslots = g.n, nloc, sd.nslots
        self.owned = g.owned  # dense global ids (the pull layout's locality test reads them)
        tgt = getattr(sd, "_tgt_narrow", None)
        if tgt is None:  # the kernels take int32 targets when they fit (half the bytes)
            tgt = sd.col.astype(np.int32) if nloc + sd.nslots < 2**31 - 1 else sd.col
            sd._tgt_narrow = tgt
        self.indptr, self.tgt = sd.indptr, tgt
        self.mloc = len(tgt)
        self.m = g.m
        c = np.ones(nloc) if coef is None else coef
        if w is None:
            self.coef, self.vcoef = None, np.ascontiguousarray(c, dtype=np.float64)
        else:  # per-edge coefficient coef_u * w_e
            self.coef = np.repeat(c, np.diff(sd.indptr)) * w
            self.vcoef = np.ones(nloc)
        self.dangling = np.zeros(nloc, dtype=np.uint8)  # no pools: an edgeless vertex absorbs
        self.out_peers, self.out_off = sd.out_peers, sd.out_off
        self.in_peers, self.in_maps = sd.in_peers, sd.in_maps


class _Extrapolation:
    """Power-series extrapolation of the synchronous delta form (the BSP engines).

    In the delta form the pending deltas evolve as ``r <- A_c^T r``; once ``r`` is aligned
    with the dominant eigenvector (``A_c^T r ~ lam r``, seen as a stable ratio of the
    global signed sums of two rounds, with no cancellation in them), the rest of the
    series is ``r / (1 - lam)``.  The next round then pushes ``s r``, ``s = 1 / (1 -
    lam)``, and leaves ``-(s - 1) r`` pending: ``x += s r``, ``r <- s A_c^T r - (s - 1) r``.
    Any ``s`` keeps the invariant ``x + (I - A_c^T)^-1 r`` (so the fixed point, whatever
    the estimate), and with a good one the residual becomes a signed remainder that
    decays at the *subdominant* rate: on rmat:14 a seeded PPR needs 20 rounds instead of
    123 to a pending mass of 1e-10 (what the value form of PageRank gets from a uniform
    start).  Rules: ``0 < lam < 0.999``, two consecutive ratios within 1%, ``|sum r| >
    0.99 sum |r|``, at least 3 rounds since the last step.  Off with
    ``ASAPGRAPH_EXTRAPOLATE=0``.  Off for the rest of the run, too, once a step did not
    pay: when the next step would be taken, the pending mass is above the mass the last
    step found (right after a step it may well be: the remainder's components are
    multiplied by ``1 - s (1 - mu)``, and they decay fast).  On a defective ``A_c`` (a Jordan
    block: two vertices with the same self-loop weight and an edge between them) the
    ratio drifts as ``lam (k + 1) / k`` and looks stable, and every step multiplied the
    nilpotent part by ``s`` (55): BSP Katz diverged ("did not converge", residual 8e12,
    or "residual became nan") at alpha 0.3 with ``lambda_max`` 3, where plain rounds
    converge, and ASAP on 2 ranks too.

    ASAP (:meth:`wave_factor`): the ratio is the produced over the pushed signed mass of
    all sweeps since the last termination wave (two extra wave fields); when stable,
    every rank pushes ``s r`` of its own residual in its next sweep.  Any rank may do so
    at any time (the invariant holds per vertex), but ranks do it at different moments
    with part of the residual still in buffers, so the cancellation is partial: on
    rmat:16, 4 ranks, seeded PPR to 1e-6, 110-116 sweeps and 12-13 MB instead of
    144-148 and 17 MB (BSP: 13 rounds instead of 70).  Extrapolating at a consistent
    cut instead (all ranks passive, nothing in flight) was tried and was worse (1.06 s,
    26 MB): at rest the ranks' residuals are not aligned with the global eigenvector.
    """

    def __init__(self):
        self.on = os.environ.get("ASAPGRAPH_EXTRAPOLATE", "1") != "0"
        self.prev_sum = self.prev_lam = None
        self.last = -10
        self.steps = 0
        self.mass_at_step = None  # the pending mass the last step found

    def _paid(self, mass):
        """False (and no more steps in this run) when the last step did not pay: as the
        next step would be taken, the pending mass is above what the last step found
        (the fixed point is kept whatever ``s``; only the speed was at stake)."""
        if self.mass_at_step is not None and not mass <= self.mass_at_step:
            self.on = False
        return self.on

    def _stepped(self, mass):
        self.steps += 1
        self.mass_at_step = mass

    def wave_factor(self, k, lam, signed, mass):
        """ASAP: observe wave ``k`` (``lam``: produced / pushed signed mass since the last
        wave, over all ranks); returns ``s`` for every rank's next sweep (1: none)."""
        s = 1.0
        if self.on and abs(signed) > 0.99 * mass and np.isfinite(lam):
            if (self.prev_lam is not None and 0.0 < lam < 0.999 and k - self.last > 2
                    and abs(lam - self.prev_lam) < 0.01 * lam and self._paid(mass)):
                s = 1.0 / (1.0 - lam)
                self.last = k
                self._stepped(mass)
            self.prev_lam = lam
        else:
            self.prev_lam = None
        return s

    def factor(self, k, signed, mass):
        """Observe round ``k``'s global sums; returns ``s`` for the next round (1: none)."""
        s = 1.0
        if self.on and self.prev_sum and abs(signed) > 0.99 * mass:
            lam = signed / self.prev_sum
            if (self.prev_lam is not None and 0.0 < lam < 0.999 and k - self.last > 2
                    and abs(lam - self.prev_lam) < 0.01 * lam and self._paid(mass)):
                s = 1.0 / (1.0 - lam)
                self.last = k + 1
                self._stepped(mass)
            self.prev_lam = lam
        else:
            self.prev_lam = None
        self.prev_sum = signed
        return s


def _delta_jacobi(lg, delta0, tol, max_iter, reduce2, exchange, on_round=None, compute=None):
    """The synchronous delta rounds (BSP on ranks or one process).

    ``reduce2(signed, mass)`` sums over ranks; ``exchange(acc)`` ships the slots and adds
    what arrives.  Returns ``(values, rounds, converged, pending mass, extrapolations,
    edges visited)``.
    """
    perf = time.perf_counter
    nloc = lg.nloc
    x = np.zeros(nloc)
    acc = np.zeros(nloc + lg.nslots)
    acc[:nloc] = delta0
    rs = np.zeros(nloc)
    act = np.zeros(-(-nloc // _BLOCK), dtype=np.int32)
    bsum = np.zeros(len(act))
    zero = np.zeros(nloc)
    ex = _Extrapolation()
    signed, mass = reduce2(float(acc[:nloc].sum()), _local.abs_sum(acc, 0, nloc))
    it, converged, s, edges = 0, mass <= tol, 1.0, 0
    while not converged and it < max_iter:
        it += 1
        t0 = perf()
        if s != 1.0:
            acc[:nloc] *= s
        edges += _local.jacobi_push(lg.indptr, lg.tgt, lg.coef, lg.vcoef, x, acc, rs, act, bsum,
                                    lg.dangling, 1.0, 0.0, zero, 0.0, zero, 0.0, _BLOCK)[0]
        if s != 1.0:  # leave -(s - 1) r pending (rs holds s r)
            acc[:nloc] -= ((s - 1.0) / s) * rs
        if compute is not None:
            compute(perf() - t0)
        exchange(acc)
        signed, mass = reduce2(float(acc[:nloc].sum()), _local.abs_sum(acc, 0, nloc))
        if on_round is not None:
            on_round(it, mass)
        if not np.isfinite(mass):
            break
        converged = mass <= tol
        s = ex.factor(it, signed, mass)
    x += acc[:nloc]
    return x, it, bool(converged), float(mass), ex.steps, edges


def _bsp(comm, lg, delta0, tol, max_iter, emu, st, progress):
    """Synchronous delta Jacobi on ranks; returns ``(values, supersteps, converged, mass)``."""
    nloc, offs = lg.nloc, lg.out_off
    ch = ex.Channel(comm, lg, emu, st)

    def exchange(acc):
        ch.exchange(lambda j, b: ex.encode(acc, nloc + offs[j], nloc + offs[j + 1], b)[:2],
                    lambda j, b, nb: ex.decode(acc, lg.in_maps[j], b, nb))

    def reduce2(signed, mass):
        out = ch.reduce(signed, mass)
        return float(out[0]), float(out[1])

    def on_round(it, mass):
        st.rounds = it
        st.sample(mass)
        if progress is not None:
            progress(it, mass)

    x, it, conv, mass, steps, edges = _delta_jacobi(lg, delta0, tol, max_iter, reduce2, exchange,
                                                    on_round, ch.compute)
    st.edges_visited += edges
    st.extra["extrapolations"] = steps
    return x, it, conv, mass


class _Whole:
    """The single-process graph in the :class:`.loader.LocalGraph` layout (no slots)."""

    nslots = 0

    def __init__(self, graph, direction, coef, use_w):
        from asapgraph.engine.single import _topology

        indptr, tgt, w = _topology(graph).push(direction)
        self.n = self.nloc = graph.n
        self.indptr = np.ascontiguousarray(indptr, dtype=np.int64)
        self.tgt = tgt if tgt.dtype in (np.int32, np.int64) else tgt.astype(np.int64)
        c = np.ones(graph.n) if coef is None else coef
        if use_w and w is not None:
            self.coef, self.vcoef = np.repeat(c, np.diff(self.indptr)) * w, np.ones(graph.n)
        else:
            self.coef, self.vcoef = None, np.ascontiguousarray(c, dtype=np.float64)
        self.dangling = np.zeros(graph.n, dtype=np.uint8)


#: :func:`_delta_scale`: initial deltas whose largest magnitude lies outside [2^-64, 2^64]
#: are solved in a scaled unit; inside, runs are as they always were (to the bit)
_SCALE_FREE = (2.0 ** -64, 2.0 ** 64)


def _delta_scale(dmax):
    """The power of two ``s`` to solve in (``x = s * x'`` from ``delta0 / s``, ``tol /
    s``: exact, the same stops), given the largest ``|delta0|`` over all ranks: 1 inside
    :data:`_SCALE_FREE`, else ``dmax / s`` in [1, 2).  The delta form is linear in the
    deltas, and a pending mass ``sum |r|`` of deltas near 1e308 overflowed (ASAP on ranks
    then stopped "diverged" where one process, which never checks its first sum, went
    on); deltas near 1e-300 lose bits to subnormals.  (Katz scales its beta itself, so
    its deltas are in [1, 2): ``s = 1``.)"""
    dmax = float(dmax)
    if not (0.0 < dmax < np.inf) or _SCALE_FREE[0] <= dmax <= _SCALE_FREE[1]:
        return 1.0
    import math

    return math.ldexp(1.0, math.frexp(dmax)[1] - 1)


def run_local(program, ctx, graph, tol, max_iter, progress=None):
    """One process (no MPI): the BSP engine's rounds with no exchange, for both modes.

    Returns ``(values, rounds, converged, error_bound, stats)``.  On one process there is
    nothing to overlap, so ASAP runs the same extrapolated Jacobi rounds as BSP.
    """
    v0, d0, coef = prepare(program, ctx)
    use_w = program.edge_op == "mul" and program.use_weights
    lg = _Whole(graph, program.direction, coef, use_w)
    s = _delta_scale(np.max(np.abs(d0), initial=0.0))
    on_round = None if progress is None else (lambda it, m: progress.iteration(it, m * s))
    x, it, conv, mass, steps, edges = _delta_jacobi(lg, d0 / s if s != 1.0 else d0, tol / s,
                                                    max_iter, lambda a, b: (a, b),
                                                    lambda acc: None, on_round)
    if s != 1.0:
        x, mass = x * s, mass * s
    return v0 + x, it, conv, mass, {"edges_scanned": int(edges), "error_bound": mass,
                                    "extrapolations": steps, "engine": ENGINE}


def prepare(program, ctx):
    """``(values0, deltas0, coef)``: the program's callbacks, evaluated once (their shapes
    and dtypes are checked by the program contract, :func:`.program.validate_program`)."""
    v0, d0 = program.init_delta(ctx)
    v0 = np.asarray(v0, dtype=np.float64)
    d0 = np.ascontiguousarray(d0, dtype=np.float64)
    coef = program.coef(ctx)
    coef = None if coef is None else np.ascontiguousarray(coef, dtype=np.float64)
    return v0, d0, coef


def is_plain_pagerank(program):
    """True for the built-in :class:`~asapgraph.programs.PageRankProgram` and for its
    subclasses that override none of its attributes or callbacks: its dangling hook is
    exactly PageRank's pools, so it runs on the PageRank solvers
    (:func:`run_pagerank_program`).  A subclass with a hook of its own (``post_delta``
    calling ``super()`` included) runs on the general program engine."""
    cls = program_class(program)
    mro = cls.__mro__
    base = next((i for i, c in enumerate(mro) if c.__dict__.get("engine_solver") == "pagerank"),
                None)
    if base is None:
        return False
    # a subclass that redefines nothing of the program's (a new name, a docstring, an
    # __init__ that sets the same attributes) is the same program: the same solvers
    return not any(k not in _NEUTRAL and not (k.startswith("__") and k != "__call__")
                   for c in mro[:base] for k in c.__dict__)


#: what a subclass of the built-in PageRank program may redefine and stay on its solvers
_NEUTRAL = frozenset(("name", "__init__"))


def run_pagerank_program(program, ctx, g, comm, mode, tol, max_iter, options=None):
    """PageRank-as-a-program on :func:`.bsp.run_bsp` / :func:`.asap_pagerank.run_asap` (collective).

    ``program.setup`` has run (its ``p``, ``q`` are the rank's normalised teleport and
    dangling vectors).  ``tol`` means what it means for the built-in distributed PageRank:
    a bound on the L1 error (BSP stops when ``alpha / (1 - alpha)`` times the L1 change of
    a superstep is below it; ASAP on its certified bound).  Returns what
    :func:`run_sum_program` returns, with the certified bound as ``error_bound`` and as the
    residual the L1 change it bounds (BSP: the last superstep's, as one process reports it;
    ASAP: the bound over ``alpha / (1 - alpha)``).
    """
    from asapgraph import options as _options
    from asapgraph.engine.emulation import Emulator
    from asapgraph.engine.stats import RankStats

    opts = dict(options or {})
    sd = g.side("out", "push")
    out = np.asarray(g.out_weight if g.weighted else g.out_degree, dtype=np.float64)
    inv = np.where(out > 0, 1.0 / np.where(out > 0, out, 1.0), 0.0)
    lg = _SumGraph(g, sd, inv, sd.w if g.weighted else None)
    lg.dangling = (out == 0).astype(np.uint8)
    K, me = comm.Get_size(), comm.Get_rank()
    emu = Emulator(opts.get("emulation"), me, K)
    st = RankStats(me)
    p = np.ascontiguousarray(program.p, dtype=np.float64)
    q = None if program.dangling is None else np.ascontiguousarray(program.q, dtype=np.float64)
    extra = {}
    if mode == "bsp":
        from asapgraph.engine.bsp import run_bsp

        x, iters, conv, change = run_bsp(comm, lg, p, p if q is None else q, program.alpha,
                                         _options.pagerank_change_tol(program.alpha, tol),
                                         max_iter, emu, st)
        bound = _options.pagerank_error_bound(program.alpha, change)
        residual = change
    else:
        from asapgraph.engine.asap_pagerank import run_asap

        x, iters, conv, bound, extra = run_asap(
            comm, lg, p, q, program.alpha, tol, emu, st, fanout=opts.get("fanout", 2),
            window=opts.get("window", 1), approx=opts.get("approx", 0.0),
            seed=opts.get("seed", 0), max_iter=max_iter,
            schedule=opts.get("schedule"))
        residual = _options.pagerank_change_of_bound(program.alpha, bound)
    return x, int(iters), bool(conv), float(residual), _totals(comm, st, emu, bound, extra)


def _totals(comm, st, emu, bound, extra, engine=ENGINE):
    return {**traffic_totals(comm, st, emu), "error_bound": float(bound), "engine": engine,
            **extra}


def asap_extra(comm, sol, st):
    """The ASAP figures of a program run on :class:`.asap._Solver` (schedule, waves, sweeps)."""
    from asapgraph.engine.asap import work_figures

    return {**sol.sched.figures(), "fanout_asked": sol.fanout_asked, **work_figures(sol),
            "window": sol.window, "approx": sol.approx,
            "waves": st.extra.get("waves", 0),
            "sweeps_max": int(comm.allreduce(st.extra.get("sweeps", 0), op=mpi().MAX)),
            "extrapolations": st.extra.get("extrapolations", 0),
            "schedule": sol.schedule}


def run_sum_program(program, ctx, g, comm, mode, tol, max_iter, options=None, progress=None,
                    inputs=None):
    """Run a compiled sum program (collective; :func:`reason_not_compiled` must be None).

    ``inputs``: the result of :func:`prepare` (evaluated here when None).

    ``options``: ``fanout``, ``window``, ``approx``, ``seed`` (ASAP) and ``emulation``
    (an :class:`.emulation.Emulation`, a dict or None), as :func:`asapgraph.engine.pagerank`.
    Returns ``(values over the owned vertices, iterations, converged, error_bound,
    stats)``: ``stats`` holds totals over the ranks (edges, messages, bytes) and the ASAP
    schedule's figures; ``error_bound`` is the certified pending mass.
    """
    from asapgraph.engine.emulation import Emulator
    from asapgraph.engine.stats import RankStats

    MPI = mpi()
    opts = dict(options or {})
    v0, d0, coef = inputs if inputs is not None else prepare(program, ctx)
    direction = program.direction
    ctx.direction = direction
    sd = g.side(direction, "push")
    w = sd.w if (program.edge_op == "mul" and program.use_weights and sd.w is not None) else None
    lg = _SumGraph(g, sd, coef, w)
    K, me = comm.Get_size(), comm.Get_rank()
    emu = Emulator(opts.get("emulation"), me, K)
    st = RankStats(me)
    extra = {}
    report = None
    s = _delta_scale(comm.allreduce(float(np.max(np.abs(d0), initial=0.0)), op=MPI.MAX))
    if s != 1.0:  # (the same s on every rank)
        d0, tol = d0 / s, tol / s
    if progress is not None and me == 0:
        def rank0_report(it, mass):
            progress.iteration(it, mass * s)
        report = rank0_report
    if mode == "bsp":
        x, iters, conv, bound = _bsp(comm, lg, d0, tol, max_iter, emu, st, report)
        extra = {"extrapolations": st.extra.get("extrapolations", 0)}
    else:
        from asapgraph.engine.asap import _Solver

        sol = _Solver(comm, lg, 1.0, emu, st, opts.get("fanout", 2), opts.get("window", 1),
                      opts.get("approx", 0.0), opts.get("seed", 0), False, "jacobi", max_iter,
                      opts.get("schedule"))
        x, bound, rounds = sol.solve(np.zeros(lg.nloc), tol, relative=False, delta0=d0)
        iters = int(comm.allreduce(rounds, op=MPI.MAX))
        conv = bool(bound <= tol)
        extra = asap_extra(comm, sol, st)
    if s != 1.0:
        x, bound = x * s, bound * s
    values = v0 + x
    stats = _totals(comm, st, emu, bound, extra)
    return values, int(iters), bool(conv), float(bound), stats
