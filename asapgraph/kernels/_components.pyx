# cython: language_level=3
"""Connected components of the undirected view of a CSR, and networkx's result for them
(one Python ``set`` of node objects per component), in C.

Rationale
---------
The networkx backend's ``weakly_connected_components`` spends its time in two places: the
union-find over every edge, and building ~10^5 Python sets of node objects (rmat:18:
88,163 components for 262,144 nodes).  Both are here.

* ``component_labels``: lock-free union-find (Shiloach-Vishkin hooking, GAPBS Afforest's
  ``Link``/``Compress``, as in :func:`asapgraph.kernels._minmax.union_find_fixpoint`)
  with Afforest's neighbour sampling (two rounds of one entry per row, each followed by
  a compress, before the pass over every edge), parents of the CSR's own id type (int32
  for n < 2^31: the parent array of rmat:18 is 1 MiB instead of 2 and stays in L2) and
  nothing else: no value/delta arrays, the components counted in the last compress.
  Measured single-threaded on rmat:18's in-CSR (CPU time, medians of 21): 24 ms without
  the sampling, 16 ms with it; with each in-list shuffled 43 ms and 15 ms (the sampling
  also makes the time independent of the order of the lists).  Parents only decrease,
  so after the compress every vertex holds the **smallest id of its component**.
* ``component_sets``: one pass over the labels with the CPython C API: a vertex whose
  label is itself opens a new set (``PySet_New``, stored in the result list in label
  order), every other vertex is added to its label's set (``PySet_Add`` on the node
  object).  No Python bytecode, iterator or per-node object runs; labels are the smallest
  id of their component, so the set of a label always exists when its other members come.
  The cyclic garbage collector is paused meanwhile (each new set is a tracked container;
  ~10^5 of them would trigger collections that traverse every live object, the caller's
  networkx graph included); the sets hold no cycles.  A set whose members are all atomic
  (exact int, str, float, bytes, or a tuple the collector has untracked) is then
  untracked, as CPython untracks such dicts and tuples: otherwise the next collections
  would traverse the ~10^5 young sets once per generation (rmat:18, one thread, CPU time
  of ``list(nx.weakly_connected_components(A))``: 74 ms with them tracked, 48 ms with the
  collector off).  The one cost: a cycle a caller later builds *through* such a set (by
  adding an object that refers back to it) is not collected.

This is the one kernel module that touches Python objects in its loop (as
:mod:`asapgraph.kernels._nxread` does): ``component_sets`` holds the GIL throughout.

Invariants: ``indptr`` int64 of length n+1, ``indices`` dense ids of the same dtype as
``comp``/``labels``; every edge listed at least once (in either direction).
"""
from cython.parallel cimport prange
from libc.stdint cimport int32_t, int64_t
from libc.stdlib cimport calloc, free, malloc
from cpython.ref cimport PyObject, Py_XDECREF, Py_XINCREF

from asapgraph.kernels._typedefs cimport eid_t, vid_t
from asapgraph.kernels._progthreads cimport nt as _nt

cdef extern from "asap_atomics.h" nogil:
    int64_t asap_atomic_load_i64(const int64_t *p)
    int asap_cas_i64(int64_t *p, int64_t expected, int64_t desired)
    int32_t asap_atomic_load_i32(const int32_t *p)
    int asap_cas_i32(int32_t *p, int32_t expected, int32_t desired)

cdef extern from "Python.h":
    PyObject *PySet_New(PyObject *iterable) except NULL
    int PySet_Add(PyObject *s, PyObject *key) except -1
    list PyList_New(Py_ssize_t size)
    Py_ssize_t PyList_GET_SIZE(object lst)
    PyObject *PyList_GET_ITEM(object lst, Py_ssize_t i)
    void PyList_SET_ITEM(object lst, Py_ssize_t i, PyObject *item)
    int PyGC_Disable()
    int PyGC_Enable()
    void PyObject_GC_UnTrack(void *op)
    int PyObject_GC_IsTracked(PyObject *op)
    bint PyLong_CheckExact(PyObject *o)
    bint PyUnicode_CheckExact(PyObject *o)
    bint PyFloat_CheckExact(PyObject *o)
    bint PyBytes_CheckExact(PyObject *o)
    bint PyTuple_CheckExact(PyObject *o)


cdef inline bint _atomic(PyObject *key) noexcept:
    """True for a node object that can hold no reference to a container: an exact int,
    str, float or bytes, or a tuple the collector itself untracked (CPython untracks a
    tuple whose items are all atomic)."""
    return (PyLong_CheckExact(key) or PyUnicode_CheckExact(key) or PyFloat_CheckExact(key)
            or PyBytes_CheckExact(key)
            or (PyTuple_CheckExact(key) and not PyObject_GC_IsTracked(key)))


cdef inline vid_t _load(vid_t *p) noexcept nogil:
    if vid_t is int32_t:
        return asap_atomic_load_i32(p)
    else:
        return asap_atomic_load_i64(p)


cdef inline bint _cas(vid_t *p, vid_t expected, vid_t desired) noexcept nogil:
    if vid_t is int32_t:
        return asap_cas_i32(p, expected, desired)
    else:
        return asap_cas_i64(p, expected, desired)


