"""Generator specs loaded in place by every rank (asapgraph.partition.generated).

On 1-4 ranks, range and hash partitions, directed / undirected / weighted: the rows a
rank builds from its own slice (no edge shuffle) are the general loader's rows (same
owned vertices, slots, per-peer maps, per-vertex arrays, and the same edges in every
row), every row lists its edges in global edge order, and the gathered edges are the
single process's ``load_graph`` edges.  Text files with sparse ids take the same rows
path once their ids are mapped (asapgraph.partition.rows; weighted ones the general
loader), with the same checks.  See ``_genload_worker.py``.
"""
import json
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.mpi

HERE = Path(__file__).resolve().parent

CASES = [
    {"spec": "rmat:10:8:3", "partition": "range"},
    {"spec": "rmat:10:8:3", "partition": "hash"},
    {"spec": "rmat:9:4:1", "partition": "range", "weighted": True},
    {"spec": "er:700:5000:2", "partition": "range"},
    {"spec": "er:700:5000:2", "partition": "hash", "weighted": True},
    {"spec": "rmat:9:4", "partition": "range", "undirected": True},
    {"spec": "rmat:9:4", "partition": "hash", "undirected": True, "weighted": True},
    # more vertices than twice a rank's edges: the general loader runs (same graph)
    {"spec": "er:5000:300:1", "partition": "range", "in_place": False},
    # rank 0 owns 80% of the rows: it receives more edges than its slice holds (the
    # received rows do not fit in the slice's arrays), the others far fewer
    {"spec": "rmat:10:8:3", "partition": "range", "skew": True},
    {"spec": "rmat:9:4", "partition": "range", "undirected": True, "skew": True},
    # the caller's edge arrays (DenseEdges): rows shipped without writing into them
    {"spec": "rmat:10:8:3", "partition": "range", "dense": True},
    {"spec": "rmat:10:8:3", "partition": "hash", "dense": True, "skew": True},
]


def file_cases(tmp_path):
    """Text files whose ids need mapping (sparse ids, a comment, a repeated edge, a
    self-loop): unweighted ones take the rows path of :mod:`asapgraph.partition.rows`, the
    weighted one the general loader; both must equal the general loader and one process."""
    rng = np.random.default_rng(7)
    m, n = 4000, 600
    s = rng.zipf(1.6, m) % n
    d = rng.integers(0, n, m)
    s[:3], d[:3] = 5, np.array([5, 9, 9])        # a self-loop and a repeated edge
    ids = np.sort(rng.choice(10**9, n, replace=False)) * 3 + 7  # sparse original ids
    plain = tmp_path / "plain.txt"
    with open(plain, "w") as f:
        f.write("# a comment line\n")
        f.writelines(f"{ids[a]} {ids[b]}\n" for a, b in zip(s, d))
    weighted = tmp_path / "weighted.txt"
    with open(weighted, "w") as f:
        f.writelines(f"{ids[a]}\t{ids[b]}\t{1 + (a * b) % 5}\n" for a, b in zip(s, d))
    return [{"spec": str(plain), "file": True, "partition": "range"},
            {"spec": str(plain), "file": True, "partition": "hash"},
            {"spec": str(plain), "file": True, "partition": "range", "undirected": True},
            {"spec": str(weighted), "file": True, "partition": "range", "weighted": True}]


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_spec_in_place_equals_general_loader_and_single_process(k, mpirun, tmp_path):
    cases = CASES + file_cases(tmp_path)
    cf, of = tmp_path / "cases.json", tmp_path / "out.json"
    cf.write_text(json.dumps(cases))
    r = mpirun(k, [sys.executable, str(HERE / "_genload_worker.py"), str(cf), str(of)],
               timeout=300, env={"OMP_NUM_THREADS": "1"})
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(of.read_text())
    assert len(out) == len(cases)
    for rec, case in zip(out, cases):
        if not (case.get("file") or case.get("dense")):
            assert rec["in_place"] == case.get("in_place", True), rec
        assert rec["same_partition"] and rec["same_layout"], rec
        assert rec["untouched"], rec
        if case.get("skew") and k > 1 and case["partition"] == "range":
            assert rec["mloc"][0] > 2 * max(rec["mloc"][1:]), rec
        assert rec["same_as_general"], rec
        assert rec["same_as_single"], rec
        if not case.get("undirected"):
            assert rec["rows_in_edge_order"], rec
        assert rec["edges"] > 0
