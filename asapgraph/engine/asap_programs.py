"""The ASAP loop of the general program engine on MPI ranks: :func:`run_asap`, the
asynchronous delta loop of accumulative programs the tuned solver cannot express
(programs with ``aggregate``/``post_delta``/``direction_at`` hooks, other value dtypes).

Rationale
---------
ASAP (accumulative programs only; Maiter's delta form, Zhang et al. TPDS 2014): no barrier
in the main loop.  Each rank repeatedly (1) receives what has arrived into its pending
deltas (``+=`` for sums, min/max for monotone programs), (2) runs local Gauss-Seidel
sweeps (``async_sweep_sum``) or worklist sweeps (``async_sweep_minmax``) over its push
CSR until local quiescence; slot entries collect the deltas for remote vertices, already
combined per target, (3) flushes slot buffers to its peers.  A vertex is processed only
when its delta exceeds ``tol / (n + slots)`` (sums) or improves its value (min/max).

The machinery is the tuned solver's (:mod:`.asap`), so a program with hooks gets all of
it: *messages* in the one format of :mod:`.exchange` (float64 header, then the exact
values of the program's dtype, sparse with int32 slot indices or dense);
*NOTIFY-ACK* (:class:`.exchange.NotifyAck`: at most ``window`` un-ACKed messages per
peer, the buffer keeps combining meanwhile); the *stochastic reduce*
(:class:`.reduce.Schedule`: in round ``t`` a rank flushes only to its ``fanout``
expander neighbours; its spectral gap is reported), with a push-sum estimate of the
global pending mass riding on the headers; the *approximation knob* (sums: a buffer
whose mass is below ``approx x estimated global mass / out-peers`` waits while messages
keep arriving or local work is done; a quiet round flushes everything, so no rank waits
on another); the *network and straggler emulation* (:mod:`.emulation`: delivery times
stamped on messages and ACKs, a straggler sleeps after its sweeps); and (sums) a peer
gets at most one message per ``flush_interval`` (1 ms): without this coalescing every
small arrival fans out into messages to every peer (measured: 4x the bytes on rmat:12).
Global terms of sum programs (``aggregate`` over the deltas sent, then ``post_delta``,
e.g. PageRank's dangling mass) travel with the termination waves.

Termination (sound, no barrier): the counting waves of :mod:`.termination`
(``passive_waves=1``; the program's aggregates as companion reductions of the same
wave; the soundness argument is that module's).  A rank joins the next wave only when
it is passive -- no local delta above the threshold, no sendable boundary entry held
back by the schedule, the window, the flush interval or the knob, every message ACKed,
no held delivery -- or capped; it keeps serving messages while a wave is in flight.
``dirty`` says that the rank received or sent a message or processed a vertex since its
previous contribution.  The run stops at the first wave in which ``sent == received``
and nobody is busy or dirty; then the pending delta mass is at most ``tol`` (sums) or
no delta improves a value (min/max).  ``max_iter`` caps the waves (reported as the
iterations) and, as a safety net, ``100 * max_iter`` local sweeps per rank; a capped
rank joins a wave with ``capped = 1`` and the whole job stops at that wave.

After every stop :meth:`.exchange.NotifyAck.settle` compares the per-pair message
counts (one ``Alltoall``) and delivers what is still in flight: expected after a capped
stop; after a converged stop such a message would betray an unsound termination and is
counted in ``stats["late_messages"]`` (must be 0); a message beyond the peers' counts
(of another run) in ``stats["stale_messages"]`` (must be 0).  Sum programs then send
their held boundary entries (each ``<= thr``) once, and every ACK is awaited before the
receives are cancelled, so nothing leaks into the next run.  With ``STRICT``
(``ASAPGRAPH_STRICT_ASAP=1``, or ``ASAPGRAPH_DEBUG_ASAP=1``) a run with stale or late
messages, or in which a rank joined a wave holding a sendable boundary entry, raises
``AssertionError`` on every rank.

The entry point is :func:`asapgraph.engine.distributed.run` (which decides ``strict``
from ``asapgraph.engine.distributed.STRICT``).
"""
from __future__ import annotations

import os
import sys
import time

import numpy as np

