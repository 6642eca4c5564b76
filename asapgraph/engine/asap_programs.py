"""The ASAP half of the vertex-program engine on MPI ranks: :func:`run_asap`, the
asynchronous delta loop of accumulative programs, with its sound termination waves.

Rationale
---------
ASAP (accumulative programs only; Maiter's delta form, Zhang et al. TPDS 2014): no barrier
in the main loop.  Each rank repeatedly (1) drains arrived messages into its pending
deltas (``+=`` for sums, min/max for monotone programs), (2) runs a local Gauss-Seidel
sweep (``async_sweep_sum``) or worklist sweep (``async_sweep_minmax``) over its push
CSR, whose slot entries collect the deltas for remote vertices, already combined per
target, (3) sends every non-empty per-peer slot buffer with a non-blocking send and
clears it (min/max: a slot remembers the best value sent, so non-improving offers are
never sent).  A vertex is processed only when its delta exceeds ``tol / n`` (sums) or
improves its value (min/max).  Global terms of sum programs (``aggregate`` over the
deltas sent, then ``post_delta``, e.g. PageRank's dangling mass) travel with the
termination waves.

Termination (sound, no barrier): the counting waves of :mod:`.termination` (one
``Iallreduce`` of ``(messages sent, messages received, busy, dirty, capped)``, plus the
program's aggregates as companion reductions of the same wave; the soundness argument
is that module's).  A rank joins the next wave only when it is locally quiescent (or
capped), and keeps serving messages while a wave is in flight.  ``dirty`` says that the
rank received a message or processed a vertex since its previous contribution, or sent
one.  ``busy`` covers local deltas above the threshold *and* boundary entries above it
held back by the flush interval: a rank joins a wave only when it will send nothing more
unless it first receives something (invariant P; a global term from ``post_delta`` may
only add to ``busy``).  The run stops at the first wave in which ``sent == received``
and nobody is busy or dirty (``passive_waves=1``: every contribution is passive here).
Then the pending delta mass is at most ``n * tol / n = tol`` (sums), or no delta
improves a value (min/max): the single-process ASAP criterion (the threshold is
``tol / (n + slots)`` so that entries held back in the boundary buffers, at most ``thr``
each, are covered too; they are delivered by one final exchange).  ``max_iter`` caps
the waves (reported as the iterations) and, as a safety net, ``100 * max_iter`` local
sweeps per rank; a capped rank joins a wave with ``capped = 1`` and the whole job stops
at that wave.  After every stop the per-pair message counts are compared (one
``Alltoall``) and messages still in flight are received and delivered: expected after a
capped stop; after a converged stop they would betray an unsound termination and are
counted in ``stats["late_messages"]`` (must be 0), so no message can ever leak into the
next run.  Boundary buffers are sent at most once per ``flush_interval`` (1 ms) per peer:
without this coalescing, every small arrival fans out into messages to every peer and
the message count grows geometrically.  Messages carry the run's number (``epoch``), a
guard only: a message of another run is discarded and counted in
``stats["stale_messages"]`` (must be 0).  With ``STRICT`` (``ASAPGRAPH_STRICT_ASAP=1``,
or ``ASAPGRAPH_DEBUG_ASAP=1``) a run with stale or late messages, or in which a rank
joined a wave holding a sendable boundary entry, raises ``AssertionError``
on every rank.

The entry point is :func:`asapgraph.engine.distributed.run` (which decides ``strict``
from ``asapgraph.engine.distributed.STRICT``); messages and the push side are those of
:mod:`.bsp_programs`.
"""
from __future__ import annotations

import os
import sys
import time

import numpy as np

from asapgraph import options as _options
from asapgraph.comm.mpi import mpi
from asapgraph.engine.bsp_programs import EMPTY_W, TAG_ASAP, TAG_BSP, collective, pack, recv, \
    unpack
from asapgraph.engine.program import COMBINERS, EDGE_OPS, VertexProgram, combiner_identity
from asapgraph.engine.supersteps import better as improves
from asapgraph.engine.termination import SENT, Waves
from asapgraph.kernels import _programs as K

__all__ = ["run_asap", "DEBUG"]

#: progress lines of every rank on stderr (``ASAPGRAPH_DEBUG_ASAP=1``)
DEBUG = os.environ.get("ASAPGRAPH_DEBUG_ASAP", "") not in ("", "0")


