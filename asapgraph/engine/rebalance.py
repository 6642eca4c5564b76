"""Dynamic load balancing of PageRank on ranks: measured speeds, a speed-proportional
range split, and vertex migration in BSP and in ASAP (``--rebalance off|start|dynamic``).

Rationale
---------
With a static partition every vertex is owned by one rank, so a slow rank must sweep its
part as often as the others do: its speed caps BSP (every superstep waits for it) and
ASAP alike (benchmarks/REPORT.md, issue 14).  Moving vertices off the slow rank lifts the
cap (Mizan, EuroSys 2013; FlexRR, SoCC 2015).

*Measurement.*  Each rank counts, per local sweep, the edges it visited and the time the
sweep took: its thread CPU time plus what the (emulated) host added after it -- the
straggler sleep, pauses -- i.e. what a really slower host would show as CPU time.  Wall
time is not used: where ranks share cores (4 ranks on 2 here) it contains the time the OS
gave to other ranks, which is no property of the rank.  The straggler factor itself is
never read.  The sums ``(edges, seconds, sweeps, cost)`` of every rank travel as a K-slot
vector (each rank fills its slot, the sum is an allgather): on BSP's per-superstep
``Allreduce``, on ASAP's termination waves (a companion ``Iallreduce``), so every rank
receives the same numbers and takes the same decision without an extra collective.

*Decision* (:meth:`Balancer.decide`).  Once every rank has measured ``CALIBRATION``
sweeps since the last check, each rank's speed is taken in the partitioner's units:
with ``C_q`` the balance weight of its range (``alpha |V_q| + |E_q|``, ``alpha = 8 (K -
1)``, as :mod:`asapgraph.partition.partitioners`), ``s_q = C_q x (full sweeps) /
seconds`` (ASAP sweeps skip blocks: full sweeps = edges visited / local edges).  Per
edge alone, the speeds of equal hosts differed 2x on cnr-2000 (the per-vertex work,
~24 units per vertex against ~10 edges, is what the weight counts).  ``dynamic``
averages the speeds over checks (weight 1/2).  The predicted time of a full sweep is
``max C_q / s_q`` against ``sum C / sum s`` for the speed-proportional split; if it is
more than ``THRESHOLD`` (15 %) longer, the bounds are recomputed so that rank ``q`` gets
the share ``s_q / sum s`` of the total weight (:func:`.partitioners.range_bounds` with
``fractions``) and the rows migrate (:func:`asapgraph.partition.migrate.migrate`).
*Before the run* (``start``, and ``dynamic``'s first split).  On a fresh load the hosts
are probed before the graph is partitioned (:func:`probe_speeds`: two timed sweeps of a
fixed random graph per rank, one ``allgather``) and, by the same 15 % rule, the loader
splits the ranges in proportion to the probed speeds: nothing migrates.  Measured on
cnr-2000, 4 ranks, rank 1 3x, the earlier way -- calibrate on the partitioned graph, then
migrate -- spent a third of ASAP's run before its first sweep (0.08 of 0.24 virtual
seconds: three full sweeps at the straggler's speed, the rows moved and the local graph
rebuilt at its speed too).  A graph loaded once (``ad.load``) is already partitioned:
there ``start`` measures ``CALIBRATION`` sample sweeps of the loaded graph (one full sweep
in all, :func:`calibrate`) and migrates before the run (BSP then builds its pull layout
once, ASAP needs no drain).  ``dynamic`` then measures the run's own sweeps and checks
again every ``CALIBRATION x 2^m`` sweeps of the slowest rank after ``m`` migrations, and
migrates only if the time the new split saves over as many sweeps as were done so far
exceeds what the last migration cost (a migration costs tens of sweeps: measured speeds
per weight unit still differ by data, and without the rule ``dynamic`` migrated 3-7
times per run).

*Migration points* (``dynamic``; ``start`` migrates before the run).  BSP: between supersteps, after the ``Allreduce``: ``x`` is the whole
state, so the run resumes from the migrated ``x`` exactly (same iterates as without the
migration, up to summation order; the pull layout is rebuilt, its time counted).

ASAP has no barrier in its main loop, so a migration is a *coordinated drain*: the wave
on whose sums the ranks decide to migrate starts the drain of :mod:`.termination` on
every rank (the same wave everywhere): ranks stop sweeping and only flush, exactly
(float64), until a settled wave at least two waves later (sent == received, no rank busy
or dirty: nothing in flight, every slot buffer and pool share delivered and ACKed --
Mattern's counting argument, the same that makes termination sound).  Then each rank's
state is ``x`` and ``r`` of its owned vertices only, with the pool mass it received
spread on its vertices as its next sweep would (:meth:`.asap_delta.DeltaState.state`);
both vectors migrate with their rows, the solver is rebuilt on the new local graph and
the solve resumes from ``(x, r)`` (``resume=``).  So no contribution is in flight across
a migration (nothing to forward), none is lost and none counted twice: ``sum r`` (0 for
the Jacobi form) and ``sum x`` are the same before and after (checked at every
migration, reported as ``mass_error``; ``debug_mass`` checks them on snapshots inside
every solve too).  If the drain's last wave already certifies ``tol`` the run ends there.
The cost of a migration is the drain (a few waves: a few latencies) plus the exchange of
the rows and the rebuild (``seconds`` per migration in ``--json``).

*Forced migrations* (tests): env ``ASAPGRAPH_REBALANCE_FORCE=SEED`` replaces the decision:
migrations happen at supersteps (BSP) or waves (ASAP) drawn from ``SEED`` (2 of 1..3; ASAP: counted in the current solve) to
bounds drawn from it (random speed shares), with ``--rebalance start`` or ``dynamic``.

*Virtual clock* (``--clock virtual``, :mod:`.vclock`: a core per rank on a shared host).
The measured seconds are the virtual ones (CPU time x factor); the probe is charged as
sweeps are, then one collective; a migration starts after the drained solve ended (or
between supersteps) and costs each rank its work -- CPU time outside MPI calls
(:class:`asapgraph.comm.mpi.MeteredComm`: a blocking collective spins while it waits
for others), times its factor -- plus a modelled collective of the most bytes any rank
sends over one link; BSP's pull layout of the new rows is built inside the migration and
charged the same way.  On the host's clock the probe and migrations take their real
time (a straggler sleeps its factor's extra, as after a sweep).

Scope: PageRank on ranks with the range partition, BSP and ASAP's ``jacobi`` form.  The vertex programs (sum and min/max programs, the general engine) keep
their partition: their ``ProgramGraph`` has no migration yet (refused up front by
:data:`asapgraph.options.RULES`).
"""
from __future__ import annotations

