"""Progress reports on stderr (silent with ``--quiet``).

Library functions take ``progress=None`` or a :class:`Progress`; they call
``progress.stage(...)``, ``progress.bytes(...)`` and ``progress.iteration(...)``.
Output is throttled (at most a few lines per second) and written only by the
process that owns it (rank 0 under MPI), so it never floods a terminal or a log.
"""
from __future__ import annotations

import sys
import time


class Progress:
    """Throttled, human-readable progress lines on a stream (stderr by default)."""

    def __init__(self, quiet=False, stream=None, interval=0.5, prefix="asapgraph"):
        self.quiet = quiet
        self.stream = stream if stream is not None else sys.stderr
        self.interval = interval
        self.prefix = prefix
        self._last = 0.0
        self._t0 = time.perf_counter()

    def _emit(self, text, force=False):
        if self.quiet:
            return
        now = time.perf_counter()
        if not force and now - self._last < self.interval:
            return
        self._last = now
        # one write of the whole line: print() writes the text and the newline apart, and
        # a Ctrl-C between the two left the text alone in the stream's buffer; the rank's
        # exit flushed it, and the job's "asapgraph: interrupted" line was glued to it
        # ("asapgraph: wave 12, bound 1.2e-03asapgraph: interrupted")
        self.stream.write(f"{self.prefix}: {text}\n")
        self.stream.flush()

    def stage(self, text):
        """A new phase (``loading edges.txt.gz``, ``building CSR``...): always printed."""
        self._emit(text, force=True)

    def bytes(self, done, total=None, edges=None, label="read"):
        """Bytes consumed so far (``total`` None when unknown, e.g. stdin or .gz)."""
        el = max(time.perf_counter() - self._t0, 1e-9)
        parts = [f"{label} {done / 1e6:,.1f} MB"]
        if total:
            parts.append(f"of {total / 1e6:,.1f} MB ({100.0 * done / total:.0f}%)")
        parts.append(f"{done / 1e6 / el:,.0f} MB/s")
        if edges is not None:
            parts.append(f"{edges:,} edges ({edges / el / 1e6:,.1f} M edges/s)")
        self._emit(", ".join(parts))

    def iteration(self, it, residual, force=False, what=("iteration", "residual"), **extra):
        """One iteration of an iterative algorithm (``what``: the names of the step and
        of the quantity, e.g. ``("wave", "bound")``)."""
        more = "".join(f", {k} {v}" for k, v in extra.items())
        self._emit(f"{what[0]} {it}, {what[1]} {residual:.3e}{more}", force=force)

    def done(self, text):
        self._emit(text, force=True)


NULL = Progress(quiet=True)


def get(progress):
    """``progress`` or a silent stand-in when it is None."""
    return NULL if progress is None else progress
