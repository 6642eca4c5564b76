"""A networkx graph read into an in-CSR with node labels and edge attributes.

Rationale
---------
networkx stores a graph as dicts of dicts; the engine wants an in-CSR.  For a ``DiGraph``
the predecessor dicts ``G._pred`` *are* the in-adjacency, and for an undirected graph the
symmetric ``G._adj`` is, so the in-CSR is read straight off them in node order without any
sort: per-node degrees with ``map(len, ...)``, then the neighbour ids and each weight
attribute by the loops of :mod:`asapgraph.kernels._nxread` (``PyDict_Next`` over the plain
dicts networkx uses; ~4x faster than ``np.fromiter`` over ``chain.from_iterable``), or, for
other mapping types and multigraphs, by ``np.fromiter`` over ``map``/``chain`` pipelines
that also iterate in C.  No Python bytecode runs per edge on either path.
Multigraph parallel edges become parallel CSR entries (their weights add up in PageRank,
Katz and HITS; shortest paths take the lightest), self-loops are kept (once, as networkx's
adjacency matrix has them).

Nothing here imports networkx: the graph's dicts are read through the attributes every
networkx graph class has.  :func:`asapgraph.graph.convert.as_graph` turns the result into a
:class:`Graph`; the networkx backend (:mod:`asapgraph.interop.nxgraph`) subclasses
:class:`LabelledCSR` into the graph object networkx dispatches on.
"""
from __future__ import annotations

from itertools import chain, repeat
from operator import methodcaller

import numpy as np

from asapgraph.graph.core import Graph
from asapgraph.graph.labels import object_array
from asapgraph.kernels import _nxread

__all__ = ["LabelledCSR", "read_networkx", "nodes_are_range"]

_VALUES = methodcaller("values")
#: edge attribute values networkx adds up as integers (shortest-path lengths stay ints)
_INTEGER_TYPES = (int, np.integer)


def _get(mapping, key, default):
    return mapping.get(key, default)


class LabelledCSR:
    """An in-CSR over arbitrary node objects, with per-edge attribute arrays.

    Attributes
    ----------
    nodes : list
        The node objects in order; dense id ``i`` is ``nodes[i]``.
    indptr, indices : arrays
        In-CSR (for each node, its in-neighbours; undirected graphs: all neighbours).
    edge_data : dict
        ``{attribute: float64 array aligned with indices, or None when every value is 1}``.
    graph : dict
        Graph-level attributes of the source graph.
    """

    def __init__(self, nodes, indptr, indices, edge_data, directed, multigraph,
                 graph_attrs=None):
        self.nodes = nodes
        self.indptr = indptr
        self.indices = indices
        self.edge_data = edge_data
        self._directed = bool(directed)
        self._multigraph = bool(multigraph)
        self.graph = dict(graph_attrs or {})
        self._index = None
        self._node_array = None
        self._graphs = {}
        #: ``{attribute: every value an integer}`` (set by :func:`read_networkx`; an
        #: attribute not listed is taken as integral)
        self.edge_integral = {}
        #: ``{attribute: bool array over the edges, True where the value is an integer
        #: (or absent: networkx's int 1)}`` for attributes that mix ints and floats
        self.edge_mixed = {}

    def is_directed(self):
        return self._directed

    def is_multigraph(self):
        return self._multigraph

    def number_of_nodes(self):
        return len(self.nodes)

    def number_of_edges(self):
        m = int(self.indices.shape[0])
        if self._directed:
            return m
        loops = int(np.count_nonzero(self.indices == np.repeat(
            np.arange(len(self.nodes), dtype=self.indices.dtype), np.diff(self.indptr))))
        return (m - loops) // 2 + loops

    # -- lookups
    @property
    def index(self):
        """``{node: dense id}`` (built on first use)."""
        if self._index is None:
            self._index = dict(zip(self.nodes, range(len(self.nodes))))
        return self._index

    def node_array(self):
        """Nodes as a 1-d object array (for fancy indexing)."""
        if self._node_array is None:
            self._node_array = object_array(self.nodes, len(self.nodes))
        return self._node_array

    def vector(self, mapping, default=0.0):
        """float64 vector over nodes from ``{node: value}`` (missing nodes: ``default``)."""
        get = mapping.get
        return np.fromiter(map(get, self.nodes, [default] * len(self.nodes)),
                           dtype=np.float64, count=len(self.nodes))

    def engine_graph(self, weight=None):
        """The :class:`asapgraph.Graph` using edge attribute ``weight`` (None: unweighted).

        Cached per attribute; graphs share ``indptr``/``indices``.
        """
        if weight is not None and weight not in self.edge_data:
            raise ValueError(f"edge attribute {weight!r} was not converted; use "
                             f"asapgraph.from_networkx(G, weight={weight!r})")
        w = None if weight is None else self.edge_data[weight]
        key = None if w is None else weight
        g = self._graphs.get(key)
        if g is None:
            g = Graph(self.indptr, self.indices, w, source="<networkx>")
            self._graphs[key] = g
        return g

    def out_csr(self, weight=None):
        """``(indptr, indices, weights or None)`` of the out-adjacency."""
        g = self.engine_graph(weight)
        if not self._directed:
            return g.indptr, g.indices, g.weights
        return g.out_csr()


