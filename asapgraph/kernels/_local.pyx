# cython: language_level=3
"""Local kernels of the ASAP PageRank engine (one rank's share of the graph).

Rationale
---------
Layout.  A rank owns ``nloc`` vertices and stores the OUT-edges of exactly those
vertices as a local out-CSR ``(indptr, tgt, coef)``.  ``coef[e] = w_e / outw[u]``
(``1/outdeg[u]`` unweighted).  Every target is encoded as one int64 index into a
single accumulator array ``acc`` of length ``nloc + nslots``: an index below
``nloc`` is an owned vertex, an index ``nloc + s`` is slot ``s`` of the
concatenated per-peer outgoing buffers (each remote target vertex has exactly one
slot per peer, so contributions to the same remote vertex are combined in place).
The receiver knows, for each peer, the slot -> local-vertex map (exchanged once).

Kernels (the BSP engine sweeps a pull layout with the single-process kernel instead,
see :mod:`asapgraph.engine.pull`).

* :func:`residual_push` (ASAP, Maiter-style delta/residual push, Gauss-Seidel
  order): for each owned ``u`` with ``r[u] > theta``: ``x[u] += r[u]``, then
  ``alpha*r[u]*coef[e]`` goes to each target (local residual or outgoing slot);
  the pushed mass of a dangling vertex leaves the system (it is recovered by the
  final normalisation, see :mod:`asapgraph.engine.asap`).  Invariant (mass
  conservation): ``sum(x) + (sum(r) + buffered + in_flight + leaked)/(1-alpha)``
  is constant (= 1 when started from ``r = (1-alpha) p``).  All quantities are
  non-negative, so order and staleness never change the fixed point.
* :func:`scatter_add`: apply a received buffer, ``acc[idx[s]] += vals[s]``.
* ASAP message encoding: :func:`pack_sparse` / :func:`scatter_add_sparse` (non-zero
  slots as ``(int32 index, float64 value)`` pairs), :func:`pack_f32` /
  :func:`scatter_add_f32` (float32 rounded toward zero with error feedback: the
  remainder ``v - f32(v) >= 0`` stays in the slot, so delivered + buffered equals the
  original bit for bit), :func:`abs_sum` (a reduction without a temporary).

All loops run without the GIL over typed memoryviews.  The pushes are sequential
(in-place scatter with conflicts); on the 2-core target the ranks themselves are
the parallelism.

References: Zhang, Gao, Gao, Wang, "Maiter: An Asynchronous Graph Processing
Framework for Delta-based Accumulative Iterative Computation", IEEE TPDS 25(8),
2014; Andersen, Chung, Lang, "Local graph partitioning using PageRank vectors",
FOCS 2006 (residual push); Zhu, Chen, Zheng, Ma, "Gemini: A Computation-Centric
Distributed Graph Processing System", OSDI 2016 (partitioning, sparse exchange).
"""
from libc.stdint cimport int16_t, int32_t, int64_t, uint8_t
from asapgraph.kernels._typedefs cimport eid_t, vid_t
from libc.math cimport fabs, log2, nextafterf

# priority schedule: buckets of the key (mass per unit of work), PRIO_SUB per octave
cdef enum:
    PRIO_NB = 128
cdef double PRIO_SUB = 4.0

# edge targets (vid_t): int32 when nloc + nslots fits, else int64


cdef inline int64_t _push_vertex(const int64_t[::1] indptr, const vid_t[::1] tgt,
                                 const double[::1] coef, const double[::1] vcoef, double[::1] x,
                                 double[::1] acc, const uint8_t[::1] dangling, Py_ssize_t u,
                                 double ru, double alpha, bint per_edge,
                                 double* dang) noexcept nogil:
    """Move ``ru`` into ``x[u]`` and push ``alpha ru`` along ``u``'s out-edges (a dangling
    ``u``: into ``*dang``); returns the edges visited."""
    x[u] += ru
    if dangling[u]:
        dang[0] += alpha * ru
        return 0
    _push_row(indptr, tgt, coef, vcoef, acc, u, alpha * ru, per_edge)
    return indptr[u + 1] - indptr[u]


