"""The delta-form local work of the ASAP solver: PageRank's two forms and the sum programs.

Rationale
---------
:class:`DeltaState` is a rank's state in one solve of :class:`.asap._Solver` (values
``x``; residuals and per-peer slot buffers ``acc``; the teleport and dangling pools) and
its local work (one sweep per round); the round loop, the messages and the termination
are :mod:`.asap`'s.  Accumulative sum programs (:mod:`.sum_program`) run the ``jacobi``
form with ``alpha = 1`` (their coefficients folded into the local CSR), no pools, no
warm start, ``x = 0, r = delta0``, and an extrapolation step decided by the waves;
min/max programs bring their own state (:class:`.minmax_program.MinMaxState`).

*Program forms.*  Both are Maiter-style delta (residual) pushes, so order, delays and
combining never change the fixed point.  Each owned vertex has a value ``x`` and a
residual ``r``; pushing ``u`` moves ``r_u`` into ``x_u`` and sends ``alpha r_u w_uv /
outw_u`` to every out-neighbour ``v`` -- into ``r_v`` when ``v`` is local, else into the
slot of ``v`` in the per-peer outgoing buffer, where it is *combined* (summed) with
earlier contributions.  A contribution is never dropped, only delayed or combined.

* ``jacobi`` (default): the eigenvector form ``x = G x`` of the Google matrix
  ``G = alpha (W^T + bdang d^T) + (1 - alpha) b 1^T`` (``b`` the personalization, ``bdang``
  the dangling distribution, ``d`` the dangling indicator).  Start ``x = 1/n`` and
  ``r = G x - x`` (one push of ``x``), so ``sum r = 0``.  A push of ``u`` also sends
  ``(1 - alpha) r_u`` (teleport) and, for a dangling ``u``, ``alpha r_u`` into two *pools*
  that are spread along ``b`` and ``bdang``: each rank's share (``sum b`` over its
  vertices) rides as a header scalar on the next message to that rank, so every rank
  that holds part of ``b`` is a peer.  Nothing is absorbed: ``sum r`` stays 0, and
  ``x / sum(x)`` is the answer.  Each round's local work is one sweep
  (:func:`._local.jacobi_push`): the warm start is a Jacobi sweep (residuals snapshotted:
  power iteration's first step), every later one Gauss-Seidel within the rank -- a
  vertex pushes its snapshotted residual plus what earlier vertices of the same sweep
  pushed to it (:data:`.asap.GAUSS_SEIDEL`; the sum programs keep the Jacobi sweep).
  Pushes only move signed mass, so ``sum r = 0``, the fixed point and the bound are
  unchanged; ``sum x`` drifts from 1 (the answer is normalised).  The sweep gate of
  :mod:`.asap` applies.  Blocks of 16
  consecutive vertices whose mean residual is below ``gamma R / n`` (``R`` the global
  residual of the last wave; ``gamma`` 0.2, or 0.1 where the sweep gate waits:
  :data:`.asap.SKIP_GAMMA`; capped at half the largest block mean, so a sweep always
  makes progress) wait and combine; skipping whole blocks rather than single vertices
  made a sweep's cost follow its work (the push is bound by memory access).
  Why this form: delays shift mass between the residuals and the buffers/pools; when
  the process absorbs mass (the leaky form below) such a lag excites a mode that decays
  at ~``alpha`` per sweep (on rmat the leaky process needed 3-8x BSP's edge work), while
  here the lag only moves mass that is conserved, and the mass mode decays like
  ``(-(1-alpha))^t``.  Measured with one rank: 18 sweeps vs 15 for power iteration on
  rmat:18 (the certified bound needs a few more than the true error).
* ``push``: Gauss-Seidel residual push from ``x = 0, r = (1 - alpha) b`` in which the
  pushed mass of a dangling vertex leaves the system ("leaks"); the fixed point is
  ``y = (1 - alpha) b (I - alpha W)^-1`` and, when ``bdang = b``, PageRank is
  ``y / sum(y)``; for ``bdang != b`` a second solve with ``b = bdang`` gives ``z`` and
  ``x = y + alpha s z / (1 - alpha)``, ``s = (y.d) / (1 - alpha/(1-alpha) z.d)``.  Vertices
  are pushed when ``r_u`` exceeds a degree-scaled threshold, so on graphs with locality
  (cnr-2000) it visits ~4x fewer edges than BSP; on expander-like graphs (rmat) it
  contracts at the spectral radius of ``alpha W`` (~0.73 per sweep vs ~0.32 for power
  iteration) and loses.

*Invariants (mass conservation, checked by* ``debug_mass=True`` *on blocking snapshots
every few waves, the only blocking collective, debug only).*  ``jacobi``: residuals +
buffered + pools + in flight = 0.  ``push``: ``sum(x) + (sum(r) + buffered + in_flight +
leaked) / (1 - alpha) = 1``.

*Error bound.*  ``E = (sum |r| + |buffered| + |pools| + |in flight|) / (1 - alpha)``.
``jacobi``: on zero-sum vectors ``G`` acts as ``alpha M`` with ``||M||_1 = 1``, so
``||x / sum(x) - x*||_1 <= E / sum(x)``.  ``push`` (all quantities non-negative):
``||y - x_abs||_1 <= E`` and the error of the normalised vector is ``<= 2 E / sum(x_abs)``.

*Local work.*  ``jacobi``: see above.  ``push``: each round runs one
Gauss-Seidel sweep (:func:`._local.residual_push`) over vertices whose residual exceeds
``min(r_max / 2, gamma x R_wave / n)`` (``gamma`` = 1, env ``ASAPGRAPH_ASAP_GAMMA``), so a
rank does not solve its own part far below the global error only to redo it when new
mass arrives.  Env knobs for experiments: ``ASAPGRAPH_ASAP_JGAMMA`` (the ``jacobi``
skip threshold's ``gamma``, :data:`.asap.SKIP_GAMMA`), ``ASAPGRAPH_ASAP_BLOCK`` (its block
size, 16; 1 skips single vertices), ``ASAPGRAPH_ASAP_PRIO``,
``ASAPGRAPH_ASAP_DEGREE_RULE``; the priority schedule's ``ASAPGRAPH_ASAP_RHO`` and
``ASAPGRAPH_ASAP_RANK_PRIO`` (:mod:`.asap`).

*Sweep layout (issue 14: a push edge cost ~2x a BSP pull edge).*  The ``jacobi`` PageRank
sweep may run on a private copy of the rank's rows with the owned vertices relabelled by
decreasing in-degree (:func:`push_layout`), under the single-process relabelling policy
(:data:`asapgraph.kernels.tuning.REORDER_MIN_EDGES` edges and no locality in the given order,
the test of :mod:`.pull`; env ``ASAPGRAPH_ASAP_REORDER=0/1``), with the rows' software
prefetch when ``acc`` outgrows :data:`~asapgraph.kernels.tuning.PREFETCH_MIN_BYTES`
(``ASAPGRAPH_ASAP_PREFETCH``: the distance; also on the given order).  ``x``, ``r``, ``rs`` and the pool shares are
then in the new order; :meth:`DeltaState.state`, :meth:`DeltaState.result` and the
solver's incoming slot maps translate.  On the host's clock each out-peer's slots are
relabelled too, by this rank's edges into them (``slot_order``: the hot remote targets
compact like the owned ones; twentieth session, below), and each receiver reorders its
map of the sender's slots to match (:func:`exchange_slot_orders`).  Measured (issue 14,
unemulated, interleaved with the tree before, medians of 8, on a shared 2-core host):
rmat:20 on 2 ranks, sweep CPU per edge 2.06 -> 1.22 ns (tol 1e-6) and 1.83 -> 1.15
(1e-10; BSP's pull 1.03-1.12), compute 0.401 -> 0.342 s and 0.531 -> 0.446 s (BSP
0.30-0.37); 4 ranks 2.04 -> 1.37 ns, 0.778 -> 0.711 s.  The copy costs ~45-50 ms per rank
(a count and one pass over the edges: about two sweeps) and 4-8 bytes per edge.  cnr-2000
(not relabelled: its order has locality) is unchanged within noise (2.1-2.4 ns per edge
with the per-vertex passes): replayed sweeps gained 10-15 % from the prefetch alone,
the real runs showed nothing measurable.

*Limits (measured; ``asapgraph bench --report``, 4 ranks on 2 cores).*  Unemulated, ASAP
is level with BSP on cnr-2000 and ~12% slower on rmat:20 (75% of the edges cross ranks, so a
sweep on partial input is extra edge work), sending ~4x fewer bytes.  With one rank 3x
slower, ASAP is ~1.2x faster: every vertex is owned by one rank, so the slow rank still
sweeps its part about as often as BSP has supersteps; asynchrony removes the barrier waits,
not that work, and the speed-up is capped by BSP's time over the slow rank's own sweeps
(1.4-1.6x here).  Only moving vertices off a slow rank would lift the cap.  History: the
16-vertex block skipping, the core-aware gate (two ranks on two cores used to take turns:
0.30 -> 0.15 s on cnr-2000) and CPU-time straggler sleeps are this form's recent gains;
before them ASAP was 1.2-1.6x slower unemulated.  The leaky ``push`` form
needed 6-8x BSP's edge work on rmat:20; a signed variant that redistributed the
dangling mass through the termination waves (every 5 ms) was 4-20x worse for the lag
reason above; spreading the teleport and dangling pools on the data messages fixed it.

References: Zhang, Gao, Gao, Wang, "Maiter", IEEE TPDS 25(8), 2014 (delta form).
"""
from __future__ import annotations