def nodes_are_range(nodes):
    """True when ``nodes`` is exactly ``[0, 1, ..., n-1]`` (plain ints)."""
    n = len(nodes)
    if n == 0:
        return True
    if set(map(type, nodes)) != {int}:
        return False
    try:
        arr = np.fromiter(nodes, dtype=np.int64, count=n)
    except OverflowError:       # a key past int64 (networkx keys are any Python int)
        return False
    return bool(np.array_equal(arr, np.arange(n, dtype=np.int64)))


def _edge_attr_names(datas):
    names = set()
    for d in datas:
        if d:
            names.update(d)
    return names


def read_networkx(G, weight="weight", *, edge_attrs=None, default=1.0, cls=LabelledCSR):
    """Read a networkx graph (any of its four classes) into ``cls`` (a :class:`LabelledCSR`).

    ``weight``: edge attribute to convert (missing on an edge: ``default``), None for none;
    ``edge_attrs``: ``{attribute: default}`` for several attributes (overrides ``weight``),
    or True for every attribute found on some edge.  A non-numeric attribute raises
    ``NotImplementedError``.
    """
    nodes = list(G)
    n = len(nodes)
    directed = G.is_directed()
    multi = G.is_multigraph()
    adj = G._pred if directed else G._adj
    nbrs = list(map(adj.__getitem__, nodes))
    deg = np.fromiter(map(len, nbrs), dtype=np.int64, count=n)
    m_pairs = int(deg.sum())
    vdt = np.int32 if n < 2**31 - 1 else np.int64
    if edge_attrs is None:
        edge_attrs = {} if weight is None else {weight: default}
    plain = all(type(d) is dict for d in nbrs)   # networkx's default factories: read in C
    flat = plain and not multi    # one level of edge data dicts: the C loops apply
    index = None if nodes_are_range(nodes) else dict(zip(nodes, range(n)))
    if plain:
        ids = np.empty(m_pairs, dtype=vdt)
        # with attributes wanted, the same pass tells whether any edge carries data
        some_data = _nxread.adjacency_ids(nbrs, index, ids,
                                          check_data=flat and bool(edge_attrs))[1]
    elif index is None:
        ids = np.fromiter(chain.from_iterable(nbrs), dtype=vdt, count=m_pairs)
    else:
        ids = np.fromiter(map(index.__getitem__, chain.from_iterable(nbrs)), dtype=vdt,
                          count=m_pairs)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(deg, out=indptr[1:])

    values = dict.values if plain else _VALUES

    def datadicts():
        per_pair = chain.from_iterable(map(values, nbrs))
        return chain.from_iterable(map(values, per_pair)) if multi else per_pair

    if multi:
        mult = np.fromiter(map(len, chain.from_iterable(map(values, nbrs))), dtype=np.int64,
                           count=m_pairs)
        ids = np.repeat(ids, mult)
        eptr = np.zeros(m_pairs + 1, dtype=np.int64)
        np.cumsum(mult, out=eptr[1:])
        indptr = eptr[indptr]
    m = int(ids.shape[0])
    if edge_attrs is True:
        edge_attrs = dict.fromkeys(_edge_attr_names(datadicts()), default)
    data = {}
    integral = {}   # attribute -> every value an integer (networkx then sums ints)
    mixed = {}      # attribute -> which edges hold ints, where others hold floats
    # one cheap pass first (fused into the id pass on flat graphs): most graphs carry no
    # edge data at all, and then no attribute pass runs
    bare = bool(edge_attrs) and not (some_data if flat else any(map(len, datadicts())))
    for attr, dflt in edge_attrs.items():
        if bare:
            data[attr] = None if dflt in (None, 1) else np.full(m, float(dflt))
            integral[attr] = True
            continue
        fill = np.nan if dflt is None else dflt
        try:
            if flat:
                w = np.empty(m)
                _, integral[attr], some_int = _nxread.edge_attribute(
                    nbrs, attr, float(fill), w, _INTEGER_TYPES)
            else:
                get = dict.get if values is dict.values else _get
                w = np.fromiter(map(get, datadicts(), repeat(attr), repeat(fill)),
                                dtype=np.float64, count=m)
                kinds = set(map(type, map(get, datadicts(), repeat(attr), repeat(0))))
                integral[attr] = all(issubclass(t, _INTEGER_TYPES) for t in kinds)
                some_int = any(issubclass(t, _INTEGER_TYPES) for t in kinds)
        except (TypeError, ValueError):
            raise NotImplementedError(f"edge attribute {attr!r} is not numeric") from None
        if not integral[attr] and some_int:   # which edges hold ints (absent: networkx's 1)
            mixed[attr] = np.fromiter(
                (isinstance(d.get(attr, 1), _INTEGER_TYPES) for d in datadicts()),
                dtype=bool, count=m)
        data[attr] = None if bool(np.all(w == 1.0)) else w
    out = cls(nodes, indptr, ids, data, directed, multi, getattr(G, "graph", None))
    out.edge_integral = integral
    out.edge_mixed = mixed
    return out
