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
       rank order (:func:`merge_rows`), a sequential pass; :func:`merge_rows_tail` does it
       in place, its own rows read from the tail of the output buffer (they never
       travel, and no second edge-sized array is needed).

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
from libc.string cimport memcpy, memmove
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
    of row ``k`` (exclusive prefix of :func:`count_keys`) and leaves as its end.  ``out``
    may be longer than ``src`` (rows placed at offsets of the caller's choosing, every
    ``pos[k]`` + row length within ``out``).
    """
    cdef int64_t e, k, m = src.shape[0]
    cdef bint mapped = key.shape[0] > 0
    if out.shape[0] < m or dst.shape[0] != m:
        raise ValueError("src and dst must have the same length, out at least that")
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


def merge_rows_tail(const vid_t[::1] recv, const cnt_t[:, ::1] cnt,
                    const int64_t[::1] start, vid_t[::1] buf, Py_ssize_t own,
                    int64_t own_start, int64_t[::1] indptr):
    """:func:`merge_rows` in place: block ``own`` (this rank's rows to itself) is read
    from ``buf[own_start:]`` and the result is written to ``buf[:total]``, where
    ``total`` is the sum of ``cnt``; the other blocks come from ``recv`` (block ``q``
    from ``start[q]``; ``start[own]`` is ignored).

    Safe because nothing unread is overwritten: before vertex ``i``'s rows are written
    the write position is the sum of the rows of vertices ``< i`` over all blocks, at
    most the own block's rows before ``i`` plus every other block's total, which is
    ``own_start`` plus the own block's rows before ``i`` (the read position) whenever
    ``own_start >= total - own_total`` (checked).  No second edge-sized array, and the
    own rows never travel through MPI.
    """
    cdef Py_ssize_t K = cnt.shape[0], nloc = cnt.shape[1], q, i
    cdef int64_t w = 0, c, total = 0
    cdef int64_t cur[1024]
    cdef int64_t tot[1024]
    if K > 1024:
        raise ValueError("merge_rows_tail supports at most 1024 ranks")
    if start.shape[0] != K or indptr.shape[0] != nloc + 1 or not 0 <= own < K:
        raise ValueError("merge_rows_tail: inconsistent shapes")
    with nogil:
        for q in range(K):
            tot[q] = 0
            for i in range(nloc):
                tot[q] += cnt[q, i]
            total += tot[q]
    if own_start < total - tot[own] or own_start + tot[own] > buf.shape[0]:
        raise ValueError("merge_rows_tail: the own block must lie in buf[total - own_total:]")
    for q in range(K):
        if q != own and tot[q] and (start[q] < 0 or start[q] + tot[q] > recv.shape[0]):
            raise ValueError("merge_rows_tail: a block lies outside recv")
        cur[q] = start[q]
    cur[own] = own_start
    with nogil:
        indptr[0] = 0
        for i in range(nloc):
            for q in range(K):
                c = cnt[q, i]
                if c == 0:
                    continue
                if q == own:  # may overlap its destination (read ahead of the write)
                    if c == 1:
                        buf[w] = buf[cur[q]]
                    elif w != cur[q]:
                        memmove(&buf[w], &buf[cur[q]], c * sizeof(vid_t))
                elif c == 1:
                    buf[w] = recv[cur[q]]
                else:
                    memcpy(&buf[w], &recv[cur[q]], c * sizeof(vid_t))
                w += c
                cur[q] += c
            indptr[i + 1] = w
