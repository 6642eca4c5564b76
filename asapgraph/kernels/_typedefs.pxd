# One place for the C types shared by every kernel (numpy dtypes in _typedefs.py).
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t

ctypedef int64_t eid_t      # edge offsets (indptr): always 64-bit
ctypedef int32_t vid32_t    # vertex ids when n < 2**31 (the usual case)
ctypedef int64_t vid64_t    # vertex ids otherwise
ctypedef int64_t orig_t     # original (user) vertex ids
ctypedef double weight_t    # edge weights and vertex values

ctypedef fused vid_t:
    int32_t
    int64_t