import math
import os
import time

import numpy as np

from asapgraph.comm.mpi import TAG_SLOTS, mpi
from asapgraph.kernels import _local

__all__ = ["DeltaState", "PushLayout", "exchange_slot_orders", "pool_peers", "push_layout"]

#: zero targets after the last edge of a relabelled layout (>= the prefetch distance)
PUSH_PAD = 64
#: prefetch distance of the push sweep in edges (``acc[tgt[e + PF]]``).  Replayed sweeps
#: of real runs (rank 0 and 1 states dumped, CPU time, min of 5-9): rmat:20 1.54 -> 1.25
#: ns/edge (given order), 1.05 -> 0.93 (relabelled); cnr-2000 2.05 -> 1.82 and 2.27 ->
#: 1.91; 64 slightly ahead of 32
PUSH_PF_DIST = 64
#: relabel each out-peer's slots by this rank's edges into them (:func:`push_layout`)
SLOT_ORDER = True


class PushLayout:
    """The ``jacobi`` sweep's private copy of a rank's out-CSR with the owned vertices
    relabelled by decreasing in-degree (:func:`push_layout`).

    ``new2old[i]``: the owned index (in ``lg`` order) of relabelled vertex ``i``;
    ``old2new``: its inverse (int64, ``nloc``).  ``indptr``, ``tgt`` (``PUSH_PAD`` zero
    entries past the last edge), ``coef`` (weighted; else None), ``vcoef``, ``dangling``:
    the :class:`~asapgraph.partition.local_graph.LocalGraph` arrays in the new order; slot
    targets (``>= nloc``) stay in their peer's segment, reordered within it when
    ``slot_new2old`` (int64, ``nslots``: the ``lg`` slot of each new slot) is not None.  ``prefetch``: the sweep's prefetch distance (0:
    none).  ``seconds``: what building it cost.
    """

    def to_new(self, v):
        """A per-owned-vertex array in ``lg`` order, relabelled (a new array)."""
        return np.ascontiguousarray(np.asarray(v)[self.new2old])

    def to_old(self, v):
        """A relabelled per-owned-vertex array back in ``lg`` order (a new array)."""
        return np.ascontiguousarray(np.asarray(v)[self.old2new])


