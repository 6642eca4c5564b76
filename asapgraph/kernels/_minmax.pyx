# cython: language_level=3
"""Min/max-accumulative kernels of the vertex programs: sweeps, one-call fixed points.

Rationale
---------
What: the kernels of monotone programs whose combiner is min or max (SSSP, BFS, WCC,
label flooding), with the built-in edge operators (``OP_*``/``COMB_*`` codes of
:mod:`asapgraph.kernels._programs`).  The fixed point of a monotone min/max program is
unique (the least, or greatest, one), so every kernel here may choose its order of
updates for speed: the order changes the work, never the result.

Variants:

* ``async_sweep_minmax``: one asynchronous (ASAP) sweep over a queue, Maiter's delta form
  (Zhang et al., TPDS 2014): processing ``u`` takes its delta as value when it improves
  and offers ``op(value_u, w)`` to its targets' deltas, visible at once; its parallel twin
  ``async_sweep_minmax_par`` uses atomic min/max and atomic queue claims.
* ``async_fixpoint_minmax``: the whole asynchronous fixed point of a min/max program in
  one call (no Python between updates), worklist in priority order (binary heap, lazy
  deletion: Dijkstra's order for ``add``, best label first for ``copy``) or FIFO (BFS
  order for ``add_one``).  Returns only when locally quiescent (or after ``max_pops``).
* ``union_find_fixpoint``: min/max ``copy`` over the undirected view from identity values
  has as fixed point the best initial delta of each connected component; lock-free
  union-find (Shiloach-Vishkin hooking, GAPBS Afforest ``Link``/``Compress``) gets it in
  O(m alpha) instead of one pass per hop of the diameter.
* ``bsp_minmax``: every synchronous superstep of a min/max program in one call; per
  superstep a sparse push from the frontier list or a dense pull over a frontier bitmap,
  chosen from the frontier's edge count (Ligra; Beamer's direction optimisation with the
  bottom-up early exit generalised to monotone operators by a per-superstep bound).

Invariants: ``indptr`` is int64 of length n+1 and non-decreasing; ``indices`` are dense
vertex ids (int32 or int64); weight arrays are either empty (unweighted) or aligned with
``indices``; values only improve (a value is replaced only by a strictly better delta).
Threads: as every program kernel, from the one state of
:mod:`asapgraph.kernels._progthreads` (``nt``).

References: Zhang, Gao, Gao, Wang, "Maiter: an asynchronous graph processing framework
for delta-based accumulative iterative computation", IEEE TPDS 25(8), 2014; Beamer,
Asanovic, Patterson, "Direction-optimizing breadth-first search", SC 2012; Shiloach &
Vishkin, "An O(log n) parallel connectivity algorithm", J. Algorithms 1982; Sutton,
Ben-Nun, Barak, "Optimizing parallel graph connectivity computation via subgraph
sampling" (Afforest), IPDPS 2018.
"""
from cython.parallel cimport prange
from libc.stdint cimport int64_t, uint8_t
from libc.stdlib cimport free, malloc, realloc
from asapgraph.kernels._typedefs cimport eid_t, vid_t
from asapgraph.kernels._progkern cimport (val_t, _atomic_better, _atomic_load, _better, _edge,
                                          asap_atomic_claim_u8, asap_atomic_fetch_add_i64,
                                          asap_atomic_load_i64, asap_atomic_store_u8,
                                          asap_cas_i64, asap_fence)
from asapgraph.kernels._progthreads cimport nt as _nt


