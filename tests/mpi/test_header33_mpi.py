"""``--header`` on K ranks: the same file read on 1 process and on ``--np 2 --mode bsp``,
``--np 3 --mode asap`` and ``--np 4`` gives the same ranks (L1 <= 1e-9), the same refusals
(one line, exit 2) and ``"header": true`` in ``--json``.  The ranks split a plain file by
byte ranges (only the range that holds the header line's first byte skips it, wherever
the comments before it put it) and rank 0 streams a compressed one (it blanks the header
line before dealing the chunk that holds it); ``--labels`` is read by rank 0."""
import gzip
import json
import os
import subprocess
import sys

import numpy as np
import pytest

pytestmark = [pytest.mark.mpi, pytest.mark.timeout(900)]

CONFIGS = [[], ["--np", "2", "--mode", "bsp"], ["--np", "3", "--mode", "asap"], ["--np", "4"]]

_rng = np.random.default_rng(3303)
_IDS = np.sort(_rng.choice(5000, 400, replace=False))
EDGES = [(int(a), int(b), float(w)) for a, b, w in
         zip(_rng.choice(_IDS, 2000), _rng.choice(_IDS, 2000), _rng.integers(1, 9, 2000) / 4)]


def _body(names=False):
    f = (lambda v: f"v{v}") if names else str
    return "".join(f"{f(a)},{f(b)},{w:g}\n" for a, b, w in EDGES)


