# cython: language_level=3
"""Edge maps and sum-accumulative kernels of the vertex programs (typed, nogil, OpenMP).

Rationale
---------
What: the dense and sparse edge maps every program with a built-in edge operator and
combiner runs (``OP_*``/``COMB_*`` codes of :mod:`asapgraph.kernels._programs`), the
kernels of sum-accumulative (delta-form) programs, and the layout helpers of the
single-process engine.  The min/max family is in :mod:`asapgraph.kernels._minmax`.

Variants (Ligra's edgeMap, Shun & Blelloch PPoPP 2013, with its dense/sparse switch;
Beamer et al. SC 2012 for direction optimisation):

* ``gather_pull``: dense, pull over a CSR that lists, for every target, its sources.
  One thread owns each target, so there are no atomics; an optional byte mask restricts
  the sources (a dense frontier).  Work O(m).
* ``push_sparse``: sparse frontier (a list of active sources), push over the CSR that
  lists, for every source, its targets.  Targets are combined with lock-free atomics
  (``csrc/asap_atomics.h``: CAS loops for min/max/add on float64, native for int64).
  Work O(sum of out-degrees of the frontier).
* ``async_sweep_sum``: one asynchronous (ASAP) sweep of a sum-accumulative program,
  Maiter's delta form (Zhang et al., TPDS 2014): every vertex keeps a value and a pending
  delta; processing ``u`` folds its delta into its value and pushes
  ``op(coef_u * delta_u)`` into its targets' deltas, visible at once (Gauss-Seidel
  order, cf. GAPBS ``PageRankPullGS``).  Sequential: a float CAS per edge would cost
  more than it saves on 2 cores.
* ``delta_select``, ``delta_select_perm``, ``add_abs_sum``: the vertex passes of a
  synchronous delta round (``_perm``: writing in the relabelled order of a dense pull).
* ``scatter_perm``, ``relabel``: apply the degree relabelling of dense pulls.
* ``merge_csr``: the undirected view (in- then out-neighbours of each vertex).
* ``segment_mode``: most frequent value of each CSR segment (ties -> smallest), for the
  ``collect`` combiner of label propagation.

Invariants: ``indptr`` is int64 of length n+1 and non-decreasing; ``indices`` are dense
vertex ids in ``0..n-1`` (int32 or int64); weight arrays are either empty (unweighted)
or aligned with ``indices``; an empty ``active`` mask means "every source is active".
``out``/``has`` of ``push_sparse`` must be initialised by the caller (identity / 0).
The sum combiner in ``push_sparse`` with several threads is not bitwise reproducible
(float addition order), min and max are.  Threads: as every program kernel, from the one
state of :mod:`asapgraph.kernels._progthreads` (``nt``).

References: Shun & Blelloch, "Ligra", PPoPP 2013; Beamer, Asanovic, Patterson,
"Direction-optimizing breadth-first search", SC 2012; Zhang, Gao, Gao, Wang, "Maiter: an
asynchronous graph processing framework for delta-based accumulative iterative
computation", IEEE TPDS 25(8), 2014.
"""
from cython.parallel cimport prange
from libc.math cimport fabs
from libc.stdint cimport int64_t, uint8_t
from libc.stdlib cimport qsort
from asapgraph.kernels._typedefs cimport eid_t, vid_t
from asapgraph.kernels._progkern cimport (val_t, _comb, _edge, asap_atomic_add_f64,
                                          asap_atomic_add_i64, asap_atomic_max_f64,
                                          asap_atomic_max_i64, asap_atomic_min_f64,
                                          asap_atomic_min_i64, asap_atomic_store_u8)
from asapgraph.kernels._progthreads cimport nt as _nt

cdef extern from *:
    """
    #define ASAP_PREFETCH(p) __builtin_prefetch((const void *)(p), 0, 1)
    """
    void ASAP_PREFETCH(const void *p) nogil

# How many edges ahead the dense gather prefetches the source value.
cdef int64_t PREFETCH_DIST = 16
cdef int64_t PREFETCH_MIN_BYTES = 1 << 20


