# cython: language_level=3
"""Setup and exchange kernels of the pull layout a BSP rank sweeps (:mod:`.pull`).

Rationale
---------
A rank's BSP superstep calls the single-process PageRank sweep
(:func:`asapgraph.kernels._pagerank.sweep`) on its own rows: a pull in-CSR over the owned
vertices whose sources index one contribution array ``c`` laid out as::

    [ owned vertices (nloc) | peer 0: HEADER + ghosts | peer 1: HEADER + ghosts | ... ]

A ghost is a remote vertex with an edge into this rank; peer ``i``'s segment receives
its message as is (header included), so no received value is ever copied or
scatter-added.  These kernels build that layout once from the rank's push layout
(:class:`asapgraph.partition.loader.LocalGraph`: out-CSR of the owned vertices, targets
local or per-peer slots) and pack the boundary values each superstep:

* :func:`peer_sources`: edges per target (owned vertex or slot) and, per out-peer, how
  many distinct owned sources have an edge into it (the length of its send list in the
  pull form) and how many cut edges, one pass over the out-CSR before anything is built,
  so that the form of every (sender, receiver) pair is agreed first;
* :func:`asapgraph.kernels._graph.transpose_csr` with preset offsets (not here): one
  counting-sort pass over the out-edges in source order that writes each local edge's
  new source label into its in-CSR row and each remote edge's into its slot's bucket
  (the bucket region follows the in-CSR in the same array, so the pass has no branch on
  the target's kind);
* :func:`ghost_positions`: for one peer, the sorted set of sources that peer needs (the
  send list) and, per edge, the source's position in it;
* :func:`place_remote`: one in-peer's received edges (slot counts and ghost positions)
  appended to their rows;
* :func:`gather`: ``out[i] = c[idx[i]]``, the boundary values packed into a message (pull
  form);
* :func:`combine`: ``out[s] = sum c[src[k]] (* w[k])`` over slot ``s``'s cut edges, the
  partial sums of one peer's remote targets packed into a message (combined form).

When the loader shipped in-rows (every edge at the owner of its destination,
:class:`asapgraph.partition.rows.InRows`), the same layout is built without the out-CSR:

* :func:`number_ghosts`: every source's column (owned: its label; remote: a ghost in its
  owner's segment, in the owner's label order) and each in-peer's send list, distinct
  sources and cut edges;
* :func:`map_rows`: the rows relabelled and rewritten into columns, counting the rows
  each in-peer reaches (its slots);
* :func:`compact_combined`: the edges of the in-peers that take the combined form
  replaced by one edge per slot, their sources grouped by slot for the sender.

A pair ships one of the two: pull, one value per distinct source (the receiver's in-CSR
reads it as a ghost column, once per cut edge), or combined, one partial sum per distinct
remote target (slot), which the receiver reads through ONE in-edge of weight 1 (the
engine's choice: :data:`asapgraph.kernels.tuning.COMBINE_EDGES_PER_VALUE`).  Web graphs
have about 3x more distinct cut sources than cut targets; R-MAT about as many.

The pass counting targets scatters into an array of a few MB: it software-prefetches
the counter of an edge further ahead, as :func:`asapgraph.kernels._graph.build_in_csr`
does.  Every loop runs over
arrays without the GIL; the Python side loops over peers only.
Invariant: new labels come from ``old2new`` (a permutation of ``0..nloc-1``); every
source written is below ``nloc`` (owned) or inside one peer's ghost segment; combined and
pulled, a row sums the same terms ``c[u] w_uv`` (grouped per sending peer and target when
combined: only the summation order differs).
"""
from libc.stdint cimport int32_t, int64_t, uint8_t

from asapgraph.kernels._typedefs cimport vid_t  # out-CSR targets and pull in-CSR sources

cdef extern from "asap_prefetch.h":
    void asap_prefetch_r(const void* p) noexcept nogil

cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define asap_pull_prefetch_w(p) __builtin_prefetch((const void *)(p), 1, 3)
    #else
    #define asap_pull_prefetch_w(p) ((void)(p))
    #endif
    """
    void asap_pull_prefetch_w(const void* p) noexcept nogil

cdef enum:
    PF_DIST = 32  # prefetch distance (edges) of the combine (as the sweep's)
    PF_FAR = 32   # prefetch distance of the target counters (as count_ids')
    SEG_FAST = 8  # map_rows counts segments in registers up to this many ranks
cdef int64_t _INT32_MAX = 2147483647


def ghost_positions(vid_t[::1] src, int32_t[::1] mark, int32_t[::1] send):
    """One peer's send list, and each edge's source rewritten to its position in it.

    ``src`` (that peer's edges, new source labels) is rewritten in place; ``mark`` (one
    entry per owned vertex) must be all zero and is left so; ``send`` (at least
    ``min(len(src), len(mark))`` entries) receives the distinct sources in increasing
    label order.

    Returns
    -------
    int
        Length of the send list.
    """
    cdef int64_t k, v, cnt = 0, m = src.shape[0], n = mark.shape[0]
    with nogil:
        for k in range(m):
            mark[src[k]] = 1
        for v in range(n):
            if mark[v]:
                send[cnt] = <int32_t>v
                cnt += 1
                mark[v] = <int32_t>cnt       # position + 1
        for k in range(m):
            src[k] = mark[src[k]] - 1
        for k in range(cnt):
            mark[send[k]] = 0
    return cnt


def place_remote(const int64_t[::1] rmap, const int64_t[::1] scnt, const vid_t[::1] gpos,
                 const double[::1] gw, int64_t base, int64_t[::1] pos, vid_t[::1] indices,
                 double[::1] w):
    """One in-peer's edges into their rows: slot ``s`` (``scnt[s]`` edges, in order)
    targets owned vertex ``rmap[s]``, whose next free offset is ``pos[rmap[s]]``; each
    edge's source is the ghost column ``base + gpos[k]`` (weight ``gw[k]``)."""
    cdef int64_t s, k = 0, j, r, o
    cdef bint hasw = w.shape[0] > 0
    with nogil:
        for s in range(rmap.shape[0]):
            r = rmap[s]
            o = pos[r]
            for j in range(scnt[s]):
                indices[o + j] = <vid_t>(base + gpos[k])
                if hasw:
                    w[o + j] = gw[k]
                k += 1
            pos[r] = o + scnt[s]


def gather(const double[::1] c, const int32_t[::1] idx, double[::1] out):
    """``out[i] = c[idx[i]]`` (pack one peer's boundary values)."""
    cdef Py_ssize_t i
    with nogil:
        for i in range(idx.shape[0]):
            out[i] = c[idx[i]]


def peer_sources(const int64_t[::1] indptr, const vid_t[::1] tgt, int64_t nloc,
                 const int32_t[::1] slot_peer, int64_t[::1] last, int64_t[::1] ng,
                 int64_t[::1] ne, int64_t[::1] cnt=None):
    """``ng[j] +=`` the number of distinct sources with an edge into a slot of out-peer
    ``j`` (``slot_peer[s]``: the out-peer of slot ``s``), ``ne[j] +=`` the number of those
    edges.  ``last`` (one entry per out-peer) must hold -1 and is left holding the last
    source seen.  Out-CSR order: a source's edges are consecutive, so one pass with a
    last-seen mark per peer counts them.

    ``cnt`` (optional, ``nloc + slots`` entries, zeroed by the caller): also ``cnt[t] += 1``
    for every target ``t`` (owned vertex or slot), in the same pass -- what
    :func:`asapgraph.kernels._graph.count_ids` computes, with its counter prefetch, without
    a second read of the targets.
    """
    cdef int64_t u, k, t, j, n = indptr.shape[0] - 1, m = indptr[n]
    cdef bint counting = cnt is not None
    with nogil:
        for u in range(n):
            for k in range(indptr[u], indptr[u + 1]):
                t = tgt[k]
                if counting:
                    if k + PF_FAR < m:
                        asap_pull_prefetch_w(&cnt[tgt[k + PF_FAR]])
                    cnt[t] += 1
                if t >= nloc:
                    j = slot_peer[t - nloc]
                    ne[j] += 1
                    if last[j] != u:
                        last[j] = u
                        ng[j] += 1


def combine(const double[::1] c, const int64_t[::1] ptr, const int32_t[::1] src,
            const double[::1] w, double[::1] out, bint prefetch=False):
    """``out[s] = sum_{ptr[s] <= k < ptr[s+1]} c[src[k]] * w[k]`` (``w`` empty: ``* 1``):
    one partial sum per slot (remote target) of one peer, the combined form's message.

    ``prefetch``: software-prefetch ``c[src[k + PF_DIST]]`` as the sweep does; needs
    ``len(src) >= ptr[-1] + PF_DIST`` (zero padding), else ignored.

    Returns
    -------
    int
        Edges visited (``ptr[-1]``).
    """
    cdef Py_ssize_t s, ns = ptr.shape[0] - 1
    cdef int64_t k
    cdef double acc
    cdef bint hasw = w.shape[0] > 0
    if ns < 0:
        return 0
    cdef bint pf = prefetch and src.shape[0] >= ptr[ns] + PF_DIST
    with nogil:
        for s in range(ns):
            acc = 0.0
            if hasw:
                for k in range(ptr[s], ptr[s + 1]):
                    if pf:
                        asap_prefetch_r(&c[src[k + PF_DIST]])
                    acc = acc + c[src[k]] * w[k]
            else:
                for k in range(ptr[s], ptr[s + 1]):
                    if pf:
                        asap_prefetch_r(&c[src[k + PF_DIST]])
                    acc = acc + c[src[k]]
            out[s] = acc
    return int(ptr[ns])


