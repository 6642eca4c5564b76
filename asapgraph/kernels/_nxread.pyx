# cython: language_level=3
"""Reading a networkx graph's dict-of-dicts adjacency into CSR arrays, in C.

Rationale
---------
networkx keeps, per node, a dict ``{neighbour: edge-data dict}``.  Reading 4M neighbour
keys with ``np.fromiter(chain.from_iterable(dicts))`` costs ~120 ns per key on this class
of machine: the iterator protocol and one boxed-int conversion per key on top of the
unavoidable cache miss on each key object.  These loops walk the dicts with
``PyDict_Next`` (no iterator objects, borrowed references), convert a key with
``PyLong_AsLongLong`` (nodes ``0..n-1``) or one ``PyDict_GetItem`` in the node index,
and read an edge attribute with one ``PyDict_GetItem`` per edge data dict.

Only plain ``dict`` objects are walked here (networkx's default factories); the caller
(:func:`asapgraph.graph.nxcsr.read_networkx`) keeps its pure-Python path for graph
classes with other mapping types, and for multigraphs (dicts of dicts of dicts).

Invariants: ``out`` receives exactly ``sum(len(d))`` entries in the dicts' iteration
order, which is the order ``chain.from_iterable`` would give (same CSR as the Python
path); a key that is not a node raises ``KeyError``; a value that is not a number raises
``TypeError``/``ValueError`` (the caller reports the attribute).
"""
from cpython.dict cimport PyDict_Next, PyDict_GetItem, PyDict_Size
from cpython.ref cimport PyObject
from cpython.long cimport PyLong_AsLongLong, PyLong_Check

from asapgraph.kernels._typedefs cimport int64_t, vid_t


def adjacency_ids(list dicts, object index, vid_t[::1] out, bint check_data=False):
    """Neighbour ids of every dict in ``dicts``, concatenated into ``out``.

    ``index``: ``{node: dense id}``, or None when the nodes are the ints ``0..n-1``
    (then a key is its own id).  ``check_data``: also tell whether some value (edge data
    dict) is non-empty, in the same pass (its cache misses overlap the keys').

    Returns
    -------
    (int, bool)
        Ids written; some edge data dict non-empty (False unless ``check_data``).
    """
    cdef Py_ssize_t i, pos, k = 0, cap = out.shape[0], nd = len(dicts)
    cdef PyObject *key
    cdef PyObject *val
    cdef PyObject *hit
    cdef dict d, idx = None
    cdef long long v
    cdef bint data = False
    if index is not None:
        idx = <dict?>index
    for i in range(nd):
        d = <dict?>dicts[i]
        if k + PyDict_Size(d) > cap:
            raise ValueError("output array too short")
        pos = 0
        if idx is None:
            while PyDict_Next(d, &pos, &key, &val):
                v = PyLong_AsLongLong(<object>key)
                out[k] = <vid_t>v
                k += 1
                if check_data and not data:
                    data = PyDict_Size(<object>val) != 0
        else:
            while PyDict_Next(d, &pos, &key, &val):
                hit = PyDict_GetItem(idx, <object>key)
                if hit == NULL:
                    raise KeyError(<object>key)
                out[k] = <vid_t>PyLong_AsLongLong(<object>hit)
                k += 1
                if check_data and not data:
                    data = PyDict_Size(<object>val) != 0
    return k, data


def edge_attribute(list dicts, object attr, double default, double[::1] out,
                   object integer_types=None):
    """``out[e]`` = edge ``e``'s attribute ``attr`` as a float (``default`` when absent),
    edges in the order of :func:`adjacency_ids`.  Returns the number written, or with
    ``integer_types`` (a tuple of types) ``(number written, every value present is an
    instance of integer_types, some edge has an integer value or none)``: networkx sums
    the values as they are (an absent one is its int 1), so shortest-path lengths are ints
    only when every weight is one, and mix ints and floats where the weights do."""
    cdef Py_ssize_t i, pos, k = 0, cap = out.shape[0]
    cdef PyObject *key
    cdef PyObject *val
    cdef PyObject *hit
    cdef dict d
    cdef bint check = integer_types is not None, integral = True, some_int = False
    for i in range(len(dicts)):
        d = <dict?>dicts[i]
        if k + PyDict_Size(d) > cap:
            raise ValueError("output array too short")
        pos = 0
        while PyDict_Next(d, &pos, &key, &val):
            hit = PyDict_GetItem(<dict?><object>val, attr)
            if hit == NULL:
                out[k] = default
                some_int = True
            else:
                out[k] = float(<object>hit)
                if check and (integral or not some_int):
                    if PyLong_Check(<object>hit) or isinstance(<object>hit, integer_types):
                        some_int = True
                    else:
                        integral = False
            k += 1
    if check:
        return k, integral, some_int
    return k