def async_sweep_minmax(const eid_t[::1] indptr, const vid_t[::1] indices, const double[::1] w,
                       int op, int comb, val_t[::1] values, val_t[::1] deltas,
                       const int64_t[::1] queue, int64_t[::1] next_queue, uint8_t[::1] queued):
    """One asynchronous sweep of a min- (comb 1) or max- (comb 2) accumulative program.

    Processes the vertices of ``queue`` in order: when ``delta_u`` improves on
    ``values[u]`` it becomes the value and ``op(value_u, w)`` is offered to every target
    ``t``; an offer that improves on both ``deltas[t]`` and ``values[t]`` is stored at
    once and ``t`` is queued (in ``next_queue``) unless it is still waiting in ``queue``.
    ``queued[u]`` is 1 while ``u`` waits in either queue.

    Returns
    -------
    (int, int, int)
        Length of ``next_queue``, vertices that changed, edges scanned.
    """
    cdef Py_ssize_t nq = queue.shape[0]
    cdef Py_ssize_t i
    cdef int64_t u, t, nnext = 0, nproc = 0, scanned = 0
    cdef eid_t e
    cdef val_t d, m
    cdef bint weighted = w.shape[0] > 0
    with nogil:
        for i in range(nq):
            u = queue[i]
            queued[u] = 0
            d = deltas[u]
            if not _better(comb, d, values[u]):
                continue
            values[u] = d
            nproc += 1
            scanned += indptr[u + 1] - indptr[u]
            for e in range(indptr[u], indptr[u + 1]):
                t = indices[e]
                m = _edge(op, d, w[e] if weighted else 1.0)
                if _better(comb, m, deltas[t]) and _better(comb, m, values[t]):
                    deltas[t] = m
                    if not queued[t]:
                        queued[t] = 1
                        next_queue[nnext] = t
                        nnext += 1
    return nnext, nproc, scanned


def async_sweep_minmax_par(const eid_t[::1] indptr, const vid_t[::1] indices, const double[::1] w,
                           int op, int comb, val_t[::1] values, val_t[::1] deltas,
                           const int64_t[::1] queue, int64_t[::1] next_queue, uint8_t[::1] queued):
    """Parallel (OpenMP) version of :func:`async_sweep_minmax`: threads take vertices of
    ``queue`` concurrently; offers are combined into ``deltas`` with atomic min/max and a
    target is queued once (atomic claim of ``queued[t]``).  A vertex is processed by one
    thread per sweep, so ``values[u]`` has a single writer; a stale read of ``values[t]``
    only causes an extra (harmless) queue entry, and an improvement that lands after ``u``
    read its delta re-queues ``u``, so no update is lost and the fixed point is the same.
    That last argument needs two sequentially consistent fences (Dekker's pattern: the
    processor clears the flag then reads the delta, the offerer lowers the delta then
    tests the flag; without fences, store-load reordering loses updates, as a stress
    test showed).  Returns ``(len(next_queue), changed, edges)``."""
    cdef Py_ssize_t nq = queue.shape[0]
    cdef Py_ssize_t i
    cdef int64_t u, t, slot
    cdef int64_t nnext = 0
    cdef int64_t nproc = 0, scanned = 0
    cdef eid_t e
    cdef val_t d, m
    cdef bint weighted = w.shape[0] > 0
    for i in prange(nq, nogil=True, schedule="dynamic", chunksize=256, num_threads=_nt(nq * 8)):
        u = queue[i]
        asap_atomic_store_u8(&queued[u], 0)
        asap_fence()        # the flag must be clear before the delta is read (see below)
        d = _atomic_load(&deltas[u])
        if not _better(comb, d, values[u]):
            continue
        values[u] = d
        nproc += 1
        scanned += indptr[u + 1] - indptr[u]
        for e in range(indptr[u], indptr[u + 1]):
            t = indices[e]
            m = _edge(op, d, w[e] if weighted else 1.0)
            if _better(comb, m, values[t]) and _atomic_better(comb, &deltas[t], m):
                asap_fence()    # the improved delta is visible before the flag is tested
                if asap_atomic_claim_u8(&queued[t]):
                    slot = asap_atomic_fetch_add_i64(&nnext, 1)
                    next_queue[slot] = t
    return nnext, nproc, scanned


# ---------------------------------------------------------------------------------------
# Whole asynchronous fixed point of a min/max program in one call (no Python per sweep)
# ---------------------------------------------------------------------------------------
cdef inline void _sift_up(val_t *keys, int64_t *verts, int64_t i, int comb) noexcept nogil:
    cdef val_t k = keys[i]
    cdef int64_t v = verts[i]
    cdef int64_t p
    while i > 0:
        p = (i - 1) >> 1
        if not _better(comb, k, keys[p]):
            break
        keys[i] = keys[p]
        verts[i] = verts[p]
        i = p
    keys[i] = k
    verts[i] = v


