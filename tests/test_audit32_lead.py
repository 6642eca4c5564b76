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
