"""Audit 30c (one process; the ranks' side: tests/mpi/test_audit30c_mpi.py): users' own
vertex programs.

* A ufunc combiner that is not commutative or not associative (``np.subtract``,
  ``np.power``, an averaging ``np.frompyfunc``) ran, and its answer depended on the order
  in which the engine combined a vertex's messages: ``run sub.py:Sub g --np 3`` wrote
  other values than one process for 166 of 300 vertices, exit 0 on both.  Now refused
  when the program is validated (one line, exit 2), naming the law and an example.
* ``run P G --mode asap --tol 0`` of a sum-accumulative program ran on one process (to
  ``--max-iter``, exit 3) and on ranks said ``P raised ValueError: --tol 0 cannot be
  certified ...`` with exit status 1 (an internal error); programs with hooks (the
  general engine) were not refused on ranks at all.  Now refused on every rank count
  as ``katz --mode asap --tol 0`` is: one line, exit status 2.
"""
import subprocess
import sys

import numpy as np
import pytest

from asapgraph import Graph
from asapgraph.engine.program import ProgramError
from asapgraph.errors import InputError
from asapgraph.programs import VertexProgram, run

PROGRAMS = '''
import numpy as np
from asapgraph.programs import VertexProgram


class Sub(VertexProgram):
    """Value form with a ufunc combiner that is neither commutative nor associative."""
    combiner = np.subtract
    direction = "out"
    edge_op = None

    def init(self, ctx):
        return ctx.ids.astype(float)

    def message(self, ctx, x, w):
        return x

    def apply(self, ctx, state, combined, has_msg):
        return np.where(has_msg, combined, state), np.zeros(ctx.n_local, bool)


class Katz(VertexProgram):
    name = "katz"
    combiner = "sum"
    direction = "out"
    edge_op = "copy"
    accumulative = True

    def init_delta(self, ctx):
        return np.zeros(ctx.n_local), np.ones(ctx.n_local)

    def coef(self, ctx):
        return np.full(ctx.n_local, 0.02)


class HookedPR(Katz):
    """A sum program with aggregate/post_delta hooks (the general engine on ranks)."""
    name = "pr"
    aggregators = {"dangling": "sum"}

    def init_delta(self, ctx):
        return np.zeros(ctx.n_local), np.full(ctx.n_local, 0.15 / ctx.n)

    def coef(self, ctx):
        d = ctx.out_degree.astype(float)
        return np.where(d > 0, 0.85 / np.maximum(d, 1), 0.0)

    def aggregate(self, ctx, sent):
        return {"dangling": float(sent[ctx.out_degree == 0].sum())}

    def post_delta(self, ctx, deltas):
        return deltas + 0.85 * ctx.aggregates.get("dangling", 0.0) / ctx.n


class Reach(VertexProgram):
    name = "level"
    value_dtype = np.int64
    combiner = "min"
    direction = "out"
    edge_op = "add_one"
    accumulative = True

    def init(self, ctx):
        return np.where(ctx.ids == 0, 0, np.iinfo(np.int64).max).astype(np.int64)
'''


def _graph_file(path, n=120, m=600, seed=3):
    rng = np.random.default_rng(seed)
    s, d = rng.integers(0, n, m), rng.integers(0, n, m)
    path.write_text("".join(f"{a} {b}\n" for a, b in zip(s, d)))
    return path


