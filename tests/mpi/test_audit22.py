"""Audit 22: regressions of defects found by a user-level audit, each checked alike on
one process and on K ranks where the defect could differ."""
import json
import sys

import pytest

pytestmark = [pytest.mark.mpi, pytest.mark.timeout(600)]

PR = "asapgraph.programs:PageRankProgram"


@pytest.mark.parametrize("max_iter", ["1", "5"])
def test_pagerank_program_max_iter_alike(tmp_path, max_iter, cli, scores):
    """``run PageRankProgram --max-iter K --allow-unconverged`` (BSP) wrote the program's
    delta form's K-th partial sum on one process (rmat:14, K = 5: L1 0.377 from the fixed
    point, the vector summing to 0.62) and PageRank's K-th iterate on ranks (L1 0.0019):
    two algorithms, both within their bounds.  Now one process runs PageRank's solver too:
    the same vector within rounding, the same iterations, residual and error bound on 1, 2
    and 3 ranks, and the same as ``asapgraph pagerank --max-iter K``."""
    ref = cli(["pagerank", "rmat:10", "--max-iter", max_iter, "--allow-unconverged", "-q",
               "--json", "-o", "ref.csv"], tmp_path)
    assert ref.returncode == 0, ref.stderr
    want = scores(tmp_path / "ref.csv")
    jref = json.loads(ref.stdout)
    for extra in [[], ["--np", "2"], ["--np", "3"]]:
        r = cli(["run", PR, "rmat:10", "--max-iter", max_iter, "--allow-unconverged", "-q",
                 "--json", "-o", "o.csv", *extra], tmp_path)
        assert r.returncode == 0, (extra, r.stderr)
        got = scores(tmp_path / "o.csv")
        assert got.keys() == want.keys()
        assert sum(abs(got[k] - want[k]) for k in want) < 1e-12, extra
        j = json.loads(r.stdout)
        assert j["iterations"] == int(max_iter) and j["converged"] is False, (extra, j)
        assert j["error_bound"] == pytest.approx(jref["error_bound"], rel=1e-9), (extra, j)
        assert j["residual"] == pytest.approx(jref["residual"], rel=1e-9), (extra, j)
        # without --allow-unconverged: exit 3 on every configuration
        u = cli(["run", PR, "rmat:10", "--max-iter", max_iter, "-q", "-o", "u.csv", *extra],
                tmp_path)
        assert u.returncode == 3 and "did not converge after" in u.stderr, (extra, u.stderr)


def test_pagerank_program_converged_iterations_alike(tmp_path, cli, scores):
    """Converged, the plain program takes PageRank's supersteps on one process as on ranks
    (rmat:10 at the default 1e-10: the delta form needed ~7x more)."""
    its, vecs = set(), []
    for extra in [[], ["--np", "2"]]:
        r = cli(["run", PR, "rmat:10", "-q", "--json", "-o", "o.csv", *extra], tmp_path)
        assert r.returncode == 0, (extra, r.stderr)
        its.add(json.loads(r.stdout)["iterations"])
        vecs.append(scores(tmp_path / "o.csv"))
    assert len(its) == 1 and its.pop() < 60, its
    assert sum(abs(vecs[0][k] - vecs[1][k]) for k in vecs[0]) < 1e-12


STEPS_COMM = """
import sys
import numpy as np
from mpi4py import MPI
from asapgraph.graph.io import load_graph
from asapgraph import programs as P
g = load_graph("rmat:8")
r = P.run(P.PageRankProgram(), g, steps=3, comm=MPI.COMM_WORLD)
if MPI.COMM_WORLD.Get_rank() == 0:
    one = P.run(P.PageRankProgram(), g, steps=3)
    print(r.iterations, repr(float(np.abs(r.values - one.values).sum())))
"""


def test_programs_run_steps_on_ranks_through_comm(tmp_path, mpirun):
    """``asapgraph.programs.run(PageRankProgram(), g, steps=3, comm=COMM_WORLD)`` on 2 ranks
    dropped ``steps`` on the way to the distributed engine: it ran PageRank's solver for 3
    iterations (L1 0.52 from one process's 3 supersteps); now the same 3 hops."""
    (tmp_path / "s.py").write_text(STEPS_COMM)
    r = mpirun(2, [sys.executable, str(tmp_path / "s.py")], timeout=180)
    assert r.returncode == 0, r.stderr
    it, l1 = r.stdout.split()
    assert it == "3" and float(l1) < 1e-12, r.stdout


@pytest.mark.parametrize("omega", ["-1", "2", "abc"])
def test_asap_omega_out_of_range_refused_alike(tmp_path, omega, mpirun):
    """``ASAPGRAPH_ASAP_OMEGA`` outside (0, 2) was taken (omega -1 converged only after the
    SOR guard turned SOR off; 2 and above diverge until then); a word was a ValueError on
    every rank.  Now one line naming the variable, exit 2, nothing written, on one process,
    on ``--np 2`` and ``--np 3`` and under the user's own mpiexec alike."""
    import os
    import subprocess

    env = dict(os.environ, ASAPGRAPH_ASAP_OMEGA=omega)
    want = (f"asapgraph: ASAPGRAPH_ASAP_OMEGA={omega!r} is not a number strictly between 0 "
            "and 2 (the SOR over-relaxation factor)")
    base = [sys.executable, "-m", "asapgraph", "pagerank", "rmat:6", "--mode", "asap", "-q",
            "-o", "x.csv"]
    for cmd in (base, base + ["--np", "2"], base + ["--np", "3"], None):
        r = (mpirun(2, base, timeout=180, env=env) if cmd is None else   # own mpiexec
             subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True,
                            timeout=180))
        assert r.returncode == 2 and r.stderr.strip() == want, (cmd, r.returncode, r.stderr)
        assert not (tmp_path / "x.csv").exists()


# each rank writes its outcome to a file of its own (two ranks' prints on one stdout can
# reach mpiexec interleaved: "ranran" once in a full suite)
API_OMEGA = """
from mpi4py import MPI
import asapgraph.engine as E
from asapgraph.errors import InputError
try:
    E.pagerank("rmat:6", mode="asap")
    out = "ran"
except InputError as e:
    out = f"refused: {e}"
with open(f"out{MPI.COMM_WORLD.Get_rank()}.txt", "w") as f:
    f.write(out)
"""


def _outcomes(tmp_path):
    return [(tmp_path / f"out{r}.txt").read_text() for r in range(2)]


def test_asap_omega_refused_by_the_python_api_on_ranks(tmp_path, mpirun):
    """The Python API on ranks (``asapgraph.engine.pagerank(..., mode="asap")`` under
    mpiexec) skips the CLI's up-front check: every rank's solver now refuses the value
    alike (an InputError on every rank, no hang), and a valid value runs."""
    (tmp_path / "s.py").write_text(API_OMEGA)
    r = mpirun(2, [sys.executable, str(tmp_path / "s.py")], timeout=180,
               env={"ASAPGRAPH_ASAP_OMEGA": "-1"})
    assert r.returncode == 0, r.stderr
    lines = _outcomes(tmp_path)
    assert all(ln.startswith("refused:") and "ASAPGRAPH_ASAP_OMEGA='-1'" in ln
               for ln in lines), lines
    r = mpirun(2, [sys.executable, str(tmp_path / "s.py")], timeout=180,
               env={"ASAPGRAPH_ASAP_OMEGA": "1.3"})
    assert r.returncode == 0 and _outcomes(tmp_path) == ["ran", "ran"], (r.stdout, r.stderr)
