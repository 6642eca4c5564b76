"""The ``--np`` launcher and the user's standard streams.

* ``INPUT`` = ``-`` on K ranks: rank 0 reads the user's stdin itself (not through mpiexec,
  whose Hydra forwards stdin to rank 0 only as fast as it reads, and stopped the job with
  its own errors -- "process reading stdin too slowly", then "mpiexec was killed by
  SIGPIPE", exit 4 -- from ~100 KB on) and deals its lines to the ranks: the same answer
  as one process, whatever the size;
* mpiexec never gets the user's stdin; with ``-`` (and ``--labels -``) rank 0 reads it
  directly;
* a closed stdout (``... --np K --top 3000 | head -1``) ends every rank with status 141,
  quietly, as one process (rank 0 writes to the user's stdout directly: through mpiexec
  the job was "mpiexec was killed by SIGPIPE", exit 4), with and without
  ``PYTHONUNBUFFERED`` (unbuffered, one process exited 0: a short write was dropped).
"""
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.mpi

PROGRAM = '''
import numpy as np
from asapgraph.programs import VertexProgram


class InDegree(VertexProgram):
    name = "indeg"
    combiner = "sum"
    edge_op = "copy"

    def init(self, ctx):
        return np.ones(ctx.n_local)

    def apply(self, ctx, state, combined, has_msg):
        return combined, np.zeros(ctx.n_local, dtype=bool)
'''


def _cli(args, cwd, timeout=120, env=None, **kw):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "asapgraph", *map(str, args)], cwd=cwd,
                          env=e, capture_output=True, timeout=timeout, **kw)


def _mpiexec():
    from asapgraph.comm.launch import find_mpiexec

    return find_mpiexec()


def _spy(tmp_path):
    """An mpiexec that notes where its stdin comes from (a line per call), then runs the
    real one."""
    spy = tmp_path / "spy-mpiexec"
    spy.write_text(f"#!/bin/sh\nreadlink /proc/self/fd/0 >> {tmp_path / 'spy.log'}\n"
                   f"exec {_mpiexec()} \"$@\"\n")
    spy.chmod(0o755)
    return spy, tmp_path / "spy.log"


def _scores(path):
    rows = Path(path).read_text().splitlines()[1:]
    return {r.split(",")[0]: float(r.split(",")[1]) for r in rows}


def _edges(n=40_000):
    return "".join(f"{i} {(i * 7919) % 5000}\n" for i in range(n)).encode()


def _rows(path):
    return Path(path).read_text().splitlines()


@pytest.mark.parametrize("command", [["pagerank", "-"], ["wcc", "-"],
                                     ["katz", "-", "--alpha", "0.01"],
                                     ["run", "prog.py:InDegree", "-", "--steps", "1"]])
@pytest.mark.parametrize("size", ["small", "large"])
def test_stdin_read_by_rank_0_not_through_mpiexec(tmp_path, command, size):
    """``-`` on 2 ranks (0.5 KB, 430 KB: through Hydra the job died from ~100 KB on): rank
    0 reads the user's stdin directly, mpiexec gets /dev/null; the answer of one process."""
    (tmp_path / "prog.py").write_text(PROGRAM)
    data = _edges(40 if size == "small" else 40_000)  # 0.5 KB, 430 KB
    one = _cli([*command, "-q", "-o", "one.csv"], tmp_path, input=data)
    assert one.returncode == 0, one.stderr
    spy, log = _spy(tmp_path)
    r = _cli([*command, "--np", "2", "-q", "--mpiexec", spy, "-o", "k.csv"], tmp_path,
             input=data)
    assert r.returncode == 0 and r.stderr == b"", r.stderr
    got, ref = _rows(tmp_path / "k.csv"), _rows(tmp_path / "one.csv")
    assert got[0] == ref[0] and len(got) == len(ref) > 40
    if command[0] in ("wcc", "run"):
        assert got == ref
    else:
        a = {x.split(",")[0]: float(x.split(",")[1]) for x in got[1:]}
        b = {x.split(",")[0]: float(x.split(",")[1]) for x in ref[1:]}
        assert a.keys() == b.keys() and sum(abs(a[k] - b[k]) for k in b) < 1e-10
    seen = log.read_text().splitlines()
    assert seen and set(seen) == {"/dev/null"}, seen


def test_stdin_under_the_users_mpiexec(tmp_path):
    """Under the user's own mpiexec (small input: Hydra's own limit, ~64 KB arriving before
    rank 0 drains it, is no part of ours): the answer, and a bad line refused as on one
    process."""
    data = _edges(40)
    ref = _cli(["wcc", "-", "-q", "-o", "one.csv"], tmp_path, input=data)
    assert ref.returncode == 0, ref.stderr
    r = subprocess.run([_mpiexec(), "-n", "2", sys.executable, "-m", "asapgraph", "wcc", "-",
                        "-q", "-o", "k.csv"], cwd=tmp_path, input=data, capture_output=True,
                       timeout=240)
    assert r.returncode == 0, r.stderr
    assert _rows(tmp_path / "k.csv") == _rows(tmp_path / "one.csv")
    bad = data + b"7 x\n"
    r = subprocess.run([_mpiexec(), "-n", "2", sys.executable, "-m", "asapgraph", "wcc", "-",
                        "-q"], cwd=tmp_path, input=bad, capture_output=True, timeout=240)
    assert r.returncode == 2, r.stderr
    assert r.stderr.decode().splitlines() == [
        "<stdin>:41: expected an integer vertex id in column 2, got 'x'"], r.stderr


