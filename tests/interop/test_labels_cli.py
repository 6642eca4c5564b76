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


NAMED = [("b", "a"), ("c", "a"), ("z", "y"), ("5", "z"), ("y", "5"), ("q", "r")]


def _named(tmp_path):
    p = tmp_path / "named2.txt"
    p.write_text("".join(f"{u} {v}\n" for u, v in NAMED))
    return p


def _csv(path):
    lines = path.read_text().splitlines()
    return lines[0], dict(ln.split(",", 1) for ln in lines[1:])


def test_pagerank_labels_personalization_by_name(tmp_path):
    """``--personalization`` / ``--dangling`` files name vertices with ``--labels``: a name
    that reads as a number ("5") is the vertex named "5", not dense id 5 (which the files
    were read as before: a silent wrong answer); an unknown name is ``FILE:LINE``."""
    p = _named(tmp_path)
    pers, dang = tmp_path / "pers.txt", tmp_path / "dang.txt"
    pers.write_text("5 1\nb 2\n")
    dang.write_text("q 1\n")
    out = tmp_path / "r.csv"
    r = _cli("pagerank", p, "--labels", "--personalization", pers, "--dangling", dang, "--tol",
             "1e-13", "-o", out, "-q", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    _, got = _csv(out)
    ref = nx.pagerank(nx.MultiDiGraph(NAMED), personalization={"5": 1, "b": 2},
                      dangling={"q": 1}, tol=1e-15, max_iter=100000)
    assert got.keys() == ref.keys()
    assert sum(abs(float(got[k]) - ref[k]) for k in ref) <= 1e-11
    pers.write_text("5 1\nnobody 2\n")
    r = _cli("pagerank", p, "--labels", "--personalization", pers, "-q", cwd=tmp_path)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "pers.txt:2:" in r.stderr and "'nobody'" in r.stderr


def test_program_labels_names_in_and_out(tmp_path):
    """wcc / labelprop write the *name* of a component's or community's vertex (they wrote
    its dense number); bfs / sssp take ``--source NAME`` with ``--labels`` (refused in one
    line without it)."""
    p = _named(tmp_path)
    G = nx.MultiDiGraph(NAMED)
    out = tmp_path / "c.csv"
    r = _cli("wcc", p, "--labels", "-o", out, "-q", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    head, got = _csv(out)
    assert head == "node,component"
    for comp in nx.weakly_connected_components(G):
        assert {got[v] for v in comp} == {min(comp)}
    r = _cli("labelprop", p, "--labels", "-o", out, "-q", "--allow-unconverged", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    _, got = _csv(out)
    assert set(got.values()) <= set(G) and got["q"] in ("q", "r")
    for cmd, ref in (("bfs", nx.single_source_shortest_path_length(G, "5")),
                     ("sssp", nx.single_source_dijkstra_path_length(G, "5"))):
        r = _cli(cmd, p, "--labels", "--source", "5", "-o", out, "-q", cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        _, got = _csv(out)
        assert {v: float(x) for v, x in got.items() if float(x) >= 0 and x != "inf"} == \
            {v: float(d) for v, d in ref.items()}
    r = _cli("bfs", p, "--labels", "--source", "nobody", cwd=tmp_path)
    assert r.returncode == 2 and "'nobody' is not in the graph" in r.stderr
    r = _cli("bfs", p, "--source", "b", cwd=tmp_path)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "need --labels" in r.stderr


def test_info_and_convert_with_labels(tmp_path):
    """``info --labels`` reports the names (it printed the dense numbers as 'original
    ids'); ``convert --labels`` is refused in one line, nothing written (the .asg format
    holds integer ids: it silently wrote the dense numbers and dropped the names)."""
    p = _named(tmp_path)
    r = _cli("info", p, "--labels", "--json", cwd=tmp_path)
    d = json.loads(r.stdout)
    assert r.returncode == 0 and d["labels"] is True and d["original_id_min"] is None
    assert (d["label_first"], d["label_last"]) == ("5", "z")
    out = tmp_path / "g.asg"
    r = _cli("convert", p, out, "--labels", cwd=tmp_path)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "--labels" in r.stderr and not out.exists()
