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
from libc.stdint cimport int32_t, int64_t

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