# ----------------------------------------------------------------- from the in-rows
# A BSP rank whose loader shipped each edge to the owner of its destination
# (:class:`asapgraph.partition.rows.InRows`) builds the same layout without a
# transposition: every in-edge already sits in its row, with its source's dense id.
# :func:`number_ghosts` gives every source its column (owned: its new label; remote: a
# ghost position in its owner's segment, in the owner's label order), :func:`map_rows`
# rewrites the rows (relabelled) into columns, and :func:`compact_combined` turns the
# edges of the in-peers that take the combined form into one edge per slot.


cdef inline int64_t _seg(const int64_t[::1] lo, int64_t c) noexcept nogil:
    """Index ``j`` of the segment ``lo[j] <= c < lo[j + 1]`` (``lo`` increasing)."""
    cdef int64_t a = 0, b = lo.shape[0] - 1, h
    while b - a > 1:
        h = (a + b) >> 1
        if lo[h] <= c:
            a = h
        else:
            b = h
    return a


def number_ghosts(const int32_t[::1] src, const int32_t[::1] order,
                  const int64_t[::1] starts, int64_t me, int64_t header, uint8_t[::1] mark,
                  int32_t[::1] lookup, int32_t[::1] send, int64_t[::1] ng,
                  int64_t[::1] seg_lo):
    """The column of every dense id this rank's in-edges read, and each in-peer's send list.

    ``order[starts[q]:starts[q + 1]]``: rank ``q``'s vertices (dense ids) in its label
    order; ``mark`` (``n`` bytes) must be zero, ``lookup`` (``n`` entries) is written
    where read.  Marks every source of ``src`` (a store per edge, into ``n`` bytes), then
    walks the ranks: an owned vertex gets its label (its position in ``order`` of
    ``me``); a marked vertex of rank ``q != me`` gets the column ``seg_lo[q] + header +
    g``, ``g`` its position among ``q``'s marked vertices (``q``'s label order), and
    ``send`` (concatenated over ``q``) receives its label; ``ng[q]``: ``q``'s vertices
    read here.  Columns start at ``nloc`` (the length of ``me``'s block) and a rank with
    ``ng[q] > 0`` takes ``header + ng[q]`` of them (from ``seg_lo[q]``; ``seg_lo[K]``:
    the columns in all).

    Returns
    -------
    int
        Entries of ``send`` written.
    """
    cdef int64_t K = starts.shape[0] - 1, k, q, j, v, g, col, s = 0
    cdef int64_t m = src.shape[0]
    with nogil:
        for k in range(m):
            mark[src[k]] = 1
        col = starts[me + 1] - starts[me]
        for q in range(K):
            seg_lo[q] = col
            if q == me:
                for j in range(starts[q], starts[q + 1]):
                    lookup[order[j]] = <int32_t>(j - starts[q])
                continue
            g = 0
            for j in range(starts[q], starts[q + 1]):
                v = order[j]
                if mark[v]:
                    lookup[v] = <int32_t>(col + header + g)
                    send[s + g] = <int32_t>(j - starts[q])
                    g += 1
            ng[q] = g
            s += g
            if g:
                col += header + g
        seg_lo[K] = col
    return s


