# cython: language_level=3
"""Counter-based random graph kernels (R-MAT / Kronecker and uniform Erdős–Rényi).

Rationale
---------
Algorithm
    R-MAT (Chakrabarti, Zhan, Faloutsos 2004) as specified by Graph500: each edge picks one
    of the four quadrants of the adjacency matrix ``scale`` times with probabilities
    ``a, b, c, d = 1-a-b-c`` (Graph500: 0.57, 0.19, 0.19, 0.05); the bits chosen at every
    level form the source and destination ids.  Vertex ids are then relabelled by a
    pseudo-random permutation so that the degree is not correlated with the id (Graph500
    does the same; without it the graph has unrealistic locality).  Erdős–Rényi here is the
    ``G(n, m)`` multigraph model with replacement: ``m`` directed edges whose endpoints are
    drawn independently and uniformly from ``0..n-1`` (as GAPBS's ``-u`` generator);
    duplicate edges and self-loops are possible and kept.
Variant: counter-based randomness
    The random bits of edge ``e`` are ``splitmix64`` outputs at stream positions
    ``e*K + j`` (``K = ceil(scale/4)`` words per edge), i.e. a pure function of
    ``(seed, e, j)``.  Each 64-bit word serves four levels with 16 bits each, so the
    quadrant probabilities are rounded to multiples of 2**-16 (a = 0.57 becomes
    0.570007...); one hash per level was 3x slower (the hash is latency-bound).  Any
    process can therefore generate any slice ``[start, stop)`` of the edge list without
    generating the rest, the result does not depend on the number of threads or ranks,
    and ``rmat()`` is literally the concatenation of its slices.  The vertex permutation is
    a bijective hash of ``scale``-bit integers (rounds of xorshift and multiplication by an
    odd constant modulo ``2**scale``, constants derived from the seed), so it needs no
    ``n``-entry table.
Invariants
    Output arrays are written exactly once per entry; no temporaries besides the outputs.
    Every output id is in ``0..n-1``.
References
    D. Chakrabarti, Y. Zhan, C. Faloutsos, "R-MAT: A Recursive Model for Graph Mining",
    SDM 2004.  Graph500 specification, section "Kernel 1 / graph generation".
    G. Steele, D. Lea, C. Flood, "Fast splittable pseudorandom number generators",
    OOPSLA 2014 (splitmix64).  S. Beamer, K. Asanović, D. Patterson, "The GAP Benchmark
    Suite", arXiv:1508.03619, 2015 (uniform generator).
"""
from cython.parallel cimport prange
from libc.stdint cimport int64_t, uint64_t, uint32_t

cdef extern from *:
    """
#define ASAP_GOLDEN 0x9E3779B97F4A7C15ULL
"""
    uint64_t GOLDEN "ASAP_GOLDEN"


cdef inline uint64_t _mix64(uint64_t z) noexcept nogil:
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL
    return z ^ (z >> 31)


cdef inline uint64_t _rmat_edge(uint64_t key, int scale, uint64_t ta, uint64_t tab,
                                uint64_t tabc, uint64_t* dout) noexcept nogil:
    # R-MAT bits of one edge; 16 random bits per level, 4 levels per 64-bit hash.
    cdef uint64_t s = 0, d = 0, h, u
    cdef int level = 0, k
    while level < scale:
        key = key + GOLDEN
        h = _mix64(key)
        for k in range(4):
            if level >= scale:
                break
            u = h >> 48
            h = h << 16
            # branchless quadrant choice (the branches are unpredictable by design)
            s = (s << 1) | <uint64_t>(u >= tab)
            d = (d << 1) | (<uint64_t>(u >= ta) ^ <uint64_t>(u >= tab) ^ <uint64_t>(u >= tabc))
            level += 1
    dout[0] = d
    return s


cdef inline uint64_t _perm(uint64_t x, uint64_t mask, int shift, uint64_t k1, uint64_t k2,
                           uint64_t k3, uint64_t x1) noexcept nogil:
    # bijection on [0, mask]: xor const, (xorshift, multiply by odd) x3
    x = (x ^ x1) & mask
    x = ((x ^ (x >> shift)) * k1) & mask
    x = ((x ^ (x >> shift)) * k2) & mask
    x = ((x ^ (x >> shift)) * k3) & mask
    return x ^ (x >> shift)


