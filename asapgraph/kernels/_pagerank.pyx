# cython: language_level=3
"""PageRank sweeps over an in-CSR (pull), OpenMP-parallel, networkx semantics.

Rationale
---------
Algorithm
    One sweep computes, for every vertex ``v``::

        x'[v] = alpha * (sum_{u->v} c[u] * w_uv + delta * D[v]) + (1 - alpha) * P[v]

    where ``c[u] = x[u] / out_weight[u]`` (``0`` for dangling ``u``), ``w_uv = 1`` when
    unweighted, ``delta`` is the rank held by dangling vertices, ``P`` the teleport
    (personalization) vector and ``D`` the dangling distribution (networkx: ``D = P`` unless
    given).  With ``delta`` the dangling mass of the previous iterate this is networkx's
    ``_pagerank_scipy`` power step.  (With ``delta = 0`` it would be a step of the linear
    system ``y = alpha * A y + (1 - alpha) P`` whose normalised solution is PageRank when
    ``D = P``; measured slower, see ``asapgraph.programs.pagerank.METHODS``.)
Variants
    *Jacobi* (``cin`` and ``cout`` are two arrays; the default) or *Gauss-Seidel*
    (``cin is cout``: a vertex's new contribution is visible at once to later vertices of the same sweep, GAPBS
    ``PageRankPullGS``).  The vertex range is split into ``len(bounds)-1`` contiguous blocks
    with about equal ``edges + 2 * vertices`` (static, edge-balanced: R-MAT in-degrees are
    very skewed), one per OpenMP thread, and the whole sweep is ONE parallel region.  With
    one block there is no OpenMP region at all (a plain serial loop): the distributed engine
    and small graphs call it that way, so no thread ever spin-waits on a loaded machine.
Levers measured (rmat:20 unless said otherwise; 2-core machine shared with other builds, load
average 4-13, so timings are medians of interleaved runs and only their ratios mean much)
    * vertex relabelling (:func:`degree_order`, :func:`permute_csr`): vertices sorted by
      decreasing out-degree (log2 buckets, counting sort, stable) for BOTH rows and sources,
      so the contributions gathered by most edges are one compact cache-resident block, the
      per-vertex writes are sequential (no scatter through a position table) and the
      prefetch below can run ahead on a padded copy.  Sweep 8.2 -> 4.1 ns/edge (1 thread,
      same run); the relabelling costs 200 ms, about 1.5 unordered sweeps (reading the old
      rows in new order instead of scattering them was 1.5x slower: 305 ms).  The degree
      sort itself is 2-6 ms (numpy's stable argsort took about 10x longer).
    * software prefetch of ``c[indices[k + PF_DIST]]`` (``csrc/asap_prefetch.h``) once the
      contributions outgrow L2: 5.6 -> 4.1 ns/edge at 1 thread, 3.3 -> 2.7 at 2 threads;
      no measurable effect on cnr-2000 (2.6 MB of contributions), so the driver switches it
      on only above ``PREFETCH_MIN_BYTES``.
    * four independent accumulators in the gather (the sum is no longer one serial chain of
      4-cycle FP adds): the sweep is 6.1 instructions per edge (callgrind, rmat:14) against
      7.6 per nonzero for scipy's ``csr_matvec``; not separable in wall time at this load.
    * the L1 change, the dangling mass and the sum of the new iterate are fused into the
      sweep (three scalars per block), never separate passes over the vectors; one OpenMP
      region per sweep, none at all with one block.
    * rejected (sweep counts in ``asapgraph.programs.pagerank.METHODS``): Gauss-Seidel variants and
      the linear-system formulation need more sweeps than power/Jacobi on both graphs.
    Everything stays float64 (float32 contributions would halve the gathered bytes but cap
    the accuracy near 1e-7 in L1 on a million vertices).
Invariants
    ``c`` always equals ``x * inv_out`` for the values of ``x`` last written (``inv_out`` is
    ``0`` for dangling vertices, so they contribute nothing through edges).  Jacobi power
    sweeps preserve ``sum(x) == 1`` up to rounding.
References
    L. Page, S. Brin, R. Motwani, T. Winograd, "The PageRank citation ranking", 1999.
    A. Langville, C. Meyer, "Deeper inside PageRank", Internet Math. 1(3), 2004 (dangling
    nodes, personalization, the linear-system formulation).  G. Del Corso, A. Gulli,
    F. Romani, "Fast PageRank computation via a sparse linear system", Internet Math. 2(3),
    2005.  S. Beamer et al., GAPBS ``pr.cc`` (pull Gauss-Seidel).  networkx ``pagerank``
    (``_pagerank_scipy``) for the exact semantics reproduced here.
"""
from cython.parallel cimport prange
from libc.math cimport fabs
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from asapgraph.kernels._typedefs cimport eid_t, vid_t