def map_rows(const int64_t[::1] indptr, const int32_t[::1] src, const int64_t[::1] new2old,
             const int64_t[::1] old2new, const int32_t[::1] lookup,
             const int64_t[::1] seg_lo, int64_t[::1] out_ptr, int32_t[::1] out,
             int64_t[::1] nq, int64_t[::1] ne, uint8_t[::1] ghosted):
    """Row ``i`` of the result is row ``new2old[i]`` of ``(indptr, src)`` (``new2old``
    and ``old2new`` empty: row ``i``), every source ``u`` rewritten to ``lookup[u]``;
    ``out`` may be ``src`` itself when not relabelling.  For every column
    ``c >= seg_lo[0]`` (a ghost, of rank ``j``: ``seg_lo[j] <= c < seg_lo[j + 1]``),
    ``nq[j]`` counts the rows that read rank ``j`` (its distinct targets here), ``ne[j]``
    the edges (the cut edges of the pair), and ``ghosted[i]`` is set.  The input is read
    in order (the lookup of the source ``PF_FAR`` edges ahead prefetched) and the rows
    written to their new place: the scattered side is the stores, as in
    :func:`asapgraph.kernels._pagerank.permute_csr`.

    Counting: with at most :data:`SEG_FAST` ranks, once a row is written its columns are
    counted against the segment starts in a second, branch-free pass over the row just
    written (in cache): per row, ``g[j]`` columns at or above ``seg_lo[j]`` in
    registers, so rank ``j`` has ``g[j] - g[j + 1]`` of the row's edges (rmat:20, 2
    ranks: 27 -> 21 ms a rank, against a counter per segment updated at every edge,
    whose stores and reloads chain one edge to the next).  More ranks: a binary search
    per ghost column and a counter per segment.
    """
    cdef int64_t n = indptr.shape[0] - 1, i, o, k, w, w0, c, j, s, m = indptr[n]
    cdef int64_t K = seg_lo.shape[0] - 1
    cdef bint perm = new2old.shape[0] > 0
    cdef uint8_t gh
    cdef int64_t last[1025]
    cdef int64_t cnt_e[1025]
    cdef int64_t cnt_q[1025]
    cdef int64_t t[SEG_FAST + 1]
    cdef int32_t t0, t1, t2, t3, t4, t5, t6, t7
    cdef int64_t g0, g1, g2, g3, g4, g5, g6, g7
    cdef int64_t gg[SEG_FAST + 1]
    if K > 1024:
        raise ValueError("map_rows supports at most 1024 ranks")
    for j in range(K + 1):
        last[j] = -1
        cnt_e[j] = 0
        cnt_q[j] = 0
    gg[SEG_FAST] = 0
    for j in range(SEG_FAST + 1):  # seg_lo[j] for j <= K, then past every column
        t[j] = seg_lo[j] if j <= K else _INT32_MAX
        if t[j] > _INT32_MAX:
            raise ValueError("map_rows: columns must fit in int32")
    t0, t1, t2, t3 = <int32_t>t[0], <int32_t>t[1], <int32_t>t[2], <int32_t>t[3]
    t4, t5, t6, t7 = <int32_t>t[4], <int32_t>t[5], <int32_t>t[6], <int32_t>t[7]
    with nogil:
        out_ptr[0] = 0
        for i in range(n):
            o = new2old[i] if perm else i
            out_ptr[i + 1] = out_ptr[i] + indptr[o + 1] - indptr[o]
        for o in range(n):
            i = old2new[o] if perm else o
            w0 = w = out_ptr[i]
            if K <= SEG_FAST:
                for k in range(indptr[o], indptr[o + 1]):
                    if k + PF_FAR < m:
                        asap_prefetch_r(&lookup[src[k + PF_FAR]])
                    out[w] = lookup[src[k]]
                    w += 1
                g0 = g1 = g2 = g3 = g4 = g5 = g6 = g7 = 0
                for k in range(w0, w):
                    g0 += out[k] >= t0
                    g1 += out[k] >= t1
                if K > 2:
                    for k in range(w0, w):
                        g2 += out[k] >= t2
                        g3 += out[k] >= t3
                        g4 += out[k] >= t4
                        g5 += out[k] >= t5
                        g6 += out[k] >= t6
                        g7 += out[k] >= t7
                ghosted[i] = g0 > 0
                if g0:  # segment j + 1 (rank j): columns in [t_j, t_{j+1})
                    gg[0], gg[1], gg[2], gg[3] = g0, g1, g2, g3
                    gg[4], gg[5], gg[6], gg[7] = g4, g5, g6, g7
                    for j in range(SEG_FAST):
                        cnt_e[j + 1] += gg[j] - gg[j + 1]
                        cnt_q[j + 1] += gg[j] > gg[j + 1]
                continue
            gh = 0
            for k in range(indptr[o], indptr[o + 1]):
                if k + PF_FAR < m:
                    asap_prefetch_r(&lookup[src[k + PF_FAR]])
                c = lookup[src[k]]
                out[w] = <int32_t>c
                w += 1
                s = _seg(seg_lo, c) + 1 if c >= t0 else 0
                cnt_e[s] += 1
                cnt_q[s] += last[s] != o
                last[s] = o
                gh |= s > 0
            ghosted[i] = gh
    for j in range(K):
        ne[j] += cnt_e[j + 1]
        nq[j] += cnt_q[j + 1]
    return m


