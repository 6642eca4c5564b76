"""Distributed execution of user vertex programs on MPI ranks (BSP and ASAP).

Rationale
---------
What: :func:`run` executes any :class:`asapgraph.programs.VertexProgram` on a graph
partitioned over the ranks of a communicator, with the semantics of the single-process
runner (:mod:`asapgraph.engine.single`): same callbacks, called collectively with
arrays over the rank's owned vertices, same termination tests, same result layout.

Which engine.  Accumulative sum programs with the standard callbacks (sum combiner, edge
op copy/mul, float64, no ``aggregate``/``post_delta``/``direction_at`` override) are
compiled by :mod:`.sum_program` onto the tuned PageRank stack (NOTIFY-ACK, stochastic
reduce, 16-bit messages, counting-wave termination, emulation; ``stats["engine"] ==
"tuned-sum"``, ``stats["error_bound"]``), and the built-in ``PageRankProgram`` runs on the
PageRank solvers themselves.  Accumulative min/max programs (min/max combiner, edge op
copy/mul/add/add_one, int64 or float64, no ``direction_at``; the built-in SSSP, BFS, WCC)
run on the same loops with a min/max state (:mod:`.minmax_program`: exact (slot, value)
messages combined per peer, ``stats["engine"] == "tuned-minmax"``), except for
``run(..., steps=k)``, which keeps the single-process meaning of a step (one hop).
Everything else -- value-form programs, sum programs with hooks, min/max programs with
``direction_at`` or exact steps -- runs on the engine described below (which ignores
the ASAP options of ``engine_options``).

Layout.  Edges are shuffled to the owner of an endpoint (the partitioners of
:mod:`.partition`).  For every direction a program uses (``out``: u->v, ``in``: v->u,
``both``: the union, so a self-loop or a reciprocal pair counts twice exactly as in the
single-process undirected view) the engine builds, once, a *side*: a local CSR whose rows
are owned vertices and whose columns are owned vertices (``< nloc``) or *slots*
(``nloc + s``), one slot per (peer rank, remote vertex), ordered by peer then dense id,
so that a peer's slots are one contiguous range; each peer learns once which of its
vertices our slots stand for (``in_maps``).  Two forms:

* push form (rows = message senders), used for built-in combiners (sum/min/max) with a
  built-in edge operator: a superstep runs the Cython ``gather_pull`` of
  :mod:`asapgraph.kernels._programs` over the *transposed* local CSR (every target, owned
  or slot, lists its local sources; no atomics), or ``push_sparse`` for small frontiers.
  Messages to remote targets are therefore already combined per (peer, target vertex)
  with the program's combiner; one typed message per peer carries ``(slot index, value)``
  pairs of the slots that received something, and the owner folds them in with the same
  combiner (``numpy`` ufunc on unique indices), setting ``has_msg``.
* pull form (rows = message receivers, columns = senders with ghost slots), used for the
  ``collect`` combiner, custom ``message()`` functions and custom ufunc combiners:
  owners send the values of their *active* boundary vertices (one typed message per
  peer), and every message is formed and combined at the target's owner, exactly as in
  the single-process numpy path.

Messages are int64 arrays ``[k, idx_0..idx_{k-1}, raw value bytes]`` (typed buffers, no
pickling), sent with ``Isend`` and received with ``Probe``/``Recv`` on a private
duplicate of the communicator (so no message of a run can match another run's receive).

BSP: superstep = edge map (above), exchange with exactly the peers of the side (every
peer pair exchanges one, possibly empty, message per superstep, so the receive count
is known), ``apply`` on owned vertices, aggregates and the convergence test by
``Allreduce`` (``ctx.allreduce``).  Accumulative programs run the synchronous delta form
(Jacobi), value-form programs the value form, both as in the single-process runner, so
the iterates equal the single-process ones up to floating-point summation order.

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

Termination (sound, no barrier): *waves* of ``Iallreduce`` over
``(messages sent, messages received, busy, dirty, capped)`` plus the aggregates.  A rank
joins the next wave only when it is locally quiescent (or capped), and keeps serving
messages while a wave is in flight.  ``dirty`` says that the rank received a message or
processed a vertex since its previous contribution, or sent one (redundant with the rule
below, kept as a cheap second guard).  ``busy`` covers local deltas above the threshold
*and* boundary entries above it held back by the flush interval: a rank joins a wave
only when it will send nothing more unless it first receives something (invariant P).
The run stops at the first wave in
which ``sent == received`` and nobody is busy or dirty.  Why this is sound: a wave can
only start at a rank after the previous wave completed there, i.e. after every rank made
its previous contribution; so every message counted as received (by some rank before
its previous contribution) was sent before the current contributions, hence is counted
as sent; ``sent == received`` then means that no message sent before the current
contributions is in flight, and since no rank received anything between its two
contributions, no rank was re-activated in that interval; an idle rank can only become
active by receiving (invariant P: this is what breaks if a rank holding a sendable
boundary entry joins a wave -- fixed bug: the PageRank ``post_delta`` path cleared
``busy`` while entries were held back by ``flush_interval``; they were sent after the
contribution and the wave declared termination with them in flight), so nothing is in
flight and nothing can ever be sent again
(Mattern's counting method, "Algorithms for distributed termination detection",
Distributed Computing 2(3), 1987, with Iallreduce waves in place of the token).  Then
the pending delta mass is at most ``n * tol / n = tol`` (sums), or no delta improves a
value (min/max): the single-process ASAP criterion (the threshold is ``tol / (n + slots)``
so that entries held back in the boundary buffers, at most ``thr`` each, are covered too;
they are delivered by one final exchange).  ``max_iter`` caps the waves (reported as the
iterations) and, as a safety net, ``100 * max_iter`` local sweeps per rank; a capped rank
joins a wave with ``capped = 1`` and the whole job stops at that wave.  After every stop
the per-pair message counts are compared (one ``Alltoall``) and messages still in flight
are received and delivered: expected after a capped stop; after a converged stop they
would betray an unsound termination and are counted in ``stats["late_messages"]``
(must be 0), so no message can ever leak into the next run.  Boundary buffers are sent at most once
per ``flush_interval`` (1 ms) per peer: without this coalescing, every small arrival fans
out into messages to every peer and the message count grows geometrically.  Messages
carry the run's number (``epoch``), a guard only: a message of another run is
discarded and counted in ``stats["stale_messages"]`` (must be 0).  With ``STRICT``
(``ASAPGRAPH_STRICT_ASAP=1``, or ``ASAPGRAPH_DEBUG_ASAP=1``) a run with stale or late
messages, or in which a rank joined a wave holding a sendable boundary entry, raises
``AssertionError`` on every rank.

Results: gathered to rank 0 (values ordered by increasing original id, as the
single-process result); other ranks get a partial :class:`ProgramResult` with
``values = None`` and ``ids = None`` (iterations, converged and stats are the same).

References: Malewicz et al., "Pregel", SIGMOD 2010; Zhu et al., "Gemini", OSDI 2016
(dense/sparse signal-slot modes, chunked partitions); Zhang, Gao, Gao, Wang, "Maiter",
IEEE TPDS 25(8), 2014; Mattern, Distributed Computing 2(3), 1987.
"""
from __future__ import annotations

