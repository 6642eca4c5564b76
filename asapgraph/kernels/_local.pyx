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
* ASAP messages, whole: :func:`encode_segment` (a slot buffer into a message: float64,
  or float32 / 16-bit integers rounded toward zero with error feedback -- the remainder
  stays in the slot, so delivered + buffered equals the original bit for bit) and
  :func:`decode_message` (its scatter-add, returning the change of ``sum |acc|``);
  :func:`abs_sum`, :func:`wave_sums` (reductions without a temporary).

All loops run without the GIL over typed memoryviews.  The pushes are sequential
(in-place scatter with conflicts); on the 2-core target the ranks themselves are
the parallelism.

References: Zhang, Gao, Gao, Wang, "Maiter: An Asynchronous Graph Processing
Framework for Delta-based Accumulative Iterative Computation", IEEE TPDS 25(8),
2014; Andersen, Chung, Lang, "Local graph partitioning using PageRank vectors",
FOCS 2006 (residual push); Zhu, Chen, Zheng, Ma, "Gemini: A Computation-Centric
Distributed Graph Processing System", OSDI 2016 (partitioning, sparse exchange).
"""
from libc.stdint cimport (int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t,
                          uint64_t)
from asapgraph.kernels._typedefs cimport eid_t, vid_t
from libc.math cimport INFINITY, fabs, floor, log2, nextafterf

from libc.stdlib cimport realloc
from libc.string cimport memcpy, memset

cdef extern from *:
    int __builtin_clzll(unsigned long long) nogil
    unsigned long long __builtin_bswap64(unsigned long long) nogil

cdef extern from "asap_prefetch.h":
    void asap_prefetch_r(const void* p) noexcept nogil

# priority schedule: buckets of the key (mass per unit of work), PRIO_SUB per octave
# (_prio_bin's mantissa thresholds are those of 4)
cdef enum:
    PRIO_NB = 128
    PRIO_SUB = 4

# edge targets (vid_t): int32 when nloc + nslots fits, else int64


cdef inline int64_t _push_vertex(const int64_t[::1] indptr, const vid_t[::1] tgt,
                                 const double[::1] coef, const double[::1] vcoef, double[::1] x,
                                 double[::1] acc, const uint8_t[::1] dangling, Py_ssize_t u,
                                 double ru, double alpha, bint per_edge,
                                 double* dang, int64_t pf=0) noexcept nogil:
    """Move ``ru`` into ``x[u]`` and push ``alpha ru`` along ``u``'s out-edges (a dangling
    ``u``: into ``*dang``); returns the edges visited.  ``pf``: prefetch distance (edges)."""
    x[u] += ru
    if dangling[u]:
        dang[0] += alpha * ru
        return 0
    _push_row(indptr, tgt, coef, vcoef, acc, u, alpha * ru, per_edge, pf)
    return indptr[u + 1] - indptr[u]


cdef inline void _push_row(const int64_t[::1] indptr, const vid_t[::1] tgt,
                           const double[::1] coef, const double[::1] vcoef, double[::1] acc,
                           Py_ssize_t u, double a, bint per_edge, int64_t pf=0) noexcept nogil:
    """``acc[tgt[e]] += a * coef[e]`` over the out-edges of ``u`` (``vcoef[u]`` if not per
    edge).  ``pf > 0``: also prefetch ``acc[tgt[e + pf]]``, in rows whose edges all have
    an edge ``pf`` further on (the last rows of ``tgt`` are not prefetched)."""
    cdef int64_t e, e1 = indptr[u + 1]
    if pf > 0 and e1 + pf > tgt.shape[0]:
        pf = 0
    if per_edge:
        if pf > 0:
            for e in range(indptr[u], e1):
                asap_prefetch_r(&acc[tgt[e + pf]])
                acc[tgt[e]] += a * coef[e]
        else:
            for e in range(indptr[u], e1):
                acc[tgt[e]] += a * coef[e]
    else:
        a = a * vcoef[u]
        if pf > 0:
            for e in range(indptr[u], e1):
                asap_prefetch_r(&acc[tgt[e + pf]])
                acc[tgt[e]] += a
        else:
            for e in range(indptr[u], e1):
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
                Py_ssize_t block=16, double rho=0.0, int64_t prefetch=0,
                double[::1] mass=None, double mass_tol=0.0, bint plain_before=False,
                bint gauss_seidel=False, double omega=1.0):
    """One Jacobi sweep of signed delta push over the owned vertices (ASAP ``jacobi`` form).

    The residual of ``u`` is ``acc[u] + pend_p * bq_p[u] + pend_d * bq_d[u]`` (pool mass
    received for this rank, spread along its share of the teleport / dangling
    distributions, each normalised to sum 1).  Every non-zero residual is moved into
    ``x`` and ``alpha * r[u] * coef[e]`` is added to each target (local residual or
    outgoing slot).  Residuals are snapshotted into ``rs`` first, so mass reaching a local
    vertex in this sweep is pushed in the next one (Jacobi: in lockstep, power iteration);
    ``gauss_seidel``: a pushed vertex also pushes what reached it earlier in this sweep
    (its ``acc``, zeroed when its block was chosen), so local mass moves on a sweep sooner
    (Gauss-Seidel order within the rank; the same edges, the same fixed point: pushes
    only move mass).  On the uniform sweep (``rho`` off) a Gauss-Seidel sweep neither
    writes ``rs`` nor zeroes a chosen block in the snapshot: the residual stays in
    ``acc`` (with the pools added), later pushes of the sweep add to it there, and the
    push of ``u`` takes ``acc[u]`` whole (one write of ``n`` doubles fewer a sweep:
    rmat:20, 2 ranks, replayed, see benchmarks/REPORT.md, nineteenth session).  The
    residual pushed is the same sum in another order of its additions (it may differ in
    the last bits); ``rs`` is then neither read nor written.

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
    A share vector of length 1 (``bq_p`` or ``bq_d``) is the same share for every vertex
    (the uniform teleport: no array read per vertex), and ``pend_d == 0`` reads no
    ``bq_d``; the residuals are the same numbers either way.

    *Priority schedule* (``0 < rho < 1``; PrIter/Maiter-style, on blocks): of the blocks
    above ``theta``, only those with the largest *key* -- ``sum |r|`` per unit of work, the
    block's out-edges plus its vertices -- are pushed, the fewest that carry at least
    ``rho`` of their mass.  The threshold comes from a histogram of the keys in
    logarithmic buckets (``PRIO_SUB`` = 4 per octave below the largest key, from the bits
    of the ratio: :func:`_prio_bin`; no sort); the blocks of the top buckets are pushed,
    the others wait and combine.  The block of the largest key is always pushed, so a
    sweep makes progress.  ``rho <= 0`` or ``>= 1``: every block above ``theta`` (the
    uniform sweep).  Its cost beside the sweep's: one pass over the blocks (``bsum`` and
    each block's work, which the snapshot pass leaves in ``act``; 2 x 4 bytes a block,
    cache-resident) and one over the buckets, nothing per vertex -- a block that waits
    already holds its residuals (pools in) in ``acc``, and with ``gauss_seidel`` a chosen
    block is not zeroed at the choice: its push takes ``acc[u]``, the snapshot plus what
    reached ``u`` earlier in the sweep (the same sum as ``rs[u] + acc[u]``, added in
    another order).  Measured on replayed rmat:20 sweeps (2 ranks): the two passes that
    chose the blocks (a ``log2`` and ``indptr`` reads per block each, a write per vertex)
    cost 0.8 ms of a 9 ms priority sweep before.

    ``omega`` (over-relaxation, SOR; 1: off): a pushed vertex moves ``omega r`` (``r``
    as above) into ``x`` and along its edges and keeps ``(1 - omega) r`` in ``acc[u]``
    (Jacobi order: added to what reached it in the sweep); a push only moves mass, so
    the fixed point is the same for any ``omega``.  1 leaves every output bit for bit as
    before (:data:`asapgraph.engine.asap.SOR_OMEGA` says where it is used).

    ``prefetch > 0``: software prefetch of ``acc[tgt[e + prefetch]]`` while pushing edge
    ``e`` (a row whose last edge is closer than that to the end of ``tgt`` goes without;
    callers pad ``tgt``).  Only hints: every output is bit for bit the same.  It pays
    only once the hot targets are compact (a relabelled layout, see
    :func:`asapgraph.engine.asap_delta.push_layout`); on the given order it measured
    within noise on rmat:20 and cnr-2000 (replayed sweeps of real runs).

    ``mass`` (float64, 4 entries, or None): the signed sum of the whole ``acc`` (owned
    residuals and slot buffers) before the sweep and after it, each with a bound of its
    error: ``mass = [before, err_before, after, err_after]`` (what the ``jacobi`` form's
    drift correction compares, :meth:`asapgraph.engine.asap_delta.DeltaState.sweep`).
    Each sum is first taken plainly and blocked (the closing one in the pass that computes
    ``sum |acc[:n]|`` anyway), and its error is bounded a priori by about ``(528 +
    len(acc) / 2^18) u sum |acc|`` (``u = 2^-53``: the roundings a term goes through,
    :func:`_mass_sum`); only when that bound exceeds ``mass_tol`` is the sum recomputed
    compensated (:func:`exact_sum`, error bound 0 reported); ``mass_tol <= 0``: always
    compensated, as before this option existed.  ``plain_before`` (the caller's
    prediction that the plain sum before will do, e.g. from the last sweep's bound): that
    sum is taken inside the snapshot pass instead of a pass of its own, and plain
    whatever its bound (which is still reported).

    Returns
    -------
    (int, float, float, float, float)
        Edges visited, dangling pool ``alpha sum r[u]`` over dangling ``u``, ``sum r``
        pushed, ``sum |r|`` pushed, ``sum |acc[:n]|`` after the sweep.
    """
    cdef Py_ssize_t n = x.shape[0], u, i, b, lo, hi, k = 0, nb
    cdef Py_ssize_t N = acc.shape[0]
    cdef bint want_mass = mass is not None
    cdef double sg0 = 0.0, ab0 = 0.0, sg1 = 0.0, ab1 = 0.0, err0 = 0.0, err1 = 0.0
    cdef double theta0, a, ms, mab, mmid = 0.0, mgrp = 0.0
    cdef Py_ssize_t nmid = 0, ngrp = 0, mid_blocks = 1024 // block if 0 < block < 1024 else 1
    # the signed sum before the sweep fused into the snapshot, plain whatever its bound
    cdef bint fuse = want_mass and mass_tol > 0.0 and plain_before
    # without the priority schedule the choice is made in the snapshot: a block whose
    # sum exceeds theta is pushed whatever the cap (min(theta, max mean / 2) <= theta);
    # only when the cap lowers theta does a loop over the blocks (not the vertices) add
    # the blocks between, so the sweep makes no separate pass over the vertices to choose
    cdef bint early
    # Gauss-Seidel on the uniform sweep: no snapshot array (see the docstring)
    cdef bint nors
    cdef int64_t nedge = 0
    cdef double ru, s, dp = 0.0, pushed = 0.0, pushed_abs = 0.0, left = 0.0, rmax = 0.0
    cdef bint per_edge = coef is not None
    cdef bint pools = pend_p != 0.0 or pend_d != 0.0
    cdef bint prio = 0.0 < rho < 1.0
    early = not prio
    nors = early and gauss_seidel
    cdef double kmax = 0.0, key, htot = 0.0, cum
    cdef double hist[PRIO_NB]
    cdef int kb = PRIO_NB - 1, bin_
    cdef int64_t wk
    cdef bint bins = False
    if block < 1:
        raise ValueError("block must be >= 1")
    nb = (n + block - 1) // block
    if act.shape[0] < nb or bsum.shape[0] < nb:
        raise ValueError("act and bsum must hold one entry per block")
    if want_mass and mass.shape[0] < 4:
        raise ValueError("mass must hold 4 entries")
    if N < n:
        raise ValueError("acc must hold the owned residuals")
    if pools and n and (bq_p.shape[0] not in (1, n) or bq_d.shape[0] not in (1, n)):
        raise ValueError("bq_p and bq_d must hold one entry per vertex, or one for all")
    cdef bint up = bq_p.shape[0] == 1, ud = bq_d.shape[0] == 1, used = pend_d != 0.0
    cdef double cp = pend_p * bq_p[0] if (pools and up) else 0.0
    cdef double cd = pend_d * bq_d[0] if (pools and ud) else 0.0
    with nogil:
        if want_mass and not fuse:  # the signed sum before the sweep (before the
            # snapshot changes acc)
            err0 = _mass_sum(&acc[0] if N else NULL, n, N, mass_tol, &sg0, &ab0)
        for b in range(nb):  # snapshot; block sums; the largest block mean
            lo = b * block
            hi = lo + block if lo + block < n else n
            s = 0.0
            ms = 0.0
            mab = 0.0
            # (the same sums as acc[u] + pend_p bq_p[u] + pend_d bq_d[u]; a block that
            # waits keeps its residuals, pools in, in acc)
            s = _snap_block(&acc[lo], NULL if nors else &rs[lo], hi - lo, pools,
                            cp if up else pend_p, NULL if up else &bq_p[lo], used,
                            cd if ud else pend_d, NULL if (ud or not used) else &bq_d[lo],
                            fuse, &ms, &mab)
            bsum[b] = s
            if fuse:  # blocked: block sums in groups of mid_blocks, groups of 256 of those
                ab0 += mab
                mmid += ms
                nmid += 1
                if nmid == mid_blocks:
                    mgrp += mmid
                    mmid = 0.0
                    nmid = 0
                    ngrp += 1
                    if ngrp == 256:
                        sg0 += mgrp
                        mgrp = 0.0
                        ngrp = 0
            if early and s > theta * (hi - lo):  # pushed whatever the cap (see above)
                act[k] = <int32_t>b
                k += 1
                if not nors:
                    for u in range(lo, hi):
                        acc[u] = 0.0
            if prio:  # the block's work kept in act[b] (the choice reads no indptr)
                wk = indptr[hi] - indptr[lo] + hi - lo
                act[b] = <int32_t>(wk if wk < 2147483647 else 2147483647)
                key = s / <double>act[b]
                kmax = key if key > kmax else kmax
            s = s / (hi - lo)
            rmax = s if s > rmax else rmax
        if fuse:  # the slots, then the bound (the snapshot's tree is no deeper than
            # _mass_sum's for blocks up to 240 vertices; deeper blocks raise it)
            sg0 = sg0 + (mgrp + mmid)
            if N > n:
                _lanes2(&acc[n], N - n, &sg1, &ab1)
            sg0 = sg0 + sg1
            err0 = ((528.0 if block + mid_blocks + 272 < 528 else
                     <double>(block + mid_blocks + 272))
                    + <double>N / 262144.0) * _U * 1.01 * (ab0 + ab1)
        theta0 = theta
        if theta > 0.5 * rmax:
            theta = 0.5 * rmax
        bins = prio and kmax > 0.0
        if bins:  # the key buckets of the blocks above theta, their mass; each block's
            # bucket replaces its work in act[b] (PRIO_NB: below theta, never pushed)
            for bin_ in range(PRIO_NB):
                hist[bin_] = 0.0
            for b in range(nb):
                lo = b * block
                hi = lo + block if lo + block < n else n
                if bsum[b] > theta * (hi - lo):
                    bin_ = _prio_bin(bsum[b] / <double>act[b], kmax)
                    act[b] = bin_
                    hist[bin_] += bsum[b]
                    htot += bsum[b]
                else:
                    act[b] = PRIO_NB
            cum = 0.0
            for bin_ in range(PRIO_NB):  # the fewest top buckets holding rho of the mass
                cum += hist[bin_]
                if cum >= rho * htot:
                    kb = bin_
                    break
        if early and theta < theta0:  # the cap: the blocks above it, in block order
            k = 0
            for b in range(nb):
                lo = b * block
                hi = lo + block if lo + block < n else n
                if bsum[b] > theta * (hi - lo):
                    act[k] = <int32_t>b
                    k += 1
                    if not nors and bsum[b] <= theta0 * (hi - lo):  # (not zeroed in
                        # the snapshot)
                        for u in range(lo, hi):
                            acc[u] = 0.0
        for b in range(nb if not early else 0):  # choose the blocks (k <= b: act[b]
            # is read before act[k] is written); the others keep their residuals in acc
            lo = b * block
            hi = lo + block if lo + block < n else n
            if (act[b] <= kb) if bins else (bsum[b] > theta * (hi - lo)):
                act[k] = <int32_t>b
                k += 1
                if not gauss_seidel:  # (Gauss-Seidel: the push takes acc[u] itself)
                    for u in range(lo, hi):
                        acc[u] = 0.0
        for i in range(k):
            lo = act[i] * block
            hi = lo + block if lo + block < n else n
            for u in range(lo, hi):
                if gauss_seidel:  # acc[u]: the residual (pools in) and what reached u
                    # earlier in this sweep -- a chosen block is zeroed neither in the
                    # snapshot (``nors``) nor at the choice (priority)
                    ru = acc[u]
                    acc[u] = 0.0
                else:
                    ru = rs[u]
                if ru == 0.0:
                    continue
                if omega != 1.0:  # over-relaxation: push omega r, leave (1 - omega) r
                    if gauss_seidel:
                        acc[u] = (1.0 - omega) * ru
                    else:
                        acc[u] += (1.0 - omega) * ru
                    ru = omega * ru
                pushed += ru
                pushed_abs += fabs(ru)
                nedge += _push_vertex(indptr, tgt, coef, vcoef, x, acc, dangling, u, ru,
                                      alpha, per_edge, &dp, prefetch)
        if want_mass:  # the closing pass: sum |acc[:n]| and the signed sum after
            err1 = _mass_sum(&acc[0] if N else NULL, n, N, mass_tol, &sg1, &left)
        elif n:
            left = _lanes(&acc[0], n, True)  # (four partial sums: one is latency-bound)
    if want_mass:
        mass[0] = sg0
        mass[1] = err0
        mass[2] = sg1
        mass[3] = err1
    return nedge, dp, pushed, pushed_abs, left


cdef inline double _snap_block(double* a, double* r, Py_ssize_t m, bint add, double pp,
                               const double* bp, bint addd, double pd, const double* bd,
                               bint fuse, double* ms, double* mab) noexcept nogil:
    """The snapshot of one block of :func:`jacobi_push`: ``a[i] = (a[i] + pp bp[i]) + pd
    bd[i]`` (``add``, ``addd``: each term only when set; a NULL share array: the factor
    alone, the share already in it), copied to ``r[i]`` unless ``r`` is NULL; returns
    ``sum |a[i]|`` (after) and, with ``fuse``, adds the signed and absolute sums of the
    values before to ``ms`` and ``mab``.  Each sum in four lanes: one chain of additions
    is bound by the adder's latency (replayed: 135 -> 110 us of fixed cost a sweep of
    85,000 vertices).  The ``a[i]`` and ``r[i]`` are the same numbers as a one-lane
    loop's; the sums may differ in the last bits (the skip decisions compare them with
    ``theta``; the fused mass sums' error bound counts at most ``block`` roundings a
    term, fewer here)."""
    cdef Py_ssize_t i = 0
    cdef double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0
    cdef double m0 = 0.0, m1 = 0.0, m2 = 0.0, m3 = 0.0
    cdef double b0 = 0.0, b1 = 0.0, b2 = 0.0, b3 = 0.0
    cdef double v0, v1, v2, v3, w0, w1, w2, w3
    while i + 3 < m:
        v0 = a[i]
        v1 = a[i + 1]
        v2 = a[i + 2]
        v3 = a[i + 3]
        if fuse:
            m0 += v0
            m1 += v1
            m2 += v2
            m3 += v3
            b0 += fabs(v0)
            b1 += fabs(v1)
            b2 += fabs(v2)
            b3 += fabs(v3)
        if add:
            if bp == NULL:
                w0 = v0 + pp
                w1 = v1 + pp
                w2 = v2 + pp
                w3 = v3 + pp
            else:
                w0 = v0 + pp * bp[i]
                w1 = v1 + pp * bp[i + 1]
                w2 = v2 + pp * bp[i + 2]
                w3 = v3 + pp * bp[i + 3]
            if addd:
                if bd == NULL:
                    w0 = w0 + pd
                    w1 = w1 + pd
                    w2 = w2 + pd
                    w3 = w3 + pd
                else:
                    w0 = w0 + pd * bd[i]
                    w1 = w1 + pd * bd[i + 1]
                    w2 = w2 + pd * bd[i + 2]
                    w3 = w3 + pd * bd[i + 3]
            a[i] = w0
            a[i + 1] = w1
            a[i + 2] = w2
            a[i + 3] = w3
        else:
            w0 = v0
            w1 = v1
            w2 = v2
            w3 = v3
        if r != NULL:
            r[i] = w0
            r[i + 1] = w1
            r[i + 2] = w2
            r[i + 3] = w3
        s0 += fabs(w0)
        s1 += fabs(w1)
        s2 += fabs(w2)
        s3 += fabs(w3)
        i += 4
    while i < m:
        v0 = a[i]
        if fuse:
            m0 += v0
            b0 += fabs(v0)
        w0 = v0
        if add:
            w0 = v0 + (pp if bp == NULL else pp * bp[i])
            if addd:
                w0 = w0 + (pd if bd == NULL else pd * bd[i])
            a[i] = w0
        if r != NULL:
            r[i] = w0
        s0 += fabs(w0)
        i += 1
    if fuse:
        ms[0] += (m0 + m1) + (m2 + m3)
        mab[0] += (b0 + b1) + (b2 + b3)
    return (s0 + s1) + (s2 + s3)


#: unit roundoff of float64
cdef double _U = 1.1102230246251565e-16


cdef double _mass_sum(const double* a, Py_ssize_t n, Py_ssize_t N, double tol, double* sg,
                      double* ab_owned) noexcept nogil:
    """``sum a[:N]`` into ``sg`` and ``sum |a[:n]|`` into ``ab_owned``; returns the bound of
    ``sg``'s error: plain blocked sums (:func:`_lanes2`) of ``a[:n]`` and ``a[n:N]`` when
    their a-priori bound is at most ``tol`` (``tol > 0``), else compensated (:func:`_exact`,
    bound 0).  The bound: every term goes through at most ``h = 520 + N / 2^18 + 8``
    roundings (:func:`_lanes2`'s levels, then the parts' sum), so the error is at most
    ``h u / (1 - h u) sum |a|``; the factor 1.01 covers that denominator and the rounding
    of the computed ``sum |a|`` (both below 1e-4 for any ``N < 10^12``)."""
    cdef double s0 = 0.0, a0 = 0.0, s1 = 0.0, a1 = 0.0, err
    if n:
        _lanes2(a, n, &s0, &a0)
    ab_owned[0] = a0
    if tol > 0.0:
        if N > n:
            _lanes2(a + n, N - n, &s1, &a1)
        err = (528.0 + <double>N / 262144.0) * _U * 1.01 * (a0 + a1)
        if err <= tol:
            sg[0] = s0 + s1
            return err
    sg[0] = _exact(a, N) if N else 0.0
    return 0.0


cdef inline void _lanes2(const double* a, Py_ssize_t n, double* sg, double* ab) noexcept nogil:
    """``sum a[:n]`` into ``sg`` and ``sum |a[:n]|`` into ``ab`` in one pass.  ``ab`` in
    four lanes associated as :func:`_lanes` (bit for bit ``_lanes(a, n, True)``); ``sg``
    blocked, so that a term sees few roundings: four lanes over chunks of 1024 values
    (at most 259 additions per lane, 2 to combine them), the chunks' sums added in groups
    of 256 (256), the groups' sums in order (``n / 2^18 + 1``), then the two (1)."""
    cdef Py_ssize_t i = 0, end, nch = 0
    cdef double s0, s1, s2, s3, mid = 0.0, outer = 0.0
    cdef double t0 = 0.0, t1 = 0.0, t2 = 0.0, t3 = 0.0
    while i < n:
        end = i + 1024 if i + 1024 < n else n
        s0 = 0.0
        s1 = 0.0
        s2 = 0.0
        s3 = 0.0
        while i + 3 < end:
            s0 += a[i]
            s1 += a[i + 1]
            s2 += a[i + 2]
            s3 += a[i + 3]
            t0 += fabs(a[i])
            t1 += fabs(a[i + 1])
            t2 += fabs(a[i + 2])
            t3 += fabs(a[i + 3])
            i += 4
        while i < end:  # (only in the last chunk: 1024 is a multiple of 4)
            s0 += a[i]
            t0 += fabs(a[i])
            i += 1
        mid += (s0 + s1) + (s2 + s3)
        nch += 1
        if nch == 256:
            outer += mid
            mid = 0.0
            nch = 0
    sg[0] = outer + mid
    ab[0] = (t0 + t1) + (t2 + t3)


