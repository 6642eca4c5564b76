"""pytest-benchmark micro benchmarks: one PageRank sweep (ns per edge) vs scipy CSR matvec.

Run: ``pytest benchmarks/test_bench_pagerank.py --benchmark-only`` (needs pytest-benchmark).
Each benchmark stores ``ns_per_edge`` in ``extra_info`` so the two can be compared per graph.
The asapgraph sweep runs on the degree-relabelled copy that ``pagerank`` builds (with and
without software prefetch).
"""
import numpy as np
import pytest

pytest.importorskip("pytest_benchmark")

from asapgraph.kernels import _pagerank as _k
from asapgraph.graph.core import Graph  # noqa: E402
from asapgraph.graph.generators import rmat  # noqa: E402

SCALES = [16, 18]


@pytest.fixture(scope="module", params=SCALES, ids=lambda s: f"rmat{s}")
def graph(request):
    src, dst = rmat(request.param, 16, seed=1, dtype=np.int32)
    return Graph.from_edges(src, dst, n=1 << request.param)


def _setup(g, threads):
    n = g.n
    new2old = np.empty(n, g.indices.dtype)
    _k.degree_order(g.out_degree, new2old)
    old2new = np.empty_like(new2old)
    old2new[new2old] = np.arange(n, dtype=new2old.dtype)
    ptr = np.empty(n + 1, np.int64)
    ind = np.empty(g.m + 64, g.indices.dtype)
    e = np.empty(0)
    _k.permute_csr(g.indptr, g.indices, e, new2old, old2new, ptr, ind, e, threads)
    inv = np.zeros(n)
    np.divide(1.0, g.out_degree, out=inv, where=g.out_degree != 0)
    inv = inv[new2old]
    x = np.full(n, 1.0 / n)
    return dict(ptr=ptr, ind=ind, inv=inv, x=x, c=x * inv, c2=np.empty(n), e=e,
                b=_k.balanced_bounds(ptr, threads), st=np.zeros((threads, _k.NSTATS)))


@pytest.mark.parametrize("prefetch", [False, True])
@pytest.mark.parametrize("threads", [1, 2])
def test_sweep_jacobi(benchmark, graph, threads, prefetch):
    s = _setup(graph, threads)

    def run():
        _k.sweep(s["ptr"], s["ind"], s["e"], s["inv"], s["x"], s["c"], s["c2"], s["e"], s["e"],
                 0.85, 0.0, s["b"], s["st"], prefetch)

    benchmark(run)
    if benchmark.stats is not None:   # None under --benchmark-disable
        benchmark.extra_info["ns_per_edge"] = benchmark.stats.stats.median / graph.m * 1e9


def test_scipy_csr_matvec(benchmark, graph):
    import scipy.sparse as sp

    at = sp.csr_matrix((np.ones(graph.m), graph.indices, graph.indptr), shape=(graph.n, graph.n))
    v = np.random.default_rng(0).random(graph.n)
    benchmark(lambda: at @ v)
    if benchmark.stats is not None:   # None under --benchmark-disable
        benchmark.extra_info["ns_per_edge"] = benchmark.stats.stats.median / graph.m * 1e9
