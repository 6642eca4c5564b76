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
Variant: block-vectorised levels (``asap_rmat_fill``, scale <= 32)
    The per-edge loop (kept as ``rmat_fill_scalar``: the reference, and the path for
    scale > 32) spent 543 instructions per edge at scale 20 (callgrind): a data-dependent
    inner loop with an early exit, three compare/set pairs per level and a serial chain
    through ``s``/``d``.  The block kernel takes 64 edges at a time: the hash words of the
    block, then per level one branch-free loop over the 64 lanes computing the quadrant
    ``q = [u>=a] + [u>=a+b] + [u>=a+b+c]`` as a sum of ``(t-1-u) >> 63`` terms and
    appending it to an interleaved accumulator (source bit ``q>>1``, destination bit
    ``q&1``), then a vectorised bit de-interleave and the permutation in 32-bit lanes
    (exact modulo ``2**scale <= 2**32``).  GCC vectorises these loops (SSE2 baseline plus
    an AVX2 clone chosen at load time by ``target_clones``): 130 instructions per edge,
    4.2x fewer, bit-identical output (tested against the scalar path).  Output may be
    int32 (half the memory: ``rmat:24`` takes 2.1 GB instead of 4.3 GB).
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
from libc.stdint cimport int32_t, int64_t, uint64_t, uint32_t
from asapgraph.kernels._typedefs cimport eid_t, vid_t

import numpy as np

cdef extern from "omp.h" nogil:
    int omp_get_max_threads()

