"""``python -m asapgraph``: the command line (see :mod:`asapgraph.cli`).

Like ``python -m mpi4py``, a rank that fails under MPI aborts the whole job instead of
leaving the other ranks waiting (done in :func:`asapgraph.cli.main`).
"""
import sys

from asapgraph.cli import main

if __name__ == "__main__":
    sys.exit(main())
