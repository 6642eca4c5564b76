"""Virtual time: the emulated cluster on per-rank virtual clocks (``--clock virtual``).

Rationale
---------
With more ranks than cores the host's clock measures the OS scheduler, not the algorithm.
As in SimGrid/SMPI, the real code runs and the real MPI carries the real messages, but
every figure is read off a per-rank *virtual clock* ``vt`` advanced by a model
(:class:`.emulation.Emulator`): compute by its thread CPU time x the straggler factor
(plus scheduled pauses, no sleeping); a message sent at ``vt = t`` over a link leaves when
the link is free and arrives at ``t' = start + bytes / bandwidth + latency (+ jitter)``;
a collective costs the latest clock plus ``ceil(log2 K) x latency + bytes / bandwidth``.

*BSP* needs nothing more: a superstep's events are fixed by the program (sweep, send,
wait for every in-peer's message: ``vt = max(vt, arrivals)``, ``Allreduce``: ``vt = max
over ranks + collective``), so the host's timing cannot change what happens or when.

*ASAP* reacts to whatever has arrived, so on the host's clock a rank would act on what
the host happened to deliver.  Conservative synchronisation makes it act on what a real
cluster with this model would have delivered by then.  The protocol is the synchronous
conservative one of the Chandy-Misra-Bryant family whose lookahead is the link latency
``L`` (bounded-lag / YAWNS: Lubachevsky, CACM 1989; Nicol, JACM 1993), with the rank
clocks published by a clock reduction instead of null messages:

1. *Window.*  Every rank reports how many data messages and ACKs it has sent to each
   peer and how many termination waves it has started (one ``Allgather``) and then
   receives, blocking if need be, every message sent to it so far; the received ones
   wait in a heap keyed by ``(arrival, kind, sender, sender's sequence number)``.  A
   wave every rank has started is resolved (step 3).  Then one ``Allreduce`` (min) of
   the ranks' *next event times* gives ``T``: a busy rank's next event is its clock; an
   idle one's is its earliest held arrival, the virtual completion of its termination
   wave, or its next periodic wave.  The window is ``[T, T + L)``.  (Resolving the waves
   before ``T`` matters: when every rank waits only for a wave, its completion is the
   only next event; resolved after ``T``, ``T`` was infinite, the window unbounded, and
   the ranks acted on whatever the host had delivered -- a causality gap that made
   repetitions of one seeded run differ.)
2. *Rounds.*  A rank runs rounds while its next event is ``< T + L``; a round starting at
   ``vt`` first delivers every held message with arrival ``<= vt`` (heap order) and the
   wave result if it completed by ``vt``, then does the solver's round (local work
   advances ``vt``; flushes and ACKs are stamped at ``vt``).  The round's inputs are read
   at its start, its outputs (sends) may fall after ``T + L``.  The round's work other
   than its sweep (decoding what arrived, coding each message, the passes over the
   rank's state; its CPU time or the compute model's cost) is charged as it happens
   (:class:`Charge`): an ACK is stamped after the decode of the message it answers, a
   message after its own encoding, a sweep starts after the decode of the messages that
   opened its gate -- as on a host, where these run one after another.  (Until the
   seventeenth session it was charged at the round's end, after its messages were
   stamped: ~0.5-1 ms of a ~8.5 ms cycle in ASAP's favour on rmat:20, 4 ranks.)
3. *Waves* (:class:`VirtualWaves`).  A termination wave is the solver's ``Iallreduce``
   plus a max of the contributors' clocks; it completes in virtual time at ``max clock +
   collective``; a rank sees its result at its first round starting no earlier.  The
   completion is fixed once every rank has contributed, which step 1 tells (the least
   number of waves started); until then it is ``>= T + ceil(log2 K) L >= T + L``.

*Why the result is the real cluster's.*  Every rank's clock is ``>= T`` at the window's
start (``T`` is the least next event, and clocks never go back), so a message sent from
then on leaves at ``>= T`` and arrives at ``>= T + L``: every message arriving before
``T + L`` was sent before the window and is in the receiver's heap after step 1.  A
round starting at ``vt < T + L`` therefore sees exactly the messages a real cluster
would have delivered by ``vt`` (those with arrival ``<= vt``), in arrival order (ties
broken by sender and sequence, not by the host), and a wave result exactly when a real
cluster would have it (step 3).  By induction over rounds in clock order each rank goes
through the states it would go through on the modelled cluster, whatever the host does
in real time: a descheduled or slow rank only makes the others wait in the window
collectives (real time), never changes a virtual time.  What stays non-deterministic is
the model's input, the CPU time a sweep takes (+-10-20 % run to run with 4 ranks on 2
shared cores, which ASAP's straggler-bound time inherits); with the compute model
(``compute="model"``, :mod:`.emulation`) there is none left: a seeded run repeats to
the last bit (tests/mpi/test_vclock_model.py).  Floating-point sums over messages
delivered together are in heap order.  No deadlock: the rank whose
next event is ``T`` always runs a round in the window.  Latency 0 leaves no lookahead
(``[T, T)`` is empty): the virtual clock needs ``latency > 0`` (refused otherwise).
The general engine of programs with hooks (:mod:`.asap_programs`) runs the same windows
with its own rounds (``_Run._run_virtual``).

:func:`main` is a small test entry (``python -m asapgraph.engine.vclock``): ping-pong
and chain exchanges on the same windows whose arrival times are known in closed form.
"""
from __future__ import annotations

