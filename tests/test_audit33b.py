"""Audit 33b: a seeded mutation fuzz of real edge lists (karate, email-Eu-core,
foodweb-baydry, CollegeMsg, soc-sign-bitcoinotc, p2p-Gnutella08, wiki-Vote, ca-GrQc cut
to a few hundred lines; line ends, byte order marks, separators, comments, ids, weights,
NUL and non-UTF-8 bytes, long lines, gzip/bz2/xz whole, truncated and concatenated), one
process against K ranks (the ranks' side: tests/mpi/test_audit33b_mpi.py).

* With ``--labels`` on K ranks the programs' graph had no name: rank 0 reads the named
  edge list and scatters its edges, and ``program_graph.load`` kept a file name only for
  a ``str`` source.  sssp and hits refused a negative weight as ``<input>: sssp needs
  non-negative edge weights (found -2)`` where one process names the file and the line
  (``g.txt:2: negative edge weight '-2': ...``), and katz's alpha bound, hits' and sssp's
  overflows said ``<graph>:`` instead of the file.
* The line of the first negative weight of a ``--labels`` edge list (found again on the
  error path) was looked for in lines split at blanks, commas and ';', where the reader
  splits at blanks and commas: of ``a;x b -2`` the weight column read ``b``, so a later
  negative weight's line was named (1 and K ranks alike), or none ("(found -2)").
* ``--labels`` from standard input (no line to name): sssp and hits on one process named
  an edge by the graph's edge order (``edge 'b' -> 'c': negative edge weight -2.0``), K
  ranks the smallest weight of the lowest rank holding a negative one (-2 where the
  graph's smallest is -5).  Now ``(found -5)``, the smallest over all ranks, everywhere.
* A UTF-8 byte order mark before line 1: the line of the first negative weight was looked
  for in lines read again without blanking it (the readers blank it), so line 1 was no
  edge and the next edge's line and weight were named, ``g.txt:2: negative edge weight
  '3'`` (1 and K ranks alike; plain and gzip; --labels with a blank after the mark).
"""
import subprocess
import sys
import textwrap

import pytest

NEG = "a b 1\nb c -2\nc a 1\n"
#: every vertex points at every other: B = 3 bounds the largest eigenvalue, alpha 0.5 fails
K4 = "".join(f"n{i} n{j}\n" for i in range(4) for j in range(4) if i != j)


def _cli(args, cwd):
    return subprocess.run([sys.executable, "-m", "asapgraph", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("args,text,want", [
    (["sssp", "g.txt", "--source", "a", "--weighted"], NEG,
     "g.txt:2: negative edge weight '-2': sssp needs non-negative edge weights"),
    (["hits", "g.txt", "--weighted"], NEG,
     "g.txt:2: negative edge weight '-2': hits needs non-negative edge weights"),
    (["katz", "g.txt", "--alpha", "0.5"], K4, "g.txt: Katz alpha 0.5 is not below 1/B"),
])
def test_labelled_refusals_name_the_file(tmp_path, args, text, want):
    """One process's lines, which the ranks now give too (tests/mpi/test_audit33b_mpi.py)."""
    (tmp_path / "g.txt").write_text(text)
    r = _cli([*args, "--labels", "-q", "-o", "out.csv"], tmp_path)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and lines[0].startswith(want), r.stderr
    assert not (tmp_path / "out.csv").exists()


def test_program_graph_of_scattered_names_keeps_the_file_name(tmp_path):
    """``program_graph.load`` of a rank's scattered edges (``--labels``) names the file
    (one rank, the MPI singleton: no mpiexec)."""
    pytest.importorskip("mpi4py")
    code = textwrap.dedent("""
        import numpy as np
        from mpi4py import MPI
        from asapgraph.partition.program_graph import load
        from asapgraph.partition.reading import DenseEdges
        e = DenseEdges(np.array([0, 1, 2]), np.array([1, 2, 0]), 3, np.array([1.0, -2, 1]),
                       name="g.txt", local=True)
        g = load(e, MPI.COMM_WORLD, weighted=True)
        print(g.source)
    """)
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip() == "g.txt"


@pytest.mark.parametrize("cmd,what", [
    (["pagerank"], "PageRank needs non-negative edge weights"),
    (["sssp", "--source", "b"], "sssp needs non-negative edge weights"),
])
@pytest.mark.parametrize("text", ["a;x b -2\nb c -3\nc a 1\n", "a;x b -2\nb c 3\nc a 1\n"])
def test_labelled_negative_weight_line_with_semicolon_in_a_name(tmp_path, cmd, what, text):
    (tmp_path / "g.txt").write_text(text)
    r = _cli([*cmd, "g.txt", "--labels", "--weighted", "-q"], tmp_path)
    assert r.returncode == 2, r.stderr
    assert r.stderr.strip() == f"g.txt:1: negative edge weight '-2': {what}" + (
        " (use it unweighted, or transform the weights)" if cmd == ["pagerank"] else "")


#: the smallest weight (-5) is not the first (-2): the ranks holding them differ
STDIN_NEG = "a b -2\n" + "".join(f"m{i} n{i} 1\n" for i in range(20)) + "z a -5\n"


@pytest.mark.parametrize("cmd", [["sssp", "--source", "a"], ["hits"]])
def test_labelled_stdin_negative_weight_names_the_smallest(tmp_path, cmd):
    r = subprocess.run([sys.executable, "-m", "asapgraph", *cmd, "-", "--labels", "--weighted",
                        "-q"], cwd=tmp_path, input=STDIN_NEG, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 2, r.stderr
    assert r.stderr.strip() == f"<stdin>: {cmd[0]} needs non-negative edge weights (found -5)"


@pytest.mark.parametrize("text,opts", [
    ("\ufeff0 1 -2\n1 2 3\n2 0 1\n", []),
    ("\ufeff0 1 -2\n1 2 -3\n2 0 1\n", []),
    ("\ufeff a b -2\nb c -3\nc a 1\n", ["--labels"]),
])
@pytest.mark.parametrize("gz", [False, True])
def test_negative_weight_line_after_a_byte_order_mark(tmp_path, text, opts, gz):
    import gzip

    data = text.encode()
    name = "g.txt.gz" if gz else "g.txt"
    (tmp_path / name).write_bytes(gzip.compress(data) if gz else data)
    src = "a" if opts else "0"
    for cmd, what in ((["sssp", "--source", src], "sssp needs non-negative edge weights"),
                      (["pagerank"], "PageRank needs non-negative edge weights")):
        r = _cli([cmd[0], name, *cmd[1:], "--weighted", "-q", *opts], tmp_path)
        assert r.returncode == 2, r.stderr
        assert r.stderr.strip().startswith(f"{name}:1: negative edge weight '-2': {what}"), \
            r.stderr
