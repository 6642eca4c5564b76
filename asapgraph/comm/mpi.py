"""MPI plumbing shared by the distributed modules: lazy import, typed collectives, error agreement.

Only :mod:`asapgraph.engine` imports mpi4py, and always through :func:`mpi` (lazily), so
``import asapgraph`` never initialises MPI.  Data always travels as typed numpy buffers
through the uppercase mpi4py methods (no pickling); only one-off control messages
(an error text) use the pickle-based lowercase methods.
"""
from __future__ import annotations

import time

import numpy as np

from asapgraph.errors import InputError

__all__ = ["mpi", "world", "alltoallv", "alltoallv_into", "alltoallv_remote", "allgatherv",
           "agree", "RankFailure", "OutOfStep", "debug_traceback", "MeteredComm", "same_host_ranks"]

# message tags (the loader, the engines and the emulation share one table)
TAG_CHUNK_HDR = 101
TAG_CHUNK = 102
TAG_EXCHANGE = 103  # alltoallv's point-to-point path (counts beyond int)
TAG_DATA = 201
TAG_ACK = 202
TAG_GOSSIP = 203
TAG_SLOTS = 204  # a push layout's slot order, to the peer that decodes it (setup)

#: Largest element count one MPI call may carry (``int`` counts and displacements).
#: :func:`alltoallv` switches to point-to-point messages beyond it (tests lower it).
COUNT_LIMIT = 2**31 - 1


def mpi():
    """The ``mpi4py.MPI`` module (imported on first use; the first call also keeps a niced
    process's priority under autogroup scheduling, :func:`keep_autogroup_nice`)."""
    if not _NICE_KEPT:
        _NICE_KEPT.append(keep_autogroup_nice())
    from mpi4py import MPI

    return MPI


_NICE_KEPT = []


def keep_autogroup_nice(path="/proc/self/autogroup"):
    """Give this process's scheduling autogroup the process's own nice value when that is
    higher (lower priority); returns the autogroup's nice value after, or None where there
    is no autogroup (not Linux, ``sched_autogroup_enabled = 0``, no permission) or the
    process does not lead its session (then nothing is changed).

    Why: with autogroup scheduling (Linux's default on desktops and on the benchmark host
    of benchmarks/REPORT.md) CPU time is shared between *sessions* first, by the session's
    autogroup nice, and ``nice`` orders processes only within a session.  MPICH's hydra
    starts every rank in a session of its own (and ``asapgraph bench`` starts mpiexec in
    one), whose autogroup begins at nice 0 -- so ``nice -n 19 asapgraph ... --np 4`` ran
    its ranks at normal priority against every other session (seventeenth and eighteenth
    sessions: background grids and test suites in nice-19 autogroups took the cores from
    wall-clock measurements all the same).  Only ever lowers the priority (writing a
    lower nice than the autogroup has would need ``CAP_SYS_NICE`` and is not attempted), and
    only in a process that leads its session (a rank started by hydra is one): the autogroup
    is the session's, so a command run from a shell never renices the shell's session."""
    from asapgraph.comm.watchdog import keep_autogroup_nice as keep

    return keep(path)


def world():
    return mpi().COMM_WORLD


def versions():
    """mpi4py, MPI library and MPI standard versions (for benchmark records)."""
    import mpi4py

    MPI = mpi()
    try:
        lib = MPI.Get_library_version().strip().splitlines()[0]
    except Exception:  # noqa: BLE001 - some builds cannot report it
        lib = "unknown"
    return {"mpi4py": mpi4py.__version__, "mpi_library": lib,
            "mpi_standard": "%d.%d" % MPI.Get_version()}


def mpi4py_version():
    """The installed mpi4py's version, or None; does not initialise MPI."""
    try:
        import mpi4py
    except ImportError:
        return None
    return mpi4py.__version__


def abort_world(code=1):
    """End the whole MPI job (one rank failed alone: the others must not wait)."""
    mpi().COMM_WORLD.Abort(code)


def allreduce(comm, value, op="sum"):
    """Reduce a scalar or a numpy array over ``comm`` with ``op`` in sum/min/max."""
    MPI = mpi()
    mop = {"sum": MPI.SUM, "min": MPI.MIN, "max": MPI.MAX}[op]
    if np.isscalar(value):
        return comm.allreduce(value, op=mop)
    value = np.ascontiguousarray(value)
    out = np.empty_like(value)
    comm.Allreduce(value, out, op=mop)
    return out


