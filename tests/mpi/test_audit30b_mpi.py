"""Audit 30b on ranks (one process: tests/test_audit30b.py).

* A damaged compressed edge list with a bad line before the damage: rank 0 (which
  decompresses it for every rank) refused the damage before any line's error, whatever
  lay before it, where one process named the bad line when it lay in a block it had
  parsed before the damage.  Now the first problem in the file's order everywhere: the
  bad line before the damage, else the damage.
* ``--personalization -`` / ``--dangling -`` read a file named ``-`` on ranks too: now
  rank 0 reads standard input (the launcher hands it its descriptor), the same answer as
  one process; ``-`` twice is refused in one line before any rank starts.
* ``info``, ``convert`` and ``generate`` under the user's own ``mpiexec -n K``: every rank
  did the whole work (the summary printed K times, the file written K times); now one line
  from rank 0, exit 2 (``--np`` on them: tests/test_audit30b.py).
"""
import gzip
import lzma
import os
import subprocess
import sys

import pytest

pytestmark = [pytest.mark.mpi, pytest.mark.timeout(900)]

ROWS = 800_000


def _cli(args, cwd, env=None, timeout=300, stdin=None):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "asapgraph", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout, env=e,
                          **({"stdin": subprocess.DEVNULL} if stdin is None else
                             {"input": stdin}))


def _damaged(path, bad, keep, xz=False):
    rows = [f"{i} {(i * 7919) % 500_000}" for i in range(ROWS)]
    for no, text in bad.items():
        rows[no - 1] = text
    data = ("\n".join(rows) + "\n").encode()
    z = lzma.compress(data, preset=0) if xz else gzip.compress(data, 1)
    path.write_bytes(z[: int(len(z) * keep)])


CONFIGS = [[], ["--np", "2"], ["--np", "3", "--mode", "asap"]]
DAMAGE = "corrupt or truncated {} data"


def test_bad_line_in_an_earlier_block_than_the_damage(tmp_path, refused_alike):
    """Line 1000 is in the first block one process parses: it named it, the ranks the
    damage."""
    _damaged(tmp_path / "early.txt.gz", {1000: "5"}, 0.9)
    want = "early.txt.gz:1000: missing column 2 (line has 1 column)"
    assert refused_alike(tmp_path, ["pagerank", "early.txt.gz"], configs=CONFIGS,
                         output="out.csv") == want
    assert refused_alike(tmp_path, ["wcc", "early.txt.gz", "--labels"],
                         configs=[[], ["--np", "2"]], output="out.csv") == want
    # a bad line after the cut, or none: the damage, as before
    _damaged(tmp_path / "after.txt.gz", {799_000: "5"}, 0.5)
    _damaged(tmp_path / "clean.txt.gz", {}, 0.9)
    for f in ("after.txt.gz", "clean.txt.gz"):
        assert refused_alike(tmp_path, ["pagerank", f], configs=CONFIGS,
                             output="out.csv") == f"{f}: " + DAMAGE.format("gzip")


@pytest.mark.parametrize("xz", [False, True])
def test_bad_line_in_the_block_of_the_damage(tmp_path, xz, refused_alike):
    """Line 700,000 is in the block with the cut: the damage everywhere before."""
    f = "near.txt." + ("xz" if xz else "gz")
    _damaged(tmp_path / f, {700_000: "5 bad"}, 0.95, xz)
    want = f"{f}:700000: expected an integer vertex id in column 2, got 'bad'"
    # small chunks from rank 0: the bad line on a rank other than 0 too
    env = {"ASAPGRAPH_DIST_CHUNK_BYTES": "1000000"}
    assert refused_alike(tmp_path, ["pagerank", f], configs=CONFIGS, output="out.csv",
                         env=env) == want
    assert refused_alike(tmp_path, ["pagerank", f], configs=[["--np", "2"]],
                         output="out.csv") == want


# ------------------------------------------------ --personalization - : standard input
GRAPH = "0 1\n1 2\n2 0\n2 3\n3 4\n4 0\n"
SEEDS = "0 1\n3 2\n"