import os
import time

import numpy as np

from asapgraph import options as _options
from asapgraph.comm.mpi import mpi
from asapgraph.engine.termination import CAPPED

__all__ = ["MODES", "Balancer", "asap_shares", "split_cost", "probe_speeds",
           "run_bsp_rebalanced", "run_asap_rebalanced"]

MODES = _options.REBALANCE_MODES
#: predicted slowdown of the current split over the speed-proportional one that is worth
#: a migration
THRESHOLD = 0.15
#: sweeps every rank measures before a decision (``start``) and between checks (``dynamic``)
CALIBRATION = 3
#: ``calibrate`` on a small partition: a rank repeats its pass of sample sweeps (at most
#: ``MAX_CALIBRATION_PASSES``) until it measured this long, and keeps its fastest pass
#: (a pass over rmat:14 on 3 ranks takes ~0.1 ms: one page fault or interrupt in it made a
#: fast rank look 2x slow)
MIN_CALIBRATION_S, MAX_CALIBRATION_PASSES = 2e-3, 8
#: predicted cost of a migration per local edge of the largest rank (move, rebuild and
#: BSP's pull layout: ~160 ns per edge measured on rmat:20, ~70 without the layout), the
#: bar a first run-time migration after the probed split must clear
MIGRATION_NS_PER_EDGE = 100.0
#: the vertex block of ASAP's push kernel (its default, ``ASAPGRAPH_ASAP_BLOCK``)
BLOCK = 16
FORCE_ENV = "ASAPGRAPH_REBALANCE_FORCE"


