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
  segment is ``HEADER`` slots followed by that peer's values.  The peer's message is
  received straight into its segment: no copy, no scatter-add, no per-superstep
  allocation;
* each (sender, receiver) pair uses one of two message forms:

  - *pull*: one value ``c'[u]`` per distinct source ``u`` of the pair's cut edges (the
    send list, in the sender's label order: its hubs first), packed with one gather
    (:func:`asapgraph.kernels._pull.gather`); the receiver's rows read those ghost
    columns once per cut edge, with the edge's coefficient;
  - *combined*: one partial sum ``s_v = sum_{u->v} c'[u] w_uv`` per distinct remote
    target ``v`` (the loader's slots), computed by the sender after its sweep
    (:func:`asapgraph.kernels._pull.combine` over a slot-CSR it keeps: new source labels
    and coefficients of its cut edges); the receiver has one ghost column per slot and
    ONE in-edge from it into ``v``'s row (coefficient 1.0; unweighted rows read
    ``c[col]`` as is).

  A pair combines when that ships fewer values and the values saved pay for the combine
  (``(sources - targets) * COMBINE_EDGES_PER_VALUE >= cut edges``,
  :mod:`asapgraph.kernels.tuning`): the combine moves its cut edges' work from the
  receiver's sweep to the sender's, and BSP waits for the slowest rank.  Web graphs have
  about 3x more distinct cut sources than cut targets (cnr-2000, 4 ranks: 11 of 12
  pairs combine, 164.9 -> 58.2 KB per superstep); R-MAT about as many (rmat:20: the two
  forms within 5 %, a million cut edges per pair: every pair pulls).  The sender counts
  its distinct sources and cut edges per out-peer before anything is built
  (:func:`asapgraph.kernels._pull.peer_sources`) and tells each receiver the form and
  length of its message (one ``Alltoall``); the choice depends only on the graph and the
  partition.  The combine is work: its edges count as swept edges.

Built once per :class:`~asapgraph.partition.loader.LocalGraph` (cached on it, so a graph loaded
once serves several runs) from the push layout the loader builds: the remote out-edges
are grouped by slot; for a pull pair each out-peer's sources get ghost positions, and
``(slot counts, ghost positions[, coefficients])`` go to their owners in two or three
``Alltoallv`` (a combined pair ships no edges: its receiver adds one edge per slot);
every rank then counting-sorts its local and received edges into the in-CSR.  Memory:
4 bytes per in-edge (8 above 2**31 columns), 4 (12 weighted) per cut edge while building,
and 4 (12 weighted) per cut edge of a combined pair kept for the combine.

Built from in-rows instead (BSP PageRank on a fresh unweighted load, the default mode:
the loader ships every edge to the owner of its *destination*,
:class:`asapgraph.partition.rows.InRows`; a graph loaded once by ``load()``, weighted
inputs, ASAP and rebalanced runs keep the push layout and the transposition above):
every cut edge already sits at its receiver, in its row, with its source's dense id, so
there is nothing to transpose and no edge to ship (:func:`_build_from_rows`).  The
ranks exchange their label orders (one ``Allgatherv`` of ``n`` dense ids), the receiver
numbers each in-peer's ghosts in that peer's label order (the send list the
transposition makes), rewrites its rows into columns (relabelled in the same pass),
decides each pair's form by the same rule on the same counts (distinct sources, rows
reached = slots, cut edges), and ships each sender its send list, or for a combined pair
the sources grouped by slot, whose edges it then replaces by one edge per slot.  The
layout is the transposition's (the same labels, columns, forms, send lists and
messages; tests compare every per-rank figure); only the order of the edges inside a row
differs (global edge order instead of source label order), hence the summation order.
Memory: 4 bytes per in-edge twice while relabelling (the rows and the result), ``12 n``
bytes of label orders and lookup.