def _cli(args, cwd):
    return subprocess.run([sys.executable, "-m", "asapgraph", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=180)


def _program(combiner, dtype=np.float64):
    class P(VertexProgram):
        value_dtype = dtype
        direction = "out"
        edge_op = None

        def init(self, ctx):
            return ctx.ids.astype(dtype)

        def message(self, ctx, x, w):
            return x

        def apply(self, ctx, state, combined, has_msg):
            return np.where(has_msg, combined, state), np.zeros(ctx.n_local, bool)

    P.combiner = combiner
    return P()


def _small_graph():
    rng = np.random.default_rng(0)
    return Graph.from_edges(rng.integers(0, 50, 300), rng.integers(0, 50, 300), n=50)


@pytest.mark.parametrize("comb,law", [
    (np.subtract, "commutative"), (np.power, "commutative"), (np.arctan2, "commutative"),
    (np.frompyfunc(lambda a, b: (a + b) / 2, 2, 1), "associative"),
])
def test_order_dependent_ufunc_combiner_refused(comb, law):
    with pytest.raises(ProgramError, match=f"is not {law}"):
        run(_program(comb), _small_graph())


@pytest.mark.parametrize("comb,dtype", [
    (np.add, np.float64), (np.maximum, np.float64), (np.fmin, np.float64),
    (np.logaddexp, np.float64), (np.bitwise_or, np.int64), (np.bitwise_xor, np.int64),
    (np.multiply, np.int64), (np.gcd, np.int64),
])
def test_order_free_ufunc_combiners_still_run(comb, dtype):
    res = run(_program(comb, dtype), _small_graph())
    assert res.values.shape == (50,)


def test_order_dependent_combiner_refused_by_cli(tmp_path):
    (tmp_path / "progs.py").write_text(PROGRAMS)
    g = _graph_file(tmp_path / "g.txt")
    r = _cli(["run", "progs.py:Sub", g, "-q", "-o", "out.csv"], tmp_path)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, r.stderr
    assert "combiner np.subtract is not commutative" in lines[0]
    assert not (tmp_path / "out.csv").exists()


@pytest.mark.parametrize("cls", ["Katz", "HookedPR"])
def test_asap_tol0_of_a_sum_program_refused(tmp_path, cls):
    (tmp_path / "progs.py").write_text(PROGRAMS)
    g = _graph_file(tmp_path / "g.txt")
    r = _cli(["run", f"progs.py:{cls}", g, "--mode", "asap", "--tol", "0", "-q", "-o",
              "out.csv"], tmp_path)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, r.stderr
    assert "--tol 0 cannot be certified by an asynchronous run" in lines[0]
    assert not (tmp_path / "out.csv").exists()
    # the Python API alike (an InputError, a ValueError)
    sys.path.insert(0, str(tmp_path))
    try:
        import importlib
        mod = importlib.import_module("progs")
        with pytest.raises(InputError, match="cannot be certified"):
            run(getattr(mod, cls)(), _small_graph(), mode="asap", tol=0)
        # BSP at tol 0 runs (it stops when a superstep changes nothing, or at max_iter)
        res = run(getattr(mod, cls)(), _small_graph(), mode="bsp", tol=0, max_iter=5)
        assert res.iterations == 5
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("progs", None)


def test_asap_tol0_of_a_minmax_program_runs(tmp_path):
    (tmp_path / "progs.py").write_text(PROGRAMS)
    g = _graph_file(tmp_path / "g.txt")
    r = _cli(["run", "progs.py:Reach", g, "--mode", "asap", "--tol", "0", "-q", "-o",
              "out.csv"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "out.csv").exists()


def test_json_shows_the_applied_max_iter_and_no_tol_under_steps(tmp_path):
    """``run --json`` said ``max_iter: null`` where the program's ``default_max_iter``
    applied (``tol`` showed the program's default), and under ``--steps K`` it showed the
    program's ``default_tol``, which ``--steps`` replaces."""
    import json

    (tmp_path / "progs.py").write_text(PROGRAMS + '''

class Capped(Katz):
    default_max_iter = 37
    default_tol = 1e-7
''')
    g = _graph_file(tmp_path / "g.txt")
    for args, want in [([], (37, 1e-7)), (["--max-iter", "12"], (12, 1e-7)),
                       (["--tol", "1e-9"], (37, 1e-9)), (["--steps", "3"], (None, None))]:
        r = _cli(["run", "progs.py:Capped", g, "--json", "-q", *args], tmp_path)
        assert r.returncode == 0, r.stderr
        js = json.loads(r.stdout)
        assert (js["max_iter"], js["tol"]) == want, (args, js["max_iter"], js["tol"])
