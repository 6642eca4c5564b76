"""Audit 30b (one process; the ranks' side: tests/mpi/test_audit30b_mpi.py).

* A damaged compressed edge list (truncated, or corrupt further on) with a bad line before
  the damage: one process named the bad line only when the reader had parsed its block
  before reaching the damage (a block read that fails loses what it had decompressed), so
  a bad line in the last block (up to 32 MiB of text) was "corrupt or truncated gzip data";
  ``--labels`` (the whole file read at once) always said that.  Now the first problem in
  the file's order, as for every other problem: the bad line when it comes before the
  cut, else the cut (the lines the failed read lost are decompressed again, in small
  pieces: an error path only).  Only for a file cut short: before corrupt data a decoder
  outputs garbage for a while (tests/io/test_errors.py::test_corrupt_gzip would name a
  garbage line), so corrupt data is refused as such, as before.
* ``pagerank G --personalization -`` (or ``--dangling -``) read a file named ``-`` in the
  working directory where INPUT ``-`` reads standard input: now ``-`` is standard input
  there too (``<stdin>:LINE`` in its messages), and ``-`` given to two of INPUT,
  ``--personalization`` and ``--dangling`` is refused in one line, exit 2.
* ``info G --np 2`` (convert, generate, bench alike) said ``asapgraph: error: unrecognized
  arguments: --np 2`` (one line already, not argparse's multi-line usage: the CLI's parser
  prints one line since an earlier audit); now the line says why: the command runs in one
  process (bench: it starts its own ranks, ``--ranks``).  Under the user's own mpiexec with
  several ranks info/convert/generate are refused too (each rank printed the summary, or
  wrote the file): tests/mpi/test_audit30b_mpi.py.
"""
import bz2
import gzip
import lzma
import subprocess
import sys

import pytest


ROWS = 800_000   # ~11 MB of text: the reader's blocks grow 1, 4, 16 MiB (several blocks)
COMP = {"gz": lambda d: gzip.compress(d, 1), "bz2": lambda d: bz2.compress(d, 1),
        "xz": lambda d: lzma.compress(d, preset=0)}


def _damaged(path, ext, bad_line, bad_text, keep=0.95):
    """A text edge list with line ``bad_line`` replaced, compressed, the first ``keep`` of
    its compressed bytes kept (truncated); returns the path."""
    rows = [f"{i} {(i * 7919) % 500_000}" for i in range(ROWS)]
    if bad_line:
        rows[bad_line - 1] = bad_text
    z = COMP[ext](("\n".join(rows) + "\n").encode())
    path.write_bytes(z[: int(len(z) * keep)])
    return path


