"""ASAP sends a sweep's output to a peer that waits for it before sweeping again
(:meth:`asapgraph.engine.asap._Solve.flush_first`).

With window 1 a sweep's output waits for the ACK of the previous message, which the peer
sends once it has applied it, after its own sweep.  An ACK that arrived during this
rank's sweep is seen by the next round's poll; when that poll also brought fresh input,
the rank used to sweep again first and send after, so the output reached a peer whose
sweep gate was waiting for it a whole sweep late: on the host's clock the two ranks of
rmat:20 then fell into taking turns (benchmarks/REPORT.md, seventeenth session).  On the
virtual clock with the compute model the runs are deterministic, so the rule is checked
both ways on a run where it applies (rmat:14, 2 ranks, rank 1 three times slower, the
sweep gate's patience set to 0.8 sweeps: since the twenty-second session the gate on a
delayed link also waits the link's round trip, and then no output is held either way):
``held_for_waiting`` counts the sweeps that started while an output for a waiting peer
could have gone out; with the rule none does, without it one does.  The answers are
checked against one process.
"""
import json
import os

import numpy as np
import pytest

pytestmark = pytest.mark.mpi

TOL = 1e-8


def _read(path):
    rows = [line.split(",") for line in path.read_text().splitlines()[1:]]
    x = np.zeros(len(rows))
    for v, val in rows:
        x[int(v)] = float(val)
    return x


def _run(cli, tmp_path, name, args, env=None):
    out = tmp_path / f"{name}.csv"
    e = dict(os.environ)
    e.update(env or {})
    r = cli(["pagerank", "rmat:14", *args, "--json", "-q", "-o", out], tmp_path, timeout=300,
            env=e)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout), _read(out)


def test_output_for_a_waiting_peer_is_not_held_across_a_sweep(cli, tmp_path):
    _, ref = _run(cli, tmp_path, "ref", ["--tol", "1e-13"])
    emu = ["--np", "2", "--mode", "asap", "--tol", TOL, "--latency", "0.001", "--bandwidth",
           "125e6", "--straggler", "1:3", "--clock", "virtual", "--compute", "model"]
    got = {}
    for ff in ("1", "0"):
        js, x = _run(cli, tmp_path, f"ff{ff}", emu, {"ASAPGRAPH_ASAP_FLUSH_FIRST": ff,
                                                      "ASAPGRAPH_ASAP_PATIENCE": "0.8"})
        assert js["converged"], js
        assert np.abs(x - ref).sum() <= TOL, (ff, np.abs(x - ref).sum())
        assert all(p["sweep_patience"] > 0 for p in js["per_rank"])  # the gate is on
        got[ff] = sum(p.get("held_for_waiting", 0) for p in js["per_rank"])
    assert got["1"] == 0, got
    assert got["0"] > 0, got  # the scenario exercises the rule