class _AsapStats:
    def __init__(self):
        self.sent = 0        # messages sent
        self.recv = 0        # messages received
        self.bytes = 0
        self.edges = 0
        self.sweeps = 0
        self.waves = 0
        self.stale = 0      # messages of another run, discarded (must stay 0)
        self.late = 0       # messages found in flight after a converged stop (must stay 0)


def run_asap(program, ctx, g, comm, progress, coef, flush_interval=1e-3, epoch=0, strict=False):
    """Asynchronous delta engine (see the module docstring); returns the local values.

    ``strict`` (``asapgraph.engine.distributed.STRICT``) also counts as late a wave joined
    while holding a sendable boundary entry."""
    MPI = mpi()
    comb = program.combiner
    direction = program.direction_at(ctx)
    ctx.direction = direction
    sd = g.side(direction, "push")
    nloc, nt = sd.nloc, sd.nloc + sd.nslots
    dtype = np.dtype(program.value_dtype)
    v0, d0 = collective(comm, program.init_delta, ctx)
    ident = combiner_identity(comb, dtype)
    values = np.full(nt, 0 if comb == "sum" else ident, dtype=dtype)
    deltas = np.full(nt, 0 if comb == "sum" else ident, dtype=dtype)
    values[:nloc] = v0
    deltas[:nloc] = d0
    w = sd.w if (sd.w is not None and program.use_weights) else EMPTY_W
    ocode = EDGE_OPS[program.edge_op]
    st = _AsapStats()
    # pending mass at termination: at most thr per vertex and per held slot entry
    thr = ctx.tol / max(ctx.n + int(comm.allreduce(sd.nslots)), 1)
    interval = float(flush_interval)
    last_flush = np.full(len(sd.out_peers), -np.inf)
    peer_of_slot = np.repeat(np.arange(len(sd.out_peers)), np.diff(sd.out_off))
    sent_to = np.zeros(comm.Get_size(), dtype=np.int64)
    recv_from = np.zeros(comm.Get_size(), dtype=np.int64)
    pending = []          # (request, buffer) of unfinished sends
    is_sum = comb == "sum"
    custom_post = is_sum and getattr(type(program), "post_delta", VertexProgram.post_delta) \
        is not VertexProgram.post_delta
    custom_agg = is_sum and getattr(type(program), "aggregate", VertexProgram.aggregate) \
        is not VertexProgram.aggregate
    if is_sum:
        c = np.ones(nloc) if coef is None else np.ascontiguousarray(coef, dtype=np.float64)
        sent_mass = np.zeros(nloc)
    else:
        ccode = COMBINERS[comb]
        queued = np.zeros(nt, dtype=np.uint8)
        queue = np.flatnonzero(improves(comb, deltas[:nloc], values[:nloc])).astype(np.int64)
        queued[queue] = 1
        nbuf = np.empty(nt, dtype=np.int64)
        better = np.less if comb == "min" else np.greater
    dirty = False

    def send(j, idx, vals):
        nonlocal dirty
        q = int(sd.out_peers[j])
        dirty = True  # a rank that sent since its last contribution reports dirty
        b = pack(idx, vals, epoch)
        pending.append((comm.Isend([b, MPI.INT64_T], dest=q, tag=TAG_ASAP), b))
        sent_to[q] += 1
        st.sent += 1
        st.bytes += b.nbytes

    def deliver(src, b):
        nonlocal queue
        j = sd.in_index[src]
        idx, vals = unpack(b, dtype)
        t = sd.in_maps[j][idx]
        recv_from[src] += 1
        st.recv += 1
        if is_sum:
            deltas[t] += vals
        else:
            imp = better(vals, deltas[t]) & better(vals, values[t])
            t, vals = t[imp], vals[imp]
            deltas[t] = vals
            new = t[queued[t] == 0]
            queued[new] = 1
            if new.size:
                queue = np.concatenate([queue, new])

    def poll():
        nonlocal dirty
        status = MPI.Status()
        got = 0
        while comm.Iprobe(source=MPI.ANY_SOURCE, tag=TAG_ASAP, status=status):
            cnt = status.Get_count(MPI.INT64_T)
            src = status.Get_source()
            b = np.empty(cnt, dtype=np.int64)
            comm.Recv([b, MPI.INT64_T], source=src, tag=TAG_ASAP)
            if b[0] != epoch:
                st.stale += 1
                if DEBUG:
                    _err(f"[{ctx.rank}] stale message of run {int(b[0])} from {src} in run {epoch}: "
                         f"{unpack(b, dtype)}")
                continue
            deliver(src, b)
            got += 1
        if got:
            dirty = True
        return got

    def flush_sum():
        """Send the boundary entries above ``thr``; returns True if some had to wait."""
        if sd.nslots == 0:
            return False
        ghost = deltas[nloc:]
        # an entry travels once it carries more than the vertex threshold; smaller ones
        # wait and accumulate.  A peer gets at most one message per ``interval``
        # seconds: meanwhile its buffer keeps combining deltas per target.  Without
        # this coalescing every small arrival would fan out into messages to every
        # peer, and the count of messages grows geometrically (a message storm).
        nz = np.flatnonzero(np.abs(ghost) > thr)
        if nz.size == 0:
            return False
        now = time.perf_counter()
        pj = peer_of_slot[nz]
        cuts = np.flatnonzero(np.diff(pj)) + 1
        waiting = False
        for part in np.split(nz, cuts):
            j = int(peer_of_slot[part[0]])
            if now - last_flush[j] < interval:
                waiting = True
                continue
            last_flush[j] = now
            send(j, part - sd.out_off[j], ghost[part].copy())
            ghost[part] = 0.0
        return waiting

    def flush_minmax(slots):
        if slots.size == 0:
            return
        slots = np.sort(slots - nloc)
        pj = peer_of_slot[slots]
        cuts = np.flatnonzero(np.diff(pj)) + 1
        for part in np.split(slots, cuts):
            j = int(peer_of_slot[part[0]])
            vals = deltas[nloc + part].copy()
            values[nloc + part] = vals   # the best value sent
            queued[nloc + part] = 0
            send(j, part - sd.out_off[j], vals)

    # termination: one wave at a time, joined only when not busy (see termination.py)
    wv = Waves(comm, passive_waves=1, max_waves=ctx.max_iter)
    capped = False
    last_wave_time = time.perf_counter()
    # safety net for programs whose deltas never die out (e.g. Katz with alpha too big)
    sweep_cap = max(ctx.max_iter, 1) * 100
    t_dbg = [time.perf_counter()]
    t_start = time.perf_counter()
    while True:
        got = poll()
        busy = waiting = False
        sweeps0 = st.sweeps
        if not capped:
            # local propagation until local quiescence, then one flush of the per-peer
            # buffers (boundary deltas stay combined per target meanwhile)
            if is_sum:
                while True:
                    nproc, scanned = K.async_sweep_sum(sd.indptr, sd.col, w, c, ocode, values,
                                                       deltas, sent_mass, thr)
                    if not nproc:
                        break
                    dirty = True
                    st.sweeps += 1
                    st.edges += scanned
                    if st.sweeps >= sweep_cap:
                        busy = bool(np.any(np.abs(deltas[:nloc]) > thr))
                        break
                waiting = flush_sum()
                busy = busy or waiting
            elif queue.size:
                ghosts = []
                while queue.size:
                    nnext, nproc, scanned = K.async_sweep_minmax(sd.indptr, sd.col, w, ocode, ccode,
                                                                 values, deltas, queue, nbuf, queued)
                    st.sweeps += 1
                    st.edges += scanned
                    if nproc:
                        dirty = True
                    nxt = nbuf[:nnext]
                    ghost = nxt >= nloc
                    if ghost.any():
                        ghosts.append(nxt[ghost].copy())
                    queue = nxt[~ghost].copy()
                    if st.sweeps >= sweep_cap:
                        break
                if ghosts:
                    flush_minmax(np.concatenate(ghosts))
                busy = queue.size > 0
            if busy and st.sweeps >= sweep_cap:
                capped = True
        if DEBUG and time.perf_counter() - t_dbg[0] > 2.0:
            t_dbg[0] = time.perf_counter()
            _err(f"[{ctx.rank}] sweeps {st.sweeps} sent {st.sent} recv {st.recv} waves {wv.waves} "
                 f"stale {st.stale} "
                 f"pending {len(pending)} busy {busy} wave {not wv.idle} "
                 f"mass {float(np.abs(deltas[:nloc]).sum()) if is_sum else queue.size}")
        if pending:
            done = MPI.Request.Testsome([r for r, _ in pending])
            if done:
                ds = set(done)
                pending[:] = [x for i, x in enumerate(pending) if i not in ds]
        if not wv.idle:
            cnt = wv.test()
            if cnt is not None:
                st.waves = wv.waves
                if wv.decide(cnt):
                    break
                if wv.reduced:
                    ctx.aggregates = wv.reduced
                    if custom_post:
                        deltas[:nloc] = program.post_delta(ctx, deltas[:nloc])
                        # a global term is local work created without a message: it must
                        # count as activity for the termination test (see docstring).
                        # ``busy`` may only grow here: it also says that boundary entries
                        # are held back by ``flush_interval`` (sent later, unprompted by any
                        # receipt); clearing it let the rank join a wave, send those
                        # entries after its contribution and the wave declare termination
                        # with them in flight (the stale messages of the report).
                        extra_work = bool(np.any(np.abs(deltas[:nloc]) > thr))
                        busy = busy or extra_work
                        dirty = dirty or extra_work
                if progress is not None and ctx.rank == 0 and time.perf_counter() - last_wave_time > 1.0:
                    last_wave_time = time.perf_counter()
                    progress.iteration(st.waves, float(cnt[SENT]))
            elif not busy:
                time.sleep(5e-5)  # idle: do not spin on an oversubscribed core
        if wv.idle and (not busy or capped):
            if strict and is_sum and not capped and sd.nslots and \
                    bool(np.any(np.abs(deltas[nloc:]) > thr)):
                st.late += 1  # passive with a sendable boundary entry: would send unprompted
            # join the next wave: counters, then the aggregates of the deltas sent since
            more = None
            if custom_agg:
                partial = program.aggregate(ctx, sent_mass[:nloc]) or {}
                sent_mass[:] = 0.0
                ops = getattr(program, "aggregators", {}) or {}
                more = {k: (v, ops.get(k, "sum")) for k, v in partial.items()}
            wv.contribute(st.sent, st.recv, busy, dirty, capped, more=more)
            dirty = False
        elif waiting and not got and st.sweeps == sweeps0:
            time.sleep(1e-4)  # only coalescing buffers are waiting: do not spin
    # Per-pair message counts (one Alltoall): after a capped stop messages may still be
    # in flight and are drained here; after a converged stop none may be (the waves are
    # sound), so one found is a termination bug: it is still delivered (nothing is ever
    # dropped, and nothing leaks into the next run) and counted in ``late``.
    got = np.empty_like(sent_to)
    comm.Alltoall([sent_to, MPI.INT64_T], [got, MPI.INT64_T])
    for src in np.flatnonzero(got > recv_from):
        while recv_from[src] < got[src]:
            s, b = recv(comm, int(src), TAG_ASAP)
            if b[0] != epoch:
                st.stale += 1
                continue
            if wv.converged:
                st.late += 1
                if DEBUG:
                    _err(f"[{ctx.rank}] late message from {s} after termination: {unpack(b, dtype)}")
            deliver(s, b)
    MPI.Request.Waitall([r for r, _ in pending])
    if is_sum:
        # the held boundary entries (each <= thr) join their owners' pending deltas
        reqs, bufs = [], []
        for j, q in enumerate(sd.out_peers):
            lo, hi = nloc + sd.out_off[j], nloc + sd.out_off[j + 1]
            idx = np.flatnonzero(deltas[lo:hi])
            bufs.append(pack(idx, deltas[lo:hi][idx].copy()))
            reqs.append(comm.Isend([bufs[-1], MPI.INT64_T], dest=int(q), tag=TAG_BSP))
        deltas[nloc:] = 0.0
        for j, q in enumerate(sd.in_peers):
            _, b = recv(comm, int(q), TAG_BSP)
            idx, vals = unpack(b, dtype)
            deltas[sd.in_maps[j][idx]] += vals
        MPI.Request.Waitall(reqs)
        values[:nloc] += deltas[:nloc]
        residual = float(ctx.allreduce(float(np.abs(deltas[:nloc]).sum()), "sum"))
        _options.check_residual(residual, program.name, st.waves)
    else:
        residual = None
    st.seconds = time.perf_counter() - t_start
    return values[:nloc].copy(), st, wv.converged, residual



def _err(msg):
    sys.stderr.write(msg.rstrip("\n") + "\n")
    sys.stderr.flush()

