# cython: language_level=3
"""Content check of a binary ``.asg`` graph: one O(n + m) pass over its mapped sections.

The loader maps the sections straight from the file, and the kernels trust them (no bounds
checks): an indptr that decreases or an index >= n reads out of bounds.  ``check_csr``
verifies everything the kernels and the distributed loader assume, in one sequential pass
over the rows (the page-in a PageRank run pays anyway):

* ``indptr[0] == 0``, non-decreasing, ``indptr[n] == m``;
* every index in ``[0, n)``;
* every weight finite;
* ``out_degree`` equals the count of each source in the rows, ``out_weight`` (weighted
  graphs) the sum of its weights (to rounding: the writer may sum in another order);
* ``ids`` (when present) non-negative; whether they are strictly increasing (as every
  reader writes them) is reported last (``BAD_IDS_ORDER``), so that the caller can accept
  unsorted ids that are unique (a graph built with its own ids through the API).

Returns ``(code, where, value)``: code 0 when all holds, else one of the ``BAD_*`` codes
with the vertex/edge at fault and the offending value (see :mod:`asapgraph.graph.io._binary`
for the messages).
"""
from libc.math cimport fabs, isfinite
from libc.stdint cimport int64_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free
from asapgraph.kernels._typedefs cimport eid_t, vid_t

cdef enum:
    C_OK = 0
    C_BAD_INDPTR_START = 1  # where = 0, value = indptr[0]
    C_BAD_INDPTR_ORDER = 2  # where = vertex v with indptr[v+1] < indptr[v]
    C_BAD_INDPTR_END = 3  # value = indptr[n]
    C_BAD_INDEX = 4  # where = edge k, value = indices[k]
    C_BAD_WEIGHT = 5  # where = edge k
    C_BAD_OUT_DEGREE = 6  # where = vertex v
    C_BAD_OUT_WEIGHT = 7  # where = vertex v
    C_BAD_IDS_NEGATIVE = 8  # where = vertex v, value = ids[v]
    C_BAD_IDS_ORDER = 9  # where = first vertex v with ids[v] <= ids[v-1] (all else holds)

OK = C_OK
BAD_INDPTR_START = C_BAD_INDPTR_START
BAD_INDPTR_ORDER = C_BAD_INDPTR_ORDER
BAD_INDPTR_END = C_BAD_INDPTR_END
BAD_INDEX = C_BAD_INDEX
BAD_WEIGHT = C_BAD_WEIGHT
BAD_OUT_DEGREE = C_BAD_OUT_DEGREE
BAD_OUT_WEIGHT = C_BAD_OUT_WEIGHT
BAD_IDS_NEGATIVE = C_BAD_IDS_NEGATIVE
BAD_IDS_ORDER = C_BAD_IDS_ORDER


def check_csr(const eid_t[::1] indptr, const vid_t[::1] indices, const double[::1] weights,
              const int64_t[::1] out_degree, const double[::1] out_weight,
              const int64_t[::1] ids, bint weighted, bint has_ids):
    """``(code, where, value)`` of the first inconsistency, ``(0, -1, 0)`` if none.

    ``weights``/``out_weight``/``ids`` may be empty when absent (``weighted``/``has_ids``
    false).  Raises MemoryError if the per-vertex scratch (4n to 24n bytes) cannot be had.
    """
    cdef int64_t n = indptr.shape[0] - 1, m = indices.shape[0], v, k, lo, hi, s
    cdef int64_t *cnt = NULL
    cdef uint32_t *cnt32 = NULL
    cdef uint64_t un
    cdef bint small
    cdef double *wsum = NULL
    cdef double *asum = NULL
    cdef double w, tol
    cdef int code = 0
    cdef int64_t where = -1, value = 0, unsorted = -1
    cdef bint neg = False
    if n < 0:
        return C_BAD_INDPTR_END, -1, 0
    if indptr[0] != 0:
        return C_BAD_INDPTR_START, 0, indptr[0]
    with nogil:
        for v in range(n):
            if indptr[v + 1] < indptr[v]:
                code, where = C_BAD_INDPTR_ORDER, v
                break
    if code:
        return code, where, indptr[where + 1]
    if indptr[n] != m:
        return C_BAD_INDPTR_END, n, indptr[n]
    if has_ids:
        with nogil:
            for v in range(n):
                if ids[v] < 0:
                    code, where, value = C_BAD_IDS_NEGATIVE, v, ids[v]
                    break
                if v and unsorted < 0 and ids[v] <= ids[v - 1]:
                    unsorted = v
        if code:
            return code, where, value
    # counts: 32-bit when they cannot overflow (half the scratch, fewer cache misses)
    small = m < 4294967295
    if small:
        cnt32 = <uint32_t *> calloc(n + 1, sizeof(uint32_t))
    else:
        cnt = <int64_t *> calloc(n + 1, sizeof(int64_t))
    if weighted:
        wsum = <double *> calloc(n + 1, sizeof(double))
    if (cnt == NULL and cnt32 == NULL) or (weighted and wsum == NULL):
        free(cnt)
        free(cnt32)
        free(wsum)
        raise MemoryError("checking a binary graph: no memory for the per-vertex counts")
    un = <uint64_t> n
    try:
        with nogil:
            # edges in file order (rows are contiguous: indptr was checked above)
            if not weighted and small:
                for k in range(m):
                    s = indices[k]
                    if <uint64_t> s >= un:
                        code, where, value = C_BAD_INDEX, k, s
                        break
                    cnt32[s] += 1
            else:
                for k in range(m):
                    s = indices[k]
                    if <uint64_t> s >= un:
                        code, where, value = C_BAD_INDEX, k, s
                        break
                    if small:
                        cnt32[s] += 1
                    else:
                        cnt[s] += 1
                    if weighted:
                        w = weights[k]
                        if not isfinite(w):
                            code, where = C_BAD_WEIGHT, k
                            break
                        if w < 0:
                            neg = True
                        wsum[s] += w
            if code == 0:
                for v in range(n):
                    if (<int64_t> cnt32[v] if small else cnt[v]) != out_degree[v]:
                        code, where, value = C_BAD_OUT_DEGREE, v, out_degree[v]
                        break
            if code == 0 and weighted and neg:
                # negative weights: the tolerance scales with the absolute sums
                asum = <double *> calloc(n + 1, sizeof(double))
                if asum != NULL:
                    for k in range(m):
                        asum[indices[k]] += fabs(weights[k])
            if code == 0 and weighted:
                for v in range(n):
                    w = out_weight[v]
                    if w == wsum[v]:
                        continue
                    tol = 1e-9 * (asum[v] if asum != NULL else fabs(wsum[v])) + 1e-300
                    if not fabs(w - wsum[v]) <= tol:   # NaN fails too
                        code, where = C_BAD_OUT_WEIGHT, v
                        break
    finally:
        free(cnt)
        free(cnt32)
        free(wsum)
        free(asum)
    if code == 0 and unsorted >= 0:
        # reported last: the caller accepts unsorted ids that are unique
        return C_BAD_IDS_ORDER, unsorted, ids[unsorted]
    return code, where, value