cdef inline void _link(vid_t u, vid_t v, vid_t *comp) noexcept nogil:
    """Afforest ``Link``: hook the larger root under the smaller with a CAS (parents only
    decrease, so concurrent links cannot form a cycle)."""
    cdef vid_t p1 = _load(&comp[u])
    cdef vid_t p2 = _load(&comp[v])
    cdef vid_t high, low, ph
    while p1 != p2:
        high = p1 if p1 > p2 else p2
        low = p1 + p2 - high
        ph = _load(&comp[high])
        if ph == low:
            break
        if ph == high and _cas(&comp[high], high, low):
            break
        p1 = _load(&comp[_load(&comp[high])])
        p2 = _load(&comp[low])


cdef void _compress(Py_ssize_t n, vid_t *comp, int nt) noexcept nogil:
    cdef Py_ssize_t v
    cdef vid_t r
    for v in prange(n, schedule="static", num_threads=nt):
        r = comp[v]
        while r != comp[r]:
            r = comp[r]
        comp[v] = r


def component_labels(const eid_t[::1] indptr, const vid_t[::1] indices, vid_t[::1] comp,
                     bint symmetric=False, int sample=2):
    """``comp[v]`` = the smallest id of ``v``'s connected component in the undirected view
    of the CSR (each edge may be listed in one direction only).

    ``sample``: Afforest's neighbour rounds: before the pass over every edge, link the
    ``k``-th entry of every row for ``k < sample`` and compress after each round, so that
    the main pass mostly finds both ends of an edge already under one root (two loads and
    a compare, no CAS, no climbing).  ``symmetric``: the CSR lists every edge in both
    directions (an undirected graph), so the main pass links only the entries ``u < v``
    of row ``v``: the other half is skipped on the index alone, without touching the
    parent array.

    Returns
    -------
    int
        The number of components (vertices that are their own label).
    """
    cdef Py_ssize_t n = indptr.shape[0] - 1
    cdef Py_ssize_t v, ncomp = 0
    cdef eid_t e
    cdef vid_t r
    cdef vid_t *c
    cdef int nt, k
    if comp.shape[0] != n:
        raise ValueError("comp must have one entry per vertex")
    if sample < 0:
        raise ValueError("sample must be >= 0")
    if n <= 0:
        return 0
    c = &comp[0]
    nt = _nt(n + indptr[n])
    for v in prange(n, nogil=True, schedule="static", num_threads=nt):
        comp[v] = <vid_t>v
    for k in range(sample):
        for v in prange(n, nogil=True, schedule="static", num_threads=nt):
            if indptr[v] + k < indptr[v + 1]:
                _link(<vid_t>v, indices[indptr[v] + k], c)
        _compress(n, c, nt)
    for v in prange(n, nogil=True, schedule="dynamic", chunksize=1024, num_threads=nt):
        for e in range(indptr[v] + sample, indptr[v + 1]):
            if not symmetric or indices[e] < v:
                _link(<vid_t>v, indices[e], c)
    for v in prange(n, nogil=True, schedule="static", num_threads=nt):
        r = comp[v]
        while r != comp[r]:
            r = comp[r]
        comp[v] = r
        if r == v:
            ncomp += 1
    return ncomp


def component_sets(const vid_t[::1] labels, list nodes not None):
    """networkx's components: a list with one ``set`` of ``nodes[v]`` per component, in
    increasing order of label (= of each component's first vertex).

    ``labels[v]`` must be the smallest vertex of ``v``'s component (as
    :func:`component_labels` gives), ``nodes`` the node objects by vertex id.
    """
    cdef Py_ssize_t n = labels.shape[0]
    cdef Py_ssize_t v, k = 0, ncomp = 0
    cdef vid_t r
    cdef PyObject **root_set
    cdef unsigned char *mixed
    cdef PyObject *s
    cdef PyObject *key
    cdef list out
    cdef bint gc_was_on
    if PyList_GET_SIZE(nodes) != n:
        raise ValueError("labels and nodes differ in length")
    for v in range(n):
        r = labels[v]
        if r == v:
            ncomp += 1
        elif r < 0 or r > v or labels[r] != r:
            raise ValueError("a label is not the smallest vertex of its component")
    out = PyList_New(ncomp)          # items NULL until set (the list is never shown so)
    if n == 0:
        return out
    root_set = <PyObject **>malloc(n * sizeof(PyObject *))
    mixed = <unsigned char *>calloc(n, 1)
    if root_set == NULL or mixed == NULL:
        free(root_set)
        free(mixed)
        raise MemoryError()
    gc_was_on = PyGC_Disable()
    try:
        for v in range(n):
            if PyList_GET_SIZE(nodes) != n:     # a node's __hash__ may run Python code
                raise RuntimeError("the node list changed while the sets were built")
            r = labels[v]
            if r == v:
                s = PySet_New(NULL)
                PyList_SET_ITEM(out, k, s)      # the list owns the new set
                k += 1
                root_set[v] = s
            else:
                s = root_set[r]
            key = PyList_GET_ITEM(nodes, v)
            if not _atomic(key):
                mixed[r] = 1
            Py_XINCREF(key)
            try:
                PySet_Add(s, key)
            finally:
                Py_XDECREF(key)
        for v in range(n):
            if labels[v] == v and not mixed[v]:
                PyObject_GC_UnTrack(root_set[v])
    finally:
        free(root_set)
        free(mixed)
        if gc_was_on:
            PyGC_Enable()
    return out