from asapgraph import options as _options
from asapgraph.comm.mpi import agree, mpi
from asapgraph.engine import exchange as ex
from asapgraph.engine.bsp_programs import EMPTY_W, collective
from asapgraph.engine.emulation import Emulator, now
from asapgraph.engine.program import COMBINERS, EDGE_OPS, VertexProgram, combiner_identity
from asapgraph.engine.reduce import Schedule
from asapgraph.engine.stats import RankStats, traffic_totals
from asapgraph.engine.supersteps import better as improves
from asapgraph.engine.termination import SENT
from asapgraph.engine.vclock import make_waves
from asapgraph.kernels import _programs as K

__all__ = ["run_asap", "DEBUG"]

#: seconds between two messages to the same peer (sum programs: min/max offers travel at
#: once, each improvement only once)
_FLUSH_INTERVAL = 1e-3

#: progress lines of every rank on stderr (``ASAPGRAPH_DEBUG_ASAP=1``)
DEBUG = os.environ.get("ASAPGRAPH_DEBUG_ASAP", "") not in ("", "0")


class _AsapStats(RankStats):
    """:class:`.stats.RankStats` (traffic, times, edges) plus this loop's counters."""

    def __init__(self, rank):
        super().__init__(rank)
        self.sweeps = 0
        self.waves = 0
        self.stale = 0      # messages beyond the peers' counts (of another run: must stay 0)
        self.late = 0       # messages found in flight after a converged stop (must stay 0)


def _overrides(program, hook):
    return getattr(type(program), hook, None) is not getattr(VertexProgram, hook)


def run_asap(program, ctx, g, comm, progress, coef, options=None, strict=False, inputs=None):
    """Asynchronous delta engine (see the module docstring); returns ``(local values,
    stats, converged, residual, extra)``.

    ``options``: ``fanout``, ``window``, ``approx`` (sum programs), ``seed`` and
    ``emulation``, as for the tuned engines.  ``strict``
    (``asapgraph.engine.distributed.STRICT``) also counts as late a wave joined while
    holding a sendable boundary entry.  ``inputs``: ``program.init_delta(ctx)``'s
    ``(values, deltas)`` (called here, collectively, when None)."""
    r = _Run(program, ctx, g, comm, progress, coef, dict(options or {}), strict, inputs)
    out = r.run()
    # a hook that raised on some ranks only (post_delta, aggregate: called between waves,
    # not collectively) capped its rank, so the run wound down; now every rank raises the
    # same error (the rank alone had waited forever in an agreement the others never
    # reached, or aborted the job)
    agree(comm, r.failed)
    return out


