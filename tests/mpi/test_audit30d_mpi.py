"""Audit 30d on ranks started by the user's own mpiexec (no --np launcher to check the
options first): ``--straggler`` with a non-finite factor or a rank given twice is refused
by the ranks in one line, exit status 2 (tests/test_audit30d.py has the rest).

A usage error (argparse: a bad option value, an unknown option or command) under the user's
own mpiexec was printed by every rank, K lines, where README says bad input reads the same
on 1 and K ranks, printed once: rank 0 prints it now, as the other bad-input lines.

``mpiexec -n 2 asapgraph bench ...`` ran the whole benchmark on every rank (two benchmarks
timing each other, each starting its own jobs and writing the same JSON); info, convert
and generate were refused there already: bench is too, one line from rank 0, exit 2.
"""
import os
import subprocess
import sys

import pytest


@pytest.mark.parametrize("args, needle", [
    (["--straggler", "1:inf"], "FACTOR a finite number >= 1"),
    (["--straggler", "1:3", "--straggler", "1:2"],
     "--straggler 1:2: rank 1 already has a factor (--straggler 1:3)"),
])
def test_own_mpiexec_straggler_refusals(mpirun, args, needle):
    import sys

    r = mpirun(2, [sys.executable, "-m", "asapgraph", "pagerank", "rmat:8", *args, "-q"],
               timeout=240)
    assert r.returncode == 2, (r.returncode, r.stderr[-2000:])
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and needle in lines[0], r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("args, needle", [
    (["pagerank", "rmat:8", "--tol", "x"], "asapgraph pagerank: error: argument --tol:"),
    (["pagerank", "rmat:8", "--no-such-option"], "unrecognized arguments: --no-such-option"),
    (["nosuchcmd"], "asapgraph: error: argument COMMAND: invalid choice: 'nosuchcmd'"),
])
def test_own_mpiexec_usage_error_printed_once(mpirun, k, args, needle):
    import sys

    r = mpirun(k, [sys.executable, "-m", "asapgraph", *args], timeout=240)
    assert r.returncode == 2, (r.returncode, r.stderr[-2000:])
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and needle in lines[0], r.stderr


def test_own_mpiexec_bench_refused(mpirun, tmp_path):
    import sys

    out = tmp_path / "g.json"
    r = mpirun(2, [sys.executable, "-m", "asapgraph", "bench", "--grid", "--graphs", "rmat:8",
                   "--ranks", "2", "--modes", "bsp", "--no-peers", "-q", "--json-out", str(out),
                   "--outdir", str(tmp_path / "rep")], timeout=240)
    assert r.returncode == 2, (r.returncode, r.stderr[-2000:])
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert lines == ["asapgraph: bench starts its own ranks (--ranks): start it without mpiexec "
                     "(each of the ranks would run the whole benchmark)"], r.stderr
    assert not out.exists()
    r = mpirun(1, [sys.executable, "-m", "asapgraph", "bench", "--list"], timeout=120)
    assert r.returncode == 0 and "quick" in r.stdout, r.stderr   # one rank: fine


def _descendants(pid):
    """Every process below ``pid`` (from /proc: ``pgrep -P`` level by level)."""
    out, todo = [], [pid]
    while todo:
        kids = subprocess.run(["pgrep", "-P", str(todo.pop())], capture_output=True,
                              text=True).stdout.split()
        out += [int(k) for k in kids]
        todo += [int(k) for k in kids]
    return out


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:  # a zombie is gone for our purpose
        return f.read().rsplit(")", 1)[1].split()[0] != "Z"


def test_bench_job_ends_with_bench(tmp_path):
    """``asapgraph bench`` killed from outside (SIGKILL: no handler runs) took nothing of
    its job with it: mpiexec and the worker ranks ran on for ever (a job with a straggler
    factor inf was found an hour later).  mpiexec now dies with the bench process and
    its ranks with it.  (The job: ~70 supersteps of a 2 s latency, minutes long.)"""
    import signal
    import time

    p = subprocess.Popen([sys.executable, "-m", "asapgraph", "bench", "--grid", "--graphs",
                          "rmat:10", "--ranks", "2", "--modes", "bsp", "--latency", "2",
                          "--tol", "1e-14", "--no-peers", "-q", "--json-out", "o.json",
                          "--results-dir", ".", "--outdir", "."], cwd=tmp_path,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True)
    job = []
    try:
        t0 = time.monotonic()
        while time.monotonic() - t0 < 120:  # the job started: mpiexec and two ranks
            job = _descendants(p.pid)
            if len(job) >= 4:
                break
            time.sleep(0.2)
        assert len(job) >= 4, job
        p.kill()
        p.wait()
        t0 = time.monotonic()
        while time.monotonic() - t0 < 60 and any(_alive(q) for q in job):
            time.sleep(0.2)
        assert not [q for q in job if _alive(q)], "bench's job outlived it"
    finally:
        for q in job:
            try:
                os.kill(q, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if p.poll() is None:
            p.kill()
            p.wait()