import heapq
import math
import time

import numpy as np

from asapgraph.comm.mpi import mpi
from asapgraph.engine.termination import LatentWaves, Waves

__all__ = ["Links", "VirtualWaves", "Charge", "make_waves", "drive", "run_solve", "main"]

INF = math.inf
_DEBUG = bool(__import__("os").environ.get("ASAPGRAPH_TRACE_VCLOCK"))


class Links:
    """The virtual-time receive side of one :class:`.exchange.NotifyAck` (module
    docstring, step 1): held messages, the window collectives (on a duplicate of
    ``comm``, so they never interleave with the solver's waves)."""

    def __init__(self, comm, emu, na):
        self.comm = comm.Dup()
        self.emu, self.na = emu, na
        self.K, self.me = comm.Get_size(), comm.Get_rank()
        self.in_peers = [int(q) for q in na.in_peers]
        self.out_peers = [int(q) for q in na.out_peers]
        self.heap = []
        self.got_d = np.zeros(self.K, dtype=np.int64)
        self.got_a = np.zeros(self.K, dtype=np.int64)
        self.windows = 0

    def _sink(self, kind, j, payload, nbytes):
        if kind == "d":
            q = self.in_peers[j]
            self.got_d[q] += 1
            at = float(payload[:8].view(np.float64)[0])
            heapq.heappush(self.heap, (at, 0, q, int(self.got_d[q]), j, payload, nbytes))
        else:
            q = self.out_peers[j]
            self.got_a[q] += 1
            heapq.heappush(self.heap, (payload, 1, q, int(self.got_a[q]), j, None, 0))

    def pull(self):
        """Move what has arrived (real time) into the heap."""
        self.na.receive(self._sink)

    def window(self, next_event, started, done, resolve=None):
        """Steps 1 of a window (collective): receive everything sent so far and learn the
        least number of waves started (``resolve(min_started)`` is called with it, so a
        wave whose completion it fixes enters the next events), then the least next
        event ``T`` and whether every rank is done.  ``next_event``: a callable
        (evaluated after the receives and ``resolve``).  Returns ``(T, min_started,
        all_done)``.

        (The least number of waves started used to come with ``T``, and the waves were
        resolved after it: a window in which every rank waited only for a wave then had
        ``T`` = inf -- no bound -- and the ranks ran their rounds on whatever the host had
        delivered: six 2-rank runs of one seeded scenario ended between 0.073 and 0.104
        virtual s.)"""
        MPI, K, na = mpi(), self.K, self.na
        row = np.concatenate([na.sent_to, na.recv_from,  # ACKs = applied
                              [int(started())]]).astype(np.int64)
        allg = np.zeros((K, 2 * K + 1), dtype=np.int64)
        self.comm.Allgather([row, MPI.INT64_T], [allg, MPI.INT64_T])
        exp_d, exp_a = allg[:, self.me], allg[:, K + self.me]
        min_started = int(allg[:, 2 * K].min())
        self.pull()
        while (self.got_d < exp_d).any() or (self.got_a < exp_a).any():
            na.receive(self._sink, block=True)
        if resolve is not None:
            resolve(min_started)
        red = np.array([next_event(), 1.0 if done else 0.0])
        out = np.zeros(2)
        self.comm.Allreduce(red, out, op=MPI.MIN)
        self.windows += 1
        return float(out[0]), min_started, bool(out[1])

    def next_arrival(self):
        return self.heap[0][0] if self.heap else INF

    def deliver(self, vt):
        """Deliver every held message and ACK with arrival ``<= vt`` (heap order)."""
        n, heap, na = 0, self.heap, self.na
        while heap and heap[0][0] <= vt:
            _, kind, _, _, j, payload, nbytes = heapq.heappop(heap)
            if kind == 0:
                na.apply(j, payload, nbytes)
            else:
                na.ack_arrived(j)
            n += 1
        return n

    def close(self):
        self.comm.Free()


