"""Preamble of the worker scripts that MPI tests write to a temporary directory and run
under ``mpiexec`` (the tests prepend this file's text): numpy, mpi4py, and an
``excepthook`` that aborts the whole job, so that an exception on one rank does not leave
the others waiting until the test's timeout."""
import json  # noqa: F401 (for the worker that follows)
import sys

import numpy as np  # noqa: F401 (for the worker that follows)
from mpi4py import MPI


def _abort(*exc):
    import traceback
    traceback.print_exception(*exc)
    MPI.COMM_WORLD.Abort(1)


sys.excepthook = _abort
