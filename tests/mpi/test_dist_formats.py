"""Distributed runs read binary .asg graphs and .npy edge arrays by slices, and refuse
inputs they cannot split (Matrix Market, stdin) with one line and exit 2 instead of a
wrong answer; a binary graph with isolated vertices keeps them on ranks."""
import os
import subprocess
import sys

import numpy as np
import pytest

pytestmark = pytest.mark.mpi


def _cli(args, cwd, timeout=180):
    return subprocess.run([sys.executable, "-m", "asapgraph", *args], cwd=cwd, env=dict(os.environ),
                          capture_output=True, text=True, timeout=timeout)


def _ranks(path):
    a = np.loadtxt(path, delimiter=",", skiprows=1)
    return a[:, 0], a[:, 1]


def _random_weighted_edges(rng, n=300, m=2500):
    ids = rng.choice(10**9, size=n, replace=False)          # sparse original ids
    src = ids[rng.integers(0, n, m)]
    dst = ids[rng.integers(0, n, m)]
    src[:20] = dst[:20]                                        # self-loops
    src[20:40], dst[20:40] = src[40:60], dst[40:60]            # duplicates
    w = rng.uniform(0.1, 5.0, m)
    return src, dst, w


def test_binary_and_npy_slices_equal_single_process(tmp_path, rng):
    src, dst, w = _random_weighted_edges(rng)
    txt = tmp_path / "g.txt"
    np.savetxt(txt, np.column_stack([src, dst, w]), fmt=["%d", "%d", "%.17g"], delimiter="\t")
    np.save(tmp_path / "g.npy", np.column_stack([src, dst, w]))
    assert _cli(["convert", str(txt), str(tmp_path / "g.asg"), "--weighted", "-q"], tmp_path).returncode == 0
    ref = tmp_path / "ref.csv"
    r = _cli(["pagerank", str(txt), "--weighted", "--tol", "1e-12", "-q", "-o", str(ref)], tmp_path)
    assert r.returncode == 0, r.stderr
    ids0, pr0 = _ranks(ref)
    for inp, k, mode in [("g.asg", 3, "bsp"), ("g.asg", 2, "asap"), ("g.npy", 3, "asap"),
                         ("g.npy", 2, "bsp")]:
        out = tmp_path / f"{inp}_{k}_{mode}.csv"
        r = _cli(["pagerank", str(tmp_path / inp), "--weighted", "--np", str(k), "--mode", mode,
                  "--tol", "1e-12", "-q", "-o", str(out)], tmp_path)
        assert r.returncode == 0, (inp, k, mode, r.stderr[-2000:])
        ids, pr = _ranks(out)
        assert np.array_equal(ids, ids0), (inp, k, mode)
        assert np.abs(pr - pr0).sum() <= 1e-8, (inp, k, mode, np.abs(pr - pr0).sum())


