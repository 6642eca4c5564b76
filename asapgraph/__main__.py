"""``python -m asapgraph``: the command line (see :mod:`asapgraph.cli`).

Like ``python -m mpi4py``, a rank that fails under MPI aborts the whole job instead of
leaving the other ranks waiting (done in :func:`asapgraph.cli.main`).

The ranks started by ``--np`` run this module.  Once :func:`~asapgraph.cli.main` has
returned the process only exits, so every object alive goes to the collector's permanent
generation (``gc.freeze``): the interpreter's shutdown then skips its full collections
over every object of numpy, mpi4py and the engine (a process with a rank's imports and
150 MB of arrays, busy host: 62 ms median from its last exit handler to its end, 16 ms
with the freeze; a rank of ``--np 2`` on rmat:20: 24-34 -> 9-13 ms).  Exit handlers,
the flush of stdout/stderr and the exit status are unchanged; outputs are closed
explicitly before ``main`` returns.
"""
import gc
import sys

from asapgraph.cli import main

if __name__ == "__main__":
    code = main()
    gc.disable()
    gc.freeze()
    sys.exit(code)
