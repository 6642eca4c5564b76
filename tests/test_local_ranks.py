"""The ranks started on this host are bounded: ``--np 100000`` (every command that takes
``--np``), ``asapgraph bench --ranks 100000`` and the networkx backend's ``np = 100000``
are refused in one line (exit 2) before any mpiexec starts; ``--np 100000`` had mpiexec
fork processes on this host until it gave out, and the command hung.

A fake ``mpiexec`` (``--mpiexec`` / ``ASAPGRAPH_MPIEXEC``) records whether it was started:
without the bound it is, and the command does not exit 2 with the refusal.
"""
import os
import subprocess
import sys

import pytest


@pytest.fixture
def fake_mpiexec(tmp_path):
    """``(path, marker)``: an executable that writes ``marker`` whenever it is run."""
    marker = tmp_path / "mpiexec-started"
    exe = tmp_path / "fake-mpiexec"
    exe.write_text(f"#!/bin/sh\necho \"$@\" >> '{marker}'\nexit 0\n")
    exe.chmod(0o755)
    return exe, marker


def _cli(args, cwd, env=None):
    # the environment as given (CI installs the package; no PYTHONPATH to the checkout)
    return subprocess.run([sys.executable, "-m", "asapgraph", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=120,
                          env=None if env is None else {**os.environ, **env})


def _one_line(r):
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, (r.returncode, r.stderr[-2000:])
    return lines[0]


@pytest.mark.parametrize("command", [
    ["pagerank", "rmat:8"],
    ["pagerank", "rmat:8", "--mode", "asap", "--json"],
    ["wcc", "rmat:8"],
    ["katz", "rmat:8"],
    ["sssp", "rmat:8", "--source", "0"],
    ["run", "asapgraph.programs.components:WCCProgram", "rmat:8"],
])
def test_np_above_the_host_bound_is_refused_before_mpiexec(tmp_path, fake_mpiexec, command):
    exe, marker = fake_mpiexec
    r = _cli([*command, "--np", "100000", "--mpiexec", exe, "-q"], tmp_path)
    assert not marker.exists(), "mpiexec was started"
    line = _one_line(r)
    assert f"asapgraph {command[0]}: error: argument --np: at most " in line, line
    from asapgraph.comm.launch import max_local_ranks

    assert f"at most {max_local_ranks()} ranks on this host" in line, line
    assert "got 100000" in line and "own mpiexec with a hostfile and no --np" in line, line
    assert "mpiexec -f HOSTFILE -n 100000" in line, line
    assert not marker.exists(), "mpiexec was started"
    assert r.stdout == ""


@pytest.mark.parametrize("value,words", [("0", "expected a positive integer"),
                                         ("-3", "expected a positive integer"),
                                         (str(2**31), "expected an integer <= ")])
def test_np_below_one_or_beyond_int_is_refused(tmp_path, fake_mpiexec, value, words):
    exe, marker = fake_mpiexec
    line = _one_line(_cli(["pagerank", "rmat:8", f"--np={value}", "--mpiexec", exe, "-q"],
                          tmp_path))
    assert "argument --np" in line and words in line, line
    assert not marker.exists()


def test_bench_ranks_above_the_host_bound_is_refused(tmp_path, fake_mpiexec):
    exe, marker = fake_mpiexec
    r = _cli(["bench", "--grid", "--graphs", "rmat:6", "--modes", "bsp", "--ranks", "2,100000"],
             tmp_path, env={"ASAPGRAPH_MPIEXEC": str(exe)})
    assert not marker.exists(), "mpiexec was started"
    line = _one_line(r)
    assert "asapgraph bench: error: argument --ranks: at most " in line, line
    from asapgraph.comm.launch import max_local_ranks

    assert f"at most {max_local_ranks()} ranks on this host" in line and "got 100000" in line
    assert "under your own mpiexec with a hostfile" in line, line
    assert not marker.exists(), "mpiexec was started"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([exe.name])


def test_the_bound(monkeypatch):
    """At least LOCAL_RANKS_MIN (the 64-rank runs of issue 15 on a 2-core host), 64 per
    core beyond; the bound itself is accepted by --np and bench --ranks."""
    import argparse

    from asapgraph.bench.commands import _positive_ints
    from asapgraph.cli.options import rank_count
    from asapgraph.comm.launch import LOCAL_RANKS_MIN, local_ranks_refusal, max_local_ranks

    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    assert max_local_ranks() == LOCAL_RANKS_MIN >= 64
    assert rank_count("64") == 64 and rank_count(str(LOCAL_RANKS_MIN)) == LOCAL_RANKS_MIN
    assert _positive_ints(f"4,16,64,{LOCAL_RANKS_MIN}")[-1] == LOCAL_RANKS_MIN
    for parse in (rank_count, _positive_ints):
        with pytest.raises(argparse.ArgumentTypeError, match="at most 256 ranks"):
            parse(str(LOCAL_RANKS_MIN + 1))
    monkeypatch.setattr(os, "cpu_count", lambda: 16)
    assert max_local_ranks() == 1024 and rank_count("1024") == 1024
    assert local_ranks_refusal(1024) is None and "got 1025" in local_ranks_refusal(1025)
    monkeypatch.setattr(os, "cpu_count", lambda: None)
    assert max_local_ranks() == LOCAL_RANKS_MIN


def test_nx_backend_np_above_the_bound_is_refused():
    pytest.importorskip("networkx")
    from asapgraph.interop.nx_ranks import placement

    if os.environ.get("PMI_SIZE") or os.environ.get("OMPI_COMM_WORLD_SIZE"):
        pytest.skip("under mpiexec: np must be the world size")
    with pytest.raises(ValueError, match=r"asapgraph\.np: at most \d+ ranks on this host.*"
                                         r"got 100000"):
        placement(100000, "bsp")
    assert placement(2, "bsp") == ("spawn", 2, "bsp")
