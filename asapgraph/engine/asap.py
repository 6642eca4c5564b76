"""ASAP: the asynchronous solver loop of PageRank and the accumulative programs.

Rationale
---------
Every rank runs rounds without a barrier: receive what has arrived, do local work when
due, flush per-peer buffers to this round's expander neighbours, take part in a
termination wave.  The local work and what a buffer holds are a *state* plugged into the
loop: the delta form (:class:`.asap_delta.DeltaState`: PageRank's ``jacobi`` and
``push`` forms, with their mathematics, invariants and error bounds, and the
accumulative sum programs of :mod:`.sum_program`, ``delta0=``) or the min/max state of
:mod:`.minmax_program` (``minmax=``: SSSP, BFS, WCC, user programs; a message carries
the changed slots exactly and the wave's bound is the count of improving deltas pending
plus peers with unsent slots).  Order, delays and combining never change the fixed
point, so the loop is free to combine and delay.  (ASAP PageRank's measured limits
against BSP: :mod:`.asap_delta`.)

*Sweep gate.*  Where ranks share cores, a sweep waits until every in-peer has delivered
since the last sweep or ``patience`` x the last sweep's duration has passed (4 x the
share of edges that cross ranks, within [0.5, 3]), so it works on combined input; on
dedicated cores, and on the virtual clock (a core per rank), it does so only when more
than 45 % of the in-edges cross ranks (``GATE_MIN_CUT``; graphs without locality: a
sweep of stale ghosts would largely recompute unchanged values) and otherwise runs at once
(waiting there locked ranks into taking turns); ``ASAPGRAPH_ASAP_PATIENCE`` sets it on
either clock (on the virtual clock it waits in virtual time); the
wait is counted in sweeps of the rank or of its slowest in-peer, whichever are shorter
(headers carry the sender's sweep duration), so a straggler waits no longer than its
peers take to answer (env ``ASAPGRAPH_ASAP_PATIENCE``; off for ``push``).  A rank is out
of work when its residual L1 sum is below its share ``n_r / n`` of a global target that
keeps the bound at half of ``tol`` (push form: using the measured ``S = sum(x)`` of the
last wave, which never decreases).  Without new input since its last sweep, a rank far
below its share of the ranks' residual (:data:`IDLE_PRIO`) waits instead of sweeping
its own part further down.

*Priority schedule* (``schedule="priority"``, ``jacobi`` form; PrIter / Maiter).  Within
a rank, a sweep pushes first the blocks of largest residual per unit of work, the fewest
that hold ``rho`` (0.8, env ``ASAPGRAPH_ASAP_RHO``) of the mass above the skip threshold
(log-bucket histogram in :func:`._local.jacobi_push`); across ranks, a rank sweeps only
while its residual per owned vertex ``rl / n_r`` is at least ``rank_prio`` (0.5, env
``ASAPGRAPH_ASAP_RANK_PRIO``, at most 1; in ``--json``) x the ranks' mean ``sum(rl) / n`` of the last
wave, so the ranks that are behind work and the others wait for mass instead of sweeping
their part far below the global error on partial input (the edge work ASAP used to add
over BSP).  ``rl`` is recounted exactly (``sum |r| + |pools|``) whenever a message
arrived, and a gated rank does not sweep, so its ``rl`` only grows: the rank at or above
the mean in the last wave stays open, and some rank always works (see ``_gated`` for the
livelock this replaced).  The warm start, the extrapolation steps and the end game
(within 10x of the passivity target) push everything, with no gate.  Pushes only move mass, so the
fixed point, the termination and the bound are unchanged.

*NOTIFY-ACK and messages* (:mod:`.exchange`).  Flushing the buffer of peer ``q`` is one
``Isend`` of ``[header | payload]`` (the header carries the emulated delivery time, the
payload form, the push-sum pair, the pool shares owed to ``q`` and the sender's last
sweep duration); the receiver applies it and then sends a tiny ACK.  At most ``window``
un-ACKed messages per peer; while waiting the sender keeps computing and combining into
the buffer, except towards a peer whose sweep gate waited for this rank's output (the
sign of the header's sweep duration): there a held output goes out as soon as the ACK
is in, before the next sweep (:meth:`_Solve.flush_first`).  Values travel quantised
with error feedback (16-bit integers of a per-message step, a byte each where they fit
in +-127, :func:`.exchange.encode`;
Exp-Golomb coded with ``ASAPGRAPH_ASAP_QUANT=q16c``), the remainder staying in the
slot; to a peer on the same host without network emulation they go exact in float64
(:data:`EXACT_ON_HOST`: a memory copy there, where coding costs CPU and saves nothing).
Once the rank is out of work, remainders may stay only while the rank's residual plus
all of them is within its passivity target (they are residual, counted in the
bound; a message whose remainder would exceed that goes out exactly in float64), and in
the drain every buffer empties exactly; so the fixed point and the certified bound are
those of the float64 engine (measured figures: :mod:`.exchange`).

*Stochastic reduce* (:mod:`.reduce`).  In round ``t`` a rank flushes only to its
``fanout`` out-neighbours on the seeded rotating circulant expander of
:class:`.reduce.Schedule` (every peer served within ``2 ceil((K-1)/fanout)`` rounds; its
spectral gap is reported); beyond 8 ranks the fanout is raised so that every peer is
served within 8 rounds (:func:`wide_fanout`).  A push-sum pair ``(s, w)`` rides on the
data messages and estimates the global residual (used by the approximation knob).

*Exact termination* (:mod:`.termination`: counting waves, Mattern 1987).  A rank
contributes ``(sent, received, busy, dirty, capped)`` and its residual mass and ``sum x``
to a non-blocking ``Iallreduce`` when it is passive (no residual above the threshold,
buffers empty, all messages ACKed, no held delivery) or periodically while active (this
also yields the error-vs-time trace and the global residual ``R``).  The rule's
parameters here: two consecutive waves with every rank passive, ``dirty`` from the
message counters, and the bound of the earlier wave ``<= tol``; if all ranks are passive
but the bound is still above ``tol``, the push threshold is lowered (identically
everywhere).  There is no barrier and no blocking collective in the main loop.
``max_iter`` counts BSP's supersteps: it bounds the ranks' summed edge work to
:data:`WORK_FACTOR` x ``max_iter`` sweeps of the whole graph's edges (each wave sums the
ranks' work of the solve; a rank alone over it stops at once): once a wave shows it
reached, every rank stops sweeping and reports itself capped; after the next wave every
rank only flushes (the drain), and the run ends at the next two quiet waves with the
bound reached, reported as not converged (so a limit never leaves a message in flight).

*A round's cost* (issue 14 item 3).  Besides its sweep a round costs one compiled call
per message each way (:func:`._local.encode_segment`: the segment's mass, the form and
the payload straight into the send buffer; :func:`._local.decode_message`: the
scatter-add, returning the change of ``sum |acc|``), so the rank's residual sum ``rl``
is updated by its messages, not recounted (:meth:`_Solve.arrived`); a busy rank
contributes to a wave at each sweep's end (:meth:`_Solve.sweep_wave`) with its kept sums
and the remainders its flushes left, summing only the slot segments changed since their
flush (:meth:`_Solve._slot_mass`, charged); a passive one recounts in one fused pass,
:func:`._local.wave_sums`.  What remains is Python per message (the flush's per-peer
tests, header fields, the ACK, the ``Isend``, the polls: 23 us a message event -- a send,
an apply or an ACK arrival -- and 58 us a round, fitted over 4, 16 and 64 ranks in the
twenty-eighth session, against 2.5 us a message of BSP's exchange); measured in
``--json`` (``per_rank[].compute_calibration.round`` on the virtual clock) and in
benchmarks/REPORT.md.

*Approximation knob.*  With ``approx > 0`` a buffer whose mass is below
``approx x (estimated global residual) / out-peers`` waits while the rank still has
local work; it is flushed once the rank runs out of work, before termination.

References: Zhang et al., Maiter, IEEE TPDS 2014; Kempe, Dobra, Gehrke, "Gossip-based
computation of aggregate information", FOCS 2003 (push-sum); F. Mattern, "Algorithms for
distributed termination detection", Distributed Computing 2(3), 1987 (counting waves);
Boyd, Ghosh, Prabhakar, Shah, "Randomized gossip algorithms", IEEE TIT 2006 (spectral gap).
"""
from __future__ import annotations

import os
import time

import numpy as np

from asapgraph import options as _options
from asapgraph.kernels import _local
from asapgraph.kernels.tuning import PREFETCH_MIN_BYTES
from asapgraph.comm.mpi import mpi, oversubscribed, same_host_ranks
from asapgraph.engine import evtrace
from asapgraph.engine import exchange as ex
from asapgraph.engine.asap_delta import (PUSH_PF_DIST, SLOT_ORDER, DeltaState,
                                         exchange_slot_orders, pool_peers, push_layout)
from asapgraph.engine.emulation import now
from asapgraph.engine.evtrace import ev as _ev
# the single-process relabelling policy, shared with BSP's pull layout (imported with the
# engine, not inside a solve: its kernels' import was timed as compute)
from asapgraph.engine.pull import wants_reorder
from asapgraph.engine.reduce import Schedule
from asapgraph.engine.termination import DIRTY, EXTRA, RECV, SENT
from asapgraph.engine.vclock import make_waves, run_solve

__all__ = ["FORMS", "SCHEDULES", "DEFAULT_SCHEDULE", "WORK_FACTOR", "cut_edges", "push_rows",
           "work_figures"]

_FLT_MAX = float(np.finfo(np.float64).max)

#: waves in a row that saw no message and no decrease of the summed residual before the
#: passivity target is lowered 10x, as when every rank is passive above tol
#: (:meth:`_Solve._on_wave`)
NO_PROGRESS_WAVES = 3

#: local solver forms: ``jacobi`` (signed delta push, the default) and ``push`` (leaky
#: Gauss-Seidel residual push, normalised at the end)
FORMS = ("jacobi", "push")

#: what a ``jacobi`` sweep pushes: every block above the skip threshold (``sweep``), or
#: first the blocks of largest residual per unit of work holding ``ASAPGRAPH_ASAP_RHO``
#: of the mass (``priority``, :func:`._local.jacobi_push`); the default from measurements
#: (benchmarks/REPORT.md, issue 14), defined in :mod:`asapgraph.options` for ``--help``
SCHEDULES, DEFAULT_SCHEDULE = _options.SCHEDULES, _options.DEFAULT_SCHEDULE

# the solver's fields of a termination wave: residual mass (the bound's numerator), sum of
# x, pushed and produced signed mass (sum programs' extrapolation), signed residual, the
# ranks' local residuals (their sum: what the priority schedule's rank gate compares with),
# the ranks' edge work in this solve (its sum: what the work limit compares with)
_R, _SX, _F0, _F1, _SG, _RL, _W = range(EXTRA, EXTRA + 7)

