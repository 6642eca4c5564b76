/* asap_prefetch.h: software prefetch hints for gather-bound kernels.
 *
 * Plain C99 + the GCC/Clang __builtin_prefetch builtin (a no-op elsewhere), no Python.h,
 * no MPI.  A prefetch never faults, but the address must still be computed from valid
 * memory: callers read indices[k + distance] only when that index exists.
 *   asap_prefetch_r(p):  read, keep in all cache levels (locality 3).
 *   asap_prefetch_r1(p): read, low temporal locality (locality 1: L2 and beyond).
 */
#ifndef ASAP_PREFETCH_H
#define ASAP_PREFETCH_H

#if defined(__GNUC__) || defined(__clang__)
#define asap_prefetch_r(p) __builtin_prefetch((const void *)(p), 0, 3)
#define asap_prefetch_r1(p) __builtin_prefetch((const void *)(p), 0, 1)
#else
#define asap_prefetch_r(p) ((void)(p))
#define asap_prefetch_r1(p) ((void)(p))
#endif

#endif /* ASAP_PREFETCH_H */
