"""networkx's ``pagerank`` dispatched to asapgraph's distributed engines
(``nx.config.backends.asapgraph.np`` / ``.mode``, :mod:`asapgraph.interop.nx_ranks`).

Each case runs a networkx user's script (``_nx_ranks_script.py``) in a fresh process with a
timeout, so a hang fails: in plain Python with ``np = K`` (the backend starts K ranks), and
under ``mpiexec -n K`` (every rank calls ``nx.pagerank``: the collective form).  The answer
is compared over the whole vector with networkx's own at tol 1e-13, on a weighted digraph
with string keys, an isolated node, dangling nodes, personalization and dangling dicts.
Tolerance: the backend asks the engines for a certified L1 error bound of
``alpha / (1 - alpha) * n * tol`` (networkx's own rule certifies that bound), here
``5.67 * 241 * 1e-10 = 1.4e-7``; BSP stops at networkx's superstep, so it matches networkx's
tol-1e-10 answer much more closely.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("networkx")

pytestmark = [pytest.mark.mpi]

HERE = Path(__file__).resolve().parent
SCRIPT = HERE / "_nx_ranks_script.py"
BOUND = 0.85 / 0.15 * 241 * 1e-10


def _env():
    return {k: v for k, v in os.environ.items()
            if not k.startswith(("PMI_", "OMPI_", "PMIX_", "MPI_LOCALNRANKS"))
            and k != "ASAPGRAPH_LAUNCHED"}


def _mpiexec():
    from asapgraph.comm.launch import find_mpiexec
    from asapgraph.errors import InputError

    try:
        return find_mpiexec()
    except InputError:
        pytest.skip("no mpiexec available")


def _script(tmp_path, mode, np_, extra=None, under=None, timeout=300):
    out = tmp_path / "rec.json"
    cmd = [sys.executable, str(SCRIPT), str(out), mode, str(np_)] + ([extra] if extra else [])
    if under:
        cmd = [_mpiexec(), "-n", str(under)] + cmd
    r = subprocess.run(cmd, cwd=tmp_path, env=_env(), capture_output=True, text=True,
                       timeout=timeout)
    assert r.returncode == 0, f"rc={r.returncode}\n{r.stdout[-2000:]}\n{r.stderr[-3000:]}"
    if under:
        return [json.loads((tmp_path / f"rec.json.rank{k}").read_text()) for k in range(under)]
    return json.loads(out.read_text())


def _l1(rec):
    ref, got = rec["ref"], rec["got"]
    assert set(got) == set(ref)
    return sum(abs(got[k] - ref[k]) for k in ref)


@pytest.mark.parametrize("mode,k", [("bsp", 2), ("asap", 2), ("bsp", 3), ("asap", 3),
                                    ("asap", 4)])
def test_started_ranks_match_networkx(tmp_path, mode, k):
    rec = _script(tmp_path, mode, k)
    assert "error" not in rec, rec.get("error")
    assert _l1(rec) <= BOUND
    run = rec["last_run"]
    assert run["mode"] == mode and run["ranks"] == k and run["converged"]
    assert run["error_bound"] <= run["tol"] <= BOUND * (1 + 1e-9)
    assert run["bytes_sent"] > 0


@pytest.mark.parametrize("mode", ["bsp", "asap"])
def test_under_mpiexec_every_rank_returns_the_answer(tmp_path, mode):
    recs = _script(tmp_path, mode, "none", under=2)
    for rec in recs:
        assert "error" not in rec, rec.get("error")
        assert _l1(rec) <= BOUND
        assert rec["last_run"]["ranks"] == 2 and rec["last_run"]["mode"] == mode
    assert recs[0]["got"] == recs[1]["got"]          # rank 0's vector, broadcast


def test_mode_without_ranks_runs_in_this_process(tmp_path):
    rec = _script(tmp_path, "asap", "none")
    assert "error" not in rec, rec.get("error")
    assert rec["last_run"] == {}                     # no run on ranks
    assert _l1(rec) <= BOUND


@pytest.mark.parametrize("np_,extra,under,message", [
    (2, "nstart", None, "nstart is not supported on MPI ranks"),
    (0, None, None, "np must be a positive integer"),
    (3, None, 2, "np is 3 but this program runs on 2 MPI ranks"),
])
def test_refusals(tmp_path, np_, extra, under, message):
    recs = _script(tmp_path, "bsp", np_, extra, under)
    for rec in (recs if under else [recs]):
        assert "got" not in rec
        assert rec["error"].startswith("ValueError") and message in rec["error"], rec["error"]


def test_bad_mode_is_refused(tmp_path):
    rec = _script(tmp_path, "fast", 2)
    assert rec["error"].startswith("ValueError") and "mode must be one of" in rec["error"]
