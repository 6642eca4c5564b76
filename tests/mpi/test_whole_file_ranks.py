"""Matrix Market and Parquet input on K ranks: rank 0 reads the file with the
single-process reader and scatters its edges with the file's vertex ids
(``partition.reading.scatter_graph``).  Before, ``--np K`` refused a ``.mtx`` ("not split
across ranks") and a ``.parquet`` ("binary data") that one process read.

Every case compares the full output of K ranks (BSP and ASAP) with one process, and one
real graph written by scipy's Matrix Market writer with networkx's PageRank."""
from __future__ import annotations

import csv
import subprocess
import sys

import numpy as np
import pytest

pytestmark = pytest.mark.mpi

CONFIGS = [["--np", "2"], ["--np", "3", "--mode", "asap"], ["--np", "4", "--mode", "bsp"]]


def _write_cases(d):
    """A real general matrix whose last ids have no entry (isolated vertices: they keep
    their place and get the teleport share), and a symmetric pattern one."""
    rng = np.random.default_rng(7)
    n, m = 120, 600
    s, t = rng.integers(1, n - 6, m), rng.integers(1, n - 6, m)
    w = rng.uniform(0.1, 3.0, m)
    with open(d / "gen.mtx", "w") as f:
        f.write("%%MatrixMarket matrix coordinate real general\n% a comment\n")
        f.write(f"{n} {n} {m}\n")
        f.writelines(f"{a} {b} {c:.6g}\n" for a, b, c in zip(s, t, w))
    pairs = sorted({(max(a, b), min(a, b)) for a, b in zip(s, t)})
    with open(d / "sym.mtx", "w") as f:
        f.write("%%MatrixMarket matrix coordinate pattern symmetric\n")
        f.write(f"{n} {n} {len(pairs)}\n")
        f.writelines(f"{a} {b}\n" for a, b in pairs)
    (d / "pers.txt").write_text("5 1\n7 2\n120 1\n")  # 120: an isolated vertex


def _table(path):
    rows = list(csv.reader(open(path)))
    return rows[0], {r[0]: [float(x) for x in r[1:]] for r in rows[1:]}


CASES = [
    (["pagerank", "gen.mtx", "--tol", "1e-12"], 1e-10),
    (["pagerank", "gen.mtx", "--weighted", "--undirected", "--tol", "1e-12"], 1e-10),
    (["pagerank", "sym.mtx", "--personalization", "pers.txt", "--tol", "1e-12"], 1e-10),
    (["wcc", "gen.mtx"], 0.0),
    (["sssp", "gen.mtx", "--weighted", "--source", "5"], 1e-12),
    (["katz", "sym.mtx", "--alpha", "0.01", "--tol", "1e-12"], 1e-10),
]


@pytest.mark.parametrize("args, tol", CASES, ids=[" ".join(c[0][:3]) for c in CASES])
def test_matrix_market_on_ranks_as_on_one_process(tmp_path, cli, args, tol):
    _write_cases(tmp_path)
    r = cli([*args, "-q", "-o", "one.csv"], tmp_path)
    assert r.returncode == 0 and not r.stderr, r.stderr[-2000:]
    head, one = _table(tmp_path / "one.csv")
    assert len(one) == 120, len(one)  # isolated vertices included, by their file ids
    for extra in CONFIGS:
        r = cli([*args, "-q", "-o", "k.csv", *extra], tmp_path)
        assert r.returncode == 0 and not r.stderr, (extra, r.stderr[-2000:])
        h, got = _table(tmp_path / "k.csv")
        assert h == head and set(got) == set(one), (extra, h, len(got))
        err = max(abs(a - b) for k in one for a, b in zip(one[k], got[k])
                  if np.isfinite(a) or a != b)
        assert err <= tol, (extra, err)


def test_matrix_market_json_counts_alike(tmp_path, cli):
    """``--json`` on ranks counts the file's vertices (isolated ones too) and the edges
    one process counts (``--undirected``: both directions)."""
    import json

    _write_cases(tmp_path)
    want = None
    for extra in [[], *CONFIGS[:2]]:
        r = cli(["pagerank", "gen.mtx", "--undirected", "-q", "--json", *extra], tmp_path)
        assert r.returncode == 0, (extra, r.stderr[-2000:])
        d = json.loads(r.stdout)
        got = (d["vertices"], d["edges"])
        want = want or got
        assert got == want and got[0] == 120, (extra, got, want)


def test_matrix_market_real_graph_against_networkx(tmp_path, cli, shared):
    """A real graph written by scipy's Matrix Market writer: ranks (both modes) against
    networkx's PageRank of the matrix scipy reads back, L1 within 1e-9."""
    nx = pytest.importorskip("networkx")
    import scipy.io
    import scipy.sparse as sp

    src = shared("email-Eu-core.txt")
    e = np.loadtxt(src, dtype=np.int64, comments="#")
    n = int(e.max()) + 1
    A = sp.coo_matrix((np.ones(len(e)), (e[:, 0], e[:, 1])), shape=(n, n)).tocsr()
    A.data[:] = 1.0  # a pattern: repeated entries are one edge, as both readers take them
    scipy.io.mmwrite(str(tmp_path / "email.mtx"), A.tocoo(), field="pattern")
    B = scipy.io.mmread(str(tmp_path / "email.mtx")).tocsr()
    G = nx.from_scipy_sparse_array(B, create_using=nx.DiGraph)
    ref = nx.pagerank(G, alpha=0.85, tol=1e-14, max_iter=1000)
    for extra in [["--np", "2", "--mode", "asap"], ["--np", "3"]]:
        r = cli(["pagerank", "email.mtx", "--tol", "1e-12", "-q", "-o", "k.csv", *extra],
                tmp_path)
        assert r.returncode == 0 and not r.stderr, (extra, r.stderr[-2000:])
        _, got = _table(tmp_path / "k.csv")
        assert len(got) == n, (extra, len(got), n)  # Matrix Market ids are 1-based
        l1 = sum(abs(got[str(v + 1)][0] - ref[v]) for v in range(n))
        assert l1 < 1e-9, (extra, l1)


