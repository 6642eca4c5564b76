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
* empty-round overhead of each engine: BSP supersteps and ASAP rounds on a graph with
  one vertex per rank, so the time is the engine's per-round bookkeeping (collectives on
  ``COMM_SELF``, polling, termination waves), not edge work.
"""
import numpy as np
import pytest

pytest.importorskip("pytest_benchmark")
MPI = pytest.importorskip("mpi4py.MPI")

from asapgraph.dist import _local  # noqa: E402
from asapgraph.dist.emulation import HEADER, Emulator  # noqa: E402
from asapgraph.dist.partition import Partition  # noqa: E402
from asapgraph.dist.stats import RankStats  # noqa: E402
from asapgraph.generators import rmat  # noqa: E402

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
    from asapgraph.dist.loader import load_partitioned

    p = tmp_path_factory.mktemp("g") / "loop.txt"
    p.write_text("0 0\n")
    lg, _, _ = load_partitioned(str(p), MPI.COMM_SELF)
    return lg


ROUNDS = 2000


def test_empty_round_bsp(benchmark, tiny_local):
    from asapgraph.dist.bsp import run_bsp

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
    from asapgraph.dist.asap import run_asap

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
