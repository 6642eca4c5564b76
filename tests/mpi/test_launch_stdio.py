"""The ``--np`` launcher and the user's standard streams.

* ``INPUT`` = ``-`` without ``--labels`` is refused before mpiexec starts (one line, exit
  2, whatever the size: Hydra forwards stdin to rank 0 only as fast as it reads, and
  stopped the job with its own errors -- "process reading stdin too slowly", then
  "mpiexec was killed by SIGPIPE", exit 4 -- from ~200 KB on);
* mpiexec never gets the user's stdin; with ``--labels -`` rank 0 reads it directly;
"""
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.mpi

REFUSAL = "-: standard input cannot be split across ranks; save it to a file (or use --np 1)"

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


@pytest.mark.parametrize("command", [["pagerank", "-"], ["wcc", "-"],
                                     ["katz", "-", "--alpha", "0.01"],
                                     ["run", "prog.py:InDegree", "-", "--steps", "1"]])
@pytest.mark.parametrize("size", ["small", "large"])
def test_stdin_refused_before_mpiexec_starts(tmp_path, command, size):
    (tmp_path / "prog.py").write_text(PROGRAM)
    data = _edges(40 if size == "small" else 40_000)  # 0.5 KB, 430 KB
    spy, log = _spy(tmp_path)
    r = _cli([*command, "--np", "2", "-q", "--mpiexec", spy], tmp_path, input=data)
    err = r.stderr.decode()
    assert r.returncode == 2 and err.splitlines() == [REFUSAL], err
    assert r.stdout == b"" and not log.exists()  # decided before any mpiexec


def test_stdin_refused_alike_under_the_users_mpiexec(tmp_path):
    r = subprocess.run([_mpiexec(), "-n", "2", sys.executable, "-m", "asapgraph", "wcc", "-",
                        "-q"], cwd=tmp_path, input=_edges(40), capture_output=True,
                       timeout=120)
    assert r.returncode == 2 and r.stderr.decode().splitlines() == [REFUSAL], r.stderr


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
