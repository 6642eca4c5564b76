"""Accumulative min/max programs on the tuned BSP/ASAP engine (the PageRank solver's loop).

Rationale
---------
A monotone accumulative program (``accumulative = True``, combiner ``"min"`` or ``"max"``,
edge op ``copy``/``mul``/``add``/``add_one``, int64 or float64 values: the built-in SSSP,
BFS and WCC, and user programs such as multi-source BFS) has one fixed point -- the least
(min) or greatest (max) one reachable from its initial deltas -- whatever the order, delay
or combining of the offers.  So it runs on the same machinery as the sum programs of
:mod:`.sum_program`, with a different *state* plugged into it:

* *Local work* is the whole local fixed point of the rank's part
  (:func:`._programs.async_fixpoint_minmax`: a binary heap by tentative value for
  weighted ``add``, ``mul`` and ``copy`` -- Dijkstra's order, a flood from the best label
  -- a FIFO for unit steps, ``add_one`` or unweighted ``add``: the same order without the
  heap, 1.5x faster on cnr-2000), over the push side of
  :class:`asapgraph.partition.program_graph.ProgramGraph` (rows owned, columns owned or
  per-peer *slots* ordered by peer then vertex).  An offer to a slot is
  combined into it with the combiner and never queued.  ``max_pops`` bounds one call (a
  divergent user program, e.g. max with positive ``add`` on a cycle, stays responsive and
  is stopped by ``max_iter``).
* *Slots remember what was sent* (``sent``): a slot whose value improved since its last
  message is *changed*; a message carries exactly the changed slots of one peer, as
  exact 8-byte values (no quantisation): dense ``[header | all slot values]`` (form 6) or
  sparse ``[header | k values | k int32 slot indices]`` (form 7), whichever is smaller
  (:func:`.exchange.encode_exact`).
  The receiver keeps an offer that improves on the target's delta and value (min/max),
  so duplicates, reordering and delays are harmless.
* *ASAP* is :meth:`.asap._Solver.solve` with ``minmax=`` this state: NOTIFY-ACK with the
  window, the rotating expander schedule of flushes (its spectral gap reported), the
  emulated links and stragglers, the traffic accounting and the counting waves are
  PageRank's.  The wave's "bound" is the number of improving deltas pending plus peers
  with unsent slots, so termination (two quiet waves, balanced counts, every rank
  passive, bound 0) means: no improving delta pending anywhere and nothing in flight --
  the fixed point.  The approximation knob does not apply (answers are exact).
* *BSP* is the sum programs' channel (:class:`.exchange.Channel`: one message per
  out-peer per superstep with the emulation header, the straggler sleeps) with the same
  local work: superstep = local fixed point, exchange of the changed slots, one
  ``Allreduce`` of the improving deltas pending; it stops when none is left.  So a BSP
  superstep covers a whole local region, not one hop (the supersteps are the rounds of
  cross-rank propagation).  ``run(..., steps=k)`` keeps the single-process meaning (``k``
  hops) and runs on the older engine of :mod:`.distributed`.

What is not compiled (runs on :mod:`.distributed`'s own engine): ``direction_at``
overrides, custom ``message()``, value dtypes other than int64/float64, combiners other
than min/max (:func:`reason_not_compiled`).

References: Bellman 1958; Dijkstra 1959; Shiloach & Vishkin 1982 (label propagation);
Zhang et al., "Maiter", TPDS 2014 (delta form); Mattern 1987 (counting waves).
"""
from __future__ import annotations

import time

import numpy as np

from asapgraph.comm.mpi import mpi
from asapgraph.engine.asap import _Solver
from asapgraph.engine.emulation import Emulator
from asapgraph.engine.exchange import Channel, decode_exact, encode_exact
from asapgraph.engine.program import COMBINERS, EDGE_OPS, VertexProgram, combiner_identity
from asapgraph.engine.stats import RankStats
from asapgraph.engine.supersteps import minmax_diverged, minmax_growth_flags, minmax_init_flags
from asapgraph.engine.sum_program import _SumGraph, _totals, asap_extra
from asapgraph.kernels import _programs as K

__all__ = ["reason_not_compiled", "run_minmax_program", "check_growth", "ENGINE"]

