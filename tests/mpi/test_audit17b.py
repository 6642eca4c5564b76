"""Audit 17b: the program commands and their output files, alike on 1..K ranks and both
modes (regressions of defects found by a user-level audit)."""
import os
import subprocess
import sys

import pytest

pytestmark = [pytest.mark.mpi, pytest.mark.timeout(600)]

CONFIGS = [[], ["--np", "2"], ["--np", "3", "--mode", "asap"]]


def _cli(args, cwd, timeout=180):
    return subprocess.run([sys.executable, "-m", "asapgraph", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("out", ["e.csv", "./e.csv", "link.csv"])
def test_output_equal_to_input_refused(tmp_path, out, refused_alike):
    """-o naming the input graph (or a link to it) replaced the edge list by the results
    (exit 0); now refused before any work, the input untouched."""
    text = "1,2\n2,3\n"
    (tmp_path / "e.csv").write_text(text)
    os.symlink("e.csv", tmp_path / "link.csv")
    refused_alike(tmp_path, ["wcc", "e.csv", "-o", out], "is the input graph",
                  configs=CONFIGS)
    assert (tmp_path / "e.csv").read_text() == text


def test_output_equal_to_personalization_refused(tmp_path, refused_alike):
    (tmp_path / "g.txt").write_text("1 2\n2 3\n3 1\n")
    (tmp_path / "p.csv").write_text("1,1\n")
    refused_alike(tmp_path, ["pagerank", "g.txt", "--personalization", "p.csv",
                              "-o", "p.csv"], "--personalization file", configs=CONFIGS[:2])
    assert (tmp_path / "p.csv").read_text() == "1,1\n"


def _compressed(kind, data):
    import bz2
    import gzip
    import lzma

    return {"gz": lambda d: gzip.compress(d, mtime=0), "bz2": bz2.compress,
            "xz": lzma.compress}[kind](data)


@pytest.mark.parametrize("labels", [[], ["--labels"]])
@pytest.mark.parametrize("kind", ["gz", "bz2", "xz"])
def test_compressed_trailing_garbage_refused_alike(tmp_path, kind, labels, refused_alike):
    """bz2/xz ignored bytes appended after the compressed stream (read as if absent, exit
    0) while gz refused them; --labels gave 'internal error: EOFError/LZMAError' for a
    truncated .bz2/.xz and 'cannot read: Not a gzipped file' for the .gz."""
    data = b"1 2\n2 3\n"
    name = f"g.txt.{kind}"
    (tmp_path / name).write_bytes(_compressed(kind, data) + b"GARBAGE-GARBAGE")
    line = refused_alike(tmp_path, ["wcc", name, *labels], name, "corrupt or truncated",
                         configs=CONFIGS)
    (tmp_path / name).write_bytes(_compressed(kind, data)[:-6])  # truncated
    assert refused_alike(tmp_path, ["wcc", name, *labels], name, configs=CONFIGS) == line
    # concatenated streams and zero padding stay readable
    (tmp_path / name).write_bytes(_compressed(kind, data) + _compressed(kind, b"3 4\n")
                                  + b"\0" * 8)
    for extra in CONFIGS[:2]:
        r = _cli(["info", name, "-q", *labels, *extra[:0]], tmp_path)
        assert r.returncode == 0 and "edges" in r.stdout, r.stderr
        assert [ln.split()[-1] for ln in r.stdout.splitlines()
                if ln.startswith(("vertices", "edges"))] == ["4", "3"], r.stdout


@pytest.mark.parametrize("text,words", [
    ("1_0 1\n", ["node id '1_0' is not an integer"]),        # int('1_0') == 10
    ("+1 1\n", ["node id '+1' has a sign"]),
    ("\u0661 1\n", ["is not an integer"]),                   # an Arabic-Indic digit one
    ("1 1_0\n", ["value '1_0' is not a number"]),            # float('1_0') == 10.0
    ("1 \u0661\n", ["value", "is not a number"]),
    ("1 0x1p1\n", ["value '0x1p1' is not a number"]),      # strtod's hex float (2.0)
])
def test_personalization_tokens_read_as_edge_lists(tmp_path, text, words, refused_alike):
    """Personalization files read ids with Python's int and values with its float: '1_0'
    was vertex 10 / weight 10, '+1' vertex 1, other scripts' digits numbers -- the edge
    reader refuses all of these; now the same rules and a FILE:LINE refusal."""
    (tmp_path / "g.txt").write_text("1 2\n2 3\n3 1\n10 1\n")
    (tmp_path / "p.txt").write_text(text, encoding="utf-8")
    refused_alike(tmp_path, ["pagerank", "g.txt", "--personalization", "p.txt"],
                  "p.txt:1:", *words, configs=CONFIGS[:2])


def test_personalization_extra_columns_ignored(tmp_path):
    """Like an edge list: columns past the second are ignored (hex floats are refused as
    the edge reader's weights are: ``test_personalization_tokens_read_as_edge_lists``)."""
    (tmp_path / "g.txt").write_text("1 2\n2 3\n3 1\n")
    (tmp_path / "p.txt").write_text("1 2e0 note\n2 2.0 x y\n")
    (tmp_path / "q.txt").write_text("1 2\n2 2\n")
    outs = []
    for extra in CONFIGS[:2]:
        for f in ("p.txt", "q.txt"):
            r = _cli(["pagerank", "g.txt", "--personalization", f, "-o", f"{f}.{len(extra)}.csv",
                      "-q", "--tol", "1e-12", *extra], tmp_path)
            assert r.returncode == 0, r.stderr
            outs.append((tmp_path / f"{f}.{len(extra)}.csv").read_text())
    assert outs[0] == outs[1]
    assert outs[2] == outs[3]


_WEIGHT_SCRIPT = r'''
import sys
import numpy as np
import scipy.sparse as sp
import asapgraph
from asapgraph import programs as P
comm = None
try:
    from mpi4py import MPI
    comm = MPI.COMM_WORLD if MPI.COMM_WORLD.Get_size() > 1 else None
except ImportError:
    pass
bad = float(sys.argv[1])
lines = []
A = sp.csr_matrix(np.array([[0, 1, 0, 0], [0, 0, 1, bad], [1, 0, 0, 0], [0, 0, 1, 0.]]))
for name, prog in [("katz", lambda: P.KatzProgram(alpha=0.1, weighted=True)),
                   ("hits", P.HITSProgram), ("sssp", lambda: P.SSSPProgram(0)),
                   ("pagerank", P.PageRankProgram)]:
    try:
        asapgraph.run(prog(), A, comm=comm)
        lines.append(f"{name} OK\n")
    except Exception as e:  # on ranks: RankFailure carrying the same line
        lines.append(f"{name} ERR {e}\n")
rank = 0 if comm is None else comm.Get_rank()
open(f"out.{rank}", "w").write("".join(lines))
'''


@pytest.mark.parametrize("bad", ["inf", "nan"])
def test_object_graph_nonfinite_weight_named(tmp_path, mpirun, bad):
    """Katz/HITS/SSSP/PageRankProgram on a scipy matrix with an inf/NaN weight refused with
    'a score exceeds the largest double', 'a shortest-path distance exceeds...', 'the
    edge weights of a vertex sum past the largest double' -- not naming the weight; now
    'edge weight inf is not a finite number', as a file and asapgraph.pagerank say, on
    one process and on 2 ranks."""
    (tmp_path / "s.py").write_text(_WEIGHT_SCRIPT)
    want = "".join(f"{n} ERR <scipy>: edge weight {bad} is not a finite number\n"
                   for n in ("katz", "hits", "sssp", "pagerank"))
    r = subprocess.run([sys.executable, "s.py", bad], cwd=tmp_path, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0 and (tmp_path / "out.0").read_text() == want, r.stderr[-2000:]
    (tmp_path / "out.0").unlink()
    r = mpirun(2, [sys.executable, "s.py", bad], timeout=180)
    assert r.returncode == 0, r.stderr[-2000:]
    for k in (0, 1):
        assert (tmp_path / f"out.{k}").read_text() == want, k