cdef inline void _push_row(const int64_t[::1] indptr, const vid_t[::1] tgt,
                           const double[::1] coef, const double[::1] vcoef, double[::1] acc,
                           Py_ssize_t u, double a, bint per_edge) noexcept nogil:
    """``acc[tgt[e]] += a * coef[e]`` over the out-edges of ``u`` (``vcoef[u]`` if not per edge)."""
    cdef int64_t e
    if per_edge:
        for e in range(indptr[u], indptr[u + 1]):
            acc[tgt[e]] += a * coef[e]
    else:
        a = a * vcoef[u]
        for e in range(indptr[u], indptr[u + 1]):
            acc[tgt[e]] += a


def residual_push(const int64_t[::1] indptr, const vid_t[::1] tgt, const double[::1] coef,
                  const double[::1] vcoef, double[::1] x, double[::1] acc,
                  const uint8_t[::1] dangling,
                  double alpha, double theta, const double[::1] scale):
    """One Gauss-Seidel sweep of residual push over the owned vertices.

    ``acc[:n]`` is the residual ``r``; ``acc[n:]`` the outgoing slots.  Vertex ``u`` is
    pushed when ``r[u] > theta * scale[u]`` (``scale`` ~ out-degree / mean out-degree:
    the Andersen-Chung-Lang rule, mass moved per edge visited), so hubs wait until
    their residual pays for their many edges.  The returned maximum is that of
    ``r[u] / scale[u]``.

    Returns
    -------
    (int, int, float, float, float)
        Vertices pushed, edges visited, mass leaked through dangling vertices,
        the largest residual left in ``acc[:n]`` after the sweep and their sum.
    """
    cdef Py_ssize_t n = x.shape[0], u
    cdef int64_t npush = 0, nedge = 0
    cdef double ru, leak = 0.0, rmax = 0.0, rsum = 0.0
    cdef bint per_edge = coef is not None
    with nogil:
        for u in range(n):
            ru = acc[u]
            if ru <= theta * scale[u]:
                continue
            acc[u] = 0.0
            npush += 1
            nedge += _push_vertex(indptr, tgt, coef, vcoef, x, acc, dangling, u, ru, alpha,
                                  per_edge, &leak)
        for u in range(n):
            rsum += acc[u]
            if acc[u] > rmax * scale[u]:
                rmax = acc[u] / scale[u]
    return npush, nedge, leak, rmax, rsum


