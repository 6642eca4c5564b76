"""Audit 29: messy inputs refused alike on one process and on K ranks.

* A compressed edge list is decompressed by rank 0 and dealt to the ranks chunk by chunk,
  round-robin; with bad lines in several chunks the ranks agreed on the error of the
  lowest failing *rank*, which may hold a later chunk: ``pagerank two.txt.gz --np 2``
  named line 350000 where one process (and the same file uncompressed, on any rank
  count) names line 200000.  Now the first error in the file's order, everywhere.
* A NUL byte (binary data): refused at its line, alike everywhere (see tests/test_audit29.py).
* Normalised Katz: the L2 norm of the values overflowed or underflowed (all 0, or the
  values unnormalised) on every configuration (see tests/test_audit29.py).
* Ctrl-C on ``--np K``: every rank added ``error on rank N: KeyboardInterrupt:`` and
  MPICH's ``Abort(N) on node N`` lines to the launcher's ``asapgraph: interrupted``.
"""
import gzip
import os
import subprocess
import sys

import pytest

pytestmark = [pytest.mark.mpi, pytest.mark.timeout(900)]


def _cli(args, cwd, env=None, timeout=240):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "asapgraph", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout, env=e)


def _refused_alike(cwd, args, configs, env=None):
    """Every configuration exits 2 with one and the same stderr line, ``-o`` unwritten;
    returns the line."""
    seen = set()
    out = cwd / "out.csv"
    for extra in configs:
        r = _cli([*args, "-q", "-o", out, *extra], cwd, env)
        lines = r.stderr.strip().splitlines()
        assert r.returncode == 2 and len(lines) == 1, (extra, r.returncode, r.stderr[-2000:])
        assert not out.exists(), extra
        seen.add(lines[0])
    assert len(seen) == 1, seen
    return seen.pop()


#: chunks of rank 0's stream (ASAPGRAPH_DIST_CHUNK_BYTES, for the tests): about 8,700
#: lines each of the file below, so its four bad lines lie in chunks 1 to 4
CHUNK = {"ASAPGRAPH_DIST_CHUNK_BYTES": "100000"}
BAD = [12000, 21000, 30000, 39000]


def _lines():
    rows = [f"{i} {(i * 7919) % 50000}" for i in range(50000)]
    for k, no in enumerate(BAD):
        rows[no - 1] = f"5 bad{k}"
    return ("\n".join(rows) + "\n").encode()


def test_compressed_input_first_error_in_file_order(tmp_path):
    data = _lines()
    starts = [data[:i].count(b"\n") for i in range(0, len(data), 100000)]  # ~chunk starts
    assert [sum(s < no for s in starts) - 1 for no in BAD] == [1, 2, 3, 4]
    (tmp_path / "two.txt.gz").write_bytes(gzip.compress(data, 1))
    (tmp_path / "two.txt").write_bytes(data)
    configs = [[], ["--np", "2"], ["--np", "3"], ["--np", "4", "--mode", "asap"]]
    want = "two.txt.gz:12000: expected an integer vertex id in column 2, got 'bad0'"
    assert _refused_alike(tmp_path, ["pagerank", "two.txt.gz"], configs, CHUNK) == want
    assert _refused_alike(tmp_path, ["wcc", "two.txt.gz"], [["--np", "2"]], CHUNK) == want
    # uncompressed (byte ranges, in file order already): the same line
    assert _refused_alike(tmp_path, ["pagerank", "two.txt"], configs[:3], CHUNK) == \
        want.replace(".gz", "")