#: the work limit of ASAP on ranks, in whole-graph sweeps per ``max_iter``: a solve stops
#: (drains, not converged) once the ranks' summed edge work reaches ``WORK_FACTOR x
#: max_iter x m`` (``m`` the edges of the whole graph), so ``max_iter`` counts BSP's
#: supersteps (one superstep scans every edge once) with room for the extra edge work of
#: the asynchronous schedule.  Why 8: ASAP's edge work to the same tol, over BSP's
#: (audit 31; a personalised-PageRank-like sum program at alpha 0.9 on undirected
#: graphs, 2 cores shared with other jobs, load average 5-18): p2p-Gnutella08, tol 1e-8
#: (BSP 89 supersteps), 2-4 ranks 1.7-2.5x, but 2 ranks 4.5-5.7x in 3 of 11 runs, and
#: 5-9.3x with another 2-rank run beside it; er:3000:6000, tol 1e-10 (BSP 83), 2 and 3
#: ranks 2.1-3.6x (the accumulative programs up to ~2.85x unloaded).  So a run that BSP
#: finishes within ``max_iter`` supersteps finishes within it in ASAP too, short of a
#: heavily oversubscribed host, while a run that does not converge still stops after
#: 8x BSP's work at that cap.  Until audit 31 the limit was ``max_iter`` sweeps of each
#: rank's *local* edges (about ``max_iter x m`` in all): such runs exited 3 in ASAP on
#: 2-4 ranks (p2p-Gnutella08 above with the default 100: "after 100 sweeps of edge work
#: per rank").
#: ``--json``: ``work_budget_edges`` (the applied limit), ``work_factor``.
WORK_FACTOR = _options.ASAP_WORK_FACTOR
_TRACE = bool(os.environ.get("ASAPGRAPH_TRACE_ASAP"))
_ENDGAME = 10.0  # priority schedule: off within this factor of the passivity target
_WAVE_INTERVAL = 0.005  # seconds between the periodic waves of an active rank (at least)
#: The sweep gate runs on dedicated cores (and the virtual clock) when more than this share
#: of the in-edges read ghosts: graphs without locality, whose share is about (K - 1) / K
#: on K ranks (rmat:20: 0.50 on 2, 0.75 on 4: the gate halves the edge work), not graphs
#: with it (cnr-2000: 0.016 on 4 ranks; 0.41 on 64, where the gate cost 3.6 %: 1.744 vs
#: 1.684 virtual s, model compute, rank 1 3x).
GATE_MIN_CUT = 0.45
#: ``(share, patience)``: where a link's delay (half its smallest round trip so far,
#: NOTIFY to ACK, :attr:`.exchange.NotifyAck.rtt_floor`) is at least ``share`` of the
#: sweep the gate counts in, the gate waits at most ``patience`` sweeps plus the link's
#: round trip (``rtt_floor``: a peer's output leaves after its sweep and arrives a delay
#: later, so a wait of a fraction of a sweep opened the gate before it came).  A rank locked
#: into taking turns with its peers waits a peer's sweep plus the delay each time; a wait
#: shorter than one sweep cannot sustain that.  Measured (rmat:20, 4 ranks, 1 ms,
#: 1 Gbit/s, virtual clock, model compute, seeds 1-5, with the byte-coded messages; the
#: gate's patience is 3 there): ASAP with ``start`` 2.40-2.54x static BSP with the 3x
#: straggler and 1.92-2.03x with speeds 1:1.5:2:3, against 1.82x / 1.45x (seed 1) with
#: patience 3, and 2.42-2.43x / 1.88-2.01x for the 16-bit messages before; patience 0.5
#: 1.86x / 1.72x, 1.0 2.43-2.50x / 1.86-1.99x, 1.5 2.26x / 1.76x (seed 1).  Unemulated
#: (2 ranks on 2 cores, rmat:20) the floor is 0.7-0.9 ms of 13 ms sweeps and the gate
#: keeps its patience (ASAP's edges stay 1.00x BSP's; capping it there cost 1.02-1.05x).
#: Not where ranks time-share cores on the host's clock (the gate takes turns on the
#: cores there by design, and a round trip includes the peer's wait for a time slice:
#: 4 ranks on 2 cores, rmat:20 unemulated, ASAP visited 1.9x BSP's edges with the cap).
#: On a real cluster the same measurement applies.  benchmarks/REPORT.md, thirteenth
#: session.
#: Twenty-second session: ``patience`` 0.8 sweeps without the round trip before.  On
#: 2 ranks whose start or a pause put them out of step, the gate opened on stale input
#: and the sweep recomputed what the last one had (rmat:14, 2 ranks, 1 ms, model compute:
#: 88 of 114 sweeps a rank, 0.0656 -> 0.0446 virtual s, 23 sweeps, with the round trip;
#: rmat:20, CPU-time compute: 12-21 sweeps to 12-15).  Issue 14's transient stragglers
#: (rmat:20, 4 ranks, seeds 1-15): 12 -> 15 of 15 seeds >= 1.5x BSP, median 2.01 -> 2.17x;
#: the persistent and heterogeneous cells (``--rebalance start``) did not change
#: (benchmarks/REPORT.md, twenty-second session, the lead).
GATE_DELAYED = (0.1, 1.0)
#: The ``jacobi`` sweep skips the 16-vertex blocks whose mean ``|r|`` is at most ``gamma x
#: R / n`` (``R`` the global residual of the last wave): ``(gamma without the sweep gate,
#: gamma with it)``.  Without the gate a rank sweeps again as soon as its last sweep ends,
#: and with ``gamma = 0.1`` its own mean residual sat 1.5-13x above the threshold when no
#: rank lagged: every sweep pushed 35-67 % of its edges and shrank its residual by only
#: 15-35 % (cnr-2000, 4 ranks, virtual clock, model compute).  A lagging rank raises ``R``
#: and with it the others' threshold (they then pushed 4-12 % of their edges per sweep),
#: so the run without a straggler did more edge work than with one (191 M vs 125 M edges)
#: and RQ5's speed-up rose from factor 1 to 2.  0.2 there: cnr-2000 (factors 1-8,
#: persistent and heterogeneous stragglers, static and rebalanced, transient pauses,
#: 16 ranks) and web-NotreDame (factors 1-8) as fast or faster (one cell 5 % slower) with
#: 10-30 % fewer edges (the priority schedule: neutral, within 4 %); on 64 ranks
#: (cnr-2000, 1:3) 5.8 % slower to the certified end (1.782 vs 1.684 virtual s).  Where
#: the gate waits (rmat:20, cit-HepPh, soc-Slashdot0902) 0.2 was mixed (13 % faster to
#: 16 % slower), so 0.1 stays there (benchmarks/REPORT.md, issue 15, ninth session).
SKIP_GAMMA = (0.2, 0.1)
#: Where the sweep gate runs, the skip threshold's ``R`` (the last completed wave's) is
#: scaled down by this rank's own progress when it lags: a rank contributes to a wave at
#: each sweep's end, and where that wave is still in flight when its next sweep starts,
#: ``R`` is the wave before's, a cycle old; it is then multiplied by the rank's residual
#: mass in its in-flight contribution over that in the completed wave's (if below 1: the
#: rank's own contraction over that cycle).  Why: with the gate the ranks sweep in
#: lockstep and a wave completes about once a cycle; a sweep that starts before the
#: cycle's wave has completed read an ``R`` ~3x (one cycle's contraction) above the
#: residual now and skipped blocks it should push.  Issue 14's heterogeneous cell
#: (rmat:20, 4 ranks, speeds 1-3, ``start``, seed 6): the waves' ``R / n`` was 2.2-2.6x
#: the rank's own mean residual at sweeps 6-9 (0.95-1.7x in seed 1), rank 0 skipped
#: 0.5-1.3 % of its edges there (seed 1: 0-0.03 %), the skipped low-degree blocks kept
#: their residual and the true L1 error stayed 1.45x seed 1's from then on: 1.04e-6 at
#: the wave where seed 1 had 7.3e-7, so 1e-6 came a wave (~14 ms) later (0.1837 s against
#: 0.1654).  Only where every in-peer's last sweep took from half to twice this rank's
#: (:data:`SWEEP_FLUSH_BALANCE`, the shorter of its last two sweeps), the lockstep it is
#: for: next to a static straggler 3-8x slower (RQ5, no rebalancing) a fast rank
#: contributes once per straggler's cycle, its own residual falls many-fold between two
#: contributions, and the full sweeps the scaling gave it delayed the answers the
#: straggler waits for (:data:`ANSWER_GATE`): ASAP +5 / +16 / +5 % at factors 3 / 5 / 8
#: unrestricted (capping the threshold by the rank's own mean residual instead: +10 / +5
#: / +7 %).  PageRank only (not measured on the sum programs), and not where ranks
#: time-share cores on the host's clock (not measured there; as :data:`GATE_DELAYED`).
#: Measured (4 ranks, 1 ms,
#: 1 Gbit/s, virtual clock, model compute, time to true L1 1e-6; benchmarks/REPORT.md,
#: trans27): rmat:20 heterogeneous ``start`` seeds 1-8 1.98-2.22x -> 2.13-2.23x static
#: BSP (seed 6 0.1837 -> 0.1708 s, mean 0.1677 -> 0.1673 s), persistent within
#: +-1 %; transient pauses (static) seeds 1-16 mean 0.2520 -> 0.2447 s (single seeds
#: move -26..+10 % as the pauses fall elsewhere); RQ5 rmat:20 factor 2 1.057x -> 1.216x, factors
#: 1, 3, 5, 8 unchanged; 8 ranks, speeds 1-3, ``start``: rmat:20 0.1691 -> 0.1558 s;
#: cnr-2000 (no gate) unchanged.  Env ``ASAPGRAPH_ASAP_SKIP_STALE=0``: off; ``--json`` per
#: rank ``skip_stale`` (false where it cannot apply) and ``skip_scaled`` (the sweeps whose
#: threshold it lowered).
SKIP_STALE = True
#: The ``sweep`` schedule's input wait (``jacobi`` form): a rank that has received nothing
#: since its last sweep does not sweep again while its residual ``rl`` is below this
#: fraction of its share ``n_r / n`` of the ranks' summed ``rl`` in the last wave (the
#: priority schedule's rank gate, far looser and only without new input).  Without it a
#: rank whose sweeps are much shorter than a message's delay solved its part of the graph
#: down to the passivity target again after every message: 1500 vertices, 2 ranks,
#: emulated latency 0.3 ms + jitter 1 ms, tol 1e-11, a forced migration to a 91/9 split
#: (tests/mpi/test_rebalance.py): 600-2300 sweeps' worth of edges on the large rank
#: (the 2000-sweep cap of the test hit under load) against 23-150 with 0.1 (0.3: the
#: same; 0.03: 160-1700).  On the benchmark graphs (virtual clock, model compute, 4 ranks,
#: 1 ms) rmat:20 is unchanged (its sweep gate always waits for fresh input) and cnr-2000
#: within the seeds' spread (persistent straggler with ``start``, seeds 1-2: 3.59-3.81x
#: BSP against 3.22-3.72x; heterogeneous 2.28-2.51x against 2.36-2.40x); 0.3 and 0.8 cost
#: cnr-2000 4-10 % (benchmarks/REPORT.md, thirteenth session).  Env
#: ``ASAPGRAPH_ASAP_IDLE_PRIO`` (0: off).  Livelock-free as the rank gate: some rank
#: always holds at least its share of the summed ``rl`` and stays open.
IDLE_PRIO = 0.1

#: The priority schedule's rank gate: a rank sweeps while its residual per owned vertex is
#: at least this x the ranks' mean of the last wave (``ASAPGRAPH_ASAP_RANK_PRIO``, at most
#: 1; reported as ``rank_prio`` in ``--json``; see ``_Solver.__init__`` for the measurements)
RANK_PRIO = 0.5

#: Over-relaxation of the ``jacobi`` PageRank Gauss-Seidel sweep (SOR, twenty-first
#: session): a pushed vertex moves ``omega r`` into ``x`` and its out-edges and keeps
#: ``(1 - omega) r`` (:func:`._local.jacobi_push`'s ``omega``).  Pushes only move mass, so
#: any ``omega`` keeps the fixed point, the certified bound and the termination; it only
#: changes how fast the residual shrinks.  Used on relabelled rows (a big graph whose
#: given order has no locality: rmat-like), on either clock, emulated or not: the
#: emulation must run the algorithm a real cluster would.  rmat:20, virtual clock, model
#: compute, 0.2 ms (the sweeps of an unemulated run in lockstep; the edges are what
#: counts): 2 ranks, sweeps to tol 1e-6 / 1e-10 16 / 25 (omega 1) -> 14 / - (1.05),
#: 13 / 21 (1.1), **12 / 19** (1.15), 13 / 21 (1.2), 17 / - (1.3); 4 ranks 18 / 26 ->
#: 16 / 23 (1.15).  Issue 14's emulated cells (4 ranks, 1 ms, 1 Gbit/s, model; seeds
#: 1-2): persistent 3x straggler 2.54x -> 3.09x static BSP, heterogeneous 2.06x -> 2.56x
#: (benchmarks/REPORT.md, twenty-first session, the lead).  Graphs swept in their given
#: order keep 1 (not measured to pay there).  A solve whose bound stops halving turns it
#: off (:meth:`_Solve._sor_guard`).  Env ``ASAPGRAPH_ASAP_OMEGA`` sets it (1: off).  The
#: sweep schedule only (a priority sweep pushes as before).
SOR_OMEGA = 1.15
#: the SOR guard: omega goes back to 1 for the rest of the solve when a wave's bound is
#: above half the bound this many waves earlier
SOR_GUARD_WAVES = 4

#: The ``jacobi`` PageRank form's passivity target follows the measured scale: after each
#: wave it is ``tfac x tol x beta x min(1/2, c |S|)`` with ``S = sum(x)`` of that wave
#: (every rank the same) and ``c`` this constant.  The certified bound is ``R / (beta
#: |S|)``; the target before, ``tol x beta / 2``, assumed ``|S| = 1``.  Where the
#: unnormalised ``x`` sums to far less (many dangling vertices: rmat:20's ``S`` settles at
#: 0.123), every rank turned passive with the bound at ~4x ``tol``; the settled wave then
#: *stalled*, the target fell 10x at once (``threshold_factor`` 0.1 in every rmat:20 run),
#: and the ranks swept on to ~1/5 of ``tol`` (bound 1.4-3.5e-7 at tol 1e-6) after an idle
#: gap of a few waves.  With ``c = 1`` a settled wave with every rank passive certifies
#: (``c = 0.5`` cost a sweep more: rmat:20, 2 ranks, 12 -> 13).  The target is only ever
#: lowered (``|S| >= 1/2``, e.g. cnr-2000's 0.56-0.63, keeps the target before: raising it
#: to ``tol beta |S|`` there gave the host's 4-rank runs more edges, 207 against 153 M at
#: 1e-10, though lockstep runs on the virtual clock did not change).  Virtual clock, model
#: compute, 0.2 ms, 5 GB/s (the unemulated runs in lockstep): rmat:20 4 ranks 284.7 ->
#: 251.2 M edges (1e-6), 402.2 -> 385.4 M (1e-10); 2 ranks unchanged.  Host, 4 ranks on
#: 2 cores, interleaved with main's target (n = 7, load 12-17): 0.89x -> 1.01x BSP's time
#: at 1e-6 (266 -> 241 M edges), 1.03x -> 1.10x at 1e-10 (benchmarks/REPORT.md,
#: twenty-second session).  ``|S|`` is floored at :data:`SCALE_FLOOR` (a transient ``S``
#: near 0 on a small graph under jitter must not make the target 0).  Env
#: ``ASAPGRAPH_ASAP_SCALED_TARGET`` sets ``c`` (0: off, the target before).  The
#: termination rule and the certified bound are unchanged; ``--json`` per rank
#: ``target_scale`` (the last ``min(1, |S|)`` seen).
SCALED_TARGET = 1.0
SCALE_FLOOR = 1e-3

#: The ``jacobi`` PageRank form's *stall guard*: a rank that has swept this many times
#: since the certified bound last halved (or the threshold was last lowered) switches to
#: sweeping at most once per input or per completed wave (:meth:`_Solve._waits_for_input`)
#: for the rest of the solve.  Power iteration halves the error every ~4.3 sweeps.
#: Why: the form's signed residual mass is conserved (``|G|`` has eigenvalue 1), so a
#: rank's net mass only vanishes where it meets its opposite.  A rank whose sweeps are far
#: shorter than its links' delay, sweeping again and again without input, exports all of
#: its net mass within one delay; two ranks holding ``+m`` and ``-m`` then swap them every
#: delay, and the mode decays only as fast as the little mass a delay leaves at home.
#: Measured on the virtual clock, compute model, 1 ms latency: the soak's 3-vertex graph
#: ``9 9 / 9 29 / 9 0`` (3 ranks, range partition, window 2) shrank its bound 3x per
#: virtual second and ended 100,000 sweeps at 9e-6 > tol 1e-6 (exit 3); rmat:10 on
#: 2 ranks (range) halved it every ~60 sweeps and hit the default cap of 1,000 sweeps at
#: 2.3e-8 > tol 1e-10, where BSP converges.  One sweep per input keeps a fixed share of
#: that mass at home each delay, so the mode decays geometrically (a lazy walk).  Env
#: ``ASAPGRAPH_ASAP_STALL_SWEEPS`` (0: off); ``--json`` per rank ``stall_sweeps`` (the
#: setting) and ``stall_guard_wave`` (the wave after which it fired; absent: it did not).
STALL_SWEEPS = 32
#: :meth:`_Solve.flush_first` sends a held output early only to waiting peers whose sweeps
#: take at least this fraction of this rank's: a peer's gate waits at most ``patience`` x
#: the shorter of its own sweep and its slowest in-peer's, so a much faster peer loses
#: little to a held output, and flushing the older output early to it split this rank's
#: output into more, smaller messages that made it sweep more often on partial input
#: (rmat:20, 2 ranks, rank 1 3x, virtual clock, model compute: 0.576 -> 0.740 s to L1
#: 1e-6 and 550 -> 680 M edges without this bound; 1:1.5 and 1:2 within 0.5 %).
#: The sweep gate's *answer rule* (twenty-third session): where the gate runs, a rank
#: whose in-peers sweep in at most this fraction of its own sweep (the shorter of its last
#: two, so one pause does not count) sweeps only once those peers have delivered output
#: that answers its latest output -- made by a sweep that began after applying it (each
#: header carries the count of the receiver's messages the sender had applied when its
#: last sweep began, :data:`.exchange.ANSWERS`; negative: "I wait for your answer") --
#: or after at most :data:`ANSWER_WAIT` of its own sweep (and at least the gate's usual
#: wait: two of the peers' sweeps plus round trips).  Its peers, told so by the sign,
#: keep combining their output to it until a sweep of theirs answers, and then send
#: nothing more for one of its sweeps, so the slow rank decodes one message per peer per
#: sweep (:meth:`_Solve._held`; out of work they flush as before).  Why: with a static
#: partition a heavy straggler bounds both modes, and without the rule its sweeps used
#: input that answered its last-but-one output (the fast peers' answers arrived during
#: its sweep), a lagged iteration: rmat:20, 4 ranks, 1 ms / 1 Gbit/s, rank 1 3x / 5x /
#: 8x slower, virtual clock, model compute: the straggler swept 27 / 33 / 30 times to
#: true L1 1e-6 (BSP: 16 supersteps) and ASAP was 0.83 / 0.59 / 0.60x BSP; with the rule
#: 16 / 17 / 19 sweeps and 1.16 / 0.92 / 0.69x (RQ5 monotone: 2.14, 1.46, 1.16, 0.92,
#: 0.69).  Inactive where no rank is 2.5x slower than its in-peers (factors 1 and 2,
#: issue 14's rebalanced cells, cnr-2000 whose gate is off): those runs are unchanged.
#: Not where ranks time-share cores on the host's clock (a rank descheduled for a while
#: is not a slow rank; as :data:`GATE_DELAYED`).
#: benchmarks/REPORT.md, twenty-third session.  Env ``ASAPGRAPH_ASAP_ANSWER`` (0: off),
#: ``ASAPGRAPH_ASAP_ANSWER_HOLD=0`` (the sender side off); ``--json`` per rank
#: ``answer_gate`` (the setting), ``answer_sweeps`` (sweeps under the rule),
#: ``answer_asks`` (messages that asked), ``answers_held`` (flush rounds a buffer waited).
ANSWER_GATE = 0.4
#: the answer rule's longest wait, in the rank's own sweeps (:data:`ANSWER_GATE`)
ANSWER_WAIT = 0.5

