"""``--np K`` under the user's own ``mpiexec -n W`` with ``K != W``: the command ran on the
launcher's W ranks and ``--np`` changed nothing (exit 0, an option ignored).  It is refused
now, once, exit status 2, before any work; ``--np W`` (the same count) still runs."""
import sys

import pytest


@pytest.mark.parametrize("world, np_, command", [
    (2, 3, ["pagerank", "rmat:8"]),
    (2, 1, ["wcc", "rmat:8"]),
    (1, 2, ["pagerank", "rmat:8", "--mode", "asap"]),
])
def test_np_other_than_the_launchers_is_refused(mpirun, world, np_, command):
    r = mpirun(world, [sys.executable, "-m", "asapgraph", *command, "--np", str(np_), "-q",
                       "--top", "1"], timeout=240)
    assert r.returncode == 2, (r.returncode, r.stdout[-500:], r.stderr[-2000:])
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert lines == [f"asapgraph: --np {np_} but this command runs on {world} MPI rank(s) "
                     f"(under your mpiexec): drop --np, or give --np {world}"], r.stderr
    assert r.stdout == ""


def test_np_equal_to_the_launchers_runs(mpirun):
    r = mpirun(2, [sys.executable, "-m", "asapgraph", "pagerank", "rmat:8", "--np", "2",
                   "-q", "--top", "1"], timeout=240)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.splitlines()[0].split() == ["rank", "node", "score"]
