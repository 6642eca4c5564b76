"""Graph construction kernels: id remapping and CSR build by counting sort.

Algorithm
---------
* **Id remap, dense path** (ids <= a few times the edge count): one parallel
  pass marks the ids present in a byte map of size ``max_id + 1``, a sequential
  prefix scan turns the map into an int32 lookup (``-1`` for absent ids), and a
  parallel pass rewrites the edge endpoints (in place when they are int32).
  Dense ids are therefore assigned in increasing order of original id.
* **Id remap, sparse path** (huge ids): the sorted distinct ids are found with
  numpy (sort + unique, by the caller) and every endpoint is mapped by binary
  search in parallel.  Same ordering as the dense path.
* **In-CSR build**: a counting sort by destination (two passes over the edges:
  count, then place), stable, so the in-neighbours of a vertex keep their input
  order.  The out-degrees and out-weight sums are accumulated in the counting
  pass.  ``undirected`` places each edge in both directions (a self-loop once)
  without materialising the doubled edge list.
* **Transpose** (out-CSR from in-CSR): the same counting sort keyed by source.
* The cost of all of these is random access into n- and m-sized arrays (R-MAT
  ids are permuted: no locality), so the loops software-prefetch the counter of
  the edge ``PF_FAR`` ahead and the output slot of the edge ``PF_NEAR`` ahead
  (measured 2.3x on rmat:20, 1 and 2 threads; GAPBS and Ligra rely on the
  hardware alone).

Invariants
----------
``indptr[0] == 0``, ``indptr`` non-decreasing, ``indptr[n] == m``; every id in
``indices`` is in ``0..n-1``; ``out_degree.sum() == m``.

Memory: the build holds the dense src/dst (int32: 8 bytes/edge) plus the
output ``indices`` (4 bytes/edge) plus 16 bytes/vertex; the caller drops
src/dst right after.

References
----------
D. E. Knuth, *The Art of Computer Programming* vol. 3, 5.2 (distribution
counting); the CSR construction in GAPBS ``src/builder.h`` (MakeCSR).
"""
from libc.stdint cimport int32_t, int64_t, uint8_t, uint16_t, uint64_t
from libc.stdlib cimport calloc, free
from libc.stdint cimport uintptr_t
from posix.mman cimport (mmap, munmap, madvise, PROT_READ, PROT_WRITE, MAP_PRIVATE,
                         MAP_ANONYMOUS, MAP_FAILED, MADV_DONTNEED, MADV_NOHUGEPAGE)
from posix.unistd cimport sysconf, _SC_PAGESIZE
from asapgraph.kernels._blocksort cimport sort_block
from asapgraph.kernels._mapping cimport Mapping
from asapgraph.kernels._typedefs cimport eid_t, vid_t
from cython.parallel cimport prange, threadid

import numpy as np

cimport numpy as cnp

cnp.import_array()

cdef extern from "omp.h" nogil:
    int omp_get_max_threads()
    void omp_set_num_threads(int)

cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define asapg_prefetch_w(p) __builtin_prefetch((const void *)(p), 1, 3)
    #define asapg_prefetch_r(p) __builtin_prefetch((const void *)(p), 0, 3)
    #else
    #define asapg_prefetch_w(p) ((void)(p))
    #define asapg_prefetch_r(p) ((void)(p))
    #endif
    """
    void asapg_prefetch_w(const void *p) nogil
    void asapg_prefetch_r(const void *p) nogil

cdef extern from *:
    """
    #define asapg_inc32(p) ((void)__atomic_fetch_add((p), 1, __ATOMIC_RELAXED))
    #define asapg_inc64(p) ((void)__atomic_fetch_add((p), 1, __ATOMIC_RELAXED))
    """
    void asapg_inc32(int32_t *p) nogil
    void asapg_inc64(int64_t *p) nogil

cdef enum:
    PF_FAR = 32    # prefetch distance for the counter of a future edge
    PF_NEAR = 16   # ... and for the slot that counter points to
    RELEASE_EDGES = 1 << 20  # remap_place_blocked(release=True): pages handed back per step

ctypedef fused out_t:
    int32_t
    int64_t


def max_threads():
    """OpenMP threads a parallel region of this module gets (``OMP_NUM_THREADS``)."""
    return omp_get_max_threads()


def set_max_threads(int k):
    """Set OpenMP's default thread count of the calling thread (``omp_set_num_threads``:
    every module's parallel regions without an explicit count, i.e. the loaders and the
    CSR build); returns the previous default.  ``k`` must be >= 1."""
    if k < 1:
        raise ValueError(f"threads must be >= 1, got {k}")
    cdef int old = omp_get_max_threads()
    omp_set_num_threads(k)
    return old


cdef size_t _PAGE = <size_t>sysconf(_SC_PAGESIZE)


def small_page_empty(int64_t count, dtype):
    """An uninitialised 1-d array of ``count`` items in its own anonymous mapping of 4 KB
    pages (``MADV_NOHUGEPAGE``; numpy asks for transparent huge pages from 4 MB on).

    Why: on this project's hosts (virtual machines with free page reporting) a huge
    page is only ever taken from a free 2 MB block, exactly what the guest hands back to
    the host, so its first touch costs the host's fault as well -- from 0.06 to 0.9 s per
    600 MB; a 4 KB page fault costs a steady ~1.4 us and can take pages the process has
    just released (:func:`remap_place_blocked`).  See benchmarks/REPORT.md, issue 13."""
    dt = np.dtype(dtype)
    cdef size_t nbytes = <size_t>max(count, 1) * <size_t>dt.itemsize
    cdef size_t length = (nbytes + _PAGE - 1) // _PAGE * _PAGE
    cdef void *p = mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                        -1, 0)
    cdef cnp.npy_intp dims = <cnp.npy_intp>count
    cdef Mapping owner
    if p == MAP_FAILED:
        raise MemoryError(f"cannot map {length} bytes")
    madvise(p, length, MADV_NOHUGEPAGE)
    owner = Mapping()
    owner.ptr = p
    owner.length = length
    arr = cnp.PyArray_SimpleNewFromData(1, &dims, dt.num, p)
    cnp.set_array_base(arr, owner)
    return arr


def small_page_shrink(arr, int64_t count):
    """``arr[:count]`` of an array from :func:`small_page_empty`, the mapping's pages past
    it unmapped (no copy; ``arr`` itself must not be used afterwards).  Any other array:
    a copy of ``arr[:count]``."""
    cdef Mapping owner
    cdef size_t keep
    base = arr.base
    if not isinstance(base, Mapping) or arr.ndim != 1 or count > arr.shape[0] or \
            <uintptr_t>cnp.PyArray_DATA(arr) != <uintptr_t>(<Mapping>base).ptr:
        return arr[:count].copy()
    owner = <Mapping>base
    keep = (<size_t>max(count, 1) * <size_t>arr.itemsize + _PAGE - 1) // _PAGE * _PAGE
    if keep < owner.length:
        munmap(<char *>owner.ptr + keep, owner.length - keep)
        owner.length = keep
    return arr[:count]


cdef inline int64_t _release(const void *base, int64_t a, int64_t b, size_t isz) noexcept nogil:
    """``MADV_DONTNEED`` on the whole pages of items ``[a, b)`` of ``base`` (``isz`` bytes
    each); returns the item the released span ends in (where the next one starts, so no
    page is left behind at the steps)."""
    cdef uintptr_t p0 = <uintptr_t>base
    cdef uintptr_t s = p0 + <uintptr_t>a * isz
    cdef uintptr_t e = p0 + <uintptr_t>b * isz
    s = (s + _PAGE - 1) & ~(<uintptr_t>_PAGE - 1)
    e = e & ~(<uintptr_t>_PAGE - 1)
    if e <= s:
        return a
    madvise(<void *>s, e - s, MADV_DONTNEED)
    return <int64_t>((e - p0) // isz)


cdef inline void _minmax_run(const vid_t *a, int64_t n, int64_t *lo, int64_t *hi) noexcept nogil:
    """Min and max of ``a[0:n]`` (n > 0) in local accumulators, so the loop vectorizes
    (the per-thread slots of :func:`minmax` written in the loop kept it scalar: 21 ms
    against 3.4 ms for numpy's on 33.5M int32)."""
    cdef int64_t i
    cdef vid_t mn = a[0], mx = a[0], x
    for i in range(n):
        x = a[i]
        mn = x if x < mn else mn
        mx = x if x > mx else mx
    lo[0] = mn
    hi[0] = mx


def minmax(const vid_t[::1] a):
    """``(min, max)`` of a non-empty integer array (parallel)."""
    cdef int64_t n = a.shape[0], i, t, lo, hi, T
    cdef int64_t mins[64]
    cdef int64_t maxs[64]
    if n == 0:
        raise ValueError("empty array")
    T = min(<int64_t>omp_get_max_threads(), 64, max(<int64_t>1, n // 65536))
    with nogil:
        for t in prange(T, schedule="static", num_threads=T):
            lo = n * t // T
            hi = n * (t + 1) // T
            _minmax_run(&a[lo], hi - lo, &mins[t], &maxs[t])
    lo = mins[0]
    hi = maxs[0]
    for t in range(1, T):
        lo = min(lo, mins[t])
        hi = max(hi, maxs[t])
    return lo, hi


def mark_present(const vid_t[::1] a, uint8_t[::1] present):
    """``present[a[i]] = 1`` for all i (ids must be in range)."""
    cdef int64_t i, n = a.shape[0]
    with nogil:
        for i in prange(n, schedule="static"):
            if i + PF_FAR < n:
                asapg_prefetch_w(&present[a[i + PF_FAR]])
            present[a[i]] = 1


cdef extern from *:
    """
    #include <stdint.h>
    /* map_rank's int32 loop with the popcnt instruction where the CPU has it (the build
       targets baseline x86-64, whose popcount is a dozen operations) */
    #if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
    __attribute__((target("popcnt")))
    static void asapg_map_rank32_hw(const int32_t *a, int64_t n, const uint64_t *bits,
                                    const int32_t *rank, int32_t *out)
    {
        for (int64_t i = 0; i < n; i++) {
            int64_t v = a[i], w = v >> 6;
            out[i] = rank[w] + (int32_t)__builtin_popcountll(bits[w] & ((1ull << (v & 63)) - 1));
        }
    }
    static int asapg_have_popcnt(void) { return __builtin_cpu_supports("popcnt"); }
    #else
    static void asapg_map_rank32_hw(const int32_t *a, int64_t n, const uint64_t *bits,
                                    const int32_t *rank, int32_t *out)
    { (void)a; (void)n; (void)bits; (void)rank; (void)out; }
    static int asapg_have_popcnt(void) { return 0; }
    #endif
    """
    void asapg_map_rank32_hw(const int32_t *a, int64_t n, const uint64_t *bits,
                             const int32_t *rank, int32_t *out) nogil
    int asapg_have_popcnt() nogil
    int _ctz64 "__builtin_ctzll"(uint64_t x) nogil

cdef bint _HW_POPCNT = asapg_have_popcnt()


cdef inline int64_t _popc64(uint64_t x) noexcept nogil:
    """Bits set in ``x`` (SWAR: the build targets baseline x86-64, without ``popcnt``)."""
    x = x - ((x >> 1) & <uint64_t>0x5555555555555555ULL)
    x = (x & <uint64_t>0x3333333333333333ULL) + ((x >> 2) & <uint64_t>0x3333333333333333ULL)
    x = (x + (x >> 4)) & <uint64_t>0x0F0F0F0F0F0F0F0FULL
    return <int64_t>((x * <uint64_t>0x0101010101010101ULL) >> 56)


def mark_bits(const vid_t[::1] a, uint64_t[::1] bits):
    """Set bit ``a[i]`` of the bit map ``bits`` (64 ids per word) for all i; ids must be
    in range.  The bit map of :func:`mark_present`: ``N / 8`` bytes stay in L2, where a
    byte map of ``N`` bytes does not (a rank of rmat:22 text: 4 MB).  Threads mark private
    maps, or'ed at the end."""
    cdef int64_t i, n = a.shape[0], W = bits.shape[0], t, T, lo, hi, j, v
    cdef uint64_t *p
    cdef uint64_t *extra = NULL
    if n == 0:
        return
    T = min(<int64_t>omp_get_max_threads(), 64, max(<int64_t>1, n // (W + 65536)))
    if T > 1:
        extra = <uint64_t *>calloc(<size_t>((T - 1) * W), sizeof(uint64_t))
        if extra == NULL:
            T = 1
    with nogil:
        for t in prange(T, schedule="static", num_threads=T):
            lo = n * t // T
            hi = n * (t + 1) // T
            p = &bits[0] if t == 0 else extra + (t - 1) * W
            for i in range(lo, hi):
                v = a[i]
                p[v >> 6] |= (<uint64_t>1) << (v & 63)
        if T > 1:
            for j in prange(W, schedule="static", num_threads=T):
                for t in range(T - 1):
                    bits[j] |= extra[t * W + j]
    free(extra)


def bit_rank(const uint64_t[::1] bits):
    """``(rank, count)``: ``rank[w]`` = bits set in words ``0..w-1`` (int32), ``count`` all
    of them: with ``bits`` the rank directory :func:`map_rank` maps through."""
    cdef int64_t w, W = bits.shape[0], c = 0
    rank_arr = np.empty(W, dtype=np.int32)
    cdef int32_t[::1] rank = rank_arr
    with nogil:
        for w in range(W):
            rank[w] = <int32_t>c
            c += _popc64(bits[w])
    return rank_arr, c


def set_bits_slice(const uint64_t[::1] bits, const int32_t[::1] rank, int64_t lo, int64_t hi):
    """Positions (int64, ascending) of the set bits of ranks ``lo..hi-1`` of ``bits``
    (bit ``i`` of word ``w`` is position ``64 w + i``; ``rank`` from :func:`bit_rank`):
    the original ids of dense ids ``lo..hi-1``."""
    cdef int64_t W = bits.shape[0], w, c, k = 0, b
    cdef uint64_t x
    hi = max(lo, hi)
    out_arr = np.empty(hi - lo, dtype=np.int64)
    cdef int64_t[::1] out = out_arr
    if hi == lo:
        return out_arr
    with nogil:
        w = 0
        while w + 1 < W and rank[w + 1] <= lo:  # first word holding rank lo
            w += 1
        c = rank[w] if W else 0
        while w < W and c < hi:
            x = bits[w]
            while x:
                b = _ctz64(x)
                x &= x - 1
                if c >= lo:
                    out[k] = 64 * w + b
                    k += 1
                c += 1
                if c >= hi:
                    break
            w += 1
    if k != hi - lo:
        raise ValueError("set_bits_slice: fewer set bits than asked for")
    return out_arr


def map_rank(const vid_t[::1] a, const uint64_t[::1] bits, const int32_t[::1] rank,
             out_t[::1] out):
    """``out[i]`` = number of set bits of ``bits`` below bit ``a[i]`` (the dense id of
    ``a[i]``, which must be set): :func:`map_dense` through the ``N / 8 + N / 16`` bytes
    of :func:`bit_rank`'s directory instead of an ``4 N``-byte lookup table (``out`` may
    be ``a`` itself when int32)."""
    cdef int64_t i, n = a.shape[0], v, w, t, T, lo, hi
    if out.shape[0] != n:
        raise ValueError("a and out must have the same length")
    if n == 0:
        return
    if vid_t is int32_t and out_t is int32_t and _HW_POPCNT:
        T = min(<int64_t>omp_get_max_threads(), 64, max(<int64_t>1, n // 65536))
        with nogil:
            for t in prange(T, schedule="static", num_threads=T):
                lo = n * t // T
                hi = n * (t + 1) // T
                asapg_map_rank32_hw(<const int32_t *>&a[lo], hi - lo, &bits[0], &rank[0],
                                    <int32_t *>&out[lo])
        return
    with nogil:
        for i in prange(n, schedule="static"):
            v = a[i]
            w = v >> 6
            out[i] = <out_t>(rank[w] + _popc64(bits[w] & (((<uint64_t>1) << (v & 63)) - 1)))


def dense_lookup(const uint8_t[::1] present):
    """``(lookup, count)``: ``lookup[id]`` = rank of ``id`` among present ids, -1 if absent."""
    cdef int64_t i, n = present.shape[0], c = 0
    lookup_arr = np.empty(n, dtype=np.int32)
    cdef int32_t[::1] lookup = lookup_arr
    with nogil:
        for i in range(n):
            if present[i]:
                lookup[i] = <int32_t>c
                c += 1
            else:
                lookup[i] = -1
    return lookup_arr, c


def map_dense(const vid_t[::1] a, const int32_t[::1] lookup, out_t[::1] out):
    """``out[i] = lookup[a[i]]`` (``out`` may be ``a`` itself when int32)."""
    cdef int64_t i, n = a.shape[0]
    with nogil:
        for i in prange(n, schedule="static"):
            if i + PF_FAR < n:
                asapg_prefetch_r(&lookup[a[i + PF_FAR]])
            out[i] = lookup[a[i]]


def map_sorted(const vid_t[::1] a, const int64_t[::1] ids, out_t[::1] out):
    """``out[i]`` = position of ``a[i]`` in the sorted array ``ids`` (binary search)."""
    cdef int64_t i, n = a.shape[0], lo, hi, mid, k = ids.shape[0]
    cdef int64_t x
    with nogil:
        for i in prange(n, schedule="static"):
            x = a[i]
            lo = 0
            hi = k
            while lo < hi:
                mid = (lo + hi) >> 1
                if ids[mid] < x:
                    lo = mid + 1
                else:
                    hi = mid
            out[i] = <out_t>lo


def build_in_csr(const vid_t[::1] src, const vid_t[::1] dst, int64_t n, out_t[::1] indices,
                 const double[::1] weights=None, double[::1] wout=None, bint undirected=False,
                 int threads=0, bint prefetch=True, bint out_sums=True):
    """Counting-sort the edges by destination into an in-CSR (parallel, stable).

    Parameters
    ----------
    src, dst : int32/int64 arrays (dense ids in 0..n-1)
    n : number of vertices
    indices : output, length m (2*m - loops when undirected), int32 or int64
    weights, wout : optional input weights and output weights (aligned with indices)
    undirected : place each non-loop edge in both directions
    threads : number of OpenMP threads (0: all)
    prefetch : software-prefetch the counters and slots of edges ahead (random
        access into n- and m-sized arrays is the cost of this kernel)
    out_sums : count the out-degrees and out-weights (one more pass over the edges);
        False returns None for both (callers that only want the CSR)

    Returns
    -------
    indptr : int64 (n+1,)
    out_degree : int64 (n,)
    out_weight : float64 (n,) or None

    Notes
    -----
    Thread ``t`` owns the edge range ``[m t / T, m (t+1) / T)`` and a private
    histogram row ``cnt[t]``; a sequential scan over ``(v, t)`` turns the rows into
    private write offsets, so every thread places its edges without atomics and
    the result is identical to the sequential stable sort.  The histogram rows are
    then reused for the private out-degree counts.
    """
    cdef int64_t m = src.shape[0], e, k, s, d, t, v, lo, hi, run, c, T
    cdef bint weighted = weights is not None
    T = threads if threads > 0 else omp_get_max_threads()
    T = max(<int64_t>1, min(T, 64, m // 65536 + 1))
    indptr_arr = np.empty(n + 1, dtype=np.int64)
    outdeg_arr = np.zeros(n if out_sums else 0, dtype=np.int64)
    outw_arr = np.zeros(n, dtype=np.float64) if (weighted and out_sums) else None
    cnt_arr = np.zeros((T, n), dtype=np.int64)
    cdef int64_t[::1] indptr = indptr_arr
    cdef int64_t[::1] outdeg = outdeg_arr
    cdef int64_t[:, ::1] cnt = cnt_arr
    cdef double[::1] outw
    if weighted and out_sums:
        outw = outw_arr
    with nogil:
        for t in prange(T, schedule="static", num_threads=T):
            lo = m * t // T
            hi = m * (t + 1) // T
            for e in range(lo, hi):
                if prefetch and e + PF_FAR < hi:
                    asapg_prefetch_w(&cnt[t, dst[e + PF_FAR]])
                d = dst[e]
                cnt[t, d] += 1
                if undirected:
                    s = src[e]
                    if s != d:
                        cnt[t, s] += 1
        run = 0
        for v in range(n):
            indptr[v] = run
            for t in range(T):
                c = cnt[t, v]
                cnt[t, v] = run
                run += c
        indptr[n] = run
    if run != indices.shape[0]:
        raise ValueError(f"indices has length {indices.shape[0]}, expected {run}")
    with nogil:
        for t in prange(T, schedule="static", num_threads=T):
            lo = m * t // T
            hi = m * (t + 1) // T
            for e in range(lo, hi):
                if prefetch and e + PF_FAR < hi:
                    asapg_prefetch_w(&cnt[t, dst[e + PF_FAR]])
                    asapg_prefetch_w(&indices[cnt[t, dst[e + PF_NEAR]]])
                s = src[e]
                d = dst[e]
                k = cnt[t, d]
                cnt[t, d] = k + 1
                indices[k] = <out_t>s
                if weighted:
                    wout[k] = weights[e]
                if undirected and s != d:
                    k = cnt[t, s]
                    cnt[t, s] = k + 1
                    indices[k] = <out_t>d
                    if weighted:
                        wout[k] = weights[e]
    if not out_sums:
        return indptr_arr, None, None
    if undirected:
        # every placed entry is also an out-edge of its source: out = in
        outdeg_arr = np.diff(indptr_arr)
        if weighted:
            with nogil:
                for v in prange(n, schedule="static", num_threads=T):
                    for k in range(indptr[v], indptr[v + 1]):
                        outw[v] += wout[k]
        return indptr_arr, outdeg_arr, outw_arr
    # out-degrees: private rows again (reuse cnt), then a reduction
    cnt_arr[:] = 0
    with nogil:
        for t in prange(T, schedule="static", num_threads=T):
            lo = m * t // T
            hi = m * (t + 1) // T
            for e in range(lo, hi):
                if prefetch and e + PF_FAR < hi:
                    asapg_prefetch_w(&cnt[t, src[e + PF_FAR]])
                cnt[t, src[e]] += 1
        for v in prange(n, schedule="static", num_threads=T):
            c = 0
            for t in range(T):
                c = c + cnt[t, v]
            outdeg[v] = c
    del cnt_arr
    if weighted:
        # sequential: float sums in input order (deterministic)
        with nogil:
            for e in range(m):
                outw[src[e]] += weights[e]
    return indptr_arr, outdeg_arr, outw_arr


def count_ids(const vid_t[::1] a, int64_t[::1] cnt):
    """``cnt[a[i]] += 1`` for every ``i`` (``cnt`` zeroed by the caller, ids checked to be in
    range by the caller).  ``np.bincount`` first widens int32 ids to a temporary int64
    array; this counts in place with the counters prefetched (measured 0.58-1.14 s ->
    ~0.2 s on 67M ids)."""
    cdef int64_t i, m = a.shape[0]
    with nogil:
        for i in range(m):
            if i + PF_FAR < m:
                asapg_prefetch_w(&cnt[a[i + PF_FAR]])
            cnt[a[i]] += 1


def transpose_csr_par(const int64_t[::1] indptr, const vid_t[::1] indices,
                      const int64_t[::1] optr, vid_t[::1] out_indices,
                      const double[::1] weights=None, double[::1] wout=None, int threads=0):
    """:func:`transpose_csr` (no relabelling) with the result's rows split between threads.

    ``optr`` is the result's ``indptr``.  Thread ``t`` owns the result rows ``[r_t,
    r_{t+1})`` (equal shares of entries) and scans every input row, writing only the
    entries whose column it owns: reads grow T-fold (sequential, cheap), the random writes,
    which bound the serial version, are divided.  Each result row receives its entries in
    input-row order, exactly as in the serial version (same output).
    """
    cdef int64_t n = indptr.shape[0] - 1, nout = optr.shape[0] - 1, m = indices.shape[0]
    cdef int64_t v, e, s, k, t, lo, hi, T
    cdef bint weighted = weights is not None
    T = threads if threads > 0 else omp_get_max_threads()
    T = max(<int64_t>1, min(T, <int64_t>64, m // (1 << 20) + 1))
    cuts = np.searchsorted(np.asarray(optr), np.linspace(0, m, T + 1)).astype(np.int64)
    cuts[0], cuts[T] = 0, nout
    cdef int64_t[::1] cut = cuts
    pos_arr = np.asarray(optr[:nout]).copy()
    cdef int64_t[::1] pos = pos_arr
    with nogil:
        for t in prange(T, schedule="static", num_threads=T):
            lo = cut[t]
            hi = cut[t + 1]
            for v in range(n):
                for e in range(indptr[v], indptr[v + 1]):
                    s = indices[e]
                    if s >= lo and s < hi:
                        k = pos[s]
                        pos[s] = k + 1
                        out_indices[k] = <vid_t>v
                        if weighted:
                            wout[k] = weights[e]


def transpose_csr(const int64_t[::1] indptr, const vid_t[::1] indices, const int64_t[::1] counts,
                  vid_t[::1] out_indices, const double[::1] weights=None, double[::1] wout=None,
                  int64_t[::1] pos=None, const int64_t[::1] labels=None):
    """Transpose a CSR given the row counts of the result (``counts``).

    Returns the result's ``indptr``; fills ``out_indices`` (and ``wout``).  ``pos``, when
    given, replaces ``counts``: the next free offset in ``out_indices`` of every target
    (any layout; advanced here, so it ends at each target's end) and None is returned.
    ``labels``, when given, is the value written for input row ``v`` (default ``v``).
    """
    cdef int64_t n = indptr.shape[0] - 1, v, e, s, k, m = indices.shape[0]
    cdef bint weighted = weights is not None, relabel = labels is not None
    cdef vid_t lv
    optr_arr = None
    cdef int64_t[::1] optr
    if pos is None:
        optr_arr = np.zeros(n + 1, dtype=np.int64)
        optr = optr_arr
        with nogil:
            for v in range(n):
                optr[v + 1] = optr[v] + counts[v]
        pos = optr_arr[:n].copy()
    with nogil:
        for v in range(n):
            lv = <vid_t>(labels[v] if relabel else v)
            for e in range(indptr[v], indptr[v + 1]):
                if e + PF_FAR < m:
                    asapg_prefetch_w(&pos[indices[e + PF_FAR]])
                    asapg_prefetch_w(&out_indices[pos[indices[e + PF_NEAR]]])
                s = indices[e]
                k = pos[s]
                pos[s] = k + 1
                out_indices[k] = lv
                if weighted:
                    wout[k] = weights[e]
    return optr_arr


ctypedef fused cnt_t:
    int32_t
    int64_t


def remap_count(const vid_t[::1] src, const vid_t[::1] dst, cnt_t[:, ::1] cin,
                cnt_t[:, ::1] cout, bint prefetch=True):
    """Step 1 of the fused id remap + in-CSR build (the counting sort over original ids).

    The fused form of ``mark_present`` x2 + ``dense_lookup`` + ``map_dense`` x2 +
    :func:`build_in_csr`, in three steps (:func:`remap_count`, :func:`remap_scan`, then
    :func:`remap_place` or :func:`remap_place_blocked`): two passes over the edges
    instead of seven.  ``src``/``dst`` hold original ids in ``0..N-1`` (``N =
    cin.shape[1]``); ``cin``/``cout`` are zeroed ``(T, N)`` and ``(1, N)`` counters
    (``T`` threads, int32 when ``m`` and ``N`` fit; the out-degrees need no order, so
    one row counted atomically).  Thread ``t`` counts the in-degree of every original id
    over its edge range ``[m t / T, m (t+1) / T)`` into its private row ``cin[t]``, the
    out-degrees into the shared row ``cout[0]`` (relaxed atomic increments).
    """
    cdef int64_t m = src.shape[0], N = cin.shape[1], T = cin.shape[0]
    cdef int64_t e, t, lo, hi
    if cout.shape[0] < 1 or cout.shape[1] != N or dst.shape[0] != m:
        raise ValueError("remap_count: inconsistent array shapes")
    with nogil:
        for t in prange(T, schedule="static", num_threads=T):
            lo = m * t // T
            hi = m * (t + 1) // T
            for e in range(lo, hi):
                if prefetch and e + PF_FAR < hi:
                    asapg_prefetch_w(&cin[t, dst[e + PF_FAR]])
                    asapg_prefetch_w(&cout[0, src[e + PF_FAR]])
                cin[t, dst[e]] += 1
                if cnt_t is int32_t:  # one shared row: an order-free count
                    asapg_inc32(&cout[0, src[e]])
                else:
                    asapg_inc64(&cout[0, src[e]])


def remap_scan(cnt_t[:, ::1] cin, cnt_t[:, ::1] cout, int64_t[::1] indptr,
               int64_t[::1] outdeg, int64_t[::1] ids, int64_t block_span=0,
               int64_t[:, ::1] bcount=None):
    """Step 2: one scan in increasing original id over :func:`remap_count`'s counters.

    An id is present when its total degree is positive; present ids get dense ids
    ``0..n-1`` in that order (the numbering of :func:`asapgraph.graph.core.remap_ids`);
    ``indptr`` (N+1), ``outdeg`` and ``ids`` (N) are written at the dense id (the first
    ``n`` (+1) entries); ``cin[t, v]`` becomes thread ``t``'s private write offset for
    destination ``v`` and ``cout[0, v]`` the dense id of ``v`` (the lookup).  With
    ``block_span`` (a power of two), ``bcount[t, b]`` (zeroed, ``(T, ceil(N / span) +
    1)``) counts thread ``t``'s edges into dense ids ``[b span, (b + 1) span)``, for
    :func:`remap_place_blocked`.  Returns ``n``.
    """
    cdef int64_t N = cin.shape[1], T = cin.shape[0]
    cdef int64_t t, v, run = 0, c = 0, ind, od, x
    cdef int shift = _log2_span(block_span)
    cdef bint blocked = block_span > 0
    if cout.shape[0] < 1 or cout.shape[1] != N or indptr.shape[0] < N + 1 or \
            outdeg.shape[0] < N or ids.shape[0] < N:
        raise ValueError("remap_scan: inconsistent array shapes")
    if blocked and (bcount is None or bcount.shape[0] != T or
                    bcount.shape[1] < (N + block_span - 1) // block_span + 1):
        raise ValueError("remap_scan: bcount must be (T, ceil(N / block_span) + 1)")
    with nogil:
        for v in range(N):
            ind = 0
            od = cout[0, v]
            for t in range(T):
                x = cin[t, v]
                cin[t, v] = <cnt_t>(run + ind)
                ind = ind + x
                if blocked:  # v's dense id will be c
                    bcount[t, c >> shift] += x
            if ind + od > 0:
                indptr[c] = run
                outdeg[c] = od
                ids[c] = v
                cout[0, v] = <cnt_t>c
                c = c + 1
                run = run + ind
        indptr[c] = run
    return c


cdef int _log2_span(int64_t span) except -1:
    cdef int shift = 0
    if span < 0 or span > 65536 or (span & (span - 1)):
        raise ValueError("block_span must be 0 or a power of two <= 65536")
    while (1 << shift) < span:
        shift += 1
    return shift


def remap_place(const vid_t[::1] src, const vid_t[::1] dst, cnt_t[:, ::1] cin,
                const cnt_t[:, ::1] cout, int32_t[::1] indices, const double[::1] weights=None,
                double[::1] wout=None, double[::1] outw=None, bint prefetch=True):
    """Step 3: every thread places its edges at its :func:`remap_scan` offsets, the
    source mapped through the lookup: the stable counting sort of the dense edges, the
    same arrays as the unfused path for any ``T``.  Weighted: ``outw`` (zeroed, length
    >= n) sums the weights by dense source in input order, sequentially (deterministic
    float sums, as :func:`build_in_csr`)."""
    cdef int64_t m = src.shape[0], T = cin.shape[0]
    cdef int64_t e, t, lo, hi, v, k
    cdef bint weighted = weights is not None
    if indices.shape[0] != m or dst.shape[0] != m or \
            (weighted and (wout is None or outw is None or wout.shape[0] != m)):
        raise ValueError("remap_place: inconsistent array shapes")
    with nogil:
        for t in prange(T, schedule="static", num_threads=T):
            lo = m * t // T
            hi = m * (t + 1) // T
            for e in range(lo, hi):
                if prefetch and e + PF_FAR < hi:
                    asapg_prefetch_w(&cin[t, dst[e + PF_FAR]])
                    asapg_prefetch_r(&cout[0, src[e + PF_FAR]])
                    asapg_prefetch_w(&indices[cin[t, dst[e + PF_NEAR]]])
                v = dst[e]
                k = cin[t, v]
                cin[t, v] = <cnt_t>(k + 1)
                indices[k] = <int32_t>cout[0, src[e]]
                if weighted:
                    wout[k] = weights[e]
        if weighted:
            for e in range(m):
                outw[cout[0, src[e]]] += weights[e]


cdef int64_t _block_cursors(const int64_t[::1] brun, int64_t[:, ::1] bcount, int64_t nbk):
    """Turn per-thread block counts ``bcount[t, b]`` into each thread's write cursor in
    each block (block ``b`` starts at ``brun[b]``); returns the largest block's size."""
    cdef int64_t b, t, k, x, maxb = 0, T = bcount.shape[0]
    for b in range(nbk):
        maxb = max(maxb, brun[b + 1] - brun[b])
    for b in range(nbk):
        x = brun[b]
        for t in range(T):
            k = bcount[t, b]
            bcount[t, b] = x
            x = x + k
    return maxb


def remap_place_blocked(const vid_t[::1] src, const vid_t[::1] dst, const cnt_t[:, ::1] cout,
                        int32_t[::1] indices, const int64_t[::1] indptr, int64_t n,
                        const int64_t[::1] brun, int64_t[:, ::1] bcount, int64_t block_span,
                        bint prefetch=True, bint release=False, bint small_pages=False,
                        int64_t release_step=RELEASE_EDGES):
    """Step 3, blocked (unweighted): the arrays of :func:`remap_place`, with sequential
    writes instead of one cache miss per edge.

    :func:`remap_place` writes each edge at a random offset of the whole ``indices``
    array and reads two counter rows at random; on large graphs each is a cache miss.
    Here the dense ids are cut into blocks of ``block_span`` consecutive ids (the scan's
    ``bcount`` counted each thread's edges per block).  3a. Every thread appends its
    edges to their destination's block in input order: the dense source into
    ``indices``, the destination's offset in its block into a 2-byte ``low`` array (one
    random read per endpoint, both in the one lookup row ``cout[0]``, so the ``cin``
    rows may be freed first): a few hundred sequential write streams.  3b. Each block
    (parallel over blocks) is counting-sorted by ``low`` through the thread's copy of
    it, inside a cache-sized window.  Both steps are stable.  Costs 2 bytes per edge and
    ``T`` copies of the largest block (the caller bounds it).  ``brun[b]`` is block
    ``b``'s first edge slot (``indptr[min(b span, n)]``, ``ceil(n / span) + 1`` entries).

    ``release``: ``src``/``dst`` are the caller's to destroy (the parser's arrays of
    ``load_graph``): step 3a hands their pages back (``MADV_DONTNEED``) every
    ``release_step`` edges behind each thread.  ``small_pages``: ``low`` in 4 KB pages
    (:func:`small_page_empty`; the caller's ``indices`` too, for the effect): the pages
    that ``indices`` and ``low`` fault in are then the ones just released (recently freed,
    cheap to touch on a virtual machine), and the peak resident set is about the edge
    arrays alone instead of edge arrays + output.  The arrays written are the same.
    """
    cdef int64_t m = src.shape[0], T = bcount.shape[0]
    cdef int shift = _log2_span(block_span)
    cdef int64_t nbk = (n + block_span - 1) >> shift, b, k, x, t, maxb = 0
    cdef uint16_t[::1] low
    cdef int32_t[:, ::1] buf
    cdef int64_t[:, ::1] cur
    if block_span < 1 or bcount.shape[1] < nbk or indices.shape[0] != m or \
            dst.shape[0] != m or indptr.shape[0] < n + 1 or brun.shape[0] != nbk + 1:
        raise ValueError("remap_place_blocked: inconsistent array shapes")
    maxb = _block_cursors(brun, bcount, nbk)
    low = small_page_empty(m, np.uint16) if small_pages else np.empty(m, dtype=np.uint16)
    buf = np.empty((T, max(maxb, 1)), dtype=np.int32)
    cur = np.empty((T, block_span), dtype=np.int64)
    with nogil:
        _place_blocked(src, dst, cout, indices, indptr, brun, bcount, low, buf, cur, nbk, n,
                       shift, prefetch, max(release_step, 1) if release else 0)


cdef void _place_blocked(const vid_t[::1] src, const vid_t[::1] dst, const cnt_t[:, ::1] dense,
                         int32_t[::1] indices, const int64_t[::1] indptr,
                         const int64_t[::1] brun, int64_t[:, ::1] bpos, uint16_t[::1] low,
                         int32_t[:, ::1] buf, int64_t[:, ::1] cur, int64_t nbk, int64_t n,
                         int shift, bint prefetch, int64_t release) noexcept nogil:
    cdef int64_t m = src.shape[0], T = bpos.shape[0], span = cur.shape[1]
    cdef int64_t t, lo, hi, e, d, b, k, s0, s1, d0, dn, l, tid, rel, rs, rd
    cdef int64_t mask = span - 1
    for t in prange(T, schedule="static", num_threads=T):
        lo = m * t // T
        hi = m * (t + 1) // T
        rel = lo
        rs = lo
        rd = lo
        for e in range(lo, hi):
            if release and e - rel >= release:
                rs = _release(&src[0], rs, e, sizeof(vid_t))
                rd = _release(&dst[0], rd, e, sizeof(vid_t))
                rel = e
            if prefetch and e + PF_FAR < hi:
                asapg_prefetch_r(&dense[0, dst[e + PF_FAR]])
                asapg_prefetch_r(&dense[0, src[e + PF_FAR]])
            d = dense[0, dst[e]]
            b = d >> shift
            k = bpos[t, b]
            bpos[t, b] = k + 1
            indices[k] = <int32_t>dense[0, src[e]]
            low[k] = <uint16_t>(d & mask)
        if release and hi > lo:
            _release(&src[0], rs, hi, sizeof(vid_t))
            _release(&dst[0], rd, hi, sizeof(vid_t))
    for b in prange(nbk, schedule="dynamic", num_threads=T):
        tid = threadid()
        s0 = brun[b]
        s1 = brun[b + 1]
        d0 = b << shift
        dn = min(span, n - d0)
        if s1 - s0 > 1 and dn > 1:  # one id: its edges are already in input order
            for l in range(dn):
                cur[tid, l] = indptr[d0 + l]
            sort_block(&indices[0], s0, s1, &low[0], &cur[tid, 0], &buf[tid, 0])

def mark_outside(const vid_t[::1] a, int64_t lo, int64_t hi, uint8_t[::1] mark):
    """``mark[x] = 1`` for every id ``x`` of ``a`` outside ``[lo, hi)`` (a rank's remote
    targets; ids in range)."""
    cdef int64_t i, x, n = a.shape[0]
    with nogil:
        for i in prange(n, schedule="static"):
            x = a[i]
            if x < lo or x >= hi:
                if i + PF_FAR < n:
                    asapg_prefetch_w(&mark[a[i + PF_FAR]])
                mark[x] = 1


def mark_rows_reaching(const eid_t[::1] indptr, const out_t[::1] tgt, int64_t lim,
                       uint8_t[::1] mark):
    """``mark[v] = 1`` for every row ``v`` of the CSR ``indptr``/``tgt`` with an entry
    ``>= lim`` (a rank's vertices with an edge to a remote slot); one pass, each row's
    scan stopping at its first such entry.  Serial: it runs on every rank at once, where
    an OpenMP team per rank (ranks sharing the cores) took 30 ms instead of 2."""
    cdef int64_t v, e, n = indptr.shape[0] - 1
    with nogil:
        for v in range(n):
            for e in range(indptr[v], indptr[v + 1]):
                if tgt[e] >= lim:
                    mark[v] = 1
                    break


def slot_lookup(const uint8_t[::1] mark, int32_t[::1] lookup):
    """``lookup[x]`` = rank of ``x`` among the marked ids (marked ids only); returns their
    count.  The numbering is increasing in ``x``."""
    cdef int64_t i, n = mark.shape[0], c = 0
    with nogil:
        for i in range(n):
            if mark[i]:
                lookup[i] = <int32_t>c
                c += 1
    return c


def local_targets(const vid_t[::1] d, int64_t lo, int64_t hi, const int32_t[::1] lookup,
                  int64_t nloc, out_t[::1] out):
    """A rank's local target of every edge: ``x - lo`` for an owned ``x`` in ``[lo, hi)``,
    ``nloc + lookup[x]`` (its slot) otherwise."""
    cdef int64_t i, x, n = d.shape[0]
    with nogil:
        for i in prange(n, schedule="static"):
            x = d[i]
            if i + PF_FAR < n:
                asapg_prefetch_r(&lookup[d[i + PF_FAR]])
            if x >= lo and x < hi:
                out[i] = <out_t>(x - lo)
            else:
                out[i] = <out_t>(nloc + lookup[x])


# ---------------------------------------------------------------------------------------
# The CSR build from degree counts taken while parsing (load_graph of a text file):
# counted_scan, counted_blocks, counted_place.  Same arrays as remap_count + remap_scan +
# remap_place_blocked, without the counting pass over the edges, with the scan on every
# thread, and with the blocks cut in original-id space (dense ids are increasing in
# original ids, so a block of original ids is a run of dense ids) so that the placement
# looks up one id per edge, in a rank directory of N / 5 bytes, instead of two in an
# N-entry lookup.

cdef extern from *:
    """
    #include <stdint.h>
    #include <sys/mman.h>
    #include <unistd.h>
    #define ASAPG_RANK(pres, rank, v) \\
        ((rank)[(v) >> 6] + (int32_t)__builtin_popcountll((pres)[(v) >> 6] & ((1ull << ((v) & 63)) - 1)))
    #define ASAPG_PLACE_BODY                                                                  \\
        int64_t e;                                                                            \\
        for (e = lo; e < hi; e++) {                                                           \\
            int64_t d = dst[e], s = src[e], k;                                                \\
            if (release && e - *rel >= release) {                                             \\
                *rs = asapg_release_run(src, *rs, e);                                         \\
                *rd = asapg_release_run(dst, *rd, e);                                         \\
                *rel = e;                                                                     \\
            }                                                                                 \\
            k = pos[d >> shift]++;                                                            \\
            indices[k] = ASAPG_RANK(pres, rank, s);                                           \\
            low[k] = (uint16_t)(d & mask);                                                    \\
        }
    static int64_t asapg_page_size = 0;
    static int64_t asapg_release_run(const int32_t *base, int64_t a, int64_t b)
    {
        /* MADV_DONTNEED on the whole pages of items [a, b); returns where it stopped */
        uintptr_t p0 = (uintptr_t)base, s, e, pg;
        if (asapg_page_size == 0)
            asapg_page_size = (int64_t)sysconf(_SC_PAGESIZE);
        pg = (uintptr_t)asapg_page_size;
        s = (p0 + (uintptr_t)a * 4 + pg - 1) & ~(pg - 1);
        e = (p0 + (uintptr_t)b * 4) & ~(pg - 1);
        if (e <= s)
            return a;
        madvise((void *)s, e - s, MADV_DONTNEED);
        return (int64_t)((e - p0) / 4);
    }
    #if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
    __attribute__((target("popcnt")))
    static void asapg_place_hw(const int32_t *src, const int32_t *dst, int64_t lo, int64_t hi,
                               const uint64_t *pres, const int32_t *rank, int64_t *pos,
                               int32_t *indices, uint16_t *low, int shift, int64_t mask,
                               int64_t release, int64_t *rel, int64_t *rs, int64_t *rd)
    { ASAPG_PLACE_BODY }
    #else
    static void asapg_place_hw(const int32_t *src, const int32_t *dst, int64_t lo, int64_t hi,
                               const uint64_t *pres, const int32_t *rank, int64_t *pos,
                               int32_t *indices, uint16_t *low, int shift, int64_t mask,
                               int64_t release, int64_t *rel, int64_t *rs, int64_t *rd)
    { (void)src; }
    #endif
    static void asapg_place_sw(const int32_t *src, const int32_t *dst, int64_t lo, int64_t hi,
                               const uint64_t *pres, const int32_t *rank, int64_t *pos,
                               int32_t *indices, uint16_t *low, int shift, int64_t mask,
                               int64_t release, int64_t *rel, int64_t *rs, int64_t *rd)
    { ASAPG_PLACE_BODY }
    """
    void asapg_place_hw(const int32_t *src, const int32_t *dst, int64_t lo, int64_t hi,
                        const uint64_t *pres, const int32_t *rank, int64_t *pos,
                        int32_t *indices, uint16_t *low, int shift, int64_t mask,
                        int64_t release, int64_t *rel, int64_t *rs, int64_t *rd) nogil
    void asapg_place_sw(const int32_t *src, const int32_t *dst, int64_t lo, int64_t hi,
                        const uint64_t *pres, const int32_t *rank, int64_t *pos,
                        int32_t *indices, uint16_t *low, int shift, int64_t mask,
                        int64_t release, int64_t *rel, int64_t *rs, int64_t *rd) nogil
    int64_t asapg_release_run(const int32_t *base, int64_t a, int64_t b) nogil


def counted_scan(int32_t[:, ::1] odeg, const uint64_t[:, ::1] bits, int64_t N,
                 uint64_t[::1] pres, int32_t[::1] rank, int64_t[::1] outdeg,
                 int64_t[::1] ids):
    """Step 1 of the counted build: the parser's count rows (``odeg``: out-degree of
    every original id per thread, ``bits``: the ids seen as destinations per thread;
    :meth:`asapgraph.kernels._parse.EdgeAccumulator.take_counts`) -> the present ids
    (degree > 0) numbered in increasing original id, as :func:`remap_scan`: ``pres`` (a
    bit per id, ``ceil(N / 64)`` words) and ``rank`` (dense ids before each word, one
    more entry: ``n``) form the lookup; ``outdeg``/``ids`` (length >= N) get the first
    ``n`` entries.  Row 0 of ``odeg`` is overwritten by the sums.  In parallel over id
    ranges (two passes over the ``N`` ids).  Returns ``n``."""
    cdef int64_t W = (N + 63) // 64, R = odeg.shape[0], T, t, w, j, r, v, lo, hi, c
    cdef int64_t od
    cdef uint64_t x
    cdef int64_t cnt[65]
    if bits.shape[0] != R or odeg.shape[1] < N or bits.shape[1] < W or pres.shape[0] < W or \
            rank.shape[0] < W + 1 or outdeg.shape[0] < N or ids.shape[0] < N:
        raise ValueError("counted_scan: inconsistent array shapes")
    T = min(<int64_t>omp_get_max_threads(), 64, max(<int64_t>1, W // 1024))
    with nogil:
        for t in prange(T, schedule="static", num_threads=T):
            lo = W * t // T
            hi = W * (t + 1) // T
            c = 0
            for w in range(lo, hi):
                x = 0
                for r in range(R):
                    x = x | bits[r, w]
                for j in range(64):
                    v = w * 64 + j
                    if v >= N:
                        break
                    od = odeg[0, v]
                    for r in range(1, R):
                        od = od + odeg[r, v]
                    odeg[0, v] = <int32_t>od
                    if od > 0:
                        x = x | ((<uint64_t>1) << j)
                pres[w] = x
                c = c + _popc64(x)
            cnt[t] = c
        c = 0
        for t in range(T):
            od = cnt[t]
            cnt[t] = c
            c = c + od
        for t in prange(T, schedule="static", num_threads=T):
            lo = W * t // T
            hi = W * (t + 1) // T
            r = cnt[t]
            for w in range(lo, hi):
                rank[w] = <int32_t>r
                x = pres[w]
                while x != 0:
                    j = _ctz64(x)
                    v = w * 64 + j
                    ids[r] = v
                    outdeg[r] = odeg[0, v]
                    r = r + 1
                    x = x & (x - 1)
        rank[W] = <int32_t>c
    return c


def counted_blocks(const int32_t[::1] dst, int64_t N, int64_t block_span, int64_t T):
    """Step 2: ``bcount[t, b]``: thread ``t``'s edges (range ``[m t / T, m (t+1) / T)``)
    into original ids ``[b span, (b + 1) span)`` (a sequential pass over ``dst``, the
    counters in L1)."""
    cdef int shift = _log2_span(block_span)
    cdef int64_t m = dst.shape[0], nbk = (N + block_span - 1) >> shift, t, e, lo, hi
    if block_span < 1:
        raise ValueError("counted_blocks: block_span must be >= 1")
    bcount_arr = np.zeros((T, nbk + 1), dtype=np.int64)
    cdef int64_t[:, ::1] bcount = bcount_arr
    with nogil:
        for t in prange(T, schedule="static", num_threads=T):
            lo = m * t // T
            hi = m * (t + 1) // T
            for e in range(lo, hi):
                bcount[t, dst[e] >> shift] += 1
    return bcount_arr


def counted_place(const int32_t[::1] src, const int32_t[::1] dst, const uint64_t[::1] pres,
                  const int32_t[::1] rank, int64_t[:, ::1] bcount, const int64_t[::1] brun,
                  int64_t[::1] indptr, int32_t[::1] indices, int64_t N, int64_t block_span,
                  int64_t release_step=0):
    """Step 3 (the blocked placement of :func:`remap_place_blocked`, blocks of original
    ids): 3a. each thread appends its edges, in input order, to their destination's
    block (the dense source, looked up in ``pres``/``rank``, into ``indices``; the
    destination's offset in its block into ``low``), handing back the pages of
    ``src``/``dst`` every ``release_step`` edges when > 0 (the parser's arrays of
    ``load_graph``; ``low`` and the caller's ``indices`` in 4 KB pages take them over);
    3b. each block (in parallel) counts its destinations' in-degrees, writes their
    ``indptr`` entries (present ids only) and is counting-sorted by ``low`` (stable).
    ``bcount`` (from :func:`counted_blocks`) becomes the write cursors; ``brun[b]`` is
    block ``b``'s first slot.  ``indptr[n]`` is left to the caller."""
    cdef int64_t m = src.shape[0], T = bcount.shape[0]
    cdef int shift = _log2_span(block_span)
    cdef int64_t nbk = (N + block_span - 1) >> shift, b, k, x, t, maxb = 0, span = block_span
    cdef int64_t lo, hi, rel, rs, rd, tid, s0, s1, d0, dn, l, j, v, c, p
    cdef int64_t mask = span - 1
    cdef bint hw = _HW_POPCNT
    cdef uint16_t[::1] low
    cdef int32_t[:, ::1] buf
    cdef int64_t[:, ::1] cur
    if block_span < 1 or bcount.shape[1] < nbk or indices.shape[0] != m or \
            dst.shape[0] != m or brun.shape[0] < nbk + 1 or pres.shape[0] < (N + 63) // 64:
        raise ValueError("counted_place: inconsistent array shapes")
    maxb = _block_cursors(brun, bcount, nbk)
    low = small_page_empty(m, np.uint16)
    buf = np.empty((T, max(maxb, 1)), dtype=np.int32)
    cur = np.empty((T, span), dtype=np.int64)
    with nogil:
        for t in prange(T, schedule="static", num_threads=T):
            lo = m * t // T
            hi = m * (t + 1) // T
            rel = lo
            rs = lo
            rd = lo
            if hw:
                asapg_place_hw(&src[0], &dst[0], lo, hi, &pres[0], &rank[0], &bcount[t, 0],
                               &indices[0], &low[0], shift, mask, release_step, &rel, &rs, &rd)
            else:
                asapg_place_sw(&src[0], &dst[0], lo, hi, &pres[0], &rank[0], &bcount[t, 0],
                               &indices[0], &low[0], shift, mask, release_step, &rel, &rs, &rd)
            if release_step > 0 and hi > lo:
                asapg_release_run(&src[0], rs, hi)
                asapg_release_run(&dst[0], rd, hi)
        for b in prange(nbk, schedule="dynamic", num_threads=T):
            tid = threadid()
            s0 = brun[b]
            s1 = brun[b + 1]
            d0 = b << shift
            dn = min(span, N - d0)
            for l in range(dn):
                cur[tid, l] = 0
            for j in range(s0, s1):
                cur[tid, low[j]] += 1
            p = s0
            for l in range(dn):
                v = d0 + l
                c = cur[tid, l]
                if (pres[v >> 6] >> (v & 63)) & 1:
                    indptr[rank[v >> 6] + _popc64(pres[v >> 6] & (((<uint64_t>1) << (v & 63)) - 1))] = p
                cur[tid, l] = p
                p = p + c
            if s1 - s0 > 1:
                sort_block(&indices[0], s0, s1, &low[0], &cur[tid, 0], &buf[tid, 0])
