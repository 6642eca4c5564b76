"""Audit 34b on K ranks (one process: tests/test_audit34b.py): a broken user program is
refused or reported with the same one line and exit status on 1 and K ranks, BSP and
ASAP (the lines named local counts -- '5 rows, expected 4' on 2 ranks, '10 rows,
expected 9' on one process -- or an object's address; a callback's sys.exit() on one
rank aborted the job with MPICH's Abort line; a program raising at import time
was an 'internal error')."""
import importlib.util
import pathlib

import pytest

pytestmark = pytest.mark.mpi

_path = pathlib.Path(__file__).resolve().parents[1] / "test_audit34b.py"
_spec = importlib.util.spec_from_file_location("_audit34b_one_process", _path)
_ONE = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_ONE)

BSP = [[], ["--np", "2", "--mode", "bsp"], ["--np", "4"]]
BOTH = BSP + [["--np", "3", "--mode", "asap"]]


@pytest.fixture
def progs(tmp_path):
    (tmp_path / "progs.py").write_text(_ONE.PROGS)
    (tmp_path / "raises_import.py").write_text('raise RuntimeError("at import")\n')
    (tmp_path / "g.txt").write_text(_ONE.GRAPH)
    return tmp_path


@pytest.mark.parametrize("spec, status, configs", [
    ("raises_import.py:A", 1, BOTH),
    ("progs.py:CtorRaises", 1, BSP),
    ("progs.py:NotAProgram", 2, BOTH),
    ("progs.py:DuckNoEdgeOp", 2, BSP),
    ("progs.py:InitLonger", 2, BSP),
    ("progs.py:DeltasLonger", 2, BOTH),
    ("progs.py:ValuesShorter", 2, BOTH),
    ("progs.py:ExitsInApply", 1, BSP),     # sys.exit() on one rank only
    ("progs.py:MinLab", 1, BOTH),
])
def test_broken_program_same_line_on_every_rank_count(cli, progs, spec, status, configs):
    seen = set()
    for cfg in configs:
        r = cli(["run", spec, "g.txt", "-q", "-o", "x.csv", *cfg], progs, timeout=240)
        assert r.returncode == status, (cfg, r.returncode, r.stderr)
        assert r.stderr.count("\n") == 1, (cfg, r.stderr)
        assert "internal error" not in r.stderr and "Traceback" not in r.stderr
        assert not (progs / "x.csv").exists()
        seen.add(r.stderr)
    assert len(seen) == 1, seen


def test_param_given_twice_refused_alike(cli, progs):
    seen = set()
    for cfg in BOTH:
        r = cli(["run", "progs.py:MinLab", "g.txt", "-q", "--param", "k=1", "--param", "k=2",
                 *cfg], progs, timeout=240)
        assert r.returncode == 2, (cfg, r.returncode, r.stderr)
        seen.add(r.stderr)
    assert seen == {"asapgraph run: --param k given 2 times (k=1, k=2): give each parameter "
                    "once\n"}, seen


def test_katz_converges_on_a_jordan_block_on_ranks(cli, tmp_path):
    """BSP on 2 ranks and ASAP on 2 and 3 ranks: the extrapolation steps diverged on a
    defective adjacency (exit 3, 'residual 8.434e+12'); now the answer of the linear
    solve, as on one process."""
    import csv

    (tmp_path / "j.txt").write_text(_ONE.JORDAN)
    ref = _ONE.katz_jordan_reference()
    for cfg in (["--np", "2", "--mode", "bsp"], ["--np", "2", "--mode", "asap"],
                ["--np", "3", "--mode", "asap"]):
        r = cli(["katz", "j.txt", "--alpha", "0.3", "--no-normalized", "-q", "-o", "k.csv",
                 *cfg], tmp_path, timeout=240)
        assert r.returncode == 0, (cfg, r.stderr)
        rows = list(csv.reader(open(tmp_path / "k.csv")))[1:]
        got = [float(v) for _, v in rows]
        assert [n for n, _ in rows] == ["10", "11"], cfg
        assert all(abs(g - e) <= 1e-8 * e for g, e in zip(got, ref)), (cfg, got)