cdef inline void _sift_down(val_t *keys, int64_t *verts, int64_t i, int64_t size, int comb) noexcept nogil:
    cdef val_t k = keys[i]
    cdef int64_t v = verts[i]
    cdef int64_t c
    while True:
        c = 2 * i + 1
        if c >= size:
            break
        if c + 1 < size and _better(comb, keys[c + 1], keys[c]):
            c = c + 1
        if not _better(comb, keys[c], k):
            break
        keys[i] = keys[c]
        verts[i] = verts[c]
        i = c
    keys[i] = k
    verts[i] = v


def async_fixpoint_minmax(const eid_t[::1] indptr, const vid_t[::1] indices, const double[::1] w,
                          int op, int comb, val_t[::1] values, val_t[::1] deltas,
                          bint priority, int64_t max_pops=-1):
    """The whole asynchronous fixed point of a min/max-accumulative program, in one call.

    A worklist holds the vertices whose pending delta improves on their value.  Popping
    ``u``: ``values[u] = deltas[u]`` and ``op(value_u, w)`` is offered to every target;
    an offer improving on both the target's delta and value is stored and the target is
    (re)queued.  ``priority``: the worklist is a binary heap ordered by the delta (best
    first, lazy deletion of stale entries), i.e. Dijkstra's order for ``add`` with
    non-negative weights and a flood from the best label for ``copy``, so every vertex is
    settled about once; otherwise a FIFO queue (BFS order, right for ``add_one``).  The
    fixed point of a monotone min/max program is unique, so the order changes the work,
    not the result.  Sequential (one thread): no atomics, no Python between updates.

    ``max_pops`` (>= 0) stops after that many worklist pops (the remaining deltas stay
    pending: calling again continues).

    Targets ``t >= n`` (``values``/``deltas`` longer than the ``n`` rows) are *slots*: the
    per-peer buffer entries of remote vertices on an MPI rank
    (:mod:`asapgraph.engine.minmax_program`).  An improving offer to a slot is combined
    into ``deltas[t]`` but never queued (the slot has no out-edges here).

    Returns
    -------
    (int, int, int, int)
        Vertices settled (value changed), edges scanned, worklist pops, and 1 when the
        worklist emptied (locally quiescent) else 0.
    """
    cdef int64_t n = indptr.shape[0] - 1
    cdef int64_t cap = n + 16, size = 0, head = 0, u, t, i, nproc = 0, scanned = 0, pops = 0
    cdef eid_t e
    cdef val_t d, m
    cdef bint weighted = w.shape[0] > 0
    cdef val_t *keys = NULL
    cdef int64_t *verts = NULL
    cdef uint8_t *queued = NULL
    cdef void *tmp
    cdef int quiet = 0
    cdef int oom = 0
    cdef bint inv = True      # deltas at least as good as values everywhere (see below)
    with nogil:
        # Invariant ``deltas[t]`` is at least as good as ``values[t]`` (true at the start when
        # values are the identity, kept by every update): then an offer that improves on the
        # delta improves on the value too, and the value need not be read per edge.
        for u in range(n):
            if _better(comb, values[u], deltas[u]):
                inv = False
                break
        verts = <int64_t *>malloc(cap * sizeof(int64_t))
        if priority:
            keys = <val_t *>malloc(cap * sizeof(val_t))
        else:
            queued = <uint8_t *>malloc(n + 1)
        if verts == NULL or (priority and keys == NULL) or (not priority and queued == NULL):
            oom = 1
        else:
            for u in range(n):
                if not priority:
                    queued[u] = 0
                if _better(comb, deltas[u], values[u]):
                    verts[size] = u
                    if priority:
                        keys[size] = deltas[u]
                    else:
                        queued[u] = 1
                    size += 1
            if priority:
                i = size // 2 - 1
                while i >= 0:
                    _sift_down(keys, verts, i, size, comb)
                    i -= 1
                while size > 0:
                    if max_pops >= 0 and pops >= max_pops:
                        break
                    u = verts[0]
                    d = keys[0]
                    size -= 1
                    if size > 0:
                        keys[0] = keys[size]
                        verts[0] = verts[size]
                        _sift_down(keys, verts, 0, size, comb)
                    pops += 1
                    if d != deltas[u] or not _better(comb, d, values[u]):
                        continue        # stale entry (a better delta was queued later)
                    values[u] = d
                    nproc += 1
                    scanned += indptr[u + 1] - indptr[u]
                    for e in range(indptr[u], indptr[u + 1]):
                        t = indices[e]
                        m = _edge(op, d, w[e] if weighted else 1.0)
                        if _better(comb, m, deltas[t]) and (inv or _better(comb, m, values[t])):
                            deltas[t] = m
                            if t >= n:
                                continue        # a slot: combined, not queued
                            if size == cap:
                                cap = cap * 2
                                tmp = realloc(keys, cap * sizeof(val_t))
                                if tmp == NULL:
                                    oom = 1
                                    break
                                keys = <val_t *>tmp
                                tmp = realloc(verts, cap * sizeof(int64_t))
                                if tmp == NULL:
                                    oom = 1
                                    break
                                verts = <int64_t *>tmp
                            keys[size] = m
                            verts[size] = t
                            _sift_up(keys, verts, size, comb)
                            size += 1
                    if oom:
                        break
                quiet = size == 0
            else:
                # circular FIFO of capacity n + 1: a vertex is in it at most once (queued[])
                cap = n + 1
                while size > 0:
                    if max_pops >= 0 and pops >= max_pops:
                        break
                    u = verts[head]
                    head = head + 1
                    if head == cap:
                        head = 0
                    size -= 1
                    pops += 1
                    queued[u] = 0
                    d = deltas[u]
                    if not _better(comb, d, values[u]):
                        continue
                    values[u] = d
                    nproc += 1
                    scanned += indptr[u + 1] - indptr[u]
                    for e in range(indptr[u], indptr[u + 1]):
                        t = indices[e]
                        m = _edge(op, d, w[e] if weighted else 1.0)
                        if _better(comb, m, deltas[t]) and (inv or _better(comb, m, values[t])):
                            deltas[t] = m
                            if t < n and not queued[t]:
                                queued[t] = 1
                                i = head + size
                                if i >= cap:
                                    i = i - cap
                                verts[i] = t
                                size += 1
                quiet = size == 0
        free(keys)
        free(verts)
        free(queued)
    if oom:
        raise MemoryError("async_fixpoint_minmax: worklist allocation failed")
    return nproc, scanned, pops, quiet


