"""pytest-benchmark micro benchmarks of the distributed engine's building blocks.

Run: ``pytest benchmarks/test_bench_engine.py --benchmark-only`` (needs pytest-benchmark and
mpi4py; single process, ``COMM_SELF``).  Each benchmark stores a per-item figure in
``extra_info`` (``ns_per_id``, ``ns_per_value``, ``us_per_round``):

* partitioning: ``Partition.owner`` for the range and hash partitioners, per vertex id
  (every edge endpoint of rmat:18 is looked up once when edges are shuffled);
* exchange, per boundary value: *pack* (slot segment -> message buffer), *combine*
  (contributions to the same remote vertex summed into its slot: ``scatter_add`` with
  repeated indices), *unpack* (received slot values scatter-added through the slot -> local
  index map), and a typed ``Isend``/``Recv`` of the packed buffer to self;
* ASAP sweep kernel on a graph with locality, skipping single vertices or 16-vertex
  blocks (ns per vertex and per pushed edge);
* empty-round overhead of each engine: BSP supersteps and ASAP rounds on a graph with
  one vertex per rank, so the time is the engine's per-round bookkeeping (collectives on
  ``COMM_SELF``, polling, termination waves), not edge work.
"""
import numpy as np
import pytest

pytest.importorskip("pytest_benchmark")
MPI = pytest.importorskip("mpi4py.MPI")

from asapgraph.kernels import _local
from asapgraph.engine.emulation import HEADER, Emulator  # noqa: E402
from asapgraph.partition.partitioners import Partition  # noqa: E402
from asapgraph.engine.stats import RankStats  # noqa: E402
from asapgraph.graph.generators import rmat  # noqa: E402

SCALE = 18


def _median(benchmark):
    """Median seconds of a benchmark (None under ``--benchmark-disable``)."""
    st = getattr(benchmark, "stats", None)
    return None if st is None else st.stats.median


def _per(benchmark, count, unit):
    m = _median(benchmark)
    return None if m is None else m / count * unit
NSLOTS = 1 << 18  # boundary values per exchange


@pytest.fixture(scope="module")
def endpoints():
    src, dst = rmat(SCALE, 16, seed=1)
    return np.concatenate([src, dst]).astype(np.int64)


@pytest.mark.parametrize("kind", ["range", "hash"])
def test_partition_owner(benchmark, endpoints, kind):
    part = Partition(kind, 4, 1 << SCALE)
    own = benchmark(part.owner, endpoints)
    assert own.min() >= 0 and own.max() < 4
    benchmark.extra_info["ns_per_id"] = _per(benchmark, len(endpoints), 1e9)


@pytest.fixture(scope="module")
def exchange():
    rng = np.random.default_rng(7)
    nloc = 1 << 20
    acc = rng.random(nloc + NSLOTS)
    in_map = rng.permutation(nloc)[:NSLOTS].astype(np.int64)
    # 4 contributions per boundary value on average, combined into its slot
    contrib_idx = (nloc + rng.integers(0, NSLOTS, 4 * NSLOTS)).astype(np.int64)
    contrib = rng.random(4 * NSLOTS)
    return dict(nloc=nloc, acc=acc, in_map=in_map, cidx=contrib_idx, cval=contrib,
                buf=np.zeros(HEADER + NSLOTS), recv=np.zeros(HEADER + NSLOTS))


def test_exchange_pack(benchmark, exchange):
    e = exchange
    seg = e["acc"][e["nloc"]:]

    def pack():
        e["buf"][HEADER:] = seg
        seg.fill(0.0)  # the engine clears the slots it has sent

    benchmark(pack)
    benchmark.extra_info["ns_per_value"] = _per(benchmark, NSLOTS, 1e9)


def test_exchange_combine(benchmark, exchange):
    e = exchange
    acc = e["acc"].copy()
    before = acc[e["nloc"]:].sum()
    benchmark.pedantic(_local.scatter_add, args=(acc, e["cidx"], e["cval"]), rounds=5,
                       iterations=1, warmup_rounds=0)
    assert acc[e["nloc"]:].sum() > before
    benchmark.extra_info["ns_per_value"] = _per(benchmark, NSLOTS, 1e9)
    benchmark.extra_info["contributions_per_value"] = 4


def test_exchange_unpack(benchmark, exchange):
    e = exchange
    acc = np.zeros(e["nloc"])
    vals = e["buf"][HEADER:]
    benchmark(_local.scatter_add, acc, e["in_map"], vals)
    benchmark.extra_info["ns_per_value"] = _per(benchmark, NSLOTS, 1e9)