def test_unsplittable_inputs_are_refused(tmp_path):
    """Standard input was refused on ranks ("cannot be split"); rank 0 reads it and deals
    its lines now (feature 34c: tests/mpi/test_stdin34_mpi.py).  A Matrix Market file was
    refused too; rank 0 reads and scatters it now: its isolated vertex 4 keeps its place,
    as on one process."""
    mtx = tmp_path / "g.mtx"
    mtx.write_text("%%MatrixMarket matrix coordinate pattern general\n4 4 3\n1 2\n2 3\n3 1\n")
    r = _cli(["pagerank", str(mtx), "--np", "2", "-q", "--top", "4"], tmp_path)
    assert r.returncode == 0 and not r.stderr, r.stderr
    assert [ln.split()[1] for ln in r.stdout.splitlines()[1:]] == ["1", "2", "3", "4"], r.stdout
    r = subprocess.run([sys.executable, "-m", "asapgraph", "pagerank", "-", "--np", "2", "-q"],
                       cwd=tmp_path, input="1 2\n2 3\n", capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and not r.stderr, r.stderr


def test_compression_by_content_not_name(tmp_path, rng):
    """Ranks decide compression as one process does, by the magic bytes: a gzip file
    named .txt and a plain file named .gz give one process's answer; a truncated gzip
    file is refused with one process's line."""
    import gzip

    src, dst, _ = _random_weighted_edges(rng)
    text = "".join(f"{a} {b}\n" for a, b in zip(src, dst)).encode()
    (tmp_path / "gz_named.txt").write_bytes(gzip.compress(text))
    (tmp_path / "plain_named.gz").write_bytes(text)
    (tmp_path / "trunc.gz").write_bytes(gzip.compress(text)[:3000])
    ref = tmp_path / "ref.csv"
    (tmp_path / "g.txt").write_bytes(text)
    r = _cli(["pagerank", str(tmp_path / "g.txt"), "--tol", "1e-12", "-q", "-o", str(ref)],
             tmp_path)
    assert r.returncode == 0, r.stderr
    ids0, pr0 = _ranks(ref)
    for inp in ("gz_named.txt", "plain_named.gz"):
        for extra in ([], ["--np", "2"], ["--np", "3", "--mode", "asap"]):
            out = tmp_path / f"{inp}_{len(extra)}.csv"
            r = _cli(["pagerank", str(tmp_path / inp), "--tol", "1e-12", "-q", "-o", str(out),
                      *extra], tmp_path)
            assert r.returncode == 0, (inp, extra, r.stderr[-2000:])
            ids, pr = _ranks(out)
            assert np.array_equal(ids, ids0), (inp, extra)
            assert np.abs(pr - pr0).sum() <= 1e-8, (inp, extra)
    lines = set()
    for extra in ([], ["--np", "2"]):
        r = _cli(["pagerank", str(tmp_path / "trunc.gz"), "-q", *extra], tmp_path)
        assert r.returncode == 2 and "Traceback" not in r.stderr, (extra, r.stderr)
        lines.add(r.stderr.strip().splitlines()[-1])
    assert lines == {f"{tmp_path / 'trunc.gz'}: corrupt or truncated gzip data"}, lines


@pytest.mark.parametrize("k,mode", [(2, "bsp"), (3, "asap"), (4, "bsp")])
def test_binary_graph_with_isolated_vertices_on_ranks(tmp_path, k, mode):
    """A Matrix Market file's isolated vertices (3 and 7 here) count in n and get their
    teleport share; the .asg made from it answers on K ranks as the .mtx on one process
    (it was refused: the distributed loader knew vertices only through their edges)."""
    mtx = tmp_path / "g.mtx"
    mtx.write_text("%%MatrixMarket matrix coordinate pattern general\n8 8 9\n1 2\n2 4\n"
                   "4 1\n5 6\n6 5\n1 5\n8 1\n2 8\n4 4\n")
    asg = tmp_path / "g.asg"
    assert _cli(["convert", str(mtx), str(asg), "-q"], tmp_path).returncode == 0
    nx = pytest.importorskip("networkx")
    G = nx.DiGraph()
    G.add_nodes_from(range(1, 9))
    G.add_edges_from([(1, 2), (2, 4), (4, 1), (5, 6), (6, 5), (1, 5), (8, 1), (2, 8), (4, 4)])
    ref = nx.pagerank(G, tol=1e-14, max_iter=10000)
    out = tmp_path / "r.csv"
    r = _cli(["pagerank", str(asg), "--np", str(k), "--mode", mode, "--tol", "1e-12", "-q",
              "-o", str(out)], tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    ids, pr = _ranks(out)
    assert ids.tolist() == list(range(1, 9))
    assert np.abs(pr - np.array([ref[v] for v in range(1, 9)])).sum() <= 1e-9
    out = tmp_path / "c.csv"
    r = _cli(["wcc", str(asg), "--np", str(k), "--mode", mode, "-q", "-o", str(out)], tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    comp = np.loadtxt(out, delimiter=",", skiprows=1)
    assert comp[:, 0].tolist() == list(range(1, 9))
    assert comp[:, 1].tolist() == [1, 1, 3, 1, 1, 1, 7, 1]
