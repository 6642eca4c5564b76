"""asapgraph: vertex-centric graph processing over MPI, BSP and ASAP modes.

The public API is what this module exports (``__all__``); everything in a
module whose name starts with ``_`` is private.  Importing asapgraph never
initialises MPI: only :mod:`asapgraph.dist` imports mpi4py, when it is used.
"""
from ._version import __version__
from . import generators
from .errors import InputError, NotConvergedError
from .graph import Graph
from .io import load_binary, load_graph, read_edges, save_binary
from .output import write_values
from .pagerank import PageRankResult, pagerank
from .programs import ProgramResult, VertexProgram, run

__all__ = [
    "__version__",
    "Graph",
    "InputError",
    "NotConvergedError",
    "PageRankResult",
    "ProgramResult",
    "VertexProgram",
    "generators",
    "load_binary",
    "load_graph",
    "pagerank",
    "read_edges",
    "run",
    "save_binary",
    "write_values",
]
