"""Audit 17b: the program commands and their output files, alike on 1..K ranks and both
modes (regressions of defects found by a user-level audit)."""
import os
import subprocess
import sys

import pytest

pytestmark = [pytest.mark.mpi, pytest.mark.timeout(600)]

CONFIGS = [[], ["--np", "2"], ["--np", "3", "--mode", "asap"]]


def _cli(args, cwd, timeout=180):
    return subprocess.run([sys.executable, "-m", "asapgraph", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout)


def _refused_alike(tmp_path, args, *words, configs=CONFIGS):
    seen = set()
    for extra in configs:
        r = _cli([*args, "-q", *extra], tmp_path)
        lines = r.stderr.strip().splitlines()
        assert r.returncode == 2 and len(lines) == 1, (extra, r.returncode, r.stderr[-2000:])
        assert all(w in lines[0] for w in words), (extra, lines)
        seen.add(lines[0])
    assert len(seen) == 1, seen
    return seen.pop()


@pytest.mark.parametrize("out", ["e.csv", "./e.csv", "link.csv"])
def test_output_equal_to_input_refused(tmp_path, out):
    """-o naming the input graph (or a link to it) replaced the edge list by the results
    (exit 0); now refused before any work, the input untouched."""
    text = "1,2\n2,3\n"
    (tmp_path / "e.csv").write_text(text)
    os.symlink("e.csv", tmp_path / "link.csv")
    _refused_alike(tmp_path, ["wcc", "e.csv", "-o", out], "is the input graph",
                   configs=CONFIGS)
    assert (tmp_path / "e.csv").read_text() == text


def test_output_equal_to_personalization_refused(tmp_path):
    (tmp_path / "g.txt").write_text("1 2\n2 3\n3 1\n")
    (tmp_path / "p.csv").write_text("1,1\n")
    _refused_alike(tmp_path, ["pagerank", "g.txt", "--personalization", "p.csv",
                              "-o", "p.csv"], "--personalization file", configs=CONFIGS[:2])
    assert (tmp_path / "p.csv").read_text() == "1,1\n"
