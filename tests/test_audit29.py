"""Audit 29: a NUL byte in a text edge list (binary data) is refused at its line, and
the same way on one process, on K ranks and with ``--labels``.

Before: the integer reader said ``FILE: binary data, not a text edge list`` with no line
(``--labels`` named it: ``FILE:4000: ...``), and which problem it reported depended on
where the NUL fell: a NUL anywhere in the first 64 KiB of the file (one process) or of a
rank's byte range (ranks), or anywhere in a parser block, won over a bad line before it,
so ``0 1`` ... ``12 x`` (line 10) ... ``12 3<NUL>`` (line 4000) was "binary data" on one
process and ``FILE:10: expected an integer vertex id`` on 2 ranks.  Now: a NUL in the
file's first 64 KiB is refused first, at its line, by every reader and rank; further on
it is refused at its line unless a line before it is refused first (file order, as every
other problem).  (The ranks' side: tests/mpi/test_audit29_mpi.py.)

Normalised Katz centrality divided by ``sqrt(sum x^2)``: the sum overflows from values of
about 1e154 (``katz --beta 1e200``: every score 0, exit 0) and underflows below about
1e-162 (``--beta 1e-200``: the unnormalised values written); networkx's ``math.hypot``
scales, so it gives 0.5 for the 4-cycle-and-tail graph where asapgraph (one process, K
ranks, BSP and ASAP, and its networkx backend) gave 0 or 1e-200.  The norm is now taken of
the values divided by the largest first when the plain sum is not finite and normal.
"""
import gzip
import json
import subprocess
import sys

import numpy as np
import pytest

from asapgraph import load_graph
from asapgraph.errors import InputError
from asapgraph.graph.io import parse_byte_range

BIN = "binary data, not a text edge list"


def _file(tmp_path, name, edits, n=50000, gz=False):
    rows = [f"{i} {(i * 7919) % n}" for i in range(n)]
    for no, text in edits.items():
        rows[no - 1] = text
    data = ("\n".join(rows) + "\n").encode()
    p = tmp_path / name
    p.write_bytes(gzip.compress(data, 1) if gz else data)
    return p


@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize("labels", [False, True])
def test_nul_is_refused_at_its_line(tmp_path, gz, labels, refusal):
    p = _file(tmp_path, "g.txt" + (".gz" if gz else ""), {30000: "7 \x00 8"}, gz=gz)
    assert refusal(p, labels) == f"{p}:30000: {BIN}"          # past the first 64 KiB
    p = _file(tmp_path, "h.txt" + (".gz" if gz else ""), {3000: "7 8\x00"}, gz=gz)
    assert refusal(p, labels) == f"{p}:3000: {BIN}"           # within it


@pytest.mark.parametrize("gz", [False, True])
def test_first_problem_in_file_order_past_the_head(tmp_path, gz, refusal):
    sfx = ".gz" if gz else ""
    p = _file(tmp_path, "a.txt" + sfx, {10: "5 x", 30000: "7 \x00 8"}, gz=gz)
    assert refusal(p) == f"{p}:10: expected an integer vertex id in column 2, got 'x'"
    p = _file(tmp_path, "b.txt" + sfx, {10: "a", 30000: "7 \x00 8"}, gz=gz)
    assert refusal(p, labels=True) == f"{p}:10: missing column 2 (line has 1 column)"
    p = _file(tmp_path, "c.txt" + sfx, {30000: "7 \x00 8", 40000: "5 x"}, gz=gz)
    assert refusal(p) == refusal(p, labels=True) == f"{p}:30000: {BIN}"


