"""The spool of rank 0's standard input under the user's own mpiexec (feature 34c):
:mod:`asapgraph.comm.stdin_spool` drains a descriptor in a thread into memory, then an
unnamed temporary file, and gives back the same bytes in order; the CLI starts it on rank
0 of the user's mpiexec only when the command reads standard input."""
import gzip
import io
import os
import threading
import time

import pytest

from asapgraph.comm import stdin_spool


def _feed(data, pieces=7, pause=0.0):
    """A pipe's read end; a thread writes ``data`` into it in ``pieces`` and closes it."""
    r, w = os.pipe()

    def write():
        step = max(1, len(data) // pieces)
        for i in range(0, len(data), step):
            _write_all(w, data[i:i + step])
            if pause:
                time.sleep(pause)
        os.close(w)

    t = threading.Thread(target=write, daemon=True)
    t.start()
    return r, t


def _write_all(fd, b):
    v = memoryview(b)
    while v:
        v = v[os.write(fd, v):]


@pytest.mark.parametrize("limit", [1 << 30, 100_000, 0])
def test_spool_gives_the_bytes_in_order(limit):
    data = bytes(range(256)) * 20_000   # 5 MB
    r, t = _feed(data)
    sp = stdin_spool.Spool(r, memory_bytes=limit)
    out = io.BufferedReader(sp, 1 << 16).read()
    t.join()
    assert out == data
    assert sp.received == len(data)
    assert sp.spilled == (limit < len(data))   # spilled beyond the limit
    sp.close()
    os.close(r)


def test_spool_drains_while_nobody_reads():
    """The thread empties the pipe although the program reads nothing yet (Hydra's write
    into a full pipe ends the job)."""
    data = b"1 2\n" * 500_000   # 2 MB, many times a pipe's room
    r, t = _feed(data, pieces=40)
    sp = stdin_spool.Spool(r, memory_bytes=256 << 10)
    t.join(timeout=60)
    assert not t.is_alive()   # the writer never blocked for good: the pipe was drained
    deadline = time.time() + 30
    while sp.received < len(data) and time.time() < deadline:
        time.sleep(0.01)
    assert sp.received == len(data)
    buf = bytearray(3)   # small reads across the memory/file boundary
    got = bytearray()
    while True:
        k = sp.readinto(buf)
        if not k:
            break
        got += buf[:k]
    assert bytes(got) == data
    os.close(r)


def test_spool_read_error_is_raised_at_the_end():
    r, w = os.pipe()
    os.write(w, b"1 2\n")
    os.close(w)
    sp = stdin_spool.Spool(r)
    sp._thread.join()
    sp._error = OSError(5, "Input/output error")   # as the thread hands it over
    assert sp.read(100) == b"1 2\n"
    with pytest.raises(OSError):
        sp.read(100)
    os.close(r)


def test_open_binary_reads_a_spooled_gzip_stdin(monkeypatch):
    """``open_binary('-')`` (magic bytes, gzip) over the spooled ``sys.stdin``."""
    from asapgraph.graph.io._text import open_binary

    text = b"".join(b"%d %d\n" % (i, i + 1) for i in range(50_000))
    r, t = _feed(gzip.compress(text))
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BufferedReader(
        stdin_spool.Spool(r, memory_bytes=10_000), 1 << 16)))
    f, kind, _ = open_binary("-")
    assert kind == "gzip" and f.read() == text
    t.join()
    os.close(r)


@pytest.mark.parametrize("env,argv,started", [
    ({"PMI_RANK": "0", "PMI_SIZE": "2"}, ["wcc", "-"], True),
    ({"PMI_RANK": "0", "PMI_SIZE": "2"}, ["pagerank", "g.txt", "--personalization", "-"], True),
    ({"PMI_RANK": "1", "PMI_SIZE": "2"}, ["wcc", "-"], False),         # not rank 0
    ({"PMI_RANK": "0", "PMI_SIZE": "2"}, ["wcc", "g.txt"], False),     # no stdin read
    ({}, ["wcc", "-"], False),                                         # one process
    ({"PMI_RANK": "0", "PMI_SIZE": "2", "ASAPGRAPH_LAUNCHED": "1"}, ["wcc", "-"], False),
])
def test_cli_starts_the_spool_on_rank_0_of_the_users_mpiexec(monkeypatch, env, argv,
                                                            started):
    from asapgraph import cli

    for k in ("PMI_RANK", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK",
              "PMIX_RANK", "MPI_LOCALNRANKS", "ASAPGRAPH_LAUNCHED"):
        monkeypatch.delenv(k, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    calls = []
    monkeypatch.setattr(stdin_spool, "start", lambda fd=0: calls.append(fd))

    class Stop(Exception):
        pass

    def stop(*a, **k):
        raise Stop

    monkeypatch.setattr("asapgraph.options.check_cli", stop)
    monkeypatch.setattr(cli, "_internal", lambda exc: 1)
    monkeypatch.setattr(cli, "_mpi_abort_if_needed", lambda code: None)
    cli.main(argv)
    assert bool(calls) == started
