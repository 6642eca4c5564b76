"""A rank's local graph: the shuffle of edges to their owners and the push layout.

Rationale
---------
Step 3 of the partitioned loader (:mod:`asapgraph.partition.loader`), once the owner
function (:mod:`asapgraph.partition.partitioners`) is agreed: every edge is sent to the
owner of its source in bounded rounds (Alltoallv of typed arrays straight into the
preallocated outputs), and the rank builds its :class:`LocalGraph`: the out-CSR of its
owned vertices by a counting sort, where a target owned elsewhere becomes a *slot*
(one per (peer, vertex), ordered by peer then dense id), per-peer slot ranges, and the
maps that tell which owned vertex each incoming slot of a peer stands for.  This push
layout is what the ASAP and BSP PageRank engines read; the pull layout of a BSP rank is
derived from it (:mod:`asapgraph.engine.pull`), unless the loader shipped in-rows instead
(:class:`asapgraph.partition.rows.InRows`, BSP PageRank's fresh unweighted loads).

Invariants: ``tgt < nloc`` is an owned vertex, ``tgt >= nloc`` an outgoing slot; rows
keep the received edge order (stable sort); the full-size arrays alive at the peak are
the local sources and targets, the sorted ``tgt`` and (weighted) ``coef``.
"""
from __future__ import annotations

import time

import numpy as np

from asapgraph.comm.mpi import alltoallv, alltoallv_into, mpi
from asapgraph.partition.memory import BLOCK, mem_mark, phase, trim_malloc

__all__ = ["LocalGraph", "build_local", "local_from_rows"]


class LocalGraph:
    """One rank's share: owned vertices, their out-edges, per-peer slots.

    Attributes
    ----------
    n, m : int
        Global vertex and edge counts.
    nloc : int
        Owned vertices; ``owned`` their dense ids (sorted), ``orig`` their original ids.
    indptr, tgt : arrays
        Local out-CSR; ``tgt < nloc`` is an owned vertex, ``tgt >= nloc`` an outgoing slot
        (int32 when ``nloc + nslots < 2**31``, else int64).
    coef, vcoef : float64 arrays
        Edge coefficient ``w / outw[u]`` per edge (weighted graphs; None otherwise) and
        ``1 / outdeg[u]`` per owned vertex (what every edge of ``u`` carries unweighted):
        an unweighted rank stores 4-8 bytes per edge instead of 16.
    dangling : uint8 array
        1 for owned vertices with no out-weight.
    out_peers : int64 array
        Ranks this rank sends to; ``out_off[j]:out_off[j+1]`` their slots (relative to nloc).
    in_peers : int64 array
        Ranks that send to this rank; ``in_maps[j]`` maps their slots to local indices.
    slot_vertex : int array
        Dense id of the vertex each outgoing slot stands for (``nslots``).
    """

    def stats(self):
        """Layout counters of this rank (computed once: rmat:20 on 4 ranks ~0.1 s)."""
        if getattr(self, "_stats", None) is None:
            self._stats = self._layout_stats()
        return dict(self._stats)

    def _layout_stats(self):
        from asapgraph.kernels import _graph

        bnd = np.zeros(self.nloc, dtype=np.uint8)
        for mp in self.in_maps:
            bnd[mp] = 1
        # sources of edges to remote slots (one compiled pass: a per-edge search took
        # ~0.1 s of a rank's run on rmat:20, 4 ranks)
        _graph.mark_rows_reaching(np.ascontiguousarray(self.indptr, dtype=np.int64),
                                  self.tgt, self.nloc, bnd)
        return {"vertices": int(self.nloc), "edges": int(self.mloc),
                "boundary_vertices": int(np.count_nonzero(bnd)),
                "remote_slots": int(self.nslots),
                "peers": int(len(set(self.out_peers.tolist()) | set(self.in_peers.tolist()))),
                "out_peers": self.out_peers.tolist(), "in_peers": self.in_peers.tolist()}


#: edges per round of the shuffle: 1M (12-16 MB of temporaries per round, a few percent of
#: a rank's edge arrays at the sizes where memory matters); 64K rounds cost 3.6 of the
#: 9.2 s of loading rmat:22 on 2 ranks in per-round overhead (owner search, sort, three
#: collectives)
SHUFFLE_BLOCK = 1 << 20