def push_layout(lg, prefetch, slot_order=None):
    """Relabel a rank's owned vertices by decreasing degree -- in-degree from the rank's
    own rows plus out-degree, log2 buckets, stable (:func:`._pagerank.degree_order`) -- so
    the targets most edges add into form one compact, cache-resident block of ``acc``;
    rows follow their vertex (:func:`._pagerank.permute_csr`, one pass over the edges).
    Same edges, same coefficients; only which index an owned vertex (and, with
    ``slot_order``, a slot within its peer's segment) has, and so the order in which a
    sweep adds into a target, change.  Key measured on replayed rmat:20 sweeps (ns/edge,
    no prefetch / prefetch): in-degree 1.21 / 1.10, out-degree 1.10 / 0.96, their sum
    1.05 / 0.93.  ``prefetch``: the distance to store.

    ``slot_order`` (default :data:`SLOT_ORDER`, env ``ASAPGRAPH_ASAP_SLOT_ORDER=0/1``):
    the slots of each out-peer's segment are relabelled too, by decreasing count of this
    rank's edges into them (log2 buckets, stable), so that the hot remote targets of a
    sweep are compact like the owned ones (before, they lay in the loader's order, which
    for the sweep is a random one: ~half of rmat:20's edges on 2 ranks end in a slot).
    Replayed rmat:20 sweeps, 2 ranks (CPU, min of 15): 12.2 -> 10.7 ms each rank, the
    same as an exact sort by count; a random slot order costs what the loader's did.
    ``P.slot_new2old[s]``: the slot (``lg`` order) that slot ``s`` of the layout stands
    for; a segment's messages are laid out in the new order, so each receiver reorders
    its map of this rank's slots (:func:`exchange_slot_orders`, every solve)."""
    import time

    from asapgraph.kernels import _pagerank

    t0 = time.perf_counter()
    nloc, N, m = lg.nloc, lg.nloc + lg.nslots, len(lg.tgt)
    if slot_order is None:
        slot_order = os.environ.get("ASAPGRAPH_ASAP_SLOT_ORDER", "1" if SLOT_ORDER else "0") != "0"
    slot_order = bool(slot_order)
    tdt = lg.tgt.dtype
    P = PushLayout()
    scnt = np.empty(lg.nslots if slot_order else 0, dtype=np.int64)
    key = _pagerank.owned_degree_key(lg.indptr, lg.tgt, np.empty(nloc, dtype=np.int64),
                                     scnt if slot_order else None)
    new2old = np.empty(nloc, dtype=tdt)
    _pagerank.degree_order(key, new2old)
    del key
    # the inverse (slots keep their index), both maps as int64, vcoef and dangling
    # relabelled: one pass
    old2new = np.empty(N, dtype=tdt)
    P.new2old, P.old2new = np.empty(nloc, dtype=np.int64), np.empty(nloc, dtype=np.int64)
    P.vcoef, P.dangling = np.empty(nloc), np.empty(nloc, dtype=np.uint8)
    _pagerank.relabel_maps(new2old, old2new, P.new2old, P.old2new,
                           np.ascontiguousarray(lg.vcoef, dtype=np.float64), P.vcoef,
                           np.ascontiguousarray(lg.dangling, dtype=np.uint8), P.dangling)
    P.slot_new2old = P.slot_key = None  # (None: slots keep their index)
    P.slot_ordered = slot_order  # (the decision: alike on every rank; no slots, no keys)
    if slot_order and lg.nslots:  # each out-peer's segment by decreasing edge count
        P.slot_key = np.empty(lg.nslots, dtype=np.uint8)
        _pagerank.log2_keys(scnt, P.slot_key)
        P.slot_new2old = np.empty(lg.nslots, dtype=np.int64)
        _pagerank.slot_order(P.slot_key, np.asarray(lg.out_off, dtype=np.int64),
                             P.slot_new2old)
        _pagerank.inverse_into(P.slot_new2old, old2new, nloc)
    del scnt
    P.indptr = np.empty(nloc + 1, dtype=np.int64)
    P.tgt = np.empty(m + PUSH_PAD, dtype=tdt)
    w = lg.coef if lg.coef is not None else np.zeros(0)
    P.coef = np.empty(m, dtype=np.float64) if lg.coef is not None else None
    _pagerank.permute_csr(lg.indptr, lg.tgt, w, new2old, old2new, P.indptr, P.tgt,
                          P.coef if P.coef is not None else np.zeros(0), 1)
    P.prefetch = int(prefetch)
    P.seconds = time.perf_counter() - t0
    return P


