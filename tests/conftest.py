"""Shared fixtures: the real datasets in ../shared/datasets, tolerances, seeds."""
import os
import warnings
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("ASAPGRAPH_SHARED_DATASETS", REPO.parent / "shared" / "datasets"))

#: Tolerances, in one table.  PageRank-like results are compared by the L1 norm
#: of the difference of the full vectors.
L1_TOL = {"pagerank": 1e-8, "katz": 1e-8, "hits": 1e-6}

#: Directed graphs of ../shared/datasets: file -> reader options
DIRECTED = {
    "foodweb-baydry.txt": {"weighted": True},
    "email-Eu-core.txt": {},
    "p2p-Gnutella08.txt": {},
    "soc-sign-bitcoinotc.csv.gz": {},
    "CollegeMsg.txt.gz": {},
    "wordassociation-2011.txt": {},
    "wiki-Vote.txt.gz": {},
    "p2p-Gnutella31.txt.gz": {},
    "law-enron.txt.gz": {},
    "cit-HepTh.txt.gz": {},
    "cit-HepPh.txt.gz": {},
    "soc-Epinions1.txt.gz": {},
    "soc-Slashdot0902.txt.gz": {},
    "web-NotreDame.txt.gz": {},
    "cnr-2000.txt.gz": {},
}
UNDIRECTED = ["karate.txt", "ca-GrQc.txt", "ca-AstroPh.txt.gz"]


def shared_path(name):
    """Path of a shared dataset, or skip the test with the reason."""
    p = SHARED / name
    if not p.exists():
        pytest.skip(f"shared dataset {name} not found in {SHARED} (../shared/datasets is absent)")
    return p


@pytest.fixture
def shared():
    return shared_path


def optional_shared_path(name):
    """Path of a shared dataset, or None when it is absent, for a test that runs its
    generated graphs anyway and adds the shared ones when present: the case left out is
    reported as a warning (in pytest's summary), the test itself is not skipped."""
    try:
        return shared_path(name)
    except pytest.skip.Exception as e:
        warnings.warn(f"case left out: {e.msg}", UserWarning, stacklevel=2)
        return None


@pytest.fixture
def optional_shared():
    return optional_shared_path


def _seed():
    return int(os.environ.get("ASAPGRAPH_TEST_SEED", "12345"))


def pytest_report_header(config):
    return f"ASAPGRAPH_TEST_SEED={_seed()} (set it to reproduce); shared datasets: {SHARED}"


@pytest.fixture
def seed():
    return _seed()


@pytest.fixture
def rng(seed):
    return np.random.default_rng(seed)


@pytest.fixture
def push_rows(rng):
    """``push_rows(n, nslots, m)``: random rows for :func:`asapgraph.kernels._local.jacobi_push`
    (``m`` edges from ``n`` owned vertices to owned vertices and ``nslots`` remote slots):
    ``(indptr, tgt, dangling, vcoef)``, ``vcoef`` = 1 / out-degree."""

    def make(n, nslots, m):
        src = np.sort(rng.integers(0, n, m))
        tgt = rng.integers(0, n + nslots, m).astype(np.int32)
        indptr = np.searchsorted(src, np.arange(n + 1)).astype(np.int64)
        deg = np.diff(indptr)
        return indptr, tgt, (deg == 0).astype(np.uint8), 1.0 / np.maximum(deg, 1)

    return make


@pytest.fixture
def refusal():
    """``refusal(path, labels=False)``: the one-line message of the ``InputError`` that
    ``load_graph(path, labels=labels)`` raises (``read_edges`` must raise the same one
    when not ``labels``)."""
    from asapgraph import load_graph
    from asapgraph.errors import InputError
    from asapgraph.graph.io import read_edges

    def check(p, labels=False):
        with pytest.raises(InputError) as ei:
            load_graph(p, labels=labels)
        if not labels:
            with pytest.raises(InputError) as e2:
                read_edges(p)
            assert str(e2.value) == str(ei.value)
        return str(ei.value)

    return check