import numpy as np

cdef extern from "asap_prefetch.h":
    void asap_prefetch_r(const void* p) noexcept nogil

cdef extern from *:
    """
    #ifdef _OPENMP
    #include <omp.h>
    static int _omp_max_threads(void) { return omp_get_max_threads(); }
    #else
    static int _omp_max_threads(void) { return 1; }
    #endif
    static inline int _asap_clz64(unsigned long long x) { return x ? __builtin_clzll(x) : 64; }
    """
    int _omp_max_threads() noexcept nogil
    int _asap_clz64(unsigned long long x) noexcept nogil

#: prefetch distance in edges (about two cache lines of int32 indices ahead)
cdef enum:
    PF_DIST = 32

#: per-block statistics returned by ``sweep`` (columns of ``stats``)
STAT_CHANGE, STAT_DANGLING, STAT_SUM = 0, 1, 2
NSTATS = 4   # one spare column: rows of 32 bytes


cdef inline double _gather(const int64_t k0, const int64_t k1, const vid_t[::1] indices,
                           const double[::1] cin, bint pf) noexcept nogil:
    # sum of cin[indices[k]] for k0 <= k < k1; four accumulators; optional prefetch
    # (the caller guarantees indices[k + PF_DIST] exists when pf is set)
    cdef double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0
    cdef int64_t k = k0
    if pf:
        while k + 4 <= k1:
            asap_prefetch_r(&cin[indices[k + PF_DIST]])
            asap_prefetch_r(&cin[indices[k + PF_DIST + 1]])
            asap_prefetch_r(&cin[indices[k + PF_DIST + 2]])
            asap_prefetch_r(&cin[indices[k + PF_DIST + 3]])
            s0 += cin[indices[k]]
            s1 += cin[indices[k + 1]]
            s2 += cin[indices[k + 2]]
            s3 += cin[indices[k + 3]]
            k += 4
        while k < k1:
            asap_prefetch_r(&cin[indices[k + PF_DIST]])
            s0 += cin[indices[k]]
            k += 1
    else:
        while k + 4 <= k1:
            s0 += cin[indices[k]]
            s1 += cin[indices[k + 1]]
            s2 += cin[indices[k + 2]]
            s3 += cin[indices[k + 3]]
            k += 4
        while k < k1:
            s0 += cin[indices[k]]
            k += 1
    return (s0 + s1) + (s2 + s3)