Weights: ``w`` holds ``w_uv / outw[u]`` (the loader's coefficient) and ``inv_out`` is 1
(0 for dangling vertices), so ``c = x`` for non-dangling owned vertices; unweighted, ``w``
is empty and ``inv_out = 1 / outdeg``, exactly the single-process inputs.

Invariants: ``indices`` has ``PAD`` zero entries after the last edge (prefetch
look-ahead); every source is below ``nloc`` or inside one in-peer segment past its
header; every edge ``u -> v`` of the graph is summed into ``v``'s row exactly once, pulled
(``c[u] w_uv``) or inside one combined partial sum, so the iterates equal single-process
power iteration up to summation order; the layout (forms included) depends only on the
graph and the partition (deterministic).
"""
from __future__ import annotations

import time

import numpy as np

from asapgraph.comm.mpi import allgatherv, alltoallv, mpi
from asapgraph.engine.emulation import HEADER
from asapgraph.kernels import _pagerank as _k
from asapgraph.kernels import _graph, _pull
from asapgraph.partition.rows import InRows
from asapgraph.kernels.tuning import (COMBINE_EDGES_PER_VALUE, LOCALITY_MIN_FRACTION,
                                      LOCALITY_WINDOW, PREFETCH_MIN_BYTES, REORDER_MIN_EDGES)

__all__ = ["PullGraph", "pull_graph", "wants_reorder", "PAD"]

#: zero entries after the last source (>= the kernel's prefetch distance + 4)
PAD = 64
#: sampled edges per rank for the locality test (the single process samples 2**16)
_SAMPLES = 1 << 16
#: message forms of a (sender, receiver) pair; ``FORM`` None chooses per pair (see the
#: module doc), "pull" or "combined" forces one for every pair (tests set it)
FORMS = ("pull", "combined")
FORM = None


class PullGraph:
    """One rank's rows for :func:`asapgraph.kernels._pagerank.sweep` and its exchange plan.

    Attributes
    ----------
    nloc, ncols : int
        Owned rows; length of the contribution arrays (owned + every in-peer segment).
    m : int
        In-edges of the owned rows (what one sweep visits; one per slot of a combined
        in-peer).
    indptr, indices, w, inv_out : arrays
        The sweep's in-CSR (``indices`` padded by :data:`PAD` zeros), edge coefficients
        (empty: unweighted) and ``1 / out-weight`` by new row label.
    new2old : int64 array or None
        Owned vertex (local index of the push layout) of each new row; None: identity.
    combined : bool array
        Per out-peer (``LocalGraph.out_peers`` order): True when the pair uses the combined
        form, False for pull.
    sent : int64 array
        Per out-peer, the values of its message (headers excluded).
    pull_len, combined_len, cut_edges : int64 arrays
        Per out-peer, the values each form would ship (distinct sources, slots) and the
        cut edges into it (what the choice weighs).
    send_idx : list of int32 arrays
        Per out-peer, the new labels it reads (pull form; empty when combined).
    comb_ptr, comb_src, comb_w : lists
        Per out-peer, its slot-CSR (combined form; None when pull): offsets (int64, one
        row per slot), new source labels (int32, :data:`PAD` zeros after the last) and
        coefficients (empty: unweighted).
    mcomb : int
        Cut edges the sender combines per superstep (over all combined pairs).
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
        """JSON-ready description (per-rank stats).

        ``sweep_edges`` the in-edges of one sweep, ``combine_edges`` the cut edges combined
        per superstep; ``pull_peers`` / ``combined_peers`` the out-peers of each form and
        ``pull_values`` / ``combined_values`` the values shipped to them per superstep;
        ``values_if_pull`` / ``values_if_combined`` what every pair in one form would ship;
        ``pull_built_from``: ``"in_rows"`` (the loader shipped in-rows) or ``"out_rows"``
        (transposed from the push layout).
        """
        comb = self.combined
        return {"sweep_edges": int(self.m), "combine_edges": int(self.mcomb),
                "ghost_values": self.ghosts(),
                "pull_peers": int((~comb).sum()), "combined_peers": int(comb.sum()),
                "pull_values": int(self.sent[~comb].sum()),
                "combined_values": int(self.sent[comb].sum()),
                "values_if_pull": int(self.if_pull), "values_if_combined": int(self.if_combined),
                "reordered": bool(self.reordered), "prefetch": bool(self.prefetch),
                "pull_built_from": self.built_from}


def pull_graph(comm, lg, threads=1, reorder=None, prefetch=None, form=None):
    """The :class:`PullGraph` of ``lg`` (built on first use, collective; cached on ``lg``).

    ``reorder`` / ``prefetch``: None follows the single-process policy; True or False
    forces the choice (tests exercise the relabelled, prefetching layout on small graphs).
    ``form``: None (then :data:`FORM`) chooses per pair (module doc); "pull" or
    "combined" forces that form for every pair.
    """
    form = FORM if form is None else form
    if form is not None and form not in FORMS:
        raise ValueError(f"form must be one of {FORMS} or None, not {form!r}")
    key = (max(1, int(threads)), reorder, prefetch, form)
    pg = getattr(lg, "_pull", None)
    if isinstance(lg, InRows):      # built once: the rows are consumed by the build
        if pg is None:
            pg = _build_from_rows(comm, lg, *key)
        elif pg.key[1:] != key[1:]:
            raise ValueError("a graph loaded in the pull layout keeps the layout it was "
                             f"built with ({pg.key[1:]}, asked {key[1:]})")
        elif pg.key[0] != key[0]:   # threads: only the row blocks change
            pg.bounds = _k.balanced_bounds(pg.indptr, max(1, min(key[0], pg.nloc)))
        pg.key = key
        lg._pull = pg
        return pg
    if pg is None or pg.key != key:
        pg = _build(comm, lg, *key)
        pg.key = key
        lg._pull = pg
    return pg


def _new_pull(nloc, built_from, reordered, outdeg):
    """An empty :class:`PullGraph` of ``nloc`` rows built from ``built_from``; when
    ``reordered``, ``new2old`` ranks the rows by decreasing ``outdeg()`` (else None)."""
    pg = PullGraph()
    pg.nloc, pg.built_from, pg.reordered, pg.new2old = nloc, built_from, reordered, None
    if reordered:
        pg.new2old = np.empty(nloc, dtype=np.int64)
        _k.degree_order(outdeg(), pg.new2old)
    return pg


def wants_reorder(comm, lg):
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


def _build(comm, lg, threads, reorder=None, prefetch=None, form=None):
    t0 = time.perf_counter()
    MPI = mpi()
    K = comm.Get_size()
    nloc, nslots = lg.nloc, lg.nslots
    if nloc >= 2**31 - 1:
        raise ValueError("a rank owning 2**31 vertices or more is not supported")
    pg = _new_pull(nloc, "out_rows",
                   wants_reorder(comm, lg) if reorder is None else bool(reorder),
                   lambda: np.diff(lg.indptr))
    if pg.reordered:
        old2new = np.empty(nloc, dtype=np.int64)
        old2new[pg.new2old] = np.arange(nloc, dtype=np.int64)
    else:
        old2new = np.arange(nloc, dtype=np.int64)
    weighted = lg.coef is not None
    empty = np.zeros(0)

    # the form of each (this rank, out-peer) pair: pull ships one value per distinct
    # source, combined one per slot; each receiver learns form and length (one Alltoall)
    nout = len(lg.out_peers)
    nq = np.diff(lg.out_off).astype(np.int64)      # slots (distinct targets) per out-peer
    ng = np.zeros(nout, dtype=np.int64)            # distinct sources per out-peer
    ne = np.zeros(nout, dtype=np.int64)            # cut edges per out-peer
    # edges per target: owned vertex (local in-degree) or slot (edges to that remote
    # vertex), counted in the same pass
    cnt = np.zeros(nloc + nslots, dtype=np.int64)
    _pull.peer_sources(lg.indptr, lg.tgt, nloc, np.repeat(np.arange(nout, dtype=np.int32), nq),
                       np.full(nout, -1, dtype=np.int64), ng, ne, cnt)
    if form is None:
        pg.combined = (nq < ng) & ((ng - nq) * COMBINE_EDGES_PER_VALUE >= ne)
    else:
        pg.combined = np.full(nout, form == "combined")
    pg.sent = np.where(pg.combined, nq, ng)
    pg.if_pull, pg.if_combined = int(ng.sum()), int(nq.sum())
    pg.pull_len, pg.combined_len, pg.cut_edges = ng, nq, ne
    plan = np.zeros((K, 2), dtype=np.int64)        # (values, combined) per destination
    plan[lg.out_peers, 0] = pg.sent
    plan[lg.out_peers, 1] = pg.combined
    rplan = np.empty((K, 2), dtype=np.int64)
    comm.Alltoall([plan, MPI.INT64_T], [rplan, MPI.INT64_T])

    # to each out-peer its slots' edge counts: every rank then knows its rows' sizes
    scount = np.zeros(K, dtype=np.int64)
    scount[lg.out_peers] = np.diff(lg.out_off)
    rslot, rsc = alltoallv(comm, cnt[nloc:], scount)
    soff = np.concatenate([[0], np.cumsum(rsc)])
    rows = cnt[:nloc].copy()                       # in-degree by old label
    for i, q in enumerate(lg.in_peers):            # a slot's targets are distinct
        if rplan[q, 1]:                            # combined: one edge per slot
            if rplan[q, 0] != len(lg.in_maps[i]):
                raise RuntimeError(f"rank {q} combines {rplan[q, 0]} values, "
                                   f"{len(lg.in_maps[i])} slots expected")
            rows[lg.in_maps[i]] += 1
        else:
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
    slotcnt = cnt[nloc:]                           # edges per slot (combined pairs' rows)
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
    # per out-peer: combined, its slot-CSR (a copy of its buckets); pull, its send list,
    # each bucket entry becoming a position in that list, and the buckets moved down so
    # that the pull pairs' edges are contiguous (what the Alltoallv ships)
    mark = np.zeros(nloc, dtype=np.int32)
    pg.send_idx, pg.comb_ptr, pg.comb_src, pg.comb_w = [], [], [], []
    ecount = np.zeros(K, dtype=np.int64)           # edges (ghost positions) per peer
    a = top = m + PAD
    for j, q in enumerate(lg.out_peers):
        s0, s1 = int(lg.out_off[j]), int(lg.out_off[j + 1])
        b = int(pos[nloc + s1 - 1])                # the peer's last bucket's end
        if pg.combined[j]:
            ptr = np.zeros(s1 - s0 + 1, dtype=np.int64)
            np.cumsum(slotcnt[s0:s1], out=ptr[1:])
            pg.comb_ptr.append(ptr)
            src = np.zeros(b - a + PAD, dtype=np.int32)   # padded: combine's prefetch
            src[:b - a] = comb[a:b]
            pg.comb_src.append(src)
            pg.comb_w.append(wcomb[a:b].copy() if weighted else empty)
            pg.send_idx.append(np.zeros(0, dtype=np.int32))
        else:
            send = np.empty(min(b - a, nloc), dtype=np.int32)
            ns = _pull.ghost_positions(comb[a:b], mark, send)
            if ns != pg.sent[j]:
                raise RuntimeError(f"{ns} distinct sources for rank {q}, {pg.sent[j]} counted")
            pg.send_idx.append(send[:ns].copy())
            pg.comb_ptr.append(None)
            pg.comb_src.append(None)
            pg.comb_w.append(None)
            if top != a:
                comb[top:top + b - a] = comb[a:b]
                if weighted:
                    wcomb[top:top + b - a] = wcomb[a:b]
            ecount[q] = b - a
            top += b - a
        a = b
    del mark, slotcnt
    pg.mcomb = int(sum(p[-1] for p in pg.comb_ptr if p is not None))
    rgpos, rec = alltoallv(comm, comb[m + PAD:top], ecount)
    rw = alltoallv(comm, wcomb[m + PAD:top], ecount)[0] if weighted else empty
    held = [comb, wcomb]
    del comb, wcomb
    pg.indices = _shrink(held, 0, m + PAD)
    pg.indices[m:] = 0
    pg.w = _shrink(held, 1, m) if weighted else empty

    # columns: owned, then per in-peer HEADER slots and its values (pull: its send list,
    # its edges appended; combined: one column and one edge per slot)
    pg.recv_seg = []
    col = nloc
    eoff = np.concatenate([[0], np.cumsum(rec)])
    for i, q in enumerate(lg.in_peers):
        nv = int(rplan[q, 0])
        pg.recv_seg.append((col, col + HEADER + nv))
        if rplan[q, 1]:
            _pull.place_remote(lg.in_maps[i], np.ones(nv, dtype=np.int64),
                               np.arange(nv, dtype=idt), np.ones(nv) if weighted else empty,
                               col + HEADER, pos, pg.indices, pg.w)
        else:
            a, b = int(eoff[q]), int(eoff[q + 1])
            _pull.place_remote(lg.in_maps[i], rslot[soff[q]:soff[q + 1]], rgpos[a:b],
                               rw[a:b] if weighted else empty, col + HEADER, pos,
                               pg.indices, pg.w)
        col += HEADER + nv
    pg.ncols = col
    del pos, rgpos, rw, rslot
    dang = lg.dangling.astype(bool)
    pg.inv_out = pg.permute(np.where(dang, 0.0, 1.0 if weighted else lg.vcoef))
    pg.prefetch = (pg.reordered and pg.ncols * 8 > PREFETCH_MIN_BYTES) if prefetch is None \
        else bool(prefetch)
    pg.bounds = _k.balanced_bounds(pg.indptr, max(1, min(threads, nloc)))
    pg.setup_seconds = time.perf_counter() - t0
    return pg


def _rows_want_reorder(comm, r):
    """:func:`wants_reorder` on in-rows: the sampled edges are in-edges of the owned rows,
    evenly spaced (near: the source is owned here and its id within
    ``LOCALITY_WINDOW``)."""
    MPI = mpi()
    near = np.zeros(2)
    mloc = len(r.src)
    if mloc:  # evenly spaced over the rows (deterministic, no generator to import)
        ns = min(_SAMPLES, mloc)
        k = np.arange(ns, dtype=np.int64) * mloc // ns
        v = r.owned[np.searchsorted(r.indptr, k, side="right") - 1]
        u = r.src[k].astype(np.int64)
        me = comm.Get_rank()
        loc = (u >= r.owned[0]) & (u <= r.owned[-1]) if r.part.kind == "range" \
            else r.part.owner(u) == me
        near[:] = (loc & (np.abs(u - v) < LOCALITY_WINDOW)).sum(), len(k)
    tot = np.zeros(2)
    comm.Allreduce(near, tot, op=MPI.SUM)
    local = tot[1] == 0 or tot[0] >= LOCALITY_MIN_FRACTION * tot[1]
    return r.m >= REORDER_MIN_EDGES and not local


def _build_from_rows(comm, r, threads, reorder=None, prefetch=None, form=None):
    """The :class:`PullGraph` of in-rows (:class:`~asapgraph.partition.rows.InRows`):
    no transposition, the receiver of every cut edge holds it already.

    1. labels: the degree order of the owned vertices (their global out-degrees), and
       every rank's vertices in its label order (one ``Allgatherv`` of dense ids);
    2. :func:`~asapgraph.kernels._pull.number_ghosts`: a source's column, ghosts of each
       in-peer in that peer's label order (so its send list is increasing, as the
       transposed layout's), per in-peer the distinct sources;
    3. :func:`~asapgraph.kernels._pull.map_rows`: the rows in label order, sources as
       columns, per in-peer the rows it reaches (its distinct targets) and its cut edges;
    4. the receiver decides each pair's form (the same rule, on the same counts) and
       tells the sender (one ``Alltoall``); one ``Alltoallv`` carries each pull pair's
       send list, or a combined pair's slot-CSR (sender labels grouped by slot), whose
       edges :func:`~asapgraph.kernels._pull.compact_combined` replaces by one edge per
       slot (only when some pair combines).
    """
    t0 = time.perf_counter()
    MPI = mpi()
    K, me = comm.Get_size(), comm.Get_rank()
    nloc, n = r.nloc, r.n
    if n + K * (HEADER + 1) >= 2**31 - 1 or len(r.src) >= 2**31 - 1:
        raise ValueError("the pull layout of in-rows needs n + K * HEADER and the rank's "
                         "in-edges below 2**31")
    pg = _new_pull(nloc, "in_rows",
                   _rows_want_reorder(comm, r) if reorder is None else bool(reorder),
                   lambda: r.outdeg)
    # the inverse permutation, this rank's label order (dense ids) and inv_out, one pass
    none = np.zeros(0, dtype=np.int64)
    old2new = none if pg.new2old is None else np.empty(nloc, dtype=np.int64)
    mine = np.empty(nloc, dtype=np.int32)
    pg.inv_out = np.empty(nloc, dtype=np.float64)
    _pull.row_setup(r.outdeg, r.dangling, none if pg.new2old is None else pg.new2old,
                    np.ascontiguousarray(r.owned, dtype=np.int64), old2new, mine, pg.inv_out)
    order, counts = allgatherv(comm, mine)
    del mine
    starts = np.zeros(K + 1, dtype=np.int64)
    np.cumsum(counts, out=starts[1:])
    mark = np.zeros(n, dtype=np.uint8)
    lookup = np.empty(n, dtype=np.int32)
    send = np.empty(min(n, len(r.src)), dtype=np.int32)
    ng = np.zeros(K, dtype=np.int64)            # per rank: distinct sources read here
    seg_lo = np.zeros(K + 1, dtype=np.int64)
    ns = _pull.number_ghosts(r.src, order, starts, me, HEADER, mark, lookup, send, ng, seg_lo)
    del order, mark
    send_off = np.zeros(K + 1, dtype=np.int64)
    np.cumsum(ng, out=send_off[1:])
    if send_off[K] != ns:
        raise RuntimeError(f"{ns} ghosts numbered, {send_off[K]} counted")
    m = len(r.src)
    if pg.new2old is None:   # in place: row i is row i
        r.src.resize(m + PAD, refcheck=False)
        idx = r.src
    else:
        idx = np.empty(m + PAD, dtype=np.int32)
    indptr = np.empty(nloc + 1, dtype=np.int64)
    nq = np.zeros(K, dtype=np.int64)            # per rank: rows it reaches (its slots)
    ne = np.zeros(K, dtype=np.int64)            # ... cut edges from it
    ghosted = np.zeros(nloc, dtype=np.uint8)
    _pull.map_rows(r.indptr, r.src, none if pg.new2old is None else pg.new2old, old2new,
                   lookup, seg_lo, indptr, idx, nq, ne, ghosted)
    del old2new
    del lookup
    r.src = r.indptr = None
    # the receiver chooses each pair's form (the rule of :func:`_build`, on its counts)
    if form is None:
        comb = (nq < ng) & ((ng - nq) * COMBINE_EDGES_PER_VALUE >= ne)
    else:
        comb = np.full(K, form == "combined")
    comb &= ng > 0
    plan = np.stack([ng, nq, ne, comb.astype(np.int64)], axis=1)
    rplan = np.empty((K, 4), dtype=np.int64)
    comm.Alltoall([plan, MPI.INT64_T], [rplan, MPI.INT64_T])
    in_peers = np.flatnonzero(ng).astype(np.int64)
    out_peers = np.flatnonzero(rplan[:, 0]).astype(np.int64)
    r.in_peers, r.out_peers = in_peers, out_peers
    if comb.any():
        new_lo = np.zeros(K, dtype=np.int64)
        nv = np.where(comb, nq, ng)
        new_lo[:] = nloc + np.concatenate([[0], np.cumsum(np.where(ng > 0, HEADER + nv, 0))[:-1]])
        csrc_off = np.zeros(K + 1, dtype=np.int64)
        np.cumsum(np.where(comb, ne, 0), out=csrc_off[1:])
        cslot_off = np.zeros(K + 1, dtype=np.int64)
        np.cumsum(np.where(comb, nq, 0), out=cslot_off[1:])
        csrc = np.empty(int(csrc_off[K]), dtype=np.int32)
        cslot = np.empty(int(cslot_off[K]), dtype=np.int64)
        m = _pull.compact_combined(indptr, idx, seg_lo, new_lo, comb.astype(np.uint8), send,
                                   send_off, HEADER, csrc, csrc_off, cslot, cslot_off)
        seg_lo = np.append(new_lo, nloc + int(np.where(ng > 0, HEADER + nv, 0).sum()))
    else:
        nv = ng
        csrc = np.zeros(0, dtype=np.int32)
        cslot = np.zeros(0, dtype=np.int64)
        csrc_off = cslot_off = np.zeros(K + 1, dtype=np.int64)
    idx[m:m + PAD] = 0
    idx.resize(m + PAD, refcheck=False)
    pg.indptr, pg.indices, pg.m = indptr, idx, int(m)
    pg.w = np.zeros(0)
    pg.recv_seg = [(int(seg_lo[q]), int(seg_lo[q]) + HEADER + int(nv[q])) for q in in_peers]
    pg.ncols = int(seg_lo[K])
    # to each sender: a pull pair's send list, or a combined pair's sources by slot
    # (labels) and slot lengths
    lab = np.empty(int(np.where(comb, ne, ng).sum()), dtype=np.int32)
    a = 0
    for q in range(K):
        if comb[q]:
            b = a + int(ne[q])
            lab[a:b] = csrc[csrc_off[q]:csrc_off[q + 1]]
        else:
            b = a + int(ng[q])
            lab[a:b] = send[send_off[q]:send_off[q + 1]]
        a = b
    del send, csrc
    rlab, rlc = alltoallv(comm, lab, np.where(comb, ne, ng))
    rslot, rsc = alltoallv(comm, cslot, np.where(comb, nq, 0))
    del lab, cslot
    # sender's view, per out-peer (lg.out_peers order)
    pg.combined = rplan[out_peers, 3].astype(bool)
    pg.pull_len, pg.combined_len, pg.cut_edges = (rplan[out_peers, 0], rplan[out_peers, 1],
                                                  rplan[out_peers, 2])
    pg.sent = np.where(pg.combined, pg.combined_len, pg.pull_len)
    pg.if_pull, pg.if_combined = int(pg.pull_len.sum()), int(pg.combined_len.sum())
    pg.send_idx, pg.comb_ptr, pg.comb_src, pg.comb_w = [], [], [], []
    la = np.concatenate([[0], np.cumsum(rlc)])
    sa = np.concatenate([[0], np.cumsum(rsc)])
    bnd = ghosted.view(bool)
    for j, q in enumerate(out_peers):
        x = rlab[la[q]:la[q + 1]]
        if pg.combined[j]:
            ptr = np.zeros(int(pg.combined_len[j]) + 1, dtype=np.int64)
            np.cumsum(rslot[sa[q]:sa[q + 1]], out=ptr[1:])
            src = np.zeros(len(x) + PAD, dtype=np.int32)
            src[:len(x)] = x
            pg.comb_ptr.append(ptr)
            pg.comb_src.append(src)
            pg.comb_w.append(pg.w)
            pg.send_idx.append(np.zeros(0, dtype=np.int32))
        else:
            pg.send_idx.append(x.copy())
            pg.comb_ptr.append(None)
            pg.comb_src.append(None)
            pg.comb_w.append(None)
        bnd[x] = True
    del rlab, rslot
    pg.mcomb = int(sum(p[-1] for p in pg.comb_ptr if p is not None))
    r._stats = {"vertices": int(nloc), "edges": int(r.mloc),
                "boundary_vertices": int(bnd.sum()),
                "remote_slots": int(pg.combined_len.sum()),
                "peers": int(len(set(out_peers.tolist()) | set(in_peers.tolist()))),
                "out_peers": out_peers.tolist(), "in_peers": in_peers.tolist()}
    del ghosted, bnd
    pg.prefetch = (pg.reordered and pg.ncols * 8 > PREFETCH_MIN_BYTES) if prefetch is None \
        else bool(prefetch)
    pg.bounds = _k.balanced_bounds(pg.indptr, max(1, min(threads, nloc)))
    pg.key = (threads, reorder, prefetch, form)
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
