"""asapgraph: vertex-centric graph processing over MPI, BSP and ASAP modes.

The public API is what this module exports (``__all__``); everything in a
module whose name starts with ``_`` is private.  Importing asapgraph never
initialises MPI: only :mod:`asapgraph.comm` imports mpi4py, when a run needs it.
"""
from asapgraph._version import __version__
from asapgraph.graph import generators
from asapgraph.errors import InputError, NotConvergedError
from asapgraph.graph.core import Graph
from asapgraph.graph.io import load_binary, load_graph, read_edges, save_binary
from asapgraph.programs.pagerank import PageRankResult, pagerank

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
    "from_networkx",
]

#: Names imported on first use (PEP 562): output formatting and the vertex programs
#: are not needed to load a graph and iterate (an MPI rank does only that), and cost
#: about 2 MB resident to import.
_LAZY = {"write_values": "graph.io.output", "ProgramResult": "programs", "VertexProgram": "programs",
         "run": "programs", "from_networkx": "interop"}


def __getattr__(name):
    mod = _LAZY.get(name)
    if mod is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f".{mod}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