cdef void _block(const int64_t[::1] indptr, const vid_t[::1] indices, const double[::1] w,
                 const double[::1] inv_out, double[::1] x, const double[::1] cin,
                 double[::1] cout, const double[::1] P, const double[::1] D, double alpha,
                 double cp, double delta, double pu, int64_t lo, int64_t hi, bint prefetch,
                 double* out) noexcept nogil:
    # cp = 1 - alpha; pu: uniform value when P/D are empty
    # out[STAT_CHANGE], out[STAT_DANGLING], out[STAT_SUM]
    cdef int64_t v, k, k1
    cdef int64_t mpf = indices.shape[0] - PF_DIST - 4
    cdef double s, xn, xo, err = 0.0, dang = 0.0, tot = 0.0, iv
    cdef bint hasP = P.shape[0] > 0, hasD = D.shape[0] > 0, hasW = w.shape[0] > 0
    for v in range(lo, hi):
        k = indptr[v]
        k1 = indptr[v + 1]
        if hasW:
            s = 0.0
            while k < k1:
                s += cin[indices[k]] * w[k]
                k += 1
        else:
            s = _gather(k, k1, indices, cin, prefetch and k1 <= mpf)
        xn = alpha * (s + delta * (D[v] if hasD else pu)) + cp * (P[v] if hasP else pu)
        xo = x[v]
        err += fabs(xn - xo)
        x[v] = xn
        tot += xn
        iv = inv_out[v]
        cout[v] = xn * iv
        if iv == 0.0:
            dang += xn
    out[0] = err
    out[1] = dang
    out[2] = tot


def sweep(const int64_t[::1] indptr, const vid_t[::1] indices, const double[::1] w,
          const double[::1] inv_out, double[::1] x, const double[::1] cin, double[::1] cout,
          const double[::1] P, const double[::1] D, double alpha, double delta,
          const int64_t[::1] bounds, double[:, ::1] stats, bint prefetch=False,
          int64_t n_total=0):
    """One PageRank sweep (Jacobi when ``cin`` and ``cout`` differ, Gauss-Seidel when equal).

    Parameters
    ----------
    indptr, indices : in-CSR (int64 offsets; int32 or int64 sources)
    w : float64, edge weights aligned with ``indices``, or empty (unweighted)
    inv_out : float64, ``1/out_weight`` (``0`` for dangling vertices)
    x : float64, current values, overwritten with the new ones
    cin, cout : float64, contributions ``x * inv_out`` read / written
    P, D : float64 teleport and dangling distributions (empty: uniform ``1/n_total``)
    alpha, delta : damping; dangling mass of the previous iterate (``0``: linear-system step)
    bounds : int64, ``nb + 1`` block boundaries (one block per thread; ``nb == 1``: serial,
        no OpenMP region)
    stats : float64 ``(nb, NSTATS)``, out: per block the L1 change, the new dangling mass
        and the sum of the new values (columns ``STAT_CHANGE``, ``STAT_DANGLING``,
        ``STAT_SUM``)
    prefetch : bool
        Software-prefetch the gathered contributions; needs ``len(indices) >= m + PF_DIST
        + 4`` to take effect on the last rows (rows too close to the end are not prefetched).
    n_total : int
        Vertices of the whole graph, for the uniform ``P`` / ``D`` (``0``: ``len(x)``; an
        MPI rank sweeping its own rows passes the global count).
    """
    cdef int64_t n = n_total if n_total > 0 else x.shape[0]
    cdef int nb = bounds.shape[0] - 1, b
    cdef double pu = 1.0 / n if n > 0 else 0.0
    if stats.shape[0] < nb or stats.shape[1] < 3:
        raise ValueError("stats must have shape (len(bounds) - 1, NSTATS)")
    if nb == 1:
        with nogil:
            _block(indptr, indices, w, inv_out, x, cin, cout, P, D, alpha, 1.0 - alpha,
                   delta, pu, bounds[0], bounds[1], prefetch, &stats[0, 0])
        return
    with nogil:
        for b in prange(nb, schedule="static", num_threads=nb):
            _block(indptr, indices, w, inv_out, x, cin, cout, P, D, alpha, 1.0 - alpha,
                   delta, pu, bounds[b], bounds[b + 1], prefetch, &stats[b, 0])


def balanced_bounds(const int64_t[::1] indptr, int nb):
    """``nb + 1`` vertex boundaries splitting ``edges + 2*vertices`` work about equally."""
    cdef int64_t n = indptr.shape[0] - 1
    out = np.zeros(nb + 1, dtype=np.int64)
    cdef int64_t[::1] o = out
    cdef int64_t total = indptr[n] + 2 * n, v = 0, target
    cdef int b
    for b in range(1, nb):
        target = (total * b) // nb
        while v < n and indptr[v] + 2 * v < target:
            v += 1
        o[b] = v
    o[nb] = n
    return out


