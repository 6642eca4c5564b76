"""A BSP rank's pull layout: the single-process PageRank kernel on the rank's own rows.

Rationale
---------
Goal: a rank's superstep costs per edge what a single-process sweep costs, because it
IS that sweep: :func:`asapgraph.kernels._pagerank.sweep` (pull Jacobi, four accumulators,
software prefetch, L1 change and dangling mass fused) over a :class:`PullGraph`:

* rows are the owned vertices, relabelled inside the partition by decreasing
  out-degree (:func:`asapgraph.kernels._pagerank.degree_order`) under the single-process policy
  (:data:`asapgraph.kernels.tuning.REORDER_MIN_EDGES`, no relabelling when the input order
  already has locality, agreed by all ranks), so the hot contributions are one compact
  block and the per-vertex writes sequential;
* sources index one contribution array ``c = [owned | peer segments]``; each in-peer's
  segment is ``HEADER`` slots followed by that peer's send list in its own label order
  (its hubs first).  The peer's message is received straight into its segment: no copy,
  no scatter-add, no per-superstep allocation;
* the boundary values (owned vertices some peer reads) are packed once per superstep
  per out-peer with one gather (:func:`asapgraph.kernels._pull.gather`).

Built once per :class:`~asapgraph.partition.loader.LocalGraph` (cached on it, so a graph loaded
once serves several runs) from the push layout the loader builds: the remote out-edges
are grouped by slot, each out-peer's sources get ghost positions, and ``(slot counts,
ghost positions[, coefficients])`` go to their owners in two or three ``Alltoallv``;
every rank then counting-sorts its local and received edges into the in-CSR.  Memory:
4 bytes per in-edge (8 above 2**31 columns), 4 (12 weighted) per cut edge while building.

Weights: ``w`` holds ``w_uv / outw[u]`` (the loader's coefficient) and ``inv_out`` is 1
(0 for dangling vertices), so ``c = x`` for non-dangling owned vertices; unweighted, ``w``
is empty and ``inv_out = 1 / outdeg``, exactly the single-process inputs.

Invariants: ``indices`` has ``PAD`` zero entries after the last edge (prefetch
look-ahead); every source is below ``nloc`` or inside one in-peer segment past its
header; the layout depends only on the graph and the partition (deterministic).
"""
from __future__ import annotations

import time

import numpy as np

from asapgraph.comm.mpi import alltoallv, mpi
from asapgraph.engine.emulation import HEADER
from asapgraph.kernels import _pagerank as _k
from asapgraph.kernels import _graph, _pull
from asapgraph.kernels.tuning import (LOCALITY_MIN_FRACTION, LOCALITY_WINDOW, PREFETCH_MIN_BYTES,
                                      REORDER_MIN_EDGES)

__all__ = ["PullGraph", "pull_graph", "PAD"]

#: zero entries after the last source (>= the kernel's prefetch distance + 4)
PAD = 64
#: sampled edges per rank for the locality test (the single process samples 2**16)
_SAMPLES = 1 << 16


class PullGraph:
    """One rank's rows for :func:`asapgraph.kernels._pagerank.sweep` and its exchange plan.

    Attributes
    ----------
    nloc, ncols : int
        Owned rows; length of the contribution arrays (owned + every in-peer segment).
    m : int
        In-edges of the owned rows (what one sweep visits).
    indptr, indices, w, inv_out : arrays
        The sweep's in-CSR (``indices`` padded by :data:`PAD` zeros), edge coefficients
        (empty: unweighted) and ``1 / out-weight`` by new row label.
    new2old : int64 array or None
        Owned vertex (local index of the push layout) of each new row; None: identity.
    send_idx : list of int32 arrays
        Per out-peer (``LocalGraph.out_peers`` order), the new labels it reads.
    recv_seg : list of (int, int)
        Per in-peer (``LocalGraph.in_peers`` order), its segment ``[lo, hi)`` of ``c``
        (``HEADER`` slots, then its values).
    bounds : int64 array
        Row blocks, one per thread (``[0, nloc]``: serial, no OpenMP region).
    reordered, prefetch : bool
        The single-process policy's choices on this graph.
    setup_seconds : float
        Wall time of the build (collective).
    """

    def permute(self, v):
        """A per-owned-vertex vector in new row order (contiguous)."""
        return np.ascontiguousarray(v if self.new2old is None else v[self.new2old])

    def unpermute(self, v):
        """Back from new row order to the push layout's local order."""
        if self.new2old is None:
            return v
        out = np.empty_like(v)
        out[self.new2old] = v
        return out

    def ghosts(self):
        """Ghost values received per superstep (headers excluded)."""
        return int(sum(hi - lo - HEADER for lo, hi in self.recv_seg))

    def layout(self):
        """JSON-ready description (per-rank stats)."""
        return {"sweep_edges": int(self.m), "ghost_values": self.ghosts(),
                "reordered": bool(self.reordered), "prefetch": bool(self.prefetch)}


