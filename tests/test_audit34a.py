"""Audit 34a: a seeded fuzz of ``pagerank --personalization/--dangling`` files and of the
binary and other graph formats as input (Matrix Market, ``.npy``, ``.asg``, Parquet), one
process against ``--np 2 --mode bsp``, ``--np 3 --mode asap`` and ``--np 4``, and the
Python API (the ranks' side: tests/mpi/test_audit34a_mpi.py).

* A ``float16`` ``.npy`` edge array: ``ids >= 2.0 ** 63`` overflowed the array's dtype,
  and every rank printed ``RuntimeWarning: overflow encountered in cast`` on stderr (the
  answer was right).
"""
import subprocess
import sys

import networkx as nx
import numpy as np


def _cli(args, cwd):
    return subprocess.run([sys.executable, "-m", "asapgraph", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=120)


def _read(path):
    with open(path) as f:
        next(f)
        return {int(a): float(b) for a, b in (ln.strip().split(",") for ln in f)}


def _l1(a, b):
    return sum(abs(a.get(k, 0.0) - b.get(k, 0.0)) for k in set(a) | set(b))


def test_float16_npy_edges_load_without_a_warning(tmp_path):
    edges = [(0, 1), (1, 2), (2, 0), (2, 1), (3, 2)]
    np.save(tmp_path / "g.npy", np.array(edges, dtype=np.float16))
    r = _cli(["pagerank", "g.npy", "--tol", "1e-12", "-q", "-o", "r.csv"], tmp_path)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    want = nx.pagerank(nx.DiGraph(edges), tol=1e-15, max_iter=10000)
    assert _l1(_read(tmp_path / "r.csv"), want) < 1e-8