def max_threads():
    """OpenMP's default thread count (``omp_get_max_threads()``; 1 without OpenMP)."""
    cdef int t = 1
    with nogil:
        t = _omp_max_threads()
    return t


def degree_order(const int64_t[::1] deg, new2old):
    """Vertices by decreasing ``floor(log2(deg + 1))``, ties in id order (stable).

    A counting sort over the 65 possible keys, O(n), sequential (about 3 ns per vertex).
    Fills ``new2old`` (int32 or int64, length n): ``new2old[i]`` is the old id of new
    vertex ``i``.  Vertices with degree 0 come last.
    """
    cdef int64_t n = deg.shape[0], v, i
    cdef int64_t cnt[66]
    cdef int key
    if new2old.shape[0] != n:
        raise ValueError("new2old must have length n")
    for key in range(66):
        cnt[key] = 0
    with nogil:
        for v in range(n):
            cnt[_asap_clz64(<unsigned long long>(deg[v] + 1)) + 1] += 1
        for key in range(1, 66):
            cnt[key] += cnt[key - 1]
    _fill_order(deg, new2old, cnt)
    return new2old


cdef void _fill_order_impl(const int64_t[::1] deg, vid_t[::1] out, int64_t* cnt) noexcept nogil:
    cdef int64_t v, n = deg.shape[0]
    cdef int key
    for v in range(n):
        key = _asap_clz64(<unsigned long long>(deg[v] + 1))
        out[cnt[key]] = <vid_t>v
        cnt[key] += 1


cdef _fill_order(const int64_t[::1] deg, out, int64_t* cnt):
    cdef int32_t[::1] o32
    cdef int64_t[::1] o64
    if out.dtype == np.int32:
        o32 = out
        with nogil:
            _fill_order_impl(deg, o32, cnt)
    else:
        o64 = out
        with nogil:
            _fill_order_impl(deg, o64, cnt)


cdef inline void _permute_row(const int64_t[::1] indptr, const vid_t[::1] indices,
                              const double[::1] w, const vid_t[::1] old2new,
                              const int64_t[::1] nptr, vid_t[::1] nind, double[::1] nw,
                              int64_t o, bint hasW) noexcept nogil:
    """Old row ``o`` to its new place ``old2new[o]`` with relabelled sources (and weights)."""
    cdef int64_t k, k0 = indptr[o], k1 = indptr[o + 1]
    cdef int64_t base = nptr[old2new[o]] - k0
    for k in range(k0, k1):
        nind[base + k] = old2new[indices[k]]
    if hasW:
        for k in range(k0, k1):
            nw[base + k] = w[k]


def permute_csr(const int64_t[::1] indptr, const vid_t[::1] indices, const double[::1] w,
                const vid_t[::1] new2old, const vid_t[::1] old2new, int64_t[::1] nptr,
                vid_t[::1] nind, double[::1] nw, int threads=1):
    """Relabel an in-CSR: row ``i`` of the result is old row ``new2old[i]`` with every
    source ``u`` replaced by ``old2new[u]`` (in-row order kept).

    ``nptr`` (n+1) and ``nind`` (>= m entries; extra entries are set to 0 so that they
    can serve as prefetch padding) are outputs, ``nw`` too when ``w`` is non-empty.
    ``threads == 1``: no OpenMP region.  Streaming over the result, row-segment reads of
    the input; about one pass over the edges.
    """
    cdef int64_t n = indptr.shape[0] - 1, i, o, k, m = indptr[n]
    cdef int64_t extra = nind.shape[0]
    cdef bint hasW = w.shape[0] > 0
    if nptr.shape[0] != n + 1 or extra < m or (hasW and nw.shape[0] < m):
        raise ValueError("permute_csr: output arrays too short")
    with nogil:
        nptr[0] = 0
        for i in range(n):
            o = new2old[i]
            nptr[i + 1] = nptr[i] + indptr[o + 1] - indptr[o]
        for k in range(m, extra):
            nind[k] = 0
        # Old rows are read in order (streaming) and written to their new place: the
        # scattered side is the stores, which do not stall the core (gathering the rows
        # in new order measured 1.5-2x slower, prefetching or not).
        if threads <= 1:
            for o in range(n):
                _permute_row(indptr, indices, w, old2new, nptr, nind, nw, o, hasW)
        else:
            for o in prange(n, schedule="static", num_threads=threads):
                _permute_row(indptr, indices, w, old2new, nptr, nind, nw, o, hasW)


