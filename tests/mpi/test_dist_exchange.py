"""``comm.alltoallv`` beyond its per-call count limit (lowered so that a test reaches it)."""
import json
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.mpi
HERE = Path(__file__).resolve().parent


@pytest.mark.parametrize("k", [2, 3])
def test_alltoallv_point_to_point_path(mpirun, tmp_path, k):
    out = tmp_path / "out.json"
    r = mpirun(k, [sys.executable, str(HERE / "_exchange_worker.py"), str(out)], timeout=180)
    assert r.returncode == 0, f"stdout:{r.stdout[-2000:]}\nstderr:{r.stderr[-2000:]}"
    res = json.loads(out.read_text())
    assert res["ok"], res["detail"]