class Charge:
    """An ASAP round's work other than its sweeps, charged to the virtual clock as it
    happens (module docstring, step 2): each call advances ``emu.vt`` by the work done
    since the previous call -- the thread's CPU time less the sweep charged meanwhile
    (less ``untimed()``, the bench's measurement), or under the compute model
    :meth:`.emulation.Emulator.round_cost` of the messages (data applied and sent, ACKs
    arrived), bytes, coded values and ``passes() x nloc`` state vertices since -- times
    the straggler factor.  The round's fixed cost goes with its first call.  Set as
    ``na.charge`` (called before every stamp) and called at the round's points between.
    The totals are those of one charge at the round's end."""

    def __init__(self, emu, na, st, passes=lambda: 0, nloc=0, untimed=lambda: 0.0):
        self.emu, self.na, self.st = emu, na, st
        self.passes, self.nloc, self.untimed = passes, nloc, untimed
        self.cpu = time.thread_time
        self.first = True
        self._mark()

    def _counts(self):
        na, st = self.na, self.st
        return (na.n_recv + na.n_acks + na.n_sent, st.bytes_sent + na.bytes_recv,
                self.passes(), na.coded_sent, na.coded_applied, na.bcoded_sent,
                na.bcoded_applied, self.untimed())

    def _mark(self):
        self.c0, self.charged, self.k0 = self.cpu(), self.emu.compute_vs, self._counts()

    def round(self):
        """A round starts (what ran between rounds, the windows' collectives, is not the
        rank's work); its fixed cost goes with the next charge."""
        self.first = True
        self._mark()

    def __call__(self):
        emu, c = self.emu, self.cpu()
        k = self._counts()
        m, b, p, qs, qa, bs, ba, u = (x - y for x, y in zip(k, self.k0))
        rest = c - self.c0 - (emu.last_cpu if emu.compute_vs > self.charged else 0.0) - u
        emu.advance(emu.round_cost(rest, m, p * self.nloc, b, coded=(qs, qa),
                                   bcoded=(bs, ba), rounds=int(self.first)) * emu.factor)
        self.first = False
        # (the counts are those just taken: nothing ran since but this call's own work,
        # which the new CPU mark leaves out)
        self.c0, self.charged, self.k0 = self.cpu(), emu.compute_vs, k


class VirtualWaves(Waves):
    """:class:`.termination.Waves` whose results are seen at their virtual completion
    (module docstring, step 3)."""

    def __init__(self, emu, comm, **kw):
        super().__init__(comm, **kw)
        self.emu = emu
        self.started = 0
        self.ready_at = None

    def contribute(self, *args, more=None, **kw):
        more = dict(more or {})
        more["~vclock"] = (self.emu.vt, "max")
        super().contribute(*args, more=more, **kw)
        self.started += 1
        self.ready_at = None

    def resolve(self, min_started):
        """After a window: every rank contributed to this rank's wave in flight (the
        least number of waves started reached its own), so its completion is known."""
        if self.req is None or self.ready_at is not None or min_started < self.started:
            return
        self.MPI.Request.Waitall(self.req)
        vmax = next(float(r[0]) for name, r, _, _ in self.more if name == "~vclock")
        self.ready_at = vmax + self.emu.collective_cost(8 * (len(self.send) + 1))

    def test(self):
        if self.ready_at is None or self.emu.vt < self.ready_at:
            return None
        res = super().test()
        self.reduced.pop("~vclock", None)
        self.ready_at = None
        return res

    def next_event(self):
        return INF if self.ready_at is None else self.ready_at


def make_waves(comm, emu, **kw):
    """The termination waves for emulator ``emu``: seen at their virtual completion
    (virtual clock), held until their emulated completion (host's clock, emulated
    network), else as they complete."""
    if emu.virtual:
        return VirtualWaves(emu, comm, **kw)
    if emu.cfg.network and emu.collective_cost() > 0:
        return LatentWaves(comm, emu.collective_cost, time.time, **kw)
    return Waves(comm, **kw)


