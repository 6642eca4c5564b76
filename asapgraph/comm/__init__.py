"""The only package that imports mpi4py (lazily): communicators, typed buffer
exchanges, the launcher that starts ``mpiexec`` for ``--np``."""
