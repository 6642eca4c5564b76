"""pytest-benchmark micro benchmarks: one PageRank sweep (ns per edge) vs scipy CSR matvec.

Run: ``pytest benchmarks/test_bench_pagerank.py --benchmark-only`` (needs pytest-benchmark).
Each benchmark stores ``ns_per_edge`` in ``extra_info`` so the two can be compared per graph.
"""
import numpy as np
import pytest

pytest.importorskip("pytest_benchmark")

from asapgraph import _pagerank as _k  # noqa: E402
from asapgraph.graph import Graph  # noqa: E402
from asapgraph.generators import rmat  # noqa: E402

SCALES = [16, 18]


@pytest.fixture(scope="module", params=SCALES, ids=lambda s: f"rmat{s}")
def graph(request):
    src, dst = rmat(request.param, 16, seed=1)
    return Graph.from_edges(src, dst, n=1 << request.param)


def _setup(g, threads):
    n = g.n
    inv = np.zeros(n)
    np.divide(1.0, g.out_degree, out=inv, where=g.out_degree != 0)
    x = np.full(n, 1.0 / n)
    e = np.empty(0)
    return dict(inv=inv, x=x, c=x * inv, c2=np.empty(n), e=e, cpos=np.empty(0, g.indices.dtype),
                b=_k.balanced_bounds(g.indptr, threads), err=np.zeros(threads),
                dang=np.zeros(threads))


@pytest.mark.parametrize("threads", [1, 2])
def test_sweep_jacobi(benchmark, graph, threads):
    s = _setup(graph, threads)

    def run():
        _k.sweep(graph.indptr, graph.indices, s["e"], s["inv"], s["x"], s["c"], s["c2"],
                 s["cpos"], s["e"], s["e"], 0.85, 0.0, s["b"], s["err"], s["dang"])

    benchmark(run)
    benchmark.extra_info["ns_per_edge"] = benchmark.stats.stats.median / graph.m * 1e9


def test_scipy_csr_matvec(benchmark, graph):
    import scipy.sparse as sp

    at = sp.csr_matrix((np.ones(graph.m), graph.indices, graph.indptr), shape=(graph.n, graph.n))
    v = np.random.default_rng(0).random(graph.n)
    benchmark(lambda: at @ v)
    benchmark.extra_info["ns_per_edge"] = benchmark.stats.stats.median / graph.m * 1e9