def oversubscribed(comm, threads=1, agree=True):
    """True when this host runs more threads of ``comm``'s ranks (``threads`` each) than
    it has cores (collective).  Cores: the CPUs this process may run on
    (``sched_getaffinity``).  ``agree``: the answer is the same on every rank (true if
    true on any host), for decisions that lead to collective calls."""
    local, cores = _host_ranks_and_cores(comm)
    over = local * max(int(threads), 1) > cores
    return bool(comm.allreduce(over, op=mpi().LOR)) if agree else over


def same_host_ranks(comm):
    """The ranks of ``comm`` that share this rank's host, itself included (collective:
    the shared-memory split of MPI, its group translated to ``comm``'s ranks)."""
    MPI = mpi()
    node = comm.Split_type(MPI.COMM_TYPE_SHARED)
    gn, gc = node.Get_group(), comm.Get_group()
    try:
        mine = MPI.Group.Translate_ranks(gn, list(range(node.Get_size())), gc)
    finally:
        gn.Free()
        gc.Free()
        node.Free()
    return frozenset(int(r) for r in mine)


def _host_ranks_and_cores(comm):
    """``(ranks of comm on this host, cores this process may run on)`` (collective).
    Cores: ``sched_getaffinity`` (``cpu_count`` off Linux)."""
    import os

    node = comm.Split_type(mpi().COMM_TYPE_SHARED)
    try:
        local = node.Get_size()
    finally:
        node.Free()
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        cores = os.cpu_count() or 1
    return local, cores