cdef extern from *:
    """
#include <stdint.h>
#define ASAP_GOLDEN 0x9E3779B97F4A7C15ULL
#define ASAP_RMAT_BLOCK 64

static inline uint64_t asap_mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* the even bits 0, 2, 4, ... of x packed into the low 32 bits */
static inline uint64_t asap_even_bits(uint64_t x)
{
    x &= 0x5555555555555555ULL;
    x = (x | (x >> 1)) & 0x3333333333333333ULL;
    x = (x | (x >> 2)) & 0x0F0F0F0F0F0F0F0FULL;
    x = (x | (x >> 4)) & 0x00FF00FF00FF00FFULL;
    x = (x | (x >> 8)) & 0x0000FFFF0000FFFFULL;
    x = (x | (x >> 16)) & 0x00000000FFFFFFFFULL;
    return x;
}

typedef struct { uint64_t mask, k1, k2, k3, x1; int shift; } asap_perm_t;

static inline uint64_t asap_perm(uint64_t x, const asap_perm_t *p)
{
    uint64_t mask = p->mask;
    int sh = p->shift;
    x = (x ^ p->x1) & mask;
    x = ((x ^ (x >> sh)) * p->k1) & mask;
    x = ((x ^ (x >> sh)) * p->k2) & mask;
    x = ((x ^ (x >> sh)) * p->k3) & mask;
    return x ^ (x >> sh);
}

static inline uint32_t asap_perm32(uint32_t x, uint32_t mask, int sh, uint32_t k1,
                                   uint32_t k2, uint32_t k3, uint32_t x1)
{
    x = (x ^ x1) & mask;
    x = ((x ^ (x >> sh)) * k1) & mask;
    x = ((x ^ (x >> sh)) * k2) & mask;
    x = ((x ^ (x >> sh)) * k3) & mask;
    return x ^ (x >> sh);
}

/* R-MAT edges start .. start+cnt-1 into src/dst (int32 when out32, else int64); scale <= 32.
 * Block-structured so that the per-level work (the bulk) is a branch-free loop over
 * ASAP_RMAT_BLOCK edges with 64-bit lanes, which the compiler vectorises (SSE2 by default,
 * AVX2 in the clone picked at load time on CPUs that have it).  Per level and edge:
 * u = next 16 random bits; q = [u >= ta] + [u >= tab] + [u >= tabc] is the quadrant
 * (0: a, 1: b, 2: c, 3: d), so the source bit is q >> 1 and the destination bit q & 1;
 * [u >= t] is computed as (t - 1 - u) >> 63 (no compare, no branch).  The quadrant pairs
 * are accumulated interleaved in z and split at the end.  Same bits as the scalar
 * definition in the module docstring, edge for edge. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(ASAP_NO_CLONES)
__attribute__((target_clones("default", "avx2")))
#endif
static void asap_rmat_fill(void *src, void *dst, int out32, int64_t cnt, uint64_t start,
                           uint64_t base, int scale, uint64_t ta, uint64_t tab, uint64_t tabc,
                           int permute, const asap_perm_t *pk)
{
    uint64_t h[ASAP_RMAT_BLOCK], z[ASAP_RMAT_BLOCK];
    uint32_t s32[ASAP_RMAT_BLOCK], d32[ASAP_RMAT_BLOCK];
    /* scale <= 32: the permutation works modulo 2**scale <= 2**32, so 32-bit lanes give
       the same bits as asap_perm (the low 32 bits of a product depend only on the low
       32 bits of its factors), and vectorise (vpmulld). */
    const uint32_t m32 = (uint32_t)pk->mask, k1 = (uint32_t)pk->k1, k2 = (uint32_t)pk->k2,
                   k3 = (uint32_t)pk->k3, x1 = (uint32_t)pk->x1;
    const int sh = pk->shift;
    const int words = (scale + 3) / 4;
    const uint64_t ta1 = ta - 1, tab1 = tab - 1, tabc1 = tabc - 1;
    const uint64_t stride = (uint64_t)words * ASAP_GOLDEN;
    for (int64_t i0 = 0; i0 < cnt; i0 += ASAP_RMAT_BLOCK) {
        int64_t nb = cnt - i0 < ASAP_RMAT_BLOCK ? cnt - i0 : ASAP_RMAT_BLOCK;
        uint64_t key0 = base + (start + (uint64_t)i0) * stride;
        for (int j = 0; j < ASAP_RMAT_BLOCK; j++)
            z[j] = 0;
        for (int w = 0; w < words; w++) {
            uint64_t kw = key0 + (uint64_t)(w + 1) * ASAP_GOLDEN;
            for (int j = 0; j < ASAP_RMAT_BLOCK; j++)
                h[j] = asap_mix64(kw + (uint64_t)j * stride);
            int lv = scale - 4 * w < 4 ? scale - 4 * w : 4;
            for (int l = 0; l < lv; l++) {
                const int sh = 48 - 16 * l;
                for (int j = 0; j < ASAP_RMAT_BLOCK; j++) {
                    uint64_t u = (h[j] >> sh) & 0xFFFFULL;
                    uint64_t q = ((ta1 - u) >> 63) + ((tab1 - u) >> 63) + ((tabc1 - u) >> 63);
                    z[j] = (z[j] << 2) | q;
                }
            }
        }
        for (int j = 0; j < ASAP_RMAT_BLOCK; j++) {
            s32[j] = (uint32_t)asap_even_bits(z[j] >> 1);
            d32[j] = (uint32_t)asap_even_bits(z[j]);
        }
        if (permute) {
            for (int j = 0; j < ASAP_RMAT_BLOCK; j++) {
                s32[j] = asap_perm32(s32[j], m32, sh, k1, k2, k3, x1);
                d32[j] = asap_perm32(d32[j], m32, sh, k1, k2, k3, x1);
            }
        }
        if (out32) {
            for (int64_t j = 0; j < nb; j++) {
                ((int32_t *)src)[i0 + j] = (int32_t)s32[j];
                ((int32_t *)dst)[i0 + j] = (int32_t)d32[j];
            }
        } else {
            for (int64_t j = 0; j < nb; j++) {
                ((int64_t *)src)[i0 + j] = (int64_t)s32[j];
                ((int64_t *)dst)[i0 + j] = (int64_t)d32[j];
            }
        }
    }
}
"""
    uint64_t GOLDEN "ASAP_GOLDEN"
    ctypedef struct asap_perm_t:
        uint64_t mask, k1, k2, k3, x1
        int shift
    void asap_rmat_fill(void* src, void* dst, int out32, int64_t cnt, uint64_t start,
                        uint64_t base, int scale, uint64_t ta, uint64_t tab, uint64_t tabc,
                        int permute, const asap_perm_t* pk) noexcept nogil


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


