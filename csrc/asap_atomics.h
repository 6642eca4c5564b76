/* asap_atomics.h: lock-free combine-into-memory helpers for parallel push kernels.
 *
 * Plain C99 + GCC/Clang __atomic builtins, no Python.h, no MPI.  Each helper combines
 * `v` into `*p` atomically and returns 1 when it changed the stored value (min/max) or
 * always 1 (add).  min/max on doubles use a compare-and-swap loop on the 64-bit pattern;
 * the loop exits early when the stored value is already at least as good, so contention
 * costs only when a value really improves.  Relaxed ordering is enough: the kernels
 * read the results only after the OpenMP parallel region (an implicit barrier).
 */
#ifndef ASAP_ATOMICS_H
#define ASAP_ATOMICS_H

#include <stdint.h>
#include <string.h>

static inline int asap_atomic_min_f64(double *p, double v)
{
    uint64_t *pi = (uint64_t *)p;
    uint64_t cur = __atomic_load_n(pi, __ATOMIC_RELAXED);
    for (;;) {
        double c;
        memcpy(&c, &cur, sizeof c);
        if (!(v < c))
            return 0;
        uint64_t nv;
        memcpy(&nv, &v, sizeof nv);
        if (__atomic_compare_exchange_n(pi, &cur, nv, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            return 1;
    }
}

static inline int asap_atomic_max_f64(double *p, double v)
{
    uint64_t *pi = (uint64_t *)p;
    uint64_t cur = __atomic_load_n(pi, __ATOMIC_RELAXED);
    for (;;) {
        double c;
        memcpy(&c, &cur, sizeof c);
        if (!(v > c))
            return 0;
        uint64_t nv;
        memcpy(&nv, &v, sizeof nv);
        if (__atomic_compare_exchange_n(pi, &cur, nv, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            return 1;
    }
}

static inline int asap_atomic_add_f64(double *p, double v)
{
    uint64_t *pi = (uint64_t *)p;
    uint64_t cur = __atomic_load_n(pi, __ATOMIC_RELAXED);
    for (;;) {
        double c, s;
        memcpy(&c, &cur, sizeof c);
        s = c + v;
        uint64_t nv;
        memcpy(&nv, &s, sizeof nv);
        if (__atomic_compare_exchange_n(pi, &cur, nv, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            return 1;
    }
}

static inline int asap_atomic_min_i64(int64_t *p, int64_t v)
{
    int64_t cur = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (v < cur) {
        if (__atomic_compare_exchange_n(p, &cur, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            return 1;
    }
    return 0;
}

static inline int asap_atomic_max_i64(int64_t *p, int64_t v)
{
    int64_t cur = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (v > cur) {
        if (__atomic_compare_exchange_n(p, &cur, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            return 1;
    }
    return 0;
}

static inline int asap_atomic_add_i64(int64_t *p, int64_t v)
{
    __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
    return 1;
}

static inline void asap_atomic_store_u8(uint8_t *p, uint8_t v)
{
    __atomic_store_n(p, v, __ATOMIC_RELAXED);
}

/* Set *p from 0 to 1; returns 1 for the one caller that did it (queue de-duplication). */
static inline int asap_atomic_claim_u8(uint8_t *p)
{
    uint8_t expected = 0;
    if (__atomic_load_n(p, __ATOMIC_RELAXED))
        return 0;
    return __atomic_compare_exchange_n(p, &expected, 1, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

static inline int64_t asap_atomic_fetch_add_i64(int64_t *p, int64_t v)
{
    return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}

static inline double asap_atomic_load_f64(const double *p)
{
    uint64_t b = __atomic_load_n((const uint64_t *)p, __ATOMIC_RELAXED);
    double d;
    memcpy(&d, &b, sizeof d);
    return d;
}

static inline int64_t asap_atomic_load_i64(const int64_t *p)
{
    return __atomic_load_n(p, __ATOMIC_RELAXED);
}

/* Compare-and-swap: if *p == expected store desired and return 1, else return 0. */
static inline int asap_cas_i64(int64_t *p, int64_t expected, int64_t desired)
{
    return __atomic_compare_exchange_n(p, &expected, desired, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

/* int32 twins of the load and the compare-and-swap (union-find parents of graphs with
 * n < 2^31: half the memory traffic of int64 parents). */
static inline int32_t asap_atomic_load_i32(const int32_t *p)
{
    return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static inline int asap_cas_i32(int32_t *p, int32_t expected, int32_t desired)
{
    return __atomic_compare_exchange_n(p, &expected, desired, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

/* Plain atomic store of an int64 (relaxed): no torn writes seen by concurrent readers. */
static inline void asap_atomic_store_i64(int64_t *p, int64_t v)
{
    __atomic_store_n(p, v, __ATOMIC_RELAXED);
}

/* Full (sequentially consistent) fence: orders a flag store before a later load, which
 * relaxed atomics (and x86's store buffer) do not. */
static inline void asap_fence(void)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

#endif /* ASAP_ATOMICS_H */