import os
import sys
import time

import numpy as np

from asapgraph import options as _options
from asapgraph.errors import InputError
from asapgraph.kernels import _programs as K
from asapgraph.engine.program import COMBINERS, EDGE_OPS, Context, VertexProgram, \
    combiner_identity, exact_steps, finish_steps, validate_program
from asapgraph.engine.single import ProgramResult, _better, _count, _reduce_aggregates, \
    generic_edge_map, value_form_loop
from asapgraph.comm.mpi import agree, alltoallv, gatherv, mpi, oversubscribed
from asapgraph.engine import minmax_program as MM  # (imported here: not part of a run's time)
from asapgraph.engine import sum_program as SP
from asapgraph.partition.partitioners import Partition, range_partition

__all__ = ["run", "load", "ProgramGraph"]

_TAG_BSP = 311
_TAG_ASAP = 312
_EMPTY_W = np.zeros(0, dtype=np.float64)
_EMPTY_U8 = np.zeros(0, dtype=np.uint8)
_PUSH_FRACTION = 20  # as the single-process runner: sparse push below m / 20 work
_RUNS = 0
_DEBUG = os.environ.get("ASAPGRAPH_DEBUG_ASAP", "") not in ("", "0")
#: raise (collectively) when an ASAP run saw a stale or late message; on in debug runs,
#: with ASAPGRAPH_STRICT_ASAP=1, or by setting ``asapgraph.engine.distributed.STRICT = True``
STRICT = _DEBUG or os.environ.get("ASAPGRAPH_STRICT_ASAP", "") not in ("", "0")


# ============================================================================ loading


class ProgramGraph:
    """One rank's share of a graph for vertex programs (collective construction).

    Attributes
    ----------
    n, m : int
        Global vertex and edge counts.
    nloc : int
        Number of owned vertices; ``owned`` their dense ids (sorted), ``orig`` their
        original ids.
    src, dst, w : arrays
        The rank's edges (dense ids; ``src`` owned by this rank), ``w`` float64 or None.
    out_degree, in_degree, out_weight : arrays over owned vertices.
    part : Partition
    source : str or None
        Where the graph came from (for error messages).
    """

    def __init__(self, comm, part, n, src, dst, w, orig, source):
        MPI = mpi()
        me = comm.Get_rank()
        self.comm, self.part, self.n, self.source = comm, part, int(n), source
        self.owned = part.owned(me)
        self.nloc = len(self.owned)
        self.src, self.dst, self.w = src, dst, w
        self.orig = np.asarray(orig, dtype=np.int64)
        self.m = int(comm.allreduce(len(src), op=MPI.SUM))
        self.weighted = w is not None
        su = self._local(src)
        self.out_degree = np.bincount(su, minlength=self.nloc).astype(np.int64)
        self.out_weight = (np.bincount(su, weights=w, minlength=self.nloc)
                           if w is not None else None)
        own = part.owner(dst)
        o = np.argsort(own, kind="stable")
        got, _ = alltoallv(comm, dst[o].astype(np.int64), np.bincount(own, minlength=comm.Get_size()))
        self.in_degree = np.bincount(self._local(got), minlength=self.nloc).astype(np.int64)
        self._sides = {}

    def _local(self, v):
        return np.asarray(self.part.local_index(self.part_rank(), v, self.owned), dtype=np.int64)

    def part_rank(self):
        return self.comm.Get_rank()

    def dense_id(self, original, what="source"):
        """Dense id of the vertex with original id ``original`` (collective).

        Raises ``InputError`` (on every rank) when no rank holds it.
        """
        MPI = mpi()
        hit = np.flatnonzero(self.orig == int(original))
        mine = int(self.owned[hit[0]]) if hit.size else self.n
        d = int(self.comm.allreduce(mine, op=MPI.MIN))
        if d == self.n:
            raise InputError(self.source if isinstance(self.source, str) else None, None,
                             f"{what} vertex {original} is not in the graph")
        return d

    def side(self, direction, form):
        """The local CSR of ``direction`` (``out``/``in``/``both``) in ``form`` push/pull."""
        key = (direction, form)
        if key not in self._sides:
            # message-flow edges a->b; push stores them at owner(a), pull at owner(b)
            flows = {"out": [(self.src, self.dst)], "in": [(self.dst, self.src)],
                     "both": [(self.src, self.dst), (self.dst, self.src)]}[direction]
            rows, cols, ws = [], [], []
            for a, b in flows:
                r, c = (a, b) if form == "push" else (b, a)
                rows.append(r)
                cols.append(c)
                ws.append(self.w)
            r = np.concatenate(rows).astype(np.int64)
            c = np.concatenate(cols).astype(np.int64)
            w = None if self.w is None else np.concatenate(ws)
            self._sides[key] = _Side(self.comm, self.part, self, r, c, w)
        return self._sides[key]


