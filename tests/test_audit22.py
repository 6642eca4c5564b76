"""Audit 22: regressions of defects found by a user-level audit (one process; the
multi-rank ones are in tests/mpi/test_audit22.py)."""
import subprocess
import sys

import pytest


def _bench(args, cwd):
    return subprocess.run([sys.executable, "-m", "asapgraph", "bench", *args, "--quiet"],
                          cwd=cwd, capture_output=True, text=True, timeout=300)


def _one_line(r):
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, (r.returncode, r.stderr[-2000:])
    return lines[0]


def test_bench_unknown_scenario_is_bad_input(tmp_path):
    """``--scenario nope`` exited 1 (SystemExit with a message): bad input is exit 2."""
    line = _one_line(_bench(["--scenario", "nope"], tmp_path))
    assert line.startswith("asapgraph bench: unknown scenario 'nope'; known: quick"), line


@pytest.mark.parametrize("args,want", [
    (["--quick", "--modes", "bsp"], "--modes does not apply to --quick"),
    (["--graphs", "rmat:6"], "--graphs does not apply to the default --quick run"),
    (["--report", "--tol", "1e-3"], "--tol does not apply to --report"),
    (["--list", "--graphs", "rmat:6"], "--graphs does not apply to --list"),
    (["--from-json", "x.json", "--ranks", "2"], "--ranks does not apply to --from-json"),
    (["--from-json", "x.json", "--clock", "virtual"], "--clock does not apply to --from-json"),
    (["--grid", "--graphs", "rmat:6", "--modes", "bsp", "--fanout", "3"],
     "--fanout does not apply to a grid of BSP runs only (--modes bsp)"),
    (["--grid", "--graphs", "rmat:6", "--modes", "bsp", "--schedule", "priority"],
     "--schedule does not apply to a grid of BSP runs only"),
    (["--grid", "--graphs", "rmat:6", "--modes", "bsp", "--approx", "0.1"],
     "--approx does not apply to a grid of BSP runs only"),
])
def test_bench_ignored_options_refused(tmp_path, args, want):
    """Options the action does not read were ignored: ``--quick --modes bsp`` ran the quick
    scenario (both modes), ``--list --graphs`` listed, ``--grid --modes bsp --fanout 3`` ran
    BSP (which has no fanout) and exited 0.  Now one line, exit 2, nothing run or written."""
    (tmp_path / "x.json").write_text('{"records": []}')
    line = _one_line(_bench(args, tmp_path))
    assert line.startswith("asapgraph bench: " + want), line
    assert not (tmp_path / "benchmarks").exists()


def test_bench_messages_name_the_command(tmp_path):
    """Bench refusals began with '<input>:' (no file named); now 'asapgraph bench:'."""
    line = _one_line(_bench(["--grid", "--graphs", "rmat:6", "--modes", "foo"], tmp_path))
    assert line == "asapgraph bench: unknown mode 'foo' (expected bsp or asap)", line


def test_bench_empty_graph_name_refused(tmp_path):
    """``--graphs ,`` looked up the shared datasets directory itself ('/work/shared/datasets:
    is a directory, not a file'); now argparse's line naming the option."""
    line = _one_line(_bench(["--grid", "--graphs", "rmat:6,", "--modes", "bsp"], tmp_path))
    assert "argument --graphs: expected comma-separated graph names" in line, line


@pytest.mark.parametrize("opt,val,want", [
    ("--json-out", "afile/x.json", "afile: is a file, not a directory"),
    ("--outdir", "afile", "afile: is a file, not a directory"),
    ("--markdown", "adir", "adir: is a directory, not an output file"),
    ("--json-out", "adir", "adir: is a directory, not an output file"),
    ("--results-dir", "/proc/asapgraph-x", "/proc/asapgraph-x: cannot create the directory"),
])
def test_bench_outputs_checked_before_any_run(tmp_path, opt, val, want):
    """An output the bench cannot write failed at the end, after every run (and after the
    plots and the Markdown were written when the JSON was the one); now before any run,
    one line, exit 2."""
    (tmp_path / "afile").write_text("x")
    (tmp_path / "adir").mkdir()
    line = _one_line(_bench(["--grid", "--graphs", "rmat:6", "--ranks", "2", "--modes", "bsp",
                             "--timeout", "5", opt, val], tmp_path))
    assert line.startswith(want), line
    assert not (tmp_path / "benchmarks" / "results" / "grid.json").exists()
    assert not (tmp_path / "benchmarks" / "report" / "grid.md").exists()


def test_bench_quiet_short_option(tmp_path):
    """``-q`` (every other command's short --quiet) was an unrecognized argument."""
    r = subprocess.run([sys.executable, "-m", "asapgraph", "bench", "--list", "-q"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "quick" in r.stdout, r.stderr


def test_info_json_shows_the_input_options(tmp_path):
    """``info --undirected --json`` doubled ``edges`` without saying why (no ``undirected``,
    ``weight_col`` or ``labels`` keys, which every other command's --json has)."""
    import json

    (tmp_path / "g.txt").write_text("0 1 2\n1 2 1\n2 0 3\n2 3 1\n")

    def info(*extra):
        r = subprocess.run([sys.executable, "-m", "asapgraph", "info", "g.txt", "--json", "-q",
                            *extra], cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)

    j = info("--undirected", "--weighted")
    assert (j["edges"], j["undirected"], j["weight_col"], j["labels"]) == (8, True, 3, False)
    j = info()
    assert (j["edges"], j["undirected"], j["weight_col"], j["labels"]) == (4, False, None, False)
    assert info("--labels")["labels"] is True


def test_bench_negative_seed_refused(tmp_path):
    """``--grid --modes asap --seed -1`` reached the ranks, whose expander's random
    generator refused it: every run failed, exit 1; now a usage error, nothing run."""
    line = _one_line(_bench(["--grid", "--graphs", "rmat:6", "--ranks", "2", "--modes", "asap",
                             "--seed", "-1"], tmp_path))
    assert "argument --seed: expected an integer >= 0, got '-1'" in line, line
    assert not (tmp_path / "benchmarks").exists()
