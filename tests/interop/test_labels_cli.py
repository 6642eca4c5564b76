"""``asapgraph pagerank --labels``: named vertices in, names out (CSV, --top, --json).

Without ``--labels`` a named vertex is a ``FILE:LINE`` error (exit 2, after the progress line)."""
import json
import subprocess
import sys

import pytest

nx = pytest.importorskip("networkx")

EDGES = [("alice", "bob"), ("bob", "carol"), ("carol", "alice"), ("dave", "alice"),
         ("dave", "dave")]


def _cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "asapgraph", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120)


def test_pagerank_labels(tmp_path):
    p = tmp_path / "named.txt"
    p.write_text("# named vertices\n" + "".join(f"{u} {v}\n" for u, v in EDGES))
    out = tmp_path / "ranks.csv"
    r = _cli("pagerank", str(p), "--labels", "--tol", "1e-13", "-o", str(out), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    lines = out.read_text().splitlines()
    assert lines[0] == "node,rank"
    got = {u: float(v) for u, v in (ln.split(",") for ln in lines[1:])}
    ref = nx.pagerank(nx.MultiDiGraph(EDGES), tol=1e-14, max_iter=1000)
    assert got.keys() == ref.keys()
    assert max(abs(got[k] - ref[k]) for k in ref) <= 1e-11
    r = _cli("pagerank", str(p), "--labels", "--json", "--top", "2", cwd=tmp_path)
    top = json.loads(r.stdout)["top"]
    assert [t[0] for t in top] == sorted(ref, key=ref.get, reverse=True)[:2]
    r = _cli("pagerank", str(p), cwd=tmp_path)       # without --labels: one line, exit 2
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "named.txt:2:" in r.stderr.strip().splitlines()[-1]
