"""`asapgraph bench`'s Markdown report file (asapgraph/bench/report.py): a rerun replaces
only the generated part of an existing report, atomically, and keeps the hand-written
text around it (benchmarks/REPORT.md's status table above, the dated sections below)."""
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