def jacobi_push(const int64_t[::1] indptr, const vid_t[::1] tgt, const double[::1] coef,
                const double[::1] vcoef, double[::1] x, double[::1] acc, double[::1] rs,
                int32_t[::1] act, double[::1] bsum, const uint8_t[::1] dangling,
                double alpha, double pend_p, const double[::1] bq_p,
                double pend_d, const double[::1] bq_d, double theta=0.0,
                Py_ssize_t block=16, double rho=0.0):
    """One Jacobi sweep of signed delta push over the owned vertices (ASAP ``jacobi`` form).

    The residual of ``u`` is ``acc[u] + pend_p * bq_p[u] + pend_d * bq_d[u]`` (pool mass
    received for this rank, spread along its share of the teleport / dangling
    distributions, each normalised to sum 1).  Every non-zero residual is moved into
    ``x`` and ``alpha * r[u] * coef[e]`` is added to each target (local residual or
    outgoing slot).  Residuals are snapshotted into ``rs`` first, so mass reaching a local
    vertex in this sweep is pushed in the next one (Jacobi: in lockstep, power iteration).

    Skipping works on *blocks* of ``block`` consecutive vertices: a block whose mean
    ``|r|`` is at most ``min(theta, max block mean / 2)`` is not pushed -- its residuals
    stay in ``acc`` and keep combining with later contributions (the cap guarantees
    progress); the other blocks push all their vertices.  Why blocks: the push is bound
    by memory access, and a sweep that skips single vertices scattered over the range
    still touches nearly every cache line (cnr-2000, one rank: 16-vertex blocks cut the
    compute of a run by a third, and the fixed cost of a sweep from 5.3 to 1.7 ns per
    vertex).  Scratch: ``act`` (pushed block numbers) and ``bsum`` (block sums of
    ``|r|``), each of length ``>= ceil(n / block)``.
    The rest of each pushed residual -- ``(1 - alpha) r[u]`` (teleport) and, for a
    dangling ``u``, ``alpha r[u]`` -- goes to the pools the caller spreads over the ranks.

    *Priority schedule* (``0 < rho < 1``; PrIter/Maiter-style, on blocks): of the blocks
    above ``theta``, only those with the largest *key* -- ``sum |r|`` per unit of work, the
    block's out-edges plus its vertices -- are pushed, the fewest that carry at least
    ``rho`` of their mass.  The threshold comes from a histogram of the keys in
    logarithmic buckets (``PRIO_SUB`` per octave below the largest key; one pass over the
    block sums, no sort); the blocks of the top buckets are pushed, the others wait and
    combine.  The block of the largest key is always pushed, so a sweep makes progress.
    ``rho <= 0`` or ``>= 1``: every block above ``theta`` (the uniform sweep).

    Returns
    -------
    (int, float, float, float, float)
        Edges visited, dangling pool ``alpha sum r[u]`` over dangling ``u``, ``sum r``
        pushed, ``sum |r|`` pushed, ``sum |acc[:n]|`` after the sweep.
    """
    cdef Py_ssize_t n = x.shape[0], u, i, b, lo, hi, k = 0, nb
    cdef int64_t nedge = 0
    cdef double ru, s, dp = 0.0, pushed = 0.0, pushed_abs = 0.0, left = 0.0, rmax = 0.0
    cdef bint per_edge = coef is not None
    cdef bint pools = pend_p != 0.0 or pend_d != 0.0
    cdef bint prio = 0.0 < rho < 1.0
    cdef double kmax = 0.0, key, htot = 0.0, cum
    cdef double hist[PRIO_NB]
    cdef int kb = PRIO_NB - 1, bin_
    if block < 1:
        raise ValueError("block must be >= 1")
    nb = (n + block - 1) // block
    if act.shape[0] < nb or bsum.shape[0] < nb:
        raise ValueError("act and bsum must hold one entry per block")
    with nogil:
        for b in range(nb):  # snapshot; block sums; the largest block mean
            lo = b * block
            hi = lo + block if lo + block < n else n
            s = 0.0
            if pools:
                for u in range(lo, hi):
                    ru = acc[u] + pend_p * bq_p[u] + pend_d * bq_d[u]
                    rs[u] = ru
                    s += fabs(ru)
            else:
                for u in range(lo, hi):
                    ru = acc[u]
                    rs[u] = ru
                    s += fabs(ru)
            bsum[b] = s
            if prio:
                key = s / <double>(indptr[hi] - indptr[lo] + hi - lo)
                kmax = key if key > kmax else kmax
            s = s / (hi - lo)
            rmax = s if s > rmax else rmax
        if theta > 0.5 * rmax:
            theta = 0.5 * rmax
        if prio and kmax > 0.0:  # the key buckets of the blocks above theta, their mass
            for bin_ in range(PRIO_NB):
                hist[bin_] = 0.0
            for b in range(nb):
                lo = b * block
                hi = lo + block if lo + block < n else n
                if bsum[b] > theta * (hi - lo):
                    bin_ = _prio_bin(bsum[b], indptr[hi] - indptr[lo] + hi - lo, kmax)
                    hist[bin_] += bsum[b]
                    htot += bsum[b]
            cum = 0.0
            for bin_ in range(PRIO_NB):  # the fewest top buckets holding rho of the mass
                cum += hist[bin_]
                if cum >= rho * htot:
                    kb = bin_
                    break
        for b in range(nb):  # choose the blocks; the others keep their residuals in acc
            lo = b * block
            hi = lo + block if lo + block < n else n
            if bsum[b] > theta * (hi - lo) and not (
                    prio and kmax > 0.0
                    and _prio_bin(bsum[b], indptr[hi] - indptr[lo] + hi - lo, kmax) > kb):
                act[k] = <int32_t>b
                k += 1
                for u in range(lo, hi):
                    acc[u] = 0.0
            elif pools:
                for u in range(lo, hi):
                    acc[u] = rs[u]
        for i in range(k):
            lo = act[i] * block
            hi = lo + block if lo + block < n else n
            for u in range(lo, hi):
                ru = rs[u]
                if ru == 0.0:
                    continue
                pushed += ru
                pushed_abs += fabs(ru)
                nedge += _push_vertex(indptr, tgt, coef, vcoef, x, acc, dangling, u, ru,
                                      alpha, per_edge, &dp)
        for u in range(n):
            left += fabs(acc[u])
    return nedge, dp, pushed, pushed_abs, left


