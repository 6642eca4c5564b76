"""The thirty-third session's fixes on K ranks (one process: tests/test_audit33_lead.py):
``run P --weighted`` for a program whose edge_op reads no weight is refused alike on 1
and K ranks, BSP and ASAP; one whose edge_op reads them gives the same weighted answer."""
import importlib.util
import json
import pathlib

import pytest

pytestmark = pytest.mark.mpi

_path = pathlib.Path(__file__).resolve().parents[1] / "test_audit33_lead.py"
_spec = importlib.util.spec_from_file_location("_audit33_one_process", _path)
_ONE = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_ONE)

CONFIGS = [[], ["--np", "2", "--mode", "bsp"], ["--np", "3", "--mode", "asap"]]


@pytest.fixture
def progs(tmp_path):
    (tmp_path / "progs.py").write_text(_ONE.REACH)
    (tmp_path / "w.txt").write_text("0 1 0.5\n1 2 2\n2 0 1\n2 3 0.25\n0 3 4\n")
    return tmp_path


def test_weighted_refused_alike_for_copy_and_add_one(cli, progs):
    for cls in ("Reach", "Copy"):
        seen = set()
        for cfg in CONFIGS:
            r = cli(["run", f"progs.py:{cls}", "w.txt", "--weighted", "-q", "-o", "x.csv",
                     *cfg], progs, timeout=240)
            assert r.returncode == 2, (cfg, r.returncode, r.stderr)
            seen.add(r.stderr)
            assert not (progs / "x.csv").exists()
        assert len(seen) == 1 and seen.pop().count("\n") == 1, seen


def test_weighted_applied_alike_for_add(cli, progs):
    tops = []
    for cfg in CONFIGS:
        r = cli(["run", "progs.py:Dist", "w.txt", "--weighted", "-q", "--json", "--top", "4",
                 *cfg], progs, timeout=240)
        assert r.returncode == 0, (cfg, r.stderr)
        out = json.loads(r.stdout)
        assert out["weighted"] is True
        tops.append(sorted(map(tuple, out["top"])))
    assert tops == [[(0, 0.0), (1, 0.5), (2, 2.5), (3, 2.75)]] * len(CONFIGS), tops
