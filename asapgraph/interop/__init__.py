"""The networkx backend: ``nx.pagerank(G, backend="asapgraph")`` (entry points in
``pyproject.toml``, :mod:`.nx_backend`) and its graph object (:mod:`.nxgraph`).

``asapgraph.from_networkx(G)`` converts once and returns a graph that networkx functions
dispatch on directly; ``nx.pagerank(G, backend="asapgraph")`` converts on the fly.  The
converters of scipy sparse matrices, pandas DataFrames, pyarrow Tables and hashable vertex
labels live in the graph layer (:mod:`asapgraph.graph.convert`) and are re-exported here.
pandas and pyarrow are optional extras (``asapgraph[pandas]``, ``asapgraph[arrow]``).
"""
from asapgraph.graph.convert import (as_graph, from_arrow, from_edge_array, from_labels,
                                     from_pandas, from_scipy, require)
from asapgraph.interop.nxgraph import NxGraph, from_networkx

__all__ = ["as_graph", "from_networkx", "NxGraph", "from_scipy", "from_pandas", "from_arrow",
           "from_labels", "from_edge_array", "require"]
