"""The program API's contract (engine/program.py): checked callback return values,
value_dtype, exactly-k-steps runs; on one process and on MPI ranks."""
import numpy as np
import pytest

import asapgraph.programs as P
from asapgraph import Graph
from asapgraph.engine.program import ProgramError
from asapgraph.programs import VertexProgram


def _graph():
    src = np.array([0, 1, 2, 3, 3, 4, 5], dtype=np.int64)
    dst = np.array([1, 2, 0, 4, 5, 5, 3], dtype=np.int64)
    return Graph.from_edges(src, dst, n=7)   # vertex 6 isolated


class Hops(VertexProgram):
    """Hops from vertex 0 (value form, int64)."""
    name = "hops"
    value_dtype = np.int64
    combiner = "min"
    edge_op = "add_one"
    default_max_iter = 100

    def init(self, ctx):
        x = np.full(ctx.n_local, 1 << 40, dtype=np.int64)
        x[ctx.vertices == 0] = 0
        return x, ctx.vertices == 0

    def apply(self, ctx, state, combined, has_msg):
        new = np.minimum(state, combined)
        return new, new < state


class BadShapeInit(Hops):
    def init(self, ctx):
        return np.zeros(ctx.n_local + 1, dtype=np.int64)


class FloatScatter(Hops):
    def scatter(self, ctx, state):
        return state * 0.5


class BadDeltas(VertexProgram):
    name = "baddeltas"
    accumulative = True
    edge_op = "copy"

    def init_delta(self, ctx):
        return np.zeros(ctx.n_local), np.ones(3)


#: x <- 2 x every step: never converges on its own (the residual only grows); also
#: written to a file for the command-line tests
DOUBLER_FILE = '''
import numpy as np
from asapgraph.programs import VertexProgram


class Doubler(VertexProgram):
    name = "x"
    edge_op = "copy"

    def init(self, ctx):
        return np.ones(ctx.n_local)

    def apply(self, ctx, state, combined, has_msg):
        return state * 2.0

    def residual(self, ctx, old, new):
        return float(np.abs(new - old).sum())
'''
_ns = {}
exec(DOUBLER_FILE, _ns)
Doubler = _ns["Doubler"]


class Scalar(Doubler):
    name = "scalar"

    def apply(self, ctx, state, combined, has_msg):
        return 1.0


@pytest.mark.parametrize("prog, cb, words", [
    (BadShapeInit(), "init", "a state array of more rows than expected"),
    (FloatScatter(), "scatter", "dtype float64"),
    (BadDeltas(), "init_delta", "deltas with fewer values than expected"),
    (Scalar(), "apply", None),
])
def test_wrong_return_value_names_the_callback(prog, cb, words):
    with pytest.raises(ProgramError) as e:
        P.run(prog, _graph())
    msg = str(e.value)
    assert f"{type(prog).__name__}.{cb}()" in msg
    assert "\n" not in msg
    if words:
        assert words in msg


def test_user_object_is_not_modified_and_checks_pass_on_good_program():
    prog = Hops()
    res = P.run(prog, _graph())
    assert type(prog) is Hops and "init" not in vars(prog)  # the user object is unchanged
    assert res.converged
    assert res.values.tolist()[:6] == [0, 1, 2, 1 << 40, 1 << 40, 1 << 40]


def test_value_dtype_must_be_a_kernel_dtype_with_builtin_ops():
    class F32(Hops):
        value_dtype = np.float32

    with pytest.raises(ProgramError, match="float64 or int64"):
        P.run(F32(), _graph())


def test_exactly_k_steps_is_converged():
    g = _graph()
    for k in (0, 1, 5):
        res = P.run(Doubler(), g, steps=k)
        assert res.converged and res.iterations == k
        assert np.array_equal(res.values, np.full(7, 2.0 ** k))
    # without steps the same program hits max_iter and is not converged
    assert not P.run(Doubler(), g, max_iter=5).converged