class _Side:
    """Local CSR (rows owned, columns owned or slots) with its per-peer slot maps."""

    def __init__(self, comm, part, g, rows, cols, w):
        K_, me = comm.Get_size(), comm.Get_rank()
        n, nloc = g.n, g.nloc
        # shuffle edges to the owner of their row end (those already owned stay)
        own = part.owner(rows)
        if K_ > 1:  # collective on every rank, even when all its edges are already home
            o = np.argsort(own, kind="stable")
            cnt = np.bincount(own, minlength=K_)
            rows, _ = alltoallv(comm, rows[o], cnt)
            cols, _ = alltoallv(comm, cols[o], cnt)
            w = None if w is None else alltoallv(comm, w[o], cnt)[0]
        ru = g._local(rows)
        o = np.argsort(ru, kind="stable")
        ru, cols = ru[o], cols[o]
        self.w = None if w is None else np.ascontiguousarray(w[o], dtype=np.float64)
        self.indptr = np.zeros(nloc + 1, dtype=np.int64)
        np.cumsum(np.bincount(ru, minlength=nloc), out=self.indptr[1:])
        cown = part.owner(cols)
        col = np.empty(len(cols), dtype=np.int64)
        loc = cown == me
        col[loc] = g._local(cols[loc])
        rem = np.flatnonzero(~loc)
        key = cown[rem].astype(np.int64) * np.int64(n) + cols[rem]
        ukey, inv = np.unique(key, return_inverse=True)
        col[rem] = nloc + inv.reshape(-1)
        self.col = col
        self.nloc, self.nslots = nloc, len(ukey)
        slot_peer = ukey // n
        slot_vertex = ukey % n
        pc = np.bincount(slot_peer, minlength=K_).astype(np.int64)
        self.out_peers = np.flatnonzero(pc).astype(np.int64)
        self.out_off = np.concatenate([[0], np.cumsum(pc[self.out_peers])]).astype(np.int64)
        recv, rc = alltoallv(comm, slot_vertex.astype(np.int64), pc)
        self.in_peers = np.flatnonzero(rc).astype(np.int64)
        roff = np.concatenate([[0], np.cumsum(rc)])
        self.in_maps = [g._local(recv[roff[q]:roff[q + 1]]) for q in self.in_peers]
        self.in_index = {int(q): j for j, q in enumerate(self.in_peers)}
        self.out_index = {int(q): j for j, q in enumerate(self.out_peers)}
        self._t = None

    def transposed(self):
        """CSR over targets ``0..nloc+nslots-1`` listing local sources (push gathers)."""
        if self._t is None:
            nt = self.nloc + self.nslots
            src = np.repeat(np.arange(self.nloc, dtype=np.int64), np.diff(self.indptr))
            o = np.argsort(self.col, kind="stable")
            tp = np.zeros(nt + 1, dtype=np.int64)
            np.cumsum(np.bincount(self.col, minlength=nt), out=tp[1:])
            tw = _EMPTY_W if self.w is None else np.ascontiguousarray(self.w[o])
            self._t = (tp, np.ascontiguousarray(src[o]), tw)
        return self._t


def _build(comm, src, dst, w, n, partition, idmap_original, source):
    MPI = mpi()
    K_ = comm.Get_size()
    if partition == "range":
        part = range_partition(comm, src, n)
    elif partition == "hash":
        part = Partition("hash", K_, n)
    else:
        raise ValueError(f"unknown partitioner {partition!r} (use 'range' or 'hash')")
    own = part.owner(src)
    o = np.argsort(own, kind="stable")
    cnt = np.bincount(own, minlength=K_)
    s, _ = alltoallv(comm, src[o].astype(np.int64), cnt)
    d, _ = alltoallv(comm, dst[o].astype(np.int64), cnt)
    ww = None if w is None else alltoallv(comm, np.asarray(w, dtype=np.float64)[o], cnt)[0]
    owned = part.owned(comm.Get_rank())
    orig = idmap_original(owned)
    del MPI
    return ProgramGraph(comm, part, n, s, d, ww, orig, source)


def load(source, comm=None, partition="range", weighted=False, undirected=False, weight_col=None,
         chunk_bytes=1 << 21, seed=None):
    """Read and partition a graph for :func:`run` (collective; reusable by several runs).

    Parameters
    ----------
    source : str or Graph
        Edge-list file or generator spec (read in parallel as :func:`asapgraph.engine.load`
        does), or a single-process :class:`asapgraph.graph.Graph` present on every rank
        (each rank then takes a slice of its edges).
    comm : mpi4py communicator (default COMM_WORLD)
    partition : {"range", "hash"}
    weighted, undirected, weight_col, chunk_bytes, seed : as :func:`asapgraph.engine.load`.

    Returns
    -------
    ProgramGraph
    """
    from asapgraph.graph.core import Graph
    from asapgraph.partition.loader import read_dense_edges

    MPI = mpi()
    if comm is None:
        comm = MPI.COMM_WORLD
    K_, me = comm.Get_size(), comm.Get_rank()
    if isinstance(source, Graph):
        s, d, w = source.edges()
        lo, hi = source.m * me // K_, source.m * (me + 1) // K_
        ids = source.original_ids()
        return _build(comm, s[lo:hi], d[lo:hi], None if w is None else w[lo:hi], source.n,
                      partition, lambda v: ids[v], getattr(source, "source", None))
    src, dst, w, n, idmap = read_dense_edges(source, comm, weighted, undirected,
                                             _options.weight_col_index(weight_col), chunk_bytes,
                                             seed)
    return _build(comm, np.asarray(src, np.int64), np.asarray(dst, np.int64), w, n, partition,
                  idmap.original, source if isinstance(source, str) else None)


