"""Rank 0's standard input under the user's own mpiexec, drained as it arrives.

MPICH's Hydra forwards the user's standard input to rank 0 only as fast as rank 0 reads
it, and stopped the job ("process reading stdin too slowly", then "mpiexec was killed by
SIGPIPE") when rank 0 left ~200 KB or more waiting -- while it imported numpy and MPI,
or while it dealt the lines it had read to the other ranks.  :func:`start` replaces
``sys.stdin`` of that rank with a :class:`Spool`: a thread reads descriptor 0 as fast as
the data comes and keeps it, the first :data:`MEMORY_BYTES` in memory, the rest in an
unnamed temporary file; the program reads the spool at its own pace, the same bytes in
the same order.  (``--np K`` needs none: rank 0 reads the launcher's standard input
itself, :func:`asapgraph.comm.launch.run_ranks`.)
"""
from __future__ import annotations

import collections
import io
import os
import sys
import threading

__all__ = ["Spool", "start", "MEMORY_BYTES"]

#: bytes kept in memory before the rest goes to a temporary file
MEMORY_BYTES = 64 << 20

#: bytes read from descriptor 0 at a time
_BLOCK = 1 << 20


class Spool(io.RawIOBase):
    """Reads descriptor ``fd`` to its end in a background thread; ``readinto``/``read``
    give its bytes in order, waiting for them when the thread has not got them yet.  A
    read error of the thread is raised by the read that reaches it."""

    def __init__(self, fd=0, memory_bytes=None):
        super().__init__()
        self._fd = fd
        self._limit = MEMORY_BYTES if memory_bytes is None else int(memory_bytes)
        self._cond = threading.Condition()
        self._mem = collections.deque()   # bytes objects, in order, before the file's
        self._mem_bytes = 0
        self._file = None                 # descriptor of the unnamed spill file
        self._written = 0                 # bytes in the spill file
        self._taken = 0                   # of them, bytes read back
        self._eof = False
        self._error = None
        self.received = 0                 # bytes read from fd so far
        self.spilled = False              # some went to the temporary file
        _grow_pipe(fd)
        self._thread = threading.Thread(target=self._drain, name="asapgraph-stdin",
                                        daemon=True)
        self._thread.start()

    # ------------------------------------------------------------------ the thread
    def _drain(self):
        try:
            while True:
                try:
                    data = os.read(self._fd, _BLOCK)
                except InterruptedError:  # pragma: no cover (retried by Python)
                    continue
                if not data:
                    break
                self._keep(data)
        except BaseException as exc:  # noqa: BLE001 - handed to the reader
            with self._cond:
                self._error = exc
        finally:
            with self._cond:
                self._eof = True
                self._cond.notify_all()

    def _keep(self, data):
        with self._cond:
            spill = self._file is not None or self._mem_bytes + len(data) > self._limit
        if spill:
            if self._file is None:
                import tempfile

                f = tempfile.TemporaryFile(prefix="asapgraph-stdin-")
                self._file = os.dup(f.fileno())   # unnamed: gone when closed
                f.close()
                self.spilled = True
            view = memoryview(data)
            at = self._written
            while view:   # (the reader reads below self._written only)
                k = os.pwrite(self._file, view, at)
                view, at = view[k:], at + k
        with self._cond:
            if spill:
                self._written += len(data)
            else:
                self._mem.append(data)
                self._mem_bytes += len(data)
            self.received += len(data)
            self._cond.notify_all()

    # ------------------------------------------------------------------ the reader
    def readable(self):
        return True

    def fileno(self):
        raise io.UnsupportedOperation("the spooled standard input has no descriptor")

    def readinto(self, b):
        with memoryview(b) as view, view.cast("B") as out:
            if not len(out):
                return 0
            with self._cond:
                while not (self._mem or self._taken < self._written or self._eof):
                    self._cond.wait()
                if self._mem:
                    head = self._mem[0]
                    k = min(len(head), len(out))
                    out[:k] = head[:k]
                    if k == len(head):
                        self._mem.popleft()
                    else:
                        self._mem[0] = head[k:]
                    self._mem_bytes -= k
                    return k
                at, avail = self._taken, self._written - self._taken
                if not avail:   # at the end
                    if self._error is not None:
                        err, self._error = self._error, None
                        raise err
                    return 0
            got = os.preadv(self._file, [out[:min(avail, len(out))]], at)
            with self._cond:
                self._taken += got
            return got

    def close(self):
        if self._file is not None and self._eof:
            try:
                os.close(self._file)
            except OSError:
                pass
            self._file = None
        super().close()


def _grow_pipe(fd, size=1 << 20):
    """Let the pipe ``fd`` hold ``size`` bytes (Linux ``F_SETPIPE_SZ``; 64 KiB by default,
    up to ``/proc/sys/fs/pipe-max-size`` without privileges): Hydra's write of a block
    that does not fit whole ends the job, so the room left while the drain thread waits
    for a core is what counts.  Nothing happens elsewhere."""
    import stat

    try:
        if stat.S_ISFIFO(os.fstat(fd).st_mode):
            import fcntl

            fcntl.fcntl(fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), size)
    except (OSError, ImportError):
        pass


def start(fd=0):
    """Drain descriptor ``fd`` (standard input) from now on; ``sys.stdin`` becomes a text
    wrapper of the :class:`Spool` (its ``buffer`` the readers use).  None when the
    process has no standard input (descriptor 0 closed: left as it is)."""
    if sys.stdin is None:
        return None
    try:
        os.fstat(fd)
    except OSError:
        return None
    spool = Spool(fd)
    sys.stdin = io.TextIOWrapper(io.BufferedReader(spool, 1 << 16))
    return spool