cdef inline int _prio_bin(double key, double kmax) noexcept nogil:
    """Bucket of ``key``: 0 for the largest key ``kmax``, then ``PRIO_SUB`` (4) buckets per
    octave below it (``floor(4 log2(kmax / key))``); the last bucket holds everything
    smaller.  From the bits of ``kmax / key`` (its exponent, and its mantissa against
    ``2^(1/4)``, ``2^(1/2)``, ``2^(3/4)``) instead of ``log2``: no libm call per block."""
    cdef double r
    cdef uint64_t bits
    cdef int d
    if key <= 0.0:
        return PRIO_NB - 1
    r = kmax / key
    if not r >= 1.0:  # (key rounds above kmax; NaN-safe)
        return 0
    memcpy(&bits, &r, 8)
    d = <int>((bits >> 52) & 0x7ff) - 1023  # r >= 1: normal (or inf: 1024)
    if d >= (PRIO_NB - 1) // 4:
        return PRIO_NB - 1
    bits = (bits & 0x000fffffffffffffULL) | 0x3ff0000000000000ULL
    memcpy(&r, &bits, 8)  # the mantissa, in [1, 2)
    d = 4 * d + (r >= 1.189207115002721) + (r >= 1.4142135623730951) + (r >= 1.681792830507429)
    return d if d < PRIO_NB - 1 else PRIO_NB - 1