def _new_local(comm, part, n, mloc):
    """A :class:`LocalGraph` with this rank's sizes and owned vertices (collective: the
    global edge count is summed)."""
    lg = LocalGraph()
    lg.n = n
    lg.mloc = mloc
    lg.m = int(comm.allreduce(mloc, op=mpi().SUM))
    lg.owned = part.owned(comm.Get_rank())
    lg.nloc = len(lg.owned)
    return lg


def _shuffle(comm, part, arrays, chunk=BLOCK):
    """Send every edge to the owner of its source in bounded rounds; collective.

    ``arrays`` (``[src, dst]`` or ``[src, dst, w]``, aligned) is emptied here.  Each
    round sorts at most ``chunk`` local edges by owner and receives straight into the
    preallocated output arrays, so the only full-size temporaries are the outputs.
    """
    MPI = mpi()
    K = comm.Get_size()
    src = arrays[0]
    m = len(src)
    counts = np.zeros(K, dtype=np.int64)
    for a in range(0, m, chunk):
        counts += np.bincount(part.owner(src[a:a + chunk]), minlength=K)
    rtot = np.empty(K, dtype=np.int64)
    comm.Alltoall([counts, MPI.INT64_T], [rtot, MPI.INT64_T])
    out = [np.empty(int(rtot.sum()), dtype=x.dtype) for x in arrays]
    rounds = int(comm.allreduce(-(-m // chunk), op=MPI.MAX))
    pos = 0
    rc = np.empty(K, dtype=np.int64)
    for r in range(rounds):
        a, b = min(m, r * chunk), min(m, (r + 1) * chunk)
        own = part.owner(src[a:b])
        order = np.argsort(own, kind="stable")
        c = np.bincount(own, minlength=K).astype(np.int64)
        del own
        comm.Alltoall([c, MPI.INT64_T], [rc, MPI.INT64_T])
        got = int(rc.sum())
        for x, o in zip(arrays, out):
            alltoallv_into(comm, x[a:b][order], c, rc, o[pos:pos + got])
        pos += got
    arrays.clear()
    return out


def _range_slots(part, me, d, n, nloc, out=None):
    """Local targets and slots of a range partition, in three compiled passes (mark the
    remote targets in an ``n``-byte map, number them in id order, map every edge): the
    same arrays as :func:`_sorted_slots`, whose per-block sorts and searches were the
    loader's largest cost (rmat:22 on 2 ranks: 42 of 76 s).  Ranges are increasing in
    rank, so id order is (peer, id) order.  Holds ``5 n`` bytes for the duration.
    ``out``: where the targets go (may be ``d`` itself when its dtype is the target
    dtype: an element is read before it is written)."""
    from asapgraph.kernels import _graph

    lo, hi = int(part.bounds[me]), int(part.bounds[me + 1])
    mark = np.zeros(n, dtype=np.uint8)
    _graph.mark_outside(d, lo, hi, mark)
    lookup = np.empty(n, dtype=np.int32)
    nslots = _graph.slot_lookup(mark, lookup)
    slot_vertex = np.flatnonzero(mark).astype(d.dtype, copy=False)
    del mark
    tdt = np.int32 if nloc + nslots < 2**31 - 1 else np.int64
    if out is None or out.dtype != tdt:
        out = np.empty(len(d), dtype=tdt)  # targets in received order
    tgt_u = out
    _graph.local_targets(d, lo, hi, lookup, nloc, tgt_u)
    del lookup
    return tgt_u, slot_vertex, part.owner(slot_vertex)


def _sorted_slots(part, me, d, nloc, owned):
    """Local targets and slots of any partition, by sorting (``(tgt_u, slot_vertex,
    slot_peer)``; slots ordered by peer then dense id)."""
    C = BLOCK
    mloc = len(d)
    ur = [np.unique(x[part.owner(x) != me]) for x in (d[a:a + C] for a in range(0, mloc, C))]
    ukey = np.unique(np.concatenate(ur)) if ur else d[:0]
    del ur
    upeer = part.owner(ukey)
    so = np.argsort(upeer, kind="stable")
    slot_vertex, slot_peer = ukey[so], upeer[so]
    slot_of = np.empty(len(ukey), dtype=np.int64)
    slot_of[so] = np.arange(len(ukey), dtype=np.int64)
    del so, upeer
    nslots = len(slot_vertex)
    tdt = np.int32 if nloc + nslots < 2**31 - 1 else np.int64
    tgt_u = np.empty(mloc, dtype=tdt)  # targets in received order
    for a in range(0, mloc, C):
        x = d[a:a + C]
        loc = part.owner(x) == me
        t = np.empty(len(x), dtype=tdt)
        t[loc] = part.local_index(me, x[loc], owned)
        t[~loc] = nloc + slot_of[np.searchsorted(ukey, x[~loc])]
        tgt_u[a:a + C] = t
        del x, loc, t
    return tgt_u, slot_vertex, slot_peer


def build_local(comm, part, edges, n, weighted, progress=None):
    """Shuffle edges to the owner of their source and build the :class:`LocalGraph`.

    ``edges`` is a list ``[src, dst, w]`` that is emptied here, so the arrays can be
    freed as soon as they are shuffled (peak memory).  Dense ids should be int32 when
    ``n < 2**31`` (the caller narrows them).  The out-CSR is built by a counting sort
    (:func:`asapgraph.kernels._graph.build_in_csr` with the roles of source and target swapped),
    targets and sources are rewritten in place chunk by chunk, so the full-size arrays
    alive at the peak are: local sources and targets (ids), the sorted ``tgt`` and (weighted)
    ``coef``.
    """
    t_bl = time.perf_counter()
    from asapgraph.kernels import _graph

    build_in_csr = _graph.build_in_csr

    me = comm.Get_rank()
    src, dst, w = edges
    edges.clear()
    held = [src, dst] + ([w] if weighted else [])
    del src, dst, w
    # rounds of at most 1/16 of the rank's edges (a round's sorted copies stay small next
    # to the edge arrays), at least BLOCK, at most SHUFFLE_BLOCK (few rounds on big graphs)
    got = _shuffle(comm, part, held, int(min(SHUFFLE_BLOCK, max(BLOCK, len(held[0]) // 16))))
    s, d = got[0], got[1]
    ww = got[2] if weighted else None
    del got
    mem_mark("bl:shuffled")
    phase(progress, "shuffled the edges to their owners", t_bl)
    lg = _new_local(comm, part, n, len(s))
    mloc, nloc = lg.mloc, lg.nloc
    C = BLOCK
    # local source index, in place (values < nloc fit the id dtype)
    for a in range(0, mloc, C):
        s[a:a + C] = part.local_index(me, s[a:a + C], lg.owned)
    # remote targets: one slot per (peer, vertex), ordered by peer then dense id
    if part.kind == "range" and 0 < n <= 2 * mloc:  # its 5 n bytes: <= 2.5 per edge
        tgt_u, slot_vertex, slot_peer = _range_slots(part, me, d, n, nloc)
        nslots = len(slot_vertex)
    else:
        tgt_u, slot_vertex, slot_peer = _sorted_slots(part, me, d, nloc, lg.owned)
        nslots = len(slot_vertex)
    lg.nslots = nslots
    tdt = tgt_u.dtype
    del d
    mem_mark("bl:slots")
    phase(progress, "mapped boundary vertices to slots", t_bl)
    trim_malloc()  # the blocks' temporaries: not resident under the CSR build (the peak)
    deg = np.bincount(s, minlength=nloc).astype(np.int64)
    coef_u = None
    if weighted:  # coefficient per edge before sorting: w / out-weight of its source
        outw = np.bincount(s, weights=ww, minlength=nloc).astype(np.float64, copy=False)
        # a sum that overflowed to inf (1e308 + 1e308) or too small to divide by:
        # that vertex's weights divided by its largest first (one process does the same)
        from asapgraph.graph.weights import rescale_out_weights

        ww, outw = rescale_out_weights(s, ww, outw)
        with np.errstate(divide="ignore", invalid="ignore"):
            for a in range(0, mloc, C):
                c = ww[a:a + C] / outw[s[a:a + C]]
                c[~np.isfinite(c)] = 0.0
                ww[a:a + C] = c
        coef_u = ww
        lg.dangling = (outw == 0).astype(np.uint8)
        del outw
    else:
        lg.dangling = (deg == 0).astype(np.uint8)
    del ww
    if s.dtype != tdt:  # the kernel wants one id dtype
        s = s.astype(tdt)
    lg.tgt = np.empty(mloc, dtype=tdt)
    lg.coef = np.empty(mloc, dtype=np.float64) if weighted else None
    # counting sort by local source (stable: the received order within a row)
    indptr, _, _ = build_in_csr(tgt_u, s, nloc + nslots, lg.tgt, weights=coef_u,
                                wout=lg.coef, threads=1, out_sums=False)
    del tgt_u, s, coef_u
    lg.indptr = np.ascontiguousarray(indptr[:nloc + 1])
    del indptr
    # unweighted: no per-edge coefficient, every edge of u carries 1 / outdeg(u)
    lg.vcoef = 1.0 / np.maximum(deg, 1)
    del deg
    mem_mark("bl:csr")
    _peer_maps(comm, part, lg, slot_vertex, slot_peer)
    return lg


def _peer_maps(comm, part, lg, slot_vertex, slot_peer):
    """Per-peer slot ranges of ``lg`` and, from every peer, which owned vertex each of its
    slots stands for (one Alltoallv); collective."""
    K, me = comm.Get_size(), comm.Get_rank()
    pc = np.bincount(slot_peer, minlength=K).astype(np.int64)
    del slot_peer
    lg.slot_vertex = slot_vertex  # the dense id of each slot (vertex migration reads it)
    lg.out_peers = np.flatnonzero(pc).astype(np.int64)
    lg.out_off = np.concatenate([[0], np.cumsum(pc[lg.out_peers])]).astype(np.int64)
    # tell each peer which of its vertices our slots stand for (once)
    recv, rc = alltoallv(comm, slot_vertex, pc)
    lg.in_peers = np.flatnonzero(rc).astype(np.int64)
    roff = np.concatenate([[0], np.cumsum(rc)])
    lg.in_maps = [np.ascontiguousarray(part.local_index(me, recv[roff[q]:roff[q + 1]], lg.owned),
                                       dtype=np.int64)
                  for q in lg.in_peers]


def local_from_rows(comm, part, n, indptr, d, weighted, progress=None, t0=None, coef=None):
    """The :class:`LocalGraph` of rows already in CSR order; collective.

    ``indptr`` (int64, ``nloc + 1``) and ``d`` (global dense target ids, row after row)
    are this rank's out-rows of the vertices ``part.owned(me)``; ``d`` is rewritten in
    place into the local targets when its dtype allows (no second edge-sized array).
    Every edge weighs 1 (generator specs): the weighted coefficient of an edge is
    ``1 / outdeg`` of its source, as :func:`build_local` computes it from unit weights;
    ``coef`` (per edge, row order), when given, is kept instead (rows that moved with
    their coefficients, :mod:`.migrate`; the caller then sets ``vcoef``/``dangling``).
    The slots, peer maps and per-vertex arrays are those :func:`build_local` makes for the
    same edges; rows keep the order of ``d``.
    """
    me = comm.Get_rank()
    t0 = time.perf_counter() if t0 is None else t0
    lg = _new_local(comm, part, n, len(d))
    mloc, nloc = lg.mloc, lg.nloc
    if part.kind == "range" and 0 < n <= 2 * mloc:
        tgt, slot_vertex, slot_peer = _range_slots(part, me, d, n, nloc, out=d)
    else:
        tgt, slot_vertex, slot_peer = _sorted_slots(part, me, d, nloc, lg.owned)
    del d
    lg.nslots = len(slot_vertex)
    lg.tgt = tgt
    lg.indptr = indptr
    mem_mark("gen:slots")
    phase(progress, "mapped boundary vertices to slots", t0)
    deg = np.diff(indptr)
    lg.dangling = (deg == 0).astype(np.uint8)
    lg.vcoef = 1.0 / np.maximum(deg, 1)
    lg.coef = coef if coef is not None else np.repeat(lg.vcoef, deg) if weighted else None
    del deg
    _peer_maps(comm, part, lg, slot_vertex, slot_peer)
    return lg
