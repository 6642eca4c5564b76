"""ASAP PageRank: asynchronous residual push with NOTIFY-ACK, stochastic reduce, exact termination.

Rationale
---------
*Program form.*  Maiter-style delta (residual) push, which makes order and staleness
irrelevant to the fixed point.  Each owned vertex has a value ``x`` (absorbed mass) and
a residual ``r``, initially ``x = 0, r = (1 - alpha) b`` (``b`` = personalization).
Pushing ``u`` moves ``r_u`` into ``x_u`` and sends ``alpha r_u w_uv / outw_u`` to every
out-neighbour ``v`` -- into ``r_v`` when ``v`` is local, else into the slot of ``v`` in
the per-peer outgoing buffer, where it is *combined* (summed) with earlier contributions.
A contribution is never dropped, only delayed or combined.  The pushed mass of a
dangling vertex leaves the system ("leaks"); the fixed point of this process is
``y = (1 - alpha) b (I - alpha W)^-1`` and, when the dangling distribution is the
personalization vector (networkx's default), the PageRank vector is exactly
``x = y / sum(y)``.  So no global dangling mass has to travel at all; the only global
quantity needed, ``sum(y)``, comes from one reduction after termination.  For an
explicit dangling vector ``d != b`` a second solve with ``b = d`` gives ``z`` and
``x = y + alpha s z / (1 - alpha)`` with ``s = (y.delta) / (1 - alpha/(1-alpha) z.delta)``.

*Invariant (mass conservation).*  ``sum(x) + (sum(r) + buffered + in_flight + leaked) /
(1 - alpha) = 1`` at every consistent cut; ``debug_mass=True`` checks it on blocking
snapshots taken every few termination waves (the only blocking collective, debug only).
All quantities are non-negative, so the still-unabsorbed mass
``E = (sum r + buffered + in_flight) / (1 - alpha)`` bounds ``||y - x_abs||_1`` and the
L1 error of the normalised vector by ``2 E / sum(x_abs)``.

*NOTIFY-ACK.*  Flushing the buffer of peer ``q`` is one typed ``Isend`` of
``[header | slot values]`` (header: emulated delivery time, mass, push-sum pair); the
receiver applies it (scatter-add) and then sends a tiny ACK.  At most ``window`` un-ACKed
messages per peer; while waiting the sender keeps computing and combining into the buffer.

*Stochastic reduce.*  In round ``t`` a rank flushes only to its ``fanout`` out-neighbours
``(rank + o) mod K`` on a circulant expander whose offsets ``o`` are a window of a
seeded random permutation of ``1..K-1`` (re-drawn every epoch, rotated every round):
every peer is served within ``2 ceil((K-1)/fanout)`` rounds, so a buffer never starves.
All ranks draw the same graph for the same round without communicating.  The mixing
matrix ``P = (I + sum_o C_o) / (k + 1)`` (``C_o`` the cyclic shift) is doubly stochastic;
its spectral gap ``1 - sigma_2(P)`` is reported.  A push-sum pair ``(s, w)`` rides on the
data messages and estimates the global residual (used by the approximation knob).

*Exact termination* (four-counter waves, Mattern 1987).  A rank contributes
``(sent, received, R_local, sum x, changed, passive)`` to a non-blocking
``Iallreduce`` when it is passive (no residual above the threshold, buffers empty, all
messages ACKed, no held delivery) or periodically while active (this also yields the
error-vs-time trace).  Waves complete in the same order everywhere, so all ranks take
the same decision: stop after wave ``k`` iff in waves ``k-1`` and ``k`` every rank was
passive, no rank's counters changed between its two contributions, total sent equals
total received, and the bound of wave ``k-1`` is ``<= tol``.  Proof sketch: wave ``k``
contributions start after wave ``k-1`` completed everywhere, so there is an instant
``T`` at which no rank has communication events and, counts being balanced, nothing is
in flight: the state at ``T`` is a consistent cut with no message in flight and
residuals no larger than reported in wave ``k-1``; the residual mass never increases
and passive ranks with no input stay passive, so the run ends with every buffer
flushed.  If all ranks are passive but the bound is still above ``tol``, the push
threshold is lowered (identically everywhere).  There is no barrier and no blocking
collective in the main loop.

*Local work.*  Each round runs one Gauss-Seidel sweep (:func:`._local.residual_push`)
over vertices whose residual exceeds ``min(r_max / 2, gamma x R_wave / n)`` (``R_wave``:
the global residual of the last completed wave, ``gamma`` = 1, env
``ASAPGRAPH_ASAP_GAMMA``), so a rank does not solve its own part far below the global
error only to redo it when new mass arrives.  A rank is out of work when its residual
*sum* is below its share ``n_r / n`` of the global target ``tol (1-alpha)^2 / 4`` (not
when every single residual is tiny, which would force pushing every vertex at the end).

*Approximation knob.*  With ``approx > 0`` a buffer whose mass is below
``approx x (estimated global residual) / out-peers`` waits while the rank still has
local work; it is flushed once the rank runs out of work, before termination.

References: Zhang et al., Maiter, IEEE TPDS 2014; Kempe, Dobra, Gehrke, "Gossip-based
computation of aggregate information", FOCS 2003 (push-sum); F. Mattern, "Algorithms for
distributed termination detection", Distributed Computing 2(3), 1987 (counting waves);
Boyd, Ghosh, Prabhakar, Shah, "Randomized gossip algorithms", IEEE TIT 2006 (spectral gap).
"""
from __future__ import annotations