def owned_degree_key(const int64_t[::1] indptr, const vid_t[::1] tgt, int64_t[::1] key,
                     int64_t[::1] slots=None):
    """``key[v] = (out-degree of v) + (edges of these rows into v)`` for ``v < nloc =
    len(key)``; targets ``>= nloc`` (a rank's slots) are not counted.  One pass over the
    edges, counting into ``nloc + 1`` int64 counters (a target past the owned ones goes to
    the spare one: no branch) with the counter of the edge 32 ahead prefetched; then the
    out-degrees are added.  The key of :func:`asapgraph.engine.asap_delta.push_layout`
    (what ``count_ids`` over every target, a slice and ``np.diff`` computed in three
    passes and two temporaries).  ``slots`` (``nslots`` entries): also the edges into
    each slot ``s`` (target ``nloc + s``), in the same pass (every target has a counter
    then; a target past ``nloc + nslots`` raises)."""
    cdef int64_t nloc = key.shape[0], m = tgt.shape[0], e, t, v, ns = 0, top
    if indptr.shape[0] != nloc + 1 or indptr[nloc] > m:
        raise ValueError("owned_degree_key: indptr must have len(key) + 1 entries")
    if slots is not None:
        ns = slots.shape[0]
    cnt_ = np.zeros(nloc + ns + 1, dtype=np.int64)
    cdef int64_t[::1] cnt = cnt_
    top = nloc + ns  # the spare counter: targets past the ones counted
    m = indptr[nloc]
    with nogil:
        for e in range(m):
            if e + 32 < m:
                t = tgt[e + 32]
                asap_prefetch_r(&cnt[t if t < top else top])
            t = tgt[e]
            cnt[t if t < top else top] += 1
        for v in range(nloc):
            key[v] = cnt[v] + indptr[v + 1] - indptr[v]
        for v in range(ns):
            slots[v] = cnt[nloc + v]
    if ns and cnt[top]:
        raise ValueError("owned_degree_key: a target past nloc + len(slots)")
    return key


def log2_keys(const int64_t[::1] deg, uint8_t[::1] out):
    """``out[v] = floor(log2(deg[v] + 1))`` (the bucket :func:`degree_order` sorts by;
    ``(1 << out[v]) - 1`` falls in the same bucket)."""
    cdef int64_t n = deg.shape[0], v
    if out.shape[0] != n:
        raise ValueError("log2_keys: out must have len(deg) entries")
    with nogil:
        for v in range(n):
            out[v] = <uint8_t>(63 - _asap_clz64(<unsigned long long>(deg[v] + 1)))
    return out


def slot_order(const uint8_t[::1] key, const int64_t[::1] off, int64_t[::1] new2old):
    """Within each segment ``off[j]:off[j+1]`` of ``key``, the positions by decreasing
    ``key`` (a :func:`log2_keys` bucket), ties in position order: ``new2old[i]`` is the
    position (in ``0..len(key)``) that new position ``i`` holds -- the stable counting
    sort of :func:`degree_order`, on the keys alone."""
    cdef int64_t n = key.shape[0], J = off.shape[0] - 1, j, a, b, i, k
    cdef int64_t cnt[257]
    if new2old.shape[0] != n:
        raise ValueError("slot_order: new2old must have len(key) entries")
    for j in range(J):
        if off[j] < 0 or off[j + 1] < off[j] or off[j + 1] > n:
            raise ValueError("slot_order: bad segment offsets")
    with nogil:
        for j in range(J):
            a = off[j]
            b = off[j + 1]
            for k in range(257):
                cnt[k] = 0
            for i in range(a, b):  # bucket 255 - key: decreasing key first
                cnt[256 - key[i]] += 1
            cnt[0] = a
            for k in range(1, 257):
                cnt[k] += cnt[k - 1]
            for i in range(a, b):
                k = 255 - key[i]
                new2old[cnt[k]] = i
                cnt[k] += 1
    return new2old


