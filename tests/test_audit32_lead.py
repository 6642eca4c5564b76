"""Audit 32 (the lead): what ``--personalization``/``--dangling`` files split a line at.

In a pure-ASCII file the reader split fields with ``str.split``, which also splits at the
ASCII separators \\x1c-\\x1f (file, group, record, unit separator); edge lists are split
with ``bytes.split``, which keeps them inside a token (``0\\x1c1`` is a bad vertex id
there).  So ``0\\x1c0.5`` was read as node 0 with value 0.5 where the same bytes in an
edge list are refused; now both keep the separator inside the token.
"""
import pytest

from asapgraph.errors import InputError


@pytest.mark.parametrize("sep", [b"\x1c", b"\x1d", b"\x1e", b"\x1f"])
@pytest.mark.parametrize("tail", [b"", "\u00e9 1\n".encode()])  # ASCII and UTF-8 text
def test_vertex_values_keep_ascii_separators_in_a_field(tmp_path, sep, tail):
    from asapgraph.options import read_vertex_values

    f = tmp_path / "p.txt"
    f.write_bytes(b"1 1\n0" + sep + b"0.5\n" + tail)
    with pytest.raises(InputError) as e:
        read_vertex_values(str(f))
    assert e.value.line == 2 and "expected 2 fields" in e.value.message, e.value.message


def test_vertex_values_separator_inside_a_name(tmp_path):
    """With names (``--labels``) the separator is part of the name, as in the edge list."""
    from asapgraph.options import read_vertex_values

    f = tmp_path / "p.txt"
    f.write_bytes(b"a\x1fb 1\nc 2\n")
    ids, vals, lines = read_vertex_values(str(f), text_ids=True)
    assert list(ids) == ["a\x1fb", "c"] and list(vals) == [1.0, 2.0]
    assert list(lines) == [1, 2]


def test_edge_list_refuses_the_same_token(tmp_path):
    """The edge reader's view of the same bytes (the reference behaviour)."""
    from asapgraph.graph.io import load_graph

    f = tmp_path / "g.txt"
    f.write_bytes(b"1 2\n0\x1c1 2\n")
    with pytest.raises(InputError) as e:
        load_graph(str(f))
    assert e.value.line == 2 and "0\\x1c1" in e.value.message, e.value.message


# -- the Python API's arguments (audit 32a's leftovers) ------------------------------------

@pytest.mark.parametrize("kw,exc,words", [
    ({"chunk_bytes": 0}, ValueError, "chunk_bytes must be a positive integer"),
    ({"chunk_bytes": -1}, ValueError, "chunk_bytes must be a positive integer"),
    ({"chunk_bytes": 1.5}, ValueError, "chunk_bytes must be a positive integer"),
    ({"weighted": "no"}, TypeError, "weighted must be True or False"),   # read a weight column
    ({"undirected": "false"}, TypeError, "undirected must be True or False"),
    ({"labels": "yes"}, TypeError, "labels must be True or False"),
])
def test_load_graph_refuses_bad_switches(tmp_path, kw, exc, words):
    from asapgraph.graph.io import load_graph, read_edges

    f = tmp_path / "g.txt"
    f.write_text("1 2\n2 3\n")
    with pytest.raises(exc, match=words):
        load_graph(str(f), **kw)
    if set(kw) <= {"chunk_bytes", "weighted"}:
        with pytest.raises(exc, match=words):
            read_edges(str(f), **kw)


def test_load_graph_takes_numpy_and_int_switches(tmp_path):
    import numpy as np

    from asapgraph.graph.io import load_graph

    f = tmp_path / "g.txt"
    f.write_text("1 2 0.5\n2 3 1.5\n")
    g = load_graph(str(f), weighted=np.bool_(True), undirected=0, chunk_bytes=np.int64(64))
    assert g.m == 2 and sorted(g.weights.tolist()) == [0.5, 1.5]


@pytest.mark.parametrize("threads", [257, 100000])
def test_api_threads_bounded_as_the_command_line(threads, monkeypatch):
    """``threads=100000`` crashed the process in libgomp where ``--threads`` is refused."""
    import os

    import asapgraph

    monkeypatch.setattr(os, "cpu_count", lambda: 2)  # the bound: max(256, 64 x cores)
    g = asapgraph.load_graph("er:50:100")
    with pytest.raises(ValueError, match="threads must be at most 256"):
        asapgraph.pagerank(g, threads=threads)
    with pytest.raises(ValueError, match="threads must be at most 256"):
        asapgraph.run(asapgraph.programs.PageRankProgram(), g, threads=threads)


def test_run_refuses_a_comm_that_is_not_one():
    import asapgraph

    g = asapgraph.load_graph("er:50:100")
    with pytest.raises(TypeError, match="comm must be an mpi4py communicator"):
        asapgraph.run(asapgraph.programs.PageRankProgram(), g, comm="x")


@pytest.mark.parametrize("emu,words", [("x", "emulation must be an Emulation"),
                                       ({"latncy": 0.001}, "unknown field")])
def test_emulation_refused_in_one_line(emu, words):
    from asapgraph.engine.emulation import Emulation

    with pytest.raises(ValueError, match=words):
        Emulation.from_any(emu)
