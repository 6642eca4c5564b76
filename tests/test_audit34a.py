"""Audit 34a: a seeded fuzz of ``pagerank --personalization/--dangling`` files and of the
binary and other graph formats as input (Matrix Market, ``.npy``, ``.asg``, Parquet), one
process against ``--np 2 --mode bsp``, ``--np 3 --mode asap`` and ``--np 4``, and the
Python API (the ranks' side: tests/mpi/test_audit34a_mpi.py).

* A ``float16`` ``.npy`` edge array: ``ids >= 2.0 ** 63`` overflowed the array's dtype,
  and every rank printed ``RuntimeWarning: overflow encountered in cast`` on stderr (the
  answer was right).
* ``asapgraph.pagerank(g, personalization="seeds.txt")`` (a node-value file, as the command
  line and ``asapgraph.engine.pagerank`` take it) was read as an array of numbers: every
  file was refused as ``g.txt: personalization: values must be numbers``.  It now reads
  the file as ``--personalization`` does: the same answer, the same refusals (file, line).
* ``.asg`` header: a section's offset was only checked to lie after the header and inside
  the file.  One flipped bit of the ids section's offset (576 -> 512) mapped the
  out_weight section's doubles as the ids (unique, so accepted: every vertex renamed to
  4607182418800017408 and the like, exit 0); a low bit (576 -> 577) read them shifted.
  Sections are written 64-byte aligned, one after the other: a misaligned or overlapping
  section is now refused, ``FILE: corrupt asapgraph binary graph header (...)``.
* A truncated or otherwise unreadable Parquet file: pyarrow's ``ArrowInvalid`` ("Parquet
  magic bytes not found in footer") is a ValueError, not the OSError caught, so it was an
  internal error (exit 1) on one process and ``error on rank 0: ArrowInvalid: ...`` on K
  ranks.  Now ``FILE: cannot read Parquet: ...``, exit 2, everywhere.
* A Parquet ``uint64`` id column holding ids past int64 (kept as the vertex labels, as in
  ``from_arrow``): ``-o out.csv`` cast the labels to int64 and wrote ``-1`` for vertex
  18446744073709551615 (``--top`` and ``asapgraph.pagerank`` had it right).
"""
import subprocess
import sys

import networkx as nx
import numpy as np
import pytest

import asapgraph