def drive(comm, emu, na, wv, round_, idle_event):
    """The window loop of one ASAP run on the virtual clock (module docstring, steps 1-3)
    around the caller's rounds; returns the number of windows.

    ``round_(links)``: one round at the rank's clock ``emu.vt`` (it pulls and delivers the
    held messages due, :meth:`Links.pull` / :meth:`Links.deliver`, does its work and
    advances ``emu.vt`` by its cost); returns ``(done, idle)``.  ``idle_event()``: an
    idle rank's next event of its own besides its next arrival and its wave's completion
    (``INF``: none).  A busy rank's next event is its clock."""
    links = Links(comm, emu, na)
    L = emu.cfg.latency
    state = [False, False]  # done, idle

    def next_event():
        if state[0]:
            return INF
        if not state[1]:
            return emu.vt
        return max(min(links.next_arrival(), wv.next_event(), idle_event()), emu.vt)

    while True:
        T, _, all_done = links.window(next_event, lambda: wv.started, state[0], wv.resolve)
        if all_done:
            break
        if T == INF:  # cannot happen (a wave in flight is resolved by now): no lookahead
            raise RuntimeError("virtual clock: no next event on any rank")
        W = T + L
        while not state[0]:
            e = next_event()
            if e >= W:
                break
            emu.vt = max(emu.vt, e)
            done, idle = round_(links)
            state[0] = done
            if not done:
                state[1] = idle
    links.close()
    return links.windows


def run_solve(s, wave_interval):
    """The round loop of one ASAP solve (:class:`.asap._Solve` ``s``) on the virtual
    clock (:func:`drive`); returns nothing (``s`` holds the state).  Same rounds as the
    host-clock loop of :meth:`.asap._Solve.run`, ordered by the windows of the module
    docstring."""
    emu, na, st, d, wv = s.emu, s.na, s.st, s.d, s.wv
    nloc = s.nloc
    sent = 0

    def idle_event():
        e = s.gate_due()
        if wv.idle:
            e = min(e, s.last_contrib + max(wave_interval, s.last_sweep_len))
        return e

    # the round's other work (polling, applying, coding; CPU at the rank's speed or the
    # compute model's cost) is charged as it happens: before every stamp (na.charge),
    # before the sweep and before the wave contribution (the bench's true-error trace,
    # s.untimed, is not the algorithm's)
    charge = Charge(emu, na, st, passes=lambda: s.passes, nloc=nloc,
                    untimed=lambda: s.untimed)
    na.charge = charge

    def round_(links):
        nonlocal sent
        charge.round()
        s.rounds += 1
        s.wave_events = 0
        links.pull()
        ev = links.deliver(emu.vt)
        res = wv.test()
        if res is not None and s._on_wave(res):
            return True, False
        s.arrived()
        s.over = s.over_work()
        charge()  # (the sweep starts after the decode of what opened its gate)
        pre = s.flush_first()  # (as on the host clock; each message charged before its stamp)
        v0, charged = emu.vt, emu.compute_vs
        pushed = s._work(ev, time.perf_counter(), emu.vt)
        if emu.compute_vs > charged:  # a sweep ran: its virtual length
            s.last_sweep_len = emu.vt - max(v0, s.sweep_v0)
            if s.sweep_wave(emu.vt):  # (the wave completed during it; the next one)
                return True, False
        sent, out_work = s.send_step(ev or pushed or sent)  # (as on the host clock)
        passive = s.passive(out_work)
        charge()
        if s._wave(passive, emu.vt):  # (a wave completed during the round; the next)
            return True, False
        contributed = s.wave_events > 0
        charge()
        if _DEBUG and s.rounds % 50 == 0:
            print(f"r{s.me} round {s.rounds} vt {emu.vt:.5f} rl {s.rl:.3e} tgt "
                  f"{s.target * s.share:.3e} pend {d.pending_mass():.3e} ev {ev} "
                  f"pushed {pushed} sent {sent} infl {na.inflight.tolist()} heap "
                  f"{len(links.heap)} waves {wv.waves} rg {s.r_global:.3e}", flush=True)
        # (a due flush keeps the rank running rounds, as the host-clock loop does)
        return False, not (ev or pushed or sent or pre or contributed or res is not None
                           or s.flush_due())

    st.extra["virtual_windows"] = drive(s.comm, emu, na, wv, round_, idle_event)
    na.charge = None  # (the drain after the stop is not timed)