# ============================================================================ messages


def _pack(idx, vals, epoch=0):
    """``[epoch, k, idx..., raw bytes of vals]`` as one int64 array (typed, no pickling).

    ``epoch`` numbers the run: a receiver discards a message of another run (a
    defensive measure: a freed communicator's context may be reused by the next run).
    """
    k = len(idx)
    raw = np.ascontiguousarray(vals).view(np.uint8).reshape(-1)
    nw = (raw.size + 7) // 8
    buf = np.zeros(2 + k + nw, dtype=np.int64)
    buf[0] = epoch
    buf[1] = k
    buf[2:2 + k] = idx
    if raw.size:
        buf[2 + k:].view(np.uint8)[:raw.size] = raw
    return buf


def _unpack(buf, dtype):
    k = int(buf[1])
    dtype = np.dtype(dtype)
    idx = buf[2:2 + k]
    vals = buf[2 + k:].view(np.uint8)[:k * dtype.itemsize].view(dtype)
    return idx, vals


def _recv(comm, source, tag):
    MPI = mpi()
    st = MPI.Status()
    comm.Probe(source=source, tag=tag, status=st)
    buf = np.empty(st.Get_count(MPI.INT64_T), dtype=np.int64)
    comm.Recv([buf, MPI.INT64_T], source=st.Get_source(), tag=tag)
    return st.Get_source(), buf


def _ufunc(comb):
    return {"sum": np.add, "min": np.minimum, "max": np.maximum}.get(comb, comb)


# ============================================================================ context


class _LocalView:
    """What ``ctx.graph`` shows a program on a rank (its share of the graph)."""

    def __init__(self, g):
        self.n, self.m = g.n, g.m
        self.weights = g.w
        self.src, self.dst = g.src, g.dst   # this rank's edges, dense global ids
        self.source = g.source
        self.out_degree = g.out_degree
        self.out_weight = g.out_weight
        self.weighted = g.weighted
        self.nloc = g.nloc


def _context(g, comm, mode, tol, max_iter):
    ctx = Context.__new__(Context)
    ctx.graph = _LocalView(g)
    ctx.n = g.n
    ctx.n_local = g.nloc
    ctx.vertices = g.owned.astype(np.int64)
    ctx.ids = g.orig
    ctx.out_degree = g.out_degree
    ctx.in_degree = g.in_degree
    ctx.out_weight = g.out_weight
    ctx.weighted = g.weighted
    ctx.superstep = 0
    ctx.aggregates = {}
    ctx.tol, ctx.max_iter, ctx.mode = tol, max_iter, mode
    ctx.comm = comm
    ctx.rank, ctx.size = comm.Get_rank(), comm.Get_size()
    ctx.direction = "out"
    return ctx


def _collective(comm, fn, *a):
    """Run a program callback; an exception on any rank is raised on every rank."""
    err, out = None, None
    try:
        out = fn(*a)
    except Exception as e:  # noqa: BLE001
        err = e
    agree(comm, err)
    return out


# ============================================================================ BSP edge map


