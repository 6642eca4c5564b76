"""``--labels`` on K ranks: rank 0 reads the named edge list and scatters it
(:func:`asapgraph.partition.reading.scatter_labelled`); every command must write what the
single process writes (same names, same values within the mode's tolerance), read
personalization files and ``--source`` by name, and refuse the same inputs with the same
line.  Also: the launcher forwards every option of ``pagerank`` (``--labels`` was dropped
from the ranks' command line once)."""
import csv
import subprocess
import sys

import pytest

pytestmark = pytest.mark.mpi

NAMED = [("b", "a", 1.0), ("c", "a", 2.0), ("z", "y", 0.5), ("5", "z", 1.5),
         ("y", "5", 1.0), ("q", "r", 3.0), ("a", "b", 1.0), ("r", "r", 1.0)]


def _cli(args, cwd, timeout=180):
    return subprocess.run([sys.executable, "-m", "asapgraph", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout)


def _rows(path):
    with open(path) as f:
        rows = list(csv.reader(f))
    return rows[0], {r[0]: r[1:] for r in rows[1:]}


CASES = [
    (["pagerank", "--tol", "1e-13"], 1e-11),
    (["pagerank", "--mode", "asap", "--tol", "1e-12"], 1e-11),
    (["pagerank", "--weighted", "--personalization", "PERS", "--dangling", "DANG",
      "--tol", "1e-13"], 1e-11),
    (["katz", "--alpha", "0.1", "--tol", "1e-13"], 1e-11),
    (["hits", "--max-iter", "1000"], 1e-9),
    (["wcc"], 0),
    (["labelprop", "--allow-unconverged"], 0),
    (["bfs", "--source", "5"], 0),
    (["sssp", "--weighted", "--source", "b", "--mode", "asap"], 0),
]


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(c[0][:3]))
def test_labels_on_ranks_match_one_process(k, case, tmp_path):
    args, tol = case
    g = tmp_path / "named.txt"
    g.write_text("# named\n" + "".join(f"{u} {v} {w}\n" for u, v, w in NAMED))
    (tmp_path / "pers.txt").write_text("5 1\nb 2\n")
    (tmp_path / "dang.txt").write_text("q 1\n")
    args = [{"PERS": "pers.txt", "DANG": "dang.txt"}.get(a, a) for a in args]
    one, many = tmp_path / "one.csv", tmp_path / "many.csv"
    r1 = _cli([args[0], g, "--labels", *args[1:], "-o", one, "-q"], tmp_path)
    rk = _cli([args[0], g, "--labels", *args[1:], "-o", many, "-q", "--np", k], tmp_path)
    assert r1.returncode == 0, r1.stderr
    assert rk.returncode == 0, rk.stderr[-3000:]
    h1, a = _rows(one)
    hk, b = _rows(many)
    assert h1 == hk and a.keys() == b.keys() == {u for e in NAMED for u in e[:2]}
    for v in a:
        for x, y in zip(a[v], b[v]):
            if tol == 0:
                assert x == y, (v, x, y)
            else:
                assert abs(float(x) - float(y)) <= tol, (v, x, y)


@pytest.mark.parametrize("args", [
    ["pagerank", "--personalization", "bad.txt"],
    ["bfs", "--source", "nobody"],
    ["sssp", "--source", "nobody"],
])
def test_labels_refused_alike_on_ranks(args, tmp_path):
    g = tmp_path / "named.txt"
    g.write_text("".join(f"{u} {v}\n" for u, v, _ in NAMED))
    (tmp_path / "bad.txt").write_text("5 1\nnobody 1\n")
    r1 = _cli([args[0], g, "--labels", *args[1:], "-q"], tmp_path)
    rk = _cli([args[0], g, "--labels", *args[1:], "-q", "--np", "2"], tmp_path)
    assert r1.returncode == rk.returncode == 2, (r1.stderr, rk.stderr)
    assert r1.stderr.strip().splitlines()[-1] == rk.stderr.strip().splitlines()[-1]
    assert "nobody" in rk.stderr and len(rk.stderr.strip().splitlines()) == 1


def test_launcher_forwards_every_pagerank_option():
    """``--np K`` rebuilds the ranks' command line from a table of options: every option
    of ``pagerank`` is in it, or is one the launcher consumes (``--np``, ``--mpiexec``) or
    refuses on ranks (``--method``)."""
    from asapgraph.cli import build_parser
    from asapgraph.comm.launch import _OPTIONS

    p = build_parser("pagerank")
    sub = next(a for a in p._actions if a.__class__.__name__ == "_SubParsersAction")
    dests = {a.dest for a in sub.choices["pagerank"]._actions}
    assert dests - {o[0] for o in _OPTIONS} == {"help", "input", "np", "mpiexec", "method"}


MESSY = {
    "bom.txt": "\ufeffa b\nb c\nc a\n".encode(),          # the mark is not part of a name
    "utf8.txt": "é ü\nü 日本\n日本 é\n".encode(),        # non-ASCII names (were an internal error)
    "crlf.txt": b"a b\r\nb c\r\nc a\r\n",
    "bad_utf8.txt": b"a b\n\xff\xfe c\n",                # FILE:2: not UTF-8 text
    "nul.txt": b"a b\n\x00\x01 c\n",                     # binary data (was read as a name)
    "ragged.txt": b"a b\nb c d\nc a\n",
    "w_neg.txt": b"a b 1\nb c -2\n",                     # the line is named on ranks too
}


@pytest.mark.parametrize("name", sorted(MESSY))
def test_messy_labelled_files_alike_on_ranks(name, tmp_path):
    g = tmp_path / name
    g.write_bytes(MESSY[name])
    extra = ["--weighted"] if name.startswith("w_") else []
    outs = []
    for ranks in ([], ["--np", "2"], ["--np", "3", "--mode", "asap"]):
        o = tmp_path / f"o{len(outs)}.csv"
        r = _cli(["pagerank", g, "--labels", "-q", "-o", o, *extra, *ranks], tmp_path)
        assert "Traceback" not in r.stderr and "internal error" not in r.stderr, r.stderr
        outs.append((r.returncode, r.stderr.strip().splitlines()[-1:],
                     _rows(o) if r.returncode == 0 else None))
    assert len({o[0] for o in outs}) == 1, outs
    if outs[0][0] == 0:
        (h, a) = outs[0][2]
        assert h == ["node", "rank"] and sorted(a) == sorted({"a", "b", "c"} if
                                                             name != "utf8.txt" else
                                                             {"é", "ü", "日本"})
        for _, _, (hk, b) in outs[1:]:
            assert b.keys() == a.keys()
            assert all(abs(float(a[v][0]) - float(b[v][0])) <= 1e-9 for v in a)
    else:
        assert outs[0][0] == 2 and len({tuple(o[1]) for o in outs}) == 1, outs
        assert f"{name}:2: " in outs[0][1][0], outs
