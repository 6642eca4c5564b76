"""An idle rank whose sweep gate is closed sleeps at once where ranks share cores
(:data:`asapgraph.engine.asap.GATE_SLEEP`, twenty-fourth session): the knob is applied
(``gate_sleep`` in ``--json`` per rank) or refused, and the answer stays within tol of
one process."""

import numpy as np
import pytest

from asapgraph.engine.asap import GATE_SLEEP

pytestmark = pytest.mark.mpi

TOL = 1e-9
ARGS = ["--np", "3", "--mode", "asap", "--tol", str(TOL)]


@pytest.mark.parametrize("value", ["2e-4", "0"])
def test_gate_sleep_applied(pagerank_run, tmp_path, value):
    _, ref = pagerank_run(tmp_path, "ref", ["--tol", "1e-13"], graph="rmat:12")
    js, x = pagerank_run(tmp_path, "run", ARGS, env={"ASAPGRAPH_ASAP_GATE_SLEEP": value})
    assert js["converged"], js
    assert np.abs(x - ref).sum() <= TOL, np.abs(x - ref).sum()
    assert {p["gate_sleep"] for p in js["per_rank"]} == {float(value)}, js["per_rank"]


def test_gate_sleep_default_and_virtual(pagerank_run, tmp_path):
    js, _ = pagerank_run(tmp_path, "host", ARGS)
    # the default where ranks share cores, else off (the machine decides)
    assert {p["gate_sleep"] for p in js["per_rank"]} in ({GATE_SLEEP}, {0.0}), js["per_rank"]
    js, _ = pagerank_run(tmp_path, "virtual",
                         [*ARGS, "--latency", "1e-4", "--clock", "virtual", "--compute", "model"],
                         env={"ASAPGRAPH_ASAP_GATE_SLEEP": "2e-4"})
    # the virtual clock's rounds never sleep on the host: not applied there, and shown so
    assert {p["gate_sleep"] for p in js["per_rank"]} == {0.0}, js["per_rank"]


@pytest.mark.parametrize("value", ["-1e-4", "nan", "2", "soon"])
def test_gate_sleep_refused(cli, refused, tmp_path, value):
    import os

    env = dict(os.environ, ASAPGRAPH_ASAP_GATE_SLEEP=value)
    r = cli(["pagerank", "rmat:8", *ARGS, "-q"], tmp_path, timeout=300, env=env)
    refused(r, "ASAPGRAPH_ASAP_GATE_SLEEP")