def scatter_add(double[::1] acc, const int64_t[::1] idx, const double[::1] vals):
    """``acc[idx[s]] += vals[s]`` for every slot ``s``; returns ``sum(vals)``."""
    cdef Py_ssize_t m = idx.shape[0], s
    cdef double tot = 0.0
    with nogil:
        for s in range(m):
            acc[idx[s]] += vals[s]
            tot += vals[s]
    return tot


cdef inline double _lanes(const double* a, Py_ssize_t n, bint absolute) noexcept nogil:
    """``sum a[:n]`` (``absolute``: of ``|a|``) in four independent partial sums: a single
    one is bound by the latency of the addition (~0.9 ns per value against ~0.25)."""
    cdef Py_ssize_t i = 0
    cdef double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0
    if absolute:
        while i + 3 < n:
            s0 += fabs(a[i])
            s1 += fabs(a[i + 1])
            s2 += fabs(a[i + 2])
            s3 += fabs(a[i + 3])
            i += 4
    else:
        while i + 3 < n:
            s0 += a[i]
            s1 += a[i + 1]
            s2 += a[i + 2]
            s3 += a[i + 3]
            i += 4
    while i < n:
        s0 += fabs(a[i]) if absolute else a[i]
        i += 1
    return (s0 + s1) + (s2 + s3)