cdef class _PermKeys:
    cdef public uint64_t mask, k1, k2, k3, x1
    cdef public int shift

    def __init__(self, int scale, uint64_t seed):
        cdef uint64_t s = _mix64(seed ^ 0xD1B54A32D192ED03ULL)
        self.mask = (<uint64_t>1 << scale) - 1 if scale < 64 else <uint64_t>0xFFFFFFFFFFFFFFFFULL
        self.shift = scale // 2 + 1
        self.k1 = _mix64(s + GOLDEN) | 1
        self.k2 = _mix64(s + 2 * GOLDEN) | 1
        self.k3 = _mix64(s + 3 * GOLDEN) | 1
        self.x1 = _mix64(s + 4 * GOLDEN) & self.mask


def rmat_fill(int64_t[::1] src, int64_t[::1] dst, int scale, uint64_t seed, int64_t start,
              double a, double b, double c, bint permute):
    """Fill ``src[i], dst[i]`` with R-MAT edge number ``start + i`` (see module docstring)."""
    cdef int64_t i, e, cnt = src.shape[0]
    cdef int level, words = (scale + 3) // 4
    cdef uint64_t base = _mix64(seed ^ 0x5851F42D4C957F2DULL)
    cdef uint64_t ta = <uint64_t>(a * 65536.0 + 0.5)
    cdef uint64_t tab = <uint64_t>((a + b) * 65536.0 + 0.5)
    cdef uint64_t tabc = <uint64_t>((a + b + c) * 65536.0 + 0.5)
    cdef uint64_t h, u, s, d
    cdef _PermKeys pk = _PermKeys(scale, seed)
    cdef uint64_t mask = pk.mask, k1 = pk.k1, k2 = pk.k2, k3 = pk.k3, x1 = pk.x1
    cdef int shift = pk.shift
    with nogil:
        for i in prange(cnt, schedule="static"):
            e = start + i
            s = _rmat_edge(base + (<uint64_t>e * words) * GOLDEN, scale, ta, tab, tabc, &d)
            if permute:
                s = _perm(s, mask, shift, k1, k2, k3, x1)
                d = _perm(d, mask, shift, k1, k2, k3, x1)
            src[i] = <int64_t>s
            dst[i] = <int64_t>d


def permute_fill(int64_t[::1] ids, int scale, uint64_t seed):
    """In place: ``ids[i] = pi(ids[i])``, the R-MAT vertex permutation for ``(scale, seed)``."""
    cdef int64_t i, cnt = ids.shape[0]
    cdef _PermKeys pk = _PermKeys(scale, seed)
    cdef uint64_t mask = pk.mask, k1 = pk.k1, k2 = pk.k2, k3 = pk.k3, x1 = pk.x1
    cdef int shift = pk.shift
    with nogil:
        for i in prange(cnt, schedule="static"):
            ids[i] = <int64_t>_perm(<uint64_t>ids[i], mask, shift, k1, k2, k3, x1)


def er_fill(int64_t[::1] src, int64_t[::1] dst, int64_t n, uint64_t seed, int64_t start):
    """Fill ``src[i], dst[i]`` with uniform edge number ``start + i`` over ``n`` vertices."""
    cdef int64_t i, e, cnt = src.shape[0]
    cdef uint64_t base = _mix64(seed ^ 0x2545F4914F6CDD1DULL)
    cdef double scale = <double>n / 9007199254740992.0   # n / 2**53
    cdef int64_t s, d
    with nogil:
        for i in prange(cnt, schedule="static"):
            e = start + i
            s = <int64_t>(<double>(_mix64(base + (<uint64_t>e * 2 + 1) * GOLDEN) >> 11) * scale)
            d = <int64_t>(<double>(_mix64(base + (<uint64_t>e * 2 + 2) * GOLDEN) >> 11) * scale)
            src[i] = s if s < n else n - 1
            dst[i] = d if d < n else n - 1
