# cython: language_level=3
"""A rank's out-CSR built from edge slices without shuffling edges (generator specs).

Rationale
---------
Algorithm
    Each of K ranks holds one contiguous slice of the global edge stream (a generator
    spec makes slice ``r`` in place, :mod:`asapgraph.partition.generated`).  Instead of
    sending every ``(src, dst)`` pair to the owner of ``src`` and counting-sorting there,

    1. every rank counting-sorts its own slice by *key*, the position of the source in
       owner-major order (the dense id itself for a range partition, whose owners hold
       increasing id ranges), keeping only the targets (:func:`place_by_key`): the rows
       of each owner are then one contiguous block, ordered by vertex, each row in edge
       order;
    2. owner ``q`` receives, from every rank, its block of targets (4 bytes per edge
       instead of 8) and the per-vertex row lengths of that block (4 bytes per vertex);
    3. the owner concatenates, for each of its vertices, the rows of ranks ``0..K-1`` in
       rank order (:func:`merge_rows`), a sequential pass.

    Slices are in increasing edge order by rank and each row keeps the edge order of its
    slice (the counting sort is stable), so every row of the result lists the vertex's
    out-edges in global edge order: the same rows for any K, and the same order as
    :class:`asapgraph.graph.Graph` gives the in-rows of one process.
Invariants
    ``pos`` (length ``nkeys + 1``) holds the exclusive prefix of the key counts before
    :func:`place_by_key` and the inclusive one after (``pos[k]`` = end of row ``k``);
    every slot of ``out`` is written once.  :func:`merge_rows` writes ``indptr`` with
    ``indptr[0] = 0`` and ``indptr[nloc] = len(out)``.
Cost
    :func:`place_by_key` is the random-access pass of any counting sort (the counter of
    the edge ``PF_FAR`` ahead and its slot are prefetched, as in
    :mod:`asapgraph.kernels._graph`); the merge reads and writes sequentially.
References
    D. E. Knuth, *The Art of Computer Programming* vol. 3, 5.2 (distribution counting);
    X. Zhu et al., "Gemini", OSDI 2016, section 4 (chunk-based partitioned CSR).
"""
from libc.stdint cimport int32_t, int64_t
from libc.string cimport memcpy
from asapgraph.kernels._typedefs cimport vid_t

cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define asaprb_prefetch_w(p) __builtin_prefetch((const void *)(p), 1, 3)
    #else
    #define asaprb_prefetch_w(p) ((void)(p))
    #endif
    """
    void asaprb_prefetch_w(const void *p) nogil

cdef enum:
    PF_FAR = 32    # prefetch distance for the counter of a future edge
    PF_NEAR = 16   # ... and for the slot that counter points to

ctypedef fused cnt_t:
    int32_t
    int64_t


def count_keys(const vid_t[::1] src, const int32_t[::1] key, cnt_t[::1] pos):
    """``pos[1 + k] += 1`` per edge, ``k = key[src[e]]`` (``key`` empty: ``k = src[e]``).

    ``pos`` (int32 when the offsets fit: half the cache the random increments use, or
    int64) has length ``nkeys + 1`` and is zeroed by the caller; keys must be in range.
    """
    cdef int64_t e, m = src.shape[0]
    cdef bint mapped = key.shape[0] > 0
    with nogil:
        if mapped:
            for e in range(m):
                if e + PF_FAR < m:
                    asaprb_prefetch_w(&pos[1 + key[src[e + PF_FAR]]])
                pos[1 + key[src[e]]] += 1
        else:
            for e in range(m):
                if e + PF_FAR < m:
                    asaprb_prefetch_w(&pos[1 + src[e + PF_FAR]])
                pos[1 + src[e]] += 1


def place_by_key(const vid_t[::1] src, const vid_t[::1] dst, const int32_t[::1] key,
                 cnt_t[::1] pos, vid_t[::1] out):
    """Stable counting-sort placement: ``out[pos[k]++] = dst[e]`` in edge order.

    ``k = key[src[e]]`` (``key`` empty: ``k = src[e]``); ``pos[k]`` enters as the start
    of row ``k`` (exclusive prefix of :func:`count_keys`) and leaves as its end.
    """
    cdef int64_t e, k, m = src.shape[0]
    cdef bint mapped = key.shape[0] > 0
    if out.shape[0] != m or dst.shape[0] != m:
        raise ValueError("src, dst and out must have the same length")
    with nogil:
        if mapped:
            for e in range(m):
                if e + PF_FAR < m:
                    asaprb_prefetch_w(&pos[key[src[e + PF_FAR]]])
                if e + PF_NEAR < m:
                    asaprb_prefetch_w(&out[pos[key[src[e + PF_NEAR]]]])
                k = key[src[e]]
                out[pos[k]] = dst[e]
                pos[k] += 1
        else:
            for e in range(m):
                if e + PF_FAR < m:
                    asaprb_prefetch_w(&pos[src[e + PF_FAR]])
                if e + PF_NEAR < m:
                    asaprb_prefetch_w(&out[pos[src[e + PF_NEAR]]])
                k = src[e]
                out[pos[k]] = dst[e]
                pos[k] += 1


def merge_rows(const vid_t[::1] recv, const cnt_t[:, ::1] cnt, const int64_t[::1] start,
               vid_t[::1] out, int64_t[::1] indptr):
    """Concatenate, vertex by vertex, the rows sent by ranks ``0..K-1`` (in rank order).

    ``recv`` holds the K blocks of targets, block ``q`` from ``start[q]``; ``cnt[q, i]`` is
    the length of vertex ``i``'s row in block ``q``.  Writes ``out`` (``len(recv)``) and
    ``indptr`` (``nloc + 1``).
    """
    cdef Py_ssize_t K = cnt.shape[0], nloc = cnt.shape[1], q, i
    cdef int64_t w = 0, c
    cdef int64_t cur[1024]
    if K > 1024:
        raise ValueError("merge_rows supports at most 1024 ranks")
    if start.shape[0] != K or indptr.shape[0] != nloc + 1 or out.shape[0] != recv.shape[0]:
        raise ValueError("merge_rows: inconsistent shapes")
    for q in range(K):
        cur[q] = start[q]
    with nogil:
        indptr[0] = 0
        for i in range(nloc):
            for q in range(K):
                c = cnt[q, i]
                if c == 1:
                    out[w] = recv[cur[q]]
                elif c > 1:
                    memcpy(&out[w], &recv[cur[q]], c * sizeof(vid_t))
                w += c
                cur[q] += c
            indptr[i + 1] = w
    if w != recv.shape[0]:
        raise ValueError(f"merge_rows: row lengths sum to {w}, expected {recv.shape[0]}")
