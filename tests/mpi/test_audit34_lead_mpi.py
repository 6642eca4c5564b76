"""Thirty-fourth session (lead), on K ranks: a KONECT first line (``% sym`` without
--undirected, ``% bip``) on standard input (rank 0 reads it) and through
the distributed Python API (which reaches the ranks without the command line's check) is
refused as one process refuses it; ``--source`` text that is not plain digits likewise."""
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.mpi

SYM = b"% sym unweighted\n1 2\n2 3\n3 1\n3 4\n"
WHY = ("a KONECT undirected network ('% sym unweighted': every edge is listed once): pass "
       "--undirected (Python: undirected=True), or remove that line to read the edges as "
       "directed")


def _cli(args, cwd, data=None):
    return subprocess.run([sys.executable, "-m", "asapgraph", *map(str, args)], cwd=cwd,
                          input=data, capture_output=True, timeout=240)


@pytest.mark.parametrize("labels", [["--labels"], []])
@pytest.mark.parametrize("np_, mode", [(2, "bsp"), (3, "asap")])
def test_stdin_konect_sym(tmp_path, np_, mode, labels):
    """Rank 0 reads stdin (names with --labels, else dealt to the ranks as lines)."""
    r = _cli(["pagerank", "-", *labels, "--np", np_, "--mode", mode, "--quiet"], tmp_path,
             SYM)
    assert r.returncode == 2
    assert r.stderr.decode().strip().splitlines() == [f"<stdin>:1: {WHY}"]
    one = _cli(["pagerank", "-", *labels, "--undirected", "--tol", "1e-12", "-o",
                tmp_path / "one.csv"], tmp_path, SYM)
    many = _cli(["pagerank", "-", *labels, "--undirected", "--tol", "1e-12", "--np", np_,
                 "--mode", mode, "-o", tmp_path / "many.csv"], tmp_path, SYM)
    assert one.returncode == many.returncode == 0, (one.stderr, many.stderr)
    import numpy as np

    a = np.loadtxt(tmp_path / "one.csv", delimiter=",", skiprows=1, usecols=1)
    b = np.loadtxt(tmp_path / "many.csv", delimiter=",", skiprows=1, usecols=1)
    assert len(a) == 4 and np.abs(a - b).sum() < 1e-9


def test_python_distributed_api_refuses_konect_file(tmp_path):
    from asapgraph.comm.launch import find_mpiexec

    (tmp_path / "k.txt").write_bytes(SYM)
    (tmp_path / "b.txt").write_bytes(b"% bip\n1 2\n")
    script = tmp_path / "d.py"
    script.write_text(textwrap.dedent("""
        import sys
        from mpi4py import MPI
        import asapgraph.engine as eng
        from asapgraph.comm.mpi import RankFailure
        try:
            r = eng.pagerank(sys.argv[1], comm=MPI.COMM_WORLD, undirected=sys.argv[2] == "u")
            out = "ok %d" % len(r.ranks) if MPI.COMM_WORLD.rank == 0 else None
        except RankFailure as e:
            out = "refused %s %s" % (e.input_error, e.message)
        if out is not None:   # (a file per rank: the ranks' stdout lines can interleave)
            with open("out%d.txt" % MPI.COMM_WORLD.rank, "w") as f:
                f.write("%d %s" % (MPI.COMM_WORLD.rank, out))
    """))

    def run(path, u):
        for f in tmp_path.glob("out*.txt"):
            f.unlink()
        r = subprocess.run([find_mpiexec(), "-n", "2", sys.executable, str(script), path, u],
                           cwd=tmp_path, capture_output=True, text=True, timeout=240)
        assert r.returncode == 0, r.stderr
        return sorted(f.read_text() for f in tmp_path.glob("out*.txt"))

    assert run("k.txt", "d") == [f"{i} refused True k.txt:1: {WHY}" for i in (0, 1)]
    assert run("k.txt", "u") == ["0 ok 4"]
    bip = run("b.txt", "u")
    assert len(bip) == 2 and all("b.txt:1: a KONECT bipartite network" in x for x in bip)


