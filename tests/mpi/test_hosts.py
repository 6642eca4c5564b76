"""The README's "Running on several hosts" section, tested on one host.

* The documented form ``mpiexec -n 2 python -m asapgraph pagerank INPUT ...`` (no
  ``--np``; the ``mpiexec`` found the way the package finds it,
  :func:`asapgraph.comm.launch.find_mpiexec`: the MPICH wheel's, next to this Python)
  gives the same full vector as ``asapgraph pagerank INPUT --np 2`` and as one process.
  Tolerances: every run is asked for ``--tol 1e-12`` (a certified L1 error bound on each
  answer), so two answers differ by at most 2e-12 in L1; the test allows 1e-10 in L1
  (and 1e-12 between the two 2-rank runs, which do the same arithmetic).
* An input file that only rank 0 can see (simulated with a relative path and a different
  working directory per rank, ``mpiexec -n 1 -wdir A ... : -n 1 -wdir B ...``): a text
  file (plain or gzip) is read by rank 0 and streamed to the other rank, and the answer
  equals one process's (L1 <= 1e-10, both at a certified 1e-12); a binary ``.npy`` array
  only rank 0 sees, or a file rank 0 cannot see, is refused with one line naming the file
  and exit status 2, never a hang.
"""
import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = [pytest.mark.mpi]

REPO = Path(__file__).resolve().parents[2]
DATASET = REPO / "datasets" / "rmat-12.txt.gz"
TOL = ["--tol", "1e-12"]


def _mpiexec():
    from asapgraph.comm.launch import find_mpiexec
    from asapgraph.errors import InputError

    try:
        return find_mpiexec()
    except InputError:
        pytest.skip("no mpiexec available")


def _run(cmd, cwd, timeout=240):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PMI_", "OMPI_", "PMIX_", "MPI_LOCALNRANKS"))
           and k != "ASAPGRAPH_LAUNCHED"}
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)


def _ranks(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["node", "rank"], rows[0]
    a = np.array([[int(r[0]), float(r[1])] for r in rows[1:]])
    a = a[np.argsort(a[:, 0], kind="stable")]
    return a[:, 0].astype(np.int64), a[:, 1]


@pytest.mark.slow
def test_documented_mpiexec_form_matches_np_and_one_process(tmp_path):
    if not DATASET.exists():
        pytest.skip("bundled dataset missing")
    exe = _mpiexec()
    py = [sys.executable, "-m", "asapgraph"]
    common = ["pagerank", str(DATASET), *TOL, "--json", "-q"]
    runs = {
        "mpiexec": [exe, "-n", "2", *py, *common, "-o", "mpiexec.csv"],
        "np": [*py, *common, "--np", "2", "-o", "np.csv"],
        "one": [*py, *common, "-o", "one.csv"],
    }
    info, vec = {}, {}
    for name, cmd in runs.items():
        r = _run(cmd, tmp_path)
        assert r.returncode == 0, f"{name}: rc={r.returncode}\nstderr:{r.stderr[-3000:]}"
        info[name] = json.loads(r.stdout)
        vec[name] = _ranks(tmp_path / f"{name}.csv")
    assert info["mpiexec"]["ranks"] == 2 and info["np"]["ranks"] == 2, info
    assert info["mpiexec"]["engine"] == "distributed" == info["np"]["engine"]
    assert info["one"].get("ranks", 1) == 1
    ids, one = vec["one"]
    assert len(ids) == info["one"]["vertices"]
    for name in ("mpiexec", "np"):
        ids2, x = vec[name]
        assert np.array_equal(ids, ids2), name
        assert info[name]["error_bound"] <= 1e-12
        l1 = float(np.abs(x - one).sum())
        assert l1 <= 1e-10, (name, l1)
    l1 = float(np.abs(vec["mpiexec"][1] - vec["np"][1]).sum())
    assert l1 <= 1e-12, l1


def _split_dirs(tmp_path, name):
    seen, blind = tmp_path / "rank0", tmp_path / "rank1"
    seen.mkdir()
    blind.mkdir()
    if name.endswith(".gz"):
        shutil.copy(DATASET, seen / name)
    elif name.endswith(".npy"):
        import gzip

        rows = np.loadtxt(gzip.open(DATASET), dtype=np.int64, comments="#")
        np.save(seen / name, rows[:, :2])
    else:
        import gzip

        (seen / name).write_bytes(gzip.decompress(DATASET.read_bytes()))
    return seen, blind


@pytest.mark.parametrize("mode", ["bsp", "asap"])
@pytest.mark.parametrize("name", ["rmat-12.txt.gz", "rmat-12.txt"])
def test_input_only_rank0_sees_is_streamed_from_rank0(tmp_path, name, mode):
    """A text file on rank 0's host only: rank 0 reads it and streams it to the others;
    the answer equals one process's (both asked for a certified L1 bound of 1e-12)."""
    if not DATASET.exists():
        pytest.skip("bundled dataset missing")
    exe = _mpiexec()
    seen, blind = _split_dirs(tmp_path, name)
    rank = [sys.executable, "-m", "asapgraph", "pagerank", name, "-q", "--json", "--mode",
            mode, *TOL, "-o", "ranks.csv"]
    r = _run([exe, "-n", "1", "-wdir", str(seen), *rank, ":",
              "-n", "1", "-wdir", str(blind), *rank], tmp_path, timeout=240)
    assert r.returncode == 0, f"rc={r.returncode}\nstderr:{r.stderr[-3000:]}"
    assert json.loads(r.stdout)["ranks"] == 2
    one = _run([sys.executable, "-m", "asapgraph", "pagerank", name, "-q", *TOL,
                "-o", "single.csv"], seen)
    assert one.returncode == 0, one.stderr[-2000:]
    (ia, va), (ib, vb) = _ranks(seen / "ranks.csv"), _ranks(seen / "single.csv")
    assert len(ia) > 1000 and np.array_equal(ia, ib)
    assert float(np.abs(va - vb).sum()) <= 1e-10
    assert not (blind / "ranks.csv").exists()


@pytest.mark.parametrize("where", ["rank1-only text", "rank0-only npy"])
def test_input_rank0_cannot_use_is_refused(tmp_path, where):
    """A file rank 0 cannot read (only another rank can), or a binary edge array only rank
    0 can read: one line naming the file, exit status 2, never a hang."""
    if not DATASET.exists():
        pytest.skip("bundled dataset missing")
    exe = _mpiexec()
    name = "g.npy" if "npy" in where else "g.txt"
    seen, blind = _split_dirs(tmp_path, name)
    first, second = (blind, seen) if where.startswith("rank1") else (seen, blind)
    rank = [sys.executable, "-m", "asapgraph", "pagerank", name, "-q", "--json"]
    r = _run([exe, "-n", "1", "-wdir", str(first), *rank, ":",
              "-n", "1", "-wdir", str(second), *rank], tmp_path, timeout=120)
    assert r.returncode == 2, f"rc={r.returncode}\nstderr:{r.stderr[-3000:]}"
    lines = [ln for ln in r.stderr.splitlines() if name in ln]
    assert len(lines) == 1 and lines[0].startswith(name), r.stderr
    if "npy" in where:
        assert "only rank 0 can read this file" in lines[0]
    assert r.stdout == ""