class _BSPMapper:
    """Distributed edge map of one superstep: ``(combined, has_msg)`` over owned vertices."""

    def __init__(self, program, g, comm):
        self.p, self.g, self.comm = program, g, comm
        comb, op = program.combiner, program.edge_op
        self.builtin = (isinstance(comb, str) and comb in COMBINERS and op is not None
                        and np.dtype(program.value_dtype) in (np.dtype(np.float64), np.dtype(np.int64)))
        self.edges = 0
        self.messages = 0
        self.bytes = 0
        self.dense_steps = 0
        self.sparse_steps = 0

    def _w(self, w):
        return w if (w is not None and len(w) and self.p.use_weights) else _EMPTY_W

    def __call__(self, ctx, direction, x, active=None):
        if self.builtin:
            return self._push(ctx, direction, x, active)
        return self._pull(ctx, direction, x, active)

    # ---- push form: combine per target locally, send per-peer (slot, value) pairs
    def _push(self, ctx, direction, x, active):
        p, comm, MPI = self.p, self.comm, mpi()
        sd = self.g.side(direction, "push")
        dtype = np.dtype(p.value_dtype)
        x = np.ascontiguousarray(x, dtype=dtype)
        ident = combiner_identity(p.combiner, dtype)
        cc, oc = COMBINERS[p.combiner], EDGE_OPS[p.edge_op]
        nt = sd.nloc + sd.nslots
        out = has = None
        if active is not None:
            frontier = np.flatnonzero(active).astype(np.int64)
            work = int(np.sum(sd.indptr[frontier + 1] - sd.indptr[frontier]))
            if work + frontier.size < max(len(sd.col), 1) // _PUSH_FRACTION:
                out = np.full(nt, ident, dtype=dtype)
                has = np.zeros(nt, dtype=np.uint8)
                self.edges += K.push_sparse(sd.indptr, sd.col, self._w(sd.w), frontier, x, oc, cc,
                                            out, has)
                self.sparse_steps += 1
        if out is None:
            tp, ts, tw = sd.transposed()
            out = np.empty(nt, dtype=dtype)
            has = np.empty(nt, dtype=np.uint8)
            mask = _EMPTY_U8 if active is None else np.ascontiguousarray(active, dtype=np.uint8)
            self.edges += K.gather_pull(tp, ts, self._w(tw), x, mask, oc, cc, ident, out, has)
            self.dense_steps += 1
        reqs, bufs = [], []
        for j, q in enumerate(sd.out_peers):
            lo, hi = sd.nloc + sd.out_off[j], sd.nloc + sd.out_off[j + 1]
            idx = np.flatnonzero(has[lo:hi])
            b = _pack(idx, out[lo:hi][idx])
            bufs.append(b)
            reqs.append(comm.Isend([b, MPI.INT64_T], dest=int(q), tag=_TAG_BSP))
            self.messages += 1
            self.bytes += b.nbytes
        res, got = out[:sd.nloc], has[:sd.nloc]
        uf = _ufunc(p.combiner)
        for j, q in enumerate(sd.in_peers):
            _, b = _recv(comm, int(q), _TAG_BSP)
            idx, vals = _unpack(b, dtype)
            t = sd.in_maps[j][idx]
            res[t] = uf(res[t], vals)
            got[t] = 1
        MPI.Request.Waitall(reqs)
        return res, got.view(bool)

    # ---- pull form: ship active boundary values, form messages at the target's owner
    def _pull(self, ctx, direction, x, active):
        comm, MPI = self.comm, mpi()
        sd = self.g.side(direction, "pull")
        x = np.asarray(x)
        amask = None if active is None else np.asarray(active, dtype=bool)
        reqs, bufs = [], []
        for j, q in enumerate(sd.in_peers):
            mp = sd.in_maps[j]
            idx = np.arange(len(mp)) if amask is None else np.flatnonzero(amask[mp])
            b = _pack(idx, np.ascontiguousarray(x[mp[idx]]))
            bufs.append(b)
            reqs.append(comm.Isend([b, MPI.INT64_T], dest=int(q), tag=_TAG_BSP))
            self.messages += 1
            self.bytes += b.nbytes
        xe = np.zeros(sd.nloc + sd.nslots, dtype=x.dtype)
        xe[:sd.nloc] = x
        ae = np.zeros(sd.nloc + sd.nslots, dtype=bool)
        ae[:sd.nloc] = True if amask is None else amask
        for j, q in enumerate(sd.out_peers):
            _, b = _recv(comm, int(q), _TAG_BSP)
            idx, vals = _unpack(b, x.dtype)
            t = sd.nloc + sd.out_off[j] + idx
            xe[t] = vals
            ae[t] = True
        MPI.Request.Waitall(reqs)
        return self._generic(ctx, sd, xe, ae)

    def _generic(self, ctx, sd, x, active):
        """The single-process numpy path (:func:`.single.generic_edge_map`), locally."""
        prog = self.p
        out, edges = generic_edge_map(prog, ctx, prog.combiner, prog.edge_op, sd.indptr, sd.col,
                                      sd.w, x, active, sd.nloc)
        self.edges += edges
        self.dense_steps += 1
        return out


# ============================================================================ BSP engines


def _bsp_value(program, ctx, emap, progress):
    return value_form_loop(program, ctx, _collective(ctx.comm, program.init, ctx),
                           lambda d, x, a: emap(ctx, d, x, a),
                           lambda it, r: _iter(progress, ctx, it, r))


def _iter(progress, ctx, it, residual):
    if progress is not None and ctx.rank == 0:
        progress.iteration(it, residual)


def _bsp_delta(program, ctx, emap, progress, coef):
    comb = program.combiner
    values, deltas = (np.array(a, dtype=program.value_dtype) for a in
                      _collective(ctx.comm, program.init_delta, ctx))
    thr = ctx.tol / max(ctx.n, 1)
    converged, residual, it_times, it = False, None, [], 0
    custom_post = getattr(type(program), "post_delta", VertexProgram.post_delta) is not VertexProgram.post_delta
    if comb == "sum":
        sent = np.empty(ctx.n_local)
        x = np.empty(ctx.n_local)
    for it in range(ctx.max_iter):
        ctx.superstep = it
        ctx.direction = direction = program.direction_at(ctx)
        t0 = time.perf_counter()
        if comb == "sum":
            nsel = int(ctx.allreduce(K.delta_select(values, deltas, _EMPTY_W if coef is None else coef,
                                                    thr, sent, x), "sum"))
            if nsel == 0:
                converged = True
                break
            sel = None if nsel * _PUSH_FRACTION > ctx.n else np.abs(sent) > 0
            combined, _ = emap(ctx, direction, x, sel)
            combined = np.ascontiguousarray(combined, dtype=np.float64)
            ctx.aggregates = _reduce_aggregates(program, ctx, program.aggregate(ctx, sent))
            if not custom_post:
                local = K.add_abs_sum(deltas, combined)
            else:
                K.add_abs_sum(deltas, combined)
                deltas = np.ascontiguousarray(program.post_delta(ctx, deltas), dtype=np.float64)
                local = K.add_abs_sum(deltas, _EMPTY_W)
            residual = float(ctx.allreduce(float(local), "sum"))
            _options.check_residual(residual, program.name, it + 1)  # same on every rank
            it_times.append(time.perf_counter() - t0)
            _iter(progress, ctx, it + 1, residual)
            if residual <= ctx.tol:
                converged = True
                it += 1
                break
        else:
            sel = _better(comb, deltas, values)
            if _count(ctx, sel) == 0:
                converged = True
                break
            values[sel] = deltas[sel]
            combined, has = emap(ctx, direction, values, sel)
            _ufunc(comb)(deltas, combined, out=deltas)
            it_times.append(time.perf_counter() - t0)
    else:
        it = ctx.max_iter
    if comb == "sum":
        values += deltas
    return values, it, converged, residual, it_times


# ============================================================================ ASAP engine


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