def slot_orders(key, off):
    """``new2old`` of the slots: within each segment ``off[j]:off[j+1]``, by decreasing
    ``key`` (:func:`._pagerank.log2_keys` of the edge counts), ties in slot order
    (:func:`._pagerank.slot_order`: what :func:`push_layout` lays out, rebuilt by a
    receiver from the keys its peer sent)."""
    from asapgraph.kernels import _pagerank

    out = np.empty(len(key), dtype=np.int64)
    _pagerank.slot_order(np.ascontiguousarray(key, dtype=np.uint8),
                         np.asarray(off, dtype=np.int64), out)
    return out


def exchange_slot_orders(comm, lg, P, in_maps):
    """The maps of this rank's in-peers' slots to the sweep's labels (``P.old2new``),
    each graph in-peer's in its layout's slot order (:func:`push_layout`'s
    ``slot_order``): every rank sends each graph out-peer the bucket keys of its
    segment's slots (one byte a slot; all 0: the loader's order) and orders ``in_maps[i]``
    (``lg``'s map of graph in-peer ``i``) as :func:`slot_orders` does with what that
    peer sent (:func:`._pagerank.slot_map`, fused with the relabelling).  Collective among
    the graph's peers; called by every rank of a solve whose ranks sweep relabelled rows
    (``P`` not None on every rank, :func:`.asap.push_relabels`).  Pool-only peers past
    the graph's: their maps relabelled."""
    from asapgraph.kernels import _pagerank

    MPI = mpi()
    off = np.asarray(lg.out_off, dtype=np.int64)
    key = P.slot_key if P.slot_key is not None else np.zeros(lg.nslots, dtype=np.uint8)
    nin = len(lg.in_peers)
    got = [np.empty(len(in_maps[i]), dtype=np.uint8) for i in range(nin)]
    reqs = [comm.Irecv([got[i], MPI.UNSIGNED_CHAR], source=int(q), tag=TAG_SLOTS)
            for i, q in enumerate(lg.in_peers)]
    reqs += [comm.Isend([key[int(off[j]):int(off[j + 1])], MPI.UNSIGNED_CHAR], dest=int(q),
                        tag=TAG_SLOTS) for j, q in enumerate(lg.out_peers)]
    MPI.Request.Waitall(reqs)
    out = []
    for i, mp in enumerate(in_maps):
        mp = np.ascontiguousarray(mp, dtype=np.int64)
        if i < nin:
            m = np.empty(len(mp), dtype=np.int64)
            _pagerank.slot_map(got[i], mp, P.old2new, m)
            out.append(m)
        else:
            out.append(P.old2new[mp])
    return out


