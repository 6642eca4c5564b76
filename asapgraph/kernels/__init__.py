"""Compiled kernels (Cython over csrc/): hot loops only, no Python objects on the
hot path, no MPI.  Every module here is private; the packages above call them."""