def pull_graph(comm, lg, threads=1, reorder=None, prefetch=None):
    """The :class:`PullGraph` of ``lg`` (built on first use, collective; cached on ``lg``).

    ``reorder`` / ``prefetch``: None follows the single-process policy; True or False
    forces the choice (tests exercise the relabelled, prefetching layout on small graphs).
    """
    key = (max(1, int(threads)), reorder, prefetch)
    pg = getattr(lg, "_pull", None)
    if pg is None or pg.key != key:
        pg = _build(comm, lg, *key)
        pg.key = key
        lg._pull = pg
    return pg


def _wants_reorder(comm, lg):
    """The single-process relabelling policy, agreed by every rank (collective).

    Relabel when the graph has ``REORDER_MIN_EDGES`` edges and fewer than
    ``LOCALITY_MIN_FRACTION`` of sampled local edges join ids closer than
    ``LOCALITY_WINDOW`` (edges to other ranks count as far).
    """
    MPI = mpi()
    near = np.zeros(2)
    if lg.mloc:
        k = np.sort(np.random.default_rng(0x5EED).integers(0, lg.mloc, min(_SAMPLES, lg.mloc)))
        u = np.searchsorted(lg.indptr, k, side="right") - 1
        t = lg.tgt[k].astype(np.int64)
        loc = t < lg.nloc
        gap = np.abs(lg.owned[t[loc]] - lg.owned[u[loc]])
        near[:] = (gap < LOCALITY_WINDOW).sum(), len(k)
    tot = np.zeros(2)
    comm.Allreduce(near, tot, op=MPI.SUM)
    local = tot[1] == 0 or tot[0] >= LOCALITY_MIN_FRACTION * tot[1]
    return lg.m >= REORDER_MIN_EDGES and not local