def test_nul_in_the_head_is_refused_before_any_line(tmp_path, refusal):
    p = _file(tmp_path, "a.txt", {10: "5 x", 3000: "7 8\x00"})
    assert refusal(p) == refusal(p, labels=True) == f"{p}:3000: {BIN}"
    # a byte range further on (a rank's) looks at the file's head too
    size = p.stat().st_size
    for a, b in ((0, size // 2), (size // 2, size), (0, 100)):
        with pytest.raises(InputError) as ei:
            parse_byte_range(p, a, b)
        assert str(ei.value) == f"{p}:3000: {BIN}", (a, b)


def test_byte_ranges_past_the_head_follow_file_order(tmp_path):
    p = _file(tmp_path, "a.txt", {30000: "7 \x00 8", 31000: "5 x"})
    size = p.stat().st_size
    with pytest.raises(InputError) as ei:
        parse_byte_range(p, size // 3, size)
    assert str(ei.value) == f"{p}:30000: {BIN}"
    p = _file(tmp_path, "b.txt", {30000: "5 x", 31000: "7 \x00 8"})
    with pytest.raises(InputError) as ei:
        parse_byte_range(p, size // 3, size)
    assert str(ei.value) == f"{p}:30000: expected an integer vertex id in column 2, got 'x'"
    assert parse_byte_range(p, 0, size // 3).m > 0   # (a range before both: fine)


def test_binary_files_are_still_named(tmp_path, refusal):
    p = tmp_path / "x.txt"
    p.write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 10)
    assert refusal(p) == refusal(p, labels=True) == f"{p}:1: {BIN}"
    p.write_bytes(b"\x28\xb5\x2f\xfd\x24\x1d\xe9\x00" + b"0 1\n" * 10)
    assert "zstd-compressed, which asapgraph does not read" in refusal(p)
    assert refusal(p) == refusal(p, labels=True)


# -------------------------------------------------------- Katz: the L2 norm of the result
EDGES = [(0, 1), (1, 2), (2, 0), (2, 3), (3, 4)]


@pytest.mark.parametrize("scale", [1e200, 1e300, 1e-200, 1e-300, 1.0])
def test_katz_normalised_without_overflow(scale):
    nx = pytest.importorskip("networkx")
    from asapgraph.programs import katz

    G = nx.DiGraph(EDGES)
    beta = {v: scale * (1 + v) for v in G}
    tol = 1e-16 * scale   # (absolute: networkx stops at an L1 change below n * tol)
    want = nx.katz_centrality(G, alpha=0.1, beta=beta, tol=tol, max_iter=10000)
    assert abs(sum(x * x for x in want.values()) - 1) < 1e-12   # (networkx scales: hypot)
    a = np.array(EDGES)
    for b in (scale, beta):
        # (asapgraph's tol is in units of beta since audit 30: 10 * tol / scale)
        res = katz(a, alpha=0.1, beta=b, tol=1e-15)
        x = dict(zip(res.ids.tolist(), res.values.tolist()))
        ref = want if b is beta else nx.katz_centrality(G, alpha=0.1, beta=scale, tol=tol,
                                                        max_iter=10000)
        assert max(abs(x[v] - ref[v]) for v in G) < 1e-9, (b, x, ref)
    got = nx.katz_centrality(G, alpha=0.1, beta=beta, tol=tol, max_iter=10000,
                             backend="asapgraph")
    assert max(abs(got[v] - want[v]) for v in G) < 1e-9, got


@pytest.mark.parametrize("model", [["rmat", "--scale", "4", "--edge-factor", "0"],
                                   ["er", "--vertices", "10", "--edges", "0"]])
def test_generate_refuses_a_text_edge_list_without_edges(tmp_path, model):
    """``generate`` wrote a text edge list of 0 edges that every command then refused ("no
    edges found"); now refused up front, nothing written.  ``.asg`` keeps the vertices:
    written, and PageRank reads it (uniform ranks)."""
    r = subprocess.run([sys.executable, "-m", "asapgraph", "generate", *model, "-o", "g.txt",
                        "-q"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and r.stderr.startswith("g.txt: no edges to write"), r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and not list(tmp_path.iterdir())
    r = subprocess.run([sys.executable, "-m", "asapgraph", "generate", *model, "-o", "g.asg",
                        "-q"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([sys.executable, "-m", "asapgraph", "pagerank", "g.asg", "--json", "-q"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["vertices"] == (16 if model[0] == "rmat" else 10)


def test_a_token_that_is_not_utf8_is_quoted_once(tmp_path):
    """A token whose bytes are not UTF-8 was quoted with its escape doubled (``got
    'caf\\\\xe9'``); now as Python shows the bytes (``'caf\\xe9'``), alike on ranks; UTF-8
    text is quoted as text."""
    (tmp_path / "a.txt").write_bytes(b"0 1\ncaf\xe9 2\n")
    (tmp_path / "b.txt").write_bytes("0 1\ncafé 2\n".encode())
    for name, shown in (("a.txt", "'caf\\xe9'"), ("b.txt", "'café'")):
        for extra in ([], ["--np", "2", "--mode", "asap"]):
            r = subprocess.run([sys.executable, "-m", "asapgraph", "pagerank", name, "-q",
                                *extra], cwd=tmp_path, capture_output=True, timeout=300)
            err = r.stderr.decode("utf-8")
            assert r.returncode == 2, err
            assert err.strip() == (f"{name}:2: expected an integer vertex id in column 1, got "
                                   f"{shown} (vertex names? pass --labels)"), (extra, err)


@pytest.mark.parametrize("head", [b"source,target", b"FromNodeId\tToNodeId", b"src dst"])
def test_labels_refuse_a_header_line(tmp_path, head):
    """With ``--labels`` a CSV's header line was read as an edge between vertices named
    'source' and 'target' (a wrong answer, exit 0); now refused at line 1, as the integer
    reader refuses it, alike on ranks.  Commented, it is skipped; single letters (``u v``)
    stay vertex names."""
    p = tmp_path / "g.csv"
    p.write_bytes(head + b"\na,b\nb,c\nc,a\n")
    for extra in ([], ["--np", "2", "--mode", "asap"]):
        r = subprocess.run([sys.executable, "-m", "asapgraph", "pagerank", "g.csv", "--labels",
                            "-q", *extra], cwd=tmp_path, capture_output=True, text=True,
                           timeout=300)
        assert r.returncode == 2, r.stderr
        assert r.stderr.startswith("g.csv:1: a header line") and "'#'" in r.stderr, r.stderr
    with pytest.raises(InputError, match="header line"):
        load_graph(p, labels=True)
    p.write_bytes(b"# " + head + b"\na,b\nb,c\nc,a\n")
    assert load_graph(p, labels=True).n == 3
    p.write_bytes(b"u v\nv w\n")
    assert load_graph(p, labels=True).n == 3

