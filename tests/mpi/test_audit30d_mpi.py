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
