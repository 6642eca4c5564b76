"""asapgraph: vertex-centric graph processing over MPI, BSP and ASAP modes.

The public API is what this module exports (``__all__``); everything in a
module whose name starts with ``_`` is private.  Importing asapgraph never
initialises MPI: only :mod:`asapgraph.comm` imports mpi4py, when a run needs it.
"""


def _check_built():
    """Refuse, in one clear line, a source checkout whose compiled kernels are not built.

    Python run from the root of a clone (``python -m asapgraph``, ``python -c``, a script
    or a REPL there) imports ``./asapgraph`` before the installed package; without the
    extension modules in ``asapgraph/kernels`` (``pip install .`` builds them elsewhere)
    the first kernel import failed deep inside a command ("No module named
    'asapgraph.kernels._graph'", "cannot import name '_parse'").  As numpy does, this is
    an ImportError at ``import asapgraph`` saying what to do, and under ``python -m
    asapgraph`` one line on stderr and exit status 1.  Cheap: a few ``stat`` calls; an
    installed package and an editable install (in-place extension modules) pass.
    """
    import os
    import sys
    from importlib.machinery import EXTENSION_SUFFIXES

    kernels = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernels")
    if not os.path.exists(os.path.join(kernels, "_graph.pyx")):
        return  # not a source checkout
    if any(os.path.exists(os.path.join(kernels, "_graph" + s)) for s in EXTENSION_SUFFIXES):
        return  # built in place (pip install -e ., setup.py build_ext --inplace)
    root = os.path.dirname(os.path.dirname(kernels))
    msg = (f"asapgraph is being imported from its source tree at {root}, whose compiled "
           "kernels are not built: run from another directory, or install with "
           "`pip install -e .`")
    if sys.argv[:1] == ["-m"] and _main_module(sys).split(".")[0] == __name__:
        sys.stderr.write(msg + "\n")  # python -m asapgraph[.x]: one line, no traceback
        raise SystemExit(1)
    raise ImportError(msg, name=__name__, path=__file__)


def _main_module(sys):
    """The module of ``python [options] -m MODULE args`` while runpy imports its package
    (``sys.argv`` is then ``["-m", *args]``): the word of the interpreter's own arguments
    before ``args`` ("MODULE", or "-mMODULE" written as one word); "" when unknown."""
    args = list(getattr(sys, "orig_argv", None) or ())
    k = len(args) - len(sys.argv)
    if not 0 < k < len(args):
        return ""
    word = args[k]
    return word[word.index("m") + 1:] if word.startswith("-") and "m" in word else word


_check_built()

from asapgraph._version import __version__  # noqa: E402
from asapgraph.errors import InputError, NotConvergedError  # noqa: E402

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