def host_core_share(comm):
    """Cores of this host per rank of ``comm`` on it, at least 1 (collective): the
    OpenMP threads a rank's loader may use without the ranks' teams spinning against
    each other (2 ranks on 2 cores, rmat:22 text: loading 1.3-1.7 s on one thread per
    rank against 2.4-2.7 s on two)."""
    local, cores = _host_ranks_and_cores(comm)
    return max(1, cores // max(local, 1))


def _mpitype(dtype):
    MPI = mpi()
    dt = np.dtype(dtype)
    return {np.dtype(np.int64): MPI.INT64_T, np.dtype(np.float64): MPI.DOUBLE,
            np.dtype(np.int32): MPI.INT32_T, np.dtype(np.uint8): MPI.UINT8_T}[dt]


def alltoallv(comm, sendbuf, sendcounts):
    """Personalised all-to-all of a typed 1-D array.

    ``sendbuf`` is ordered by destination rank, ``sendcounts[j]`` elements for rank j.
    Returns ``(recvbuf, recvcounts)`` (``recvbuf`` ordered by source rank).
    """
    sendbuf = np.ascontiguousarray(sendbuf)
    sendcounts = np.ascontiguousarray(sendcounts, dtype=np.int64)
    K = comm.Get_size()
    recvcounts = np.empty(K, dtype=np.int64)
    comm.Alltoall([sendcounts, _mpitype(np.int64)], [recvcounts, _mpitype(np.int64)])
    sdis = np.zeros(K, dtype=np.int64)
    np.cumsum(sendcounts[:-1], out=sdis[1:])
    rdis = np.zeros(K, dtype=np.int64)
    np.cumsum(recvcounts[:-1], out=rdis[1:])
    recvbuf = np.empty(int(recvcounts.sum()), dtype=sendbuf.dtype)
    t = _mpitype(sendbuf.dtype)
    MPI = mpi()
    # every rank must take the same branch: the largest total on any rank decides
    big = comm.allreduce(max(int(sendcounts.sum()), int(recvcounts.sum())), op=MPI.MAX)
    if big <= COUNT_LIMIT:
        comm.Alltoallv([sendbuf, (sendcounts, sdis), t], [recvbuf, (recvcounts, rdis), t])
        return recvbuf, recvcounts
    # counts beyond int: one message per peer, at most COUNT_LIMIT elements each
    me = comm.Get_rank()
    reqs = []
    for j in range(K):
        if j != me:
            for a, b in _pieces(rdis[j], recvcounts[j]):
                reqs.append(comm.Irecv([recvbuf[a:b], t], source=j, tag=TAG_EXCHANGE))
    for j in range(K):
        if j != me:
            for a, b in _pieces(sdis[j], sendcounts[j]):
                reqs.append(comm.Isend([sendbuf[a:b], t], dest=j, tag=TAG_EXCHANGE))
    a, c = int(sdis[me]), int(sendcounts[me])
    recvbuf[int(rdis[me]):int(rdis[me]) + c] = sendbuf[a:a + c]  # own share: a copy
    MPI.Request.Waitall(reqs)
    return recvbuf, recvcounts


def alltoallv_into(comm, sendbuf, sendcounts, recvcounts, out):
    """Alltoallv of ``sendbuf`` (ordered by destination) straight into the view ``out``.

    Unlike :func:`alltoallv`, the receive counts are known (``recvcounts``, e.g. from an
    earlier ``Alltoall`` of the counts) and nothing is allocated: ``out`` (length
    ``recvcounts.sum()``, ordered by source rank) may be a slice of a larger array.
    Counts must fit in an int (callers exchange bounded rounds).
    """
    K = comm.Get_size()
    sdis = np.zeros(K, dtype=np.int64)
    np.cumsum(sendcounts[:-1], out=sdis[1:])
    rdis = np.zeros(K, dtype=np.int64)
    np.cumsum(recvcounts[:-1], out=rdis[1:])
    t = _mpitype(sendbuf.dtype)
    comm.Alltoallv([np.ascontiguousarray(sendbuf), (sendcounts, sdis), t],
                   [out, (recvcounts, rdis), t])


def alltoallv_remote(comm, sendbuf, sendcounts, sdispls, recvbuf, recvcounts, rdispls):
    """Alltoallv between given places: ``sendcounts[j]`` elements of ``sendbuf`` from
    ``sdispls[j]`` go to rank j, ``recvcounts[j]`` from rank j land in ``recvbuf`` at
    ``rdispls[j]``; nothing is allocated and nothing moves to this rank itself (its own
    counts are ignored: the caller keeps its own share where it is).  Collective; counts
    or offsets beyond an ``int`` go as point-to-point messages, as in :func:`alltoallv`.
    """
    K, me = comm.Get_size(), comm.Get_rank()
    sc = np.array(sendcounts, dtype=np.int64)
    rc = np.array(recvcounts, dtype=np.int64)
    sd = np.array(sdispls, dtype=np.int64)
    rd = np.array(rdispls, dtype=np.int64)
    sc[me] = rc[me] = sd[me] = rd[me] = 0
    t = _mpitype(sendbuf.dtype)
    MPI = mpi()
    ext = max(int((sd + sc).max(initial=0)), int((rd + rc).max(initial=0)))
    if comm.allreduce(ext, op=MPI.MAX) <= COUNT_LIMIT:
        comm.Alltoallv([sendbuf, (sc, sd), t], [recvbuf, (rc, rd), t])
        return
    reqs = []
    for j in range(K):
        if j != me:
            for a, b in _pieces(rd[j], rc[j]):
                reqs.append(comm.Irecv([recvbuf[a:b], t], source=j, tag=TAG_EXCHANGE))
    for j in range(K):
        if j != me:
            for a, b in _pieces(sd[j], sc[j]):
                reqs.append(comm.Isend([sendbuf[a:b], t], dest=j, tag=TAG_EXCHANGE))
    MPI.Request.Waitall(reqs)


def _pieces(start, count):
    """``(a, b)`` slices of ``[start, start + count)`` of at most COUNT_LIMIT elements
    (in order: MPI keeps the order of messages between two ranks with one tag)."""
    start, end = int(start), int(start) + int(count)
    return [(a, min(a + COUNT_LIMIT, end)) for a in range(start, end, COUNT_LIMIT)]


class MeteredComm:
    """A communicator that sums the thread CPU time spent inside its calls (``cpu``).

    A blocking MPI call busy-polls while its peers catch up (MPICH spins), so the CPU time
    of a collective phase is mostly *other* ranks' lateness -- where ranks share cores,
    whatever the OS gave them.  The virtual clock charges such a phase its own work
    (CPU time minus ``cpu``) and models the communication instead
    (:meth:`asapgraph.engine.emulation.Emulator.collective`).  Everything else is the
    wrapped communicator's."""

    def __init__(self, comm):
        self._comm = comm
        self.cpu = 0.0

    def __getattr__(self, name):
        f = getattr(self._comm, name)
        if not callable(f):
            return f

        def call(*args, **kw):
            c0 = time.thread_time()
            try:
                return f(*args, **kw)
            finally:
                self.cpu += time.thread_time() - c0
        return call


def allgatherv(comm, arr):
    """Concatenation over ranks of a typed 1-D array (and the per-rank counts)."""
    arr = np.ascontiguousarray(arr)
    counts = np.array(comm.allgather(int(arr.shape[0])), dtype=np.int64)
    dis = np.zeros_like(counts)
    np.cumsum(counts[:-1], out=dis[1:])
    out = np.empty(int(counts.sum()), dtype=arr.dtype)
    t = _mpitype(arr.dtype)
    comm.Allgatherv([arr, t], [out, (counts, dis), t])
    return out, counts


def gatherv(comm, arr, root=0):
    """Concatenation over ranks at ``root`` (None elsewhere)."""
    arr = np.ascontiguousarray(arr)
    counts = np.array(comm.gather(int(arr.shape[0]), root=root) or [], dtype=np.int64)
    t = _mpitype(arr.dtype)
    if comm.Get_rank() == root:
        dis = np.zeros_like(counts)
        np.cumsum(counts[:-1], out=dis[1:])
        out = np.empty(int(counts.sum()), dtype=arr.dtype)
        comm.Gatherv([arr, t], [out, (counts, dis), t], root=root)
        return out
    comm.Gatherv([arr, t], None, root=root)
    return None


class RankFailure(Exception):
    """An error found on some rank, re-raised identically on every rank.

    Attributes
    ----------
    rank : int
        Lowest rank that failed.
    message : str
        One line: ``FILE:LINE: message`` for bad input, else ``error on rank r: ...``.
    input_error : bool
        True for bad user input (exit status 2), False for other failures (1).
    stdout_closed : bool
        The failure was a write to a closed standard output (``BrokenPipeError``: ``...
        | head``); the CLI exits 141 quietly, as one process does.
    exc_type, exc_text : str or None
        The failed rank's exception (type name and ``str``) when it was not bad input, so
        that a caller can word the line as one process does (``asapgraph run: X raised
        ...``); None otherwise.
    """

    def __init__(self, rank, message, input_error, stdout_closed=False, exc_type=None,
                 exc_text=None):
        self.rank = rank
        self.message = message
        self.input_error = input_error
        self.stdout_closed = stdout_closed
        self.exc_type = exc_type
        self.exc_text = exc_text
        super().__init__(message)


class OutOfStep(InputError):
    """The ranks' collective calls are out of step (found by :func:`agree`): this rank's
    error agreement met another rank's collective, typically a program callback that
    called ``ctx.allreduce`` on some ranks only.  Not agreed (the ranks are out of step):
    the rank prints this one line and aborts the job (exit status 2)."""

    def __init__(self):
        super().__init__("asapgraph", None, (
            "the ranks' collective calls are out of step: a program callback probably "
            "called ctx.allreduce() on some ranks only (every rank must call it, at the same "
            "point of the same callback)"))


def debug_traceback(exc):
    """With ``ASAPGRAPH_DEBUG=1``: print ``exc``'s traceback on stderr (this rank's),
    as one process prints it before its one-line error."""
    import os

    if os.environ.get("ASAPGRAPH_DEBUG", "") in ("", "0") or exc is None:
        return
    import sys
    import traceback

    traceback.print_exception(type(exc), exc, exc.__traceback__, file=sys.stderr)
    sys.stderr.flush()


def agree(comm, exc=None):
    """Collective error agreement: every rank calls it; if any rank passes an exception,
    all ranks raise the same :class:`RankFailure` (from the lowest failing rank).

    This turns bad input seen by one rank only into one clean, identical error on all
    ranks, with no hang and no ``Abort``.  With ``ASAPGRAPH_DEBUG=1`` the lowest failing
    rank prints its traceback first.
    """
    MPI = mpi()
    K = comm.Get_size()
    me = comm.Get_rank()
    first = comm.allreduce(me if exc is not None else K, op=MPI.MIN)
    if isinstance(first, bool) or not isinstance(first, (int, np.integer)) or not 0 <= first <= K:
        # not what any rank sent: this allreduce met another collective of another rank
        raise OutOfStep()
    if first == K:
        return
    if me == first:
        if isinstance(exc, RankFailure):
            payload = (exc.message, exc.input_error, exc.stdout_closed, exc.exc_type,
                       exc.exc_text)
        elif isinstance(exc, InputError):
            payload = (str(exc), True, False, None, None)
        elif isinstance(exc, BrokenPipeError):
            payload = ("standard output closed", False, True, None, None)
        elif getattr(exc, "one_line", False):  # already worded (asapgraph run: X raised ...)
            payload = (str(exc), False, False, None, None)
        elif isinstance(exc, MemoryError):  # worded as one process words it
            debug_traceback(exc)
            payload = ("asapgraph: out of memory", False, False, "MemoryError", str(exc))
        else:
            debug_traceback(exc)
            payload = (f"error on rank {me}: {type(exc).__name__}: {exc}", False, False,
                       type(exc).__name__, str(exc))
    else:
        payload = None
    msg, is_input, closed, et, ex = comm.bcast(payload, root=first)
    raise RankFailure(first, msg, is_input, closed, et, ex) from (exc if me == first else None)
