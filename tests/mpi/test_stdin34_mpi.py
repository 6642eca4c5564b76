"""``INPUT`` = ``-`` (standard input) on K ranks (feature 34c).

Rank 0 reads standard input and deals line-aligned chunks to the ranks (as it does a
compressed file); ``--np K`` hands rank 0 the launcher's standard input directly.  The
answer is one process's (every command that takes INPUT, BSP and ASAP, plain and gzip,
chunks small enough that every rank gets some), and a bad input is refused with one
process's line (file name ``<stdin>``, line number), exit 2, no output file.  Before,
``-`` without ``--labels`` was refused on K ranks ("standard input cannot be split
across ranks").
"""
import csv
import gzip
import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.mpi

PROGRAM = '''
import numpy as np
from asapgraph.programs import VertexProgram


class InDegree(VertexProgram):
    name = "indeg"
    combiner = "sum"
    edge_op = "copy"

    def init(self, ctx):
        return np.ones(ctx.n_local)

    def apply(self, ctx, state, combined, has_msg):
        return combined, np.zeros(ctx.n_local, dtype=bool)
'''

#: small chunks: rank 0 deals several to every rank (the line numbers of later chunks)
ENV = {"ASAPGRAPH_DIST_CHUNK_BYTES": "4096"}


def _cli(args, cwd, data, env=None):
    return subprocess.run([sys.executable, "-m", "asapgraph", *map(str, args)], cwd=cwd,
                          input=data, capture_output=True, timeout=240,
                          env={**os.environ, **(env or {})})


def _edges(n=2500, weighted=False):
    rows = []
    for i in range(n):
        s, d = (i * 7919) % 900, (i * 104729 + 13) % 900
        rows.append(f"{s} {d} {1 + (i % 7) * 0.5}\n" if weighted else f"{s}\t{d}\n")
    return ("# a comment\n" + "".join(rows)).encode()


def _table(path):
    with open(path) as f:
        rows = list(csv.reader(f))
    return rows[0], {r[0]: [float(x) for x in r[1:]] for r in rows[1:]}


COMMANDS = [
    (["pagerank", "--tol", "1e-12"], False),
    (["pagerank", "--mode", "asap", "--tol", "1e-10"], False),
    (["pagerank", "--weighted", "--tol", "1e-12"], True),
    (["katz", "--alpha", "0.005", "--tol", "1e-12"], False),
    (["hits", "--tol", "1e-12"], False),
    (["wcc"], False),
    (["sssp", "--source", "0", "--weighted"], True),
    (["bfs", "--source", "0"], False),
    (["labelprop", "--max-iter", "5", "--allow-unconverged"], False),
    (["run", "prog.py:InDegree", "--steps", "1"], False),
]


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gzip"])
@pytest.mark.parametrize("cmd,weighted", COMMANDS, ids=lambda c: "-".join(c)
                         if isinstance(c, list) else None)
def test_stdin_answer_as_one_process(tmp_path, cmd, weighted, gz):
    (tmp_path / "prog.py").write_text(PROGRAM)
    data = _edges(weighted=weighted)
    if gz:
        data = gzip.compress(data)
    if cmd[0] == "run":  # run PROGRAM INPUT
        cmd = [cmd[0], cmd[1], "-", *cmd[2:]]
    else:
        cmd = [cmd[0], "-", *cmd[1:]]
    one = _cli([*cmd, "-q", "-o", "one.csv"], tmp_path, data)
    assert one.returncode == 0, one.stderr
    head, ref = _table(tmp_path / "one.csv")
    assert len(ref) > 500
    for k in (2, 3):
        r = _cli([*cmd, "-q", "-o", f"k{k}.csv", "--np", k], tmp_path, data, ENV)
        assert r.returncode == 0 and r.stderr == b"", (k, r.stderr)
        h, got = _table(tmp_path / f"k{k}.csv")
        assert h == head and got.keys() == ref.keys(), k
        worst = max(abs(a - b) for v in ref for a, b in zip(got[v], ref[v]))
        assert worst <= 1e-10, (k, worst)


def test_stdin_json_records_the_input_as_one_process(tmp_path):
    data = _edges(300)
    one = _cli(["pagerank", "-", "--json", "-q", "--top", "1"], tmp_path, data)
    two = _cli(["pagerank", "-", "--json", "-q", "--top", "1", "--np", "2"], tmp_path, data)
    assert one.returncode == 0 and two.returncode == 0, (one.stderr, two.stderr)
    a, b = json.loads(one.stdout), json.loads(two.stdout)
    for key in ("input", "vertices", "edges", "weighted", "labels", "header", "weight_col"):
        assert a[key] == b[key], key
    assert b["input"] == "-" and b["ranks"] == 2


_BIG = _edges(2000)
_WBIG = _edges(2000, weighted=True)
_GZ = gzip.compress(_BIG)

