"""Per-rank event timestamps of ASAP's round loop (a diagnostic, off by default).

``ASAPGRAPH_EVTRACE=DIR``: every ASAP solve appends ``(time, kind, a, b, host time,
thread CPU time)`` events to a list and writes it to ``DIR/ev_r<rank>_<pid>_<n>.pkl`` (a
pickled dict: ``rank``, ``t0``, ``ev`` and the gate's settings) when the solve ends (a BSP
PageRank run too).  Time is the host's ``perf_counter`` (one clock for every process of a
host), or the rank's virtual clock on ``--clock virtual``; the host's ``perf_counter`` and
the thread's CPU time are recorded beside it, so one run shows where its wall time went
that its CPU time does not (benchmarks/REPORT.md, nineteenth session).
Kinds: ``S0``/``S1`` a sweep starts (a = in-peers fresh, b = seconds since the last
sweep ended) / ends (a = edges, b = straggler sleep); ``G`` the sweep gate is closed (a
= its patience in seconds); ``Z`` an idle sleep (a = seconds); ``P`` a flush before the
round's work (:meth:`.asap._Solve.flush_first`); ``B`` a flush right before a sweep
(:meth:`.asap._Solve.flush_before_sweep`, a = the peers sent to); ``T`` a data message
is sent (a = peer index, b = bytes); ``R`` one is received from MPI (a = peer index, b =
its delivery stamp); ``D`` one is applied; ``A`` an ACK is applied; ``z`` an idle wait
ended; ``T0`` the run's clocks start (:func:`asapgraph.engine.api.pagerank`); ``I1`` the
solve's setup ended (the warm sweep's included); ``C`` a wave contribution (a = passive,
b = at a sweep's end); ``W`` a wave result (a = its number, b = the bound); ``M`` the
sums a contribution carried (a = the rank's residual mass, b = its signed residual: 0 in
a busy ``jacobi`` PageRank rank's, which keeps it unsummed); ``O`` over-relaxation
turned off by its guard (a = the wave, b = its bound); ``E`` the round loop ended.
BSP: ``s0`` a sweep starts, ``a0``/``a1``/``a2`` the superstep's ``Allreduce`` starts /
returns / its modelled cost has passed, ``x1``/``x2``/``x3`` the exchange's sends are
posted / its receives done / its emulated delivery waited for (b = how late that wait
ended, negative); ``a`` is the virtual clock.  Used to find why the host
clock's 2-rank runs on rmat:20 were bimodal (benchmarks/REPORT.md, seventeenth session).
Off, a call costs one global test.
"""
from __future__ import annotations

import os
import pickle
import time

DIR = os.environ.get("ASAPGRAPH_EVTRACE") or None
LOG = []
_clock = [time.perf_counter]
_n = [0]


def ev(kind, a=0.0, b=0.0):
    """Record an event (when tracing)."""
    if DIR:
        LOG.append((_clock[0](), kind, a, b, time.perf_counter(), time.thread_time()))


def now():
    """The events' clock."""
    return _clock[0]()


def start(clock=None):
    """A solve starts: its events' clock (default the host's ``perf_counter``); returns
    the start time."""
    _clock[0] = clock or time.perf_counter
    return _clock[0]()


def dump(rank, t0, **info):
    """Write this solve's events (when tracing) and clear them."""
    if not DIR:
        return
    _n[0] += 1
    with open(os.path.join(DIR, f"ev_r{rank}_{os.getpid()}_{_n[0]}.pkl"), "wb") as fh:
        pickle.dump(dict(rank=rank, t0=t0, ev=list(LOG), **info), fh)
    LOG.clear()
