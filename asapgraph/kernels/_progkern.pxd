# Shared inline helpers of the vertex-program kernels (_edgemap.pyx, _minmax.pyx).
# Operator codes: op 0 copy, 1 mul, 2 add, 3 add_one; combiner codes: 0 sum, 1 min, 2 max
# (the OP_* / COMB_* constants of asapgraph.kernels._programs).
from libc.stdint cimport int64_t, uint8_t

cdef extern from "asap_atomics.h" nogil:
    int asap_atomic_min_f64(double *p, double v)
    int asap_atomic_max_f64(double *p, double v)
    int asap_atomic_add_f64(double *p, double v)
    int asap_atomic_min_i64(int64_t *p, int64_t v)
    int asap_atomic_max_i64(int64_t *p, int64_t v)
    int asap_atomic_add_i64(int64_t *p, int64_t v)
    void asap_atomic_store_u8(uint8_t *p, uint8_t v)
    int asap_atomic_claim_u8(uint8_t *p)
    int64_t asap_atomic_fetch_add_i64(int64_t *p, int64_t v)
    double asap_atomic_load_f64(const double *p)
    int64_t asap_atomic_load_i64(const int64_t *p)
    void asap_fence()
    int asap_cas_i64(int64_t *p, int64_t expected, int64_t desired)
    void asap_atomic_store_i64(int64_t *p, int64_t v)

ctypedef fused val_t:
    double
    int64_t


cdef inline val_t _edge(int op, val_t x, double w) noexcept nogil:
    if op == 0:
        return x
    elif op == 1:
        return <val_t>(x * w)
    elif op == 2:
        return <val_t>(x + w)
    else:
        return x + 1


cdef inline val_t _comb(int comb, val_t a, val_t b) noexcept nogil:
    if comb == 0:
        return a + b
    elif comb == 1:
        return b if b < a else a
    else:
        return b if b > a else a


cdef inline bint _better(int comb, val_t a, val_t b) noexcept nogil:
    """``a`` strictly improves on ``b`` under min (comb 1) or max (comb 2)."""
    if comb == 1:
        return a < b
    return a > b


cdef inline int _atomic_better(int comb, val_t *p, val_t v) noexcept nogil:
    if val_t is double:
        if comb == 1:
            return asap_atomic_min_f64(p, v)
        return asap_atomic_max_f64(p, v)
    else:
        if comb == 1:
            return asap_atomic_min_i64(p, v)
        return asap_atomic_max_i64(p, v)


cdef inline val_t _atomic_load(val_t *p) noexcept nogil:
    if val_t is double:
        return asap_atomic_load_f64(p)
    else:
        return asap_atomic_load_i64(p)