def gather_pull(const eid_t[::1] indptr, const vid_t[::1] indices, const double[::1] w,
                const val_t[::1] x, const uint8_t[::1] active, int op, int comb,
                val_t ident, val_t[::1] out, uint8_t[::1] has):
    """Dense pull: ``out[v] = comb over sources u of v (active u only) of op(x[u], w)``.

    Parameters
    ----------
    indptr, indices : CSR listing the sources of every target.
    w : float64, aligned with ``indices``, or empty (every weight 1).
    x : value sent by every source (length n_src).
    active : uint8 mask over sources, or empty (all active).
    op, comb : edge operator and combiner codes.
    ident : identity of the combiner (written where no message arrives).
    out, has : outputs (length n_targets): combined message, 1 when any message arrived.

    Returns
    -------
    int
        Number of edges scanned.
    """
    cdef Py_ssize_t n = indptr.shape[0] - 1
    cdef Py_ssize_t v
    cdef eid_t e
    cdef int64_t u
    cdef val_t acc
    cdef uint8_t got
    cdef bint weighted = w.shape[0] > 0
    cdef bint masked = active.shape[0] > 0
    cdef eid_t m_end = indptr[n]
    # prefetch only when the gathered array outgrows the L2 cache (about 1 MB)
    cdef bint use_prefetch = x.shape[0] * 8 > PREFETCH_MIN_BYTES
    if not masked and comb == 0 and (op == 0 or (op == 1 and not weighted)):
        # the hot case (PageRank-like sums): a plain gather, no branches in the inner loop;
        # the source value PREFETCH_DIST edges ahead is prefetched (random reads dominate)
        for v in prange(n, nogil=True, schedule="guided", num_threads=_nt(n + indptr[n])):
            acc = 0
            if use_prefetch:
                for e in range(indptr[v], indptr[v + 1]):
                    if e + PREFETCH_DIST < m_end:
                        ASAP_PREFETCH(&x[indices[e + PREFETCH_DIST]])
                    acc = acc + x[indices[e]]
            else:
                for e in range(indptr[v], indptr[v + 1]):
                    acc = acc + x[indices[e]]
            out[v] = acc
            has[v] = indptr[v + 1] > indptr[v]
        return int(indptr[n] - indptr[0])
    if not masked and comb == 0 and op == 1:
        for v in prange(n, nogil=True, schedule="guided", num_threads=_nt(n + indptr[n])):
            acc = 0
            for e in range(indptr[v], indptr[v + 1]):
                acc = acc + <val_t>(x[indices[e]] * w[e])
            out[v] = acc
            has[v] = indptr[v + 1] > indptr[v]
        return int(indptr[n] - indptr[0])
    for v in prange(n, nogil=True, schedule="guided", num_threads=_nt(n + indptr[n])):
        acc = ident
        got = 0
        for e in range(indptr[v], indptr[v + 1]):
            u = indices[e]
            if masked and not active[u]:
                continue
            acc = _comb(comb, acc, _edge(op, x[u], w[e] if weighted else 1.0))
            got = 1
        out[v] = acc
        has[v] = got
    return int(indptr[n] - indptr[0])


def push_sparse(const eid_t[::1] indptr, const vid_t[::1] indices, const double[::1] w,
                const int64_t[::1] frontier, const val_t[::1] x, int op, int comb,
                val_t[::1] out, uint8_t[::1] has):
    """Sparse push from the sources in ``frontier`` along the CSR of their targets.

    ``out`` and ``has`` are combined into (initialise them to the identity and 0).
    Returns the number of edges scanned.
    """
    cdef Py_ssize_t nf = frontier.shape[0]
    cdef Py_ssize_t i
    cdef int64_t u, v
    cdef eid_t e
    cdef val_t m
    cdef bint weighted = w.shape[0] > 0
    cdef int64_t scanned = 0
    for i in prange(nf, nogil=True, schedule="guided", num_threads=_nt(nf * 8)):
        u = frontier[i]
        scanned += indptr[u + 1] - indptr[u]
        for e in range(indptr[u], indptr[u + 1]):
            v = indices[e]
            m = _edge(op, x[u], w[e] if weighted else 1.0)
            if val_t is double:
                if comb == 0:
                    asap_atomic_add_f64(&out[v], m)
                elif comb == 1:
                    asap_atomic_min_f64(&out[v], m)
                else:
                    asap_atomic_max_f64(&out[v], m)
            else:
                if comb == 0:
                    asap_atomic_add_i64(&out[v], m)
                elif comb == 1:
                    asap_atomic_min_i64(&out[v], m)
                else:
                    asap_atomic_max_i64(&out[v], m)
            if not has[v]:
                asap_atomic_store_u8(&has[v], 1)
    return scanned


