"""The ASAP sweep gate's patience where ranks time-share cores
(:data:`asapgraph.engine.asap.OVERSUB_PATIENCE`, twenty-second session): multiplied by the
ranks per core of the most crowded host.  2 ranks pinned to one core (``taskset``): the
patience doubles against ``ASAPGRAPH_ASAP_OVERSUB_PATIENCE=0``, ``ranks_per_core`` is 2 in
``--json``, and the answers stay within tol of one process.  Answers only, no timings."""

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

pytestmark = pytest.mark.mpi

TOL = 1e-8


def _pinned(tmp_path, scores, name, args, env=None):
    cpu = min(os.sched_getaffinity(0))
    out = tmp_path / f"{name}.csv"
    e = dict(os.environ)
    e.update(env or {})
    r = subprocess.run(["taskset", "-c", str(cpu), sys.executable, "-m", "asapgraph",
                        "pagerank", "rmat:12", *args, "--json", "-q", "-o", str(out)],
                       cwd=tmp_path, env=e, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    x = scores(out)
    return json.loads(r.stdout), np.array([x[str(v)] for v in range(len(x))])


@pytest.mark.skipif(shutil.which("taskset") is None or not hasattr(os, "sched_getaffinity"),
                    reason="needs taskset and sched_getaffinity")
def test_patience_scales_with_ranks_per_core(tmp_path, scores):
    _, ref = _pinned(tmp_path, scores, "ref", ["--tol", "1e-13"])
    asap = ["--np", "2", "--mode", "asap", "--tol", str(TOL)]
    on, x1 = _pinned(tmp_path, scores, "on", asap)
    off, x0 = _pinned(tmp_path, scores, "off", asap, {"ASAPGRAPH_ASAP_OVERSUB_PATIENCE": "0"})
    for js, x in ((on, x1), (off, x0)):
        assert js["converged"], js
        assert np.abs(x - ref).sum() <= TOL, np.abs(x - ref).sum()
    assert [p["ranks_per_core"] for p in on["per_rank"]] == [2.0, 2.0]
    p_on = [p["sweep_patience"] for p in on["per_rank"]]
    p_off = [p["sweep_patience"] for p in off["per_rank"]]
    assert len(set(p_on)) == 1 and p_off[0] > 0
    assert p_on[0] == pytest.approx(2.0 * p_off[0])