#: ``stats["engine"]`` of runs compiled here
ENGINE = "tuned-minmax"


def reason_not_compiled(program):
    """Why ``program`` cannot run on this engine (None: it can)."""
    if not program.accumulative or program.combiner not in ("min", "max"):
        return "not an accumulative min/max program"
    if program.edge_op not in ("copy", "mul", "add", "add_one"):
        return f"edge_op {program.edge_op!r}"
    if np.dtype(program.value_dtype) not in (np.dtype(np.int64), np.dtype(np.float64)):
        return "value_dtype is not int64 or float64"
    if getattr(type(program), "direction_at", None) is not VertexProgram.direction_at:
        return "it defines direction_at()"
    return None


class MinMaxState:
    """A rank's values, pending deltas and slot buffers; the plug-in of the solver loops."""

    def __init__(self, program, lg, w, v0, d0, max_pops):
        self.lg, self.nloc = lg, lg.nloc
        self.dtype = np.dtype(program.value_dtype)
        self.comb, self.op = COMBINERS[program.combiner], EDGE_OPS[program.edge_op]
        self.better = np.less if program.combiner == "min" else np.greater
        # a heap by value (Dijkstra's order, a flood from the best label) except where
        # FIFO order is the same order without the heap: unit steps (add_one, unweighted add)
        self.priority = not (program.edge_op == "add_one" or (program.edge_op == "add"
                                                              and w is None))
        ident = combiner_identity(program.combiner, self.dtype)
        nt = lg.nloc + lg.nslots
        self.values = np.full(nt, ident, dtype=self.dtype)
        self.deltas = np.full(nt, ident, dtype=self.dtype)
        self.values[:lg.nloc] = v0
        self.deltas[:lg.nloc] = d0
        self.sent = np.full(lg.nslots, ident, dtype=self.dtype)  # best value sent per slot
        self.w = np.zeros(0) if w is None else w
        self.max_pops = int(max_pops)
        self.starts = np.asarray(lg.out_off[:-1], dtype=np.int64)

    def pending(self):
        """Owned vertices whose delta improves on their value."""
        n = self.nloc
        return int(np.count_nonzero(self.better(self.deltas[:n], self.values[:n])))

    def sweep(self, dirty=None):
        """Local fixed point (at most ``max_pops`` pops); marks ``dirty[j]`` for out-peers
        with changed slots.  Returns ``(vertices settled, edges scanned, pending left)``."""
        lg = self.lg
        nproc, scanned, _, quiet = K.async_fixpoint_minmax(
            lg.indptr, lg.tgt, self.w, self.op, self.comb, self.values, self.deltas,
            self.priority, self.max_pops)
        if dirty is not None and lg.nslots:
            ch = self.deltas[self.nloc:] != self.sent
            dirty[:len(self.starts)] |= np.logical_or.reduceat(ch, self.starts)
        return int(nproc), int(scanned), (0 if quiet else self.pending())

    def changed(self, lo, hi):
        """True when a slot of ``[lo, hi)`` improved since its last message."""
        return bool((self.deltas[lo:hi] != self.sent[lo - self.nloc:hi - self.nloc]).any())

    def encode(self, lo, hi, buf):
        """Message of the changed slots ``[lo, hi)`` into ``buf`` (after the header);
        they count as sent.  Returns ``(bytes, form)``."""
        seg, sent = self.deltas[lo:hi], self.sent[lo - self.nloc:hi - self.nloc]
        ch = np.flatnonzero(seg != sent)
        sent[ch] = seg[ch]
        return encode_exact(seg, ch, buf)

    def decode(self, mp, buf, nbytes):
        """Keep the improving offers of a message made by :meth:`encode` (targets through
        ``mp``); returns how many improved."""
        t, v = decode_exact(mp, buf, nbytes, self.dtype)
        d, x = self.deltas[t], self.values[t]
        imp = self.better(v, d) & self.better(v, x)
        if not imp.any():
            return 0
        self.deltas[t[imp]] = v[imp]
        return int(np.count_nonzero(imp))