def test_steps_stop_early_only_at_a_fixpoint():
    from scipy.sparse.csgraph import shortest_path

    g = _graph()
    res = P.run(Hops(), g, steps=50)
    # the peer: hops from vertex 0 by scipy (unreachable: Hops' initial 1 << 40)
    src, dst, _ = g.edges()
    A = np.zeros((7, 7))
    A[src, dst] = 1
    d = shortest_path(A, unweighted=True, indices=0)
    ref = np.where(np.isinf(d), 1 << 40, d).astype(np.int64)
    assert ref.tolist()[:3] == [0, 1, 2] and (ref[3:] == 1 << 40).all()  # not vacuous
    assert res.converged and np.array_equal(res.values, ref)
    # stopped at the first step that changed nothing: the farthest reached vertex is 2
    # hops away, so step 3 is the quiet one, as in the run without steps
    assert res.iterations == int(d[np.isfinite(d)].max()) + 1 == 3
    free = P.run(Hops(), g)
    assert free.iterations == res.iterations and np.array_equal(free.values, res.values)


def test_steps_refused_in_asap_and_when_not_whole():
    with pytest.raises(ProgramError, match="mode='bsp'"):
        P.run(P.KatzProgram(alpha=0.01), _graph(), mode="asap", steps=3)
    with pytest.raises(ProgramError, match="whole number"):
        P.run(Doubler(), _graph(), steps=2.5)