import time

import numpy as np

from . import _local
from .comm import TAG_ACK, TAG_DATA, mpi
from .emulation import HEADER, now

__all__ = ["run_asap", "Schedule"]

_TRACE = bool(__import__("os").environ.get("ASAPGRAPH_TRACE_ASAP"))


class Schedule:
    """Seeded rotating circulant expander over K ranks (same for every rank)."""

    def __init__(self, K, fanout, seed):
        self.K = K
        self.k = max(1, min(int(fanout), K - 1)) if K > 1 else 0
        self.seed = int(seed)
        self.L = -(-(K - 1) // self.k) if K > 1 else 1
        self._epoch = None
        self._perm = None

    def offsets(self, t):
        if self.K <= 1:
            return np.zeros(0, dtype=np.int64)
        e, i = divmod(int(t), self.L)
        if e != self._epoch:
            rng = np.random.default_rng([self.seed, e, 0xE1])
            self._perm = rng.permutation(np.arange(1, self.K, dtype=np.int64))
            self._epoch = e
        idx = (i * self.k + np.arange(self.k)) % (self.K - 1)
        return np.unique(self._perm[idx])

    def neighbours(self, rank, t):
        return (rank + self.offsets(t)) % self.K

    def mixing_matrix(self, t):
        K = self.K
        P = np.eye(K)
        offs = self.offsets(t)
        for o in offs:
            P += np.roll(np.eye(K), int(o), axis=1)
        return P / (len(offs) + 1)

    def spectral_gap(self, t=0):
        if self.K <= 1:
            return 1.0
        s = np.linalg.svd(self.mixing_matrix(t), compute_uv=False)
        return float(1.0 - s[1])

    def mean_gap(self):
        return float(np.mean([self.spectral_gap(t) for t in range(self.L)]))


class _Solver:
    def __init__(self, comm, lg, alpha, emu, st, fanout, window, approx, seed, debug_mass):
        MPI = mpi()
        self.MPI = MPI
        self.comm, self.lg, self.alpha, self.emu, self.st = comm, lg, alpha, emu, st
        self.K, self.me = comm.Get_size(), comm.Get_rank()
        self.window = max(1, int(window))
        self.approx = float(approx)
        self.debug_mass = debug_mass
        self.sched = Schedule(self.K, fanout, seed)
        self.peer_index = {int(q): j for j, q in enumerate(lg.out_peers)}
        self.mass_checks = 0
        self.gamma = float(__import__("os").environ.get("ASAPGRAPH_ASAP_GAMMA", "1.0"))
        self.prio = float(__import__("os").environ.get("ASAPGRAPH_ASAP_PRIO", "0.0"))
        self.degree_rule = __import__("os").environ.get("ASAPGRAPH_ASAP_DEGREE_RULE", "1") == "1"
        self.max_mass_error = 0.0

    # ------------------------------------------------------------------ one solve
    def solve(self, b, tol, relative):
        """Residual push from ``r = (1-alpha) b`` until the certified bound is ``<= tol``.

        ``relative``: bound ``2E/sum(x)`` (normalised output); else ``E``.
        Returns ``(x_abs, bound, rounds)``.
        """
        MPI, comm, lg, emu, st = self.MPI, self.comm, self.lg, self.emu, self.st
        perf = time.perf_counter
        K, me, alpha = self.K, self.me, self.alpha
        nloc, offs = lg.nloc, lg.out_off
        nout, nin = len(lg.out_peers), len(lg.in_peers)
        x = np.zeros(nloc)
        acc = np.zeros(nloc + lg.nslots)
        acc[:nloc] = (1.0 - alpha) * b
        leaked = 0.0
        beta = 1.0 - alpha
        # passivity: the local residual sum is below this rank's share of a global target
        # small enough for the bound (sum(x) >= 1-alpha in relative mode); lowered 10x
        # (identically everywhere) whenever a wave shows it is not enough
        target = tol * beta * beta / 4.0 if relative else tol * beta / 2.0
        share = nloc / max(lg.n, 1)
        # receive side
        rbufs = [np.zeros(HEADER + len(mp)) for mp in lg.in_maps]
        reqs = [comm.Irecv([rbufs[j], MPI.DOUBLE], source=int(q), tag=TAG_DATA)
                for j, q in enumerate(lg.in_peers)]
        abufs = [np.zeros(1) for _ in range(nout)]
        reqs += [comm.Irecv([abufs[j], MPI.DOUBLE], source=int(q), tag=TAG_ACK)
                 for j, q in enumerate(lg.out_peers)]
        # send side
        pool = [[np.zeros(HEADER + int(offs[j + 1] - offs[j])) for _ in range(self.window)]
                for j in range(nout)]
        pool_req = [[None] * self.window for _ in range(nout)]
        inflight = np.zeros(nout, dtype=np.int64)
        ack_pending = []
        sent_to = np.zeros(K, dtype=np.int64)
        recv_from = np.zeros(K, dtype=np.int64)
        n_sent = n_recv = 0
        gs, gw = float(acc[:nloc].sum()), 1.0  # push-sum pair for the global residual
        r_prev = gs
        # termination waves
        wsend = np.zeros(7)
        wrecv = np.zeros(7)
        wave_req = None
        waves = 0
        last_counts = None
        prev = None
        last_contrib = -1.0
        wave_interval = 0.005
        rounds = 0
        r_global = beta  # initial total residual (b sums to 1); refreshed by every wave
        _last_dbg = [perf()]
        rl = float(acc[:nloc].sum())
        pushed_last = False
        # push rule r[u] > tw * scale[u], scale = max(outdeg, 1) / mean degree (>= 1/mean)
        deg = np.diff(lg.indptr).astype(np.float64)
        mean_deg = max(float(lg.m) / max(lg.n, 1), 1.0)
        scale = np.maximum(deg, 1.0) / mean_deg if self.degree_rule else np.ones(nloc)
        idle = 0
        t_start = perf()
        done = False
        bound = np.inf

        def apply_data(j, buf):
            nonlocal n_recv, gs, gw
            _local.scatter_add(acc, lg.in_maps[j], buf[HEADER:])
            gs += buf[2]
            gw += buf[3]
            n_recv += 1
            recv_from[lg.in_peers[j]] += 1
            st.messages_received += 1
            a = np.array([emu.stamp(int(lg.in_peers[j]), 8)])
            ack_pending.append(comm.Isend([a, MPI.DOUBLE], dest=int(lg.in_peers[j]), tag=TAG_ACK))
            st.acks_sent += 1
            st.bytes_sent += 8

        def poll():
            """Receive everything that has arrived; returns the number of events."""
            ev = 0
            while True:
                idx = MPI.Request.Testsome(reqs)
                if not idx:
                    break
                for i in idx:
                    ev += 1
                    if i < nin:
                        buf = rbufs[i]
                        # hold() declines when the delivery time has passed meanwhile
                        if not (emu.cfg.network and emu.hold(buf[0], ("d", i, buf.copy()))):
                            apply_data(i, buf)
                        reqs[i] = comm.Irecv([rbufs[i], MPI.DOUBLE], source=int(lg.in_peers[i]),
                                             tag=TAG_DATA)
                    else:
                        j = i - nin
                        if not (emu.cfg.network and emu.hold(abufs[j][0], ("a", j, None))):
                            inflight[j] -= 1
                        reqs[i] = comm.Irecv([abufs[j], MPI.DOUBLE], source=int(lg.out_peers[j]),
                                             tag=TAG_ACK)
            for kind, j, buf in emu.due():
                ev += 1
                if kind == "d":
                    apply_data(j, buf)
                else:
                    inflight[j] -= 1
            if ack_pending and len(ack_pending) > 64:
                ack_pending[:] = [r for r in ack_pending if not r.Test()]
            return ev

        def flush(force):
            nonlocal n_sent, gs, gw
            sent = 0
            if not nout:
                return 0
            nb = self.sched.neighbours(me, rounds)
            r_est = max(K * gs / gw, 0.0) if gw > 0 else 0.0
            for q in nb:
                j = self.peer_index.get(int(q))
                if j is None or inflight[j] >= self.window:
                    continue
                seg = acc[nloc + offs[j]: nloc + offs[j + 1]]
                mass = float(seg.sum())
                if mass <= 0.0:
                    continue
                if self.approx > 0 and not force and mass < self.approx * r_est / nout:
                    continue
                slot = next(s for s in range(self.window)
                            if pool_req[j][s] is None or pool_req[j][s].Test())
                buf = pool[j][slot]
                buf[HEADER:] = seg
                seg.fill(0.0)
                gs, gw = gs / 2.0, gw / 2.0
                buf[1], buf[2], buf[3] = mass, gs, gw
                buf[0] = emu.stamp(int(q), buf.nbytes)
                pool_req[j][slot] = comm.Isend([buf, MPI.DOUBLE], dest=int(q), tag=TAG_DATA)
                inflight[j] += 1
                sent_to[q] += 1
                n_sent += 1
                st.messages_sent += 1
                st.bytes_sent += buf.nbytes
                sent += 1
            return sent

        while not done:
            rounds += 1
            t0 = perf()
            ev = poll()
            t1 = perf()
            st.comm_s += t1 - t0
            pushed = 0
            rl = float(acc[:nloc].sum()) if (ev or pushed_last) else rl
            pushed_last = False
            if rl > target * share:
                rmax = float((acc[:nloc] / scale).max(initial=0.0))
                # work threshold tied to the global residual of the last wave: a rank does
                # not solve its own part far below the global error (it would redo that
                # work whenever new mass arrives); small residuals wait and combine.
                tw = max(min(rmax * 0.5, self.gamma * r_global / lg.n), self.prio * rmax)
                npush, nedge, leak, rmax = _local.residual_push(
                    lg.indptr, lg.tgt, lg.coef, x, acc, lg.dangling, alpha, tw, scale)
                leaked += leak
                pushed = npush
                st.edges_visited += nedge
                tc = perf() - t1
                st.compute_s += tc
                emu.after_compute(tc)
            t2 = perf()
            rloc = float(acc.sum())
            gs += rloc - r_prev
            r_prev = rloc
            if pushed:
                rl = float(acc[:nloc].sum())
                pushed_last = True
            out_work = rl <= target * share
            sent = flush(out_work)
            t3 = perf()
            st.comm_s += t3 - t2
            # termination waves (non-blocking)
            passive = (out_work and not inflight.any() and not emu.queue
                       and not (nout and acc[nloc:].any()))
            tn = perf()
            if wave_req is None and (passive or tn - last_contrib > wave_interval):
                counts = (n_sent, n_recv)
                changed = 1.0 if counts != last_counts else 0.0
                last_counts = counts
                wsend[:] = (n_sent, n_recv, float(acc.sum()), float(x.sum()), changed,
                            1.0 if passive else 0.0, leaked)
                wave_req = comm.Iallreduce(wsend, wrecv, op=MPI.SUM)
                last_contrib = tn
            if wave_req is not None and wave_req.Test():
                wave_req = None
                waves += 1
                res = wrecv.copy()
                r_global = float(res[2])
                cur = (2.0 * res[2] / beta / res[3] if res[3] > 0 else np.inf) if relative \
                    else res[2] / beta
                if me == 0:
                    st.sample(cur)
                if (prev is not None and res[4] == 0 and res[0] == res[1] and res[5] == K
                        and prev[5] == K and prev[7] <= tol):
                    done = True
                    bound = prev[7]
                elif res[5] == K and res[4] == 0 and res[0] == res[1] and cur > tol:
                    target /= 10.0
                prev = np.append(res, cur)
                if self.debug_mass and not done and waves % 3 == 0:
                    self._snapshot(x, acc, leaked, reqs, rbufs, sent_to, recv_from, apply_data)
            t4 = perf()
            st.comm_s += t4 - t3
            if _TRACE and tn - _last_dbg[0] > 2.0:
                _last_dbg[0] = tn
                import sys
                print(f"[asap r{me}] rounds {rounds} rl {rl:.3g} target {target * share:.3g} "
                      f"inflight {inflight.tolist()} queue {len(emu.queue)} sent {n_sent} "
                      f"recv {n_recv} obuf {bool(nout and acc[nloc:].any())} waves {waves} "
                      f"wave_req {wave_req is not None} prev {None if prev is None else prev.tolist()}",
                      file=sys.stderr, flush=True)
            if not (ev or pushed or sent):
                idle += 1
                if idle > 2:
                    d = min(1e-3, 2e-5 * idle)
                    nd = emu.next_due()
                    if nd is not None:
                        d = max(0.0, min(d, nd - now()))
                    time.sleep(d)
                    st.wait_s += d
            else:
                idle = 0
        # clean up: cancel the posted receives, complete every send
        for r in reqs:
            r.Cancel()
        MPI.Request.Waitall(reqs)
        MPI.Request.Waitall(ack_pending)
        MPI.Request.Waitall([r for row in pool_req for r in row if r is not None])
        # a fast rank must not start a next solve while a peer still polls this one
        comm.Barrier()
        if self.debug_mass:
            self._check_mass(x, acc, leaked)
        st.rounds += rounds
        st.extra["waves"] = st.extra.get("waves", 0) + waves
        st.extra["asap_seconds_solve"] = perf() - t_start
        return x, bound, rounds

    # ------------------------------------------------------------------ debug
    def _check_mass(self, x, acc, leaked):
        MPI = self.MPI
        loc = np.array([x.sum(), acc.sum(), leaked])
        tot = np.zeros(3)
        self.comm.Allreduce(loc, tot, op=MPI.SUM)
        total = tot[0] + (tot[1] + tot[2]) / (1.0 - self.alpha)
        err = abs(total - 1.0)
        self.mass_checks += 1
        self.max_mass_error = max(self.max_mass_error, err)
        if err > 1e-9:
            raise RuntimeError(f"PageRank mass not conserved: values + residuals + buffered + "
                               f"in flight + leaked = {total!r} (expected 1)")

    def _snapshot(self, x, acc, leaked, reqs, rbufs, sent_to, recv_from, apply_data):
        """Blocking consistent snapshot (debug only): drain in-flight data, check the mass."""
        MPI, comm, lg = self.MPI, self.comm, self.lg
        expect = np.zeros(self.K, dtype=np.int64)
        comm.Alltoall([sent_to, MPI.INT64_T], [expect, MPI.INT64_T])
        held = [it for it in self.emu.queue if it[2][0] == "d"]
        self.emu.queue[:] = [it for it in self.emu.queue if it[2][0] != "d"]
        import heapq

        heapq.heapify(self.emu.queue)
        for _, _, (_, j, buf) in held:
            apply_data(j, buf)
        nin = len(lg.in_peers)
        while (recv_from < expect).any():
            i = MPI.Request.Waitany(reqs[:nin]) if nin else MPI.UNDEFINED
            if i == MPI.UNDEFINED:
                break
            apply_data(i, rbufs[i])
            reqs[i] = comm.Irecv([rbufs[i], MPI.DOUBLE], source=int(lg.in_peers[i]), tag=TAG_DATA)
        self._check_mass(x, acc, leaked)


def run_asap(comm, lg, p, dvec, alpha, tol, emu, st, fanout=2, window=1, approx=0.0, seed=0,
             debug_mass=False):
    """Run ASAP PageRank; returns ``(x_local, rounds, converged, bound, extra)``."""
    MPI = mpi()
    sol = _Solver(comm, lg, alpha, emu, st, fanout, window, approx, seed, debug_mass)
    same = True
    if dvec is not None:
        same = comm.allreduce(bool(np.array_equal(dvec, p)), op=MPI.LAND)
    dmask = lg.dangling.astype(bool)
    if same:
        y, bound, rounds = sol.solve(p, tol, relative=True)
        S = comm.allreduce(float(y.sum()), op=MPI.SUM)
        x = y / S
    else:
        beta = 1.0 - alpha
        inner = tol * beta * beta / 4.0
        y, b1, r1 = sol.solve(p, inner, relative=False)
        z, b2, r2 = sol.solve(dvec, inner, relative=False)
        yd, zd = comm.allreduce(np.array([y[dmask].sum(), z[dmask].sum()]), op=MPI.SUM)
        s = yd / (1.0 - alpha / beta * zd)
        x = y + alpha * s * z / beta
        S = comm.allreduce(float(x.sum()), op=MPI.SUM)
        x /= S
        bound, rounds = 4.0 * max(b1, b2) / (beta * beta), r1 + r2
    extra = {"spectral_gap": sol.sched.spectral_gap(0), "spectral_gap_mean": sol.sched.mean_gap(),
             "fanout": sol.sched.k, "window": sol.window, "approx": sol.approx,
             "schedule_period": 2 * sol.sched.L}
    if debug_mass:
        extra["mass_checks"] = sol.mass_checks
        extra["max_mass_error"] = sol.max_mass_error
    rounds_max = comm.allreduce(rounds, op=MPI.MAX)
    return x, rounds_max, True, bound, extra
