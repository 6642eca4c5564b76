"""Audit 31c: ``asapgraph bench`` records the fanout asked for beside the one applied.

The bench grid clamps ``--fanout`` to K-1 (the engine's reduce reaches at most K-1 peers)
and recorded only the clamped value: ``--fanout 3 --ranks 2`` gave a record with
``fanout`` 1 and no trace of the 3.  The engine's ``--json`` reports ``fanout`` and
``fanout_asked``; bench's records now do the same (BSP: ``fanout_asked`` None).
"""
import json
import subprocess
import sys

import pytest


def test_grid_keeps_the_asked_fanout():
    from asapgraph.bench.scenarios import grid

    specs = grid(["rmat:10"], ranks=[2, 4], modes=["bsp", "asap"], fanout=[5])
    got = sorted((s.ranks, s.mode, s.fanout, s.fanout_asked) for s in specs)
    assert got == [(2, "asap", 1, 5), (2, "bsp", 2, None), (4, "asap", 3, 5),
                   (4, "bsp", 2, None)], got
    assert all(s.as_dict()["fanout_asked"] == s.fanout_asked for s in specs)


@pytest.mark.mpi
@pytest.mark.timeout(600)
def test_bench_record_reports_fanout_asked(tmp_path):
    r = subprocess.run([sys.executable, "-m", "asapgraph", "bench", "--grid", "--graphs",
                        "rmat:8", "--ranks", "2", "--modes", "asap,bsp", "--fanout", "3",
                        "--no-peers", "-q", "--json-out", "g.json", "--outdir", "rep"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    recs = json.loads((tmp_path / "g.json").read_text())["records"]
    asap = [x for x in recs if x["mode"] == "asap"]
    bsp = [x for x in recs if x["mode"] == "bsp"]
    assert len(asap) == 1 and len(bsp) == 1, recs
    assert asap[0]["ok"] and asap[0]["fanout"] == 1 and asap[0]["fanout_asked"] == 3, asap
    assert asap[0]["engine_fanout"] == 1, asap
    assert bsp[0]["ok"] and bsp[0]["fanout_asked"] is None, bsp