def test_matrix_market_python_api_on_ranks(tmp_path):
    """``asapgraph.engine.api.pagerank(path, comm)`` under mpiexec reads a ``.mtx`` too,
    ``undirected`` applied as ``load_graph`` applies it, the file's ids kept."""
    _write_cases(tmp_path)
    code = (
        "import numpy as np\n"
        "from mpi4py import MPI\n"
        "import asapgraph\n"
        "from asapgraph.engine.api import pagerank\n"
        "r = pagerank('gen.mtx', comm=MPI.COMM_WORLD, mode='asap', tol=1e-12,"
        " undirected=True)\n"
        "if MPI.COMM_WORLD.Get_rank() == 0:\n"
        "    ref = asapgraph.pagerank(asapgraph.load_graph('gen.mtx', undirected=True),"
        " tol=1e-12)\n"
        "    got = dict(zip(r.ids.tolist(), r.ranks.tolist()))\n"
        "    assert sorted(got) == sorted(ref.ids.tolist()), (len(got), len(ref.ids))\n"
        "    err = max(abs(got[int(i)] - v) for i, v in zip(ref.ids, ref.ranks))\n"
        "    assert err < 1e-10, err\n"
        "    print('ok', len(got))\n")
    from asapgraph.comm.launch import find_mpiexec

    p = subprocess.run([find_mpiexec(None), "-n", "3", sys.executable, "-c", code],
                       cwd=tmp_path, capture_output=True, text=True, timeout=240)
    assert p.returncode == 0 and "ok 120" in p.stdout, (p.stdout[-1000:], p.stderr[-2000:])


# ------------------------------------------------------------------------------- Parquet
def _write_parquet(d):
    """Integer ids with a weight column, and vertices named by text (one process writes
    their names; components are named by a vertex)."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    rng = np.random.default_rng(11)
    m = 500
    s, t = rng.integers(1, 90, m), rng.integers(1, 90, m)
    pq.write_table(pa.table({"source": s, "target": t, "weight": rng.uniform(0.5, 2.0, m)}),
                   str(d / "g.parquet"))
    names = np.array([f"v{i}" for i in range(40)])
    a, b = rng.integers(0, 40, 60), rng.integers(0, 40, 60)
    pq.write_table(pa.table({"source": names[a], "target": names[b]}), str(d / "s.parquet"))


PARQUET = [
    (["pagerank", "g.parquet", "--tol", "1e-12"], 1e-10),
    (["pagerank", "g.parquet", "--weighted", "--undirected", "--tol", "1e-12"], 1e-10),
    (["pagerank", "s.parquet", "--tol", "1e-12"], 1e-10),
    (["wcc", "s.parquet"], None),
    (["sssp", "g.parquet", "--weighted", "--source", "5"], 1e-12),
]


@pytest.mark.parametrize("args, tol", PARQUET, ids=[" ".join(c[0][:3]) for c in PARQUET])
def test_parquet_on_ranks_as_on_one_process(tmp_path, cli, args, tol):
    """A Parquet edge table: ranks said "binary data, not a text edge list" (exit 2) where
    one process read it; rank 0 reads and scatters it now, names included.  ``tol`` None:
    the values are vertex names (wcc's components), compared exactly.  (wcc of a graph
    named by text failed on one process too: "cannot format a column of dtype object".)"""
    _write_parquet(tmp_path)
    r = cli([*args, "-q", "-o", "one.csv"], tmp_path)
    assert r.returncode == 0 and not r.stderr, r.stderr[-2000:]
    one = list(csv.reader(open(tmp_path / "one.csv")))
    for extra in CONFIGS:
        r = cli([*args, "-q", "-o", "k.csv", *extra], tmp_path)
        assert r.returncode == 0 and not r.stderr, (extra, r.stderr[-2000:])
        got = list(csv.reader(open(tmp_path / "k.csv")))
        assert got[0] == one[0] and len(got) == len(one), (extra, got[:2], one[:2])
        if tol is None:
            assert sorted(got) == sorted(one), extra
            continue
        a, b = dict((r[0], r[1:]) for r in one[1:]), dict((r[0], r[1:]) for r in got[1:])
        assert set(a) == set(b), extra
        err = max((abs(float(x) - float(y)) for k in a for x, y in zip(a[k], b[k])),
                  default=0.0)
        assert err <= tol, (extra, err)


def test_empty_parquet_refused_alike(tmp_path, refused_alike):
    """A Parquet table without rows: one process ran on an empty graph (exit 0, nothing
    written), K ranks said "no edges found"; now every configuration says it, as for an
    empty text file."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    pq.write_table(pa.table({"source": pa.array([], pa.int64()),
                             "target": pa.array([], pa.int64())}), str(tmp_path / "e.parquet"))
    for cmd in (["pagerank"], ["wcc"]):
        line = refused_alike(tmp_path, [*cmd, "e.parquet"], configs=[[], *CONFIGS[:2]],
                             output="o.csv")
        assert line == "e.parquet: no edges found", line