def pool_peers(comm, lg, form, b, bdang):
    """Peer lists of one solve: ``(out, lo, hi, in, maps, B)``.

    The graph's peers, plus (``jacobi`` form) every rank that holds part of the teleport
    or dangling distribution (``B[q] = (sum b, sum bdang)`` on rank ``q``): each push
    sends pool mass to all of them.  ``lo/hi``: slot range of each out-peer in ``acc``
    (empty for a pool-only peer).  One allgather (setup, not the main loop).
    """
    K, me, nloc = comm.Get_size(), comm.Get_rank(), lg.nloc
    out = [int(q) for q in lg.out_peers]
    lo = [nloc + int(lg.out_off[j]) for j in range(len(out))]
    hi = [nloc + int(lg.out_off[j + 1]) for j in range(len(out))]
    inp = [int(q) for q in lg.in_peers]
    maps = list(lg.in_maps)
    B = np.ones((K, 2))
    if form == "jacobi":
        mine = np.array([float(b.sum()), float(bdang.sum()), float(nloc > 0)])
        allv = np.zeros(3 * K)
        comm.Allgather(mine, allv)
        allv = allv.reshape(K, 3)
        B, pushes = allv[:, :2].copy(), allv[:, 2] > 0
        for q in range(K):
            if q == me:
                continue
            if pushes[me] and B[q].sum() > 0 and q not in out:
                out.append(q)
                lo.append(nloc)
                hi.append(nloc)
            if B[me].sum() > 0 and pushes[q] and q not in inp:
                inp.append(q)
                maps.append(np.zeros(0, dtype=np.int64))
    return out, lo, hi, inp, maps, B


def _relabelled(P, v):
    """``P.to_new(v)``, or ``v[:1]`` when every entry of ``v`` is the same (the default
    teleport: nothing to relabel; the shares derived from it are read as one number
    anyway, see :func:`_uniform`)."""
    u = _uniform(v)
    return u if len(u) == 1 and len(v) > 1 else P.to_new(v)


def _uniform(v):
    """``v[:1]`` when every entry of ``v`` equals the first (the sweep then reads one
    number for all vertices), else ``v``."""
    return v[:1] if len(v) > 1 and bool((v == v[0]).all()) else v


