"""Graphs on one process: the :class:`Graph` type, readers and writers (:mod:`.io`),
generators.  No MPI here."""
from asapgraph.graph.core import Graph, remap_ids

__all__ = ["Graph", "remap_ids"]
