"""asapgraph: vertex-centric graph processing over MPI, BSP and ASAP modes.

The public API is what this module exports (``__all__``); everything in a
module whose name starts with ``_`` is private.  Importing asapgraph never
initialises MPI: only :mod:`asapgraph.comm` imports mpi4py, when a run needs it.
"""
from asapgraph._version import __version__
from asapgraph.errors import InputError, NotConvergedError

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

#: Names imported on first use (PEP 562): ``import asapgraph`` (and the command line,
#: which must start ``mpiexec`` at once for ``--np K``) loads neither numpy nor a kernel;
#: output formatting and the vertex programs are not needed to load a graph and iterate
#: (an MPI rank does only that), and cost about 2 MB resident to import.
_LAZY = {"Graph": "graph.core", "load_binary": "graph.io", "load_graph": "graph.io",
         "read_edges": "graph.io", "save_binary": "graph.io",
         "PageRankResult": "programs.pagerank", "pagerank": "programs.pagerank",
         "write_values": "graph.io.output", "ProgramResult": "programs", "VertexProgram": "programs",
         "run": "programs", "from_networkx": "interop"}
_LAZY_MODULES = {"generators": "graph.generators"}


def __getattr__(name):
    from importlib import import_module

    if name in _LAZY_MODULES:
        value = import_module(f".{_LAZY_MODULES[name]}", __name__)
    elif name in _LAZY:
        value = getattr(import_module(f".{_LAZY[name]}", __name__), name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY) | set(_LAZY_MODULES))