# ---------------------------------------------------------------------------------------
# Union-find fixed point of min/max "copy" programs on the undirected view
# ---------------------------------------------------------------------------------------
cdef inline void _uf_link(int64_t u, int64_t v, int64_t *comp) noexcept nogil:
    """GAPBS/Afforest ``Link``: hook the larger root under the smaller with a CAS; parents
    only decrease, so concurrent links cannot form a cycle."""
    cdef int64_t p1 = asap_atomic_load_i64(&comp[u])
    cdef int64_t p2 = asap_atomic_load_i64(&comp[v])
    cdef int64_t high, low, ph
    while p1 != p2:
        high = p1 if p1 > p2 else p2
        low = p1 + p2 - high
        ph = asap_atomic_load_i64(&comp[high])
        if ph == low:
            break
        if ph == high and asap_cas_i64(&comp[high], high, low):
            break
        p1 = asap_atomic_load_i64(&comp[asap_atomic_load_i64(&comp[high])])
        p2 = asap_atomic_load_i64(&comp[low])


def union_find_fixpoint(const eid_t[::1] indptr, const vid_t[::1] indices, int comb,
                        val_t[::1] values, const val_t[::1] deltas, int64_t[::1] comp):
    """Fixed point of a min (comb 1) / max (comb 2) program with edge op ``copy`` over the
    undirected view, when every value starts at the combiner's identity.

    Then the value reached by asynchronous propagation is, for every vertex, the best
    initial delta over its (weakly) connected component.  It is computed by lock-free
    union-find (Shiloach-Vishkin hooking as in GAPBS's Afforest: link every edge of the
    CSR, hooking the larger root under the smaller with a CAS, then compress), followed by
    a reduction of the deltas per root: O(m alpha) work instead of one pass per diameter.

    ``indptr``/``indices`` must list every undirected edge at least once (one direction
    of a directed graph is enough).  ``comp`` (length n) receives the root of each vertex.
    Returns the number of edges scanned.
    """
    cdef int64_t n = indptr.shape[0] - 1
    cdef int64_t v, r
    cdef eid_t e
    cdef int64_t *c = &comp[0] if n > 0 else NULL
    cdef int nt = _nt(n + indptr[n])
    if n == 0:
        return 0
    for v in prange(n, nogil=True, schedule="static", num_threads=nt):
        comp[v] = v
    for v in prange(n, nogil=True, schedule="dynamic", chunksize=1024, num_threads=nt):
        for e in range(indptr[v], indptr[v + 1]):
            _uf_link(v, indices[e], c)
    for v in prange(n, nogil=True, schedule="static", num_threads=nt):
        r = comp[v]
        while r != comp[r]:
            r = comp[r]
        comp[v] = r
    with nogil:
        for v in range(n):          # best delta per root (roots are their own parent)
            r = comp[v]
            if _better(comb, deltas[v], values[r]):
                values[r] = deltas[v]
    for v in prange(n, nogil=True, schedule="static", num_threads=nt):
        r = comp[v]
        if r != v:
            values[v] = values[r]
    return int(indptr[n] - indptr[0])