def async_sweep_sum(const eid_t[::1] indptr, const vid_t[::1] indices, const double[::1] w,
                    const double[::1] coef, int op, double[::1] values, double[::1] deltas,
                    double[::1] sent, double threshold):
    """One asynchronous (Gauss-Seidel) sweep of a sum-accumulative program.

    Every ``u`` with ``|delta_u| > threshold``, in vertex order: ``values[u] += delta_u``,
    ``sent[u] += delta_u``, ``delta_u = 0``, and ``deltas[t] += op(coef[u] * d, w)`` for
    each target ``t`` (at once visible to later vertices of the same sweep).

    Returns
    -------
    (int, int)
        Vertices processed and edges scanned.
    """
    cdef Py_ssize_t n = indptr.shape[0] - 1
    cdef Py_ssize_t u
    cdef eid_t e
    cdef double d, s
    cdef bint weighted = w.shape[0] > 0
    cdef int64_t nproc = 0, scanned = 0
    with nogil:
        for u in range(n):
            d = deltas[u]
            if not (fabs(d) > threshold):
                continue
            deltas[u] = 0.0
            values[u] += d
            sent[u] += d
            nproc += 1
            s = d * coef[u]
            if s == 0.0:
                continue
            scanned += indptr[u + 1] - indptr[u]
            for e in range(indptr[u], indptr[u + 1]):
                deltas[indices[e]] += _edge(op, s, w[e] if weighted else 1.0)
    return nproc, scanned


cdef int _cmp_i64(const void *a, const void *b) noexcept nogil:
    cdef int64_t x = (<const int64_t *>a)[0]
    cdef int64_t y = (<const int64_t *>b)[0]
    return (x > y) - (x < y)


def segment_mode(const eid_t[::1] indptr, int64_t[::1] vals, int64_t[::1] out,
                 uint8_t[::1] has):
    """Most frequent value of every segment ``vals[indptr[v]:indptr[v+1]]``.

    Ties go to the smallest value.  Sorts each segment in place.  ``out[v]`` is left
    unchanged and ``has[v] = 0`` for empty segments.
    """
    cdef Py_ssize_t n = indptr.shape[0] - 1
    cdef Py_ssize_t v
    cdef eid_t e, lo, hi, run
    cdef int64_t best, bestc, cur
    for v in prange(n, nogil=True, schedule="guided", num_threads=_nt(n + indptr[n])):
        lo = indptr[v]
        hi = indptr[v + 1]
        if hi == lo:
            has[v] = 0
            continue
        qsort(&vals[lo], <size_t>(hi - lo), sizeof(int64_t), _cmp_i64)
        best = vals[lo]
        bestc = 0
        cur = vals[lo]
        run = 0
        for e in range(lo, hi):
            if vals[e] == cur:
                run = run + 1
            else:
                if run > bestc:
                    bestc = run
                    best = cur
                cur = vals[e]
                run = 1
        if run > bestc:
            best = cur
        out[v] = best
        has[v] = 1