def abs_sum(const double[::1] a, Py_ssize_t lo, Py_ssize_t hi):
    """``sum |a[lo:hi]|`` without a temporary (:func:`_lanes`)."""
    cdef double s = 0.0
    if lo < 0 or hi > a.shape[0]:
        raise ValueError("abs_sum: range out of bounds")
    if hi > lo:
        with nogil:
            s = _lanes(&a[lo], hi - lo, True)
    return s


cdef inline void _two_sum(double* s, double* c, double v) noexcept nogil:
    """``s + v`` into ``s``, its exact rounding error added to ``c`` (Knuth's 2Sum: no
    branch, unlike Neumaier's test of which operand is larger)."""
    cdef double t = s[0] + v
    cdef double bp = t - s[0]
    c[0] += (s[0] - (t - bp)) + (v - bp)
    s[0] = t


def exact_sum(const double[::1] a, Py_ssize_t lo, Py_ssize_t hi):
    """``sum a[lo:hi]`` compensated (2Sum in four independent lanes, then the lanes'
    sums and errors added compensated): the error is about one rounding of the result
    plus ``n eps^2 sum |a|``, not ``n eps sum |a|`` (the ``jacobi`` form's drift
    correction measures the signed mass a sweep creates by rounding with it)."""
    cdef double r = 0.0
    if lo < 0 or hi > a.shape[0]:
        raise ValueError("exact_sum: range out of bounds")
    if hi > lo:
        with nogil:
            r = _exact(&a[lo], hi - lo)
    return r