REFUSALS = [
    ("bad line late", ["wcc"], _BIG + b"7 x\n" + _BIG,
     "<stdin>:2002: expected an integer vertex id in column 2, got 'x'"),
    ("NUL byte", ["pagerank"], b"1 2\n\x003 4\n", "<stdin>:2: binary data"),
    ("empty", ["pagerank"], b"", "<stdin>: no edges found"),
    ("comments only", ["bfs", "--source", "1"], b"# nothing\n\n", "<stdin>: no edges found"),
    ("truncated gzip", ["wcc"], _GZ[:len(_GZ) // 2], "<stdin>: corrupt or truncated gzip data"),
    ("gzip bad line", ["pagerank"], gzip.compress(_BIG + b"1 2 3\n1 y\n"),
     "<stdin>:2003: expected an integer vertex id in column 2, got 'y'"),
    ("Matrix Market on stdin", ["wcc"],
     b"%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 2\n2 3\n",
     "<stdin>:1: Matrix Market data where a text edge list was expected"),
    ("header bad line", ["pagerank", "--header"], b"src dst\n1 2\n1 x\n",
     "<stdin>:3: expected an integer vertex id in column 2, got 'x'"),
    ("weighted missing column", ["pagerank", "--weighted"], _WBIG + b"3 4\n",
     "<stdin>:2002: missing column 3 (line has 2 columns)"),
    ("sssp negative weight", ["sssp", "--source", "0", "--weighted"],
     _WBIG + b"5 6 -2\n" + _WBIG + b"5 7 -9\n", "<stdin>: sssp needs non-negative edge "
                                                 "weights (found -9)"),
    ("pagerank negative weight", ["pagerank", "--weighted"], b"1 2 -1\n2 3 1\n",
     "<stdin>: PageRank needs non-negative edge weights"),
    ("negative id", ["katz", "--alpha", "0.01"], b"1 2\n-1 3\n", "<stdin>:2: negative vertex id"),
]


@pytest.mark.parametrize("name,cmd,data,want", REFUSALS, ids=[r[0] for r in REFUSALS])
def test_stdin_refused_as_one_process(tmp_path, name, cmd, data, want):
    seen = set()
    for extra, env in (([], None), (["--np", "2"], ENV), (["--np", "3", "--mode", "asap"]
                                                          if cmd[0] in ("pagerank", "katz")
                                                          else ["--np", "3"], ENV)):
        r = _cli([cmd[0], "-", *cmd[1:], "-q", "-o", "out.csv", *extra], tmp_path, data, env)
        lines = r.stderr.decode().strip().splitlines()
        assert r.returncode == 2 and len(lines) == 1, (extra, r.returncode, r.stderr[-2000:])
        assert lines[0].startswith(want), (extra, lines)
        assert not (tmp_path / "out.csv").exists(), extra
        seen.add(lines[0])
    assert len(seen) == 1, seen


def test_stdin_given_twice_still_refused(tmp_path):
    (tmp_path / "p.txt").write_text("1 1\n")
    for extra in ([], ["--np", "2"]):
        r = _cli(["pagerank", "-", "--personalization", "-", "-q", *extra], tmp_path,
                 b"1 2\n")
        assert r.returncode == 2, r.stderr
        assert r.stderr.decode().splitlines() == [
            "asapgraph: standard input '-' can be read once: give it to only one of INPUT "
            "and --personalization; save the others to files"], r.stderr


def test_stdin_under_the_users_mpiexec_as_one_process(tmp_path):
    """``mpiexec -n 2 asapgraph pagerank -`` (small input: Hydra's forwarding ends the job
    when more than rank 0's pipe holds arrives before rank 0 drains it, whatever rank 0
    does): the answer of one process, and a bad line's refusal."""
    from asapgraph.comm.launch import find_mpiexec

    data = _edges(1500)
    assert len(data) < 60_000
    one = _cli(["pagerank", "-", "-q", "-o", "one.csv", "--tol", "1e-12"], tmp_path, data)
    assert one.returncode == 0, one.stderr
    _, ref = _table(tmp_path / "one.csv")
    for mode in ("bsp", "asap"):
        r = subprocess.run([find_mpiexec(), "-n", "2", sys.executable, "-m", "asapgraph",
                            "pagerank", "-", "-q", "-o", "k.csv", "--tol", "1e-12", "--mode",
                            mode], cwd=tmp_path, input=data, capture_output=True,
                           timeout=240)
        assert r.returncode == 0, r.stderr
        _, got = _table(tmp_path / "k.csv")
        assert got.keys() == ref.keys()
        assert max(abs(got[v][0] - ref[v][0]) for v in ref) <= 1e-10
    r = subprocess.run([find_mpiexec(), "-n", "2", sys.executable, "-m", "asapgraph", "wcc",
                        "-", "-q"], cwd=tmp_path, input=data + b"4 z\n",
                       capture_output=True, timeout=240)
    assert r.returncode == 2, r.stderr
    assert r.stderr.decode().splitlines() == [
        "<stdin>:1502: expected an integer vertex id in column 2, got 'z'"], r.stderr
