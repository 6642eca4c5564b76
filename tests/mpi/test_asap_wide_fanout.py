"""Beyond 8 ranks an ASAP round flushes to enough expander neighbours that every peer is
served within 8 rounds, ``ceil((K - 1) / 4)`` (:func:`asapgraph.engine.asap.wide_fanout`;
benchmarks/REPORT.md, eighteenth session).  The MPI tests stay within 4 ranks, so the
rule's threshold and period are lowered through ``ASAPGRAPH_ASAP_WIDE_FANOUT_K`` and
``ASAPGRAPH_ASAP_WIDE_PERIOD``: on 4 ranks with ``--fanout 1`` and a period of 4 rounds a
round then reaches 2 peers.  ``--json`` reports the fanout used and the asked one, and the
answer stays within tol of one process (virtual clock, compute model, emulated 1 ms links
and a 3x straggler, so the run repeats exactly); without the override, or with the rule
off, the asked fanout stays.
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
    e.pop("ASAPGRAPH_ASAP_WIDE_FANOUT", None)
    e.pop("ASAPGRAPH_ASAP_WIDE_FANOUT_K", None)
    e.pop("ASAPGRAPH_ASAP_WIDE_PERIOD", None)
    e.update(env or {})
    r = cli(["pagerank", "rmat:12", *args, "--json", "-q", "-o", out], tmp_path, timeout=300,
            env=e)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout), _read(out)


def test_a_round_reaches_more_peers_beyond_the_threshold(cli, tmp_path):
    _, ref = _run(cli, tmp_path, "ref", ["--tol", "1e-13"])
    emu = ["--np", "4", "--mode", "asap", "--fanout", "1", "--tol", TOL, "--latency", "0.001",
           "--bandwidth", "125e6", "--straggler", "1:3", "--clock", "virtual", "--compute",
           "model"]
    got = {}
    low = {"ASAPGRAPH_ASAP_WIDE_FANOUT_K": "2", "ASAPGRAPH_ASAP_WIDE_PERIOD": "4"}
    for name, env in (("asked", {}), ("wide", low),
                      ("off", {**low, "ASAPGRAPH_ASAP_WIDE_FANOUT": "0"})):
        js, x = _run(cli, tmp_path, name, emu, env)
        assert js["converged"], js
        assert np.abs(x - ref).sum() <= TOL, (name, np.abs(x - ref).sum())
        got[name] = js
    assert got["asked"]["fanout"] == 1 and got["asked"]["fanout_asked"] == 1
    assert got["off"]["fanout"] == 1
    assert got["wide"]["fanout"] == 2 and got["wide"]["fanout_asked"] == 1
    assert got["wide"]["spectral_gap"] != got["asked"]["spectral_gap"]
    # the asked fanout's run is the same with the rule off (nothing else moves)
    assert got["off"]["virtual_seconds"] == got["asked"]["virtual_seconds"]
