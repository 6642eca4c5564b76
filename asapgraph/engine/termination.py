"""Exact termination of the asynchronous loops: counting waves over non-blocking Iallreduce.

Rationale
---------
One protocol serves both ASAP loops (:class:`.asap._Solver`, which runs PageRank and the
compiled sum and min/max programs, and :func:`.asap_programs.run_asap`, the general
delta loop of programs with hooks).  It is Mattern's counting method ("Algorithms for
distributed termination detection", Distributed Computing 2(3), 1987) with a
non-blocking ``Iallreduce`` in place of the token: a *wave* is one ``Iallreduce`` (sum)
of every rank's *contribution*

``(sent, received, busy, dirty, capped, extra...)``

* ``sent``, ``received``: the rank's data messages so far (ACKs and wave traffic are not
  counted);
* ``busy``: the rank may still send something without first receiving anything (local
  work above its threshold, a non-empty or held-back buffer, un-ACKed messages, a held
  delivery).  Invariant P: a rank that is not busy sends nothing more unless it first
  receives a message;
* ``dirty``: the rank had an event since its previous contribution -- a message sent or
  received (``dirty=None``: derived from the two counters), or, where the caller says so,
  local work;
* ``capped``: the rank reached its work limit;
* ``extra``: the caller's sums riding on the same wave (the error bound's terms, the
  extrapolation's flows); further arrays with their own operation (the aggregates of
  program hooks, summed, min'ed or max'ed) travel as companion ``Iallreduce``\\ s of the
  same wave.

A rank starts at most one wave at a time and keeps computing and serving messages while
it is in flight; waves complete in the same order on every rank, so every rank sees the
same sums and takes the same decision, without a barrier or a blocking collective.

*Decision rule* (:meth:`Waves.decide`).  A wave is *settled* when ``sent == received``
and no rank is busy or dirty.  The run stops after wave ``k`` iff wave ``k`` is settled,
every rank was also passive (not busy) in the ``passive_waves - 1`` waves before it, and,
when a tolerance is given, the bound of wave ``k - 1`` is ``<= tol``.  A wave in which
some rank is capped either stops the run at once (``drain=False``) or starts a *drain*:
every rank stops working and only flushes, and the run ends at the first quiet wave at
least two waves later whatever the bound (``drain=True``: so a limit never leaves a
message in flight).  ``max_waves`` stops the run (not converged) after that many waves.

*Soundness.*  Wave ``k``'s contributions start after wave ``k - 1`` completed on every
rank, i.e. after every rank made its wave ``k - 1`` contribution; let ``T`` be an instant
after the last wave ``k - 1`` contribution and before the first wave ``k`` one.  No rank
is dirty in wave ``k``: no rank sent or received a message between its two
contributions, an interval that contains ``T``, so the counters of wave ``k`` are those
at ``T`` on every rank.  A message counted as received was sent before, so
``sent == received`` means that nothing is in flight at ``T``.  After ``T`` no rank
sends before its wave ``k`` contribution (not dirty), and after it a rank is passive
(not busy) and, by invariant P, sends only after receiving something -- but nothing is
in flight and nobody else can send first: no message is ever sent again, the
computation has terminated and every buffer has been flushed.  (What breaks when P is
broken, a fixed bug: a rank that joined a wave holding a sendable boundary entry -- the
program engine's ``post_delta`` path cleared ``busy`` while entries were held back by
its flush interval -- sent it after its contribution, and the wave declared termination
with it in flight.)

The two callers differ in when they contribute, which is why ``passive_waves`` and the
bound are parameters of the one rule:

* ``asap._Solver`` (``passive_waves=2``, ``tol``, ``drain=True``, ``dirty=None``) also
  contributes *periodically while busy* (this yields the error-vs-time trace and the
  global residual that steers the local work), and its ``dirty`` only reflects the
  message counters.  Requiring every rank passive in waves ``k - 1`` and ``k`` makes the
  wave ``k - 1`` contributions a description of the final state: a passive rank with no
  message event between its two contributions did no work in between, so the bound of
  wave ``k - 1`` (the residual mass it reported, which never increases) certifies the
  state at ``T``.  If every rank is passive but the bound is still above ``tol``
  (:attr:`Waves.stalled`), the caller lowers its push threshold (identically everywhere).
* ``asap_programs.run_asap`` (``passive_waves=1``, no ``tol``, ``drain=False``,
  ``max_waves = max_iter``, ``dirty`` from the caller: received, sent or processed a
  vertex since its previous contribution) joins a wave only when it is not busy (or
  capped, which stops the run at that wave), so every contribution that can take part
  in a stop is passive already and a second wave would only forbid a stop at the first
  wave.  Its bound is implicit: a vertex is processed only above ``tol / (n + slots)``,
  so at termination the pending delta mass is at most ``tol`` (sums) or no delta
  improves a value (min/max).

References: F. Mattern, "Algorithms for distributed termination detection", Distributed
Computing 2(3), 1987.
"""
from __future__ import annotations