#: seconds an idle rank whose sweep gate is closed sleeps at once where ranks share cores
#: on the host's clock (before: it polled two more rounds, ~30 us of Python each, then
#: slept 60, 80, 100 us...: on 2 cores it took that CPU from the peer whose output it
#: waits for -- cnr-2000, 4 ranks, tol 1e-10: ~500 gate-closed rounds a rank, 15 of its
#: ~183 ms).  Interleaved A/B, 4 ranks on 2 cores (benchmarks/ab_trees.py, n = 7-9;
#: benchmarks/REPORT.md, twenty-fourth session), ASAP time / ranks' CPU with 2e-4 against
#: without: cnr-2000 1e-10 0.307 / 0.606 vs 0.327 / 0.646 s and 0.324 / 0.638 vs 0.389 /
#: 0.768, cnr-2000 1e-6 0.212 vs 0.208, rmat:20 1e-10 0.639 / 1.199 vs 0.662 / 1.276,
#: rmat:20 1e-6 0.462 / 0.899 vs 0.507 / 0.985 (1e-4 and 3e-4 between; 5e-4 worse on
#: cnr-2000).  Env ``ASAPGRAPH_ASAP_GATE_SLEEP`` (0: off; applied on the host's clock,
#: on any cores, when given); ``gate_sleep`` in ``--json`` per rank
GATE_SLEEP = 2e-4
FLUSH_FIRST_LEN = 0.5
#: Before a sweep, the last sweep's output still buffered for an out-peer whose window is
#: free goes out whatever the round's expander neighbours, where that peer has answered
#: this rank's latest output (:meth:`_Solve.flush_before_sweep`).  The expander serves a
#: peer within a few *rounds*, but a sweep between two rounds makes one last a sweep: a
#: buffer whose ACK came while the schedule skipped its peer (fanout 2 on 4 ranks: a peer
#: is left out of up to two rounds in a row) waited, combined, for the end of the next
#: sweep, and that peer's gate, waiting for it, timed out and swept on stale input, which
#: delayed its own output in turn (issue 14's heterogeneous cell, rmat:20, seed 5: 7
#: sweeps of the run began with an output of the last one unsent, none in seed 4; rank 3's
#: to rank 1 waited from 44.9 to 56.1 ms virtual, rank 1's gate timed out after 11.1 ms and
#: swept without it; at 72 ms its L1 error was 4x seed 4's).  Only to peers that answered:
#: sending every free buffer before the sweep (as :data:`FLUSH_FIRST_LEN` measured for
#: flush_first) split outputs into more messages and cost 9 % (seeds 4-5: 0.167 ->
#: 0.182 s).  Measured (4 ranks, 1 ms, 1 Gbit/s, virtual clock, model compute,
#: ``--rebalance start`` against static BSP; time to true L1 1e-6): rmat:20
#: heterogeneous seeds 1-8 1.79-2.22x -> 1.98-2.22x (seed 5 0.2036 -> 0.1659 s, mean
#: 0.1769 -> 0.1682 s), persistent the same times (2.74-2.78x); cnr-2000 seeds 1-3
#: heterogeneous 2.49-2.70x -> 2.66-2.80x, persistent 3.87-3.93x -> 3.84-4.18x.  Not a
#: win everywhere (the lead, same session; an output sent early fills the peer's window,
#: so the next one waits for its ACK): transient pauses, static, rmat:20 seeds 1-8, ASAP's
#: mean time +5.8 % uncapped, +2.7 % with the cap below (seed 2 0.371 -> 0.415 s, seeds
#: 3 and 7 faster), cnr-2000 the same; speeds 1-3 on the static partition,
#: ``compute_seconds`` to tol 1e-8 (uncapped): web-NotreDame +5-9 %, soc-Epinions1
#: +0-7 %, rmat:17 -2..-20 %; unemulated (2 and 4 ranks, rmat:20 and cnr-2000,
#: interleaved runs) within the noise.  On more ranks a round reaches few of the peers by
#: design (the expander's sparsity), and sending before the sweep to every peer that
#: answered added messages: 64 ranks,
#: rmat:20, rank 1 3x (``asapgraph bench --scenario scale --ranks 64``), ASAP 0.271 ->
#: 0.330 s (at most a round's fanout of peers, those sent to longest ago: 0.294 s); 8
#: ranks, speeds 1-3, ``start``: rmat:20 1.31x -> 1.38x but cnr-2000 2.28x -> 1.91x.  So
#: by default it is on where a round reaches at least half of the peers (``2 fanout >=
#: K - 1``: 2 and 3 ranks, 4 with fanout 2) and flushes to at most a round's fanout of
#: peers (benchmarks/REPORT.md, twenty-sixth session).  Env
#: ``ASAPGRAPH_ASAP_SWEEP_FLUSH``: 1 on at any K, 0 off; ``sweep_flush`` in ``--json``.
#: Last, only to peers whose last sweep took from half to twice this rank's
#: (:data:`SWEEP_FLUSH_BALANCE`): on the static partition with one rank 5x or 8x slower
#: (RQ5, ``asapgraph bench --scenario factors --clock virtual --compute model``) the
#: flush cost ASAP +14 % / +34 % on cnr-2000 and +15 % / +6 % on rmat:20 (a slow rank's
#: early output fills a fast peer's window; a fast rank's waits for a slow peer's ACK,
#: which comes after its long sweep); with the bound RQ5 is as without the flush
#: (cnr-2000 2.694, 2.303, 1.946, 1.432, 1.374x; rmat:20 1.915, 1.058, 1.027, 0.827,
#: 0.571x), rmat:20's transient cell too (seeds 1-8 to the bit), web-NotreDame at speeds
#: 1-3 static +0-3 % (was +5-9 %), soc-Epinions1 +3-5 %, and issue 14's heterogeneous
#: cells keep their gain.
SWEEP_FLUSH = True
SWEEP_FLUSH_BALANCE = 2.0
#: The ``jacobi`` PageRank sweep is Gauss-Seidel within the rank: a vertex pushes its
#: residual as the sweep snapshotted it plus what the vertices pushed before it in the same
#: sweep sent it (:func:`._local.jacobi_push`, ``gauss_seidel``), instead of leaving that
#: to the next sweep (Jacobi, as power iteration).  The same edges are visited; the local
#: part of the mass moves on a sweep earlier, so the sweeps needed fall where ranks run in
#: lockstep (the sweep gate: every sweep costs a network round trip).  The warm start stays
#: a Jacobi sweep (it computes ``r = G x0 - x0`` from the pushed ``x0``), the sum programs
#: keep the Jacobi sweep (their extrapolation step reads the snapshot).  Measured (rmat:20,
#: 4 ranks, 1 ms, 1 Gbit/s, virtual clock, model compute, seed 1, ``--rebalance start``):
#: 2.30x -> 2.57x static BSP with rank 1 3x slower, 1.93x -> 2.06x with speeds 1:1.5:2:3
#: (benchmarks/REPORT.md, seventeenth session).  Env ``ASAPGRAPH_ASAP_GS=0``: Jacobi.
GAUSS_SEIDEL = True
#: Values to a peer on the same host go out exact (float64, no quantisation) unless the
#: network is emulated or ``ASAPGRAPH_ASAP_QUANT`` is set: between ranks of one host a
#: message is a memory copy, and coding it costs CPU that no wire time pays back.
#: Measured (rmat:20, 2 ranks on 2 cores, unemulated, tol 1e-6, 3 runs each): the
#: byte-coded messages' encode and decode took 32-36 ms of each rank's ~230 ms run
#: (encode 5.3 ns, decode 1.8 ns a slot, 17 messages of 223 K slots), exact ones
#: 16-21 ms; the same edges either way.  Across hosts (ranks outside this rank's
#: shared-memory group, :func:`asapgraph.comm.mpi.same_host_ranks`) and on every emulated
#: link the coding stays.
EXACT_ON_HOST = True
#: The ``jacobi`` PageRank sweep's drift measurement (:meth:`.asap_delta.DeltaState._put_back`)
#: may err by at most this fraction of the rank's passivity target per sum, two per sweep
#: (over a run of 10^4 sweeps: a fifth of the target): below that its signed sums of ``acc`` are
#: taken plainly, fused with the sweep's own passes, instead of compensated (two extra
#: passes of 2Sum per sweep: 19 ms of a rank's ~290 ms on rmat:20, 2 ranks, and a
#: fifth of the sweep time on cnr-2000)
DRIFT_TOL = 1e-5


#: Out of work (or gated), a buffer with new contributions goes out 16-bit even where
#: its remainder would exceed the rank's passivity budget; the remainder then goes in the
#: next flush as a remainder-only buffer does (re-quantised to a step ~32767x finer, which
#: fits the budget, or exact), and the rank is not passive until it has.  Before, such a
#: message went out exact in float64: 8 bytes a slot against ~1.3 (rmat:20, 4 ranks, rank
#: 1 3x, virtual clock, model compute: the straggler's one such message per run, ~560 KB
#: to one fast peer at ~120 ms, took 4.5 ms of a 1 Gbit/s link and broke the sweeps'
#: lockstep just before the run reached L1 1e-6).  The certified bound and the fixed point
#: are unchanged (remainders are residual counted in the bound; the drain empties every
#: buffer exactly).  Env ``ASAPGRAPH_ASAP_QUANT_OUT=0``: exact as before.
#: benchmarks/REPORT.md, twentieth session.
QUANT_OUT_OF_WORK = True

#: Beyond :data:`WIDE_FANOUT_K` ranks a round flushes to enough expander neighbours that
#: every peer is served within :data:`WIDE_PERIOD` rounds (:func:`wide_fanout`:
#: ``ceil((K - 1) / 4)``, whatever the asked ``fanout``), the period fanout 2 gives on 8
#: ranks.  The expander serves every peer within ``2 ceil((K - 1) / fanout)`` rounds and a
#: rank runs only a few rounds per sweep (the sweep's, plus those that apply what arrived),
#: so with fanout 2 a sweep's output reached each of K - 1 peers only every ~(K - 1) / 4
#: sweeps and the peers swept stale input.  Measured (virtual clock, model compute, rank 1
#: 3x, 1 ms / 1 Gbit/s, seed 0; virtual seconds to L1 1e-6): 16 ranks, fanout 2 / 4 / 8 /
#: 15: rmat:20 0.244 / 0.186 / 0.164 / 0.157, cnr-2000 0.172 / 0.164 / 0.200 / 0.210 (its
#: messages carry a few slots each, so beyond 4 the extra messages cost more than the
#: fresher input saves); 64 ranks, fanout 2 / 8 / 16: rmat:20 0.445 / 0.329 / 0.305,
#: cnr-2000 1.148 / 0.762 / 0.702, with fewer messages in all (the runs end sooner; a
#: buffer combines what it gathers while its window is full, so a wider round sends
#: larger messages, not more per sweep).  benchmarks/REPORT.md, eighteenth session.
#: Env ``ASAPGRAPH_ASAP_WIDE_FANOUT_K``: the rank count beyond which it applies,
#: ``ASAPGRAPH_ASAP_WIDE_PERIOD``: the period; ``ASAPGRAPH_ASAP_WIDE_FANOUT=0``: off (the
#: asked fanout at every K).  ``--json`` reports the fanout used (``fanout``) and the
#: asked one (``fanout_asked``).
WIDE_PERIOD = 8
#: up to this many ranks the asked fanout stays (:data:`WIDE_PERIOD`)
WIDE_FANOUT_K = 8


