"""Audit 18: ``asapgraph bench`` refuses bad values in one line, exit 2 (regressions)."""
import subprocess
import sys

import pytest


def _bench(args, cwd):
    return subprocess.run([sys.executable, "-m", "asapgraph", "bench", *args, "--quiet"],
                          cwd=cwd, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("args,want", [
    (["--ranks", "0"], "argument --ranks: expected integers >= 1, got '0'"),
    (["--ranks", "2,-1"], "argument --ranks: expected integers >= 1, got '2,-1'"),
    (["--repeat", "0"], "argument --repeat: expected an integer >= 1, got '0'"),
])
def test_grid_counts_below_one_refused(tmp_path, args, want):
    """--ranks 0 ran and reported a 'K=0' row, --repeat 0 ran every run once (exit 0)."""
    r = _bench(["--grid", "--graphs", "rmat:6", "--modes", "bsp", *args], tmp_path)
    assert r.returncode == 2 and want in r.stderr, r.stderr
    assert not (tmp_path / "benchmarks").exists()


@pytest.mark.parametrize("text", ["1 2\n2 3\n", "[1]", "{}"])
def test_from_json_not_a_bench_file(tmp_path, text):
    """--from-json of a file that is not bench JSON: 'internal error: JSONDecodeError'
    (exit 1) or a KeyError; now one line naming the file, exit 2."""
    (tmp_path / "x.json").write_text(text)
    r = _bench(["--from-json", "x.json"], tmp_path)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, r.stderr
    assert lines[0].startswith("x.json: not a JSON file written by asapgraph bench")


@pytest.mark.parametrize("opt,val", [
    ("--tol", "-1"), ("--tol", "nan"), ("--latency", "-1"), ("--bandwidth", "-5"),
    ("--window", "0"), ("--fanout", "0"), ("--approx", "-1"), ("--partition", "foo"),
    ("--timeout", "0"), ("--budget", "-1"),
])
def test_grid_values_refused(tmp_path, opt, val):
    """Bad grid values ran (--latency -1 as 'net[-1000ms]', --window/--fanout 0), ended
    in a rank's traceback (--tol -1, --partition foo: exit 1) or skipped every run
    (--budget -1, exit 1); now usage errors naming the option, exit 2, nothing run."""
    r = _bench(["--grid", "--graphs", "rmat:6", "--modes", "bsp", "--ranks", "2", opt, val],
               tmp_path)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and f"argument {opt}: expected" in lines[0], \
        r.stderr[-2000:]
    assert not (tmp_path / "benchmarks").exists()