class Balancer:
    """One rank's side of the load balancer (see the module docstring).

    ``record`` after every local sweep; ``vector`` / ``more`` what this rank contributes
    to the next reduction; ``decide`` on the reduced sums (the same on every rank); while
    ``pending`` is set the engine stops at its next migration point and the caller runs
    :meth:`migrate`.
    """

    def __init__(self, comm, mode, lg, asap=False):
        if mode not in MODES:
            raise ValueError(f"rebalance must be one of {', '.join(MODES)}, got {mode!r}")
        self.comm, self.mode = comm, mode
        self.K, self.me = comm.Get_size(), comm.Get_rank()
        self.win = np.zeros(3)        # full sweeps, seconds, sweeps since the last check
        self.sent = np.zeros(3)       # the window in the last contribution
        self.speed = None             # per-rank speeds (moving average)
        self.pending = None           # fractions of the decided split
        self.done = False
        self.checks = 0
        self.imbalance = []           # predicted slowdown at each check
        self.swept = 0.0              # sweeps of the slowest rank over the checked windows
        self.migrations = []          # one record per migration
        self.probe = None             # probe_speeds' figures when the loader split by them
        self.asap = asap              # the engine is ASAP: its split (asap_shares)
        self.set_graph(lg)
        env = os.environ.get(FORCE_ENV)
        self.force = None
        if env is not None and mode != "off":
            rng = np.random.default_rng([int(env), 0x4EBA1])
            self.force = rng
            self.force_at = sorted(int(v) for v in rng.choice(np.arange(1, 4), 2, replace=False))

    def set_graph(self, lg):
        alpha = 8.0 * (self.K - 1) if self.K > 1 else 1.0
        self.cost = alpha * lg.nloc + lg.mloc
        self.mloc = lg.mloc

    @property
    def size(self):
        return 5 * self.K

    def record(self, edges, seconds, full=None):
        """One local sweep: ``edges`` visited in ``seconds`` (CPU + emulated slowness);
        ``full``: the fraction of a full sweep it was (default ``edges`` over the local
        out-edges: ASAP's partial sweeps; a BSP superstep passes 1 -- it sweeps in-edges,
        whose count is not the out-edges the balance weight counts)."""
        if full is None:
            full = edges / self.mloc if self.mloc else 1.0
        self.win += (full, seconds, 1.0)

    def vector(self):
        """This rank's slots of the reduced vector: ``(full sweeps, seconds, sweeps, cost,
        local edges)``."""
        v = np.zeros(self.size)
        self.sent = self.win.copy()
        v[self.me::self.K] = (*self.sent, self.cost, self.mloc)
        return v

    def more(self):
        """The companion reduction of an ASAP wave (:meth:`.termination.Waves.contribute`)."""
        return {"rebalance": (self.vector(), "sum")}

    def decide(self, step, summed):
        """Decide on the reduced vector of supersteps / wave ``step``; True: migrate now."""
        if self.pending is not None or self.done or self.mode == "off" or summed is None:
            return False
        if self.force is not None:
            if self.force_at and step >= self.force_at[0]:
                self.force_at.pop(0)
                self.pending = self.force.dirichlet(np.ones(self.K))
                return True
            return False
        F, S, N, C, M = np.asarray(summed).reshape(5, self.K)
        # dynamic: the interval doubles with every migration (no thrashing on noise)
        if N.min() < CALIBRATION * 2 ** len(self.migrations) or not (S > 0).all():
            return False
        self.win -= self.sent     # a new window (what was recorded since stays)
        # full-sweep equivalents per second (ASAP sweeps skip blocks: edges / local edges)
        # times the rank's balance weight: its speed in the partitioner's units, which
        # counts the per-vertex work a per-edge speed would ignore (alpha = 8 (K-1) per
        # vertex against ~10 edges per vertex on cnr-2000)
        full = F
        new = C * full / S
        self.speed = new if self.speed is None else 0.5 * self.speed + 0.5 * new
        sp = self.speed
        slow, t_now, t_bal = slowdown(C, sp)
        self.swept += float(full.min())
        self.checks += 1
        self.imbalance.append(slow)
        if self.mode == "start":
            self.done = True
        # worth it: after a first migration, the time it saves over as many sweeps as
        # were done so far (a run is as likely to be before its middle as after) must
        # exceed what the last migration cost
        if self.migrations:
            cost = self.migrations[-1]["seconds"]
        elif self.probe is not None:  # the loader split by the probe: a first migration
            cost = MIGRATION_NS_PER_EDGE * 1e-9 * float(M.max())  # must pay for itself too
        else:
            cost = 0.0
        if slow > THRESHOLD and (t_now - t_bal) * self.swept > cost:
            self.pending = sp / sp.sum()
            if self.asap:  # ASAP's split (asap_shares)
                self.pending = asap_shares(self.pending, self.K)
            return True
        return False

    def cancel(self):
        """A work limit was reached: no migration, no further checks."""
        self.pending, self.done = None, True

    def on_wave(self, wv, res, done):
        """ASAP: act on a completed wave (its sums ``res``, the decision ``done``)."""
        if res[CAPPED] > 0 or (done and wv.converged):
            if self.pending is not None or res[CAPPED] > 0:
                self.cancel()
            return
        if not done and not wv.draining and self.decide(wv.waves, wv.reduced.get("rebalance")):
            wv.drain()  # the coordinated migration point: every rank, this wave

    def migrate(self, lg, part, vecs, step, st=None, emu=None):
        """Re-split by the pending fractions and move the rows and ``vecs`` (the last one
        is the benchmark's reference, ``st.ref``: moved, not counted); collective.
        Returns ``(lg, part, vecs)``.  The migration's work is charged as compute: its
        CPU time outside MPI calls (:class:`.comm.mpi.MeteredComm`), times the straggler
        factor (:meth:`.emulation.Emulator.after_compute`; on the host's clock a straggler
        sleeps it); on the virtual clock the exchange then costs a collective of the
        most bytes any rank sends over one link (every pair has its own link, as for the
        engines' messages)."""
        from asapgraph.comm.mpi import MeteredComm
        from asapgraph.partition.migrate import migrate
        from asapgraph.partition.partitioners import range_bounds

        MPI = mpi()
        K, me = self.K, self.me
        comm = MeteredComm(self.comm)
        t0, c0 = time.perf_counter(), time.thread_time()
        frac, self.pending = self.pending, None
        alpha = 8.0 * (K - 1) if K > 1 else 1.0
        cost = alpha + np.diff(np.asarray(lg.indptr)).astype(np.float64)
        bounds = range_bounds(cost, int(part.bounds[me]), lg.n, K, comm, frac)
        before = _sums(comm, vecs)
        old = np.diff(part.bounds)
        if np.array_equal(bounds, part.bounds):
            new, newpart, out, fig = lg, part, list(vecs), {
                "moved_vertices": 0, "moved_edges": 0, "bytes": 0, "link_bytes": 0}
        else:
            new, newpart, out, fig = migrate(comm, lg, part, bounds, vecs, untimed=1)
        if st is not None:  # the migration's traffic counts as the run's
            st.bytes_sent += fig["bytes"]
            st.extra["migration_bytes"] = st.extra.get("migration_bytes", 0) + fig["bytes"]
        after = _sums(comm, out)
        err = float(np.max(np.abs(after - before) / np.maximum(1.0, np.abs(before)),
                           initial=0.0))
        moved = comm.allreduce(np.array([fig["moved_vertices"], fig["moved_edges"],
                                          fig["bytes"]]), op=MPI.SUM)
        link = comm.allreduce(fig["link_bytes"], op=MPI.MAX)
        work = max(time.thread_time() - c0 - comm.cpu, 0.0)
        if emu is not None:
            emu.after_compute(work)
            emu.collective(self.comm, link)
        secs = self.comm.allreduce(time.perf_counter() - t0, op=MPI.MAX)
        self.migrations.append({
            "step": int(step), "shares": [round(float(f), 4) for f in frac],
            "vertices_before": old.tolist(), "vertices_after": np.diff(bounds).tolist(),
            "moved_vertices": int(moved[0]), "moved_edges": int(moved[1]),
            "bytes": int(moved[2]), "link_bytes": int(link),
            "work_seconds": self.comm.allreduce(work, op=MPI.MAX),
            "seconds": secs, "mass_error": err})
        self.set_graph(new)
        self.win[:] = 0.0
        return new, newpart, out

    def figures(self):
        """The ``rebalance`` entry of the run's figures."""
        return {"mode": self.mode, "checks": self.checks,
                "calibration_seconds": getattr(self, "calibration_seconds", None),
                "imbalance": [round(v, 4) for v in self.imbalance],
                "speeds": None if self.speed is None else [float(v) for v in self.speed],
                "probe": None if self.probe is None else {
                    "speeds": self.probe["speeds"], "imbalance": self.probe["imbalance"],
                    "shares": None if self.probe["shares"] is None else
                    [round(float(f), 4) for f in self.probe["shares"]]},
                "split_cost": split_cost(self.K) if self.asap else None,
                "migrations": self.migrations, "forced": self.force is not None,
                "migration_seconds": float(sum(m["seconds"] for m in self.migrations))}


