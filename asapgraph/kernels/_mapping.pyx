# cython: language_level=3
"""The one owner of an anonymous memory mapping that numpy arrays view.

The loaders (:mod:`asapgraph.kernels._parse`) and the CSR build
(:mod:`asapgraph.kernels._graph`) hand out arrays in their own ``mmap``-ed pages (4 KB
pages, ``MADV_NOHUGEPAGE``: benchmarks/REPORT.md, issue 13).  An array's base is a
:class:`Mapping`; the pages are unmapped when the last view goes.  A ``cdef class`` can
be shared between extension modules only through a ``.pxd``, so it lives here and both
modules ``cimport`` it.  Whoever fills ``ptr``/``length`` gives the mapping away; a
caller may shrink ``length`` after unmapping the tail itself.
"""
from posix.mman cimport munmap


cdef class Mapping:
    def __dealloc__(self):
        if self.ptr != NULL and self.length:
            munmap(self.ptr, self.length)
            self.ptr = NULL