def test_damaged_compressed_input_still_refused_as_damaged(tmp_path):
    """A truncated stream is refused as such on ranks when no line fails before the
    damage; a line that fails before it is named first (audit 30b: the first problem in
    the file's order, tests/mpi/test_audit30b_mpi.py)."""
    z = gzip.compress(_lines(), 1)
    (tmp_path / "cut.txt.gz").write_bytes(z[: len(z) * 8 // 10])
    configs = [[], ["--np", "2"], ["--np", "3"]]
    assert _refused_alike(tmp_path, ["pagerank", "cut.txt.gz"], configs, CHUNK) == \
        "cut.txt.gz:12000: expected an integer vertex id in column 2, got 'bad0'"
    (tmp_path / "cut2.txt.gz").write_bytes(z[: len(z) // 10])   # before line 12000
    assert _refused_alike(tmp_path, ["pagerank", "cut2.txt.gz"], configs, CHUNK) == \
        "cut2.txt.gz: corrupt or truncated gzip data"


# ------------------------------------------- a NUL byte: binary data, at its line, alike
def _nul_file(path, edits, gz=False):
    rows = [f"{i} {(i * 7919) % 50000}" for i in range(50000)]
    for no, text in edits.items():
        rows[no - 1] = text
    data = ("\n".join(rows) + "\n").encode()
    path.write_bytes(gzip.compress(data, 1) if gz else data)


@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize("case, want", [
    # a NUL in the first 64 KiB: refused first (it was "FILE: binary data", no line, on
    # one process and line 10's error on ranks, which look at their own range's head)
    ({10: "5 x", 3000: "7 8\x00"}, "{f}:3000: binary data, not a text edge list"),
    # further on: the first problem in file order
    ({10: "5 x", 30000: "7 \x00 8"},
     "{f}:10: expected an integer vertex id in column 2, got 'x'"),
    ({30000: "7 \x00 8", 40000: "5 x"}, "{f}:30000: binary data, not a text edge list"),
])
def test_nul_refused_alike(tmp_path, gz, case, want):
    f = "n.txt.gz" if gz else "n.txt"
    _nul_file(tmp_path / f, case, gz)
    configs = [[], ["--np", "2"], ["--np", "3", "--mode", "asap"], ["--np", "4"]]
    assert _refused_alike(tmp_path, ["pagerank", f], configs, CHUNK) == want.format(f=f)
    if "got 'x'" not in want:   # ('x' is a name with --labels)
        assert _refused_alike(tmp_path, ["pagerank", f, "--labels"], [[], ["--np", "2"]],
                              CHUNK) == want.format(f=f)


# ------------------------------------------------- normalised Katz: no overflow of the norm
@pytest.mark.parametrize("beta", ["1e200", "1e-200", "1"])
def test_katz_normalised_alike(tmp_path, beta):
    """Every score is 0.5 (four vertices of equal Katz value): it was 0 for --beta 1e200
    (the sum of squares overflowed) and 1e-200 for --beta 1e-200 (it underflowed: the
    values were written unnormalised), on one process and on ranks alike."""
    (tmp_path / "g.txt").write_text("0 1\n1 2\n2 0\n2 3\n")
    for i, extra in enumerate([[], ["--np", "2"], ["--np", "3", "--mode", "asap"]]):
        out = tmp_path / f"k{i}.csv"
        r = _cli(["katz", "g.txt", "--beta", beta, "-q", "-o", out, *extra], tmp_path)
        assert r.returncode == 0 and not r.stderr, (extra, r.stderr[-2000:])
        got = [float(ln.split(",")[1]) for ln in out.read_text().split()[1:]]
        assert len(got) == 4 and max(abs(x - 0.5) for x in got) < 1e-9, (extra, got)


# ------------------------------------------------------------- Ctrl-C on a distributed run
PROGRESS = ("asapgraph: superstep", "asapgraph: wave", "asapgraph: iteration")


def _interrupt(tmp_path, args, group=True, stdout=None, elapsed=None):
    """Start ``asapgraph ARGS`` in a session of its own, send SIGINT to the whole process
    group (launcher, mpiexec and ranks, as a terminal's Ctrl-C; ``group`` false: to the
    launcher alone) once the first superstep or wave is reported, and return ``(status,
    the stderr lines that are not progress)``; ``stdout`` (a list): gets the stdout;
    ``elapsed`` (a list): gets the seconds from the SIGINT to the launcher's end."""
    import signal
    import time

    p = subprocess.Popen([sys.executable, "-m", "asapgraph", *map(str, args)], cwd=tmp_path,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    lines = []
    try:
        for line in p.stderr:
            lines.append(line.rstrip("\n"))
            if line.startswith(PROGRESS):
                break
        t0 = time.monotonic()
        if group:
            os.killpg(p.pid, signal.SIGINT)
        else:
            os.kill(p.pid, signal.SIGINT)
        out, rest = p.communicate(timeout=120)
        if elapsed is not None:
            elapsed.append(time.monotonic() - t0)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    lines += rest.splitlines()
    assert "BAD TERMINATION" not in out, out  # (Hydra's banner for a rank it killed)
    if stdout is not None:
        stdout.append(out)
    return p.returncode, [ln for ln in lines if not ln.startswith("asapgraph: ") or
                          ln.startswith(("asapgraph: interrupted", "asapgraph: converged"))]


@pytest.mark.parametrize("k, mode", [(2, "bsp"), (2, "asap"), (3, "bsp")])
def test_ctrl_c_says_interrupted_once(tmp_path, k, mode):
    """A terminal's Ctrl-C (SIGINT to the launcher, mpiexec and every rank): the one line
    ``asapgraph: interrupted`` and status 130, as on one process, no output file.  Each
    rank said ``error on rank N: KeyboardInterrupt:`` (or ``asapgraph: interrupted``) and
    MPICH an ``Abort(1) on node N`` line for it.  (Hydra's own "Sending Ctrl-C to
    processes" lines went to stdout: now nowhere, tests/mpi/test_hydra_stdout.py.)"""
    args = ["pagerank", "rmat:14", "--np", k, "--mode", mode, "--latency", "0.1",
            "--tol", "1e-14", "--max-iter", "100000", "-o", "out.csv"]
    out = []
    rc, lines = _interrupt(tmp_path, args, stdout=out)
    assert rc == 130 and lines == ["asapgraph: interrupted"], (rc, lines)
    assert out == [""], out
    assert not list(tmp_path.iterdir()), list(tmp_path.iterdir())


@pytest.mark.parametrize("mode", ["bsp", "asap"])
def test_sigint_to_the_launcher_alone_stops_the_ranks(tmp_path, mode):
    """SIGINT to the ``--np`` launcher alone (``kill -INT``, a supervisor), not to its
    process group: the launcher forwards it to mpiexec, which stops the ranks.  Before,
    nothing reached mpiexec: the ranks computed on until the launcher killed mpiexec 5 s
    later (launch.STOP_WAIT).  The job still ends as a terminal's Ctrl-C does: one line,
    status 130, no output file -- and nothing on stdout (Hydra's "Sending Ctrl-C to
    processes as requested" lines were printed there: tests/mpi/test_hydra_stdout.py)."""
    from asapgraph.comm.launch import INT_GRACE, STOP_WAIT

    args = ["pagerank", "rmat:14", "--np", 2, "--mode", mode, "--latency", "0.1",
            "--tol", "1e-14", "--max-iter", "100000", "-o", "out.csv"]
    out, took = [], []
    rc, lines = _interrupt(tmp_path, args, group=False, stdout=out, elapsed=took)
    assert rc == 130 and lines == ["asapgraph: interrupted"], (rc, lines)
    assert out == [""], out
    assert took[0] < INT_GRACE + STOP_WAIT, took  # mpiexec stopped (it was not killed)
    assert not list(tmp_path.iterdir()), list(tmp_path.iterdir())