def test_labelled_stdin_goes_to_rank_0_not_through_mpiexec(tmp_path):
    """``--labels -`` on K ranks: rank 0 reads the user's stdin itself (1.5 MB here: through
    Hydra the job died from ~200 KB on); mpiexec's own stdin is /dev/null."""
    text = "".join(f"n{i} n{(i * 7919) % 5000}\n" for i in range(120_000)).encode()
    assert len(text) > 1_400_000
    one = _cli(["pagerank", "-", "--labels", "-o", "one.csv", "--tol", "1e-12", "-q"],
               tmp_path, input=text)
    assert one.returncode == 0, one.stderr
    ref = _scores(tmp_path / "one.csv")
    spy, log = _spy(tmp_path)
    for extra in (["pagerank"], ["pagerank", "--mode", "asap"]):
        r = _cli([*extra, "-", "--labels", "-o", "k.csv", "--tol", "1e-12", "-q", "--np", "2",
                  "--mpiexec", spy], tmp_path, input=text)
        assert r.returncode == 0 and r.stderr == b"", r.stderr
        got = _scores(tmp_path / "k.csv")
        assert got.keys() == ref.keys() and len(got) == 120_000
        assert sum(abs(got[k] - ref[k]) for k in ref) < 1e-10
    seen = log.read_text().splitlines()  # each run: "--version" (is it MPICH's?), the job
    assert len(seen) >= 2 and set(seen) == {"/dev/null"}, seen
    # and a run that reads no stdin: mpiexec gets /dev/null too
    r = _cli(["wcc", "rmat:6", "--np", "2", "-q", "--mpiexec", spy], tmp_path,
             input=b"not for the ranks\n")
    assert r.returncode == 0, r.stderr
    seen = log.read_text().splitlines()
    assert len(seen) >= 3 and set(seen) == {"/dev/null"}, seen


def test_closed_stdin_reads_alike_on_1_and_2_ranks(tmp_path):
    for np_ in ("1", "2"):
        r = _cli(["wcc", "-", "--labels", "-q", "--np", np_], tmp_path, stdin=None,
                 pass_fds=(), close_fds=True, preexec_fn=lambda: os.close(0))
        assert r.returncode == 2, r.stderr
        assert r.stderr.decode().splitlines() == ["<stdin>: cannot read: standard input is "
                                                  "closed"], (np_, r.stderr)


_BIG_OUTPUTS = [["pagerank", "rmat:12", "--top", "4096"],
                ["pagerank", "rmat:12", "--top", "4096", "--json"],
                ["katz", "rmat:12", "--alpha", "0.001", "--top", "4096"],
                ["run", "prog.py:InDegree", "rmat:12", "--steps", "1", "--top", "4096"]]


@pytest.mark.parametrize("unbuffered", [True, False])
@pytest.mark.parametrize("command,np_", [(c, k) for c in _BIG_OUTPUTS for k in (1, 2)]
                         + [(_BIG_OUTPUTS[0], 3)])
def test_closed_stdout_exits_141_quietly(tmp_path, np_, unbuffered, command):
    (tmp_path / "prog.py").write_text(PROGRAM)
    env = dict(os.environ)
    env.pop("PYTHONUNBUFFERED", None)
    if unbuffered:
        env["PYTHONUNBUFFERED"] = "1"
    p = subprocess.Popen([sys.executable, "-m", "asapgraph", *command, "-q", "--np", str(np_)],
                         cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    try:
        first = os.read(p.stdout.fileno(), 64)  # ~110 KB follow: more than a pipe holds
        p.stdout.close()  # as 'head -c 64' does
        rc = p.wait(timeout=120)
        err = p.stderr.read().decode()
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert first.strip(), err
    assert rc == 141 and err == "", (rc, err)


def test_results_still_reach_stdout_through_rank_0(tmp_path):
    """The whole output, once, in order (rank 0 writes to the launcher's stdout)."""
    one = _cli(["pagerank", "rmat:10", "--top", "1024", "-q"], tmp_path)
    two = _cli(["pagerank", "rmat:10", "--top", "1024", "-q", "--np", "2"], tmp_path)
    assert one.returncode == 0 and two.returncode == 0, two.stderr
    assert len(two.stdout.splitlines()) == 1025
    a = [ln.split()[:2] for ln in one.stdout.decode().splitlines()]
    b = [ln.split()[:2] for ln in two.stdout.decode().splitlines()]
    assert a[:50] == b[:50]
    f = tmp_path / "out.txt"
    with open(f, "wb") as fh:  # a file as stdout: rank 0 appends where the launcher is
        fh.write(b"before\n")
        fh.flush()
        r = subprocess.run([sys.executable, "-m", "asapgraph", "pagerank", "rmat:8", "--top",
                            "3", "-q", "--np", "2"], cwd=tmp_path, stdout=fh,
                           stderr=subprocess.PIPE, timeout=120)
    assert r.returncode == 0, r.stderr
    lines = f.read_text().splitlines()
    assert lines[0] == "before" and len(lines) == 5 and lines[1].split()[0] == "rank"


@pytest.mark.parametrize("np_", ["1", "2"])
def test_stdout_closed_from_the_start(tmp_path, np_):
    """``>&-``: 141, quietly, when there is something for stdout (an internal error
    "'NoneType' object has no attribute 'write'" before); a run with -o only succeeds."""
    r = _cli(["pagerank", "rmat:6", "--top", "3", "-q", "--np", np_], tmp_path, stdout=None,
             preexec_fn=lambda: os.close(1))
    assert r.returncode == 141 and r.stderr == b"", r.stderr
    r = _cli(["wcc", "rmat:6", "-o", "c.csv", "-q", "--np", np_], tmp_path, stdout=None,
             preexec_fn=lambda: os.close(1))
    assert r.returncode == 0 and r.stderr == b"" and (tmp_path / "c.csv").exists(), r.stderr