def _cli(args, cwd, env=None):
    e = None
    if env:
        e = dict(os.environ)
        e.update(env)
    return subprocess.run([sys.executable, "-m", "asapgraph", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=240, env=e)


def _vector(path):
    rows = [ln.split(",") for ln in path.read_text().splitlines()[1:]]
    return [r[0] for r in rows], np.array([float(r[1]) for r in rows])


def _files(tmp_path):
    """The same edges: without a header (the reference), with one after a comment block
    large enough to put the header line in a later rank's byte range, gzipped, and
    CRLF with a byte order mark."""
    head = "# " + "exported by a script " * 4 + "\n"
    (tmp_path / "n.csv").write_text(_body())
    text = head * 400 + "\n% more\nsource,target,weight\n" + _body()
    (tmp_path / "h.csv").write_text(text)
    assert text.index("source,target") > len(text) // 2   # past rank 0's range on 2+ ranks
    (tmp_path / "h.csv.gz").write_bytes(gzip.compress(text.encode()))
    (tmp_path / "crlf.csv").write_bytes(("\ufeffsrc,dst,w\r\n" + _body().replace(
        "\n", "\r\n")).encode())
    (tmp_path / "nl.csv").write_text(_body(names=True))
    (tmp_path / "hl.csv").write_text(head * 50 + "source,target,weight\n" + _body(names=True))


@pytest.mark.parametrize("command,opts", [("pagerank", ["--weighted"]), ("pagerank", []),
                                          ("katz", ["--alpha", "0.01"]), ("wcc", [])])
def test_same_ranks_everywhere(tmp_path, command, opts):
    _files(tmp_path)
    ref = _cli([command, "n.csv", "-q", "-o", "ref.csv", *opts], tmp_path)
    assert ref.returncode == 0, ref.stderr
    ids, want = _vector(tmp_path / "ref.csv")
    inputs = ["h.csv", "h.csv.gz", "crlf.csv"] if command == "pagerank" else ["h.csv"]
    for name in inputs:
        for i, extra in enumerate(CONFIGS):
            out = tmp_path / f"o{i}.csv"
            r = _cli([command, name, "--header", "-q", "-o", out, *opts, *extra], tmp_path)
            assert r.returncode == 0, (name, extra, r.stderr[-2000:])
            got_ids, got = _vector(out)
            assert got_ids == ids, (name, extra)
            assert np.abs(got - want).sum() <= 1e-9, (name, extra, np.abs(got - want).sum())


def test_labels_and_small_chunks(tmp_path):
    """``--labels`` (rank 0 reads the file) and a compressed file streamed in chunks much
    smaller than the comments before the header (ASAPGRAPH_DIST_CHUNK_BYTES)."""
    _files(tmp_path)
    ref = _cli(["pagerank", "nl.csv", "--labels", "-q", "-o", "ref.csv"], tmp_path)
    assert ref.returncode == 0, ref.stderr
    ids, want = _vector(tmp_path / "ref.csv")
    for i, extra in enumerate(CONFIGS):
        out = tmp_path / f"o{i}.csv"
        r = _cli(["pagerank", "hl.csv", "--header", "--labels", "-q", "-o", out, *extra],
                 tmp_path)
        assert r.returncode == 0, (extra, r.stderr[-2000:])
        got_ids, got = _vector(out)
        assert got_ids == ids and np.abs(got - want).sum() <= 1e-9, extra
    ref = _cli(["wcc", "n.csv", "-q", "-o", "ref.csv"], tmp_path)
    ids, want = _vector(tmp_path / "ref.csv")
    for i, extra in enumerate(CONFIGS[1:]):
        out = tmp_path / f"c{i}.csv"
        r = _cli(["wcc", "h.csv.gz", "--header", "-q", "-o", out, *extra], tmp_path,
                 env={"ASAPGRAPH_DIST_CHUNK_BYTES": "1000"})
        assert r.returncode == 0, (extra, r.stderr[-2000:])
        got_ids, got = _vector(out)
        assert got_ids == ids and np.array_equal(got, want), extra


def _same_refusal(tmp_path, args, want=None):
    lines = []
    for extra in CONFIGS:
        r = _cli([*args, "-q", *extra], tmp_path)
        assert r.returncode == 2, (args, extra, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1, (extra, r.stderr)
        lines.append(r.stderr.strip())
    assert len(set(lines)) == 1, lines
    if want is not None:
        assert lines[0] == want
    return lines[0]


def test_same_refusals(tmp_path):
    _files(tmp_path)
    (tmp_path / "g.mtx").write_text("%%MatrixMarket matrix coordinate real general\n"
                                    "3 3 2\n1 2 1\n2 3 1\n")
    assert _cli(["convert", "n.csv", "g.asg", "-q"], tmp_path).returncode == 0
    tail = ": drop --header (Python: header=False)"
    for name, what in (("g.mtx", "a Matrix Market file (its banner and size line are its "
                                 "header)"),
                       ("g.asg", "an asapgraph binary graph (.asg)"),
                       ("rmat:6", "a generator spec, which has no header line")):
        for command in ("pagerank", "wcc"):
            _same_refusal(tmp_path, [command, name, "--header"],
                          f"{name}: --header applies to text edge lists, and this is {what}"
                          + tail)
    # a bad line after the header: its physical line, everywhere (plain, gz, --labels)
    bad = "# c\n" * 300 + "source,target\n" + "".join(f"{a},{b}\n" for a, b, _ in EDGES) + \
        "7\n" + "1,2\n" * 50
    line = bad.count("\n") - 50
    (tmp_path / "bad.csv").write_text(bad)
    (tmp_path / "bad.csv.gz").write_bytes(gzip.compress(bad.encode()))
    for name, extra in (("bad.csv", []), ("bad.csv.gz", []), ("bad.csv", ["--labels"])):
        _same_refusal(tmp_path, ["wcc", name, "--header", *extra],
                      f"{name}:{line}: missing column 2 (line has 1 column)")
    # a negative weight: its line, the numeric header line being no edge
    (tmp_path / "neg.txt").write_text("9 9 -1\n1 2 1\n2 3 -2\n")
    _same_refusal(tmp_path, ["sssp", "neg.txt", "--header", "--weighted", "--source", "1"],
                  "neg.txt:3: negative edge weight '-2': sssp needs non-negative edge weights")
    _same_refusal(tmp_path, ["pagerank", "neg.txt", "--header", "--weighted"])
    # a header line only: as an empty edge list
    (tmp_path / "only.csv").write_text("# c\n" * 100 + "source,target,weight\n\n")
    _same_refusal(tmp_path, ["pagerank", "only.csv", "--header"], "only.csv: no edges found")
    # without --header the header line is refused with the hint, everywhere
    (tmp_path / "h1.csv").write_text("source,target,weight\n" + _body())
    _same_refusal(tmp_path, ["pagerank", "h1.csv"],
                  "h1.csv:1: expected an integer vertex id in column 1, got 'source' (a header "
                  "line? pass --header, or start it with '#'; vertex names? pass --labels)")


def test_json_everywhere(tmp_path):
    _files(tmp_path)
    for command in ("pagerank", "wcc"):
        for extra in CONFIGS[1:]:
            r = _cli([command, "h.csv", "--header", "--json", "-q", *extra], tmp_path)
            assert r.returncode == 0, r.stderr[-2000:]
            j = json.loads(r.stdout)
            assert j["header"] is True and j["edges"] == len(EDGES), (command, extra)
            r = _cli([command, "n.csv", "--json", "-q", *extra], tmp_path)
            assert json.loads(r.stdout)["header"] is False


_API_SCRIPT = '''
import numpy as np
from mpi4py import MPI
from asapgraph.engine import load, pagerank
from asapgraph.engine.distributed import run
from asapgraph.programs import WCCProgram
comm = MPI.COMM_WORLD
a = pagerank("h.csv", comm, header=True, weighted=True, mode="{mode}")
b = pagerank("n.csv", comm, weighted=True, mode="{mode}")
c = pagerank(load("h.csv.gz", comm, header=True), comm)
d = pagerank("n.csv", comm)
w1 = run(WCCProgram, "h.csv", comm, header=True)
w2 = run(WCCProgram, "n.csv", comm)
said = []
for src in ("g.mtx", "rmat:6"):
    try:
        pagerank(src, comm, header=True)
    except Exception as e:
        said.append(str(e))
if comm.Get_rank() == 0:
    assert np.array_equal(a.ids, b.ids) and np.abs(a.ranks - b.ranks).sum() <= 1e-9
    assert np.abs(c.ranks - d.ranks).sum() <= 1e-9
    assert w1.to_dict() == w2.to_dict()
    assert [s.split(": --header applies")[0] for s in said] == ["g.mtx", "rmat:6"], said
    print("OK")
'''


@pytest.mark.parametrize("k,mode", [(2, "bsp"), (3, "asap")])
def test_engine_api(tmp_path, mpirun, k, mode):
    """``asapgraph.engine.pagerank``/``load`` and ``asapgraph.engine.distributed.run`` take
    ``header=True`` as ``load_graph`` does, and refuse it for a .mtx file and a spec."""
    _files(tmp_path)
    (tmp_path / "g.mtx").write_text("%%MatrixMarket matrix coordinate real general\n"
                                    "3 3 2\n1 2 1\n2 3 1\n")
    (tmp_path / "api.py").write_text(_API_SCRIPT.replace("{mode}", mode))
    r = mpirun(k, [sys.executable, "api.py"], timeout=240)
    assert r.returncode == 0 and "OK" in r.stdout, (r.stdout[-2000:], r.stderr[-2000:])


def test_numbers_after_comments_refused_alike(tmp_path):
    """A SNAP-style file (comment lines, then edges) with ``--header``: its first edge was
    skipped as the header, silently.  Refused at that line on 1 process and K ranks, for
    a plain file split by byte ranges (the comments longer than a range) and a compressed
    one streamed in chunks smaller than the comments."""
    body = "".join(f"{a}\t{b}\n" for a, b, _ in EDGES)
    text = "# Directed graph\n" + "# a comment line of some length\n" * 200 + \
        "# FromNodeId\tToNodeId\n" + body
    (tmp_path / "snap.txt").write_text(text)
    with gzip.open(tmp_path / "snap.txt.gz", "wt") as f:
        f.write(text)
    a, b = EDGES[0][:2]
    want = (f"{{}}:203: --header would skip this line, the first that is neither blank nor a "
            f"comment, but it holds only numbers ('{a}\\t{b}'): an edge after the file's "
            "comment lines, not column names (drop --header)")
    _same_refusal(tmp_path, ["pagerank", "snap.txt", "--header"], want.format("snap.txt"))
    lines = []
    for extra in CONFIGS:
        r = _cli(["pagerank", "snap.txt.gz", "--header", "-q", *extra], tmp_path,
                 env={"ASAPGRAPH_DIST_CHUNK_BYTES": "1000"})
        assert r.returncode == 2, (extra, r.stderr)
        lines.append(r.stderr.strip())
    assert lines == [want.format("snap.txt.gz")] * len(CONFIGS), lines