def _asap(program, ctx, g, comm, progress, coef, flush_interval=1e-3, epoch=0):
    """Asynchronous delta engine (see the module docstring); returns the local values."""
    MPI = mpi()
    comb = program.combiner
    direction = program.direction_at(ctx)
    ctx.direction = direction
    sd = g.side(direction, "push")
    nloc, nt = sd.nloc, sd.nloc + sd.nslots
    dtype = np.dtype(program.value_dtype)
    v0, d0 = _collective(comm, program.init_delta, ctx)
    ident = combiner_identity(comb, dtype)
    values = np.full(nt, 0 if comb == "sum" else ident, dtype=dtype)
    deltas = np.full(nt, 0 if comb == "sum" else ident, dtype=dtype)
    values[:nloc] = v0
    deltas[:nloc] = d0
    w = sd.w if (sd.w is not None and program.use_weights) else _EMPTY_W
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
        queue = np.flatnonzero(_better(comb, deltas[:nloc], values[:nloc])).astype(np.int64)
        queued[queue] = 1
        nbuf = np.empty(nt, dtype=np.int64)
        better = np.less if comb == "min" else np.greater
    dirty = False

    def send(j, idx, vals):
        nonlocal dirty
        q = int(sd.out_peers[j])
        dirty = True  # a rank that sent since its last contribution reports dirty
        b = _pack(idx, vals, epoch)
        pending.append((comm.Isend([b, MPI.INT64_T], dest=q, tag=_TAG_ASAP), b))
        sent_to[q] += 1
        st.sent += 1
        st.bytes += b.nbytes

    def deliver(src, b):
        nonlocal queue
        j = sd.in_index[src]
        idx, vals = _unpack(b, dtype)
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
        while comm.Iprobe(source=MPI.ANY_SOURCE, tag=_TAG_ASAP, status=status):
            cnt = status.Get_count(MPI.INT64_T)
            src = status.Get_source()
            b = np.empty(cnt, dtype=np.int64)
            comm.Recv([b, MPI.INT64_T], source=src, tag=_TAG_ASAP)
            if b[0] != epoch:
                st.stale += 1
                if _DEBUG:
                    _err(f"[{ctx.rank}] stale message of run {int(b[0])} from {src} in run {epoch}: "
                         f"{_unpack(b, dtype)}")
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

    wave = None          # (requests, buffers)
    agg_names = None
    capped = False
    converged = False
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
        if _DEBUG and time.perf_counter() - t_dbg[0] > 2.0:
            t_dbg[0] = time.perf_counter()
            _err(f"[{ctx.rank}] sweeps {st.sweeps} sent {st.sent} recv {st.recv} waves {st.waves} "
                 f"stale {st.stale} "
                 f"pending {len(pending)} busy {busy} wave {wave is not None} "
                 f"mass {float(np.abs(deltas[:nloc]).sum()) if is_sum else queue.size}")
        if pending:
            done = MPI.Request.Testsome([r for r, _ in pending])
            if done:
                ds = set(done)
                pending[:] = [x for i, x in enumerate(pending) if i not in ds]
        if wave is not None:
            if MPI.Request.Testall(wave[0]):
                cnt, aggs = wave[1][1], wave[2]
                st.waves += 1
                wave = None
                if cnt[0] == cnt[1] and cnt[2] == 0 and cnt[3] == 0:
                    converged = True
                    break
                if cnt[4] > 0 or st.waves >= ctx.max_iter:
                    break
                if agg_names and aggs is not None:
                    ctx.aggregates = aggs()
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
                    progress.iteration(st.waves, float(cnt[0]))
            elif not busy:
                time.sleep(5e-5)  # idle: do not spin on an oversubscribed core
        if wave is None and (not busy or capped):
            if STRICT and is_sum and not capped and sd.nslots and \
                    bool(np.any(np.abs(deltas[nloc:]) > thr)):
                st.late += 1  # passive with a sendable boundary entry: would send unprompted
            # join the next wave: counters, then the aggregates of the deltas sent since
            vec = np.array([st.sent, st.recv, 1.0 if busy else 0.0, 1.0 if dirty else 0.0,
                            1.0 if capped else 0.0])
            dirty = False
            res = np.empty_like(vec)
            reqs = [comm.Iallreduce([vec, MPI.DOUBLE], [res, MPI.DOUBLE], op=MPI.SUM)]
            bufs = [vec, res]
            aggf = None
            if custom_agg:
                partial = program.aggregate(ctx, sent_mass[:nloc]) or {}
                sent_mass[:] = 0.0
                agg_names = sorted(partial)
                ops = getattr(program, "aggregators", {}) or {}
                outs = []
                for k in agg_names:
                    a = np.atleast_1d(np.asarray(partial[k], dtype=np.float64)).copy()
                    r = np.empty_like(a)
                    mop = {"sum": MPI.SUM, "min": MPI.MIN, "max": MPI.MAX}[ops.get(k, "sum")]
                    reqs.append(comm.Iallreduce([a, MPI.DOUBLE], [r, MPI.DOUBLE], op=mop))
                    bufs.append(a)
                    outs.append((k, r, np.ndim(partial[k])))

                def aggf(outs=outs):
                    return {k: (float(r[0]) if nd == 0 else r) for k, r, nd in outs}
            wave = (reqs, bufs, aggf)
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
            s, b = _recv(comm, int(src), _TAG_ASAP)
            if b[0] != epoch:
                st.stale += 1
                continue
            if converged:
                st.late += 1
                if _DEBUG:
                    _err(f"[{ctx.rank}] late message from {s} after termination: {_unpack(b, dtype)}")
            deliver(s, b)
    MPI.Request.Waitall([r for r, _ in pending])
    if is_sum:
        # the held boundary entries (each <= thr) join their owners' pending deltas
        reqs, bufs = [], []
        for j, q in enumerate(sd.out_peers):
            lo, hi = nloc + sd.out_off[j], nloc + sd.out_off[j + 1]
            idx = np.flatnonzero(deltas[lo:hi])
            bufs.append(_pack(idx, deltas[lo:hi][idx].copy()))
            reqs.append(comm.Isend([bufs[-1], MPI.INT64_T], dest=int(q), tag=_TAG_BSP))
        deltas[nloc:] = 0.0
        for j, q in enumerate(sd.in_peers):
            _, b = _recv(comm, int(q), _TAG_BSP)
            idx, vals = _unpack(b, dtype)
            deltas[sd.in_maps[j][idx]] += vals
        MPI.Request.Waitall(reqs)
        values[:nloc] += deltas[:nloc]
        residual = float(ctx.allreduce(float(np.abs(deltas[:nloc]).sum()), "sum"))
        _options.check_residual(residual, program.name, st.waves)
    else:
        residual = None
    st.seconds = time.perf_counter() - t_start
    return values[:nloc].copy(), st, converged, residual


