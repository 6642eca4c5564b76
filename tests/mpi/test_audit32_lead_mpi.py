"""Audit 32 (the lead): a program command's last progress line says whether the run
converged, on one process and on K ranks, as ``pagerank`` says it.

A run capped by ``--max-iter`` and written anyway (``--allow-unconverged``, exit 0) ended
with 'katz: 2 iterations, 0.16 s, bsp' where pagerank says 'NOT converged after 2
iterations': nothing on stderr told the user the values were not converged.
"""
import pytest


@pytest.mark.parametrize("cmd,conv", [
    (["katz", "--alpha", "0.05", "--max-iter", "2", "--allow-unconverged"], False),
    (["katz", "--alpha", "0.05"], True),
    (["sssp", "--source", "0"], True),
    (["labelprop", "--max-iter", "1", "--allow-unconverged"], False),
])
def test_program_end_line_says_converged(tmp_path, cli, cmd, conv):
    name, *rest = cmd
    for extra in ([], ["--np", "2"]):
        r = cli([name, "er:300:600", *rest, "-o", "out.csv", *extra], tmp_path, timeout=240)
        assert r.returncode == 0, r.stderr
        last = r.stderr.strip().splitlines()[-1]
        assert "converged after" in last and ("NOT converged" in last) == (not conv), (extra, last)
        assert (tmp_path / "out.csv").stat().st_size > 0