class DeltaState:
    """A rank's delta-form state in one solve (see the module docstring).

    ``sol``: the :class:`.asap._Solver` (graph, alpha, form, knobs, stats); ``Bq``,
    ``out_peers``: from :func:`pool_peers`; ``delta0``: a sum program's initial deltas
    (None: PageRank); ``active``: False when a min/max state does the local work (then
    this one stays empty).  ``warm``: the ``jacobi`` warm start pushed already.
    """

    def __init__(self, sol, b, bdang, Bq, out_peers, delta0, active=True, resume=None):
        lg = self.lg = sol.lg
        self.sol, self.st, self.alpha, self.form = sol, sol.st, sol.alpha, sol.form
        self.jac = jac = sol.form == "jacobi"
        self.prog = delta0 is not None
        nloc = self.nloc = lg.nloc
        nout = self.nout = len(out_peers)
        # jacobi PageRank: the sweep may run on a relabelled copy of the rows
        # (:func:`push_layout`); x, r, rs and the pool shares are then in its order, and
        # only state()/result() and the solver's incoming slot maps translate.  The rows'
        # prefetch (the solver's distance) applies to either layout
        P = self.P = sol.push_layout() if jac and delta0 is None and active else None
        c_setup, warm_cpu = time.thread_time(), 0.0  # (this setup's CPU: Emulator.setup)
        if P is not None:
            two = bdang is not b
            b = _relabelled(P, b)
            bdang = _relabelled(P, bdang) if two else b
            if resume is not None:
                resume = (P.to_new(resume[0]), P.to_new(resume[1]))
            self.rows = (P.indptr, P.tgt, P.coef, P.vcoef, P.dangling, P.prefetch)
        else:
            self.rows = (lg.indptr, lg.tgt, lg.coef, lg.vcoef, lg.dangling, sol.prefetch)
        self.x = np.zeros(nloc)
        acc = self.acc = np.zeros(nloc + lg.nslots)
        self.leaked = 0.0
        self.beta = 1.0 - self.alpha
        # jacobi form: pool mass (along b, along bdang) waiting to be spread over this
        # rank's vertices (pend) or owed to each out-peer (dbuf, sent in the header)
        self.two = bdang is not b
        self.pend = np.zeros(2)
        self.dbuf = np.zeros((nout, 2))
        self.Bme = Bme = Bq[sol.me]
        self.bq_p = b / Bme[0] if Bme[0] > 0 else np.zeros(nloc)
        self.bq_d = ((bdang / Bme[1] if Bme[1] > 0 else np.zeros(nloc)) if self.two
                     else self.bq_p)
        # what the sweep reads: a uniform share as one number (the default teleport)
        self.bq_pk = _uniform(self.bq_p)
        self.bq_dk = _uniform(self.bq_d) if self.two else self.bq_pk
        self.bshare = np.array([Bq[q] for q in out_peers]).reshape(nout, 2)
        self.rs = np.zeros(nloc) if jac else None
        self.wrote_rs = True  # (the last sweep wrote rs: see sweep)
        # the sweep kernel's signed sums of acc before/after and their error bounds
        self.mass = np.zeros(4)
        self.plain_sums = self.sums_over_tol = 0
        # sweep scratch: pushed block numbers, block sums of |r|
        self.act = np.zeros(-(-nloc // sol.block) if jac else 0, dtype=np.int32)
        self.bsum = np.zeros(len(self.act))
        # sum programs: pushed and produced signed mass since the last wave contribution
        # (their ratio estimates the dominant eigenvalue for the extrapolation step)
        self.flow = np.zeros(2)
        self.relax = 1.0  # > 1: the next sweep is an extrapolation step (every rank, once)
        # push form: push rule r[u] > tw * scale[u], scale = max(outdeg, 1) / mean degree
        # (>= 1/mean); the jacobi form has no use for it
        self.scale = None
        if not jac:
            deg = np.diff(lg.indptr).astype(np.float64)
            mean_deg = max(float(lg.m) / max(lg.n, 1), 1.0)
            self.scale = np.maximum(deg, 1.0) / mean_deg if sol.degree_rule else np.ones(nloc)
        self.rmax_c = None
        self.warm = False
        self.omega = 1.0  # over-relaxation of the Gauss-Seidel sweeps (set by .asap)
        self.sx = 0.0  # (the warm start's sweep adds to it; set below)
        if resume is not None:  # after a migration (.rebalance): the drained state
            self.x[:] = resume[0]
            acc[:nloc] = resume[1]
        elif self.prog:
            acc[:nloc] = delta0
        elif not active:
            pass  # the program's state lives in the min/max state
        elif jac:
            # warm start: push x0 = 1/n once (x <- x0, r <- G x0 - x0)
            acc[:nloc] = 1.0 / lg.n
            # every vertex: x = x0 everywhere.  A sweep like the others, charged on the
            # emulator (the virtual clock left it out: issue 15, K = 2, rmat:20 ASAP's
            # virtual time 0.84-0.93 of its wall time; a straggler's host sleep too)
            c0, e0 = time.thread_time(), self.st.edges_visited
            # (a Jacobi sweep: r = G x0 - x0 below needs x = x0; its edges are counted,
            # `sweeps` are the rounds')
            self.sweep(0.0, full=True, gs=False)
            c1 = time.thread_time()
            sol.emu.after_compute(c1 - c0, self.st.edges_visited - e0, nloc,
                                  "push_r" if P is not None else "push", snapshot=True)
            # (the sweep is charged as a sweep; a straggler's wait after it, which may
            # spin on the host's clock, is not setup either)
            warm_cpu = time.thread_time() - c0
            acc[:nloc] -= self.x
            self._recentre(0.0)  # this rank's r sums to 0 (its x0 is now in x)
            self.warm = True
        else:
            acc[:nloc] = (1.0 - self.alpha) * b
        # sum(x), kept up to date by the sweeps (each adds the mass it pushed): what the
        # waves of a busy rank report; a passive rank's waves recount it (wave_sums)
        self.sx = float(self.x.sum())
        # the rest of this setup (allocating and initialising the state: first touch of
        # its pages, the passes above) is the solve's work before its first sweep, as
        # on a host (Emulator.setup)
        self.setup_cpu = time.thread_time() - c_setup - warm_cpu

    def sweep(self, theta, full=False, mass_tol=0.0, gs=True):
        """One Jacobi sweep; its pools go to ``pend``/``dbuf``; returns the local ``sum |r|``.

        The priority schedule (``sol.rho``) applies unless ``full`` or the sweep is an
        extrapolation step (both push every residual).  ``mass_tol`` (PageRank): how
        large an error the measurement of the drift the sweep creates may have (see
        :meth:`_recentre`; 0: compensated sums, as the warm start)."""
        acc, nloc, pend = self.acc, self.nloc, self.pend
        s_ = self.relax
        rho = 0.0 if full or s_ != 1.0 else self.sol.rho
        if not self.prog:  # PageRank: the pools' part of the signed mass before the sweep
            pools0 = (*pend.tolist(), *self.dbuf.ravel().tolist())
        if self.prog:
            before = float(acc.sum())
            if s_ != 1.0:  # push s r from every vertex, leave -(s - 1) r (sum_program)
                acc[:nloc] *= s_
                theta = 0.0
        indptr, tgt, coef, vcoef, dangling, pf = self.rows
        gs = gs and getattr(self.sol, "gauss_seidel", False) and not self.prog
        # whether the kernel writes its snapshot array rs (a Gauss-Seidel sweep of the
        # uniform schedule does not: _local.jacobi_push); what the compute model charges
        self.wrote_rs = not (gs and not 0.0 < rho < 1.0)
        nedge, dm, tot, _, left = _local.jacobi_push(
            indptr, tgt, coef, vcoef, self.x, acc, self.rs, self.act, self.bsum,
            dangling, self.alpha, pend[0], self.bq_pk, pend[1], self.bq_dk, theta,
            self.sol.block, rho, pf, None if self.prog else self.mass, mass_tol,
            # the sum before in the snapshot pass when the last sweep's sum after, with
            # 4x room, stayed within mass_tol (messages since rarely grow |acc| 4x)
            0.0 < self.mass[3] <= 0.25 * mass_tol, gs,
            # over-relaxation (.asap.SOR_OMEGA): Gauss-Seidel sweeps of the uniform
            # schedule, not the end game's full sweeps
            self.omega if (gs and not full and rho == 0.0) else 1.0)
        self.sx += tot
        if self.prog:
            if s_ != 1.0:
                acc[:nloc] -= ((s_ - 1.0) / s_) * self.rs
                left = _local.abs_sum(acc, 0, nloc)
                self.relax = 1.0
            else:
                self.flow[0] += tot
                self.flow[1] += tot + float(acc.sum()) - before
        pend[:] = 0.0
        two = self.two
        pool = np.array([self.beta * tot + (0.0 if two else dm), dm if two else 0.0])
        pend[:] += pool * self.Bme
        if self.nout:
            self.dbuf[:] += pool * self.bshare
        if not self.prog:
            left += self._put_back(pools0, mass_tol)
        self.st.edges_visited += nedge
        return left + float(np.abs(pend).sum())

    def _put_back(self, pools0, mass_tol):
        """:meth:`_recentre` of one sweep, from the sums the sweep kernel measured
        (``self.mass``: ``acc``'s signed sum before and after, each with its error bound)
        and the pools before (``pools0``) and after; returns the drift put back plus the
        two error bounds (so the rank's kept ``sum |r|`` stays an upper bound).

        The kernel sums plainly whenever the a-priori error bound of the plain sum is at
        most ``mass_tol`` (the solver passes :data:`.asap.DRIFT_TOL` x the rank's
        passivity target), else compensated: near the start, where ``sum |acc|`` is
        large, as before; later, where it is small, the plain sum already resolves the
        drift far below anything the termination reads.  The sum before is taken inside
        the snapshot pass when the last sweep's sum after was plain with 4x room (a
        prediction: its bound, whatever it is, is counted below and in
        ``drift_sums_over_tol``)."""
        if not self.nloc:
            return 0.0
        m = self.mass
        d = (math.fsum((float(m[2]), *self.pend.tolist(), *self.dbuf.ravel().tolist()))
             - math.fsum((float(m[0]), *pools0)))
        if d != 0.0:
            self.acc[0] -= d
        # how many of the sweep's two sums were plain (the rest compensated), and how
        # many plain ones exceeded mass_tol (a sum before taken in the snapshot on the
        # last sweep's prediction; its bound still counts below)
        self.plain_sums += int(m[1] > 0.0) + int(m[3] > 0.0)
        self.sums_over_tol += int(m[1] > mass_tol)
        return abs(d) + float(m[1]) + float(m[3])

    def _signed_mass(self):
        """This rank's signed residual mass: residuals, slot buffers, pools (compensated)."""
        return math.fsum((_local.exact_sum(self.acc, 0, len(self.acc)), *self.pend.tolist(),
                          *self.dbuf.ravel().tolist()))

    def _recentre(self, mass0):
        """Drift correction (``jacobi`` PageRank): put back the signed mass rounding created
        since ``mass0`` was measured; returns its size (added to the local residual).

        Why: on exact arithmetic a sweep moves signed mass and never creates it, so the
        global ``sum r`` stays 0; in float64 the sums into high in-degree vertices round
        (each addition by up to half an ulp of the partial sum), and the drift they leave
        is an eigenvalue-1 component of ``G`` that no push can shrink -- it circulates
        between the ranks for ever, keeps ``R >= |sum r|`` and no two waves find every
        rank passive (measured: rmat:16, 3 ranks, tol 1e-12: ``sum r = 7.5e-14``, the
        same ``R`` wave after wave until ``max_iter``).  Measured with a compensated sum
        (:func:`._local.exact_sum`) and put on one owned residual, the drift becomes an
        ordinary residual that the next sweeps push away."""
        if not self.nloc:
            return 0.0
        d = self._signed_mass() - mass0
        if d != 0.0:
            self.acc[0] -= d
        return abs(d)

    def push(self, ev, r_global):
        """One Gauss-Seidel residual push (``push`` form); ``ev``: messages arrived this
        round.  Returns ``(vertices pushed, edges, local sum r)``."""
        sol, lg, acc, nloc = self.sol, self.lg, self.acc, self.nloc
        if ev or self.rmax_c is None:  # else the last sweep's value is current
            self.rmax_c = float((acc[:nloc] / self.scale).max(initial=0.0))
        # work threshold tied to the global residual of the last wave: a rank does not
        # solve its own part far below the global error (it would redo that work
        # whenever new mass arrives); small residuals wait.
        tw = max(min(self.rmax_c * 0.5, sol.gamma * r_global / lg.n), sol.prio * self.rmax_c)
        pushed, nedge, leak, self.rmax_c, rl = _local.residual_push(
            lg.indptr, lg.tgt, lg.coef, lg.vcoef, self.x, acc, lg.dangling, self.alpha, tw,
            self.scale)
        self.leaked += leak
        return pushed, nedge, rl

    def state(self):
        """``(x, r)`` of a drained solve (nothing buffered or in flight), the pools spread
        on this rank's vertices as the next sweep would spread them: what a resumed solve
        starts from (``resume=``)."""
        r = self.acc[:self.nloc].copy()
        r += self.pend[0] * self.bq_p
        if self.pend[1] != 0.0:
            r += self.pend[1] * self.bq_d
        if self.P is not None:
            return self.P.to_old(self.x), self.P.to_old(r)
        return self.x.copy(), r

    def result(self):
        """``x`` in the rank's owned order (the array itself unless relabelled)."""
        return self.x if self.P is None else self.P.to_old(self.x)

    def pending_mass(self):
        """``sum |r| + |buffered| + |pools|`` (``jacobi``) or ``sum r + buffered`` (``push``):
        the numerator of the error bound."""
        return self.wave_sums()[0]

    def wave_sums(self, rl=None, slots=None):
        """``(pending mass, sum x, sum r + buffered)`` in one compiled pass
        (:func:`._local.wave_sums`): what a termination wave needs of this rank.

        ``rl`` (``jacobi`` PageRank, a busy rank): the rank's kept ``sum |r| + |pools|``;
        then only the slot buffers are summed and ``sum x`` is the kept one (a busy rank's
        wave never ends the run, so its figures steer thresholds and traces only; the
        waves whose bound can end the run have every rank passive, and recount).
        ``slots``: with ``rl``, the slot buffers' ``sum |.|`` as the caller knows it
        (:meth:`.asap._Solve._slot_mass`), else summed here."""
        if rl is not None and self.jac and not self.prog:
            if slots is None:
                slots = _local.abs_sum(self.acc, self.nloc, len(self.acc))
            return rl + slots + float(np.abs(self.dbuf).sum()), self.sx, 0.0
        sx, sa, signed = _local.wave_sums(self.x, self.acc)
        self.sx = sx
        if self.jac:
            pend, dbuf = self.pend, self.dbuf
            sa += abs(float(pend[0])) + abs(float(pend[1])) + float(np.abs(dbuf).sum())
            return sa, sx, signed
        return signed, sx, signed

    def check_mass(self, comm):
        """Mass conservation at a consistent cut (debug; collective; counted on the solver).

        ``push`` form: ``sum x + (residuals + buffered + in flight + leaked) / (1-alpha)
        = 1``.  ``jacobi`` form: nothing is absorbed, so ``residuals + buffered + pools
        + in flight = 0`` (the pools count as leaked) and ``sum x`` stays 1 up to it.
        """
        sol = self.sol
        leaked = self.leaked + self.pend.sum() + self.dbuf.sum()
        loc = np.array([self.x.sum(), self.acc.sum(), leaked])
        tot = np.zeros(3)
        comm.Allreduce(loc, tot, op=mpi().SUM)
        if self.jac:
            total, what = tot[1] + tot[2], "residuals + buffered + pools + in flight"
            err = abs(total)
        else:
            total = tot[0] + (tot[1] + tot[2]) / (1.0 - self.alpha)
            what = "values + residuals + buffered + in flight + leaked"
            err = abs(total - 1.0)
        sol.mass_checks += 1
        sol.max_mass_error = max(sol.max_mass_error, err)
        if err > 1e-9:
            raise RuntimeError(f"PageRank mass not conserved: {what} = {total!r} "
                               f"(expected {0 if self.jac else 1})")
