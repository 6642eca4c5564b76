"""pytest-benchmark micro benchmarks for input: parser MB/s, text load, binary reload.

Run: ``pytest benchmarks/test_bench_io.py --benchmark-only`` (not part of the test suite).
Inputs are synthetic R-MAT edge lists generated from a fixed seed (no downloads), plus
cnr-2000 from ../shared/datasets when present.
"""
import os

import numpy as np
import pytest

pytest.importorskip("pytest_benchmark")

from asapgraph.graph.io import load_binary, load_graph, read_edges, save_binary  # noqa: E402

from asapgraph.kernels import _parse

SCALE = int(os.environ.get("ASAPGRAPH_BENCH_SCALE", "16"))


@pytest.fixture(scope="module")
def rmat_text(tmp_path_factory):
    from asapgraph.graph import generators

    src, dst = generators.rmat(SCALE, 16, 7)
    lines = np.char.add(np.char.add(src.astype(str), "\t"), dst.astype(str))
    data = ("# rmat\n" + "\n".join(lines.tolist()) + "\n").encode()
    p = tmp_path_factory.mktemp("bench") / f"rmat{SCALE}.txt"
    p.write_bytes(data)
    return p, data


def test_parser_in_memory(benchmark, rmat_text):
    """The C parser alone on an in-memory buffer (OMP_NUM_THREADS threads)."""
    _, data = rmat_text

    def run():
        acc = _parse.EdgeAccumulator(1, 2, 0, True)
        acc.feed(data, True)
        return acc.m

    m = benchmark(run)
    benchmark.extra_info["MB/s"] = len(data) / 1e6 / benchmark.stats.stats.median
    assert m == 16 << SCALE


def test_read_edges(benchmark, rmat_text):
    p, data = rmat_text
    e = benchmark(read_edges, p)
    benchmark.extra_info["MB/s"] = len(data) / 1e6 / benchmark.stats.stats.median
    assert len(e) == 16 << SCALE


def test_load_graph_text(benchmark, rmat_text):
    p, data = rmat_text
    g = benchmark(load_graph, p)
    benchmark.extra_info["MB/s"] = len(data) / 1e6 / benchmark.stats.stats.median
    assert g.m == 16 << SCALE


def test_binary_reload(benchmark, rmat_text, tmp_path):
    p, _ = rmat_text
    g = load_graph(p)
    b = tmp_path / "g.asg"
    save_binary(g, b)

    def run():
        h = load_binary(b)
        return int(h.indices[:: 1024].sum())  # touch one value per page

    benchmark(run)


def test_cnr2000(benchmark):
    from pathlib import Path

    p = Path(os.environ.get("ASAPGRAPH_SHARED_DATASETS",
                            Path(__file__).resolve().parents[2] / "shared" / "datasets"))
    p = p / "cnr-2000.txt.gz"
    if not p.exists():
        pytest.skip(f"{p} not found")
    g = benchmark.pedantic(load_graph, args=(p,), rounds=3)
    assert g.m == 3216152