# ---------------------------------------------------------------- test entry point
def scenario(comm, emu, kind, nbytes, compute, count, sleep):
    """A ping-pong (``kind="pingpong"``, 2 ranks, ``count`` round trips) or a chain
    (``"chain"``, 3 ranks: rank 0 sends ``count`` messages back to back to rank 1,
    which forwards each to rank 2 after ``compute`` s) on :class:`Links` windows; every
    compute step is ``compute`` virtual seconds (no CPU charged) and ``sleep`` real
    seconds.  Returns this rank's ``[(arrival, clock when delivered), ...]``."""
    from asapgraph.engine import exchange as ex
    from asapgraph.engine.stats import RankStats

    K, me = comm.Get_size(), comm.Get_rank()
    if kind == "pingpong":
        outp = inp = [1 - me]
    else:
        outp = [me + 1] if me < K - 1 else []
        inp = [me - 1] if me > 0 else []
    got, pending = [], []
    slots = max(1, (nbytes - 8 * ex.HEADER) // 8)
    na = ex.NotifyAck(comm, np.array(outp, dtype=np.int64), [slots] * len(outp),
                      np.array(inp, dtype=np.int64), [slots] * len(inp), count + 1, emu,
                      RankStats(me), lambda j, buf, nb: pending.append(ex.header(buf)[0]))
    links = Links(comm, emu, na)
    # what each rank sends in all, and its first step
    if kind == "pingpong":
        todo = count if me == 0 else count
        ready = 1 if me == 0 else 0
    else:
        todo = count if me < K - 1 else 0
        ready = count if me == 0 else 0
    sent = 0
    done = False

    def next_event():
        if done:
            return INF
        return emu.vt if (ready or pending) else max(emu.vt, links.next_arrival())

    while True:
        T, _, all_done = links.window(next_event, lambda: 0, done)
        if all_done:
            break
        W = T + emu.cfg.latency
        while not done:
            e = next_event()
            if e >= W:
                break
            emu.vt = max(emu.vt, e)
            links.pull()
            links.deliver(emu.vt)
            for a in pending:
                got.append((a, emu.vt))
                if kind == "pingpong" or me < K - 1:
                    ready += 1
            pending.clear()
            if kind == "pingpong" and me == 0 and sent == todo:
                ready = 0
            if ready and sent < todo:
                if sleep:
                    time.sleep(sleep)
                if kind != "chain" or me > 0 or sent == 0:
                    emu.advance(compute)
                n = ready if (kind == "chain" and me == 0) else 1
                for _ in range(n):
                    buf = na.open(0)
                    na.send(0, buf, nbytes, ex.DENSE_EXACT)
                    sent += 1
                ready -= n
            else:
                ready = 0
            done = (sent == todo and na.acked() and not links.heap
                    and len(got) == (count if (kind == "pingpong" or me > 0) else 0))
    links.close()
    na.close()
    return got


def main(argv=None):
    """``python -m asapgraph.engine.vclock KIND --latency L --bandwidth B --bytes N
    --compute C --count R [--sleep S] [--pid-dir D]``: print rank 0's JSON
    ``{"arrivals": {rank: [[arrival, delivered_at], ...]}}``."""
    import argparse
    import json
    import os

    from asapgraph.engine.emulation import Emulator

    ap = argparse.ArgumentParser(prog="python -m asapgraph.engine.vclock")
    ap.add_argument("kind", choices=("pingpong", "chain"))
    ap.add_argument("--latency", type=float, default=1e-3)
    ap.add_argument("--bandwidth", type=float, default=125e6)
    ap.add_argument("--bytes", type=int, default=1000)
    ap.add_argument("--compute", type=float, default=1e-3)
    ap.add_argument("--count", type=int, default=5)
    ap.add_argument("--sleep", type=float, default=0.0)
    ap.add_argument("--pid-dir", default=None)
    a = ap.parse_args(argv)
    comm = mpi().COMM_WORLD
    if a.pid_dir:
        with open(os.path.join(a.pid_dir, f"rank{comm.Get_rank()}.pid"), "w") as f:
            f.write(str(os.getpid()))
    emu = Emulator({"latency": a.latency, "bandwidth": a.bandwidth, "clock": "virtual"},
                   comm.Get_rank(), comm.Get_size())
    emu.start()
    got = scenario(comm, emu, a.kind, a.bytes, a.compute, a.count, a.sleep)
    allg = comm.gather(got, root=0)
    if comm.Get_rank() == 0:
        print(json.dumps({"arrivals": {str(r): g for r, g in enumerate(allg)}}))


if __name__ == "__main__":
    main()