def _sums(comm, vecs):
    """Global sums of the per-vertex vectors (compensated locally); collective."""
    from asapgraph.kernels import _local

    loc = np.array([_local.exact_sum(np.ascontiguousarray(v, dtype=np.float64), 0, len(v))
                    if v is not None else 0.0 for v in vecs])
    return comm.allreduce(loc, op=mpi().SUM)


def slowdown(cost, speeds):
    """``(slow, t_now, t_bal)``: the predicted time of a full sweep of the current split
    (``max cost_q / s_q``) against the speed-proportional split's (``sum cost / sum s``),
    and the relative excess ``slow = t_now / t_bal - 1`` that the 15 % rule reads."""
    t_now, t_bal = float((cost / speeds).max()), float(cost.sum() / speeds.sum())
    return t_now / t_bal - 1.0, t_now, t_bal


def _timed_sweeps(emu, indptr, tgt, coef, vcoef, dangling, nslots, residuals):
    """Sweeps of the ASAP push kernel over scratch state, one per entry of ``residuals``
    (the starting residual of each owned vertex), timed and charged as the engines'
    sweeps are (:meth:`.emulation.Emulator.after_compute`: CPU time or the compute model,
    times the straggler factor, plus pauses); yields ``(edges, cpu, charged)`` per sweep.
    The pages are touched first: no page faults inside the timed sweeps."""
    from asapgraph.kernels import _local

    n = len(vcoef)
    x, rs, zero = np.zeros(n), np.zeros(n), np.zeros(n)
    acc = np.zeros(n + nslots)
    act = np.zeros(-(-n // BLOCK), dtype=np.int32)
    bsum = np.zeros(len(act))
    for a in (x, rs, zero, acc, bsum):
        a.fill(0.0)
    for r in residuals:
        acc[:n] = r
        c0 = time.thread_time()
        e = _local.jacobi_push(indptr, tgt, coef, vcoef, x, acc, rs, act, bsum, dangling,
                               0.85, 0.0, zero, 0.0, zero, 0.0, BLOCK)[0]
        cpu = time.thread_time() - c0
        slept = emu.after_compute(cpu, e, n, "push")  # charged as an ASAP sweep
        yield e, cpu, emu.last_charged + slept


def calibrate(comm, lg, part, vecs, emu, st, bal, sweeps=CALIBRATION):
    """``start``: measure every rank's speed on ``sweeps`` sample sweeps of scratch state
    (the ASAP push kernel over the rank's own rows, no messages; sample ``k`` pushes the
    blocks ``b`` with ``b % sweeps == k``, so together they are one full sweep spread
    evenly over the range), timed and charged like the engines' sweeps, decide on one
    ``Allreduce`` and migrate before the run; returns ``(lg, part, vecs)``.  Collective.

    Why before the run and not on its first supersteps: a migration rebuilds the local
    graph and, for BSP, the pull layout (~160 ns per local edge in all, ~40 sweeps'
    worth on rmat:20): done before the engine starts, BSP builds its layout once and
    ASAP needs no drain; the price is one sweep's work (three full sweeps before
    2026-12-05: 20 % of a 3x straggler's ASAP run on cnr-2000) that does not advance the
    solution; a partition that sweeps in under ``MIN_CALIBRATION_S`` repeats it, at most
    ``MAX_CALIBRATION_PASSES`` times, and its fastest pass counts.  ``dynamic`` measures the
    run's own sweeps instead."""
    nloc = lg.nloc
    sample = np.arange(nloc) // BLOCK % sweeps
    # every sweeps-th block has a residual: the samples together are one full sweep
    t0 = time.perf_counter()
    passes, total = [], 0.0
    while not passes or (total < MIN_CALIBRATION_S and len(passes) < MAX_CALIBRATION_PASSES):
        swept = []
        for e, cpu, took in _timed_sweeps(emu, lg.indptr, lg.tgt, lg.coef, lg.vcoef,
                                          lg.dangling, lg.nslots,
                                          [np.where(sample == k, 1.0 / lg.n, 0.0)
                                           for k in range(sweeps)]):
            st.compute_s += cpu
            swept.append((e, took))
        passes.append(swept)
        total += sum(t for _, t in swept)
    for e, took in min(passes, key=lambda sw: sum(t for _, t in sw)):  # the fastest pass
        bal.record(e, took)
    summed = comm.allreduce(bal.vector(), op=mpi().SUM)
    emu.collective(comm, 8 * bal.size)
    go = bal.decide(0, summed)
    bal.done = bal.mode == "start"
    bal.calibration_seconds = comm.allreduce(time.perf_counter() - t0, op=mpi().MAX)
    if not go:
        return lg, part, vecs
    return bal.migrate(lg, part, vecs, 0, st, emu)


#: ASAP's split by speeds (:func:`asap_shares`): a rank's sweep cycle costs, besides its
#: sweep of its range, a part that does not shrink with the range, as a fraction of a full
#: sweep of the whole graph: ``ASAP_FIXED_COST`` (env ``ASAPGRAPH_ASAP_FIXED_COST``: the
#: coding of its remote slots, about as many whatever it owns) plus ``ASAP_PEER_COST`` per
#: peer (env ``ASAPGRAPH_ASAP_PEER_COST``: a message and its ACK each way).  Both 0: the
#: speed-proportional split, as BSP.  Measured values (see :func:`asap_shares`).
ASAP_FIXED_COST = 0.015
ASAP_PEER_COST = 0.005
#: ... and no rank gets less than this fraction of its speed-proportional share
ASAP_MIN_SHARE = 0.25


def split_cost(K):
    """The fixed part of an ASAP rank's sweep cycle :func:`asap_shares` splits by, as a
    fraction of a full sweep of the graph: ``{"fixed", "per_peer", "phi"}`` with ``phi =
    fixed + per_peer x (K - 1)`` (:data:`ASAP_FIXED_COST`, :data:`ASAP_PEER_COST`, or
    their ``ASAPGRAPH_ASAP_*`` environment values)."""
    out = {}
    for key, name, default in (("fixed", "ASAPGRAPH_ASAP_FIXED_COST", ASAP_FIXED_COST),
                               ("per_peer", "ASAPGRAPH_ASAP_PEER_COST", ASAP_PEER_COST)):
        env = os.environ.get(name, str(default))
        try:
            out[key] = float(env)
        except ValueError:
            raise ValueError(f"{name} must be a number, not {env!r}") from None
    out["phi"] = out["fixed"] + out["per_peer"] * (K - 1) if K > 1 else 0.0
    return out


def asap_shares(shares, K):
    """ASAP's split of the balance weight by measured speeds (``shares``: the
    speed-proportional fractions ``s_q / sum s``, as BSP splits; None: the even split
    stays).  Besides its sweep of its range, an ASAP rank pays every sweep cycle a cost
    that does not shrink with its range: its messages to and from each of its ``K - 1``
    peers and their ACKs (the sweep gate aligns the ranks' sweeps: one message each way
    per peer per sweep; ~60-70 us each against a ~18 ms sweep of all of rmat:20).  At its
    speed a slow rank pays it several times over, so with the speed-proportional split it
    is the slowest rank of every cycle.  With ``phi`` that cost as a fraction of a full
    sweep of the graph (:func:`split_cost`: :data:`ASAP_FIXED_COST` +
    :data:`ASAP_PEER_COST` x (K - 1)), equal cycle times ``(f_q + phi) / s_q`` give
    ``f_q = s_q / S (1 + K phi) - phi``: the slow ranks get less than their speed's share
    (at least :data:`ASAP_MIN_SHARE` of it), the fast ones more.

    Measured (rmat:20, 4 ranks, 1 ms, 1 Gbit/s, virtual clock, model compute, seeds 1-5,
    the Jacobi sweep): ``phi`` 0.03 took ASAP with ``start`` from 2.30-2.42x to
    2.33-2.43x static BSP with rank 1 3x slower and from 1.77-1.96x to 1.99-2.04x with
    speeds 1:1.5:2:3 (0.045: 2.40x / 2.00x, 0.06: 2.41x / 1.84x, seed 1); cnr-2000
    (seeds 1-3) 3.49-3.74x -> 4.04-4.13x and 2.25-2.43x -> 2.42-2.66x
    (benchmarks/REPORT.md, seventeenth session).  Re-measured once the virtual clock
    charged a round's coding before the stamps it precedes (and with the Gauss-Seidel
    sweep), the per-peer cost the message work suggests (0.01) was the worst of the
    values tried: persistent 3x, ``start``, against static BSP, seeds 1-5 / held-out
    seeds 6-9: 0.01: 1.99-2.31x / 2.23-2.32x; 0: 2.32-2.48x / 2.31-2.48x; 0.003:
    2.47-2.48x / 2.38-2.48x; 0.005: 2.37-2.52x / 2.47-2.50x (heterogeneous 2.03-2.05x
    for every value from 0.003); cnr-2000 3.61-3.84x.  So the per-peer part is a measured
    0.005, not the model's estimate.

    Once the compute model priced the message coders as the ranks measure them (3.35 /
    3.45 ns a value, twenty-fifth session), the fixed part of a cycle is mostly coding:
    every rank of rmat:20 on 4 ranks codes 210-265 thousand remote slots a sweep whatever
    it owns, so that part does not grow with the number of peers.
    :data:`ASAP_FIXED_COST` 0.015 adds it (twenty-sixth session, ``bench_issue14.py
    --compute model``, against static BSP, ``phi`` = 0.015 + 0.005 (K - 1) = 0.03 at K =
    4): rmat:20 persistent 3x 2.42-2.60x -> 2.74-2.78x (seeds 1-8), heterogeneous
    1.64-1.91x -> 1.79-2.22x; cnr-2000 3.45-3.65x -> 3.87-3.93x and 2.50-2.59x ->
    2.49-2.70x (seeds 1-3).  Heterogeneous speeds (1, 1.5, 2, 3)[r % 4] on K = 8 / 16
    (seed 0): rmat:20 1.28x -> 1.37x / 0.95x -> 0.95x, cnr-2000 2.78x -> 2.21x / 2.00x ->
    2.07x.  A per-peer cost alone, doubled to 0.01, did as well at K = 4 but was worse at
    K = 8 (1.27x, 2.17x); cnr-2000's times move by tens of per cent between nearby
    ``phi`` (where the range boundaries fall in a web graph), rmat:20's smoothly.  BSP
    keeps the speed-proportional split: its supersteps wait for the slowest rank's sweep
    and messages alike."""
    if shares is None or K < 2:
        return shares
    s = np.asarray(shares, dtype=np.float64)
    s = s / s.sum()
    phi = split_cost(K)["phi"]
    if phi <= 0.0:
        return s
    f = np.maximum(s * (1.0 + K * phi) - phi, ASAP_MIN_SHARE * s)
    return f / f.sum()


#: the speed probe of ``--rebalance start``: a fixed random graph, the same on every rank
PROBE_VERTICES, PROBE_DEGREE, PROBE_SWEEPS = 1 << 16, 4, 2


def probe_speeds(comm, emu):
    """``start`` on a fresh load: every rank's speed, measured *before* the graph is
    partitioned, so that the loader splits the ranges in proportion to it and nothing
    migrates (heterogeneity-aware partitioning: profile the hosts, then split; cf.
    LeBeane et al., SC 2015).  Collective.

    Each rank times ``PROBE_SWEEPS`` sweeps of the ASAP push kernel over the same fixed
    random graph (``PROBE_VERTICES`` vertices, ``PROBE_DEGREE`` out-edges each: ~0.7 ms a
    sweep here), charged like the engines' sweeps (:meth:`.emulation.Emulator.after_compute`:
    CPU time or the compute model, times the straggler factor, plus pauses); its speed is
    the inverse of its fastest sweep (a one-off hiccup does not make a host slow).  The
    speeds travel in one ``allgather``; as :meth:`Balancer.decide`, if the even split's
    predicted sweep time is more than ``THRESHOLD`` longer than the speed-proportional
    one's, ``shares`` are the speeds' fractions, else None (the even split).

    Returns ``{"speeds", "shares", "imbalance", "charged", "wall"}``: ``charged`` is this
    rank's probe as the emulation charged it (the caller puts it on the virtual clock
    after ``emu.start()``), ``wall`` the probe's host seconds (the caller counts them in the
    run's compute time).  The graph is set up untimed (a loader's work), the sweeps are not.
    """
    nv = PROBE_VERTICES
    rng = np.random.default_rng(0x5BEED)
    tgt = rng.integers(0, nv, nv * PROBE_DEGREE, dtype=np.int32)
    indptr = np.arange(0, nv * PROBE_DEGREE + 1, PROBE_DEGREE, dtype=np.int64)
    t0 = time.perf_counter()
    sweeps = _timed_sweeps(emu, indptr, tgt, None, np.full(nv, 1.0 / PROBE_DEGREE),
                           np.zeros(nv, dtype=np.uint8), 0, [np.full(nv, 1.0 / nv)] * PROBE_SWEEPS)
    took = [t for _, _, t in sweeps]
    best, charged = min(took), sum(took)
    speeds = np.array(comm.allgather(1.0 / max(best, 1e-9)), dtype=np.float64)
    slow = slowdown(np.full(len(speeds), 1.0), speeds)[0]  # of the even split
    shares = speeds / speeds.sum() if slow > THRESHOLD else None
    return {"speeds": speeds.tolist(), "shares": shares, "imbalance": round(slow, 4),
            "charged": charged, "wall": time.perf_counter() - t0}


def run_bsp_rebalanced(comm, lg, part, p, d, alpha, tol, max_iter, emu, st, bal, threads=1):
    """BSP PageRank with migrations between supersteps; returns ``(x, iterations,
    converged, residual, lg, part)`` (``x`` by the final partition's owned vertices)."""
    from asapgraph.comm.mpi import MeteredComm
    from asapgraph.engine.bsp import run_bsp
    from asapgraph.engine.pull import pull_graph

    x, its, conv, res = None, 0, False, np.inf
    if bal.force is None and bal.probe is None:  # start, dynamic: the first split before
        # the run (unless the loader split by the probed speeds)
        same = d is p
        lg, part, (p, dd, st.ref) = calibrate(comm, lg, part, [p, None if same else d,
                                                               st.ref], emu, st, bal)
        d = p if same else dd
    while True:
        x, k, conv, res = run_bsp(comm, lg, p, d, alpha, tol, max_iter - its, emu, st,
                                  threads=threads, x0=x, balancer=bal, step0=its)
        its += k
        st.rounds = its
        if bal.pending is None or conv or its >= max_iter:
            break
        same = d is p
        lg, part, (x, p, dd, st.ref) = bal.migrate(lg, part, [x, p, None if same else d,
                                                             st.ref], its, st, emu)
        d = p if same else dd
        # the pull layout of the new rows, built here so that its time is the migration's
        # (charged as the migration's work is: CPU outside MPI calls, then a collective)
        mc = MeteredComm(comm)
        c0, t0 = time.thread_time(), time.perf_counter()
        pull_graph(mc, lg, threads)
        emu.after_compute(max(time.thread_time() - c0 - mc.cpu, 0.0))
        emu.collective(comm)
        bal.migrations[-1]["pull_layout_seconds"] = comm.allreduce(time.perf_counter() - t0,
                                                                   op=mpi().MAX)
        bal.migrations[-1]["seconds"] += bal.migrations[-1]["pull_layout_seconds"]
    return x, its, conv, res, lg, part


def run_asap_rebalanced(comm, lg, part, p, dvec, alpha, tol, emu, st, bal, fanout=2,
                        window=1, approx=0.0, seed=0, debug_mass=False, max_iter=None,
                        schedule=None):
    """ASAP PageRank (``jacobi`` form) with coordinated migrations; returns ``(x, rounds,
    converged, bound, extra, lg, part)``."""
    from asapgraph.engine.asap import _Solver
    from asapgraph.engine.asap_pagerank import dangling_rhs, normalised, solver_figures

    MPI = mpi()
    rounds, state, checks, worst = 0, None, 0, 0.0
    if bal.force is None and bal.probe is None:  # start, dynamic: the first split before
        # the run (unless the loader split by the probed speeds)
        lg, part, (p, dvec, st.ref) = calibrate(comm, lg, part, [p, dvec, st.ref], emu, st,
                                                bal)
    while True:
        sol = _Solver(comm, lg, alpha, emu, st, fanout, window, approx, seed, debug_mass,
                      "jacobi", max_iter, schedule)
        sol.balancer = bal
        y, bound, r = sol.solve(p, tol, relative=True, bdang=dangling_rhs(comm, p, dvec),
                                resume=state)
        rounds += comm.allreduce(r, op=MPI.MAX)
        checks, worst = checks + sol.mass_checks, max(worst, sol.max_mass_error)
        if bal.pending is None:
            break
        xs, rs = sol.last_state
        lg, part, (xs, rs, p, dvec, st.ref) = bal.migrate(
            lg, part, [xs, rs, p, dvec, st.ref], st.extra.get("waves", 0), st, emu)
        state = (xs, rs)
    x = normalised(comm, emu, y)
    extra = solver_figures(sol, debug_mass, checks, worst)
    return x, rounds, bool(bound <= tol), bound, extra, lg, part
