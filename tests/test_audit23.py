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


def test_steps_with_allow_unconverged_refused(tmp_path):
    """``run --steps K --allow-unconverged`` was accepted and did nothing (a steps run
    exits 0 whatever its residual; ``--json`` said ``allow_unconverged: true``): refused
    in one line, exit 2, on one process and with ``--np 2``, like ``--steps`` with
    ``--tol``/``--max-iter``."""
    (tmp_path / "g.txt").write_text("0 1\n1 2\n2 0\n")
    for extra in ([], ["--np", "2"]):
        r = subprocess.run([sys.executable, "-m", "asapgraph", "run",
                            "asapgraph.programs:PageRankProgram", "g.txt", "--steps", "3",
                            "--allow-unconverged", "-o", "o.csv", *extra], cwd=tmp_path,
                           capture_output=True, text=True, timeout=240)
        lines = r.stderr.strip().splitlines()
        assert r.returncode == 2 and len(lines) == 1, (extra, r.returncode, r.stderr)
        assert lines[0].startswith("asapgraph run: --allow-unconverged does not apply to "
                                   "--steps K"), lines
        assert not (tmp_path / "o.csv").exists()


def test_info_labels_on_a_generator_spec_refused(tmp_path):
    """``info rmat:3 --labels`` loaded the spec and then stopped with ``internal error:
    KeyError: 'label_first'`` (exit 1); every other command refused ``--labels`` on a
    generator spec in one line, exit 2: info now too (and convert, with the same line)."""
    for cmd in (["info", "rmat:3"], ["info", "rmat:3", "--json"],
                ["convert", "rmat:3", "z.asg"], ["pagerank", "rmat:3"]):
        r = subprocess.run([sys.executable, "-m", "asapgraph", *cmd, "--labels"], cwd=tmp_path,
                           capture_output=True, text=True, timeout=120)
        lines = r.stderr.strip().splitlines()
        assert r.returncode == 2 and len(lines) == 1, (cmd, r.returncode, r.stderr)
        assert "--labels applies to text edge lists" in lines[0], (cmd, lines)
        assert r.stdout == "" and not (tmp_path / "z.asg").exists()