import numpy as np

from asapgraph.comm.mpi import mpi

__all__ = ["Waves", "SENT", "RECV", "BUSY", "DIRTY", "CAPPED", "EXTRA"]

#: positions in a wave's summed vector; the caller's extra fields start at ``EXTRA``
SENT, RECV, BUSY, DIRTY, CAPPED, EXTRA = range(6)


class Waves:
    """One rank's side of the counting-wave protocol (see the module docstring).

    ``nextra``: number of the caller's extra fields; ``passive_waves``: consecutive waves
    in which every rank must be passive (1 or 2); ``tol``: the bound of the wave before
    the stopping one must be ``<= tol`` (None: no bound in the rule); ``drain``: a capped
    rank starts a drain instead of stopping the run; ``max_waves``: stop after that many
    waves (None: no limit).

    After :meth:`decide` returned True: ``converged`` and ``bound`` (the bound of the
    wave before, or the one passed when ``tol`` is None).
    """

    def __init__(self, comm, nextra=0, passive_waves=1, tol=None, drain=False, max_waves=None):
        self.MPI = mpi()
        self.comm = comm
        self.passive_waves = int(passive_waves)
        self.tol = tol
        self.drain_on_cap = bool(drain)
        self.max_waves = max_waves
        self.send = np.zeros(EXTRA + nextra)
        self.recv = np.zeros(EXTRA + nextra)
        self.req = None          # the wave in flight (a list of requests)
        self.more = []           # its companion reductions: (name, result, ndim, sent)
        self.reduced = {}        # the companion reductions of the last completed wave
        self.waves = 0           # waves completed
        self.prev = None         # summed vector of the previous wave
        self.prev_bound = None   # bound of the previous wave
        self.last_counts = None  # (sent, received) of this rank's previous contribution
        self.draining = False
        self.drain_wave = None
        self.stalled = False     # last wave: every rank passive, bound above tol
        self.converged = False
        self.bound = np.inf

    @property
    def idle(self):
        """No wave of this rank in flight: it may contribute."""
        return self.req is None

    def next_event(self):
        """When a completed wave's result falls due on its own (inf: never; see
        :class:`LatentWaves`)."""
        return np.inf

    def contribute(self, sent, received, busy, dirty=None, capped=False, extra=(), more=None):
        """Start the next wave with this rank's contribution (non-blocking).

        ``dirty=None``: the rank is dirty when its counters changed since its previous
        contribution (always at its first).  ``more``: ``{name: (value, op)}`` companion reductions (op ``"sum"``,
        ``"min"`` or ``"max"``; every rank passes the same names), in ``reduced`` once the
        wave completed.
        """
        MPI = self.MPI
        counts = (sent, received)
        if dirty is None:
            dirty = counts != self.last_counts
        self.last_counts = counts
        v = self.send
        v[SENT], v[RECV] = sent, received
        v[BUSY] = 1.0 if busy else 0.0
        v[DIRTY] = 1.0 if dirty else 0.0
        v[CAPPED] = 1.0 if capped else 0.0
        v[EXTRA:] = extra
        self.req = [self.comm.Iallreduce(v, self.recv, op=MPI.SUM)]
        self.more = []
        if more:
            ops = {"sum": MPI.SUM, "min": MPI.MIN, "max": MPI.MAX}
            for name in sorted(more):  # the same order of collectives on every rank
                val, op = more[name]
                a = np.atleast_1d(np.asarray(val, dtype=np.float64)).copy()
                r = np.empty_like(a)
                self.req.append(self.comm.Iallreduce([a, MPI.DOUBLE], [r, MPI.DOUBLE],
                                                     op=ops[op]))
                self.more.append((name, r, np.ndim(val), a))

    def test(self):
        """The summed vector of the wave in flight once it completed (then counted in
        ``waves``; its companion reductions are in ``reduced``, ``{name: value}``), else
        None."""
        if self.req is None:
            return None
        done = self.req[0].Test() if len(self.req) == 1 else self.MPI.Request.Testall(self.req)
        if not done:
            return None
        self.req = None
        self.waves += 1
        self.reduced = {k: (float(r[0]) if nd == 0 else r) for k, r, nd, _ in self.more}
        self.more = []
        return self.recv.copy()

    def drain(self):
        """Start draining at this wave (the same on every rank: call it on a wave's sums)."""
        if not self.draining:
            self.draining, self.drain_wave = True, self.waves

    def decide(self, res, bound=0.0):
        """Apply the decision rule to the completed wave ``res`` (its caller-defined
        ``bound``); True: stop now (every rank decides the same)."""
        prev = self.prev
        settled = res[SENT] == res[RECV] and res[BUSY] == 0 and res[DIRTY] == 0
        quiet = settled and (self.passive_waves < 2 or (prev is not None and prev[BUSY] == 0))
        stop = False
        if quiet:
            if self.tol is None:
                stop, self.converged, self.bound = True, True, bound
            elif self.prev_bound <= self.tol or (self.draining
                                                  and self.waves >= self.drain_wave + 2):
                stop, self.bound = True, self.prev_bound
                self.converged = bool(self.prev_bound <= self.tol)
        self.stalled = (not stop and settled and self.tol is not None and bound > self.tol
                        and not self.draining)
        if not stop:
            if res[CAPPED] > 0:
                if self.drain_on_cap:
                    self.drain()
                else:
                    stop = True
            elif self.max_waves is not None and self.waves >= self.max_waves:
                stop = True
        self.prev, self.prev_bound = res, bound
        return stop