cdef inline int _prio_bin(double mass, int64_t work, double kmax) noexcept nogil:
    """Bucket of the key ``mass / work``: 0 for the largest key ``kmax``, then ``PRIO_SUB``
    buckets per octave below it; the last bucket holds everything smaller."""
    cdef double key = mass / <double>work, d
    if key <= 0.0:
        return PRIO_NB - 1
    d = PRIO_SUB * log2(kmax / key)
    if d >= PRIO_NB - 1:
        return PRIO_NB - 1
    return <int>d if d > 0.0 else 0


def scatter_add(double[::1] acc, const int64_t[::1] idx, const double[::1] vals):
    """``acc[idx[s]] += vals[s]`` for every slot ``s``; returns ``sum(vals)``."""
    cdef Py_ssize_t m = idx.shape[0], s
    cdef double tot = 0.0
    with nogil:
        for s in range(m):
            acc[idx[s]] += vals[s]
            tot += vals[s]
    return tot


def abs_sum(const double[::1] a, Py_ssize_t lo, Py_ssize_t hi):
    """``sum |a[lo:hi]|`` without a temporary."""
    cdef Py_ssize_t i
    cdef double s = 0.0
    with nogil:
        for i in range(lo, hi):
            s += fabs(a[i])
    return s


def exact_sum(const double[::1] a, Py_ssize_t lo, Py_ssize_t hi):
    """``sum a[lo:hi]`` compensated (Neumaier): the error is about one rounding of the
    result plus ``n eps^2 sum |a|``, not ``n eps sum |a|`` (the ``jacobi`` form's drift
    correction measures the signed mass a sweep creates by rounding with it)."""
    cdef Py_ssize_t i
    cdef double s = 0.0, c = 0.0, t, v
    with nogil:
        for i in range(lo, hi):
            v = a[i]
            t = s + v
            if fabs(s) >= fabs(v):
                c += (s - t) + v
            else:
                c += (v - t) + s
            s = t
    return s + c


def pack_sparse(double[::1] seg, double[::1] vals, int32_t[::1] idx, double thresh):
    """Move the entries of ``seg`` with ``|v| > thresh`` into ``(idx, vals)``, zeroing them.

    Entries at or below ``thresh`` stay in ``seg`` (buffered, combined with later
    contributions; nothing is dropped).  Stops when ``vals`` is full.

    Returns
    -------
    (int, float, float)
        Number of entries packed, their signed sum, and ``sum |v|`` left in ``seg``.
    """
    cdef Py_ssize_t m = seg.shape[0], cap = vals.shape[0], s, k = 0
    cdef double v, tot = 0.0, left = 0.0
    with nogil:
        for s in range(m):
            v = seg[s]
            if v == 0.0:
                continue
            if fabs(v) > thresh and k < cap:
                vals[k] = v
                idx[k] = <int32_t>s
                k += 1
                tot += v
                seg[s] = 0.0
            else:
                left += fabs(v)
    return k, tot, left


def scatter_add_sparse(double[::1] acc, const int64_t[::1] mp, const int32_t[::1] idx,
                       const double[::1] vals):
    """``acc[mp[idx[i]]] += vals[i]``; returns ``sum(vals)``."""
    cdef Py_ssize_t k = idx.shape[0], i
    cdef double tot = 0.0
    with nogil:
        for i in range(k):
            acc[mp[idx[i]]] += vals[i]
            tot += vals[i]
    return tot



def pack_f32(double[::1] seg, float[::1] vals, int32_t[::1] idx, bint sparse):
    """Quantise ``seg`` to float32 with error feedback, in place.

    Each sent value is ``v`` rounded toward zero to float32 (so ``|f| <= |v|``); the
    remainder ``v - f`` (same sign as ``v``, below ``2**-23 |v|``) stays in ``seg``, where it keeps
    combining with later contributions: the mass accounting stays exact and the
    residuals non-negative.  Dense: ``vals[s]`` for every slot; sparse: the non-zero
    slots as ``(idx, vals)``.

    Returns
    -------
    int
        Number of values written.
    """
    cdef Py_ssize_t m = seg.shape[0], s, k = 0
    cdef double v
    cdef float f
    with nogil:
        for s in range(m):
            v = seg[s]
            if sparse and v == 0.0:
                continue
            f = <float>v
            if fabs(<double>f) > fabs(v):  # round toward zero (either sign)
                f = nextafterf(f, 0.0)
            seg[s] = v - <double>f
            vals[k] = f
            if sparse:
                idx[k] = <int32_t>s
            k += 1
    return k


