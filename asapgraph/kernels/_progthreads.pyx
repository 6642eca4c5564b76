# cython: language_level=3
"""Thread-count state of the vertex-program kernels: one cap, one parallel threshold.

Rationale
---------
The program kernels live in several modules (:mod:`asapgraph.kernels._edgemap`,
:mod:`asapgraph.kernels._minmax`), but ``run(..., threads=k)`` and the tests set *one*
state through :mod:`asapgraph.kernels._programs` (``set_num_threads``,
``set_parallel_threshold``) and every kernel must honour it.  C globals cannot be shared
between extension modules, so this module owns them and exports :c:func:`nt` through
its ``.pxd``: the other modules ``cimport`` it and Cython binds the function pointer
when they are imported (one indirect call per kernel call, nothing per edge).

Invariant: a kernel whose work is below ``SMALL_WORK`` runs on one thread (a parallel
region costs more than it saves there: thread wake-up and barrier, far worse when the
cores are oversubscribed); above, on the cap when set, else OpenMP's default
(``OMP_NUM_THREADS`` or the number of cores).
"""
from libc.stdint cimport int64_t

cdef extern from *:
    """
    #ifdef _OPENMP
    #include <omp.h>
    static int asap_max_threads(void) { return omp_get_max_threads(); }
    #else
    static int asap_max_threads(void) { return 1; }
    #endif
    """
    int asap_max_threads() nogil

# Below this much work a parallel region costs more than it saves (thread wake-up and
# barrier, far worse when the cores are oversubscribed): run on one thread.
cdef int64_t SMALL_WORK = 1 << 15

# Thread cap set by ``set_num_threads`` (``run(..., threads=k)``); 0: OpenMP's default
# (``OMP_NUM_THREADS`` or the number of cores).
cdef int NUM_THREADS = 0


cdef int nt(int64_t work) noexcept nogil:
    if work < SMALL_WORK:
        return 1
    if NUM_THREADS > 0:
        return NUM_THREADS
    return asap_max_threads()


def set_parallel_threshold(int64_t work):
    """Set the work below which kernels run on one thread; returns the previous value
    (tests set 0 to force the parallel paths on small graphs)."""
    global SMALL_WORK
    old = SMALL_WORK
    SMALL_WORK = work
    return old


def set_num_threads(int k):
    """Cap the threads of every kernel at ``k`` (0: OpenMP's default, i.e.
    ``OMP_NUM_THREADS`` or the core count); returns the previous cap."""
    global NUM_THREADS
    old = NUM_THREADS
    NUM_THREADS = k if k > 0 else 0
    return old


def num_threads():
    """Threads a large kernel would use now (the cap, or OpenMP's default)."""
    return NUM_THREADS if NUM_THREADS > 0 else asap_max_threads()
