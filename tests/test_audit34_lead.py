"""Thirty-fourth session (lead): ``--source`` and the Python ``source=`` read a vertex id
as an edge list's id column does -- plain ASCII digits.  ``int()`` took ``+1`` (a file
refuses the sign), ``1_0`` as vertex 10 ("source vertex 10 is not in the graph") and other
scripts' digits ('١' as vertex 1)."""
import subprocess
import sys

import pytest

import asapgraph as ag
from asapgraph.errors import InputError
from asapgraph.programs import bfs, sssp


def _cli(args, cwd):
    return subprocess.run([sys.executable, "-m", "asapgraph", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120)


@pytest.fixture
def path(tmp_path):
    p = tmp_path / "g.txt"
    p.write_text("1 2\n2 3\n")
    return p


@pytest.mark.parametrize("command", ["bfs", "sssp"])
@pytest.mark.parametrize("given,why", [
    ("+1", "--source: vertex id '+1' has a sign (ids are plain digits)"),
    ("-1", "--source: vertex id '-1' has a sign (ids are plain digits)"),
    ("1_0", "--source: expected an integer vertex id, got '1_0'"),
    ("\u0661", "--source: expected an integer vertex id, got '\u0661'"),
    ("", "--source: expected an integer vertex id, got ''"),
])
def test_source_text_not_plain_digits_refused(tmp_path, path, command, given, why):
    out = tmp_path / "out.csv"
    r = _cli([command, str(path), "--source", given, "-o", str(out)], tmp_path)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert lines == [f"asapgraph {command}: {why}" + (
        " (vertices named by text need --labels)" if "expected" in why else "")]
    assert not out.exists()


@pytest.mark.parametrize("given", ["1", "01", " 1"])
def test_plain_digits_still_read(tmp_path, path, given):
    r = _cli(["bfs", str(path), "--source", given, "--json"], tmp_path)
    assert r.returncode == 0, r.stderr
    import json

    assert json.loads(r.stdout)["source"] == 1


def test_labels_source_is_a_name(tmp_path):
    p = tmp_path / "l.txt"
    p.write_text("+1 b\nb c\n")
    r = _cli(["bfs", str(p), "--labels", "--source", "+1", "--json"], tmp_path)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("fn", [bfs, sssp])
def test_python_source_strings(path, fn):
    g = ag.load_graph(str(path))
    assert list(fn(g, "2").values[1:]) == [0, 1]
    assert list(fn(g, 2).values[1:]) == [0, 1]
    for bad, msg in [("+1", "source vertex id '+1' has a sign (ids are plain digits)"),
                     ("1_0", "source vertex id must be an integer, got '1_0'"),
                     ("\u0661", "source vertex id must be an integer, got '\u0661'")]:
        with pytest.raises(InputError) as e:
            fn(g, bad)
        assert str(e.value) == f"{path}: {msg}"