cdef double _exact(const double* a, Py_ssize_t n) noexcept nogil:
    """:func:`exact_sum` of ``a[:n]``."""
    cdef Py_ssize_t i = 0, end = (n // 4) * 4
    cdef double s[4]
    cdef double c[4]
    cdef double tot = 0.0, err = 0.0
    cdef int j
    for j in range(4):
        s[j] = 0.0
        c[j] = 0.0
    while i < end:
        _two_sum(&s[0], &c[0], a[i])
        _two_sum(&s[1], &c[1], a[i + 1])
        _two_sum(&s[2], &c[2], a[i + 2])
        _two_sum(&s[3], &c[3], a[i + 3])
        i += 4
    while i < n:
        _two_sum(&s[0], &c[0], a[i])
        i += 1
    for j in range(4):
        _two_sum(&tot, &err, s[j])
        err += c[j]
    return tot + err


def l1_diff_scaled(const double[::1] x, double scale, const double[::1] ref):
    """``sum |x * scale - ref|`` without a temporary (benchmark error traces)."""
    cdef Py_ssize_t i, n = x.shape[0]
    cdef double s = 0.0
    with nogil:
        for i in range(n):
            s += fabs(x[i] * scale - ref[i])
    return s


# ---------------------------------------------------------------- whole messages
# The ASAP round's message work in one call each (issue 14 item 3): the segment's
# statistics, the form chosen and the payload written straight into the message buffer
# (no scratch arrays, no numpy views per field); the receiver's scatter-add returns the
# change of ``sum |acc|`` so the rank's residual sum is updated, not recounted.  Forms
# and layouts: asapgraph.engine.exchange (module docstring); ``h`` is the header's size
# in bytes and the payload form is the header field the caller names (``exchange.FORM``).

cdef enum:
    Q_EXACT = 0
    Q_F32 = 1
    Q_16 = 2      # 16-bit, the smallest of dense, sparse and Exp-Golomb coded (forms 4, 5, 8)
    Q_16RAW = 3   # 16-bit, dense or sparse only (forms 4, 5: the A/B reference)
    Q_16B = 4     # 16-bit, the smallest of dense, sparse and byte-coded (forms 4, 5, 9)
    EG_MAXK = 24  # largest Exp-Golomb order of the coded form
    CODED_PREFIX = 16  # coded form: step (float64), k (uint32), two orders (uint8), 2 pad
    BYTE_PREFIX = 12   # byte-coded form: step (float64), m (uint32)
    BYTE_ESC = 0x80    # byte-coded form: an int16 (little-endian) follows
    QBLOCK = 256       # _quantise's blocks (a multiple of 4)


# ---------------------------------------------------------------- Exp-Golomb bit coding
# The coded 16-bit form (8) writes, for each of the k slots of at least one step in slot
# order, the gap to the previous one (slots skipped) and the value, both as Exp-Golomb
# codes of order ``kg`` / ``kv`` (Teuhola 1978): n >= 0 is written as ``x = n + 2^k`` in
# binary, preceded by ``bitlen(x) - k - 1`` zeros.  Values are the 16-bit integers of the
# dense/sparse forms, zigzagged (nonzero q -> (2q ^ (q >> 63)) - 1), so the coding is
# lossless: the receiver adds exactly what forms 4/5 would have delivered.  MSB first.

cdef inline int _bitlen(uint64_t x) noexcept nogil:
    return 0 if x == 0 else 64 - __builtin_clzll(x)


cdef inline uint64_t _zigzag(long q) noexcept nogil:
    """Nonzero ``q`` -> ``0, 1, ...`` (-1, 1, -2, 2, ...), without a branch."""
    return <uint64_t>(((<int64_t>q) << 1) ^ ((<int64_t>q) >> 63)) - 1


cdef inline long _unzigzag(uint64_t z) noexcept nogil:
    z += 1
    return <long>(<int64_t>(z >> 1) ^ -(<int64_t>(z & 1)))


cdef struct _BitW:
    uint8_t* out
    Py_ssize_t pos
    uint64_t acc
    int n


cdef inline void _bw_put(_BitW* w, uint64_t bits, int length) noexcept nogil:
    """Append the low ``length`` (<= 32) bits of ``bits``."""
    w.acc = (w.acc << length) | (bits & ((<uint64_t>1 << length) - 1))
    w.n += length
    while w.n >= 8:
        w.n -= 8
        w.out[w.pos] = <uint8_t>((w.acc >> w.n) & 0xFF)
        w.pos += 1


cdef inline void _bw_eg(_BitW* w, uint64_t n, int k) noexcept nogil:
    cdef uint64_t x = n + (<uint64_t>1 << k)
    cdef int L = _bitlen(x), z = L - k - 1
    while z > 32:
        _bw_put(w, 0, 32)
        z -= 32
    if z > 0:
        _bw_put(w, 0, z)
    if L > 32:
        _bw_put(w, x >> 32, L - 32)
        L = 32
    _bw_put(w, x, L)


cdef inline void _bw_code(_BitW* w, uint64_t n, int k) noexcept nogil:
    """Append the Exp-Golomb code of order ``k`` of ``n`` (one put when it is at most
    56 bits long: the code is ``n + 2^k`` written in its own length)."""
    cdef uint64_t x = n + (<uint64_t>1 << k)
    cdef int length = 2 * _bitlen(x) - k - 1
    if length > 56:
        _bw_eg(w, n, k)
        return
    w.acc = (w.acc << length) | x
    w.n += length
    # the whole bytes out in one unaligned store (the buffer has 8 bytes of slack: the
    # coded form is used only when much smaller than the dense ones)
    _store_be64(w.out + w.pos, (w.acc << (63 - w.n)) << 1)
    w.pos += w.n >> 3
    w.n &= 7


cdef inline void _bw_pair(_BitW* w, uint64_t n1, int k1, uint64_t n2, int k2) noexcept nogil:
    """Append the codes of ``n1`` (order ``k1``) and ``n2`` (order ``k2``): one put and
    one store when together at most 56 bits long."""
    cdef uint64_t x1 = n1 + (<uint64_t>1 << k1), x2 = n2 + (<uint64_t>1 << k2)
    cdef int l1 = 127 - 2 * __builtin_clzll(x1) - k1, l2 = 127 - 2 * __builtin_clzll(x2) - k2
    if l1 + l2 > 56:
        _bw_code(w, n1, k1)
        _bw_code(w, n2, k2)
        return
    w.acc = (((w.acc << l1) | x1) << l2) | x2
    w.n += l1 + l2
    _store_be64(w.out + w.pos, (w.acc << (63 - w.n)) << 1)
    w.pos += w.n >> 3
    w.n &= 7


cdef inline void _bw_flush(_BitW* w) noexcept nogil:
    if w.n > 0:
        w.out[w.pos] = <uint8_t>((w.acc << (8 - w.n)) & 0xFF)
        w.pos += 1
        w.n = 0


cdef inline void _store_be64(uint8_t* p, uint64_t v) noexcept nogil:
    v = __builtin_bswap64(v)
    memcpy(p, &v, 8)


cdef inline uint64_t _load_be64(const uint8_t* p) noexcept nogil:
    cdef uint64_t v
    memcpy(&v, p, 8)
    return __builtin_bswap64(v)


cdef inline int _bit(const uint8_t* inp, int64_t b) noexcept nogil:
    return (inp[b >> 3] >> (7 - (b & 7))) & 1


cdef inline int _br_code(const uint8_t* inp, int64_t nbits, int64_t* bp, int k,
                         uint64_t* out) noexcept nogil:
    """Read the Exp-Golomb code of order ``k`` at bit ``bp[0]`` of ``inp`` (``nbits``
    bits) into ``out`` and advance ``bp``; -1 on a corrupt stream (past the end, or a
    value of more than 56 bits)."""
    cdef int64_t b = bp[0]
    cdef uint64_t win, x = 0
    cdef int z = 0, L, i
    if b + 64 <= nbits:  # one load: the code when it has at most 57 bits
        win = _load_be64(inp + (b >> 3)) << (b & 7)
        if win != 0:
            z = __builtin_clzll(win)
            L = z + k + 1
            if z + L <= 57:
                bp[0] = b + z + L
                out[0] = ((win << z) >> (64 - L)) - (<uint64_t>1 << k)
                return 0
        z = 0
    while True:  # bit by bit
        if b >= nbits or z > 56:
            return -1
        if _bit(inp, b):
            break
        z += 1
        b += 1
    L = z + k + 1
    if L > 56 or b + L > nbits:
        return -1
    for i in range(L):
        x = (x << 1) | <uint64_t>_bit(inp, b + i)
    bp[0] = b + L
    out[0] = x - (<uint64_t>1 << k)
    return 0


cdef inline int _eg_order(double mean) noexcept nogil:
    """The Exp-Golomb order for values of this mean: ``floor(log2(mean / 2 + 1))``
    (within 2 % of the best order's size on power-law, geometric and uniform values)."""
    cdef int k = <int>floor(log2(mean * 0.5 + 1.0))
    return 0 if k < 0 else (EG_MAXK if k > EG_MAXK else k)


cdef inline long _q16(double v, double step) noexcept nogil:
    """``trunc(v / step)`` clamped to +-32767 and corrected so that ``|q step| <= |v|``."""
    cdef long q = <long>(v / step)
    if q > 32767:
        q = 32767
    elif q < -32767:
        q = -32767
    while fabs(<double>q * step) > fabs(v):
        q = q - 1 if q > 0 else q + 1
    return q


# _q16 by a multiplication (twenty-fifth session: a division per value, one after the
# other, in the quantisation pass; with the passes below the byte-coded form's encode
# went from 9.0 to 3.1 ns a value, tests/test_codec25.py).  With r = 1 / step rounded,
# t = v r rounded is within 2^-37 of x = v / step (two roundings of 2^-53 relative,
# |x| <= 32767.x), and the division's own result within 2^-38.  Where t +- Q16_EPS
# (Q16_EPS = 2^-30, each rounded within 2^-39) truncate to the same n, |t| < 32767: t
# is at least Q16_EPS - 2^-39 inside (n, n + 1) (or (-1, 1) for n = 0), so the
# division's quotient truncates to n too, below the clamp, and |n step|, rounded, is
# still below |v| by more than (Q16_EPS - 2^-36) step >> 32767 * 2^-53 step: _q16's
# correction does not apply.  Anything else (within Q16_EPS of a nonzero integer: exact
# multiples of the step, the largest value; or t not finite: a denormal step whose
# reciprocal overflows) takes _q16 itself, so every double gets _q16's q
# (tests/test_codec25.py).  Trunc, the rounding and the tests are symmetric in the sign.
cdef extern from *:
    """#define ASAP_Q16_EPS (1.0 / 1073741824.0)"""
    const double Q16_EPS "ASAP_Q16_EPS"


cdef inline long _q16r(double v, double step, double r) noexcept nogil:
    """:func:`_q16` of ``v`` given ``r = 1 / step``, by a multiplication where that is
    provably the same (above)."""
    cdef double t = v * r
    cdef int below = fabs(t) < 32767.0  # (false for NaN)
    cdef double c = t if below else 0.0
    cdef long lo = <long>(c - Q16_EPS), hi = <long>(c + Q16_EPS)
    # one branch, taken rarely, and none on the value's sign or size (short-circuit
    # tests branched on whether the value was below the step: mispredicted, slower
    # than the division)
    if not (below & (lo == hi)):
        return _q16(v, step)
    return lo


cdef inline Py_ssize_t _q16_block(const double* a, Py_ssize_t n, double step, double r,
                                  int16_t* qs, double* rem) noexcept nogil:
    """``qs[s]`` by the reciprocal (the route of :func:`_q16r`, with its check as a count
    instead of a branch) and ``rem[s] = a[s] - qs[s] step`` for ``s < n``; returns the
    count of values whose check failed (their ``qs``/``rem`` to be redone by
    :func:`_q16r`).  No branch and no clamp: a loop the compiler vectorises (SSE2; the
    clamp's comparisons, under trapping math, kept it scalar).  ``r`` must be finite:
    then ``|t| < 65535`` (``|v| <= big``, and ``step >= big / 32767 / 2`` even where it
    is a denormal, rounded), so the conversions are in range; the clamp's cases
    (``|lo| > 32766``) fail the check, and so does NaN (not a residual; its conversion
    gives what the hardware gives)."""
    cdef Py_ssize_t s, nbad = 0
    cdef double t
    cdef int lo, hi
    for s in range(n):
        t = a[s] * r
        lo = <int>(t - Q16_EPS)
        hi = <int>(t + Q16_EPS)
        qs[s] = <int16_t>lo
        rem[s] = a[s] - <double>lo * step
        nbad += (lo != hi) | (<unsigned int>(lo + 32766) > 65532) | (t != t)
    return nbad


cdef inline void _quantise(const double* a, Py_ssize_t m, double step, int16_t* qs,
                           double* rem, Py_ssize_t* k, Py_ssize_t* nesc,
                           double* left) noexcept nogil:
    """The 16-bit values of ``a[:m]`` into ``qs``, the remainders ``a[s] - qs[s] step``
    into ``rem``; ``k`` the nonzero values, ``nesc`` those beyond +-127, ``left``
    ``sum |rem|`` (what would stay; four lanes over whole blocks of four, the tail in
    lane 0: the order of the passes this replaced, so the ``budget`` test sees the same
    sum).  Vectorised passes (twenty-fifth session: against one scalar pass of _q16r
    with the sums and counts, the byte-coded form's encode 3.6 -> 3.1 ns a value):
    blocks of QBLOCK by :func:`_q16_block`, a block whose check failed anywhere (the
    largest value's; rarely another) redone by _q16r, then the sums and the counts.
    (Writing the byte-coded form's codes in this pass as well, before the form is
    chosen, measured 3.63 -> 3.48 ns where that form wins but 2.57 -> 3.49 where the
    dense one does: not kept.)"""
    cdef double r = 1.0 / step
    cdef double l0 = 0.0, l1 = 0.0, l2 = 0.0, l3 = 0.0
    cdef Py_ssize_t s, b = 0, e, nz = 0, ne = 0
    cdef long q
    cdef bint fast = r < INFINITY  # (a denormal step's reciprocal may overflow)
    while b < m:
        e = b + QBLOCK if b + QBLOCK < m else m
        if not fast or _q16_block(a + b, e - b, step, r, qs + b, rem + b):
            for s in range(b, e):
                q = _q16r(a[s], step, r)
                qs[s] = <int16_t>q
                rem[s] = a[s] - <double>q * step
        b = e
    s = 0
    while s + 3 < m:  # (vectorised: the lanes pairwise)
        l0 += fabs(rem[s])
        l1 += fabs(rem[s + 1])
        l2 += fabs(rem[s + 2])
        l3 += fabs(rem[s + 3])
        s += 4
    while s < m:
        l0 += fabs(rem[s])
        s += 1
    left[0] = (l0 + l1) + (l2 + l3)
    for s in range(m):  # (vectorised)
        nz += qs[s] != 0
        ne += <uint16_t>(qs[s] + 127) > 254  # (|q| > 127 as one unsigned comparison)
    k[0] = nz
    nesc[0] = ne


cdef inline float _f32(double v) noexcept nogil:
    """``v`` rounded toward zero to float32."""
    cdef float f = <float>v
    if fabs(<double>f) > fabs(v):
        f = nextafterf(f, 0.0)
    return f


cdef inline void _seg_stats(const double* a, Py_ssize_t m, double* mass, Py_ssize_t* nnz,
                            double* big) noexcept nogil:
    """``sum |a|``, the count of nonzero values and ``max |a|`` of ``a[:m]`` in one pass,
    four lanes and no branch per value (one chain of additions is bound by the adder's
    latency, a branch on zero by mispredictions where a segment is part zero)."""
    cdef Py_ssize_t s = 0, z = 0
    cdef double m0 = 0.0, m1 = 0.0, m2 = 0.0, m3 = 0.0
    cdef double b0 = 0.0, b1 = 0.0, b2 = 0.0, b3 = 0.0, v0, v1, v2, v3
    while s + 3 < m:
        v0 = fabs(a[s])
        v1 = fabs(a[s + 1])
        v2 = fabs(a[s + 2])
        v3 = fabs(a[s + 3])
        m0 += v0
        m1 += v1
        m2 += v2
        m3 += v3
        b0 = v0 if v0 > b0 else b0
        b1 = v1 if v1 > b1 else b1
        b2 = v2 if v2 > b2 else b2
        b3 = v3 if v3 > b3 else b3
        z += (v0 == 0.0) + (v1 == 0.0) + (v2 == 0.0) + (v3 == 0.0)
        s += 4
    while s < m:
        v0 = fabs(a[s])
        m0 += v0
        b0 = v0 if v0 > b0 else b0
        z += v0 == 0.0
        s += 1
    mass[0] = (m0 + m1) + (m2 + m3)
    b0 = b0 if b0 > b1 else b1
    b2 = b2 if b2 > b3 else b3
    big[0] = b0 if b0 > b2 else b2
    nnz[0] = m - z


cdef inline uint8_t* _write_bytes(double* a, Py_ssize_t m, const double* rem,
                                  const int16_t* qs, uint8_t* pb) noexcept nogil:
    """The byte-coded form's slot codes of ``qs[:m]`` from ``pb`` on, and the remainders
    ``rem`` into the slots; returns the end of the codes.  Every slot's three bytes are
    stored (ESC, low, high; or the int8, then two bytes the next code overwrites: the
    form's size is at most 12 + 3 m) and the pointer advances by 1 or 3: no branch on
    the escape, which was mispredicted where escapes are common (42 % of the slots of
    the replay's skewed segments).  (One 4-byte store instead of three measured no
    faster: 3.72 against 3.63 ns a value.)"""
    cdef Py_ssize_t s
    cdef unsigned int q, e
    for s in range(m):
        q = <unsigned int>qs[s]
        a[s] = rem[s]
        e = -<unsigned int>(q + 127 > 254)  # all ones where |q| > 127 (with unsigned
        # masks: a conditional expression here was compiled back into a branch)
        pb[0] = <uint8_t>((q & ~e) | (BYTE_ESC & e))
        pb[1] = <uint8_t>q
        pb[2] = <uint8_t>(q >> 8)
        pb += 1 + (e & 2)
    return pb


def encode_segment(double[::1] acc, Py_ssize_t lo, Py_ssize_t hi, uint8_t[::1] buf,
                   Py_ssize_t h, int quant, double budget=INFINITY):
    """Move the slot buffer ``acc[lo:hi]`` into the payload of message ``buf`` (after
    ``h`` header bytes); returns ``(bytes, form, mass, left)``, ``mass = sum |acc[lo:hi]|``
    before the move, ``left`` the ``sum |.|`` of what stays in the slots after it.

    ``quant``: 0 float64 (forms 0/1; the segment is left zero), 1 float32 (forms 2/3),
    2 16-bit integers of ``step = max|v| / 32767`` (forms 4, 5, 8 or 9; 3: forms 4 and 5
    only; 4: forms 4, 5 and 9); quantised values are rounded toward zero and the
    remainder stays in the slot (error feedback: what is delivered plus what stays equals
    the original bit for bit).
    The smallest form is chosen: float64 sparse when ``12 nnz < 8 m``, float32 when
    ``2 nnz < m``; 16-bit: the Exp-Golomb coded form 8 when it is the smallest, else
    the smallest of the byte-coded form 9 (``12 + m + 2 e`` bytes, ``e`` the values
    beyond +-127), sparse (``8 + 6 k``, ``k`` the slots of at least one step) and dense
    (``8 + 2 m``).  ``budget`` (16-bit
    only): when more than this would stay in the slots, the segment goes out exactly in
    float64 instead (forms 0/1, ``left`` 0).  ``buf`` must hold ``h + 8 + 8 m`` bytes.
    """
    cdef Py_ssize_t m = hi - lo
    cdef int16_t* qs = NULL
    cdef double* rem = NULL
    cdef double* a = &acc[lo] if m > 0 else NULL
    cdef uint8_t* p = &buf[h]
    if lo < 0 or hi > acc.shape[0] or m < 0 or buf.shape[0] < h + 8 + 8 * m:
        raise ValueError("encode_segment: segment or buffer out of range")
    if (quant == Q_16 or quant == Q_16B) and m >= 8:  # the 16-bit values and their
        # remainders, kept for the pass that writes the form
        rem = _scratch(m * (sizeof(double) + sizeof(int16_t)))
        qs = <int16_t*>(rem + m)
    return _encode_segment(a, m, p, h, quant, budget, qs, rem)


# The coder's scratch (the 16-bit values and remainders of a segment), kept between calls
# and grown as segments grow: a malloc/free of m x 10 bytes per message (870 KB for
# rmat:20's 87,000-slot segments on 4 ranks) went to mmap/munmap and page faults every
# call, which more than doubled the encode's cost in the ranks (measured in runs: 7.3-8.6
# ns a value where a replay of the same segments took 3.1).  Used with the GIL held.
cdef void* _scratch_p = NULL
cdef size_t _scratch_n = 0


cdef double* _scratch(size_t nbytes) except NULL:
    global _scratch_p, _scratch_n
    cdef void* q
    if nbytes > _scratch_n:
        nbytes = nbytes + nbytes // 4 + 4096
        q = realloc(_scratch_p, nbytes)
        if q == NULL:
            raise MemoryError()
        _scratch_p, _scratch_n = q, nbytes
    return <double*>_scratch_p


cdef _encode_segment(double* a, Py_ssize_t m, uint8_t* p, Py_ssize_t h, int quant,
                     double budget, int16_t* qs, double* rem):
    cdef Py_ssize_t s, k = 0, nnz = 0, nb, w, last = -1, limit
    cdef double v, big = 0.0, mass = 0.0, step = 0.0, left = 0.0
    cdef int64_t sg = 0, sz = 0
    cdef int form, kg = 0, kv = 0
    cdef Py_ssize_t nz
    cdef bint coded = False, bytes_ok = quant == Q_16 or quant == Q_16B
    cdef Py_ssize_t nesc = 0, nbyte, nplain
    cdef uint8_t* pb
    cdef _BitW bw
    cdef long q
    cdef float f
    cdef double* pd
    cdef float* pf
    cdef int32_t* pi
    cdef int16_t* ps
    with nogil:
        _seg_stats(a, m, &mass, &nnz, &big)
        if quant == Q_16 or quant == Q_16RAW or quant == Q_16B:
            step = big / 32767.0
            if not step > 0.0:  # (nothing of a step: the slots stay; the paths without
                # qs do that)
                qs = NULL
                rem = NULL
            if qs != NULL:  # the values into qs, without a branch on
                # their size (a value below the step quantises to 0 anyway: |v| < step
                # gives a quotient below 1.0, or 1.0 corrected to 0), and what stays
                _quantise(a, m, step, qs, rem, &k, &nesc, &left)
                if quant == Q_16:  # the Exp-Golomb orders' means (gaps, zigzagged values)
                    for s in range(m):
                        q = qs[s]
                        nz = q != 0
                        sg += nz * (s - last - 1)
                        sz += nz * <int64_t>_zigzag(q)
                        last = s if nz else last
            elif step > 0.0:
                for s in range(m):
                    v = a[s]
                    if fabs(v) >= step:
                        q = _q16(v, step)
                        left += fabs(v - <double>q * step)
                        if q > 127 or q < -127:
                            nesc += 1
                        k += 1
                    else:
                        left += fabs(v)
            if left > budget:  # what would stay exceeds the budget: exact instead
                quant = Q_EXACT
                left = 0.0
                k = 0
                last = -1
        if quant == Q_16 or quant == Q_16RAW or quant == Q_16B:
            (<double*>p)[0] = step
            # the plain forms' sizes: dense, sparse, byte-coded (the payload)
            nplain = 8 + 2 * m if 8 + 2 * m < 8 + 6 * k else 8 + 6 * k
            nbyte = BYTE_PREFIX + m + 2 * nesc
            if not (bytes_ok and nbyte < nplain):
                nbyte = 0  # (not chosen)
            elif nbyte < nplain:
                nplain = nbyte
            if quant == Q_16 and qs != NULL and k > 0 and m >= 8:
                # the coded form, written while smaller than both plain forms (else given
                # up: the slots are changed only once it is complete)
                kg = _eg_order(<double>sg / k)
                kv = _eg_order(<double>sz / k)
                limit = nplain - CODED_PREFIX
                bw.out = p + CODED_PREFIX
                bw.pos = 0
                bw.acc = 0
                bw.n = 0
                last = -1
                coded = True
                for s in range(m):
                    q = qs[s]
                    if q == 0:
                        continue
                    _bw_pair(&bw, <uint64_t>(s - last - 1), kg, _zigzag(q), kv)
                    last = s
                    if bw.pos >= limit:
                        coded = False
                        break
                if coded:
                    _bw_flush(&bw)
                    coded = bw.pos < limit
            if coded:  # Exp-Golomb: step, k, the orders, then gap and value codes
                form = 8
                (<uint32_t*>(p + 8))[0] = <uint32_t>k
                p[12] = <uint8_t>kg
                p[13] = <uint8_t>kv
                p[14] = 0
                p[15] = 0
                memcpy(a, rem, m * sizeof(double))
                nb = h + CODED_PREFIX + bw.pos
            elif nbyte > 0:  # byte-coded: step, m, every slot as an int8 or ESC + int16
                form = 9
                (<uint32_t*>(p + 8))[0] = <uint32_t>m
                pb = p + BYTE_PREFIX
                if qs != NULL:
                    pb = _write_bytes(a, m, rem, qs, pb)
                else:  # (fewer than 8 slots)
                    for s in range(m):
                        v = a[s]
                        q = _q16(v, step) if step > 0.0 and fabs(v) >= step else 0
                        a[s] = a[s] - <double>q * step
                        if -127 <= q <= 127:
                            pb[0] = <uint8_t>(q & 0xff)
                            pb += 1
                        else:
                            pb[0] = BYTE_ESC
                            pb[1] = <uint8_t>(q & 0xff)
                            pb[2] = <uint8_t>((q >> 8) & 0xff)
                            pb += 3
                nb = h + (pb - p)
            elif 3 * k < m:  # sparse: step, k int32 slot indices, k int16
                form = 5
                pi = <int32_t*>(p + 8)
                ps = <int16_t*>(p + 8 + 4 * k)
                k = 0
                if qs != NULL:  # (the values known: the slots of a nonzero one)
                    for s in range(m):
                        q = qs[s]
                        if q == 0:
                            continue
                        a[s] = rem[s]
                        pi[k] = <int32_t>s
                        ps[k] = <int16_t>q
                        k += 1
                elif step > 0.0:
                    for s in range(m):
                        v = a[s]
                        if fabs(v) < step:
                            continue
                        q = _q16(v, step)
                        a[s] = v - <double>q * step
                        pi[k] = <int32_t>s
                        ps[k] = <int16_t>q
                        k += 1
                nb = h + 8 + 6 * k
            else:  # dense: step, every slot as int16
                form = 4
                ps = <int16_t*>(p + 8)
                if qs != NULL:  # (the values and the remainders known)
                    memcpy(ps, qs, m * sizeof(int16_t))
                    memcpy(a, rem, m * sizeof(double))
                else:
                    for s in range(m):
                        v = a[s]
                        q = _q16(v, step) if step > 0.0 else 0
                        a[s] = v - <double>q * step
                        ps[s] = <int16_t>q
                nb = h + 8 + 2 * m
        else:  # float32 (error feedback) or float64: value bytes w, sparse below w + 4
            w = 4 if quant == Q_F32 else 8
            pf = <float*>p
            pd = <double*>p
            if (w + 4) * nnz < w * m:  # sparse: k values, k int32 slot indices
                form = 3 if quant == Q_F32 else 1
                pi = <int32_t*>(p + w * nnz)
            else:  # dense: every slot
                form = 2 if quant == Q_F32 else 0
                pi = NULL
            if form == 0:  # (a copy, then the slots cleared)
                if m > 0:
                    memcpy(pd, a, 8 * m)
                    memset(a, 0, 8 * m)
                k = m
            for s in range(m if form != 0 else 0):
                v = a[s]
                if pi != NULL:
                    if v == 0.0:
                        continue
                    pi[k] = <int32_t>s
                if quant == Q_F32:
                    f = _f32(v)
                    a[s] = v - <double>f
                    left += fabs(a[s])
                    pf[k] = f
                else:
                    pd[k] = v
                    a[s] = 0.0
                k += 1
            nb = h + (w + 4) * k if pi != NULL else h + w * m
    return nb, form, mass, left


cdef inline void _decode_dense64(double* acc, const int64_t* mp, const double* pd,
                                 Py_ssize_t k, double* tot, double* dabs) noexcept nogil:
    """:func:`decode_message` of form 0: ``acc[mp[i]] += pd[i]``, in order; ``tot``: the
    sum of the values, ``dabs``: the change of ``sum |acc|``."""
    cdef Py_ssize_t i = 0, t0, t1
    cdef double s0 = 0.0, s1 = 0.0, d0 = 0.0, d1 = 0.0, v0, v1, o0, o1
    while i + 1 < k:
        v0 = pd[i]
        v1 = pd[i + 1]
        t0 = mp[i]
        o0 = acc[t0]
        acc[t0] = o0 + v0
        t1 = mp[i + 1]
        o1 = acc[t1]  # (after the first store: a map that repeats a target stays exact)
        acc[t1] = o1 + v1
        d0 += fabs(o0 + v0) - fabs(o0)
        d1 += fabs(o1 + v1) - fabs(o1)
        s0 += v0
        s1 += v1
        i += 2
    if i < k:
        v0 = pd[i]
        t0 = mp[i]
        o0 = acc[t0]
        acc[t0] = o0 + v0
        d0 += fabs(o0 + v0) - fabs(o0)
        s0 += v0
    tot[0] = s0 + s1
    dabs[0] = d0 + d1


def decode_message(double[::1] acc, const int64_t[::1] mp, const uint8_t[::1] buf,
                   Py_ssize_t nbytes, Py_ssize_t h, Py_ssize_t form_at):
    """Scatter-add message ``buf`` (made by :func:`encode_segment`, forms 0-5) through
    ``mp`` (slot -> index of ``acc``; the form is header field ``form_at``, a float64);
    returns ``(mass, dabs)``: the signed mass added and
    the change of ``sum |acc|`` it made (exact up to rounding: the rank's residual sum is
    updated by it instead of recounted)."""
    cdef const uint8_t* b = &buf[0]
    cdef int form
    cdef const uint8_t* p = b + h
    cdef Py_ssize_t k, i, t, nmp = mp.shape[0], n = acc.shape[0]
    cdef double tot = 0.0, dabs = 0.0, v, old, step = 0.0
    cdef const double* pd = NULL
    cdef const float* pf = NULL
    cdef const int32_t* pi = NULL
    cdef const int16_t* ps = NULL
    if form_at < 0 or 8 * (form_at + 1) > h or h > buf.shape[0]:
        raise ValueError("decode_message: the form field lies outside the header")
    form = <int>(<const double*>b)[form_at]
    if nbytes > buf.shape[0] or nbytes < h or form < 0 or (form > 5 and form != 8
                                                          and form != 9):
        raise ValueError(f"decode_message: bad message (form {form}, {nbytes} bytes)")
    if form == 8:
        return _decode_coded(acc, mp, b + h, nbytes - h)
    if form == 9:
        return _decode_bytes(acc, mp, b + h, nbytes - h)
    if form == 0:
        k = (nbytes - h) // 8
    elif form == 1:
        k = (nbytes - h) // 12
    elif form == 2:
        k = (nbytes - h) // 4
    elif form == 3:
        k = (nbytes - h) // 8
    elif form == 4:
        k = (nbytes - h - 8) // 2
    else:
        k = (nbytes - h - 8) // 6
    if form in (0, 2, 4):
        if k > nmp:
            raise ValueError("decode_message: dense message longer than the slot map")
    with nogil:
        if form == 4 or form == 5:
            step = (<const double*>p)[0]
            if form == 5:
                pi = <const int32_t*>(p + 8)
                ps = <const int16_t*>(p + 8 + 4 * k)
            else:
                ps = <const int16_t*>(p + 8)
        elif form == 1:
            pd = <const double*>p
            pi = <const int32_t*>(p + 8 * k)
        elif form == 3:
            pf = <const float*>p
            pi = <const int32_t*>(p + 4 * k)
        elif form == 0:
            pd = <const double*>p
        else:
            pf = <const float*>p
        if form == 0:  # dense float64: the common exact form, without a branch per
            # value, the two sums in two lanes each (one chain is the adder's latency)
            _decode_dense64(&acc[0] if n else NULL, &mp[0] if nmp else NULL, pd, k, &tot,
                            &dabs)
            k = 0
        for i in range(k):
            if form == 0 or form == 1:
                v = pd[i]
            elif form == 2 or form == 3:
                v = <double>pf[i]
            else:
                v = <double>ps[i] * step
            t = mp[pi[i]] if pi != NULL else mp[i]
            old = acc[t]
            acc[t] = old + v
            dabs += fabs(old + v) - fabs(old)
            tot += v
    return tot, dabs


cdef _decode_bytes(double[::1] acc, const int64_t[::1] mp, const uint8_t* p, Py_ssize_t nb):
    """Scatter-add the payload of a byte-coded 16-bit message (form 9, ``nb`` bytes at
    ``p``: step, ``m``, then per slot an int8, or :data:`BYTE_ESC` and an int16); see
    :func:`decode_message`."""
    cdef Py_ssize_t m, i, t, nmp = mp.shape[0]
    cdef double tot = 0.0, dabs = 0.0, v, old, step
    cdef const uint8_t* q
    cdef const uint8_t* end = p + nb
    cdef int bad = 0
    cdef long iv
    if nb < BYTE_PREFIX:
        raise ValueError(f"decode_message: byte-coded message of {nb} payload bytes")
    step = (<const double*>p)[0]
    m = (<const uint32_t*>(p + 8))[0]
    if m > nmp or m > nb - BYTE_PREFIX:
        raise ValueError("decode_message: byte-coded message longer than the slot map")
    q = p + BYTE_PREFIX
    with nogil:
        for i in range(m):
            if q >= end:
                bad = 1
                break
            if q[0] == BYTE_ESC:
                if q + 3 > end:
                    bad = 1
                    break
                iv = <long>(<int16_t>(<uint16_t>q[1] | (<uint16_t>q[2] << 8)))
                q += 3
            else:
                iv = <long>(<int8_t>q[0])
                q += 1
            # (no branch on a zero value: a slot's add of 0.0 changes nothing but the
            # sign of a zero residual, and skipping it cost a misprediction a slot)
            v = <double>iv * step
            t = mp[i]
            old = acc[t]
            acc[t] = old + v
            dabs += fabs(old + v) - fabs(old)
            tot += v
        if q != end:
            bad = 1
    if bad:
        raise ValueError("decode_message: bad byte-coded message")
    return tot, dabs


cdef _decode_coded(double[::1] acc, const int64_t[::1] mp, const uint8_t* p, Py_ssize_t nb):
    """Scatter-add the payload of a coded 16-bit message (form 8, ``nb`` bytes at ``p``);
    see :func:`decode_message`."""
    cdef Py_ssize_t k, i, s = -1, t, nmp = mp.shape[0]
    cdef double tot = 0.0, dabs = 0.0, v, old, step
    cdef int kg, kv, bad = 0
    cdef uint64_t g, z
    cdef int64_t bp = 0, nbits
    cdef const uint8_t* q
    if nb < CODED_PREFIX:
        raise ValueError(f"decode_message: coded message of {nb} payload bytes")
    step = (<const double*>p)[0]
    k = (<const uint32_t*>(p + 8))[0]
    kg, kv = p[12], p[13]
    if kg > EG_MAXK or kv > EG_MAXK or k > nmp:
        raise ValueError("decode_message: bad coded message header")
    q = p + CODED_PREFIX
    nbits = 8 * (nb - CODED_PREFIX)
    with nogil:
        for i in range(k):
            if _br_code(q, nbits, &bp, kg, &g) or _br_code(q, nbits, &bp, kv, &z) or z > 65533:
                bad = 1
                break
            s += <Py_ssize_t>g + 1
            if s >= nmp:
                bad = 1
                break
            v = <double>_unzigzag(z) * step
            t = mp[s]
            old = acc[t]
            acc[t] = old + v
            dabs += fabs(old + v) - fabs(old)
            tot += v
    if bad or (bp + 7) // 8 != nb - CODED_PREFIX:  # every byte, none more
        raise ValueError("decode_message: corrupt coded message")
    return tot, dabs


def wave_sums(const double[::1] x, const double[::1] acc):
    """``(sum x, sum |acc|, sum acc)`` without temporaries (a termination wave's
    contribution: values, pending mass, signed mass)."""
    cdef double sx = 0.0, sa = 0.0, ss = 0.0
    with nogil:
        if x.shape[0]:
            sx = _lanes(&x[0], x.shape[0], False)
        if acc.shape[0]:
            sa = _lanes(&acc[0], acc.shape[0], True)
            ss = _lanes(&acc[0], acc.shape[0], False)
    return sx, sa, ss