def _bsp(comm, lg, state, max_iter, emu, st, progress):
    """Synchronous rounds: local fixed point, exchange, global count of pending deltas."""
    ch = Channel(comm, lg, emu, st)
    nloc, offs = lg.nloc, lg.out_off
    pending = int(ch.reduce(state.pending())[0])
    it = 0
    while pending > 0 and it < max_iter:
        it += 1
        t0 = time.perf_counter()
        _, edges, _ = state.sweep()
        st.edges_visited += edges
        ch.compute(time.perf_counter() - t0)
        ch.exchange(lambda j, b: state.encode(nloc + offs[j], nloc + offs[j + 1], b),
                    lambda j, b, nb: state.decode(lg.in_maps[j], b, nb))
        pending = int(ch.reduce(state.pending())[0])
        st.rounds = it
        st.sample(pending)
        if progress is not None:
            progress(it, pending)
    return it, pending == 0, pending


def run_minmax_program(program, ctx, g, comm, mode, max_iter, options=None, progress=None,
                       inputs=None):
    """Run a min/max program on the tuned engine (collective; :func:`reason_not_compiled`
    must be None; ``program.setup`` has run).

    ``inputs``: ``program.init_delta(ctx)`` (evaluated here when None).  ``options``:
    ``fanout``, ``window``, ``seed`` (ASAP) and ``emulation``, as for sum programs
    (``approx`` does not apply: the answer is exact).  ``max_iter``: BSP supersteps; ASAP,
    the ranks' summed edge work in BSP supersteps' worth (:data:`.asap.WORK_FACTOR` x
    ``max_iter`` sweeps of the whole graph's edges).  Returns ``(values over the owned
    vertices, iterations, converged, pending, stats)``; ``pending`` (also
    ``stats["error_bound"]``) is the number of improving deltas left (0 when converged).
    """
    MPI = mpi()
    opts = dict(options or {})
    v0, d0 = inputs if inputs is not None else program.init_delta(ctx)
    direction = program.direction
    ctx.direction = direction
    sd = g.side(direction, "push")
    lg = _SumGraph(g, sd, None, None)
    w = sd.w if (sd.w is not None and program.use_weights and program.edge_op in ("add", "mul")) \
        else None
    max_pops = max(8 * (lg.nloc + lg.mloc), 1 << 16)
    state = MinMaxState(program, lg, w, v0, d0, max_pops)
    K_, me = comm.Get_size(), comm.Get_rank()
    emu = Emulator(opts.get("emulation"), me, K_)
    st = RankStats(me)
    report = None
    if progress is not None and me == 0:
        def rank0_report(it, left):
            progress.iteration(it, float(left))
        report = rank0_report
    if mode == "bsp":
        iters, conv, left = _bsp(comm, lg, state, max_iter, emu, st, report)
        extra = {}
    else:
        sol = _Solver(comm, lg, 1.0, emu, st, opts.get("fanout", 2), opts.get("window", 1),
                      0.0, opts.get("seed", 0), False, "jacobi", max_iter)
        _, left, rounds = sol.solve(np.zeros(lg.nloc), 0.0, relative=False, minmax=state)
        iters = int(comm.allreduce(rounds, op=MPI.MAX))
        conv = left == 0
        extra = asap_extra(comm, sol, st)
        extra.pop("extrapolations", None)
        extra.pop("schedule", None)  # min/max offers: no residual order
    stats = _totals(comm, st, emu, left, extra, ENGINE)
    values = state.values[:lg.nloc].copy()
    check_growth(program, comm, (v0, d0), values, (lg.indptr, w))
    return values, int(iters), bool(conv), float(left), stats


def check_growth(program, comm, inputs, values, push):
    """Collective: raise (on every rank) the InputError of a run whose values overflowed
    (:func:`.supersteps.minmax_diverged`, as on one process); ``inputs`` the rank's
    ``(values, deltas)`` from ``init_delta``, ``values`` its owned values after the run,
    ``push`` ``(indptr, weights or None)`` of its push CSR (None: not checked for int64)."""
    flags = np.array(minmax_init_flags(program, *inputs)
                     + minmax_growth_flags(program, values, push), dtype=np.int64)
    comm.Allreduce(mpi().IN_PLACE, flags, op=mpi().MAX)
    e = minmax_diverged(program, flags[:1].tolist(), flags[1:].tolist())
    if e is not None:
        raise e
