"""Audit 33c: ``asapgraph bench`` for people who rerun and trust a BSP-vs-ASAP grid.

Regressions: the grid's runs were in the JSON only (its Markdown showed none of them and
said ASAP had won every comparison); duplicates in a list option were dropped without a
word; the JSON / Markdown / reference were written through fixed ``NAME.tmp`` files.
"""
import json
import re
import subprocess
import sys

import pytest

VIRT = ["--clock", "virtual", "--compute", "model", "--latency", "1e-3"]


def _bench(args, cwd, timeout=240):
    return subprocess.run([sys.executable, "-m", "asapgraph", "bench", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def grid_run(tmp_path_factory):
    """One small grid (rmat:6, 2 and 3 ranks, BSP and ASAP, two repetitions)."""
    d = tmp_path_factory.mktemp("grid")
    r = _bench(["--grid", "--graphs", "rmat:6", "--ranks", "2,3", "--repeat", "2", "--seed",
                "3", *VIRT, "--json-out", "out/g.json", "--markdown", "out/g.md",
                "--results-dir", "res", "--outdir", "od"], d)
    assert r.returncode == 0, r.stderr[-2000:]
    return d, r


def _grid_table(md):
    """{(graph, K, variant): cells} of the Markdown's 'Grid runs' table."""
    part = md.split("## Grid runs", 1)[1].split("\n## ", 1)[0]
    lines = [ln for ln in part.splitlines() if ln.startswith("| ")]
    head = [c.strip() for c in lines[0].strip("|").split("|")]
    out = {}
    for ln in lines[1:]:
        cells = dict(zip(head, (c.strip() for c in ln.strip("|").split("|"))))
        out[(cells["graph"], int(cells["K"]), cells["variant"])] = cells
    return out


def test_grid_markdown_shows_the_runs_and_their_ratios(grid_run):
    """The Markdown of a grid run had no figure of it ('No RQ1 runs' everywhere) and
    'ASAP was at least as fast and sent no more bytes in every measured comparison' with
    ASAP slower; now a table whose speed-ups and bytes ratios are the recorded ones."""
    d, r = grid_run
    md = (d / "out" / "g.md").read_text()
    doc = json.loads((d / "out" / "g.json").read_text())
    table = _grid_table(md)
    recs = doc["records"]
    assert len(recs) == 8 and {x["repeat"] for x in recs} == {0, 1}
    import statistics

    for K in (2, 3):
        b = [x for x in recs if x["ranks"] == K and x["mode"] == "bsp"]
        a = [x for x in recs if x["ranks"] == K and x["mode"] == "asap"]
        bt = statistics.median(x["time_to_error"]["1e-06"] for x in b)
        at = statistics.median(x["time_to_error"]["1e-06"] for x in a)
        bb = statistics.median(x["bytes_to_error"]["1e-06"] for x in b)
        ab = statistics.median(x["bytes_to_error"]["1e-06"] for x in a)
        row = next(v for k, v in table.items() if k[1] == K and k[2].startswith("ASAP"))
        assert row["L1 level"] == "1e-06" and row["runs"] == "2"
        assert row["speed-up"] == f"{bt / at:.2f}", (row, bt, at)
        assert row["bytes BSP/row"] == f"{bb / ab:.2f}"
        assert row["s to level"] == f"{at:.3g}"
        brow = table[("rmat:6", K, "BSP")]
        assert brow["s to level"] == f"{bt:.3g}" and brow["bytes to level"] == f"{bb:.0f}"
        assert row["err <= tol"] == brow["err <= tol"] == "yes"
        if bt < at:   # a loss is listed, not denied
            assert "ASAP was at least as fast" not in md
            assert re.search(rf"\* grid rmat:6 \({K} ranks.*speed-up {bt / at:.2f}", md)


def test_grid_is_reproducible_and_redrawn_exactly(grid_run, tmp_path):
    """The same --grid --clock virtual --compute model --seed run twice: the same virtual
    times, bytes, messages and errors; --from-json redraws the Markdown exactly, its date too."""
    d, _ = grid_run
    # files of the user's beside the outputs: the JSON and the Markdown were written
    # through these fixed names (replaced, then renamed away; a Ctrl-C during the write
    # left them half-written); now through temporary files of their own
    for name in ("g.json.tmp", "g.md.tmp"):
        (tmp_path / name).write_text("mine")
    r = _bench(["--grid", "--graphs", "rmat:6", "--ranks", "2,3", "--repeat", "2", "--seed",
                "3", *VIRT, "--json-out", "g.json", "--markdown", "g.md", "-q",
                "--results-dir", str(d / "res"), "--outdir", "od"], tmp_path)
    assert r.returncode == 0 and r.stderr == "" and r.stdout == "", r.stderr[-2000:]
    one = json.loads((d / "out" / "g.json").read_text())["records"]
    two = json.loads((tmp_path / "g.json").read_text())["records"]
    keys = ("seconds", "virtual_seconds", "bytes_sent", "messages_sent", "final_error",
            "rounds", "iterations", "time_to_error", "bytes_to_error", "error_trace",
            "edges_visited")
    for x, y in zip(one, two):
        assert {k: x.get(k) for k in keys} == {k: y.get(k) for k in keys}
    r = _bench(["--from-json", str(d / "out" / "g.json"), "--markdown", "re.md", "-q",
                "--outdir", "od"], tmp_path)
    assert r.returncode == 0, r.stderr
    # (the date too: the run's, kept in the JSON; the redraw wrote the time of the redraw)
    assert (tmp_path / "re.md").read_text() == (d / "out" / "g.md").read_text()
    assert sorted(p.name for p in tmp_path.rglob("*") if p.name.endswith(".tmp")) == [
        "g.json.tmp", "g.md.tmp"]
    assert (tmp_path / "g.json.tmp").read_text() == (tmp_path / "g.md.tmp").read_text() == "mine"


@pytest.mark.parametrize("args,needle", [
    (["--ranks", "2,2"], "argument --ranks: 2 is given twice in '2,2'"),
    (["--modes", "bsp,bsp"], "argument --modes: 'bsp' is given twice"),
    (["--fanout", "1,1"], "argument --fanout: 1 is given twice"),
    (["--latency", "1e-3,0.001"], "argument --latency: 0.001 is given twice"),
    (["--tol", "1e-6,1e-6"], "argument --tol: 1e-06 is given twice"),
    (["--partition", "range,range"], "argument --partition: 'range' is given twice"),
    (["--rebalance", "off,off"], "argument --rebalance: 'off' is given twice"),
    (["--schedule", "sweep,sweep"], "argument --schedule: 'sweep' is given twice"),
    (["--schedule", "sweep,"], "argument --schedule: expected comma-separated names"),
    (["--schedule", ","], "argument --schedule: expected comma-separated names"),
    (["--graphs", "rmat:6,rmat:6"], "argument --graphs: 'rmat:6' is given twice"),
    (["--graphs", "rmat:6,rmat:6:16:1"], "'rmat:6' and 'rmat:6:16:1' are the same graph"),
    (["--straggler", "1:2", "--straggler", "1:2.0"], "--straggler '1:2.0' is given twice"),
    (["--straggler", "none", "--straggler", "none"], "--straggler 'none' is given twice"),
])
def test_grid_duplicates_refused(tmp_path, args, needle):
    """A list option's duplicate ran once without a word (a typo for another value went
    unseen); refused in one line, exit 2, before any run and any file."""
    base = ["--grid", "--graphs", "rmat:6", "--ranks", "2", *VIRT, "-q"]
    # (the last --graphs / --ranks given wins)
    r = _bench(base + args, tmp_path, timeout=60)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and needle in lines[0], r.stderr[-2000:]
    assert list(tmp_path.iterdir()) == []


def test_grid_clamped_fanouts_still_dedupe(tmp_path):
    """Not a duplicate as given: --fanout 1,2 on 2 ranks is one run (fanout clamped)."""
    r = _bench(["--grid", "--graphs", "rmat:6", "--ranks", "2", "--modes", "asap",
                "--fanout", "1,2", *VIRT, "-q", "--budget", "0", "--json-out", "g.json",
                "--outdir", "od", "--results-dir", "res"], tmp_path, timeout=60)
    assert r.returncode == 1, r.stderr   # (--budget 0: every run skipped)
    assert len(json.loads((tmp_path / "g.json").read_text())["records"]) == 1


@pytest.mark.parametrize("args,needle", [
    (["--outdir", "new/a", "--json-out", "/proc/x.json"], "/proc/x.json: cannot create"),
    (["--outdir", "new", "--results-dir", "res2", "--markdown", "/proc/x.md"],
     "/proc/x.md: cannot create"),
    (["--outdir", "new", "--json-out", "/dev/null/x.json"], "/dev/null: is a file"),
    (["--json-out", "out/"], "out/: names a directory, not an output file: give a file "
                             "name, such as out/out.json"),
    (["--markdown", "md/"], "md/: names a directory, not an output file: give a file "
                            "name, such as md/out.md"),
    (["--outdir", "od", "--json-out", "od"], "od: is a directory, not an output file: give "
                                             "a file name, such as od/out.json"),
])
def test_refused_outputs_leave_nothing_behind(tmp_path, args, needle):
    """A refused output left the directories created before it (new/a, benchmarks/results);
    --json-out out/ wrote the JSON to a file 'out' (the slash was lost)."""
    r = _bench(["--grid", "--graphs", "rmat:6", "--ranks", "2", *VIRT, "-q", *args],
               tmp_path, timeout=60)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and needle in lines[0], r.stderr[-2000:]
    assert list(tmp_path.iterdir()) == []


def test_bad_graph_file_refused_before_any_run(tmp_path):
    """A bad edge list was read when its turn came, after the other graphs' runs (lost:
    exit 2, no JSON); now every graph is read before the first run."""
    (tmp_path / "ok.txt").write_text("1 2\n2 3\n3 1\n")
    (tmp_path / "bad.txt").write_text("1 2\n2 x\n3 1\n")
    r = _bench(["--grid", "--graphs", "ok.txt,bad.txt", "--ranks", "2", *VIRT,
                "--outdir", "od", "--json-out", "j/x.json"], tmp_path, timeout=120)
    assert r.returncode == 2, r.stderr
    assert r.stderr.strip().splitlines()[-1].endswith(
        "bad.txt:2: expected an integer vertex id in column 2, got 'x'")
    assert "[1/" not in r.stderr   # no run started
    assert not (tmp_path / "j").exists() and not (tmp_path / "od").exists()


def test_edited_graph_file_gets_a_new_reference(tmp_path):
    """The reference cache was keyed by the file's name: after an edit every record was
    scored against the old graph's answer (ERROR ABOVE TOLERANCE, exit 3)."""
    g = tmp_path / "g.txt"
    args = ["--grid", "--graphs", "g.txt", "--ranks", "2", "--modes", "bsp", *VIRT, "-q",
            "--outdir", "od", "--json-out", "x.json"]
    for text in ("1 2\n2 3\n3 1\n", "1 2\n2 3\n3 1\n1 3\n"):
        g.write_text(text)
        r = _bench(args, tmp_path, timeout=120)
        assert r.returncode == 0, r.stderr
        rec = json.loads((tmp_path / "x.json").read_text())["records"][0]
        assert rec["within_tolerance"] and rec["final_error"] < 1e-6


def test_reference_is_networkx_pagerank(grid_run):
    """The answer every record is scored against is networkx's PageRank of the graph."""
    import networkx as nx
    import numpy as np

    from asapgraph.bench.reference import load_reference
    from asapgraph.graph.io import load_graph

    d, _ = grid_run
    ref = load_reference(next((d / "res" / "ref").glob("rmat_6_16_1*.npz")))
    g = load_graph("rmat:6:16:1")
    s, t, _ = g.edges()
    ids = np.asarray(g.original_ids())
    G = nx.MultiDiGraph()
    G.add_nodes_from(ids.tolist())
    G.add_edges_from(zip(ids[s].tolist(), ids[t].tolist()))
    pr = nx.pagerank(G, alpha=0.85, tol=1e-14, max_iter=10000)
    v = np.array([pr[i] for i in ref["ids"].tolist()])
    assert np.abs(v - ref["ranks"]).sum() < 1e-9
    doc = json.loads((d / "out" / "g.json").read_text())
    for rec in doc["records"]:   # BSP's and ASAP's answers: each within its tol of it
        assert rec["ok"] and rec["within_tolerance"]
        assert rec["final_error"] <= rec["error_bound_asked"]


@pytest.mark.parametrize("args,needle", [
    (["--grid", "--graphs", "rmat:6", "--ranks", "2", "--modes", "bsp", "--fanout", "2"],
     "--fanout does not apply to a grid of BSP runs only"),
    (["--grid", "--graphs", "rmat:6", "--ranks", "2", "--modes", "bsp", "--window", "1"],
     "--window does not apply to a grid of BSP runs only"),
    (["--grid", "--graphs", "rmat:6", "--ranks", "2", "--modes", "bsp", "--schedule="],
     "--schedule does not apply to a grid of BSP runs only"),
    (["--list", "--modes", "bsp,asap"], "--modes does not apply to --list"),
    (["--list", "--clock", "wall"], "--clock does not apply to --list"),
    (["--from-json", "x.json", "--compute", "cpu"], "--compute does not apply to --from-json"),
    (["--modes", "bsp,asap"], "--modes does not apply to the default --quick run"),
])
def test_options_given_with_their_default_refused_where_they_do_not_apply(tmp_path, args,
                                                                         needle):
    """An option given with its default value was ignored where it does not apply (only a
    changed value was refused): now refused as any other value is."""
    r = _bench([*args, "-q"], tmp_path, timeout=60)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and needle in lines[0], r.stderr[-2000:]
    assert list(tmp_path.iterdir()) == []


def test_plot_interrupted_during_its_write_leaves_no_file(tmp_path):
    """A Ctrl-C during savefig left a truncated PNG under its final name."""
    pytest.importorskip("matplotlib")
    from asapgraph.bench import plots

    plt = plots._plt()
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])

    def interrupted(target, **kw):
        (open(target, "wb") if isinstance(target, str) else target).write(b"\x89PNG\r\n")
        raise KeyboardInterrupt

    fig.savefig = interrupted
    with pytest.raises(KeyboardInterrupt):
        plots._save(fig, str(tmp_path / "p.png"))
    assert list(tmp_path.iterdir()) == []
    fig2, ax2 = plt.subplots()
    ax2.plot([0, 1], [1, 0])
    plots._save(fig2, str(tmp_path / "q.png"))
    assert [p.name for p in tmp_path.iterdir()] == ["q.png"]
    assert (tmp_path / "q.png").read_bytes()[:4] == b"\x89PNG"


def test_grid_markdown_keeps_rebalance_modes_apart(tmp_path):
    """--rebalance off,start: a row per mode (a record's 'rebalance' is the engine's report,
    a dict, when the mode is not off)."""
    r = _bench(["--grid", "--graphs", "rmat:6", "--ranks", "2", "--rebalance", "off,start",
                *VIRT, "--straggler", "1:3", "-q", "--json-out", "g.json", "--markdown", "g.md",
                "--outdir", "od", "--results-dir", "res"], tmp_path, timeout=240)
    assert r.returncode == 0, r.stderr[-2000:]
    rows = [ln.split("|")[5].strip() for ln in (tmp_path / "g.md").read_text().splitlines()
            if ln.startswith("| rmat:6 |")]
    assert sorted(rows) == ["off", "off", "start", "start"]