def merge_csr(const eid_t[::1] pa, const vid_t[::1] ia, const double[::1] wa,
              const eid_t[::1] pb, const vid_t[::1] ib, const double[::1] wb,
              const eid_t[::1] pout, vid_t[::1] iout, double[::1] wout):
    """Concatenate, per row, two CSRs over the same rows: row ``v`` of the output is row
    ``v`` of ``a`` then row ``v`` of ``b`` (``pout = pa + pb``, computed by the caller).

    Used to build the undirected view (in-neighbours then out-neighbours of each vertex).
    Weights are copied when ``wout`` is not empty.
    """
    cdef Py_ssize_t n = pa.shape[0] - 1
    cdef Py_ssize_t v
    cdef eid_t e, o
    cdef bint weighted = wout.shape[0] > 0
    for v in prange(n, nogil=True, schedule="static", num_threads=_nt(n + pout[n])):
        o = pout[v]
        for e in range(pa[v], pa[v + 1]):
            iout[o] = ia[e]
            if weighted:
                wout[o] = wa[e]
            o = o + 1
        for e in range(pb[v], pb[v + 1]):
            iout[o] = ib[e]
            if weighted:
                wout[o] = wb[e]
            o = o + 1


def delta_select(double[::1] values, double[::1] deltas, const double[::1] coef, double threshold,
                 double[::1] sent, double[::1] x):
    """Synchronous delta round, vertex part: for every ``u`` with ``|delta_u| > threshold``
    move the delta into ``values`` and ``sent``, and set ``x[u] = coef[u] * delta_u``
    (``coef`` empty: 1); other vertices get ``sent[u] = x[u] = 0``.  Returns the count."""
    cdef Py_ssize_t n = values.shape[0]
    cdef Py_ssize_t u
    cdef double d
    cdef int64_t cnt = 0
    cdef bint has_coef = coef.shape[0] > 0
    for u in prange(n, nogil=True, schedule="static", num_threads=_nt(n)):
        d = deltas[u]
        if fabs(d) > threshold:
            values[u] += d
            deltas[u] = 0.0
            sent[u] = d
            x[u] = d * coef[u] if has_coef else d
            cnt += 1
        else:
            sent[u] = 0.0
            x[u] = 0.0
    return cnt


def add_abs_sum(double[::1] deltas, const double[::1] combined):
    """``deltas += combined`` (when ``combined`` is not empty); returns ``sum |deltas|``."""
    cdef Py_ssize_t n = deltas.shape[0]
    cdef Py_ssize_t u
    cdef double s = 0.0
    cdef bint add = combined.shape[0] > 0
    for u in prange(n, nogil=True, schedule="static", num_threads=_nt(n)):
        if add:
            deltas[u] += combined[u]
        s += fabs(deltas[u])
    return s


ctypedef fused any_t:
    double
    int64_t
    uint8_t


def scatter_perm(const any_t[::1] x, const vid_t[::1] pos, any_t[::1] out):
    """``out[pos[u]] = x[u]`` (apply a vertex relabelling to a per-vertex array)."""
    cdef Py_ssize_t n = x.shape[0]
    cdef Py_ssize_t u
    for u in prange(n, nogil=True, schedule="static", num_threads=_nt(n)):
        out[pos[u]] = x[u]


def relabel(const vid_t[::1] indices, const vid_t[::1] pos, vid_t[::1] out):
    """``out[k] = pos[indices[k]]``."""
    cdef Py_ssize_t m = indices.shape[0]
    cdef Py_ssize_t k
    for k in prange(m, nogil=True, schedule="static", num_threads=_nt(m)):
        out[k] = pos[indices[k]]


def delta_select_perm(double[::1] values, double[::1] deltas, const double[::1] coef,
                      double threshold, double[::1] sent, double[::1] xp, const vid_t[::1] pos):
    """:func:`delta_select` writing the sent value of ``u`` at ``xp[pos[u]]`` (the source
    labels of a relabelled dense pull), saving the separate permutation pass."""
    cdef Py_ssize_t n = values.shape[0]
    cdef Py_ssize_t u
    cdef double d
    cdef int64_t cnt = 0
    cdef bint has_coef = coef.shape[0] > 0
    for u in prange(n, nogil=True, schedule="static", num_threads=_nt(n)):
        d = deltas[u]
        if fabs(d) > threshold:
            values[u] += d
            deltas[u] = 0.0
            sent[u] = d
            xp[pos[u]] = d * coef[u] if has_coef else d
            cnt += 1
        else:
            sent[u] = 0.0
            xp[pos[u]] = 0.0
    return cnt