# ============================================================================ public API


def run(program, source_or_loaded, comm=None, mode="bsp", partition="range", max_iter=None,
        tol=None, progress=None, engine_options=None, steps=None, **load_options):
    """Run a vertex program on the ranks of ``comm`` (collective).

    Parameters
    ----------
    program : VertexProgram instance or class
    source_or_loaded : str, ProgramGraph or Graph
        Edge-list path or generator spec (loaded with :func:`load` and ``load_options``:
        ``weighted``, ``undirected``, ``weight_col``, ``seed``), a :class:`ProgramGraph`
        from :func:`load` (reused; ``partition`` ignored), or a single-process ``Graph``
        held by every rank (each rank takes a slice of its edges).
    comm : mpi4py communicator, optional
        Default ``COMM_WORLD``.
    mode : {"bsp", "asap"}
        ASAP needs ``program.accumulative`` (``ValueError`` otherwise, as single-process).
    partition : {"range", "hash"}
    max_iter, tol : as :func:`asapgraph.programs.run` (ASAP: ``max_iter`` caps the
        termination waves, i.e. global rounds, which are reported as ``iterations``).
    progress : asapgraph.progress.Progress, optional (reported by rank 0).
    steps : int, optional
        Exactly this many supersteps (BSP), as :func:`asapgraph.programs.run`.
    engine_options : dict, optional
        ``fanout``, ``window``, ``approx``, ``seed`` (ASAP) and ``emulation`` for the
        accumulative sum programs that run on the tuned engine
        (:mod:`.sum_program`: ``stats["engine"] == "tuned-sum"``, with ``error_bound``)
        and the min/max programs (:mod:`.minmax_program`: ``"tuned-minmax"``; ``approx``
        does not apply to them).  Value-form programs, sum programs whose hooks that
        engine cannot express (``aggregate``, ``post_delta``, ``direction_at``; see
        :func:`.sum_program.reason_not_compiled`), min/max programs with
        ``direction_at``, and runs of exactly ``steps`` supersteps run on this module's
        engine, which ignores these options.

    Returns
    -------
    ProgramResult
        On rank 0: ``values`` over all vertices ordered by increasing original id, and
        ``ids``.  On other ranks: ``values`` and ``ids`` are None; ``iterations``,
        ``converged`` and ``stats`` are the same everywhere.
    """
    from asapgraph.graph.core import Graph

    MPI = mpi()
    comm = MPI.COMM_WORLD if comm is None else comm
    program = validate_program(program, mode)
    if steps is not None:  # k hops, as on one process: min/max programs on this module's BSP
        max_iter, tol = exact_steps(program, steps, mode)
        eo = dict(engine_options or {}, hop_supersteps=True)
        return finish_steps(run(program, source_or_loaded, comm, mode, partition, max_iter, tol,
                                progress, engine_options=eo, **load_options), steps)
    if isinstance(source_or_loaded, ProgramGraph):
        g = source_or_loaded
    elif isinstance(source_or_loaded, (str, os.PathLike, Graph)):
        src = os.fspath(source_or_loaded) if isinstance(source_or_loaded, os.PathLike) else source_or_loaded
        g = load(src, comm, partition=partition, **load_options)
    else:
        raise TypeError("source_or_loaded must be a path/spec, a Graph or a ProgramGraph "
                        f"(asapgraph.engine.distributed.load), not {type(source_or_loaded).__name__}")
    max_iter = _options.check_max_iter(program.default_max_iter if max_iter is None else max_iter)
    tol = _options.check_tol(program.default_tol if tol is None else tol)
    global _RUNS
    _RUNS += 1  # runs are collective: the same number on every rank
    rc = g.comm.Dup()  # private channel: no message of this run can match another's
    old = None
    threads = int(os.environ.get("OMP_NUM_THREADS", "0") or 0) or (os.cpu_count() or 1)
    if rc.Get_size() > 1 and oversubscribed(rc, threads, agree=False):
        # ranks sharing the cores: OpenMP teams of all cores per rank spin against each
        # other (measured 12x slower on 2 ranks / 2 cores); run the kernels on one thread
        old = K.set_parallel_threshold(1 << 62)
    try:
        with np.errstate(over="ignore", invalid="ignore"):  # divergence is reported, not warned
            return _run(program, g, rc, mode, max_iter, tol, progress, _RUNS, engine_options)
    finally:
        if old is not None:
            K.set_parallel_threshold(old)
        rc.Free()


def engine_kind(program):
    """Which engine runs ``program`` on ranks: "minmax", "sum" (the tuned loops), or the
    reason it runs on the general program engine."""
    if MM.reason_not_compiled(program) is None:
        return "minmax"
    reason = SP.reason_not_compiled(program)
    if reason is None or SP.is_plain_pagerank(program):
        return "sum"
    return reason


