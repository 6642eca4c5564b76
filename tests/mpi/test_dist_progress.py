"""Distributed runs report progress on stderr from rank 0 only, and nothing with --quiet.

The loader's phases are always printed (one line each, from rank 0: never once per rank);
supersteps / waves are throttled to a few lines per second, so a long run shows a line at
least every second or so (a short one may show none).  Answers are checked elsewhere.
"""
import subprocess
import sys

import pytest

pytestmark = pytest.mark.mpi


def _run(args, cwd):
    return subprocess.run([sys.executable, "-m", "asapgraph", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def _each_once(stderr, phases):
    """Every phase line appears exactly once (rank 0 reports; the others stay quiet)."""
    lines = stderr.splitlines()
    for phase in phases:
        hits = [ln for ln in lines if phase in ln]
        assert len(hits) == 1, (phase, stderr)


@pytest.mark.parametrize("mode", ["bsp", "asap"])
def test_rank0_reports_loading_phases_once(mode, tmp_path):
    r = _run(["pagerank", "rmat:12", "--np", "3", "--mode", mode, "-o", str(tmp_path / "r.csv")],
             tmp_path)
    assert r.returncode == 0, r.stderr
    lines = r.stderr.splitlines()
    # a spec: each rank generates its slice and sends each owner its rows (no shuffle);
    # BSP's in-rows (each edge to the owner of its destination, engine/pull.py)
    rows = ("sent each owner its in-rows", "built the in-rows") if mode == "bsp" else \
        ("sent each owner its rows", "built the local graphs")
    _each_once(r.stderr, ("loading rmat:12 on 3 ranks", "generated ",
                          "partitioned (range) over 3 ranks") + rows)
    step = "superstep" if mode == "bsp" else "wave"
    assert all(ln.startswith("asapgraph: ") for ln in lines), r.stderr
    assert not [ln for ln in lines if "iteration" in ln and step not in ln], r.stderr
    q = _run(["pagerank", "rmat:12", "--np", "3", "--mode", mode, "-q",
              "-o", str(tmp_path / "q.csv")], tmp_path)
    assert q.returncode == 0 and q.stderr == "", q.stderr


def test_rank0_reports_text_loading_phases_once(tmp_path):
    p = tmp_path / "g.txt"
    p.write_text("".join(f"{i} {(i * 7 + 3) % 50}\n" for i in range(200)))
    r = _run(["pagerank", str(p), "--np", "2", "-o", str(tmp_path / "r.csv")], tmp_path)
    assert r.returncode == 0, r.stderr
    _each_once(r.stderr, ("read ", "mapped ids", "partitioned (range) over 2 ranks",
                          "shuffled the edges", "built the local graphs"))
