"""The networkx backend's graph object: a networkx graph converted once into asapgraph's arrays.

Rationale
---------
The conversion itself (node order, in-CSR read off ``G._pred`` / ``G._adj`` with no Python
bytecode per edge, edge attributes as float64 arrays) is the graph layer's
:func:`asapgraph.graph.nxcsr.read_networkx`, which :func:`asapgraph.graph.convert.as_graph`
uses as well.  This module adds what networkx sees: the object carries
``__networkx_backend__ = "asapgraph"`` so that networkx functions called on it dispatch to
the backend directly (a converted graph is reused), the few methods networkx's decorators ask
of a graph (``is_directed``, ``is_multigraph``, ``len``, ``in``), and the way back
(:meth:`NxGraph.to_networkx`).
"""
from __future__ import annotations

import numpy as np

from asapgraph.graph.nxcsr import LabelledCSR, read_networkx

__all__ = ["NxGraph", "from_networkx"]


class NxGraph(LabelledCSR):
    """asapgraph's view of a networkx graph (in-CSR, node labels, edge attributes).

    Attributes
    ----------
    nodes : list
        The networkx nodes in ``G``'s order; dense id ``i`` is ``nodes[i]``.
    indptr, indices : arrays
        In-CSR (for each node, its in-neighbours; undirected graphs: all neighbours).
    edge_data : dict
        ``{attribute: float64 array aligned with indices, or None when every value is 1}``
        (``edge_integral``/``edge_mixed`` tell which edges held ints: :meth:`to_networkx`
        gives them back as ints).
    """

    __networkx_backend__ = "asapgraph"

    def __init__(self, nodes, indptr, indices, edge_data, directed, multigraph,
                 graph_attrs=None):
        super().__init__(nodes, indptr, indices, edge_data, directed, multigraph, graph_attrs)
        self.__networkx_cache__ = {}

    # -- the parts of the networkx graph API that networkx's dispatch machinery uses
    # (is_directed, is_multigraph, number_of_nodes/edges: LabelledCSR)
    def __len__(self):
        return len(self.nodes)

    def __iter__(self):
        return iter(self.nodes)

    def __contains__(self, node):
        try:
            return node in self.index
        except TypeError:
            return False

    def __repr__(self):
        kind = ("Multi" if self._multigraph else "") + ("DiGraph" if self._directed else "Graph")
        return f"asapgraph.NxGraph({kind}, n={len(self.nodes)}, m={self.number_of_edges()})"

    # -- back to networkx
    def to_networkx(self):
        """An equivalent networkx graph (nodes, edges and the converted attributes)."""
        import networkx as nx

        cls = {(True, True): nx.MultiDiGraph, (True, False): nx.DiGraph,
               (False, True): nx.MultiGraph, (False, False): nx.Graph}[
                   (self._directed, self._multigraph)]
        G = cls()
        G.graph.update(self.graph)
        G.add_nodes_from(self.nodes)
        n = len(self.nodes)
        dst = np.repeat(np.arange(n, dtype=np.int64), np.diff(self.indptr))
        src = self.indices.astype(np.int64)
        keep = slice(None) if self._directed else np.flatnonzero(src <= dst)
        src, dst = src[keep], dst[keep]
        nodes = self.node_array()
        us, vs = nodes[src].tolist(), nodes[dst].tolist()
        attrs = [(a, w[keep]) for a, w in self.edge_data.items() if w is not None]
        if attrs:
            names = [a for a, _ in attrs]
            cols = [self._edge_values(a, w, keep) for a, w in attrs]
            datas = map(dict, map(zip, [names] * len(us), zip(*cols)))
            G.add_edges_from(zip(us, vs, datas))
        else:
            G.add_edges_from(zip(us, vs))
        return G

    def _edge_values(self, attr, w, keep):
        """The values of ``attr`` (``w``, already cut by ``keep``) as networkx held them:
        ints where the graph's edges held ints (read as float64; they came back as
        floats), floats elsewhere."""
        integral = getattr(self, "edge_integral", {}).get(attr, False)
        mixed = getattr(self, "edge_mixed", {}).get(attr)
        finite = np.isfinite(w)
        if integral and finite.all():
            return w.astype(np.int64).tolist()
        if mixed is None:
            return w.tolist()
        ints = mixed[keep] & finite
        out = np.array(w.tolist(), dtype=object)
        out[ints] = w[ints].astype(np.int64).tolist()
        return out.tolist()


def from_networkx(G, weight="weight", *, edge_attrs=None, default=1.0):
    """Convert a networkx graph once; networkx functions accept the result directly.

    Parameters
    ----------
    G : networkx.Graph, DiGraph, MultiGraph or MultiDiGraph
        Nodes may be any hashable objects.
    weight : str or None
        Edge attribute to convert (missing on an edge: ``default``); None: none.
    edge_attrs : dict, optional
        ``{attribute: default}`` to convert several attributes (overrides ``weight``).

    Returns
    -------
    NxGraph
        ``nx.pagerank(result)`` (and every function the ``asapgraph`` backend implements)
        runs on asapgraph without converting again.
    """
    if not all(hasattr(G, a) for a in ("_adj", "_node", "is_directed", "is_multigraph")):
        # (a dict was "'dict' object has no attribute 'is_directed'", None "'NoneType'
        # object is not iterable": errors from inside the reader)
        kind = type(G)
        raise TypeError(f"from_networkx: expected a networkx graph (Graph, DiGraph, "
                        f"MultiGraph or MultiDiGraph), got {kind.__module__}.{kind.__qualname__}")
    return read_networkx(G, weight, edge_attrs=edge_attrs, default=default, cls=NxGraph)
