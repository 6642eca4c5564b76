# cython: language_level=3
"""The in-cache half of a blocked (propagation-blocking) counting sort.

A counting sort's placement pass writes every element at a random offset of the output;
on arrays far larger than the cache each write is a miss.  The blocked form first
appends the elements to blocks of consecutive keys in input order (a few hundred
sequential write streams, each element's offset in its block kept in a 2-byte ``low``
array), then sorts each block in place through a thread's buffer: :func:`sort_block`.
Both steps are stable, so the result is the plain counting sort's.  Used by
``_graph.remap_place_blocked`` (a blocked ``_rankbuild.place_by_key`` was measured and not
kept: benchmarks/REPORT.md, issue 13, eighth session).

Reference: S. Beamer, K. Asanovic, D. Patterson, "Reducing PageRank communication via
propagation blocking", IPDPS 2017.
"""
from libc.stdint cimport int32_t, int64_t, uint16_t
from libc.string cimport memcpy

ctypedef fused pay_t:
    int32_t
    int64_t


cdef inline void sort_block(pay_t *out, int64_t s0, int64_t s1, const uint16_t *low,
                            int64_t *cur, pay_t *buf) noexcept nogil:
    """Stable counting sort of ``out[s0:s1]`` by ``low[s0:s1]``: element ``j`` goes to
    ``cur[low[j]]++`` (``cur`` holds each key's first slot, absolute in ``out``);
    ``buf`` holds ``s1 - s0`` elements."""
    cdef int64_t j, k
    cdef uint16_t l
    memcpy(buf, out + s0, <size_t>(s1 - s0) * sizeof(pay_t))
    for j in range(s1 - s0):
        l = low[s0 + j]
        k = cur[l]
        cur[l] = k + 1
        out[k] = buf[j]