def rmat_fill(src, dst, int scale, uint64_t seed, int64_t start, double a, double b, double c,
              bint permute, int threads=0):
    """Fill ``src[i], dst[i]`` with R-MAT edge number ``start + i`` (see module docstring).

    ``src`` and ``dst``: contiguous arrays of the same length and dtype, int64, or int32
    when ``scale <= 31``.  Blocks of ``_CHUNK`` edges are generated in parallel (OpenMP,
    ``threads`` threads; 0: ``OMP_NUM_THREADS`` / all cores); the result does not depend
    on the split.
    """
    cdef int64_t cnt = src.shape[0], nch, ch, lo, hi
    cdef int nt = threads if threads > 0 else omp_get_max_threads()
    cdef uint64_t base = _mix64(seed ^ 0x5851F42D4C957F2DULL)
    cdef uint64_t ta = <uint64_t>(a * 65536.0 + 0.5)
    cdef uint64_t tab = <uint64_t>((a + b) * 65536.0 + 0.5)
    cdef uint64_t tabc = <uint64_t>((a + b + c) * 65536.0 + 0.5)
    cdef _PermKeys pk = _PermKeys(scale, seed)
    cdef asap_perm_t perm
    cdef char* ps
    cdef char* pd
    cdef int out32, es
    cdef int32_t[::1] s32, d32
    cdef int64_t[::1] s64, d64
    if dst.shape[0] != cnt or src.dtype != dst.dtype:
        raise ValueError("src and dst must have the same length and dtype")
    if cnt == 0:
        return
    if src.dtype == np.int32:
        if scale > 31:
            raise ValueError("int32 output needs scale <= 31")
        s32 = src
        d32 = dst
        ps = <char*>&s32[0]
        pd = <char*>&d32[0]
        out32, es = 1, 4
    else:
        s64 = src
        d64 = dst
        ps = <char*>&s64[0]
        pd = <char*>&d64[0]
        out32, es = 0, 8
    if scale > 32:  # the interleaved accumulator holds 2 * 32 bits: scalar path
        _rmat_fill_scalar(s64, d64, scale, base, start, ta, tab, tabc, permute, pk)
        return
    perm.mask, perm.k1, perm.k2, perm.k3, perm.x1, perm.shift = pk.mask, pk.k1, pk.k2, pk.k3, pk.x1, pk.shift
    nch = (cnt + _CHUNK - 1) // _CHUNK
    with nogil:
        if nch == 1 or nt == 1:
            asap_rmat_fill(ps, pd, out32, cnt, <uint64_t>start, base, scale, ta, tab, tabc,
                           permute, &perm)
        else:
            for ch in prange(nch, schedule="static", num_threads=nt):
                lo = ch * _CHUNK
                hi = min(cnt, lo + _CHUNK)
                asap_rmat_fill(ps + lo * es, pd + lo * es, out32, hi - lo,
                               <uint64_t>(start + lo), base, scale, ta, tab, tabc, permute,
                               &perm)


cdef int64_t _CHUNK = 1 << 16


cdef _rmat_fill_scalar(int64_t[::1] src, int64_t[::1] dst, int scale, uint64_t base,
                       int64_t start, uint64_t ta, uint64_t tab, uint64_t tabc, bint permute,
                       _PermKeys pk):
    # reference per-edge path (any scale <= 40); same bits as asap_rmat_fill
    cdef int64_t i, e, cnt = src.shape[0]
    cdef int words = (scale + 3) // 4
    cdef uint64_t s, d
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


def rmat_fill_scalar(int64_t[::1] src, int64_t[::1] dst, int scale, uint64_t seed,
                     int64_t start, double a, double b, double c, bint permute):
    """The per-edge reference implementation of :func:`rmat_fill` (int64 only; for tests)."""
    cdef uint64_t base = _mix64(seed ^ 0x5851F42D4C957F2DULL)
    cdef uint64_t ta = <uint64_t>(a * 65536.0 + 0.5)
    cdef uint64_t tab = <uint64_t>((a + b) * 65536.0 + 0.5)
    cdef uint64_t tabc = <uint64_t>((a + b + c) * 65536.0 + 0.5)
    _rmat_fill_scalar(src, dst, scale, base, start, ta, tab, tabc, permute, _PermKeys(scale, seed))


def permute_fill(int64_t[::1] ids, int scale, uint64_t seed):
    """In place: ``ids[i] = pi(ids[i])``, the R-MAT vertex permutation for ``(scale, seed)``."""
    cdef int64_t i, cnt = ids.shape[0]
    cdef _PermKeys pk = _PermKeys(scale, seed)
    cdef uint64_t mask = pk.mask, k1 = pk.k1, k2 = pk.k2, k3 = pk.k3, x1 = pk.x1
    cdef int shift = pk.shift
    with nogil:
        for i in prange(cnt, schedule="static"):
            ids[i] = <int64_t>_perm(<uint64_t>ids[i], mask, shift, k1, k2, k3, x1)



def er_fill(vid_t[::1] src, vid_t[::1] dst, int64_t n, uint64_t seed, int64_t start,
            int threads=0):
    """Fill ``src[i], dst[i]`` with uniform edge number ``start + i`` over ``n`` vertices.

    ``src``/``dst``: int64, or int32 when ``n <= 2**31 - 1``; ``threads`` OpenMP threads
    (0: ``OMP_NUM_THREADS`` / all cores).
    """
    cdef int64_t i, e, cnt = src.shape[0]
    cdef int nt = threads if threads > 0 else omp_get_max_threads()
    cdef uint64_t base = _mix64(seed ^ 0x2545F4914F6CDD1DULL)
    cdef double scale = <double>n / 9007199254740992.0   # n / 2**53
    cdef int64_t s, d
    with nogil:
        for i in prange(cnt, schedule="static", num_threads=nt):
            e = start + i
            s = <int64_t>(<double>(_mix64(base + (<uint64_t>e * 2 + 1) * GOLDEN) >> 11) * scale)
            d = <int64_t>(<double>(_mix64(base + (<uint64_t>e * 2 + 2) * GOLDEN) >> 11) * scale)
            src[i] = <vid_t>(s if s < n else n - 1)
            dst[i] = <vid_t>(d if d < n else n - 1)
