"""MPI: where the ranks have cores of their own, the host clock's emulated waits spin
(``spin_waits`` in ``--json``); ranks that share cores, and the virtual clock, do not;
the virtual clock with CPU compute charges each ASAP rank's setup (state and message
buffers) once a solve (issue 15, K = 2: cnr-2000's first sweep started ~4 CPU ms early).
"""
import json
import os

import pytest

pytestmark = pytest.mark.mpi


def _run(cli, tmp_path, k, mode, extra):
    r = cli(["pagerank", "rmat:10", "--np", k, "--mode", mode, "--tol", "1e-8", "--json",
             "-q", "-o", tmp_path / "r.csv", "--latency", "1e-3", *extra], tmp_path,
            timeout=300)
    assert r.returncode == 0, r.stderr
    js = json.loads(r.stdout)
    assert js["converged"], js
    return js["per_rank"]


@pytest.mark.parametrize("mode", ["bsp", "asap"])
def test_spin_waits_only_with_a_core_per_rank(cli, tmp_path, mode):
    cores = len(os.sched_getaffinity(0))
    for k in (2, cores + 1):
        per = _run(cli, tmp_path, k, mode, [])
        assert [p["spin_waits"] for p in per] == [k <= cores] * k, (k, cores)
    per = _run(cli, tmp_path, 2, mode, ["--clock", "virtual"])
    assert not any(p["spin_waits"] for p in per)


def test_virtual_clock_charges_the_asap_setup(cli, tmp_path):
    per = _run(cli, tmp_path, 2, "asap", ["--clock", "virtual"])
    for p in per:
        s = p["compute_calibration"]["setup"]
        assert s["solves"] == 1 and s["cpu_seconds"] > 0, p["compute_calibration"]
    per = _run(cli, tmp_path, 2, "asap", ["--clock", "virtual", "--compute", "model"])
    assert not any("setup" in p["compute_calibration"] for p in per)