@pytest.mark.parametrize("opt", ["--personalization", "--dangling"])
def test_dash_is_standard_input_on_ranks(tmp_path, opt):
    (tmp_path / "g.txt").write_text(GRAPH)
    (tmp_path / "seeds.txt").write_text(SEEDS)
    (tmp_path / "-").write_text("1 1\n")   # a file named '-' is not read
    want = None
    for extra in ([], ["--np", "2"], ["--np", "3", "--mode", "asap"]):
        out = tmp_path / "out.csv"
        for src, stdin in (("seeds.txt", None), ("-", SEEDS)):
            r = _cli(["pagerank", "g.txt", opt, src, "--tol", "1e-9", "--json", "-q",
                      "-o", out, *extra], tmp_path, stdin=stdin)
            assert r.returncode == 0, (extra, src, r.stderr)
            assert '"' + opt[2:] + '": "' + src + '"' in r.stdout   # applied, in --json
            ranks = {ln.split(",")[0]: float(ln.split(",")[1])
                     for ln in out.read_text().splitlines()[1:]}
            out.unlink()
            want = want or ranks
            assert ranks.keys() == want.keys()
            assert max(abs(ranks[k] - want[k]) for k in want) < 1e-8, (extra, src)
    # a bad line: the same one line everywhere
    for extra in ([], ["--np", "2"], ["--np", "2", "--mode", "asap"]):
        r = _cli(["pagerank", "g.txt", opt, "-", "-q", *extra], tmp_path, stdin="0 1\n9 2\n")
        assert (r.returncode, r.stderr.strip()) == (
            2, "<stdin>:2: node 9 is not a vertex of the graph"), extra


def test_dash_twice_refused_on_ranks(tmp_path):
    (tmp_path / "g.txt").write_text(GRAPH)
    (tmp_path / "-").write_text(SEEDS)
    for extra in ([], ["--np", "2"], ["--np", "2", "--labels"]):
        r = _cli(["pagerank", "g.txt", "--personalization", "-", "--dangling", "-", "-q",
                  *extra], tmp_path, stdin=SEEDS)
        assert (r.returncode, r.stderr.strip()) == (
            2, "asapgraph: standard input '-' can be read once: give it to only one of "
               "--personalization and --dangling; save the others to files"), extra


# ------------------------------------------------ one-process commands under mpiexec
@pytest.mark.parametrize("args, out", [
    (["info", "g.txt"], None),
    (["convert", "g.txt", "g.asg"], "g.asg"),
    (["generate", "rmat", "--scale", "4", "-o", "r.txt"], "r.txt"),
])
def test_one_process_commands_refused_under_mpiexec(tmp_path, mpirun, args, out):
    (tmp_path / "g.txt").write_text(GRAPH)
    r = mpirun(2, [sys.executable, "-m", "asapgraph", *args], timeout=120)
    assert (r.returncode, r.stderr.strip(), r.stdout) == (
        2, f"asapgraph: {args[0]} runs in one process: start it without mpiexec (each of "
           "the ranks would do the whole work)", ""), r.stderr
    assert out is None or not (tmp_path / out).exists()
    r = mpirun(1, [sys.executable, "-m", "asapgraph", *args, "-q"], timeout=120)
    assert r.returncode == 0, r.stderr   # one rank: one process


def test_closed_stdin_reported_after_the_graph(tmp_path):
    """``--personalization -`` with standard input closed: the graph's own problem first,
    then ``<stdin>: cannot read``, on one process and on ranks (the launcher refused the
    closed stdin before starting any rank, ahead of the graph's bad line)."""
    (tmp_path / "bad.txt").write_text("0 1\n1 x\n")
    (tmp_path / "g.txt").write_text(GRAPH)
    for f, want in (("bad.txt", "bad.txt:2: expected an integer vertex id in column 2, "
                                "got 'x'"),
                    ("g.txt", "<stdin>: cannot read: standard input is closed")):
        for extra in ([], ["--np", "2"]):
            r = subprocess.run([sys.executable, "-m", "asapgraph", "pagerank", f,
                                "--personalization", "-", "-q", *extra], cwd=tmp_path,
                               capture_output=True, text=True, timeout=300,
                               preexec_fn=lambda: os.close(0))
            assert (r.returncode, r.stderr.strip()) == (2, want), (f, extra)
