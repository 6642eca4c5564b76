# The one thread-count state of the program kernels (owned by _progthreads.pyx).
from libc.stdint cimport int64_t

# Threads for a kernel with ``work`` units: 1 below the parallel threshold, else the cap
# set by ``set_num_threads`` or OpenMP's default.
cdef int nt(int64_t work) noexcept nogil
