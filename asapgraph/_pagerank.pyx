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
    given).  This is exactly networkx's ``_pagerank_scipy`` update
    ``x = alpha * (x @ Q + sum(x[dangling]) * D) + (1 - alpha) * P``.
Variants
    *Jacobi* (``cin`` and ``cout`` are two arrays): the iterate sequence of networkx /
    scipy power iteration, bitwise independent of the thread count except for the
    reduction order of ``delta``.  *Gauss-Seidel* (``cin is cout``): a vertex's new
    contribution is visible at once to later vertices of the same sweep (GAPBS
    ``PageRankPullGS``); fewer sweeps, same fixed point, results depend slightly on
    thread timing.  Both share this code: the only difference is whether the
    contribution array is double-buffered.
    The vertex range is split into ``len(bounds)-1`` contiguous blocks with about equal
    ``edges + vertices`` (static, edge-balanced: R-MAT in-degrees are very skewed), one
    per OpenMP thread.  Each block returns its L1 change and its new dangling mass; the
    caller sums them (fixed order).
Invariants
    ``sum(x) == 1`` is preserved by Jacobi sweeps up to rounding (Q with dangling columns
    replaced by ``D`` is column-stochastic); ``c`` always equals ``x * inv_out`` for the
    values of ``x`` last written.
References
    L. Page, S. Brin, R. Motwani, T. Winograd, "The PageRank citation ranking", 1999.
    A. Langville, C. Meyer, "Deeper inside PageRank", Internet Math. 1(3), 2004 (dangling
    nodes, personalization).  S. Beamer et al., GAPBS ``pr.cc`` (pull Gauss-Seidel).
    networkx ``pagerank`` (``_pagerank_scipy``) for the exact semantics reproduced here.
"""
from cython.parallel cimport prange
from libc.math cimport fabs
from libc.stdint cimport int32_t, int64_t

ctypedef fused vid_t:
    int32_t
    int64_t


cdef void _block(const int64_t[::1] indptr, const vid_t[::1] indices, const double[::1] w,
                 const double[::1] inv_out, double[::1] x, const double[::1] cin,
                 double[::1] cout, const vid_t[::1] cpos, const double[::1] P,
                 const double[::1] D, double alpha, double cp, double cd, double pu, double du,
                 int64_t lo, int64_t hi, double* err_out, double* dang_out) noexcept nogil:
    # cp = 1 - alpha; cd = alpha * delta; pu/du: uniform values when P/D are empty
    cdef int64_t v, k, k1
    cdef double s, xn, base, err = 0.0, dang = 0.0, iv
    cdef bint hasP = P.shape[0] > 0, hasD = D.shape[0] > 0, hasW = w.shape[0] > 0
    cdef bint hasC = cpos.shape[0] > 0
    for v in range(lo, hi):
        s = 0.0
        k = indptr[v]
        k1 = indptr[v + 1]
        if hasW:
            while k < k1:
                s += cin[indices[k]] * w[k]
                k += 1
        else:
            while k < k1:
                s += cin[indices[k]]
                k += 1
        base = cp * (P[v] if hasP else pu) + cd * (D[v] if hasD else du)
        xn = alpha * s + base
        err += fabs(xn - x[v])
        x[v] = xn
        iv = inv_out[v]
        if hasC:
            cout[cpos[v]] = xn * iv
        else:
            cout[v] = xn * iv
        if iv == 0.0:
            dang += xn
    err_out[0] = err
    dang_out[0] = dang


def sweep(const int64_t[::1] indptr, const vid_t[::1] indices, const double[::1] w,
          const double[::1] inv_out, double[::1] x, const double[::1] cin, double[::1] cout,
          const vid_t[::1] cpos, const double[::1] P, const double[::1] D, double alpha, double delta,
          const int64_t[::1] bounds, double[::1] err, double[::1] dang):
    """One PageRank sweep (Jacobi when ``cin`` and ``cout`` differ, Gauss-Seidel when equal).

    Parameters
    ----------
    indptr, indices : in-CSR (int64 offsets; int32 or int64 sources)
    w : float64, edge weights aligned with ``indices``, or empty (unweighted)
    inv_out : float64, ``1/out_weight`` (``0`` for dangling vertices)
    x : float64, current ranks, overwritten with the new ranks
    cin, cout : float64, contributions ``x * inv_out`` read / written
    cpos : same dtype as ``indices``; the contribution of ``v`` is stored at ``cpos[v]``
        (empty: at ``v``).  Used with sources relabelled by decreasing out-degree.
    P, D : float64 teleport and dangling distributions (empty: uniform ``1/n``)
    alpha, delta : damping, dangling mass of the previous iterate
    bounds : int64, ``nb + 1`` block boundaries (one block per thread)
    err, dang : float64 of length ``nb``, out: per-block L1 change and new dangling mass
    """
    cdef int64_t n = x.shape[0]
    cdef int nb = bounds.shape[0] - 1, b
    cdef double pu = 1.0 / n if n > 0 else 0.0
    with nogil:
        for b in prange(nb, schedule="static", num_threads=nb):
            _block(indptr, indices, w, inv_out, x, cin, cout, cpos, P, D, alpha, 1.0 - alpha,
                   alpha * delta, pu, pu, bounds[b], bounds[b + 1], &err[b], &dang[b])


def balanced_bounds(const int64_t[::1] indptr, int nb):
    """``nb + 1`` vertex boundaries splitting ``edges + 2*vertices`` work about equally."""
    import numpy as np
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


cdef extern from *:
    """
    #ifdef _OPENMP
    #include <omp.h>
    static int _omp_max_threads(void) { return omp_get_max_threads(); }
    #else
    static int _omp_max_threads(void) { return 1; }
    #endif
    """
    int _omp_max_threads() noexcept nogil



def relabel(const vid_t[::1] indices, const vid_t[::1] old2new, vid_t[::1] out):
    """``out[k] = old2new[indices[k]]`` (parallel, streaming)."""
    cdef int64_t k, m = indices.shape[0]
    with nogil:
        for k in prange(m, schedule="static"):
            out[k] = old2new[indices[k]]
