"""Audit 30c on ranks (one process: tests/test_audit30c.py): users' own programs refused
alike on one process and on K ranks, in both modes.

* ``run P G --mode asap --tol 0`` of a sum-accumulative program: ranks exited 1 with
  ``P raised ValueError: --tol 0 cannot be certified ...`` (tuned engine) or ran it
  (a program with hooks, the general engine); one process ran to ``--max-iter`` (exit 3).
* A ufunc combiner that is not commutative (``np.subtract``): 166 of 300 values differed
  between one process and 3 ranks, exit 0 on both.
* A hook of the general engine failing on one rank only in ASAP (``post_delta`` returning
  NaN, ``aggregate`` raising): the hooks run between termination waves, not collectively,
  and the failing rank waited forever in an error agreement the others never reached
  (``post_delta``: the job hung) or aborted the job.  Now the rank stops sweeping, the run
  winds down and every rank raises the same error: one line, exit 2 (bad values) or 1
  (the program raised), as on one process and in BSP.
* ``result()`` raising on one rank only: the line plus MPICH's ``Abort(1) on node 1``
  line; now agreed (one line).
"""
import importlib.util
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location(
    "_audit30c_one", Path(__file__).resolve().parents[1] / "test_audit30c.py")
_one = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_one)
PROGRAMS, _graph_file = _one.PROGRAMS, _one._graph_file

pytestmark = [pytest.mark.mpi, pytest.mark.timeout(900)]

ASAP = [["--mode", "asap"], ["--np", "2", "--mode", "asap"], ["--np", "3", "--mode", "asap"]]


@pytest.mark.parametrize("cls", ["Katz", "HookedPR"])
def test_asap_tol0_refused_alike(tmp_path, refused_alike, cls):
    (tmp_path / "progs.py").write_text(PROGRAMS)
    g = _graph_file(tmp_path / "g.txt")
    line = refused_alike(tmp_path, ["run", f"progs.py:{cls}", g, "--tol", "0"],
                         "--tol 0 cannot be certified", configs=ASAP, output="out.csv")
    assert line.startswith("asapgraph: ")


def test_bsp_tol0_and_minmax_asap_tol0_run_on_ranks(tmp_path, cli):
    (tmp_path / "progs.py").write_text(PROGRAMS)
    g = _graph_file(tmp_path / "g.txt")
    r = cli(["run", "progs.py:Reach", g, "--tol", "0", "--np", "2", "--mode", "asap", "-q",
             "-o", "a.csv"], tmp_path)
    assert r.returncode == 0, r.stderr
    one = cli(["run", "progs.py:Reach", g, "-q", "-o", "b.csv"], tmp_path)
    assert one.returncode == 0, one.stderr
    assert (tmp_path / "a.csv").read_text() == (tmp_path / "b.csv").read_text()
    r = cli(["run", "progs.py:Katz", g, "--tol", "0", "--np", "2", "--max-iter", "5",
             "--allow-unconverged", "-q", "-o", "c.csv"], tmp_path)
    assert r.returncode == 0, r.stderr


def test_non_commutative_combiner_refused_alike(tmp_path, refused_alike):
    (tmp_path / "progs.py").write_text(PROGRAMS)
    g = _graph_file(tmp_path / "g.txt")
    refused_alike(tmp_path, ["run", "progs.py:Sub", g], "combiner np.subtract is not commutative",
                  configs=[[], ["--np", "2"], ["--np", "3"]], output="out.csv")


def test_json_max_iter_and_tol_alike_on_ranks(tmp_path, cli):
    """``--json`` ``max_iter``/``tol`` of ``run``: the program's defaults where they apply,
    null under ``--steps``, the same on 1 and K ranks in both modes."""
    import json

    (tmp_path / "progs.py").write_text(PROGRAMS + '''

class Capped(Katz):
    default_max_iter = 37
    default_tol = 1e-7
''')
    g = _graph_file(tmp_path / "g.txt")
    for args, want in [([], (37, 1e-7)), (["--np", "2"], (37, 1e-7)),
                       (["--np", "3", "--mode", "asap"], (37, 1e-7)),
                       (["--steps", "3"], (None, None)), (["--steps", "3", "--np", "2"], (None, None))]:
        r = cli(["run", "progs.py:Capped", g, "--json", "-q", *args], tmp_path)
        assert r.returncode == 0, r.stderr
        js = json.loads(r.stdout)
        assert (js["max_iter"], js["tol"]) == want, (args, js["max_iter"], js["tol"])


HOSTILE = PROGRAMS + '''

class PostNaN(HookedPR):
    calls = 0

    def post_delta(self, ctx, deltas):
        self.calls += 1
        d = super().post_delta(ctx, deltas)
        if ctx.rank == ctx.size - 1 and self.calls == 1:  # (the first: every rank has one)
            d = d.copy()
            d[0] = np.nan
        return d


class AggRaises(HookedPR):
    calls = 0

    def aggregate(self, ctx, sent):
        self.calls += 1
        if ctx.rank == ctx.size - 1 and self.calls == 1:
            raise RuntimeError("aggregate failed")
        return super().aggregate(ctx, sent)


class ResultRaises(Katz):
    def result(self, ctx, state):
        if ctx.rank == ctx.size - 1:
            raise RuntimeError("result failed")
        return state
'''

BOTH = [[], ["--mode", "asap"], ["--np", "2"], ["--np", "2", "--mode", "asap"],
        ["--np", "3", "--mode", "asap"]]


def test_hook_returning_nan_on_one_rank_refused_alike(tmp_path, refused_alike):
    (tmp_path / "progs.py").write_text(HOSTILE)
    g = _graph_file(tmp_path / "g.txt")
    refused_alike(tmp_path, ["run", "progs.py:PostNaN", g],
                  "PostNaN.post_delta() returned non-finite deltas", configs=BOTH,
                  output="out.csv")


@pytest.mark.parametrize("cls,words", [("AggRaises", "raised RuntimeError: aggregate failed"),
                                       ("ResultRaises", "raised RuntimeError: result failed")])
def test_callback_raising_on_one_rank_one_line(tmp_path, cli, cls, words):
    (tmp_path / "progs.py").write_text(HOSTILE)
    g = _graph_file(tmp_path / "g.txt")
    seen = set()
    for extra in BOTH:
        r = cli(["run", f"progs.py:{cls}", g, "-q", "-o", "out.csv", *extra], tmp_path,
                timeout=180)
        lines = r.stderr.strip().splitlines()
        assert r.returncode == 1 and len(lines) == 1, (extra, r.returncode, r.stderr[-2000:])
        assert words in lines[0], (extra, lines)
        assert not (tmp_path / "out.csv").exists()
        seen.add(lines[0])
    assert len(seen) == 1, seen
