"""``--top`` lists the same vertices in the same order on one process and on K ranks in
both modes, also where the scores are equal in exact arithmetic and differ in their last
bits between runs (:func:`asapgraph.graph.io.tables.top_order`)."""
import pytest

pytestmark = [pytest.mark.mpi, pytest.mark.timeout(600)]

CONFIGS = [[], ["--np", "2"], ["--np", "3", "--mode", "asap"], ["--np", "4", "--mode", "asap"]]


@pytest.mark.parametrize("edges", ["0 1\n1 2\n2 0\n", "0 1\n1 0\n2 3\n3 2\n4 5\n5 4\n0 5\n"])
def test_top_table_alike(tmp_path, cli, edges):
    (tmp_path / "g.txt").write_text(edges)
    seen = set()
    for extra in CONFIGS:
        r = cli(["pagerank", "g.txt", "--top", "4", "--tol", "1e-12", *extra], tmp_path,
                timeout=240)
        assert r.returncode == 0, (extra, r.stderr[-2000:])
        seen.add(r.stdout)
    assert len(seen) == 1, seen
