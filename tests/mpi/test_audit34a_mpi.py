"""Audit 34a's fixes on K ranks (one process and the details: tests/test_audit34a.py):
a float16 ``.npy`` edge array loads without a warning, an ``.asg`` whose section offsets
overlap and a truncated Parquet file are refused with one process's line and exit 2, and
a Parquet uint64 id past int64 is written as it is, on ``--np 2 --mode bsp``, ``--np 3
--mode asap`` and ``--np 4``.

A Parquet file whose ids are names (a text id column, or uint64 ids past int64: one
process keeps them as the vertex labels): ``--personalization``/``--dangling`` files name
those vertices on one process, and K ranks read them as integer ids (``ps.txt:1: node id
'a' is not an integer (... needs --labels)``, ``node id 18446744073709551615 does not fit
in int64``): refused on K ranks, accepted on one.  Now read by name on K ranks too."""
import numpy as np
import pytest

pytestmark = pytest.mark.mpi

CONFIGS = [["--np", "2", "--mode", "bsp"], ["--np", "3", "--mode", "asap"], ["--np", "4"]]


def _refused_alike(cli, tmp_path, args, want):
    (tmp_path / "r.csv").unlink(missing_ok=True)
    for cfg in CONFIGS:
        r = cli(["pagerank", *args, "-q", "-o", "r.csv", *cfg], tmp_path, timeout=240)
        assert r.returncode == 2 and r.stderr.strip() == want, (cfg, r.returncode, r.stderr)
        assert not (tmp_path / "r.csv").exists()


def test_float16_npy_on_ranks(cli, scores, tmp_path):
    edges = [(0, 1), (1, 2), (2, 0), (2, 1), (3, 2)]
    np.save(tmp_path / "g.npy", np.array(edges, dtype=np.float16))
    got = []
    for cfg in [[]] + CONFIGS:
        r = cli(["pagerank", "g.npy", "--tol", "1e-12", "-q", "-o", "r.csv", *cfg], tmp_path,
                timeout=240)
        assert r.returncode == 0 and r.stderr == "", (cfg, r.stderr)
        got.append(scores(tmp_path / "r.csv"))
    for g in got[1:]:
        assert g.keys() == got[0].keys()
        assert sum(abs(g[k] - got[0][k]) for k in g) < 1e-8


def test_asg_overlapping_sections_on_ranks(cli, tmp_path):
    (tmp_path / "g.txt").write_text("0 1 1\n1 2 2\n2 0 0.5\n2 3 1\n5 0 3\n")
    assert cli(["convert", "g.txt", "g.asg", "--weighted", "-q"], tmp_path).returncode == 0
    b = bytearray((tmp_path / "g.asg").read_bytes())
    b[128] ^= 0x40   # the ids section's offset 576 -> 512, out_weight's
    (tmp_path / "g2.asg").write_bytes(bytes(b))
    _refused_alike(cli, tmp_path, ["g2.asg", "--weighted"], "g2.asg: corrupt asapgraph binary "
                   "graph header (sections ids and out_weight overlap)")


def test_truncated_parquet_on_ranks(cli, tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    pa = pytest.importorskip("pyarrow")
    pq.write_table(pa.table({"source": [0, 1, 2], "target": [1, 2, 0]}), tmp_path / "g.parquet")
    (tmp_path / "t.parquet").write_bytes((tmp_path / "g.parquet").read_bytes()[:100])
    one = cli(["pagerank", "t.parquet", "-q"], tmp_path)
    assert one.returncode == 2 and one.stderr.startswith("t.parquet: cannot read Parquet: ")
    _refused_alike(cli, tmp_path, ["t.parquet"], one.stderr.strip())


def test_parquet_uint64_ids_on_ranks(cli, scores, tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    pa = pytest.importorskip("pyarrow")
    big = 2**64 - 1
    pq.write_table(pa.table({"source": pa.array([big, 1, 2], type=pa.uint64()),
                             "target": pa.array([1, 2, big], type=pa.uint64())}),
                   tmp_path / "g.parquet")
    for cfg in CONFIGS:
        r = cli(["pagerank", "g.parquet", "--tol", "1e-12", "-q", "-o", "r.csv", *cfg],
                tmp_path, timeout=240)
        assert r.returncode == 0, (cfg, r.stderr)
        got = scores(tmp_path / "r.csv")
        assert sorted(got) == sorted(["1", "2", str(big)]), (cfg, got)
        assert all(abs(v - 1 / 3) < 1e-9 for v in got.values()), (cfg, got)


@pytest.mark.parametrize("ids,text", [
    (["a", "b", "c", "c"], "a 1\nd 2\n"),
    ([2**64 - 1, 1, 2, 2], "18446744073709551615 1\n3 2\n")])
def test_parquet_named_vertices_personalization_on_ranks(cli, scores, tmp_path, ids, text):
    pq = pytest.importorskip("pyarrow.parquet")
    pa = pytest.importorskip("pyarrow")
    dst = ids[1:3] + ids[:1] + (["d"] if isinstance(ids[0], str) else [3])
    typ = pa.string() if isinstance(ids[0], str) else pa.uint64()
    pq.write_table(pa.table({"source": pa.array(ids, type=typ), "target": pa.array(dst, type=typ)}),
                   tmp_path / "g.parquet")
    (tmp_path / "p.txt").write_text(text)
    (tmp_path / "z.txt").write_text("zz 1\n")
    for opt in ("--personalization", "--dangling"):
        got = []
        for cfg in [[]] + CONFIGS:
            r = cli(["pagerank", "g.parquet", opt, "p.txt", "--tol", "1e-12", "-q", "-o",
                     "r.csv", *cfg], tmp_path, timeout=240)
            assert r.returncode == 0, (opt, cfg, r.stderr)
            got.append(scores(tmp_path / "r.csv"))
        for g in got[1:]:
            assert g.keys() == got[0].keys()
            assert sum(abs(g[k] - got[0][k]) for k in g) < 1e-9, (opt, got)
    _refused_alike(cli, tmp_path, ["g.parquet", "--personalization", "z.txt"],
                   "z.txt:1: node 'zz' is not a vertex of the graph")
