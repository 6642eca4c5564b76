"""Memory discipline of the partitioned loader: phase lines, RSS trace, glibc tuning.

Rationale
---------
The loader's peak resident size is what limits the graph a rank can load, so every
phase of :mod:`asapgraph.partition.loader` (reading, id mapping, shuffle, CSR build)
works in bounded blocks (:data:`BLOCK` edges) and frees full-size arrays as soon as
they are consumed.  This module holds what those phases share for that: the block
size, the per-phase trace of current and peak RSS (:data:`MEM_TRACE`, filled only when
``ASAPGRAPH_MEM_TRACE`` is set, read by tests and benchmarks), the progress line of a
phase on rank 0, and the glibc ``malloc`` settings that make freed edge-sized arrays
leave the resident set (a fixed mmap threshold, ``malloc_trim`` between phases).
"""
from __future__ import annotations

import os
import time

__all__ = ["MEM_TRACE", "BLOCK", "phase", "mem_mark", "tune_malloc", "trim_malloc"]

#: per-phase memory trace ``(label, rss_mb, peak_mb)`` when ASAPGRAPH_MEM_TRACE is set
MEM_TRACE = []
#: edges per block of the loops over a rank's edges: their temporaries (a few arrays of
#: this many int64) stay around 1 MB, well under the edge arrays themselves
BLOCK = 1 << 16


def _peak_mb():
    from asapgraph._rss import peak_rss_bytes

    return peak_rss_bytes() / 2**20


def phase(progress, text, t0):
    """A loader phase on rank 0's progress stream (nothing when ``progress`` is None)."""
    if progress is not None:
        progress.stage(f"{text} ({time.perf_counter() - t0:.1f} s)")


def mem_mark(label):
    """Record current and peak RSS after a loader phase (only when tracing; tests/benchmarks)."""
    if not os.environ.get("ASAPGRAPH_MEM_TRACE"):
        return
    try:
        with open("/proc/self/statm") as f:
            rss = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:  # pragma: no cover - not Linux
        rss = float("nan")
    MEM_TRACE.append((label, rss, _peak_mb()))


_MALLOC_TUNED = []


def tune_malloc():
    """Give big blocks back to the OS when freed (glibc; once per process).

    glibc raises its mmap threshold after a large block is freed, so later edge-sized
    arrays land on the heap and freeing them no longer lowers the resident size: the
    loader's short-lived temporaries would then all count towards the rank's peak.  A
    fixed threshold (1 MiB) keeps every array above it in its own mapping.
    """
    if _MALLOC_TUNED:
        return
    _MALLOC_TUNED.append(True)
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-3, 1 << 20)  # M_MMAP_THRESHOLD
    except (OSError, AttributeError):  # pragma: no cover - not glibc
        pass


def trim_malloc():
    """Return free heap pages to the OS (glibc ``malloc_trim``); no-op elsewhere."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # pragma: no cover - not glibc
        pass