class _Run:
    """One run of the loop: the rank's state, its messages and the round loop."""

    def __init__(self, program, ctx, g, comm, progress, coef, opts, strict, inputs=None):
        self.program, self.ctx, self.comm, self.progress = program, ctx, comm, progress
        self.strict = strict
        self.comb = comb = program.combiner
        self.direction = program.direction_at(ctx)
        ctx.direction = self.direction
        sd = self.sd = g.side(self.direction, "push")
        self.nloc = nloc = sd.nloc
        nt = nloc + sd.nslots
        self.dtype = dtype = np.dtype(program.value_dtype)
        v0, d0 = collective(comm, program.init_delta, ctx) if inputs is None else inputs
        ident = combiner_identity(comb, dtype)
        self.values = np.full(nt, 0 if comb == "sum" else ident, dtype=dtype)
        self.deltas = np.full(nt, 0 if comb == "sum" else ident, dtype=dtype)
        self.values[:nloc] = v0
        self.deltas[:nloc] = d0
        self.w = sd.w if (sd.w is not None and program.use_weights) else EMPTY_W
        self.ocode = EDGE_OPS[program.edge_op]
        self.me, self.K = comm.Get_rank(), comm.Get_size()
        self.st = st = _AsapStats(self.me)
        self.emu = Emulator(opts.get("emulation"), self.me, self.K)
        self.sched = Schedule(self.K, opts.get("fanout", 2), opts.get("seed", 0))
        self.window = max(1, int(opts.get("window", 1)))
        self.is_sum = is_sum = comb == "sum"
        self.approx = float(opts.get("approx", 0.0)) if is_sum else 0.0
        # pending mass at termination: at most thr per vertex and per held slot entry
        self.thr = ctx.tol / max(ctx.n + int(comm.allreduce(sd.nslots)), 1)
        self.peer_of_slot = np.repeat(np.arange(len(sd.out_peers)), np.diff(sd.out_off))
        self.peer_index = {int(q): j for j, q in enumerate(sd.out_peers)}
        # a peer gets at most one message per ``interval`` seconds (coalescing: without
        # it every small arrival fans out into messages to every peer, a message storm)
        self.interval = float(opts.get("flush_interval",
                                       _FLUSH_INTERVAL if comb == "sum" else 0.0))
        self.last_flush = np.full(len(sd.out_peers), -np.inf)
        self.custom_post = is_sum and _overrides(program, "post_delta")
        self.custom_agg = is_sum and _overrides(program, "aggregate")
        if is_sum:
            self.c = np.ones(nloc) if coef is None else np.ascontiguousarray(coef, dtype=np.float64)
            self.sent_mass = np.zeros(nloc)
            # push-sum pair (s, w) of the pending mass: the approximation knob's estimate
            self.gs, self.gw = float(np.abs(self.deltas[:nloc]).sum()), 1.0
            self.r_prev = self.gs
        else:
            self.ccode = COMBINERS[comb]
            self.queued = np.zeros(nt, dtype=np.uint8)
            self.queue = np.flatnonzero(improves(comb, self.deltas[:nloc],
                                                 self.values[:nloc])).astype(np.int64)
            self.queued[self.queue] = 1
            self.nbuf = np.empty(nt, dtype=np.int64)
            self.better = np.less if comb == "min" else np.greater
            self.held = np.zeros(0, dtype=np.int64)  # improved slots not yet sent (sorted)
        self.dirty = False
        sizes = [int(sd.out_off[j + 1] - sd.out_off[j]) for j in range(len(sd.out_peers))]
        self.na = ex.NotifyAck(comm, sd.out_peers, sizes, sd.in_peers,
                               [len(mp) for mp in sd.in_maps], self.window, self.emu, st,
                               self._deliver, itemsize=dtype.itemsize)

    def _now(self):
        """The rank's clock for the flush interval: virtual, or the host's."""
        return self.emu.vt if self.emu.virtual else time.perf_counter()

    # ------------------------------------------------------------------ messages
    def _deliver(self, j, buf, nbytes):
        """Apply in-peer ``j``'s message (:class:`.exchange.NotifyAck` ACKs it)."""
        t, vals = ex.decode_exact(self.sd.in_maps[j], buf, nbytes, self.dtype)
        self.dirty = True
        if self.is_sum:
            f = ex.header(buf)
            self.gs += f[ex.GOSSIP_S]
            self.gw += f[ex.GOSSIP_W]
            self.deltas[t] += vals
            return
        deltas, values, queued = self.deltas, self.values, self.queued
        imp = self.better(vals, deltas[t]) & self.better(vals, values[t])
        t, vals = t[imp], vals[imp]
        deltas[t] = vals
        new = t[queued[t] == 0]
        queued[new] = 1
        if new.size:
            self.queue = np.concatenate([self.queue, new])

    def _send(self, j, seg, ch):
        """Send the slots ``ch`` of out-peer ``j``'s segment ``seg``; returns the form."""
        na = self.na
        buf = na.open(j)
        nbytes, form = ex.encode_exact(seg, ch, buf)
        if self.is_sum:  # push-sum: half of the pair travels
            self.gs, self.gw = self.gs / 2.0, self.gw / 2.0
            f = ex.header(buf)
            f[ex.GOSSIP_S], f[ex.GOSSIP_W] = self.gs, self.gw
        na.send(j, buf, nbytes, form)
        self.last_flush[j] = self._now()
        self.dirty = True  # a rank that sent since its last contribution reports dirty
        return form

    def _targets(self, rnd):
        """Out-peer positions this round may send to: the round's expander neighbours
        whose NOTIFY-ACK window has room and whose flush interval has passed."""
        na, t = self.na, self._now()
        out = []
        for q in self.sched.neighbours(self.me, rnd):
            j = self.peer_index.get(int(q))
            if j is not None and not na.full(j) and t - self.last_flush[j] >= self.interval:
                out.append(j)
        return out

    def _flush_sum(self, rnd, force):
        """Send the boundary entries above ``thr`` to this round's peers; returns True
        if some sendable entries had to wait (schedule, window or the approximation
        knob).  ``force``: the rank is out of local work (the knob does not hold)."""
        sd, nloc = self.sd, self.nloc
        if sd.nslots == 0:
            return False
        ghost = self.deltas[nloc:]
        nz = np.flatnonzero(np.abs(ghost) > self.thr)
        if nz.size == 0:
            return False
        allowed = set(self._targets(rnd))
        cuts = np.flatnonzero(np.diff(self.peer_of_slot[nz])) + 1
        waiting = False
        r_est = max(self.K * self.gs / self.gw, 0.0) if self.gw > 0 else 0.0
        nout = len(sd.out_peers)
        for part in np.split(nz, cuts):
            j = int(self.peer_of_slot[part[0]])
            if j not in allowed:
                waiting = True
                continue
            lo, hi = int(sd.out_off[j]), int(sd.out_off[j + 1])
            seg = ghost[lo:hi]
            if self.approx > 0 and not force and \
                    float(np.abs(seg).sum()) < self.approx * r_est / nout:
                waiting = True
                continue
            ch = (part - lo).astype(np.int32)
            if self._send(j, seg, ch) == ex.DENSE_EXACT:
                seg[:] = 0.0
            else:
                seg[ch] = 0.0
        return waiting

    def _flush_minmax(self, rnd):
        """Send the improved boundary slots of this round's peers (the best value sent
        is remembered: a non-improving offer never travels); the others stay held."""
        sd, nloc, held = self.sd, self.nloc, self.held
        if held.size == 0:
            return
        allowed = set(self._targets(rnd))
        cuts = np.flatnonzero(np.diff(self.peer_of_slot[held - nloc])) + 1
        keep = []
        for part in np.split(held, cuts):
            j = int(self.peer_of_slot[part[0] - nloc])
            if j not in allowed:
                keep.append(part)
                continue
            lo, hi = nloc + int(sd.out_off[j]), nloc + int(sd.out_off[j + 1])
            seg = self.deltas[lo:hi]
            ch = (part - lo).astype(np.int32)
            if self._send(j, seg, ch) == ex.DENSE_EXACT:
                self.values[lo:hi] = seg
            else:
                self.values[part] = self.deltas[part]
            self.queued[part] = 0
        self.held = np.concatenate(keep) if keep else held[:0]

    # ------------------------------------------------------------------ local work
    def _work(self, sweep_cap):
        """Local propagation until local quiescence; returns ``busy`` (local work left:
        only when the sweep cap stopped it)."""
        st, sd = self.st, self.sd
        if self.is_sum:
            while True:
                nproc, scanned = K.async_sweep_sum(sd.indptr, sd.col, self.w, self.c, self.ocode,
                                                   self.values, self.deltas, self.sent_mass,
                                                   self.thr)
                if not nproc:
                    return False
                self.dirty = True
                st.sweeps += 1
                st.edges_visited += scanned
                if st.sweeps >= sweep_cap:
                    return bool(np.any(np.abs(self.deltas[:self.nloc]) > self.thr))
        if not self.queue.size:
            return False
        nloc, ghosts = self.nloc, [self.held]
        while self.queue.size:
            nnext, nproc, scanned = K.async_sweep_minmax(sd.indptr, sd.col, self.w, self.ocode,
                                                         self.ccode, self.values, self.deltas,
                                                         self.queue, self.nbuf, self.queued)
            st.sweeps += 1
            st.edges_visited += scanned
            if nproc:
                self.dirty = True
            nxt = self.nbuf[:nnext]
            ghost = nxt >= nloc
            if ghost.any():
                ghosts.append(nxt[ghost].copy())
            self.queue = nxt[~ghost].copy()
            if st.sweeps >= sweep_cap:
                break
        if len(ghosts) > 1:
            self.held = np.sort(np.concatenate(ghosts))
        return self.queue.size > 0

    def _held_sendable(self):
        """A boundary entry this rank would send unprompted (sums: above ``thr``)."""
        if self.is_sum:
            return bool(self.sd.nslots and np.any(np.abs(self.deltas[self.nloc:]) > self.thr))
        return bool(self.held.size)

    # ------------------------------------------------------------------ the loop
    def run(self):
        ctx, st, na, emu = self.ctx, self.st, self.na, self.emu
        self.wv = wv = make_waves(self.comm, emu, passive_waves=1, max_waves=ctx.max_iter)
        self.capped = False
        self.failed = None  # the exception of a hook on this rank (see _hook)
        self.agg_zero = {k: (0.0, op) for k, op in
                         (getattr(self.program, "aggregators", None) or {}).items()}
        self.last_wave_time = time.perf_counter()
        # safety net for programs whose deltas never die out (e.g. Katz with alpha too big)
        self.sweep_cap = max(ctx.max_iter, 1) * 100
        self.rnd = 0
        t_start = time.perf_counter()
        if emu.virtual:
            self._run_virtual()
            return self._finish(wv, t_start)
        t_dbg = time.perf_counter()
        while True:
            t0 = time.perf_counter()
            got = na.poll()
            st.comm_s += time.perf_counter() - t0
            stop, quiet, waiting = self._round(got)
            if stop:
                break
            if DEBUG and time.perf_counter() - t_dbg > 2.0:
                t_dbg = time.perf_counter()
                _err(f"[{ctx.rank}] sweeps {st.sweeps} sent {na.n_sent} recv {na.n_recv} "
                     f"waves {wv.waves} inflight {na.inflight.tolist()} held "
                     f"{len(emu.queue)} wave {not wv.idle}")
            if quiet:
                # nothing happened this round: do not spin on an oversubscribed core
                dt = 5e-5 if not waiting else 1e-4
                nd = emu.next_due()
                if nd is not None:
                    dt = max(0.0, min(dt, nd - now()))
                time.sleep(dt)
                st.wait_s += dt
        return self._finish(wv, t_start)

    def _hook(self, fn, ctx, arr):
        """``fn(ctx, arr)`` of a hook called between waves on this rank alone; None once
        a hook raised here: the exception is kept for :func:`run_asap`'s agreement, the
        rank stops sweeping (capped: every rank stops after the next wave and the run
        winds down, no message left in flight) and calls no more hooks."""
        if self.failed is not None:
            return None
        try:
            return fn(ctx, arr)
        except (Exception, SystemExit) as e:  # noqa: BLE001 - agreed by every rank after the run
            self.failed, self.capped = e, True
            return None

    def _round(self, got):
        """One round after the poll (``got``: messages applied): local work, flushes,
        the termination wave.  Returns ``(stop, quiet, waiting)``: the run ends; nothing
        happened (no message, sweep, send or wave); boundary entries wait to be sent."""
        ctx, program, st, na, emu, wv = (self.ctx, self.program, self.st, self.na,
                                         self.emu, self.wv)
        nloc, is_sum = self.nloc, self.is_sum
        self.rnd += 1
        rnd = self.rnd
        busy = waiting = False
        sweeps0, sent0 = st.sweeps, na.n_sent
        if not self.capped:
            c0, t1, e0 = time.thread_time(), time.perf_counter(), st.edges_visited
            busy = self._work(self.sweep_cap)
            if st.sweeps != sweeps0:
                st.compute_s += time.perf_counter() - t1
                emu.after_compute(time.thread_time() - c0, st.edges_visited - e0, nloc,
                                  "push")
            if is_sum:
                if self.approx > 0:  # push-sum follows the local pending mass
                    rloc = float(np.abs(self.deltas).sum())
                    self.gs += rloc - self.r_prev
                    self.r_prev = rloc
                # the knob holds small buffers only while something happens here;
                # a quiet round flushes everything (no rank can wait on another)
                waiting = self._flush_sum(rnd, force=not (busy or got
                                                          or st.sweeps != sweeps0))
                if self.approx > 0:
                    self.r_prev = float(np.abs(self.deltas).sum())
            else:
                self._flush_minmax(rnd)
                waiting = self.held.size > 0
            busy = busy or waiting
            if busy and st.sweeps >= self.sweep_cap:
                self.capped = True
        cnt = None
        if not wv.idle:
            cnt = wv.test()
            if cnt is not None:
                st.waves = wv.waves
                if wv.decide(cnt):
                    return True, False, waiting
                if wv.reduced:
                    ctx.aggregates = wv.reduced
                    post = (self._hook(program.post_delta, ctx, self.deltas[:nloc])
                            if self.custom_post else None)
                    if post is not None:
                        self.deltas[:nloc] = post
                        # a global term is local work created without a message: it
                        # counts as activity for the termination test; ``busy`` may
                        # only grow here (it also covers entries held back by the
                        # schedule or the window, sent later unprompted)
                        extra_work = bool(np.any(np.abs(self.deltas[:nloc]) > self.thr))
                        busy = busy or extra_work
                        self.dirty = self.dirty or extra_work
                if _progress_due(self.progress, ctx, self.last_wave_time):
                    self.last_wave_time = time.perf_counter()
                    self.progress.iteration(st.waves, float(cnt[SENT]))
        passive = not busy and na.acked() and not emu.queue
        joined = False
        if wv.idle and (passive or self.capped):
            if self.strict and not self.capped and self._held_sendable():
                st.late += 1  # passive with a sendable boundary entry: would send unprompted
            # join the next wave: counters, then the aggregates of the deltas sent since
            more = None
            if self.custom_agg:
                partial = self._hook(program.aggregate, ctx, self.sent_mass[:nloc])
                self.sent_mass[:] = 0.0
                ops = getattr(program, "aggregators", {}) or {}
                if self.failed is not None:  # (neutral values, the names of the others)
                    more = self.agg_zero
                else:
                    more = {k: (v, ops.get(k, "sum")) for k, v in (partial or {}).items()}
                    self.agg_zero = {k: (np.zeros_like(np.asarray(v, dtype=np.float64))
                                         if np.ndim(v) else 0.0, op)
                                     for k, (v, op) in more.items()}
            wv.contribute(na.n_sent, na.n_recv, busy, self.dirty, self.capped, more=more)
            self.dirty = False
            joined = True
        quiet = not (got or st.sweeps != sweeps0 or na.n_sent != sent0 or joined
                     or cnt is not None)
        return False, quiet, waiting

    def _run_virtual(self):
        """The rounds on the virtual clock (:func:`.vclock.drive`: the same windows and
        causality as the tuned engines).  A round delivers every held message due by the
        rank's clock, runs :meth:`_round`, and advances the clock by its compute (each
        sweep's CPU time, or the compute model's cost of its edges as a push sweep) and
        the rest of its work as it happens (:class:`.vclock.Charge`).  An idle rank's
        own next event, besides its next arrival and its wave's completion: the end of
        the flush interval of a boundary entry that waits for it."""
        from asapgraph.engine.vclock import INF, Charge, drive

        emu, na, st = self.emu, self.na, self.st
        waits = [False]
        # the round's other work, charged as it happens (before every stamp too)
        charge = na.charge = Charge(emu, na, st)

        def idle_event():
            if waits[0] and self.interval > 0 and len(self.last_flush):
                return float(self.last_flush.min()) + self.interval
            return INF

        def round_(links):
            charge.round()
            links.pull()
            got = links.deliver(emu.vt)
            charge()  # (the sweeps start after the decode of what arrived)
            stop, quiet, waits[0] = self._round(got)
            charge()
            return stop, quiet

        st.extra["virtual_windows"] = drive(self.comm, emu, na, self.wv, round_, idle_event)
        na.charge = None  # (the drain after the stop is not timed)

    def _finish(self, wv, t_start):
        """After the stop: deliver what is in flight (expected after a capped stop; a
        message found after a converged stop would betray an unsound termination and is
        counted as late), send the held boundary entries of sum programs, close."""
        na, st, nloc, deltas = self.na, self.st, self.nloc, self.deltas
        delivered, unmatched = na.settle()
        if wv.converged:
            st.late += delivered
        st.stale += unmatched
        na.wait_acks()
        if self.is_sum:
            # the held boundary entries (each <= thr) join their owners' pending deltas
            sd = self.sd
            for j in range(len(sd.out_peers)):
                lo, hi = nloc + int(sd.out_off[j]), nloc + int(sd.out_off[j + 1])
                ch = np.flatnonzero(deltas[lo:hi]).astype(np.int32)
                if ch.size:
                    self._send(j, deltas[lo:hi], ch)
            deltas[nloc:] = 0.0
            st.stale += na.settle()[1]
            na.wait_acks()
            self.values[:nloc] += deltas[:nloc]
            residual = float(self.ctx.allreduce(float(np.abs(deltas[:nloc]).sum()), "sum"))
            _options.check_residual(residual, self.program.name, st.waves)
        else:
            residual = None
        na.close()
        st.seconds = time.perf_counter() - t_start
        return self.values[:nloc].copy(), st, wv.converged, residual, self._extra()

    def _extra(self):
        """The run's ASAP figures (the same keys as the tuned engines')."""
        MPI, comm, st = mpi(), self.comm, self.st
        bad = np.array([st.stale, st.late], dtype=np.int64)
        comm.Allreduce(MPI.IN_PLACE, [bad, MPI.INT64_T], op=MPI.SUM)
        return {**traffic_totals(comm, st, self.emu), **self.sched.figures(),
                "stale_messages": int(bad[0]), "late_messages": int(bad[1]),
                "window": self.window, "approx": self.approx, "waves": st.waves,
                "local_sweeps_max": int(comm.allreduce(st.sweeps, op=MPI.MAX))}


def _progress_due(progress, ctx, last):
    return progress is not None and ctx.rank == 0 and time.perf_counter() - last > 1.0


def _err(msg):
    sys.stderr.write(msg.rstrip("\n") + "\n")
    sys.stderr.flush()
