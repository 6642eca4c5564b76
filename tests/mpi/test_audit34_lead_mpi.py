"""Thirty-fourth session (lead), on K ranks: a KONECT first line (``% sym`` without
--undirected, ``% bip``) on standard input with ``--labels`` (rank 0 reads it) and through
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


@pytest.mark.parametrize("np_, mode", [(2, "bsp"), (3, "asap")])
def test_labels_stdin_konect_sym(tmp_path, np_, mode):
    r = _cli(["pagerank", "-", "--labels", "--np", np_, "--mode", mode, "--quiet"], tmp_path,
             SYM)
    assert r.returncode == 2
    assert r.stderr.decode().strip().splitlines() == [f"<stdin>:1: {WHY}"]
    one = _cli(["pagerank", "-", "--labels", "--undirected", "--tol", "1e-12", "-o",
                tmp_path / "one.csv"], tmp_path, SYM)
    many = _cli(["pagerank", "-", "--labels", "--undirected", "--tol", "1e-12", "--np", np_,
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