def slot_map(const uint8_t[::1] key, const int64_t[::1] mp, const int64_t[::1] o2n,
             int64_t[::1] out):
    """A receiver's map of one in-peer's slots in that peer's slot order: ``out[i] =
    o2n[mp[new2old[i]]]`` with ``new2old`` the :func:`slot_order` of ``key`` (one
    segment).  One pass in the loader's slot order (``mp`` ascending there, so ``o2n`` is
    read in order), the writes in one stream per key."""
    cdef int64_t n = key.shape[0], i, k, no = o2n.shape[0]
    cdef int64_t cnt[257]
    if mp.shape[0] != n or out.shape[0] != n:
        raise ValueError("slot_map: sizes do not match")
    for i in range(n):
        if mp[i] < 0 or mp[i] >= no:
            raise ValueError("slot_map: a map entry out of range")
    with nogil:
        for k in range(257):
            cnt[k] = 0
        for i in range(n):
            cnt[256 - key[i]] += 1
        cnt[0] = 0
        for k in range(1, 257):
            cnt[k] += cnt[k - 1]
        for i in range(n):
            k = 255 - key[i]
            out[cnt[k]] = o2n[mp[i]]
            cnt[k] += 1
    return out


def inverse_into(const int64_t[::1] new2old, vid_t[::1] old2new, int64_t base):
    """``old2new[base + new2old[i]] = base + i`` (a permutation's inverse, shifted)."""
    cdef int64_t n = new2old.shape[0], i
    if old2new.shape[0] < base + n or base < 0:
        raise ValueError("inverse_into: old2new too short")
    for i in range(n):
        if new2old[i] < 0 or new2old[i] >= n:
            raise ValueError("inverse_into: new2old is not a permutation of 0..n-1")
    with nogil:
        for i in range(n):
            old2new[base + new2old[i]] = <vid_t>(base + i)
    return old2new


def relabel_maps(const vid_t[::1] new2old, vid_t[::1] old2new, int64_t[::1] n2o,
                 int64_t[::1] o2n, const double[::1] vin, double[::1] vout,
                 const unsigned char[::1] din, unsigned char[::1] dout):
    """The maps and per-vertex arrays of a relabelling in one pass over ``new2old``
    (``nloc`` entries, a permutation of ``0..nloc-1``): ``old2new`` (``N >= nloc``
    entries, the target type) the inverse, the identity on ``[nloc, N)`` (slots keep
    their index); ``n2o``, ``o2n`` (int64, ``nloc``) the two maps widened; ``vout[i] =
    vin[new2old[i]]`` and ``dout[i] = din[new2old[i]]``."""
    cdef int64_t nloc = new2old.shape[0], N = old2new.shape[0], i, o
    if (N < nloc or n2o.shape[0] != nloc or o2n.shape[0] != nloc or vin.shape[0] != nloc
            or vout.shape[0] != nloc or din.shape[0] != nloc or dout.shape[0] != nloc):
        raise ValueError("relabel_maps: array sizes do not match")
    with nogil:
        for i in range(nloc):
            o = new2old[i]
            old2new[o] = <vid_t>i
            n2o[i] = o
            vout[i] = vin[o]
            dout[i] = din[o]
        for i in range(nloc):
            o2n[i] = old2new[i]
        for i in range(nloc, N):
            old2new[i] = <vid_t>i
    return old2new