def row_setup(const int64_t[::1] outdeg, const uint8_t[::1] dangling,
              const int64_t[::1] new2old, const int64_t[::1] owned, int64_t[::1] old2new,
              int32_t[::1] labels, double[::1] inv_out):
    """One pass over the new rows ``i`` (old row ``o = new2old[i]``; ``new2old`` empty:
    ``o = i``, and ``old2new`` is not written): ``old2new[o] = i``, ``labels[i] =
    owned[o]`` (the dense id of row ``i``) and ``inv_out[i] = 1 / outdeg[o]``, 0 for a
    dangling row -- the inverse permutation, the label order the ranks exchange and the
    sweep's ``inv_out``, without the temporaries of doing each in numpy."""
    cdef int64_t n = outdeg.shape[0], i, o
    cdef bint perm = new2old.shape[0] > 0
    if (dangling.shape[0] != n or owned.shape[0] != n or labels.shape[0] != n
            or inv_out.shape[0] != n or (perm and (new2old.shape[0] != n
                                                    or old2new.shape[0] != n))):
        raise ValueError("row_setup: every array must have one entry per row")
    with nogil:
        for i in range(n):
            o = new2old[i] if perm else i
            if perm:
                old2new[o] = i
            labels[i] = <int32_t>owned[o]
            inv_out[i] = 0.0 if dangling[o] or outdeg[o] <= 0 else 1.0 / <double>outdeg[o]
    return n


def compact_combined(int64_t[::1] indptr, int32_t[::1] idx, const int64_t[::1] seg_lo,
                     const int64_t[::1] new_lo, const uint8_t[::1] comb,
                     const int32_t[::1] send, const int64_t[::1] send_off, int64_t header,
                     int32_t[::1] csrc, const int64_t[::1] csrc_off, int64_t[::1] cslot,
                     const int64_t[::1] cslot_off):
    """The rows of ``(indptr, idx)``, in place, with the in-peers that combine.

    Segment ``j`` (columns ``[seg_lo[j], seg_lo[j+1])``, ``header`` then one ghost per
    value of rank ``j``'s send list ``send[send_off[j]:]``) moves to ``new_lo[j]``.  A
    pull segment's edges keep their ghost (shifted); a combined one's (``comb[j]``) are
    removed from their row and their sources (rank ``j``'s labels) written to ``csrc``
    (from ``csrc_off[j]``) grouped by row, ``cslot`` (from ``cslot_off[j]``) counting
    them per row that reads rank ``j`` (its slots, in row order); that row gets ONE edge
    from column ``new_lo[j] + header + slot``.  A row loses at least one edge per
    combined rank it reads and gains one, so the rows only shrink.

    Returns
    -------
    int
        Edges left.
    """
    cdef int64_t n = indptr.shape[0] - 1, K = seg_lo.shape[0] - 1
    cdef int64_t i, k, c, j, g, w = 0, start, end, np_, t, lo = seg_lo[0]
    cdef int64_t ns[1024]
    cdef int64_t cp[1024]
    cdef int64_t last[1024]
    cdef int64_t present[1024]
    if K > 1024:
        raise ValueError("compact_combined supports at most 1024 ranks")
    for j in range(K):
        ns[j] = 0
        cp[j] = csrc_off[j]
        last[j] = -1
    with nogil:
        start = indptr[0]
        for i in range(n):
            end = indptr[i + 1]
            np_ = 0
            for k in range(start, end):
                c = idx[k]
                if c < lo:
                    idx[w] = <int32_t>c
                    w += 1
                    continue
                j = _seg(seg_lo, c)
                if not comb[j]:
                    idx[w] = <int32_t>(c - seg_lo[j] + new_lo[j])
                    w += 1
                    continue
                g = c - seg_lo[j] - header
                csrc[cp[j]] = send[send_off[j] + g]
                cp[j] += 1
                if last[j] != i:
                    last[j] = i
                    cslot[cslot_off[j] + ns[j]] = 0
                    ns[j] += 1
                    present[np_] = j
                    np_ += 1
                cslot[cslot_off[j] + ns[j] - 1] += 1
            for t in range(np_):
                j = present[t]
                idx[w] = <int32_t>(new_lo[j] + header + ns[j] - 1)
                w += 1
            indptr[i + 1] = w
            start = end
        indptr[0] = 0
    return w