def test_exchange_message_to_self(benchmark, exchange):
    comm = MPI.COMM_SELF
    buf, recv = exchange["buf"], exchange["recv"]

    def roundtrip():
        r = comm.Irecv([recv, MPI.DOUBLE], source=0, tag=7)
        s = comm.Isend([buf, MPI.DOUBLE], dest=0, tag=7)
        MPI.Request.Waitall([r, s])

    benchmark(roundtrip)
    benchmark.extra_info["ns_per_value"] = _per(benchmark, NSLOTS, 1e9)


@pytest.fixture(scope="module")
def tiny_local(tmp_path_factory):
    """One vertex with a self-loop on COMM_SELF: rounds do no edge work worth measuring."""
    from asapgraph.partition.loader import load_partitioned

    p = tmp_path_factory.mktemp("g") / "loop.txt"
    p.write_text("0 0\n")
    lg, _, _ = load_partitioned(str(p), MPI.COMM_SELF)
    return lg


ROUNDS = 2000


def test_empty_round_bsp(benchmark, tiny_local):
    from asapgraph.engine.bsp import run_bsp

    lg = tiny_local
    p = np.full(lg.nloc, 1.0 / lg.n)

    def run():
        st = RankStats(0)
        # tol < 0: never converges, so exactly ROUNDS supersteps run
        return run_bsp(MPI.COMM_SELF, lg, p, p, 0.85, -1.0, ROUNDS, Emulator(None, 0, 1), st)

    out = benchmark.pedantic(run, rounds=3, iterations=1)
    assert out[1] == ROUNDS
    benchmark.extra_info["us_per_round"] = _per(benchmark, ROUNDS, 1e6)


def test_empty_round_asap(benchmark, tiny_local):
    from asapgraph.engine.asap_pagerank import run_asap

    lg = tiny_local
    p = np.full(lg.nloc, 1.0 / lg.n)
    rounds = []

    def run():
        st = RankStats(0)
        x, r, conv, bound, extra = run_asap(MPI.COMM_SELF, lg, p, None, 0.85, 1e-12,
                                            Emulator(None, 0, 1), st)
        rounds.append(st.rounds)
        return x

    benchmark.pedantic(run, rounds=3, iterations=1)
    benchmark.extra_info["rounds"] = int(np.median(rounds))
    benchmark.extra_info["us_per_round"] = _per(benchmark, max(1, np.median(rounds)), 1e6)


@pytest.fixture(scope="module")
def local_web():
    """A graph with locality, like a crawl-ordered web graph: 2^18 vertices, 8 out-edges
    each, targets mostly within a few hundred ids; residuals whose size varies smoothly over
    the id range (a wave front), as ASAP's residuals do on such graphs."""
    rng = np.random.default_rng(3)
    n, d = 1 << 18, 8
    off = rng.geometric(0.01, n * d) * np.where(rng.random(n * d) < 0.5, -1, 1)
    tgt = ((np.repeat(np.arange(n), d) + off) % n).astype(np.int32)
    indptr = np.arange(0, n * d + 1, d, dtype=np.int64)
    envelope = np.exp(-((np.arange(n) / 4096.0) % 16.0))
    r = rng.standard_normal(n) * envelope
    return indptr, tgt, r


@pytest.mark.parametrize("block", [1, 16])
def test_asap_sweep_kernel(benchmark, local_web, block):
    """ASAP ``jacobi`` sweep (:func:`jacobi_push`) skipping residuals below 0.1x the mean:
    single vertices (block 1) or 16-vertex blocks; ns per owned vertex and per pushed edge."""
    indptr, tgt, r = local_web
    n = len(r)
    vcoef = np.full(n, 1.0 / 8)
    dang = np.zeros(n, np.uint8)
    acc, x, rs = np.zeros(n), np.zeros(n), np.zeros(n)
    act, bsum = np.zeros(n, np.int32), np.zeros(n)
    bq = np.full(n, 1.0 / n)
    theta = 0.1 * np.abs(r).mean()
    edges = []

    def sweep():
        acc[:] = r
        out = _local.jacobi_push(indptr, tgt, None, vcoef, x, acc, rs, act, bsum, dang, 0.85,
                                 0.0, bq, 0.0, bq, theta, block)
        edges.append(out[0])
        return out

    benchmark(sweep)
    benchmark.extra_info["edges_pushed_share"] = edges[-1] / len(tgt)
    benchmark.extra_info["ns_per_vertex"] = _per(benchmark, n, 1e9)
    benchmark.extra_info["ns_per_pushed_edge"] = _per(benchmark, max(edges[-1], 1), 1e9)