# ---------------------------------------------------------------------------------------
# Whole synchronous (BSP) run of a min/max program: frontier supersteps in one call
# ---------------------------------------------------------------------------------------
cdef extern from "<time.h>" nogil:
    cdef struct timespec:
        long tv_sec
        long tv_nsec
    int clock_gettime(int clk, timespec *ts)
    int CLOCK_MONOTONIC


cdef inline double _now() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec + 1e-9 * ts.tv_nsec


def bsp_minmax(const eid_t[::1] pptr, const vid_t[::1] pind, const double[::1] pw,
               const eid_t[::1] qptr, const vid_t[::1] qind, const double[::1] qw,
               int op, int comb, val_t[::1] values, val_t[::1] deltas, int64_t max_steps,
               int64_t push_fraction, double min_weight, double[::1] step_seconds):
    """Synchronous supersteps of a min/max-accumulative program until no delta improves.

    Superstep: the frontier is every vertex whose delta improves on its value; it takes
    the delta as value, then sends ``op(value_u, w)`` along its edges; offers that improve
    on a target's delta and value are kept (Jacobi: values change only at the start of a
    superstep).  Per superstep the engine picks (Ligra's edgeMap, Beamer's direction
    optimisation) a *sparse push* over ``pptr/pind`` from the frontier list (atomic
    min/max, atomic claim of the next frontier) when the frontier's out-edges plus its
    size are below ``m / push_fraction``, else a *dense pull* over ``qptr/qind`` (the
    sources of every target) restricted to frontier sources by a bitmap.  For monotone
    operators (``copy``, ``add_one``, ``add`` with ``min_weight >= 0``) the pull knows a
    bound ``B`` on the best offer this superstep (best frontier value plus the lightest
    step): a target already at least as good as ``B`` is skipped and a target's scan stops
    once it reaches ``B`` (Beamer's bottom-up early exit, which for BFS checks only the
    unvisited vertices).  Work per superstep: the frontier's edges (push) or the edges of
    the targets that can still improve (pull), plus O(n) only on dense supersteps.

    ``step_seconds[k]`` receives the time of superstep ``k`` (when ``k`` is in range).

    Returns
    -------
    (int, int, int, int, int)
        Supersteps run, 1 when converged (no improving delta left), edges scanned, dense
        supersteps, sparse supersteps.
    """
    cdef int64_t n = pptr.shape[0] - 1
    cdef int64_t m_edges = pptr[n] - pptr[0]
    cdef bint pweighted = pw.shape[0] > 0
    cdef bint qweighted = qw.shape[0] > 0
    cdef bint monotone = op == 0 or op == 3 or (op == 2 and min_weight >= 0)
    cdef int64_t steps = 0, dense = 0, sparse = 0, scanned = 0, nfront = 0, nnext = 0
    cdef int64_t i, u, v, t, work, slot
    cdef eid_t e
    cdef val_t d, mv, acc, bound, best, step_b
    cdef int64_t *front = NULL
    cdef int64_t *nxt = NULL
    cdef int64_t *swp
    cdef uint8_t *flag = NULL
    cdef uint8_t *infront = NULL
    cdef int nt
    cdef int converged = 0
    cdef int64_t nsec = step_seconds.shape[0]
    cdef double t0
    cdef int64_t scanned_step
    if n == 0:
        return 0, 1, 0, 0, 0
    if val_t is double:
        step_b = <val_t>(1.0 if op == 3 else (min_weight if op == 2 else 0.0))
    else:
        step_b = <val_t>(1 if op == 3 else ((<int64_t>min_weight) if op == 2 else 0))
    front = <int64_t *>malloc(n * sizeof(int64_t))
    nxt = <int64_t *>malloc(n * sizeof(int64_t))
    flag = <uint8_t *>malloc(n)
    infront = <uint8_t *>malloc(n)
    if front == NULL or nxt == NULL or flag == NULL or infront == NULL:
        free(front); free(nxt); free(flag); free(infront)
        raise MemoryError("bsp_minmax: out of memory")
    with nogil:
        for u in range(n):
            flag[u] = 0
            infront[u] = 0
            if _better(comb, deltas[u], values[u]):
                front[nfront] = u
                nfront += 1
        while True:
            if nfront == 0:
                converged = 1
                break
            if steps >= max_steps:
                break
            t0 = _now()
            work = 0
            # apply: the frontier takes its deltas (before any message of this superstep)
            for i in range(nfront):
                u = front[i]
                values[u] = deltas[u]
                work += pptr[u + 1] - pptr[u]
            nnext = 0
            scanned_step = 0
            if (work + nfront) * push_fraction < m_edges:
                sparse += 1
                nt = _nt(work + nfront)
                for i in prange(nfront, num_threads=nt, schedule="dynamic", chunksize=64):
                    u = front[i]
                    d = values[u]
                    for e in range(pptr[u], pptr[u + 1]):
                        t = pind[e]
                        mv = _edge(op, d, pw[e] if pweighted else 1.0)
                        if _better(comb, mv, values[t]) and _atomic_better(comb, &deltas[t], mv):
                            if asap_atomic_claim_u8(&flag[t]):
                                slot = asap_atomic_fetch_add_i64(&nnext, 1)
                                nxt[slot] = t
                scanned_step = work
                for i in range(nnext):
                    flag[nxt[i]] = 0
            else:
                dense += 1
                best = values[front[0]]
                for i in range(nfront):
                    u = front[i]
                    infront[u] = 1
                    if _better(comb, values[u], best):
                        best = values[u]
                if comb == 1:
                    bound = best + step_b
                else:
                    bound = best - step_b if op == 2 else best + step_b
                nt = _nt(n + m_edges)
                for v in prange(n, num_threads=nt, schedule="dynamic", chunksize=1024):
                    d = deltas[v] if _better(comb, deltas[v], values[v]) else values[v]
                    if monotone and not _better(comb, bound, d):
                        continue            # cannot improve this superstep
                    acc = d
                    for e in range(qptr[v], qptr[v + 1]):
                        u = qind[e]
                        if infront[u]:
                            mv = _edge(op, values[u], qw[e] if qweighted else 1.0)
                            if _better(comb, mv, acc):
                                acc = mv
                                if monotone and not _better(comb, bound, acc):
                                    scanned_step += e - qptr[v] + 1
                                    break
                    else:
                        scanned_step += qptr[v + 1] - qptr[v]
                    if _better(comb, acc, d):
                        deltas[v] = acc
                        flag[v] = 1
                for i in range(nfront):
                    infront[front[i]] = 0
                for v in range(n):
                    if flag[v]:
                        flag[v] = 0
                        nxt[nnext] = v
                        nnext = nnext + 1
            scanned += scanned_step
            swp = front
            front = nxt
            nxt = swp
            nfront = nnext
            if steps < nsec:
                step_seconds[steps] = _now() - t0
            steps += 1
    free(front); free(nxt); free(flag); free(infront)
    return steps, converged, scanned, dense, sparse
