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

* :func:`count_targets`: edges per target (owned vertex or slot), one pass;
* :func:`asapgraph.kernels._graph.transpose_csr` with preset offsets (not here): one
  counting-sort pass over the out-edges in source order that writes each local edge's
  new source label into its in-CSR row and each remote edge's into its slot's bucket
  (the bucket region follows the in-CSR in the same array, so the pass has no branch on
  the target's kind);
* :func:`ghost_positions`: for one peer, the sorted set of sources that peer needs (the
  send list) and, per edge, the source's position in it;
* :func:`place_remote`: one in-peer's received edges (slot counts and ghost positions)
  appended to their rows;
* :func:`gather`: ``out[i] = c[idx[i]]``, the boundary values packed into a message.

The pass counting targets scatters into an array of a few MB: it software-prefetches
the counter of the edge ``PF_FAR`` edges ahead, as :func:`asapgraph.kernels._graph.build_in_csr`
does.  Every loop runs over
arrays without the GIL; the Python side loops over peers only.
Invariant: new labels come from ``old2new`` (a permutation of ``0..nloc-1``); every
source written is below ``nloc`` (owned) or inside one peer's ghost segment.
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
    PF_FAR = 32   # prefetch distance (edges) for the counter of a target


def count_targets(const vid_t[::1] tgt, int64_t[::1] cnt):
    """``cnt[tgt[e]] += 1`` for every edge (``cnt``: ``nloc + nslots`` zeros)."""
    cdef int64_t e, m = tgt.shape[0]
    with nogil:
        for e in range(m):
            if e + PF_FAR < m:
                asap_pull_prefetch_w(&cnt[tgt[e + PF_FAR]])
            cnt[tgt[e]] += 1


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