def test_source_sign_refused_on_ranks(tmp_path):
    (tmp_path / "g.txt").write_text("1 2\n2 3\n")
    r = _cli(["bfs", "g.txt", "--source", "+1", "--np", "2"], tmp_path)
    assert r.returncode == 2
    assert r.stderr.decode().strip() == ("asapgraph bfs: --source: vertex id '+1' has a sign "
                                         "(ids are plain digits)")


# --- Waiting time on the virtual clock ------------------------------------------------------
# ``wait_seconds`` is measured on the host's clock; on the virtual clock it was reported (and
# `asapgraph bench` tabulated it, "BSP wait s" / "ASAP wait s") beside virtual times to an
# error level: ASAP's was 0.0.  ``virtual_wait_seconds``: per rank its clock at the end less
# its compute, summed over the ranks.

@pytest.mark.parametrize("mode", ["bsp", "asap"])
def test_virtual_wait_seconds_in_json(tmp_path, mode):
    import json

    args = ["pagerank", "rmat:10", "--np", "2", "--mode", mode, "--latency", "1e-3",
            "--straggler", "1:3", "--json", "--quiet"]
    r = _cli(args + ["--clock", "virtual", "--compute", "model"], tmp_path)
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    want = sum(p["virtual_seconds"] - p["virtual_compute_seconds"] for p in d["per_rank"])
    assert d["virtual_wait_seconds"] == pytest.approx(want, rel=1e-12)
    # rank 0 waits for the 3x slower rank 1; no rank waits longer than the run
    assert 0 < d["virtual_wait_seconds"] < 2 * d["virtual_seconds"]
    r = _cli(args, tmp_path)
    assert r.returncode == 0, r.stderr
    assert "virtual_wait_seconds" not in json.loads(r.stdout)


def test_bench_tabulates_virtual_wait_on_the_virtual_clock(tmp_path):
    import json

    r = _cli(["bench", "--grid", "--graphs", "rmat:10", "--ranks", "2", "--clock", "virtual",
              "--compute", "model", "--latency", "1e-3", "--straggler", "1:3", "--tol",
              "1e-6", "--results-dir", tmp_path / "res", "--outdir", tmp_path / "out",
              "--no-peers", "--quiet"], tmp_path)
    assert r.returncode == 0, r.stderr
    recs = json.loads((tmp_path / "res" / "grid.json").read_text())["records"]
    assert sorted(x["mode"] for x in recs) == ["asap", "bsp"]
    for x in recs:
        assert x["clock"] == "virtual"
        assert x["virtual_wait_seconds"] == pytest.approx(
            sum(p["virtual_seconds"] - p["virtual_compute_seconds"] for p in x["per_rank"]))
        x["group"] = "rq1"
    from asapgraph.bench.report import headline_rows

    (row,) = headline_rows(recs)
    by = {x["mode"]: x["virtual_wait_seconds"] for x in recs}
    assert (row["bsp_wait"], row["asap_wait"]) == (by["bsp"], by["asap"])


@pytest.mark.parametrize("np_, mode", [(2, "bsp"), (3, "asap")])
def test_labels_with_parquet_refused_on_ranks(tmp_path, np_, mode):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    pd.DataFrame({"s": ["a", "b"], "t": ["b", "c"]}).to_parquet(tmp_path / "g.parquet")
    r = _cli(["pagerank", "g.parquet", "--labels", "--np", np_, "--mode", mode, "--quiet"],
             tmp_path)
    assert r.returncode == 2
    assert r.stderr.decode().strip().splitlines() == [
        "g.parquet: --labels applies to text edge lists, and this is a Parquet table (its "
        "column types say whether vertices are named: strings are names already): drop "
        "--labels"]
