"""`asapgraph bench`'s Markdown report file (asapgraph/bench/report.py): a rerun replaces
only the generated part of an existing report, atomically, and keeps the hand-written
text around it (benchmarks/REPORT.md's status table above, the dated sections below); without
matplotlib the plots are skipped with one note, the rest is written."""
import json
import os
import subprocess
import sys

import pytest

from asapgraph.bench.report import GEN_BEGIN, GEN_END, write_markdown

TITLE = "# asapgraph benchmark report: BSP vs ASAP PageRank on an emulated cluster"


def test_a_new_report_is_marked(tmp_path):
    p = write_markdown(tmp_path / "sub" / "r.md", [], command="cmd-one", elapsed=1.0)
    text = p.read_text()
    assert text.startswith(GEN_BEGIN + "\n" + TITLE + "\n")
    assert text.rstrip("\n").endswith(GEN_END) and "cmd-one" in text
    assert [q.name for q in p.parent.iterdir()] == ["r.md"]  # no temporary file left


def test_a_rerun_keeps_the_text_around_the_generated_part(tmp_path):
    p = tmp_path / "r.md"
    pre = TITLE + "\n\n## Status\n\n| a | b |\n\n"
    post = "\n\n## Session notes\n\nhand-written, kept\n"
    p.write_text(pre + GEN_BEGIN + "\nold generated text\n" + GEN_END + post)
    write_markdown(p, [], command="cmd-two", elapsed=2.0)
    text = p.read_text()
    assert text.startswith(pre + GEN_BEGIN + "\n")
    assert text.endswith(GEN_END + post)
    assert "old generated text" not in text and "cmd-two" in text
    assert text.count(TITLE) == 1  # the title above the markers is not repeated
    write_markdown(p, [], command="cmd-three", elapsed=3.0)  # and again: still one of each
    text = p.read_text()
    assert text.count(GEN_BEGIN) == text.count(GEN_END) == 1 and "cmd-two" not in text
    assert text.endswith(GEN_END + post) and text.count(TITLE) == 1


def test_a_report_without_markers_is_rewritten_whole(tmp_path):
    p = tmp_path / "r.md"
    p.write_text("an old report without markers\n")
    write_markdown(p, [], command="cmd", elapsed=1.0)
    text = p.read_text()
    assert "an old report" not in text and text.startswith(GEN_BEGIN)


# ----------------------------------------------------------------------------- no matplotlib

#: ``asapgraph ARGS`` in a fresh process where ``import matplotlib`` fails, as after a plain
#: ``pip install .`` (matplotlib is in the ``bench`` and ``test`` extras only)
NO_MATPLOTLIB = """
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "matplotlib":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, Block())
from asapgraph.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _bench_without_matplotlib(args, cwd, timeout=120):
    return subprocess.run([sys.executable, "-c", NO_MATPLOTLIB, "bench", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout, env=dict(os.environ))


def _skipped_note(stderr):
    notes = [x for x in stderr.splitlines() if "plots skipped" in x]
    assert len(notes) == 1 and 'pip install "asapgraph[bench]"' in notes[0], stderr
    assert "internal error" not in stderr and "Traceback" not in stderr, stderr


def test_bench_redraw_without_matplotlib(tmp_path):
    """``bench --from-json`` writes the Markdown and skips the plots with one note naming
    the extra (it was "internal error: ModuleNotFoundError ...", exit 1)."""
    (tmp_path / "r.json").write_text(json.dumps({"name": "quick", "records": [],
                                                 "command": "c", "elapsed_seconds": 1.0}))
    r = _bench_without_matplotlib(["--from-json", "r.json", "--outdir", "out", "--quiet"],
                                  tmp_path)
    assert r.returncode == 0, r.stderr
    _skipped_note(r.stderr)
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["quick.md"]


@pytest.mark.mpi
def test_bench_runs_without_matplotlib(tmp_path):
    """A benchmark run (one tiny grid run on 2 ranks: the path of ``bench --quick``) keeps
    its runs, JSON and Markdown without matplotlib; the plots are skipped in one note."""
    r = _bench_without_matplotlib(["--grid", "--graphs", "rmat:6", "--ranks", "2", "--modes",
                                   "bsp", "--no-peers", "--outdir", "out", "--results-dir",
                                   "res", "--json-out", "g.json"], tmp_path, timeout=240)
    assert r.returncode == 0, r.stderr
    _skipped_note(r.stderr)
    doc = json.loads((tmp_path / "g.json").read_text())
    assert doc["plots"] == [] and len(doc["records"]) == 1 and doc["records"][0]["ok"]
    assert (tmp_path / "out" / "grid.md").exists()


# ----------------------------------------------------------------------------- scripts' --help

BENCHMARKS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                          "benchmarks")


@pytest.mark.parametrize("script", ["bench_error_bound.py", "bench_faults.py"])
def test_benchmark_scripts_answer_help(tmp_path, script):
    """``--help`` prints the usage and runs nothing (bench_error_bound.py took "--help" for
    a graph file and ended in a traceback; bench_faults.py started its kill experiments)."""
    r = subprocess.run([sys.executable, os.path.join(BENCHMARKS, script), "--help"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.startswith(f"usage: {script}"), r.stderr
    assert r.stderr == "" and list(tmp_path.iterdir()) == []


def test_bench_error_bound_bad_graph_is_one_line(tmp_path):
    r = subprocess.run([sys.executable, os.path.join(BENCHMARKS, "bench_error_bound.py"),
                        str(tmp_path / "missing.txt")], cwd=tmp_path, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "missing.txt" in r.stderr, \
        r.stderr
