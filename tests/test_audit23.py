"""Audit 23: regressions of defects found by a user-level audit (one process; the
multi-rank ones are in tests/mpi/test_audit23.py)."""
import subprocess
import sys


def _bench(args, cwd):
    return subprocess.run([sys.executable, "-m", "asapgraph", "bench", *args, "--quiet"],
                          cwd=cwd, capture_output=True, text=True, timeout=300)


def test_bench_creates_missing_output_directories_as_documented(tmp_path):
    """``asapgraph bench`` creates missing output directories (its defaults,
    ``benchmarks/results`` and ``benchmarks/report``, are relative to the working
    directory); that was done silently, undocumented.  ``--help`` now says so, and what it
    says happens: the nested directories are made, before any run."""
    h = subprocess.run([sys.executable, "-m", "asapgraph", "bench", "--help"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=120)
    text = " ".join(h.stdout.split())
    assert "missing directories (of these four options) are created before any run" in text
    assert "from the working directory" in text
    r = _bench(["--grid", "--graphs", "rmat:5", "--ranks", "2", "--modes", "bsp", "--tol",
                "1e-6", "--no-peers", "--repeat", "1", "--outdir", "a/b/plots",
                "--results-dir", "c/d", "--json-out", "e/f/x.json"], tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    assert (tmp_path / "e/f/x.json").is_file() and (tmp_path / "a/b/plots").is_dir()
    assert (tmp_path / "c/d").is_dir()