class LatentWaves(Waves):
    """:class:`Waves` on an emulated network, host's clock: a wave's result is seen no
    earlier than the latest contribution plus ``cost(nbytes)`` (the collective's emulated
    time, ``Emulator.collective_cost``), as every data message is held until its emulated
    delivery.  ``clock``: the host's time, common to the ranks (``time.time``; the
    emulation of messages stamps with it too).  The virtual clock has
    :class:`.vclock.VirtualWaves`."""

    def __init__(self, comm, cost, clock, **kw):
        super().__init__(comm, **kw)
        self.cost, self.clock = cost, clock
        self.held = None      # (sums, companions) of a completed wave not yet due
        self.ready_at = None  # when it is due

    @property
    def idle(self):
        return self.req is None and self.held is None

    def contribute(self, *args, more=None, **kw):
        more = dict(more or {})
        more["~latent"] = (self.clock(), "max")
        super().contribute(*args, more=more, **kw)

    def test(self):
        if self.held is None:
            res = super().test()
            if res is None:
                return None
            start = self.reduced.pop("~latent")
            self.ready_at = start + self.cost(8 * (len(self.send) + 1))
            self.held = (res, self.reduced)
        if self.clock() < self.ready_at:
            return None
        (res, self.reduced), self.held = self.held, None
        return res

    def next_event(self):
        """When the held result falls due (inf: none held)."""
        return np.inf if self.held is None else self.ready_at
