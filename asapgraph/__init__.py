"""asapgraph: vertex-centric graph processing over MPI, BSP and ASAP modes."""
from ._version import __version__
from .errors import InputError, NotConvergedError
from .graph import Graph

__all__ = ["__version__", "Graph", "InputError", "NotConvergedError"]