def _run(program, g, comm, mode, max_iter, tol, progress, epoch, engine_options=None):
    ctx = _context(g, comm, mode, tol, max_iter)
    comm.Barrier()
    t0 = time.perf_counter()
    _collective(comm, program.setup, ctx)
    ctx.tol = _options.engine_tol(program, ctx, tol)
    try:
        return _run_engine(program, g, comm, mode, max_iter, tol, progress, epoch, ctx, t0,
                           engine_options)
    except InputError as e:  # a residual that became non-finite: the same on every rank
        agree(comm, e)
        raise


def _run_engine(program, g, comm, mode, max_iter, tol, progress, epoch, ctx, t0, engine_options):
    emap = _BSPMapper(program, g, comm)
    extra, bound = {}, None
    kind = engine_kind(program)
    tuned = kind in ("sum", "minmax")
    minmax = kind == "minmax" and not (engine_options or {}).get("hop_supersteps")
    if minmax:  # min/max programs: the same loops with the min/max state and messages
        tuned = True
        inputs = _collective(comm, program.init_delta, ctx)
        state, iters, conv, residual, extra = MM.run_minmax_program(
            program, ctx, g, comm, mode, max_iter, engine_options, progress, inputs)
        residual = None  # as on one process (the pending count is ``error_bound``)
        it_times = []
    elif tuned and SP.is_plain_pagerank(program):  # PageRank's own solvers (pools for dangling)
        state, iters, conv, residual, extra = SP.run_pagerank_program(
            program, ctx, g, comm, mode, tol, max_iter, engine_options)
        bound = extra.pop("error_bound")  # the solvers' own certified bound
        it_times = []
        emap.edges, emap.messages, emap.bytes = 0, 0, 0
    elif tuned:  # the tuned BSP/ASAP engine (PageRank's solver with the program's coefficients)
        inputs = _collective(comm, SP.prepare, program, ctx)
        state, iters, conv, residual, extra = SP.run_sum_program(
            program, ctx, g, comm, mode, ctx.tol, max_iter, engine_options, progress, inputs)
        _options.check_residual(residual, program.name, iters)
        it_times = []
        emap.edges, emap.messages, emap.bytes = 0, 0, 0  # totals are in ``extra``
    elif program.accumulative:
        if program.combiner == "sum" and np.dtype(program.value_dtype) != np.float64:
            raise ValueError(f"{program.name}: sum-accumulative programs need value_dtype float64")
        coef = program.coef(ctx)
        coef = None if coef is None else np.ascontiguousarray(coef, dtype=np.float64)
        if mode == "bsp":
            state, iters, conv, residual, it_times = _bsp_delta(program, ctx, emap, progress, coef)
        else:
            state, st, conv, residual = _asap(program, ctx, g, comm, progress, coef, epoch=epoch)
            iters = st.waves  # global rounds (the same on every rank)
            it_times = []
            emap.edges, emap.messages, emap.bytes = st.edges, st.sent, st.bytes
            bad = np.array([st.stale, st.late], dtype=np.int64)
            comm.Allreduce(mpi().IN_PLACE, [bad, mpi().INT64_T], op=mpi().SUM)
            if STRICT and bad.any():  # the same decision on every rank: no hang
                raise AssertionError(f"{program.name} ASAP run {epoch}: {int(bad[0])} stale and "
                                     f"{int(bad[1])} late messages (termination is unsound)")
            extra = {"waves": st.waves, "stale_messages": int(bad[0]), "late_messages": int(bad[1]),
                     "local_sweeps_max": int(comm.allreduce(st.sweeps, op=mpi().MAX))}
    else:
        state, iters, conv, residual, it_times = _bsp_value(program, ctx, emap, progress)
    values = program.result(ctx, state)
    seconds = time.perf_counter() - t0
    MPI = mpi()
    tot = np.array([emap.edges, emap.messages, emap.bytes], dtype=np.int64)
    comm.Allreduce(MPI.IN_PLACE, [tot, MPI.INT64_T], op=MPI.SUM)
    if tuned:
        tot[:] = extra["edges_scanned"], extra["messages_sent"], extra["bytes_sent"]
    stats = {"mode": mode, "seconds": seconds, "edges_scanned": int(tot[0]),
             "messages_sent": int(tot[1]), "bytes_sent": int(tot[2]),
             "iteration_seconds": it_times, "dense_steps": emap.dense_steps,
             "sparse_steps": emap.sparse_steps, "residual": residual, "ranks": comm.Get_size(),
             "partition": g.part.kind, "engine": "distributed", **extra, "tol": tol,
             "error_bound": (bound if bound is not None
                             else _options.error_bound(program, ctx, residual, conv))}
    ids = gatherv(comm, g.orig)
    cols = values if isinstance(values, dict) else {None: values}
    gathered = {k: _gather_any(comm, np.asarray(v)) for k, v in cols.items()}
    name = getattr(program, "name", "program")
    if comm.Get_rank() == 0:
        o = np.argsort(ids, kind="stable")
        gathered = {k: v[o] for k, v in gathered.items()}
        out = gathered if not (None in gathered) else gathered[None]
        if progress is not None:
            progress.done(f"{name}: {iters} iterations, {seconds:.3f} s, {mode}, {comm.Get_size()} ranks")
        return ProgramResult(out, ids[o], iters, bool(conv), stats, name=name)
    return ProgramResult(None, None, iters, bool(conv), stats, name=name)


def _err(msg):
    sys.stderr.write(msg.rstrip("\n") + "\n")
    sys.stderr.flush()


def _gather_any(comm, arr):
    if arr.dtype == np.bool_:
        out = gatherv(comm, arr.view(np.uint8))
        return None if out is None else out.view(np.bool_)
    if arr.dtype in (np.dtype(np.int64), np.dtype(np.float64), np.dtype(np.int32), np.dtype(np.uint8)):
        return gatherv(comm, arr)
    parts = comm.gather(arr, root=0)  # unusual dtypes: small control path (pickled)
    return None if parts is None else np.concatenate(parts)