def _cli(args, cwd):
    return subprocess.run([sys.executable, "-m", "asapgraph", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=120)


def _read(path):
    with open(path) as f:
        next(f)
        return {int(a): float(b) for a, b in (ln.strip().split(",") for ln in f)}


def _l1(a, b):
    return sum(abs(a.get(k, 0.0) - b.get(k, 0.0)) for k in set(a) | set(b))


def test_float16_npy_edges_load_without_a_warning(tmp_path):
    edges = [(0, 1), (1, 2), (2, 0), (2, 1), (3, 2)]
    np.save(tmp_path / "g.npy", np.array(edges, dtype=np.float16))
    r = _cli(["pagerank", "g.npy", "--tol", "1e-12", "-q", "-o", "r.csv"], tmp_path)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    want = nx.pagerank(nx.DiGraph(edges), tol=1e-15, max_iter=10000)
    assert _l1(_read(tmp_path / "r.csv"), want) < 1e-8


G = "0 1\n1 2\n2 0\n2 3\n"


@pytest.mark.parametrize("text,labels", [
    ("0 1\n3,2.5\n", False), ("\ufeff# seeds\r\n3\t1e-3\r\n\r\n1 0\r\n", False),
    ("a 1\nd 2.5\n", True)])
def test_api_reads_a_values_file_as_the_cli(tmp_path, text, labels):
    g = G.replace("0", "a").replace("1", "b").replace("2", "c").replace("3", "d") if labels else G
    (tmp_path / "g.txt").write_text(g)
    (tmp_path / "p.txt").write_text(text, encoding="utf-8")
    lab = ["--labels"] if labels else []
    for opt in ("personalization", "dangling"):
        r = _cli(["pagerank", "g.txt", *lab, f"--{opt}", "p.txt", "--tol", "1e-12", "-q",
                  "-o", "r.csv"], tmp_path)
        assert r.returncode == 0, r.stderr
        with open(tmp_path / "r.csv") as f:
            next(f)
            cli = {a: float(b) for a, b in (ln.strip().split(",") for ln in f)}
        graph = asapgraph.load_graph(str(tmp_path / "g.txt"), labels=labels)
        res = asapgraph.pagerank(graph, tol=1e-12, **{opt: str(tmp_path / "p.txt")})
        api = {str(k): float(v) for k, v in zip(res.vertices(), res.ranks)}
        assert _l1(api, cli) < 1e-12, (api, cli)


@pytest.mark.parametrize("text,line", [
    ("0 1\n9 1\n", "p.txt:2: node 9 is not a vertex of the graph"),
    ("0 0\n1 0\n", "p.txt: the values sum to 0; at least one must be positive"),
    ("0 1\n1 -1\n", "p.txt:2: value -1.0 must be finite and >= 0"),
    ("0 nan\n", "p.txt:1: value nan must be finite and >= 0"),
    ("0 1\n0 2\n", "p.txt:2: node 0 appears more than once"),
])
def test_api_refuses_a_values_file_as_the_cli(tmp_path, monkeypatch, text, line):
    (tmp_path / "g.txt").write_text(G)
    (tmp_path / "p.txt").write_text(text)
    r = _cli(["pagerank", "g.txt", "--personalization", "p.txt", "-q"], tmp_path)
    assert r.returncode == 2 and r.stderr.strip() == line, r.stderr
    monkeypatch.chdir(tmp_path)
    graph = asapgraph.load_graph("g.txt")
    for opt in ("personalization", "dangling"):
        with pytest.raises(asapgraph.InputError) as e:
            asapgraph.pagerank(graph, **{opt: "p.txt"})
        assert str(e.value) == line


def _asg(tmp_path):
    (tmp_path / "g.txt").write_text("0 1 1\n1 2 2\n2 0 0.5\n2 3 1\n5 0 3\n")
    r = _cli(["convert", "g.txt", "g.asg", "--weighted", "-q"], tmp_path)
    assert r.returncode == 0, r.stderr
    return bytearray((tmp_path / "g.asg").read_bytes())


@pytest.mark.parametrize("bit,want", [
    (0x40, "g2.asg: corrupt asapgraph binary graph header (sections ids and out_weight overlap)"),
    (0x01, "g2.asg: corrupt asapgraph binary graph header (section ids)")])
def test_asg_section_offset_flip_is_refused(tmp_path, bit, want):
    b = _asg(tmp_path)
    assert int.from_bytes(b[128:136], "little") == 576   # the ids section's offset
    b[128] ^= bit
    (tmp_path / "g2.asg").write_bytes(bytes(b))
    r = _cli(["pagerank", "g2.asg", "--weighted", "-q", "-o", "r.csv"], tmp_path)
    assert r.returncode == 2 and r.stderr.strip() == want, r.stderr
    assert not (tmp_path / "r.csv").exists()
    with pytest.raises(asapgraph.InputError) as e:
        asapgraph.load_binary(str(tmp_path / "g2.asg"))
    assert str(e.value) == want.replace("g2.asg", str(tmp_path / "g2.asg"))


def test_truncated_parquet_is_refused_in_one_line(tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    pa = pytest.importorskip("pyarrow")
    pq.write_table(pa.table({"source": [0, 1, 2], "target": [1, 2, 0]}), tmp_path / "g.parquet")
    b = (tmp_path / "g.parquet").read_bytes()
    (tmp_path / "t.parquet").write_bytes(b[:len(b) // 2])
    r = _cli(["pagerank", "t.parquet", "-q", "-o", "r.csv"], tmp_path)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, r.stderr
    assert lines[0].startswith("t.parquet: cannot read Parquet: ") and "magic bytes" in lines[0]
    assert not (tmp_path / "r.csv").exists()


def test_parquet_uint64_ids_past_int64_are_written_as_they_are(tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    pa = pytest.importorskip("pyarrow")
    big = 2**64 - 1
    pq.write_table(pa.table({"source": pa.array([big, 1, 2], type=pa.uint64()),
                             "target": pa.array([1, 2, big], type=pa.uint64())}),
                   tmp_path / "g.parquet")
    r = _cli(["pagerank", "g.parquet", "-q", "--tol", "1e-12", "-o", "r.csv"], tmp_path)
    assert r.returncode == 0, r.stderr
    got = _read(tmp_path / "r.csv")
    assert sorted(got) == [1, 2, big] and abs(sum(got.values()) - 1) < 1e-12
    assert all(abs(v - 1 / 3) < 1e-9 for v in got.values())