@pytest.mark.mpi
@pytest.mark.timeout(540)  # two launches of up to 240 s (pytest-timeout's 300 s would fire first)
@pytest.mark.parametrize("ranks", [1, 2])
def test_cli_steps_same_on_one_and_two_ranks(tmp_path, ranks):
    import json
    import os
    import subprocess
    import sys

    f = tmp_path / "dbl.py"
    f.write_text(DOUBLER_FILE)
    exe = os.path.join(os.path.dirname(sys.executable), "asapgraph")
    base = [exe, "run", f"{f}:Doubler", "rmat:6", "-q", "--np", str(ranks)]
    r = subprocess.run(base + ["--steps", "3", "--json", "-o", str(tmp_path / "o.csv")],
                       cwd=tmp_path, capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stderr
    js = json.loads(r.stdout)
    assert (js["iterations"], js["converged"], js["steps"]) == (3, True, 3)
    vals = np.loadtxt(tmp_path / "o.csv", delimiter=",", skiprows=1)[:, 1]
    assert np.all(vals == 8.0)
    for extra in (["--tol", "1"], ["--max-iter", "9"], ["--mode", "asap"]):
        r = subprocess.run(base + ["--steps", "3"] + extra, cwd=tmp_path, capture_output=True,
                           text=True, timeout=240)
        assert r.returncode == 2, (extra, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


# ----------------------------------------------------------------------------- declarations
class IntSum(VertexProgram):
    """A sum-accumulative program declared int64 (deltas are floats: refused)."""
    name = "intsum"
    value_dtype = np.int64
    accumulative = True
    edge_op = "mul"

    def init_delta(self, ctx):
        return np.zeros(ctx.n_local, dtype=np.int64), np.ones(ctx.n_local, dtype=np.int64)


class NoInitDelta(VertexProgram):
    name = "noinit"
    accumulative = True
    edge_op = "mul"


class NoInitMin(VertexProgram):
    name = "noinitmin"
    accumulative = True
    combiner = "min"


class NoApply(VertexProgram):
    name = "noapply"

    def init(self, ctx):
        return np.zeros(ctx.n_local)


@pytest.mark.parametrize("cls, words", [
    (IntSum, "need value_dtype float64, not int64"),
    (NoInitDelta, "does not define init_delta(ctx)"),
    (NoInitMin, "defines neither init(ctx)"),
    (NoApply, "does not define apply()"),
])
def test_declaration_errors_are_program_errors(cls, words):
    """Refused before the run, as ProgramError (the CLI: one line, exit 2), in both modes."""
    for mode in ("bsp", "asap") if cls.accumulative else ("bsp",):
        with pytest.raises(ProgramError) as e:
            P.run(cls(), _graph(), mode=mode)
        assert words in str(e.value) and "\n" not in str(e.value)


# ----------------------------------------------------------------------------- values
class NanMin(VertexProgram):
    """Float min program whose init has NaN (refused: the answer would depend on the order)."""
    name = "nanmin"
    combiner = "min"
    edge_op = "add_one"
    accumulative = True

    def init(self, ctx):
        x = np.full(ctx.n_local, np.inf)
        x[ctx.vertices == 0] = 0.0
        x[ctx.vertices % 3 == 1] = np.nan
        return x


class NanMaxDelta(NanMin):
    combiner = "max"

    def init_delta(self, ctx):
        d = np.zeros(ctx.n_local)
        d[ctx.vertices == 2] = np.nan
        return np.full(ctx.n_local, -np.inf), d


class NanScatter(Hops):
    value_dtype = np.float64

    def init(self, ctx):
        return np.zeros(ctx.n_local), None

    def scatter(self, ctx, state):
        return np.where(ctx.vertices == 1, np.nan, state)


class FloatInitMin(VertexProgram):
    """int64 min program whose init returns floats (refused, as in the value form)."""
    name = "floatinit"
    value_dtype = np.int64
    combiner = "min"
    edge_op = "copy"
    accumulative = True

    def init(self, ctx):
        return ctx.ids + 0.5


class StrInit(FloatInitMin):
    value_dtype = np.float64

    def init(self, ctx):
        return np.array(["a"] * ctx.n_local)


class FloatStateHops(Hops):
    """Value form, default scatter: the state is what is sent; init's floats name init()."""
    def init(self, ctx):
        return ctx.vertices + 0.5


class FloatApplyHops(Hops):
    def apply(self, ctx, state, combined, has_msg):
        return np.minimum(state, combined) + 0.5


class NanCoef(VertexProgram):
    name = "nancoef"
    accumulative = True
    edge_op = "mul"

    def init_delta(self, ctx):
        return np.zeros(ctx.n_local), np.ones(ctx.n_local)

    def coef(self, ctx):
        return np.where(ctx.vertices == 3, np.nan, 0.1)


class InfDelta(NanCoef):
    def init_delta(self, ctx):
        return np.zeros(ctx.n_local), np.where(ctx.vertices == 3, np.inf, 1.0)


class NanPost(NanCoef):
    def coef(self, ctx):
        return np.full(ctx.n_local, 0.1)

    def post_delta(self, ctx, deltas):
        return deltas * np.nan


@pytest.mark.parametrize("prog, cb, words", [
    (NanMin(), "init", "values with NaN: a min/max program cannot order NaN"),
    (NanMaxDelta(), "init_delta", "deltas with NaN: a min/max program"),
    (FloatInitMin(), "init", "values of dtype float64, which does not convert to the "
                             "program's value_dtype int64"),
    (StrInit(), "init", "values of dtype <U1"),
    (NanCoef(), "coef", "non-finite coefficients (NaN or inf)"),
    (InfDelta(), "init_delta", "non-finite deltas (NaN or inf)"),
    (NanPost(), "post_delta", "non-finite deltas (NaN or inf)"),
])
def test_bad_values_are_refused_in_both_modes(prog, cb, words):
    """NaN (and, for sums, inf) and lossy dtypes from a callback are refused naming the
    callback, in BSP and ASAP (a min/max NaN gave different answers in the two modes)."""
    for mode in ("bsp", "asap"):
        with pytest.raises(ProgramError) as e:
            P.run(prog, _graph(), mode=mode)
        msg = str(e.value)
        assert f"{type(prog).__name__}.{cb}()" in msg and words in msg and "\n" not in msg


@pytest.mark.parametrize("prog, cb, words", [
    (NanScatter(), "scatter", "values with NaN"),
    (FloatStateHops(), "init", "a state of dtype float64"),
    (FloatApplyHops(), "apply", "a state of dtype float64"),
])
def test_value_form_names_the_callback_that_made_the_values(prog, cb, words):
    with pytest.raises(ProgramError) as e:
        P.run(prog, _graph())
    msg = str(e.value)
    assert f"{type(prog).__name__}.{cb}()" in msg and words in msg, msg


def test_infinite_initial_values_of_min_programs_are_fine():
    res = P.run(P.SSSPProgram(0), _graph(), mode="asap")
    assert res.converged and np.isinf(res.values[6])


class LeakyPPR(VertexProgram):
    """x = (1 - d) p + d A^T D^-1 x; error_factor 1 / (1 - d) is negative for d > 1."""
    name = "ppr"
    accumulative = True
    edge_op = "mul"
    use_weights = False

    def __init__(self, damping=0.7):
        self.d = damping

    def init_delta(self, ctx):
        return np.zeros(ctx.n_local), np.where(ctx.vertices == 0, 1.0 - self.d, 0.0)

    def coef(self, ctx):
        return self.d / np.maximum(ctx.out_degree, 1)

    def error_factor(self, ctx):
        return 1.0 / (1.0 - self.d)


@pytest.mark.parametrize("damping, shown", [(1.5, "-2.0"), (float("nan"), "nan")])
def test_error_factor_must_be_finite_and_nonnegative(damping, shown):
    from asapgraph.errors import InputError

    for mode in ("bsp", "asap"):
        with pytest.raises(InputError) as e:
            P.run(LeakyPPR(damping), _graph(), mode=mode, tol=1e-9)
        assert f"LeakyPPR.error_factor() returned {shown}: it must be a finite number >= 0" \
            in str(e.value)
    res = P.run(LeakyPPR(0.5), _graph(), mode="asap", tol=1e-9)
    assert res.converged and res.stats["error_bound"] <= 1e-9


# ----------------------------------------------------------------------------- no fixed point
def _cycle(weight, n=6):
    """A directed n-cycle with every weight ``weight`` (plus a tail 0 -> n)."""
    src = np.r_[np.arange(n), 0]
    dst = np.r_[(np.arange(n) + 1) % n, n]
    return Graph.from_edges(src, dst, n=n + 1, weights=np.full(n + 1, float(weight)))


class MaxMul(VertexProgram):
    """max with mul: weights > 1 around a cycle improve forever (no fixed point)."""
    name = "maxmul"
    combiner = "max"
    edge_op = "mul"
    accumulative = True
    default_max_iter = 1 << 20

    def init(self, ctx):
        return np.where(ctx.vertices == 0, 1.0, -np.inf)


class MaxMulInt(MaxMul):
    value_dtype = np.int64

    def init(self, ctx):
        return np.where(ctx.vertices == 0, 1, np.iinfo(np.int64).min).astype(np.int64)


class MaxAddOne(MaxMul):
    name = "maxaddone"
    edge_op = "add_one"


@pytest.mark.parametrize("cls", [MaxMul, MaxMulInt])
def test_overflowing_minmax_program_is_refused_in_both_modes(cls):
    """The values of max/mul with weights 2 reach inf (float) or leave int64 (the cast was
    undefined: garbage values reported converged): exit 2 as a non-finite residual."""
    from asapgraph.errors import InputError

    for mode in ("bsp", "asap"):
        with pytest.raises(InputError) as e:
            P.run(cls(), _cycle(2.0), mode=mode)
        msg = str(e.value)
        assert msg == ("asapgraph: maxmul diverged: its values grow without bound: a max "
                       "program whose edge_op 'mul' improves a value around a cycle (weights > "
                       "1) has no fixed point")


def test_monotone_minmax_programs_are_not_refused():
    for cls in (MaxMul, MaxMulInt):   # weights <= 1: a fixed point exists
        for mode in ("bsp", "asap"):
            res = P.run(cls(), _cycle(0.5), mode=mode)
            assert res.converged and res.values[0] == 1
    # an infinite seed of a max program is not an overflow
    class Seeded(MaxMul):
        def init(self, ctx):
            return np.where(ctx.vertices == 0, np.inf, -np.inf)
    res = P.run(Seeded(), _cycle(2.0), mode="asap")
    assert res.converged and np.all(np.isinf(res.values))


def test_no_fixed_point_without_overflow_stops_at_the_cap():
    """max with add_one around a cycle never overflows a float in practice: the one-call
    ASAP fixed point ran forever (max_iter > n); it is now capped at max_iter sweeps.
    Both modes: not converged (exit 3), as on K ranks."""
    for mode in ("bsp", "asap"):
        res = P.run(MaxAddOne(), _cycle(1.0), mode=mode, max_iter=50)
        assert not res.converged and res.iterations == 50


def test_bsp_stopped_by_max_iter_before_the_overflow_is_diverged_too():
    """BSP supersteps are hops on one process: 10 hops of weight 2 do not overflow, but
    the program has no fixed point (K ranks and ASAP overflowed first): exit 2 everywhere,
    while a program that only needed more supersteps stays 'not converged'."""
    from asapgraph.errors import InputError

    for mode in ("bsp", "asap"):
        with pytest.raises(InputError, match="maxmul diverged"):
            P.run(MaxMul(), _cycle(2.0), mode=mode, max_iter=10)
    res = P.run(P.BFSProgram(0), _cycle(1.0, n=40), mode="bsp", max_iter=10)
    assert not res.converged and res.iterations == 10
