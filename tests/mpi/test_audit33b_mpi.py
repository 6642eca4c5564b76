"""Audit 33b on K ranks (one process: tests/test_audit33b.py): the refusals of sssp, hits
and katz on a ``--labels`` edge list name the file (and the line of a negative weight) as
on one process; they said ``<input>:``/``<graph>:`` without a line.  The line of a
negative weight where a name holds a ';' (the first such line, 1 and K ranks).  From
standard input (``--labels``): the smallest weight over all ranks (was the lowest
refusing rank's own smallest).  After a UTF-8 byte order mark, the line of a negative
weight on line 1 (the next edge's line was named)."""
import subprocess
import sys

import pytest

NEG = "a b 1\nb c -2\nc a 1\n"
#: every vertex points at every other: B = 3 bounds the largest eigenvalue, alpha 0.5 fails
K4 = "".join(f"n{i} n{j}\n" for i in range(4) for j in range(4) if i != j)

pytestmark = [pytest.mark.mpi, pytest.mark.timeout(900)]

CONFIGS = [[], ["--np", "2"], ["--np", "3", "--mode", "asap"], ["--np", "4"]]


@pytest.mark.parametrize("args,text,want", [
    (["sssp", "g.txt", "--source", "a", "--weighted"], NEG,
     "g.txt:2: negative edge weight '-2': sssp needs non-negative edge weights"),
    (["sssp", "g.txt", "--source", "a", "--weight-col", "4"], "a b 1 5\nb c -2 7\nc a 1 -3\n",
     "g.txt:3: negative edge weight '-3': sssp needs non-negative edge weights"),
    (["katz", "g.txt", "--alpha", "0.5"], K4, "g.txt: Katz alpha 0.5 is not below 1/B"),
    # a ';' is part of a name: the first line's weight, not the second's
    (["sssp", "g.txt", "--source", "b", "--weighted"], "a;x b -2\nb c -3\nc a 1\n",
     "g.txt:1: negative edge weight '-2': sssp needs non-negative edge weights"),
    (["pagerank", "g.txt", "--weighted"], "a;x b -2\nb c 3\nc a 1\n",
     "g.txt:1: negative edge weight '-2': PageRank needs non-negative edge weights"),
])
def test_labelled_refusals_alike(tmp_path, args, text, want, refused_alike):
    (tmp_path / "g.txt").write_text(text)
    line = refused_alike(tmp_path, [*args, "--labels"], configs=CONFIGS, output="out.csv")
    assert line.startswith(want), line


def test_hits_labelled_negative_weight_alike(tmp_path, refused_alike):
    """hits runs BSP only: on 1 and K ranks."""
    (tmp_path / "g.txt").write_text(NEG)
    line = refused_alike(tmp_path, ["hits", "g.txt", "--weighted", "--labels"],
                         configs=[[], ["--np", "2"], ["--np", "3"]], output="out.csv")
    assert line == "g.txt:2: negative edge weight '-2': hits needs non-negative edge weights"


STDIN_NEG = "a b -2\n" + "".join(f"m{i} n{i} 1\n" for i in range(20)) + "z a -5\n"


@pytest.mark.parametrize("cmd,configs", [
    (["sssp", "--source", "a"], CONFIGS),
    (["hits"], [[], ["--np", "2"], ["--np", "3"]]),
])
def test_labelled_stdin_negative_weight_alike(tmp_path, cmd, configs):
    for extra in configs:
        r = subprocess.run([sys.executable, "-m", "asapgraph", *cmd, "-", "--labels",
                            "--weighted", "-q", *extra], cwd=tmp_path, input=STDIN_NEG,
                           capture_output=True, text=True, timeout=240)
        assert r.returncode == 2, (extra, r.stderr[-2000:])
        assert r.stderr.strip() == (f"<stdin>: {cmd[0]} needs non-negative edge weights "
                                    "(found -5)"), (extra, r.stderr[-2000:])


@pytest.mark.parametrize("args,text", [
    (["sssp", "g.txt", "--source", "0", "--weighted"], "\ufeff0 1 -2\n1 2 3\n2 0 1\n"),
    (["pagerank", "g.txt", "--weighted", "--labels"], "\ufeff a b -2\nb c -3\nc a 1\n"),
])
def test_negative_weight_line_after_a_byte_order_mark_alike(tmp_path, args, text,
                                                            refused_alike):
    (tmp_path / "g.txt").write_bytes(text.encode())
    line = refused_alike(tmp_path, args, configs=CONFIGS, output="out.csv")
    assert line.startswith("g.txt:1: negative edge weight '-2': "), line
