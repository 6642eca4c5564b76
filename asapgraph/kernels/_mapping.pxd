# The owner of an anonymous mapping that numpy arrays view (implemented in _mapping.pyx).
cdef class Mapping:
    cdef void *ptr
    cdef size_t length