def scatter_add_f32(double[::1] acc, const int64_t[::1] mp, const int32_t[::1] idx,
                    const float[::1] vals, bint sparse):
    """``acc[mp[s]] += vals[s]`` (dense) or ``acc[mp[idx[i]]] += vals[i]`` (sparse).

    Returns ``sum(vals)``.
    """
    cdef Py_ssize_t k = vals.shape[0], i
    cdef double tot = 0.0
    with nogil:
        if sparse:
            for i in range(k):
                acc[mp[idx[i]]] += <double>vals[i]
                tot += <double>vals[i]
        else:
            for i in range(k):
                acc[mp[i]] += <double>vals[i]
                tot += <double>vals[i]
    return tot


cdef inline double _absmax(const double[::1] a) noexcept nogil:
    cdef Py_ssize_t i
    cdef double big = 0.0
    for i in range(a.shape[0]):
        if fabs(a[i]) > big:
            big = fabs(a[i])
    return big


def pack_q16(double[::1] seg, int16_t[::1] vals, int32_t[::1] idx, bint sparse):
    """Quantise ``seg`` to 16-bit integers of a per-message step, with error feedback.

    ``step = max|seg| / 32767``; each slot sends ``q = trunc(v / step)`` (toward zero,
    corrected so that ``|q * step| <= |v|``), and the remainder ``v - q * step`` (same sign
    as ``v``, exact by Sterbenz's lemma when ``q != 0``) stays in ``seg``: values below one
    step wait in the buffer until they have grown, nothing is lost.  The receiver adds
    ``q * step`` computed the same way, so both sides agree bit for bit.  Dense: ``vals[s]``
    for every slot; sparse: the slots with ``q != 0`` as ``(idx, vals)``.

    Returns
    -------
    (int, float)
        Number of values written and ``step`` (0 when ``seg`` is all zero).
    """
    cdef Py_ssize_t m = seg.shape[0], s, k = 0
    cdef double v, step, sent
    cdef long q
    with nogil:
        step = _absmax(seg) / 32767.0
        if step > 0.0:
            for s in range(m):
                v = seg[s]
                q = <long>(v / step)
                if q > 32767:
                    q = 32767
                elif q < -32767:
                    q = -32767
                sent = <double>q * step
                while fabs(sent) > fabs(v):
                    q = q - 1 if q > 0 else q + 1
                    sent = <double>q * step
                if sparse and q == 0:
                    continue
                seg[s] = v - sent
                vals[k] = <int16_t>q
                if sparse:
                    idx[k] = <int32_t>s
                k += 1
        elif not sparse:
            for s in range(m):
                vals[s] = 0
            k = m
    return k, step


def count_q16(const double[::1] seg):
    """Number of slots ``pack_q16`` would send in sparse form (``|v| >= max|v| / 32767``)."""
    cdef Py_ssize_t m = seg.shape[0], s, k = 0
    cdef double step
    with nogil:
        step = _absmax(seg) / 32767.0
        if step > 0.0:
            for s in range(m):
                if fabs(seg[s]) >= step:
                    k += 1
    return k


def scatter_add_q16(double[::1] acc, const int64_t[::1] mp, const int32_t[::1] idx,
                    const int16_t[::1] vals, double step, bint sparse):
    """``acc[mp[..]] += vals[i] * step`` (dense or sparse); returns the mass added."""
    cdef Py_ssize_t k = vals.shape[0], i
    cdef double tot = 0.0, v
    with nogil:
        for i in range(k):
            v = <double>vals[i] * step
            if sparse:
                acc[mp[idx[i]]] += v
            else:
                acc[mp[i]] += v
            tot += v
    return tot


def l1_diff_scaled(const double[::1] x, double scale, const double[::1] ref):
    """``sum |x * scale - ref|`` without a temporary (benchmark error traces)."""
    cdef Py_ssize_t i, n = x.shape[0]
    cdef double s = 0.0
    with nogil:
        for i in range(n):
            s += fabs(x[i] * scale - ref[i])
    return s