def _cli(args, cwd):
    # (the environment as given: the installed package, or a built tree on PYTHONPATH;
    # never the checkout itself, whose source tree is not built on a clean install)
    return subprocess.run([sys.executable, "-m", "asapgraph", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


BAD_INT = "expected an integer vertex id in column 2, got 'bad'"
BAD_ONE = "missing column 2 (line has 1 column)"


@pytest.mark.parametrize("ext", ["gz", "bz2", "xz"])
def test_bad_line_before_the_damage_in_the_same_block(tmp_path, ext, refusal):
    """Line 700,000 lies in the reader's last block, with the cut: it was the damage."""
    p = _damaged(tmp_path / f"near.txt.{ext}", ext, 700_000, "5 bad")
    assert refusal(p) == f"{p}:700000: {BAD_INT}"
    q = _damaged(tmp_path / f"lnear.txt.{ext}", ext, 700_000, "5")  # ('bad' is a name)
    assert refusal(q, labels=True) == f"{q}:700000: {BAD_ONE}"


def test_first_problem_in_file_order(tmp_path, refusal):
    """An early bad line (an earlier block: named before too), a bad line after the damage
    (the damage), no bad line (the damage); --labels alike."""
    damage = "corrupt or truncated gzip data"
    p = _damaged(tmp_path / "early.txt.gz", "gz", 1000, "5")
    assert refusal(p) == refusal(p, labels=True) == f"{p}:1000: {BAD_ONE}"
    p = _damaged(tmp_path / "after.txt.gz", "gz", 799_000, "5", keep=0.5)
    assert refusal(p) == refusal(p, labels=True) == f"{p}: {damage}"
    p = _damaged(tmp_path / "clean.txt.gz", "gz", 0, "", keep=0.9)
    assert refusal(p) == refusal(p, labels=True) == f"{p}: {damage}"
    # the cut line itself is not a bad line: '123 4' of '123 456' (the damage)
    p = _damaged(tmp_path / "near.txt.gz", "gz", 700_000, "5")
    assert refusal(p) == refusal(p, labels=True) == f"{p}:700000: {BAD_ONE}"


def test_cli_alike_threads(tmp_path):
    """The command line: decompressed inline (--threads 1) or read ahead in a thread."""
    _damaged(tmp_path / "near.txt.gz", "gz", 700_000, "5 bad")
    want = f"near.txt.gz:700000: {BAD_INT}"
    for extra in ([], ["--threads", "1"], ["--threads", "2"]):
        r = _cli(["pagerank", "near.txt.gz", "-q", "-o", "out.csv", *extra], tmp_path)
        assert (r.returncode, r.stderr.strip()) == (2, want), extra
        assert not (tmp_path / "out.csv").exists()
    r = _cli(["info", "near.txt.gz"], tmp_path)
    assert (r.returncode, r.stderr.strip().splitlines()[-1]) == (2, want)


# ------------------------------------------------ --personalization - : standard input
GRAPH = "0 1\n1 2\n2 0\n2 3\n"
SEEDS = "0 1\n3 2\n"


def _ranks(tmp_path, args, stdin):
    r = subprocess.run([sys.executable, "-m", "asapgraph", *args, "-q", "-o", "out.csv"],
                       cwd=tmp_path, input=stdin, capture_output=True, text=True, timeout=120)
    return r, ((tmp_path / "out.csv").read_text() if (tmp_path / "out.csv").exists() else None)


@pytest.mark.parametrize("opt", ["--personalization", "--dangling"])
def test_dash_is_standard_input(tmp_path, opt):
    (tmp_path / "g.txt").write_text(GRAPH)
    (tmp_path / "seeds.txt").write_text(SEEDS)
    (tmp_path / "-").write_text("1 1\n")   # a file named '-' is not read
    r, want = _ranks(tmp_path, ["pagerank", "g.txt", opt, "seeds.txt"], None)
    assert r.returncode == 0, r.stderr
    (tmp_path / "out.csv").unlink()
    r, got = _ranks(tmp_path, ["pagerank", "g.txt", opt, "-"], SEEDS)
    assert r.returncode == 0, r.stderr
    assert got == want
    (tmp_path / "out.csv").unlink()
    # compressed on standard input, as a file
    r = subprocess.run([sys.executable, "-m", "asapgraph", "pagerank", "g.txt", opt, "-",
                        "-q", "-o", "out.csv"], cwd=tmp_path, input=gzip.compress(
                            SEEDS.encode()), capture_output=True, timeout=120)
    assert r.returncode == 0 and (tmp_path / "out.csv").read_text() == want
    (tmp_path / "out.csv").unlink()
    # its problems at their line, named <stdin>
    r, got = _ranks(tmp_path, ["pagerank", "g.txt", opt, "-"], "0 1\n9 2\n")
    assert (r.returncode, r.stderr.strip(), got) == (
        2, "<stdin>:2: node 9 is not a vertex of the graph", None)


@pytest.mark.parametrize("args, named", [
    (["g.txt", "--personalization", "-", "--dangling", "-"], "--personalization and --dangling"),
    (["-", "--personalization", "-"], "INPUT and --personalization"),
    (["-", "--dangling", "-"], "INPUT and --dangling"),
])
def test_dash_twice_refused(tmp_path, args, named):
    (tmp_path / "g.txt").write_text(GRAPH)
    (tmp_path / "-").write_text(SEEDS)   # (read as the file before)
    r, got = _ranks(tmp_path, ["pagerank", *args], GRAPH)
    assert (r.returncode, r.stderr.strip(), got) == (
        2, f"asapgraph: standard input '-' can be read once: give it to only one of {named}; "
           "save the others to files", None)


# ------------------------------------------------ --np on the one-process commands
RUN = "pagerank, katz, hits, wcc, sssp, bfs, labelprop and run"


@pytest.mark.parametrize("args, out", [
    (["info", "g.txt"], None),
    (["info", "g.txt", "--json"], None),
    (["convert", "g.txt", "g.asg"], "g.asg"),
    (["generate", "rmat", "--scale", "4", "-o", "r.txt"], "r.txt"),
    (["generate", "er", "--vertices", "10", "--edges", "5", "-o", "e.txt"], "e.txt"),
])
@pytest.mark.parametrize("np_", [["--np", "2"], ["--np", "1"], ["--np=4"]])
def test_np_refused_by_one_process_commands(tmp_path, args, out, np_):
    (tmp_path / "g.txt").write_text(GRAPH)
    r = _cli([*args, *np_], tmp_path)
    assert (r.returncode, r.stderr.strip(), r.stdout) == (
        2, f"asapgraph: --np does not apply to {args[0]}: it runs in one process (--np "
           f"applies to {RUN})", "")
    assert out is None or not (tmp_path / out).exists()


def test_np_refused_by_bench(tmp_path):
    r = _cli(["bench", "--quick", "--np", "2"], tmp_path)
    assert (r.returncode, r.stderr.strip()) == (
        2, "asapgraph: --np does not apply to bench: it starts its own ranks, give their "
           "counts with --ranks (e.g. --ranks 2,4)")
