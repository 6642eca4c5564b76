"""Audit 28: the leftovers of the twenty-seventh session's black-box audit.

* Hex-float weights (``0x10``, ``0x1p4``) were read as numbers (C's ``strtod`` takes them:
  ``0 1 0x10`` was an edge of weight 16) where networkx, numpy and Python's ``float``
  refuse them; a shifted hex id column then passed as weights.  Now refused like any
  other token that is not a decimal number, in one line naming the file and the line,
  alike with and without ``--labels``, on one process and on ranks, and in
  personalization files.
* ``info`` of a binary graph saved with weights said ``weighted: no`` unless run with
  ``--weighted``, as if the file held none; it now says that the file stores them (and
  ``stored_weights`` in ``--json``).
"""
import json
import subprocess
import sys

import pytest

from asapgraph import load_graph
from asapgraph.errors import InputError


def _cli(args, cwd, timeout=300):
    return subprocess.run([sys.executable, "-m", "asapgraph", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("tok", ["0x10", "0X10", "-0x1p4", "0x.8"])
def test_hex_weight_refused(tmp_path, tok):
    p = tmp_path / "w.txt"
    p.write_text(f"0 1 2.5\n1 2 {tok}\n2 0 1\n")
    want = f"{p}:2: expected a number for the weight in column 3, got '{tok}'"
    for labels in (False, True):
        with pytest.raises(InputError) as ei:
            load_graph(p, weighted=True, labels=labels)
        assert str(ei.value) == want
    # unweighted, the column is not read
    assert load_graph(p).m == 3


def test_hex_weight_refused_alike_on_ranks(tmp_path):
    (tmp_path / "w.txt").write_text("0 1 2.5\n1 2 0x10\n2 0 1\n")
    lines = set()
    for extra in ([], ["--np", "2"], ["--np", "2", "--mode", "asap"], ["--labels"]):
        r = _cli(["pagerank", "w.txt", "--weighted", "-q", "-o", "out.csv", *extra], tmp_path)
        assert r.returncode == 2, (extra, r.stderr[-2000:])
        got = r.stderr.strip().splitlines()
        assert len(got) == 1 and "w.txt:2:" in got[0] and "'0x10'" in got[0], (extra, got)
        assert not (tmp_path / "out.csv").exists()
        lines.add(got[0])
    assert len(lines) == 1, lines


def test_decimal_weights_still_read(tmp_path):
    p = tmp_path / "w.txt"
    p.write_text("0 1 1e1\n1 2 +.5\n2 0 16.\n")
    for labels in (False, True):
        g = load_graph(p, weighted=True, labels=labels)
        assert sorted(g.weights.tolist()) == [0.5, 10.0, 16.0]


def test_info_says_a_binary_graph_stores_weights(tmp_path):
    (tmp_path / "w.txt").write_text("0 1 2.5\n1 2 1.5\n2 0 3\n")
    r = _cli(["convert", "w.txt", "w.asg", "--weighted", "-q"], tmp_path)
    assert r.returncode == 0, r.stderr
    r = _cli(["convert", "w.txt", "u.asg", "-q"], tmp_path)
    assert r.returncode == 0, r.stderr
    rows = {}
    for name, extra in (("w.asg", []), ("w.asg", ["--weighted"]), ("u.asg", []),
                        ("w.txt", [])):
        r = _cli(["info", name, "-q", *extra], tmp_path)
        assert r.returncode == 0, r.stderr
        line = next(ln for ln in r.stdout.splitlines() if ln.startswith("weighted:"))
        js = json.loads(_cli(["info", name, "-q", "--json", *extra], tmp_path).stdout)
        rows[(name, bool(extra))] = (line.split(":", 1)[1].strip(), js["weighted"],
                                     js["stored_weights"])
    assert rows[("w.asg", False)] == (
        "no (the file stores weights: --weighted reads them)", False, True)
    assert rows[("w.asg", True)] == ("yes", True, True)
    assert rows[("u.asg", False)] == ("no", False, False)
    assert rows[("w.txt", False)] == ("no", False, False)