def _build(comm, lg, threads, reorder=None, prefetch=None):
    t0 = time.perf_counter()
    MPI = mpi()
    K = comm.Get_size()
    nloc, nslots = lg.nloc, lg.nslots
    if nloc >= 2**31 - 1:
        raise ValueError("a rank owning 2**31 vertices or more is not supported")
    pg = PullGraph()
    pg.nloc = nloc
    pg.reordered = _wants_reorder(comm, lg) if reorder is None else bool(reorder)
    if pg.reordered:
        pg.new2old = np.empty(nloc, dtype=np.int64)
        _k.degree_order(np.diff(lg.indptr), pg.new2old)
        old2new = np.empty(nloc, dtype=np.int64)
        old2new[pg.new2old] = np.arange(nloc, dtype=np.int64)
    else:
        pg.new2old = None
        old2new = np.arange(nloc, dtype=np.int64)
    weighted = lg.coef is not None
    empty = np.zeros(0)

    # edges per target: owned vertex (local in-degree) or slot (edges to that remote vertex)
    cnt = np.zeros(nloc + nslots, dtype=np.int64)
    _pull.count_targets(lg.tgt, cnt)
    # to each out-peer its slots' edge counts: every rank then knows its rows' sizes
    scount = np.zeros(K, dtype=np.int64)
    scount[lg.out_peers] = np.diff(lg.out_off)
    rslot, rsc = alltoallv(comm, cnt[nloc:], scount)
    soff = np.concatenate([[0], np.cumsum(rsc)])
    rows = cnt[:nloc].copy()                       # in-degree by old label
    for i, q in enumerate(lg.in_peers):
        rows[lg.in_maps[i]] += rslot[soff[q]:soff[q + 1]]
    pg.indptr = np.zeros(nloc + 1, dtype=np.int64)
    np.cumsum(rows if pg.new2old is None else rows[pg.new2old], out=pg.indptr[1:])
    del rows
    pg.m = m = int(pg.indptr[-1])
    nrem = int(cnt[nloc:].sum())                   # this rank's cut out-edges
    # one counting-sort pass: local edges into their rows, remote ones into slot buckets
    # placed after the rows and the padding (same array: no branch per edge)
    pos = np.empty(nloc + nslots, dtype=np.int64)
    pos[:nloc] = pg.indptr[old2new]
    if nslots:
        pos[nloc] = m + PAD
        np.cumsum(cnt[nloc:-1], out=pos[nloc + 1:])
        pos[nloc + 1:] += m + PAD
    del cnt
    # columns < nloc + ghosts + headers <= n + K HEADER: one dtype on every rank
    # (and the targets' dtype, which the transposition writes: int64 on any rank -> all)
    wide = lg.n + K * HEADER >= 2**31 - 1 or comm.allreduce(lg.tgt.dtype == np.int64,
                                                            op=MPI.LOR)
    idt = np.int64 if wide else np.int32
    comb = np.empty(m + PAD + nrem, dtype=idt)
    wcomb = np.empty(m + PAD + nrem) if weighted else None
    _graph.transpose_csr(lg.indptr, lg.tgt.astype(idt, copy=False), empty.astype(np.int64), comb,
                  weights=lg.coef, wout=wcomb, pos=pos, labels=old2new)
    wcomb = empty if wcomb is None else wcomb
    # per out-peer: its send list; each bucket entry becomes a position in that list
    mark = np.zeros(nloc, dtype=np.int32)
    pg.send_idx = []
    ecount = np.zeros(K, dtype=np.int64)           # edges (ghost positions) per peer
    gcount = np.zeros(K, dtype=np.int64)           # send-list length per peer
    a = m + PAD
    for j, q in enumerate(lg.out_peers):
        b = int(pos[nloc + lg.out_off[j + 1] - 1])  # the peer's last bucket's end
        send = np.empty(min(b - a, nloc), dtype=np.int32)
        ng = _pull.ghost_positions(comb[a:b], mark, send)
        pg.send_idx.append(send[:ng].copy())
        ecount[q], gcount[q] = b - a, ng
        a = b
    del mark
    rgpos, rec = alltoallv(comm, comb[m + PAD:], ecount)
    rw = alltoallv(comm, wcomb[m + PAD:], ecount)[0] if weighted else empty
    rg = np.empty(K, dtype=np.int64)
    comm.Alltoall([gcount, MPI.INT64_T], [rg, MPI.INT64_T])
    held = [comb, wcomb]
    del comb, wcomb
    pg.indices = _shrink(held, 0, m + PAD)
    pg.indices[m:] = 0
    pg.w = _shrink(held, 1, m) if weighted else empty

    # columns: owned, then per in-peer HEADER slots and its send list; its edges appended
    pg.recv_seg = []
    col = nloc
    eoff = np.concatenate([[0], np.cumsum(rec)])
    for i, q in enumerate(lg.in_peers):
        pg.recv_seg.append((col, col + HEADER + int(rg[q])))
        a, b = int(eoff[q]), int(eoff[q + 1])
        _pull.place_remote(lg.in_maps[i], rslot[soff[q]:soff[q + 1]], rgpos[a:b],
                           rw[a:b] if weighted else empty, col + HEADER, pos, pg.indices,
                           pg.w)
        col += HEADER + int(rg[q])
    pg.ncols = col
    del pos, rgpos, rw, rslot
    dang = lg.dangling.astype(bool)
    pg.inv_out = pg.permute(np.where(dang, 0.0, 1.0 if weighted else lg.vcoef))
    pg.prefetch = (pg.reordered and pg.ncols * 8 > PREFETCH_MIN_BYTES) if prefetch is None \
        else bool(prefetch)
    pg.bounds = _k.balanced_bounds(pg.indptr, max(1, min(threads, nloc)))
    pg.setup_seconds = time.perf_counter() - t0
    return pg


def _shrink(held, i, n):
    """The first ``n`` entries of ``held[i]`` (removed from ``held``): in place
    (``realloc``: the tail's pages go back) when nothing else refers to it, else a copy."""
    a = held[i]
    held[i] = None
    try:
        a.resize(n, refcheck=True)
        return a
    except ValueError:
        return a[:n].copy()