def wide_fanout(K, fanout):
    """The expander's fanout of a round on ``K`` ranks: the asked ``fanout``, raised
    beyond :data:`WIDE_FANOUT_K` ranks to the least that serves every peer within
    :data:`WIDE_PERIOD` rounds, ``ceil((K - 1) / (WIDE_PERIOD / 2))`` (env
    ``ASAPGRAPH_ASAP_WIDE_FANOUT_K``, ``ASAPGRAPH_ASAP_WIDE_PERIOD``;
    ``ASAPGRAPH_ASAP_WIDE_FANOUT=0``: never raised)."""
    fanout = int(fanout)
    above = int(os.environ.get("ASAPGRAPH_ASAP_WIDE_FANOUT_K", str(WIDE_FANOUT_K)))
    if K <= max(above, 1) or os.environ.get("ASAPGRAPH_ASAP_WIDE_FANOUT", "1") == "0":
        return fanout
    half = max(int(os.environ.get("ASAPGRAPH_ASAP_WIDE_PERIOD", str(WIDE_PERIOD))) // 2, 1)
    return max(fanout, -(-(K - 1) // half))


def push_prefetch(lg):
    """The jacobi sweep's prefetch distance on ``lg``'s rows: when ``acc`` outgrows L2
    (env ``ASAPGRAPH_ASAP_PREFETCH``: the distance, 0 off)."""
    penv = os.environ.get("ASAPGRAPH_ASAP_PREFETCH")
    return (int(penv) if penv is not None
            else PUSH_PF_DIST if (lg.nloc + lg.nslots) * 8 > PREFETCH_MIN_BYTES else 0)


def push_relabels(comm, lg, form):
    """Whether the jacobi sweep runs on relabelled rows: env ``ASAPGRAPH_ASAP_REORDER=0/1``,
    else the single-process relabelling policy (collective; its answer kept on ``lg``)."""
    renv = os.environ.get("ASAPGRAPH_ASAP_REORDER")
    if form != "jacobi":
        return False
    if renv is not None:
        return renv == "1"
    rel = getattr(lg, "_push_relabels", None)
    if rel is None:
        rel = lg._push_relabels = bool(wants_reorder(comm, lg))
    return rel


def push_rows(comm, lg, form, prefetch=None, st=None, emu=None, virtual=None):
    """The jacobi sweep's relabelled rows of ``lg`` (:func:`.asap_delta.push_layout`),
    built when missing and kept on the graph; None when the sweep does not relabel.
    ``st``: the run's stats (the build's time and the layout are recorded); ``emu``: the
    build is charged like compute (virtual clock; a straggler's sleep on the host's) --
    None when it is built before the clocks start (:func:`asapgraph.engine.api.pagerank`,
    ``layout_before_clock``; then ``virtual`` says which clock the run is on).

    Each out-peer's slots are ordered by this rank's edges into them
    (:func:`.asap_delta.push_layout`'s ``slot_order``) on the host's clock only, where a
    sweep's time is the host's: the virtual clock's compute model charges a sweep by its
    edges and vertices, so the order cannot pay there, and the setup message that tells
    each receiver the order (:func:`.asap_delta.exchange_slot_orders`) is not charged; so
    the emulated cells keep their numbers to the bit.  Env ``ASAPGRAPH_ASAP_SLOT_ORDER=0/1``
    decides on either clock."""
    if not push_relabels(comm, lg, form):
        return None
    prefetch = push_prefetch(lg) if prefetch is None else prefetch
    virtual = emu.virtual if emu is not None else bool(virtual)
    senv = os.environ.get("ASAPGRAPH_ASAP_SLOT_ORDER")
    slot_order = (senv != "0") if senv is not None else (SLOT_ORDER and not virtual)
    P = getattr(lg, "_push_layout", None)
    if P is None or P.prefetch != prefetch or P.slot_ordered != slot_order:
        c0 = time.thread_time()
        P = lg._push_layout = push_layout(lg, prefetch, slot_order)
        if st is not None:
            st.extra["push_relabel_seconds"] = P.seconds
        if emu is not None:
            emu.layout(time.thread_time() - c0, lg.mloc, lg.nloc, "push_r")
    if st is not None:
        st.extra["push_relabelled"] = True
        st.extra["push_prefetch"] = P.prefetch
        st.extra["push_slot_order"] = P.slot_ordered  # (SLOT_ORDER)
    return P


def cut_edges(lg, emu=None):
    """The rank's edges into remote slots (the sweep gate's input), counted once and kept
    on the graph; a count made here is charged like compute (``emu``; None: before the
    clocks start, with the layout, :func:`asapgraph.engine.api.pagerank`)."""
    c = getattr(lg, "_cut_edges", None)
    if c is None:
        c0 = time.thread_time()
        c = lg._cut_edges = int(np.count_nonzero(np.asarray(lg.tgt) >= lg.nloc))
        if emu is not None:
            emu.layout(time.thread_time() - c0, lg.mloc, 0, "cut")
    return c


def work_figures(sol):
    """``--json``'s figures of the work limit of :class:`_Solver` ``sol``: the applied
    budget in edges (None: no limit) and :data:`WORK_FACTOR`."""
    budget = None if not np.isfinite(sol.max_work) else int(sol.max_work)
    return {"work_budget_edges": budget, "work_factor": WORK_FACTOR}


class _Solver:
    """The ASAP solver of one rank: its configuration (expander, window, knobs), kept
    across the solves of a run (:func:`.asap_pagerank.run_asap` may solve twice); see :meth:`solve`."""

    def __init__(self, comm, lg, alpha, emu, st, fanout, window, approx, seed, debug_mass,
                 form="jacobi", max_iter=None, schedule=None):
        MPI = mpi()
        # the knobs below, as the CLI checks them up front (the Python API did not): the
        # same environment on every rank, so every rank refuses alike, before any exchange
        _options.check_env()
        if form not in FORMS:
            raise ValueError(f"unknown ASAP form {form!r} (expected one of {', '.join(FORMS)})")
        if schedule is None:  # the default of the form (the push form has one schedule)
            schedule = DEFAULT_SCHEDULE if form == "jacobi" else "sweep"
        if schedule not in SCHEDULES:
            raise ValueError(f"unknown ASAP schedule {schedule!r} (expected one of "
                             f"{', '.join(SCHEDULES)})")
        if schedule == "priority" and form != "jacobi":
            raise ValueError("the priority schedule applies to the jacobi form")
        self.form, self.schedule = form, schedule
        # priority schedule: the share of the residual mass a sweep pushes first
        self.rho = (float(os.environ.get("ASAPGRAPH_ASAP_RHO", "0.8"))
                    if schedule == "priority" else 0.0)
        # ... and across ranks: a rank sweeps only while its residual per owned vertex is
        # at least `rank_prio` x the ranks' mean of the last wave (the ranks that are
        # behind -- a straggler -- work, the others wait for mass instead of solving
        # their own part far below the global error).  0.5 (nineteenth session; 0.8
        # before): with 0.8 a rank idled whenever its residual density fell below 0.8x
        # the mean, which on 2 ranks is most of the time, and on a graph with a small cut
        # (cnr-2000) the mass it waited for never came: 2 ranks unemulated, tol 1e-10,
        # 0.255 s against 0.471 s, the same edges; the emulated straggler cells (virtual
        # clock) 1.13-1.9x sooner; rmat:20, 2 ranks, tol 1e-10: 3.04e8 edges against
        # 3.09e8 (BSP 4.7e8; the 1.07e9 that 0.5 once cost came before the Gauss-Seidel
        # sweeps and the drift fix).  Above 1 the gate could close on every rank (see
        # `_Solve._gated`), so it is capped at 1
        self.rank_prio = (min(float(os.environ.get("ASAPGRAPH_ASAP_RANK_PRIO",
                                                   str(RANK_PRIO))), 1.0)
                          if schedule == "priority" else 0.0)
        # the sweep schedule's input wait (IDLE_PRIO)
        self.idle_prio = (float(os.environ.get("ASAPGRAPH_ASAP_IDLE_PRIO", str(IDLE_PRIO)))
                          if schedule != "priority" and form == "jacobi" else 0.0)
        # the jacobi PageRank sweep's Gauss-Seidel order within the rank (GAUSS_SEIDEL)
        self.gauss_seidel = (os.environ.get("ASAPGRAPH_ASAP_GS", "1" if GAUSS_SEIDEL else "0")
                             != "0")
        # the jacobi PageRank form's stall guard (STALL_SWEEPS; 0: off)
        self.stall_sweeps = int(os.environ.get("ASAPGRAPH_ASAP_STALL_SWEEPS",
                                               str(STALL_SWEEPS)))
        # the jacobi form's passivity target scaled by the measured sum(x) (SCALED_TARGET)
        self.scaled_target = float(os.environ.get("ASAPGRAPH_ASAP_SCALED_TARGET",
                                                  str(SCALED_TARGET)))
        # the work limit (WORK_FACTOR x max_iter sweeps of the whole graph's edges, summed
        # over the ranks by the waves; a rank alone over it stops at once)
        self.m_total = int(comm.allreduce(int(lg.mloc))) if comm.Get_size() > 1 else int(lg.mloc)
        self.max_work = (float(WORK_FACTOR) * float(max_iter) * max(self.m_total, 1)
                         if max_iter is not None else np.inf)
        self.MPI = MPI
        self.comm, self.lg, self.alpha, self.emu, self.st = comm, lg, alpha, emu, st
        self.K, self.me = comm.Get_size(), comm.Get_rank()
        self.window = max(1, int(window))
        self.approx = float(approx)
        self.debug_mass = debug_mass
        self.sched = Schedule(self.K, wide_fanout(self.K, fanout), seed)
        self.fanout_asked = int(fanout)
        self.mass_checks = 0
        self.gamma = float(os.environ.get("ASAPGRAPH_ASAP_GAMMA", "1.0"))
        self.prio = float(os.environ.get("ASAPGRAPH_ASAP_PRIO", "0.0"))
        self.block = int(os.environ.get("ASAPGRAPH_ASAP_BLOCK", "16"))
        self.degree_rule = os.environ.get("ASAPGRAPH_ASAP_DEGREE_RULE", "1") == "1"
        self.max_mass_error = 0.0
        # the sweep gate (jacobi form): only where ranks share cores -- there a sweep on
        # partial input takes CPU from a peer's sweep; on dedicated cores a rank that
        # waited for fresh input locked with its peers into taking turns (measured: two
        # ranks on two cores alternated their sweeps, 0.30 s vs 0.16 s without the gate).
        # How long to wait grows with the share of edges that cross ranks (the share of
        # a sweep's input that comes from peers): 4 x cut in [0.5, 3] -- measured best on
        # cnr-2000 (cut 0.016) near 0.5-1, on rmat:20 (cut 0.75) near 3, 4 ranks on 2 cores.
        # The virtual clock models a core per rank: off by default there too; with
        # ASAPGRAPH_ASAP_PATIENCE it runs in virtual time (issue 15, benchmarks/REPORT.md
        # "RQ5 on rmat:20": the rule's 3 on rmat:20 cut the no-straggler run's edge work
        # from 687 M to 302 M, but locked a 1.5x-slow rank and its peers into taking turns,
        # cost up to 13 % against a 4-8x straggler (seed 0) and 1-7 % on cnr-2000)
        env = os.environ.get("ASAPGRAPH_ASAP_PATIENCE")
        # ranks that share cores (collective): the gate below, and how long an idle rank
        # sleeps before it polls again (:meth:`_Solve.run`)
        self.shares_cores = oversubscribed(comm) if comm.Get_size() > 1 else False
        self.idle_cap = float(os.environ.get("ASAPGRAPH_ASAP_IDLE_CAP",
                                             "1e-3" if self.shares_cores else "1e-4"))
        if debug_mass and emu.virtual:
            raise ValueError("debug_mass does not run on the virtual clock (its snapshots "
                             "block outside the windows)")
        # Where much of a sweep's input comes from peers (cut share > GATE_MIN_CUT) the
        # gate runs on dedicated cores and the virtual clock too: a sweep on stale ghosts
        # there largely recomputes unchanged values (rmat:20, cut 0.75: 2 ranks on 2 cores
        # 0.55 s and BSP's 302M edges against 1.0-1.5 s and 737-887M without it; on the
        # virtual clock, 4 ranks, 3 seeds, with --rebalance start: 1.25x / 1.50x static BSP
        # against 0.68x / 0.78x, heterogeneous / persistent straggler); cnr-2000 (cut
        # 0.016) keeps sweeping at once (benchmarks/REPORT.md, issue 14, eighth session)
        # ranks time-sharing cores on the host's clock: there the gate takes turns on the
        # cores by design, and a round trip includes waiting for the peer's time slice
        self.gate_shared = not emu.virtual and self.shares_cores
        # an idle gated round's sleep on the host's clock (GATE_SLEEP: where ranks share
        # cores; env ASAPGRAPH_ASAP_GATE_SLEEP, 0 off, applied wherever given)
        genv = os.environ.get("ASAPGRAPH_ASAP_GATE_SLEEP")
        self.gate_sleep = (0.0 if emu.virtual else float(genv) if genv is not None
                           else GATE_SLEEP if self.shares_cores else 0.0)
        if env is not None:
            self.patience = float(env)
        elif form == "jacobi" and comm.Get_size() > 1:
            cut = np.array([cut_edges(lg, emu), len(lg.tgt)], dtype=np.float64)
            cut = comm.allreduce(cut)
            share = cut[0] / max(cut[1], 1.0)
            shared = not emu.virtual and self.shares_cores  # the modelled cluster has a
            # core per rank (see above)
            self.patience = (float(np.clip(4.0 * share, 0.5, 3.0))
                             if shared or share > GATE_MIN_CUT else 0.0)
        else:
            self.patience = 0.0
        # the jacobi sweep's skip threshold, x R / n (R the global residual of the last
        # wave): higher where no gate waits (see SKIP_GAMMA); env ASAPGRAPH_ASAP_JGAMMA
        jenv = os.environ.get("ASAPGRAPH_ASAP_JGAMMA")
        self.jgamma = (float(jenv) if jenv is not None
                       else SKIP_GAMMA[1] if self.patience > 0 else SKIP_GAMMA[0])
        # quantised payloads with error feedback: 16-bit integers of a per-message step,
        # byte-coded when smaller (q16b, the default: an int8 per slot, 1.6x fewer bytes),
        # dense/sparse only (q16), Exp-Golomb coded too (q16c: fewer bytes still, but its
        # CPU slowed rmat:20 to 1e-6 by a fifth: .exchange), float32, or off
        qenv = os.environ.get("ASAPGRAPH_ASAP_QUANT")
        self.qmode = "q16b" if qenv is None else qenv
        if self.qmode not in ex.QUANT:
            raise ValueError("ASAPGRAPH_ASAP_QUANT must be q16, q16b, q16c, f32 or off, not "
                             f"{self.qmode!r}")
        self.quant = ex.QUANT[self.qmode]
        # ... except to peers on this rank's host, unemulated (EXACT_ON_HOST): the ranks
        # of this host (collective), or None when every link is coded
        self.host_peers = (same_host_ranks(comm) if qenv is None and EXACT_ON_HOST
                           and not emu.cfg.network and self.K > 1 else None)
        # out of work, 16-bit remainders may stay in the slots within the rank's passivity
        # target (counted in the bound) instead of going out exactly in float64
        # (ASAPGRAPH_ASAP_REMAINDERS=0: every out-of-work flush exact, for A/B experiments)
        self.keep_remainders = os.environ.get("ASAPGRAPH_ASAP_REMAINDERS", "1") != "0"
        # ... and new contributions flushed out of work go 16-bit, their remainder after
        # (QUANT_OUT_OF_WORK; ASAPGRAPH_ASAP_QUANT_OUT=0: exact when it would exceed that)
        self.quant_out = (self.keep_remainders and os.environ.get(
            "ASAPGRAPH_ASAP_QUANT_OUT", "1" if QUANT_OUT_OF_WORK else "0") != "0")
        # a blocked output goes out before the next sweep to peers that wait
        # (:meth:`_Solve.flush_first`; ASAPGRAPH_ASAP_FLUSH_FIRST=0: off, for A/B)
        self.flush_first = os.environ.get("ASAPGRAPH_ASAP_FLUSH_FIRST", "1") != "0"
        # a sweep's output still buffered goes out before the next sweep, whatever the
        # expander's round (:meth:`_Solve.flush_before_sweep`; ASAPGRAPH_ASAP_SWEEP_FLUSH)
        # (unset: on where a round reaches at least half of the peers, SWEEP_FLUSH)
        sf = os.environ.get("ASAPGRAPH_ASAP_SWEEP_FLUSH")
        self.sweep_flush = (SWEEP_FLUSH and 2 * self.sched.k >= self.K - 1 if sf is None
                            else sf != "0")
        # the sweep gate's answer rule (ANSWER_GATE; ASAPGRAPH_ASAP_ANSWER: the fraction,
        # 0 off) and its sender side (ASAPGRAPH_ASAP_ANSWER_HOLD=0: off, for A/B)
        self.answer_gate = float(os.environ.get("ASAPGRAPH_ASAP_ANSWER", str(ANSWER_GATE)))
        self.answer_hold = os.environ.get("ASAPGRAPH_ASAP_ANSWER_HOLD", "1") != "0"
        # the skip threshold's R scaled by the rank's own progress where it lags a cycle
        # (SKIP_STALE, where the gate runs; ASAPGRAPH_ASAP_SKIP_STALE=0: off)
        self.skip_stale = os.environ.get("ASAPGRAPH_ASAP_SKIP_STALE",
                                         "1" if SKIP_STALE else "0") != "0"
        # jacobi sweep layout (issue 14, push cost per edge): the owned vertices relabelled
        # by degree, under the single-process relabelling policy (big graph, no locality
        # in the given order: rmat:20 yes, cnr-2000 no) or env ASAPGRAPH_ASAP_REORDER=0/1;
        # the rows' prefetch when acc outgrows L2, relabelled or not
        # (ASAPGRAPH_ASAP_PREFETCH: the distance, 0 off)
        self.prefetch = push_prefetch(lg)

    def push_layout(self):
        """The jacobi sweep's relabelled rows (:func:`push_rows`), built on first use and
        kept on the graph; None when not relabelling.  Collective on the first call
        (every rank's first PageRank solve).  A build here is charged like compute."""
        return push_rows(self.comm, self.lg, self.form, self.prefetch, self.st, self.emu)

    def solve(self, b, tol, relative, bdang=None, delta0=None, minmax=None, resume=None):
        """Solve until the certified bound is ``<= tol``; returns ``(x, bound, rounds)``.

        ``minmax`` (accumulative min/max programs, :mod:`.minmax_program`; ``jacobi`` form,
        ``b = 0``, ``tol = 0``): the local work, the slot buffers and the message payloads
        are ``minmax``'s (its ``sweep``, ``changed``, ``encode``, ``decode``, ``pending``);
        the round loop, NOTIFY-ACK, the schedule, the waves and the emulation are this
        solver's.  The bound is the number of improving deltas pending (0 at the end).

        ``delta0`` (accumulative sum programs, :mod:`.sum_program`; ``jacobi`` form with
        ``alpha = 1``, the program's coefficients folded into ``lg.coef``/``lg.vcoef``, no
        dangling vertices and ``b = 0``): start from ``x = 0, r = delta0`` with no pools;
        the bound is the pending mass ``sum |r| + |buffered|`` itself and ``x`` is returned
        unnormalised, with the residuals left in ``acc`` folded in.

        ``push`` form: residual push from ``r = (1-alpha) b``, dangling mass leaks;
        ``relative``: the bound is ``2E/sum(x)`` (for the normalised output), else ``E``.
        ``jacobi`` form: signed delta push of ``x = G x`` (``G`` the Google matrix with
        teleport ``b`` and dangling distribution ``bdang``) from ``x = 1/n``; nothing is
        absorbed, so the residual sum stays 0 and ``x / sum(x)`` is the answer; the bound
        is ``E / sum(x)``, ``E`` the residual L1 norm over ``(1 - alpha)``.
        """
        if (delta0 is not None or minmax is not None) and self.form != "jacobi":
            raise ValueError("programs run in the jacobi form")
        return _Solve(self, b, tol, relative, b if bdang is None else bdang, delta0,
                      minmax, resume).run()


class _Solve:
    """One :meth:`_Solver.solve`: its state, the local work, the flushes and the round loop."""

    def __init__(self, sol, b, tol, relative, bdang, delta0, mm, resume=None):
        self.sol, self.tol, self.relative, self.mm = sol, tol, relative, mm
        # dynamic load balancing (.rebalance): measures sweeps, may end the solve early
        self.bal = getattr(sol, "balancer", None)
        self.jac = jac = sol.form == "jacobi"
        self.prog = prog = delta0 is not None
        lg, st, comm = self.lg, self.st, self.comm = sol.lg, sol.st, sol.comm
        self.emu, self.me, self.K, self.alpha = sol.emu, sol.me, sol.K, sol.alpha
        self.e_start = st.edges_visited
        nloc = self.nloc = lg.nloc
        out_peers, self.seg_lo, self.seg_hi, in_peers, self.in_maps, Bq = pool_peers(
            comm, lg, sol.form, b, bdang)
        nout, nin = self.nout, self.nin = len(out_peers), len(in_peers)
        self.peer_index = {q: j for j, q in enumerate(out_peers)}
        # each out-peer's payload coding: the solver's, or exact float64 to a peer on
        # this host without network emulation (EXACT_ON_HOST)
        hp = sol.host_peers
        self.quant = [0 if hp is not None and int(q) in hp else sol.quant for q in out_peers]
        st.extra["exact_peers"] = sum(1 for q in self.quant if q == 0 and sol.quant != 0)
        # per out-peer buffer state: new contributions since the last send (dirty), float32
        # remainders left by the last send (rem); graph peers come first
        self.ngraph = len(lg.out_peers)
        self.dirty = np.zeros(nout, dtype=bool)
        self.rem = np.zeros(nout, dtype=bool)
        self.remm = np.zeros(nout)  # sum |remainder| of each rem buffer (16-bit)
        # values, residuals and slot buffers, pools (.asap_delta); jacobi: warm start
        d = self.d = DeltaState(sol, b, bdang, Bq, out_peers, delta0, mm is None, resume)
        self.kernel = "push_r" if d.P is not None else "push"  # what the compute model charges
        if d.P is not None and d.P.slot_ordered:  # the sweep's relabelled owned vertices:
            # where each slot lands, each in-peer's slots in its layout's order (one
            # setup message per peer pair; every rank's layout decided alike, push_rows)
            self.in_maps = exchange_slot_orders(comm, lg, d.P, self.in_maps)
        elif d.P is not None:
            self.in_maps = [d.P.old2new[mp] for mp in self.in_maps]
        if d.warm:
            self.dirty[:self.ngraph] = True
        acc, beta = d.acc, d.beta
        bnorm = 1.0 if prog else beta  # what the residual mass is divided by in the bound
        # passivity: the local residual sum is below this rank's share of a global target
        # small enough for the bound (sum(x) >= 1-alpha in relative mode); lowered 10x
        # (identically everywhere) whenever a wave shows it is not enough
        self.target = tol * beta * beta / 4.0 if (relative and not jac) else tol * bnorm / 2.0
        # tol = inf (a Katz whose adjacency is 0: error factor 0, engine_tol): a finite
        # target, for a rank owning no vertex (share 0) would compare with inf x 0 = NaN
        # and never turn passive (the run hung on 3 or more ranks)
        self.target = min(self.target, _FLT_MAX)
        self.share = nloc / max(lg.n, 1)
        self.tfac = 1.0
        sizes = [self.seg_hi[j] - self.seg_lo[j] for j in range(nout)]
        # push-sum pair for the global residual
        self.gs, self.gw = _local.abs_sum(acc, 0, nloc), 1.0
        self.r_prev = self.gs
        self.extra_ex = None
        if prog:
            from asapgraph.engine.sum_program import _Extrapolation

            self.extra_ex = _Extrapolation()
        # work limit (max_iter sweep-equivalents of this rank's edges, the warm start
        # included): a rank over it stops sweeping; once any rank is, every rank stops
        # after the same wave, flushes its buffers, and the run ends at the next quiet
        # waves with the bound it has (not converged)
        waves = dict(nextra=7, passive_waves=2, tol=tol, drain=True)
        self.over = self.work_capped = False  # (the work limit: this rank's, the waves')
        self.wv = make_waves(comm, self.emu, **waves)
        self.last_contrib = -1.0
        # this rank's residual mass in its last two wave contributions, and whether the
        # skip threshold follows it (SKIP_STALE: where the gate runs, not time-sharing
        # cores on the host's clock, PageRank)
        self.contrib_r = (0.0, 0.0)
        self.skip_stale = (sol.skip_stale and sol.patience > 0 and not sol.gate_shared
                           and self.jac and not prog and mm is None)
        self.rounds = 0
        self.approx_mark = -1  # the sweep count at the last flush (flush: approx)
        # initial total residual (b sums to 1); refreshed by every wave
        self.r_global = (comm.allreduce(_local.abs_sum(acc, 0, nloc))
                         if prog or resume is not None else beta)
        self.rl = _local.abs_sum(acc, 0, nloc) if mm is None else float(mm.pending())
        self.rin = 0.0  # change of the residual sum by the messages since the last round
        self.got = False  # a data message arrived since the last round (jacobi)
        self.passes = 0  # full passes over the rank's state outside sweeps (compute model)
        self.untimed = 0.0  # CPU seconds of measurement (the true-error trace), not charged
        # priority schedule: the sum of the ranks' `rl` of the last wave (the rank gate)
        self.rl_global = comm.allreduce(self.rl) if sol.rank_prio > 0 else 0.0
        self.fresh = np.zeros(nin, dtype=bool)
        self.n_fresh = 0  # (fresh.sum(), kept: the gate asks every round)
        self.peer_len = np.zeros(nin)  # each in-peer's last sweep duration (from its headers)
        # peer_len's changes counted, its least and largest entry, and _answer_mask's
        # last result with what it was computed from (the gate's predicates run every
        # round: numpy's reductions over a few in-peers cost ~1.5 us each, ~30 % of a
        # fast rank's round bookkeeping on issue 14's rmat:20 cell)
        self._pl_ver, self._pl_min, self._pl_max = 0, 0.0, 0.0
        self._am_key, self._am = None, None
        # each out-peer's sweep gate waited for this rank's output before its last sweep
        # (the sign of its headers' sweep duration), and the in-peers whose output this
        # rank's gate still missed when it last waited, since its last sweep / before it
        # (:meth:`flush_first`)
        self.peer_waits = np.zeros(nout, dtype=bool)
        self.out_len = np.zeros(nout)  # each out-peer's last sweep duration (its headers)
        self.wants_answer = np.zeros(nout, dtype=bool)  # its gate waits for an answer
        self.answered = np.full(nout, -1.0)  # its messages applied when this rank last sent
        self.answered_at = np.full(nout, -np.inf)  # ... and when
        self.waiting_for = np.zeros(nin, dtype=bool)
        self.waited_for = np.zeros(nin, dtype=bool)
        self.in_index = {int(q): i for i, q in enumerate(in_peers)}
        self.last_sweep_end, self.last_sweep_len = -np.inf, 0.0
        self.sweep_v0 = -np.inf  # the virtual clock's time the last sweep began at
        self.prev_sweep_len = 0.0  # the sweep before (ANSWER_GATE: persistently long)
        # ANSWER_GATE: per in-peer, its messages applied when this rank's last sweep began
        # (sent in the header), the count of this rank's messages to it so far, and whether
        # its latest message answers this rank's latest one
        self.seen = np.zeros(nin)
        self.out_mark = np.zeros(nin)
        self.current = np.zeros(nin, dtype=bool)
        self.in_ranks = np.asarray(in_peers, dtype=np.int64)
        self.swept_at = -np.inf
        self.contributed, self.wave_events = False, 0  # (the last _wave; see there)
        # the stall guard (STALL_SWEEPS): the bound it last halved from, this rank's sweeps
        # then, the wave of its last sweep, and whether the guard is on
        self.guardable = jac and not prog and mm is None and sol.stall_sweeps > 0
        self.best_bound, self.best_sweeps, self.swept_wave, self.lazy = np.inf, 0, -1, False
        # a settled wave's residual sum is within the global target (:meth:`within_target`)
        self.global_ok = False
        # over-relaxation of the Gauss-Seidel sweep (SOR_OMEGA) on relabelled rows;
        # every rank decides alike (the layout decision is collective)
        oenv = os.environ.get("ASAPGRAPH_ASAP_OMEGA")
        if oenv is not None:
            omega = float(oenv)
        else:
            omega = SOR_OMEGA if d.P is not None else 1.0
        d.omega = omega if (jac and not prog and mm is None and sol.rho == 0.0
                            and sol.gauss_seidel) else 1.0
        st.extra["sor_omega"] = d.omega
        self.sor_bounds = []  # the waves' bounds while SOR is on (_sor_guard)
        self.no_progress = 0  # consecutive waves without progress (NO_PROGRESS_WAVES)
        c_na = time.thread_time()  # (no blocking collective from here: Emulator.setup)
        self.na = ex.NotifyAck(comm, out_peers, sizes, in_peers, [len(mp) for mp in self.in_maps],
                               sol.window, self.emu, st, self._deliver)
        # the state's and the message buffers' setup, before the first sweep: charged
        # like compute (the virtual clock left it out: issue 15, K = 2, cnr-2000 ASAP
        # started its first sweep ~4 ms of CPU early)
        self.emu.setup(d.setup_cpu + time.thread_time() - c_na)
        _ev("I1")

    # ------------------------------------------------------------------ local work
    def _now(self):
        """The rank's clock: virtual, or the host's."""
        return self.emu.vt if self.emu.virtual else time.perf_counter()

    def _held(self):
        """ANSWER_GATE, sender side: the out-peers whose gate waits for this rank's answer
        to their latest output, which this rank's last sweep has not answered yet (it
        began before that output was applied): their buffer keeps combining until a
        sweep answers, so the slow peer decodes one message per sweep."""
        if not self.sol.answer_hold or not _any(self.wants_answer):
            return None
        h = np.zeros(self.nout, dtype=bool)
        rf = self.na.recv_from
        for k in np.flatnonzero(self.wants_answer):
            q = int(self.na.out_peers[k])
            i = self.in_index.get(q)
            if i is not None and (rf[q] > self.seen[i] or (
                    self.answered[k] >= rf[q]
                    and self._now() - self.answered_at[k] < self.out_len[k])):
                h[k] = True
        return h if h.any() else None

    def _answer_mask(self):
        """ANSWER_GATE: the in-peers whose answer to this rank's latest output the gate
        waits for (they answer within a fraction of this rank's sweep)."""
        if (not self.sol.answer_gate or self.sol.patience <= 0 or not self.nin
                or self.sol.gate_shared or self.prev_sweep_len <= 0):
            return None
        key = (self._pl_ver, self.last_sweep_len, self.prev_sweep_len)
        if key != self._am_key:  # (peer_len or the sweep lengths changed: recompute)
            own = min(self.last_sweep_len, self.prev_sweep_len)
            m = (self.peer_len > 0) & (self.peer_len <= self.sol.answer_gate * own)
            self._am_key, self._am = key, (m if m.any() else None)
        return self._am

    def _inputs_in(self):
        """The gate's input condition: every in-peer delivered since the last sweep, and
        those of :meth:`_answer_mask` with output that answers this rank's latest."""
        if self.n_fresh < self.nin:
            return False
        m = self._answer_mask()
        return m is None or bool(self.current[m].all())

    def _gate_wait(self):
        """The sweep gate's wait (seconds after the last sweep's end)."""
        m = self._answer_mask()
        if m is not None and not self.current[m].all():
            own = min(self.last_sweep_len, self.prev_sweep_len)
            rtt = [self.na.rtt_min[self.peer_index[int(q)]] for q in self.in_ranks[m]
                   if int(q) in self.peer_index]
            rtt = max(rtt) if rtt else np.inf
            return max(self._gate_wait0(), min(ANSWER_WAIT * own, 2.0 * (
                float(self.peer_len[m].max()) + rtt)))
        return self._gate_wait0()

    def _gate_wait0(self):
        """The sweep gate's wait (seconds after the last sweep's end)."""
        ref = self.last_sweep_len
        if self.nin and self._pl_min > 0:
            ref = min(ref, self._pl_max)
        pat = self.sol.patience
        floor = self.na.rtt_floor
        link = 0.0
        if (pat > GATE_DELAYED[1] and floor > 0.0 and not self.sol.gate_shared
                and 0.5 * floor >= GATE_DELAYED[0] * ref):
            # a delayed link: one sweep, plus the round trip the output takes to come
            # (GATE_DELAYED)
            pat, link = GATE_DELAYED[1], floor
        return max(pat * ref + link, 2e-4)

    def within_target(self):
        """Out of work by the residual: this rank's ``rl`` is within its share of the
        target, or the last settled wave (nothing in flight) measured the ranks' summed
        residual within the whole target.  The second matters where a rank cannot shrink
        its own residual: a vertex that is its own teleport target and dangling gets
        back all it pushes, and only the peers' (passive) residual of the opposite sign
        cancels it; that rank stayed busy for ever and no wave could end the run (the
        networkx backend on 2 ranks, a 3-node graph, found by a soak).  Local pushes
        never increase the summed ``|r|`` and a settled wave counts every message, so
        the sum stays within the target; a wave that finds the bound above tol after
        all lowers the target (``stalled``) and this turns false again."""
        return self.rl <= self.target * self.share or self.global_ok

    def gate_due(self):
        """When the sweep gate opens by patience (inf: it is open or no sweep is due)."""
        if (self.sol.patience <= 0 or (self.jac and not self.nin) or self._inputs_in()
                or self.within_target()):
            return np.inf
        return self.last_sweep_end + self._gate_wait()

    def _work(self, ev, t1, vnow=None):
        """This round's local work (when due); returns whether anything was pushed.
        ``vnow``: the virtual clock's time (the gate's clock there)."""
        sol, st, mm = self.sol, self.st, self.mm
        # gate (fewer, larger rounds): sweep once every in-peer has delivered since the
        # last sweep, or after `patience` sweeps (a slow or silent peer is not waited
        # for), so a sweep works on combined input; the wait is counted in sweeps of
        # this rank or of its slowest in-peer, whichever are shorter: a straggler
        # waits no longer than its peers take to answer
        ready = sol.patience <= 0 or (self.jac and not self.nin) or self._inputs_in()
        if not ready:
            ready = (t1 if vnow is None else vnow) - self.last_sweep_end >= self._gate_wait()
        if self.within_target() or not ready or self.wv.draining or self.over:
            if not ready:
                _ev("G", self._gate_wait())
                self.waiting_for[:] = ~self.fresh  # (the last check: what held it)
                self.gate_closed = True  # (GATE_SLEEP: an idle round sleeps at once)
            return 0
        if self._gated():
            return 0  # priority schedule: ranks with more residual per vertex go first
        if self._waits_for_input():
            st.extra["input_waits"] = st.extra.get("input_waits", 0) + 1
            return 0  # sweep schedule: nothing new, and far below its share
        if sol.sweep_flush and self.nout and self.flush_before_sweep():
            t1 = time.perf_counter()  # (the sweep starts after those messages' coding)
        self.sweep_v0 = self.emu.vt
        c0, e0 = time.thread_time(), st.edges_visited
        if self.nin:
            self.seen[:] = self.na.recv_from[self.in_ranks]
        if evtrace.DIR:
            _ev("S0", float(self.fresh.sum()), evtrace.now() - self.last_sweep_end)
        if sol.patience > 0 and self.nin and self._answer_mask() is not None:
            # the gate waited for answers to this rank's latest output (ANSWER_GATE)
            st.extra["answer_sweeps"] = st.extra.get("answer_sweeps", 0) + 1
        if sol.patience > 0 and self.nin and self.n_fresh < self.nin:
            # the gate opened by its patience: an in-peer's output had not arrived
            st.extra["gate_timeouts"] = st.extra.get("gate_timeouts", 0) + 1
        if self.nout and (self.dirty & self._waiting_peers() & ~self.na.full_mask()).any():
            # an output a waiting peer could have now goes after this sweep (flush_first)
            st.extra["held_for_waiting"] = st.extra.get("held_for_waiting", 0) + 1
        if mm is not None:
            pushed, nedge, self.rl = mm.sweep(self.dirty)
            st.edges_visited += nedge
        elif self.jac:
            self.rl = self.d.sweep(self._skip_theta(), full=self._endgame(),
                                   mass_tol=DRIFT_TOL * self.target * self.share)
            pushed = 1
        else:
            pushed, nedge, self.rl = self.d.push(ev, self.r_global)
            st.edges_visited += nedge
        if pushed and mm is None:
            self.dirty[:self.ngraph] = True
        tc = time.perf_counter() - t1
        st.extra["sweeps"] = st.extra.get("sweeps", 0) + 1
        st.compute_s += tc
        c0 = time.thread_time() - c0
        # (a sweep scans the rank's vertices and visits the edges of those it pushes)
        slept = self.emu.after_compute(c0, st.edges_visited - e0, self.nloc, self.kernel,
                                       snapshot=mm is not None or not self.jac
                                       or self.d.wrote_rs)
        if self.bal is not None:  # measured: the compute charged (CPU time, or the compute
            # model's) plus what the emulated host added
            self.bal.record(st.edges_visited - e0, self.emu.last_charged + slept)
        self.fresh[:] = False
        self.n_fresh = 0
        self.current[:] = False
        self.waited_for[:] = self.waiting_for
        self.waiting_for[:] = False
        _ev("S1", st.edges_visited - e0, slept)
        self.swept_wave = self.wv.waves
        self.swept_at = st.now()  # (the bench's true-error trace: when this state began)
        self.last_sweep_end = time.perf_counter()
        self.prev_sweep_len = self.last_sweep_len
        self.last_sweep_len = self.last_sweep_end - t1
        if vnow is not None:  # (the virtual clock sets last_sweep_len itself)
            self.last_sweep_end = self.emu.vt
        return pushed

    def _skip_theta(self):
        """The ``jacobi`` sweep's skip threshold (a block's mean ``|r|``): ``jgamma x R /
        n``, ``R`` the global residual of the last completed wave; where the sweep gate
        runs and the wave this rank contributed to after its last sweep is still in
        flight, ``R`` is scaled by this rank's own residual at that contribution over its
        residual at the one in the completed wave, if smaller, where the in-peers' sweeps
        take about as long as this rank's (PageRank; :data:`SKIP_STALE`)."""
        sol = self.sol
        theta = sol.jgamma * self.r_global / self.lg.n
        if (self.skip_stale and not self.wv.idle and self._balanced()):
            prev, last = self.contrib_r
            if 0.0 < last < prev:  # (--json: the sweeps whose threshold it lowered)
                self.st.extra["skip_scaled"] = self.st.extra.get("skip_scaled", 0) + 1
                theta *= last / prev
        return theta

    def _balanced(self):
        """Every in-peer's last sweep took from half to twice this rank's (the shorter of
        its last two: one pause does not count; :data:`SWEEP_FLUSH_BALANCE`)."""
        if not self.nin or self._pl_min <= 0 or self.prev_sweep_len <= 0:
            return False
        own, b = min(self.last_sweep_len, self.prev_sweep_len), SWEEP_FLUSH_BALANCE
        return self._pl_min >= own / b and self._pl_max <= own * b

    def arrived(self):
        """Take this round's messages into ``rl``: ``jacobi``, ``sum |r| + |pools|`` (a
        bound of the residual's L1 norm) changed by what the compiled decoder measured;
        ``push``, the (non-negative) mass that arrived; min/max, the improvements.  Where
        ``rl`` decides passivity (within 4x of the target) it is recounted exactly, so a
        rounding drift of the updates never makes a rank passive too early."""
        self.rl = max(self.rl + self.rin, 0.0)
        self.rin = 0.0
        if self.got and self.rl <= 4.0 * self.target * self.share:
            self.rl = (_local.abs_sum(self.d.acc, 0, self.nloc)
                       + float(np.abs(self.d.pend).sum()))
            self.passes += 1
        self.got = False

    def _gated(self):
        """Priority schedule: this rank's residual per vertex is below ``rank_prio`` x the
        mean of the ranks' ``rl`` in the last wave, so it waits (flushing its buffers
        exactly).

        Why the ranks' own ``rl`` and not ``R``: the gate must never close on every rank.
        In a wave, some rank ``q`` has ``rl_q >= share_q x sum(rl)``; a gated rank does no
        sweep, so its ``rl`` can only grow (messages), and ``q`` stays open until it
        sweeps -- progress.  Compared with ``R`` (which also counts slot buffers and pools
        owed to peers), and with ``rl`` underestimating the residual (a signed message
        added ``|sum v|``, not ``sum |v|``), every rank of a 3-rank emulated run closed its
        gate with nothing in flight: no sweep, the same ``R`` in every wave, a livelock
        (tests/mpi/test_dist_pagerank.py's straggler case, 300 s timeout)."""
        return (not self._endgame()
                and self.rl < self.sol.rank_prio * self.rl_global * self.share)

    def _waits_for_input(self):
        """Sweep schedule (:data:`IDLE_PRIO`): no in-peer has delivered since the last
        sweep and this rank's ``rl`` is below ``idle_prio`` x its share of the ranks'
        summed ``rl`` in the last wave, so another sweep would only solve its own part
        further below the global error; it waits for input (or the next wave).  Not in
        the end game, and never on a rank without in-peers or a min/max state."""
        sol = self.sol
        if self.nin == 0 or self.mm is not None or self.n_fresh:
            return False
        if self.lazy and self.swept_wave == self.wv.waves:
            return True  # the stall guard: one sweep per input or per completed wave
        return (sol.idle_prio > 0 and not self._endgame()
                and self.rl < sol.idle_prio * self.rl_global * self.share)

    def _endgame(self):
        """Within 10x of the passivity target the priority schedule is off (full sweeps,
        no gate).  Added when partial pushes near the end moved mass between the ranks
        without shrinking it (rmat:20, 2 ranks); that mass was most likely the rounding
        drift of the signed residual sum, which no schedule can push away and which
        :meth:`.asap_delta.DeltaState._recentre` now removes (the sweep schedule stalled
        on it too).  Kept: near the end a full sweep costs little more than a partial one."""
        return self.rl <= _ENDGAME * self.target * self.share

    # ------------------------------------------------------------------ messages
    def _deliver(self, j, buf, nbytes):
        """Apply in-peer ``j``'s message (:class:`.exchange.NotifyAck` ACKs it)."""
        f = ex.header(buf).tolist()
        mm = self.mm
        if mm is not None:  # improvements that arrived
            self.rin += abs(mm.decode(self.in_maps[j], buf, nbytes))
        else:  # the change of sum |r| (signed values cancel: not their sum)
            c_dec = time.thread_time()
            got, dabs = ex.decode(self.d.acc, self.in_maps[j], buf, nbytes)
            form = int(f[ex.FORM])
            if form >= ex.CODED:  # (the coders' own cost per value: a model's fit)
                self.emu.coder("decode_coded" if form == ex.CODED else "decode_bytecoded",
                               time.thread_time() - c_dec,
                               ex.coded_values_of(buf, nbytes, form))
            if self.jac:  # ... and of the pools' |.|
                pend = self.d.pend
                p0, p1 = float(pend[0]), float(pend[1])
                b, dd = f[ex.POOL_B], f[ex.POOL_D]
                pend[0], pend[1] = p0 + b, p1 + dd
                dabs += abs(p0 + b) - abs(p0) + abs(p1 + dd) - abs(p1)
                self.got = True
            self.rin += dabs if self.jac else got
        self.gs += f[ex.GOSSIP_S]
        self.gw += f[ex.GOSSIP_W]
        if not self.fresh[j]:
            self.fresh[j] = True
            self.n_fresh += 1
        a = f[ex.ANSWERS]  # (negative: the sender's gate waits for this rank's answer)
        if (-a - 1.0 if a < 0 else a) >= self.out_mark[j]:
            self.current[j] = True
        # (negative: the sender's sweep gate waited for this rank's output before that sweep)
        pl = abs(f[ex.SWEEP_LEN])
        if pl != self.peer_len[j]:
            self.peer_len[j] = pl
            self._pl_ver += 1
            self._pl_min, self._pl_max = float(self.peer_len.min()), float(self.peer_len.max())
        k = self.peer_index.get(int(self.na.in_peers[j]))
        if k is not None:
            self.peer_waits[k] = f[ex.SWEEP_LEN] < 0.0
            self.wants_answer[k] = a < 0.0
            self.out_len[k] = abs(f[ex.SWEEP_LEN])

    def flush(self, force, only=None, anyround=False):
        """Flush the buffers of this round's expander neighbours (window permitting);
        ``force``: the rank is out of work (or gated): exact float64, remainders too,
        except that 16-bit remainders within the rank's passivity budget may stay
        (:meth:`passive`; not in the drain), and new contributions go 16-bit whatever
        stays, their remainder in a later flush (:data:`QUANT_OUT_OF_WORK`).  ``only``: a
        mask of the out-peers to flush (default: every one)."""
        sol, na, mm, acc = self.sol, self.na, self.mm, self.d.acc
        dirty, rem, dbuf, nout, remm = self.dirty, self.rem, self.d.dbuf, self.nout, self.remm
        sent = 0
        if not nout or not (_any(dirty) or _any(dbuf) or (force and _any(rem))):
            return 0
        # out of work, 16-bit messages: what stays in the slots is residual like the
        # rank's own, counted in the bound; it may stay while the rank's residual plus
        # every remainder is within its passivity target (else exact float64)
        allow = None
        if (force and mm is None and sol.keep_remainders
                and sol.quant in (ex.QUANT["q16"], ex.QUANT["q16c"], ex.QUANT["q16b"])
                and not self._exact_only()):
            allow = self.target * self.share - self.rl
            if rem.any() and not dirty.any() and remm.sum() <= allow:
                if not dbuf.any():
                    return 0  # only remainders within the budget: they wait
        nb = (self.na.out_peers if anyround
              else sol.sched.neighbours(self.me, self.rounds))
        gs, gw = self.gs, self.gw
        r_est = max(self.K * gs / gw, 0.0) if gw > 0 else 0.0
        # the approximation knob holds small buffers only while the rank keeps sweeping
        # (a sweep since its last flush): in a round without one they go, so a rank that
        # waits for input never sits on the mass its peers wait for
        swept = False
        if sol.approx > 0 and not force:
            n_sw = self.st.extra.get("sweeps", 0)
            swept, self.approx_mark = n_sw != self.approx_mark, n_sw
        hold = None if force else self._held()
        am = self._answer_mask()  # (ANSWER_GATE: the in-peers whose answer is asked)
        for q in nb:
            j = self.peer_index.get(int(q))
            if j is None or na.full(j) or (only is not None and not only[j]):
                continue
            if hold is not None and hold[j]:
                if dirty[j]:
                    self.st.extra["answers_held"] = self.st.extra.get("answers_held", 0) + 1
                continue
            pooled = dbuf[j, 0] != 0.0 or dbuf[j, 1] != 0.0
            # a buffer holding only remainders waits for new mass (or the end)
            if not (dirty[j] or pooled or (force and rem[j])):
                continue
            budget = np.inf
            if allow is not None:
                # new contributions go 16-bit whatever stays (QUANT_OUT_OF_WORK): their
                # remainder follows, re-quantised to a finer step or exact, in the next
                # flush, and the rank is not passive meanwhile
                if not (dirty[j] and sol.quant_out):
                    budget = allow - (remm.sum() - remm[j])
                if not (dirty[j] or pooled) and remm.sum() <= allow:
                    continue  # remainders within the budget wait
            lo, hi = self.seg_lo[j], self.seg_hi[j]
            if mm is not None:
                if not mm.changed(lo, hi):
                    dirty[j] = False
                    continue
            elif sol.approx > 0 and not force:
                mass = _local.abs_sum(acc, lo, hi) + abs(dbuf[j, 0]) + abs(dbuf[j, 1])
                # a small buffer waits while the rank's own residual is at least its mass
                # (the rank has more local work than the buffer carries): the threshold
                # alone follows r_est, which counts the held mass itself, so a buffer
                # holding most of the residual waited for ever while the rank swept its
                # own shrinking residual (audit 27: email-Eu-core, 2 ranks, approx 0.5)
                if swept and mass < sol.approx * r_est / nout and mass <= self.rl:
                    continue
            buf = na.open(j)
            if mm is None:  # one compiled call: the segment's mass, the form, the payload
                quant = self.quant[j] if (allow is not None or not force) else 0
                c_enc = time.thread_time()
                nbytes, form, mass, left = ex.encode(acc, lo, hi, buf, quant, budget)
                if form >= ex.CODED:  # (the coders' own cost per value: a model's fit)
                    self.emu.coder("encode_coded" if form == ex.CODED
                                   else "encode_bytecoded", time.thread_time() - c_enc,
                                   ex.coded_values_of(buf, nbytes, form))
                if mass <= 0.0 and not pooled:  # nothing to send (the buffer is unused)
                    dirty[j] = rem[j] = False
                    remm[j] = 0.0
                    continue
                rem[j] = left > 0.0
                remm[j] = left
                if quant and form in (0, 1):  # 16-bit asked, exact float64 went (the
                    # remainder would have exceeded the budget: QUANT_OUT_OF_WORK)
                    self.st.extra["exact_fallbacks"] = (
                        self.st.extra.get("exact_fallbacks", 0) + 1)
            else:
                nbytes, form = mm.encode(lo, hi, buf)
            dirty[j] = False
            f = ex.header(buf)
            gs, gw = gs / 2.0, gw / 2.0  # push-sum: half of the pair travels
            f[ex.GOSSIP_S], f[ex.GOSSIP_W] = gs, gw
            f[ex.POOL_B], f[ex.POOL_D] = dbuf[j, 0], dbuf[j, 1]
            i = self.in_index.get(int(q))  # negative: this rank's gate waited for q's output
            f[ex.SWEEP_LEN] = (-self.last_sweep_len if i is not None and self.waited_for[i]
                               else self.last_sweep_len)
            if i is not None:
                ask = am is not None and am[i]
                f[ex.ANSWERS] = -self.seen[i] - 1.0 if ask else self.seen[i]
                if ask:
                    self.st.extra["answer_asks"] = self.st.extra.get("answer_asks", 0) + 1
                self.out_mark[i] = na.sent_to[int(q)] + 1
                self.answered[j] = na.recv_from[int(q)]
                self.answered_at[j] = self._now()
                self.current[i] = False
            dbuf[j] = 0.0
            na.send(j, buf, nbytes, form)
            sent += 1
        self.gs, self.gw = gs, gw
        return sent

    def flush_due(self):
        """A buffer holds new contributions or pool shares and its peer's window is free:
        it goes out within the expander's period of rounds (``Schedule``), so the loop
        keeps running rounds instead of waiting for the rank's next event (the host
        clock's loop: instead of sleeping).  On the virtual clock an idle rank's next
        round used to be its next arrival or wave, so a dirty buffer whose peer the
        round's schedule skipped waited for that, up to a sweep's length (rmat:20, 4
        ranks, rank 1 3x, --rebalance start, seed 1: every rank waited ~9 ms after each
        sweep for one peer's message; 0.140 virtual s to L1 1e-6 with this, 0.194 s
        without).  Over the bytes grid of the twelfth session (cnr-2000 and rmat:20,
        persistent and heterogeneous stragglers, static and rebalanced, seeds 1-3) it is
        neutral on average; single cells move by up to a third either way, as the sweep
        gate's phase locking (ranks taking turns) shifts.  Not with the approximation
        knob (a buffer below its threshold stays dirty)."""
        if not self.nout or self.sol.approx > 0:
            return False
        if not (_any(self.dirty) or _any(self.d.dbuf)):
            return False  # (the common case of an idle round, without the masks)
        want = self.dirty | self.d.dbuf.any(axis=1)
        if not self._out_of_work():
            hold = self._held()
            if hold is not None:
                want = want & ~hold
        return bool((want & (self.na.inflight < self.na.window)).any())

    def flush_first(self):
        """Before the round's local work: send to the out-peers whose sweep gate waited for
        this rank's output before their last sweep (so they likely wait for it now) what
        an earlier sweep left in their buffers, where the window has freed since.
        Returns the messages sent.

        A sweep's output goes out in the round that ends it unless the peer's window is
        full (window 1: the peer has not applied the previous message yet, which it does
        after its own sweep; an ACK that arrived during this rank's sweep is seen only by
        the next round's poll).  When that poll also brought fresh input, the rank used
        to sweep again first and send after, so the output reached the peer a whole sweep
        later; a peer gated on it idled meanwhile, and its own output then came late in
        turn: the ranks fell into taking turns (rmat:20, 2 ranks on 2 cores, the host's
        clock: the slow mode of the bimodal runs, benchmarks/REPORT.md, seventeenth
        session).  Only towards peers that wait for this rank's output (per recipient:
        the sign of the header's sweep duration) and whose sweeps are not much shorter
        (:data:`FLUSH_FIRST_LEN`): a peer that sweeps at once (a straggler whose input
        arrives during its long sweeps) gains nothing from the older output early and
        then gets the newer one later.  Sending to every peer first cost 3-18 % on issue
        14's 4-rank grid (virtual clock, model compute, seed 1); the rule moved its cells
        by -12.5 to +6.0 % over seeds 1-3 (means: persistent straggler static -0.5 %,
        rebalanced -1.5 %; heterogeneous static -1.2 %, rebalanced +0.2 %), cnr-2000's not
        at all (its gate never waits).  Off with ``ASAPGRAPH_ASAP_FLUSH_FIRST=0``."""
        if (not self.sol.flush_first or self.last_sweep_end == -np.inf
                or not _any(self.peer_waits)):
            return 0  # (the warm start's output goes with the first sweep's)
        only = self._waiting_peers()
        if not only.any() or not self.flush_due():
            return 0
        _ev("P", float(self.within_target()))
        sent = self.flush(self._out_of_work() or self._gated(), only=only)
        self.st.extra["flushed_first"] = self.st.extra.get("flushed_first", 0) + sent
        return sent

    def flush_before_sweep(self):
        """Right before a sweep (:data:`SWEEP_FLUSH`): send what the last sweep left in
        the buffers of the out-peers that have answered this rank's latest output (their
        latest message came from a sweep that began after applying it,
        :data:`.exchange.ANSWERS`), so their gate now waits for this rank's next output,
        where the window is free and their sweeps last about as long as this rank's
        (:data:`SWEEP_FLUSH_BALANCE`) -- whatever this round's expander neighbours, to at
        most a round's fanout of them (those this rank sent to longest ago).  Returns the
        messages sent."""
        dirty = self.dirty
        if not _any(dirty):
            return 0
        na = self.na
        # ... whose sweeps last about as long as this rank's (SWEEP_FLUSH_BALANCE)
        L, b = self.last_sweep_len, SWEEP_FLUSH_BALANCE
        only = dirty & ~na.full_mask() & (self.out_len >= L / b) & (self.out_len <= L * b)
        for k in np.flatnonzero(only):
            i = self.in_index.get(int(na.out_peers[k]))
            only[k] = i is not None and bool(self.current[i])
        cand = np.flatnonzero(only)
        if not len(cand):
            return 0
        cap = self.sol.sched.k  # no more peers than a round's (the expander's sparsity)
        if len(cand) > cap:  # those this rank sent to longest ago
            keep = cand[np.argsort(self.answered_at[cand], kind="stable")[:cap]]
            only[:] = False
            only[keep] = True
        _ev("B", float(only.sum()))
        sent = self.flush(False, only=only, anyround=True)
        self.st.extra["flushed_before_sweep"] = (
            self.st.extra.get("flushed_before_sweep", 0) + sent)
        return sent

    def _waiting_peers(self):
        """The out-peers :meth:`flush_first` sends to early (:data:`FLUSH_FIRST_LEN`)."""
        return self.peer_waits & (self.out_len >= FLUSH_FIRST_LEN * self.last_sweep_len)

    def _exact_only(self):
        """Buffers must empty exactly: the drain (a migration) or the work limit."""
        return self.wv.draining or self.over

    def passive(self, out_work):
        """Out of work with nothing to send: every message ACKed, no held delivery, no
        new contributions or pool shares buffered, and what stays in the slots is at
        most the 16-bit remainders within the rank's passivity target (they are residual,
        counted in the bound; none in the drain)."""
        na, d, nout = self.na, self.d, self.nout
        if not (out_work and na.acked() and not self.emu.queue):
            return False
        if not nout:
            return True
        rem = self.rem
        if _any(self.dirty) or _any(d.dbuf):
            return False
        acc, nloc = d.acc, self.nloc
        if not rem.any():
            return not acc[nloc:].any()
        if (self._exact_only() or self.mm is not None
                or (self.rl + self.remm.sum() > self.target * self.share
                    and not self.global_ok)):
            return False
        # (the last test runs only when all else holds)
        return not any(acc[self.seg_lo[j]:self.seg_hi[j]].any()
                       for j in range(nout) if not rem[j])

    def send_step(self, moved):
        """After the round's work: the push-sum pair follows the local residual when
        something ``moved`` (only the ``approx`` knob uses it), then the flush (all of it
        when out of work or gated).  Returns ``(messages sent, out of work)``.  Shared by
        the host-clock loop (:meth:`run`) and the virtual clock's rounds (.vclock)."""
        if self.sol.approx > 0 and moved:
            rloc = _local.abs_sum(self.d.acc, 0, self.nloc + self.lg.nslots)
            self.gs += rloc - self.r_prev
            self.r_prev = rloc
        out_work = self._out_of_work()
        return self.flush(out_work or self._gated()), out_work

    def _out_of_work(self):
        """No local work left to wait for: draining, over the work cap, or within target
        (then a flush sends everything)."""
        return self.wv.draining or self.over or self.within_target()

    # ------------------------------------------------------------------ termination
    def _wave(self, passive, tn, sweep_end=False):
        """Act on a wave that completed, then contribute to the next when due; True: stop
        now.  ``passive``: as the round left the rank (recounted after a wave, which may
        lower the target).  ``sweep_end``: right after a sweep (:meth:`sweep_wave`).
        ``wave_events`` counts the results seen and the contributions (the virtual
        clock's rounds reset it)."""
        self.contributed = False
        res = self.wv.test()
        if res is not None:
            self.wave_events += 1
            if self._on_wave(res):
                return True
            passive = passive and self.passive(self._out_of_work())
        self.contributed = self._contribute(passive, tn, sweep_end)
        self.wave_events += self.contributed
        return False

    def sweep_wave(self, tn):
        """Right after a sweep, before the round's flush: act on the wave that completed
        during the sweep and contribute to the next, busy; True: stop now.

        Why: a wave that completed while ranks swept was seen after their sweeps, and they
        contributed to the next only at their round's end, after coding their messages,
        so the next wave completed up to a cycle late (rmat:20, 4 ranks, rank 1 3x, seed
        3: waves 11.7 and 15 ms apart where a cycle is ~9 ms).  Here every rank
        contributes at each sweep's end, the state the error and the bound should be read
        at.  The mass the sweep pushed into the slot buffers is not summed (:meth:`_slot_mass`):
        it is leaving the rank, like the mass of messages in flight, which no busy wave
        counts either; a busy wave's sums only steer (the skip threshold, the input waits)
        and never end the run (every rank passive recounts exactly).  Summed, the pass
        over every slot cost each wave ~0.1 ms on a fast rank, ~0.3 ms on the 3x one."""
        return self._wave(False, tn, sweep_end=True)

    def _contribute(self, passive, tn, sweep_end=False):
        """Contribute to the next wave when due (at time ``tn``); True if it did.
        ``sweep_end``: right after a sweep, its output not summed (:meth:`sweep_wave`)."""
        wv, mm, d, prog = self.wv, self.mm, self.d, self.prog
        # periodic waves (trace, global residual) at most once per sweep: between
        # sweeps the residual hardly changes, and a wave costs a pass over the rank's
        # state (rmat:20, 4 ranks: ~1 ms, sweeps ~15 ms)
        if wv.idle and (passive or tn - self.last_contrib > max(_WAVE_INTERVAL,
                                                                 self.last_sweep_len)):
            # one compiled pass (a busy jacobi rank: its kept sums, the slots only)
            kept = not (passive or mm is not None or prog or not self.jac)
            if kept:  # the slot buffers: the flushes' remainders, the unflushed summed
                # (right after a sweep its output is leaving the rank -- except what the
                # approximation knob holds back, which stays: summed)
                slots, nsum = self._slot_mass(unflushed=not sweep_end or self.sol.approx > 0)
                racc, sx, signed = d.wave_sums(self.rl, slots)
            else:
                racc, sx, signed = d.wave_sums()
            # (the compute model charges the pass, a full one or over the slots summed,
            # before the wave's stamp; until the eighteenth session a busy rank's pass
            # over every slot went uncharged)
            self.passes += 1 if not kept else nsum / max(self.nloc, 1)
            if self.na.charge is not None:
                self.na.charge()
            if mm is not None:  # improving deltas pending, peers with unsent slots
                racc = float(mm.pending() + np.count_nonzero(self.dirty))
            wv.contribute(self.na.n_sent, self.na.n_recv, not passive, capped=self.over,
                          extra=(racc, sx, d.flow[0], d.flow[1],
                                 signed if prog else 0.0, self.rl,
                                 float(self.st.edges_visited - self.e_start)),
                          more=None if self.bal is None else self.bal.more())
            d.flow[:] = 0.0
            self.last_contrib = tn
            self.contrib_r = (self.contrib_r[1], float(racc))  # (SKIP_STALE)
            _ev("C", float(passive), float(sweep_end))
            _ev("M", float(racc), float(signed))
            return True
        return False

    def _slot_mass(self, unflushed=True):
        """``(sum |slot buffers|, slots summed)`` of a busy ``jacobi`` rank: the
        remainders its flushes left (``remm``: what the coder kept, exact) plus, with
        ``unflushed``, the segments changed since their last flush, summed.  After a
        round's flush most segments are clean, so a busy rank's wave contribution no
        longer passes over every slot (rmat:20, 4 ranks: 210-264 k slots a rank)."""
        acc, dirty, nsum, mass = self.d.acc, self.dirty, 0, 0.0
        for j in (np.flatnonzero(dirty) if unflushed else ()):
            lo, hi = int(self.seg_lo[j]), int(self.seg_hi[j])
            mass += _local.abs_sum(acc, lo, hi)
            nsum += hi - lo
        if self.nout:
            mass += float(self.remm[~dirty].sum())
        if self.sol.debug_mass and unflushed:  # (debug: the full pass agrees)
            full = _local.abs_sum(acc, self.nloc, len(acc))
            if abs(full - mass) > 1e-9 * full + 1e-300:
                raise AssertionError(f"slot mass {mass!r} != {full!r} (sum over the slots)")
        return mass, nsum

    def over_work(self):
        """Over the work limit: the ranks' summed edge work of a completed wave reached
        :attr:`_Solver.max_work` (every rank decides the same; the next contributions
        are capped, and that wave starts the drain), or this rank's own edge work did."""
        return self.work_capped or self.st.edges_visited - self.e_start >= self.sol.max_work

    def _on_wave(self, res):
        """Act on the completed wave ``res``; True: stop now."""
        wv, mm, d, st = self.wv, self.mm, self.d, self.st
        if res[_W] >= self.sol.max_work:  # (the same sums on every rank)
            self.work_capped = True
        jac, prog, beta = self.jac, self.prog, d.beta
        self.r_global = float(res[_R])
        self.rl_global = float(res[_RL])
        sx, tol = res[_SX], self.tol
        if self.relative and not jac and sx > 0:
            # the bound is 2 R / (beta S) with S = sum(x) (never decreasing): aim at
            # half of tol for the current S instead of the worst case S = beta
            self.target = max(self.target, self.tfac * 0.25 * tol * beta * float(sx))
        elif (jac and not prog and mm is None and self.sol.scaled_target > 0 and sx != 0
              and np.isfinite(sx)):
            # the bound is R / (beta |S|): c x tol at R = c tol beta |S|, where that is
            # below the target before (SCALED_TARGET)
            scale = min(1.0, max(abs(float(sx)), SCALE_FLOOR))
            self.target = min(self.tfac * tol * beta
                              * min(0.5, self.sol.scaled_target * scale), _FLT_MAX)
            st.extra["target_scale"] = scale  # (--json: the last wave's min(1, |S|))
        if prog or mm is not None:  # pending mass (sums) / pending improvements (min/max)
            cur = res[_R]
        elif jac:  # E / |sum(x)| bounds the error of x / sum(x), whatever the sign of
            # the scale sum(x): delays move it (a sweep that pushes its own residuals
            # before its peers' mass arrived changes it), and on small graphs under
            # emulated jitter it crossed 0 and ended at -0.2 to 0.6 -- where `sx > 0`
            # made the bound inf and the run never certified (a 3-vertex graph, window
            # 2: 5 of 6 runs).  Making the first sweep wait for the peers' warm start
            # mass kept the scale at 0.9-1.15 but cost more than it saved (virtual clock,
            # compute model, 4 ranks, cnr-2000 with a 3x straggler: 0.28 -> 0.34 s)
            cur = res[_R] / beta / abs(sx) if sx != 0 else np.inf
        else:
            cur = (2.0 * res[_R] / beta / sx if sx > 0 else np.inf) if self.relative \
                else res[_R] / beta
        _ev("W", wv.waves, cur)
        if self.me == 0:
            st.sample(cur)
        if sx != 0 and st.ref is not None:  # the bench's instrument: neither charged
            # (.vclock) nor timed (RankStats.now)
            self.untimed += st.track_error(d.result, 1.0 / sx, self.swept_at)
        last = wv.prev
        done = wv.decide(res, cur)
        if self.guardable and not self.lazy:
            self._stall_guard(cur)
        if self.bal is not None:  # every rank decides the same on the wave's sums
            self.bal.on_wave(wv, res, done)
        # no progress anywhere: no message since the last wave, every one delivered, and
        # the summed residual no smaller -- the busy ranks cannot shrink it alone (their
        # residual returns to them: see within_target), so the passive ones must work too
        idle = (mm is None and not done and last is not None and res[SENT] == res[RECV]
                and res[SENT] == last[SENT] and res[RECV] == last[RECV]
                and res[_R] >= last[_R] and res[_R] > 0.0)
        self.no_progress = self.no_progress + 1 if idle else 0
        if wv.stalled or self.no_progress >= NO_PROGRESS_WAVES:
            # every rank passive with the bound above tol, or no progress: lower the
            # threshold (every rank decides the same, on the same sums)
            self.target /= 10.0
            self.tfac /= 10.0
            self.no_progress = 0
            st.extra["no_progress_cuts"] = st.extra.get("no_progress_cuts", 0) + (not wv.stalled)
        # (every rank decides the same: the wave's sums and the same target)
        self.global_ok = bool(mm is None and res[SENT] == res[RECV] and res[DIRTY] == 0
                              and res[_R] <= self.target)
        if d.omega != 1.0 and not done:
            self._sor_guard(cur)
        if prog and not done and res[_F0] != 0.0:  # every rank decides the same
            lam = res[_F1] / res[_F0]
            d.relax = self.extra_ex.wave_factor(wv.waves, lam, res[_SG], res[_R])
            st.extra["extrapolations"] = self.extra_ex.steps
            if _TRACE and self.me == 0:
                _trace(f"[asap] wave {wv.waves} lam {lam:.4f} signed {res[_SG]:.3g} "
                       f"mass {res[_R]:.3g} relax {d.relax:.3f}")
        if prog and not np.isfinite(cur):  # diverged: stop now
            wv.drain()
        if self.sol.debug_mass and not done and wv.waves % 3 == 0:
            self.na.settle()  # debug: a blocking consistent snapshot
            d.check_mass(self.comm)
        return done

    def _sor_guard(self, cur):
        """Over-relaxation off (omega 1 for the rest of the solve) once a wave's bound
        is above half the bound :data:`SOR_GUARD_WAVES` waves earlier: SOR's rate is not
        guaranteed on every graph (the classical bound for these matrices is omega <
        2 / (1 + alpha)), and a solve that stops halving is better off without it.
        Every rank decides alike (the same global bound)."""
        h = self.sor_bounds
        h.append(cur)
        if len(h) > SOR_GUARD_WAVES and h[-1] > 0.5 * h[-1 - SOR_GUARD_WAVES]:
            self.d.omega = 1.0
            self.st.extra["sor_off_wave"] = self.wv.waves
            _ev("O", self.wv.waves, cur)

    def _stall_guard(self, cur):
        """Turn the stall guard on when this rank has swept :data:`STALL_SWEEPS` times
        since the bound last halved (or the threshold was lowered: a new phase)."""
        wv, n = self.wv, self.st.extra.get("sweeps", 0)
        if wv.stalled or wv.draining or cur <= 0.5 * self.best_bound:
            self.best_bound, self.best_sweeps = cur, n
        elif n - self.best_sweeps >= self.sol.stall_sweeps:
            self.lazy = True
            self.st.extra["stall_guard_wave"] = wv.waves

    # ------------------------------------------------------------------ the loop
    def run(self):
        """The round loop: poll, local work, flush, termination wave; returns
        ``(x, bound, rounds)``."""
        sol, st, emu, na, d, nloc = self.sol, self.st, self.emu, self.na, self.d, self.nloc
        acc = d.acc
        perf = time.perf_counter
        t_start = last_dbg = perf()
        t_ev = evtrace.start((lambda: emu.vt) if emu.virtual else None)
        idle = sent = 0
        done = False
        if emu.virtual:  # the same rounds in virtual time (.vclock)
            run_solve(self, _WAVE_INTERVAL)
            done = True
        while not done:
            self.rounds += 1
            t0 = perf()
            ev = na.poll()
            t1 = perf()
            st.comm_s += t1 - t0
            self.arrived()
            self.over = self.over_work()  # no more sweeps
            pre = self.flush_first()  # an earlier sweep's output whose window freed
            if pre:
                t1b = perf()
                st.comm_s += t1b - t1
                t1 = t1b
            n_sw = st.extra.get("sweeps", 0)
            self.gate_closed = False
            pushed = self._work(ev, t1)
            if st.extra.get("sweeps", 0) != n_sw and self.sweep_wave(perf()):
                break  # (a wave that completed during the sweep ended the run)
            t2 = perf()
            sent, out_work = self.send_step(ev or pushed or sent)
            t3 = perf()
            st.comm_s += t3 - t2
            # termination waves (non-blocking)
            passive = self.passive(out_work)
            tn = perf()
            done = self._wave(passive, tn)
            t4 = perf()
            st.comm_s += t4 - t3
            if _TRACE and tn - last_dbg > 2.0:
                last_dbg = tn
                wv = self.wv
                _trace(f"[asap r{self.me}] rounds {self.rounds} rl {self.rl:.3g} target "
                       f"{self.target * self.share:.3g} inflight {na.inflight.tolist()} "
                       f"queue {len(emu.queue)} sent {na.n_sent} recv {na.n_recv} obuf "
                       f"{bool(self.nout and acc[nloc:].any())} waves {wv.waves} wave "
                       f"{not wv.idle} prev {None if wv.prev is None else wv.prev.tolist()} "
                       f"r_global {self.r_global:.3g} gated {bool(self._gated())} endgame "
                       f"{bool(self._endgame())} tfac {self.tfac:g} dirty "
                       f"{self.dirty.tolist()} rem {self.rem.tolist()}")
            if not (ev or pushed or sent or pre or self.flush_due()):
                idle += 1
                gate = sol.gate_sleep if self.gate_closed else 0.0  # (GATE_SLEEP)
                if idle > 2 or gate > 0.0:
                    # at most 1 ms where ranks share cores (a poll takes CPU from the rank
                    # it waits for), 0.1 ms on cores of their own (a message seen up to
                    # 1 ms late delayed every exchange; env ASAPGRAPH_ASAP_IDLE_CAP)
                    dt = min(sol.idle_cap, max(2e-5 * idle, gate))
                    nd = emu.next_due()
                    nd = min(np.inf if nd is None else nd, self.wv.next_event())
                    if nd < np.inf:
                        dt = max(0.0, min(dt, nd - now()))
                    _ev("Z", dt)
                    # (a sleep even where the emulator holds the core for its waits: an
                    # idle rank that spun slowed its peer's sweeps 5-10 % on the quiet
                    # host, cnr-2000, 2 ranks; benchmarks/REPORT.md, nineteenth session)
                    time.sleep(dt)
                    _ev("z", dt)
                    st.wait_s += dt
            else:
                idle = 0
        _ev("E")
        evtrace.dump(self.me, t_ev, patience=sol.patience, gate_shared=sol.gate_shared,
                     idle_cap=sol.idle_cap)
        na.close()  # cancel the posted receives, complete every send, barrier
        if sol.debug_mass:
            d.check_mass(self.comm)
        st.rounds += self.rounds
        st.extra["waves"] = st.extra.get("waves", 0) + self.wv.waves
        st.extra["threshold_factor"] = self.tfac  # < 1: lowered by stalled waves
        st.extra["sweep_patience"] = sol.patience  # the sweep gate's (0: off)
        st.extra["skip_gamma"] = sol.jgamma  # the jacobi sweep's skip threshold factor
        st.extra["skip_stale"] = self.skip_stale  # (SKIP_STALE)
        st.extra["idle_prio"] = sol.idle_prio  # the sweep schedule's input wait (0: off)
        st.extra["answer_gate"] = sol.answer_gate  # the gate's answer rule (0: off)
        st.extra["gate_sleep"] = sol.gate_sleep  # an idle gated round's sleep (0: off)
        st.extra["sweep_flush"] = sol.sweep_flush  # SWEEP_FLUSH (ASAPGRAPH_ASAP_SWEEP_FLUSH)
        st.extra["answer_hold"] = sol.answer_hold  # ... and its sender side
        st.extra["rank_prio"] = sol.rank_prio  # the priority schedule's rank gate (0: off)
        if self.jac and not self.prog and self.mm is None:  # Gauss-Seidel sweeps (GAUSS_SEIDEL)
            st.extra["gauss_seidel"] = sol.gauss_seidel
        if self.jac and not self.prog and self.mm is None:
            st.extra["stall_sweeps"] = sol.stall_sweeps  # the stall guard's (0: off)
        st.extra["rtt_min_seconds"] = na.rtt_floor or None  # (None: no ACK arrived)
        # the message payloads (env ASAPGRAPH_ASAP_QUANT, ASAPGRAPH_ASAP_REMAINDERS)
        st.extra["message_quant"] = sol.qmode
        st.extra["keep_remainders"] = sol.keep_remainders
        if self.jac and not self.prog and self.mm is None:  # drift sums taken plainly
            st.extra["drift_plain_sums"] = st.extra.get("drift_plain_sums", 0) + d.plain_sums
            st.extra["drift_sums_over_tol"] = (st.extra.get("drift_sums_over_tol", 0)
                                               + d.sums_over_tol)
        st.extra["asap_seconds_solve"] = perf() - t_start
        if self.bal is not None and self.bal.pending is not None:
            sol.last_state = d.state()  # drained for a migration (.rebalance)
        x = d.result()
        if self.prog:
            x += acc[:nloc]  # the residuals left (their mass is in the bound)
        return x, self.wv.bound, self.rounds


def _any(a):
    """``a.any()`` of a small array (a per-peer mask or buffer) at a fifth of its cost:
    numpy's reduction machinery takes ~1 us a call, and the round's predicates make tens
    of such calls (NaN counts as nonzero in both)."""
    return _count_nonzero(a) != 0


_count_nonzero = np.count_nonzero


def _trace(msg):
    import sys

    print(msg, file=sys.stderr, flush=True)
