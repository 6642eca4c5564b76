"""Each rank's thread CPU over the run (``per_rank[].cpu_seconds``), both modes: what a
rank takes from its peers where ranks time-slice cores (benchmarks/REPORT.md, twenty-third
session)."""
import json

import pytest

pytestmark = pytest.mark.mpi


@pytest.mark.timeout(300)
@pytest.mark.parametrize("mode", ["bsp", "asap"])
def test_per_rank_cpu_seconds(cli, tmp_path, mode):
    r = cli(["pagerank", "rmat:12", "--np", 2, "--mode", mode, "--tol", "1e-8", "--json",
             "--quiet"], tmp_path, timeout=240)
    assert r.returncode == 0, r.stderr[-3000:]
    js = json.loads(r.stdout)
    cpus = [q["cpu_seconds"] for q in js["per_rank"]]
    assert len(cpus) == 2
    # one thread's CPU over the span that compute_seconds times: positive, not above it
    assert all(0.0 < c <= js["compute_seconds"] + 0.05 for c in cpus), (cpus, js["compute_seconds"])
