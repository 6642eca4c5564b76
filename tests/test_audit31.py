"""Audit 31: a differential fuzz of edge lists, one process against K ranks (ranks:
tests/mpi/test_audit31_mpi.py), also ``--labels`` against the integer reader.

The ``--labels`` reader (one process, and rank 0 on K ranks) split lines with
``bytes.splitlines``:

* a bare CR (old Mac line ends) was read as a line end, where the integer reader refuses
  it at its line ("line ends with a bare CR"); in the middle of a line (``a b\\rb c``)
  the lines were read as two edges;
* a blank line made of blanks (``"  "``) or a CRLF blank line (``"\\r\\n"``) was not
  counted: every later error named the line before the bad one;
* of several bad lines, it named the first of the first check that failed (a weight that
  is not a number at line 2 before a NaN weight at line 1; names that are not UTF-8 at
  line 2 before an infinite weight at line 1), not the first in the file's order as the
  integer reader does (README: "of several bad lines the first is named");
* a name that is not UTF-8 was refused at the line of the file's first such byte (a
  comment, a column not read); ``nan(1)`` was "expected a number", not "not finite".

``--personalization``/``--dangling`` files (one reader on 1 and K ranks) had the same
line-numbering faults (``str.splitlines`` broke lines at a bare CR, a form feed, U+0085),
cut a name at a no-break space, and named a later bad line before an earlier one.
"""
import pytest

from asapgraph.errors import InputError
from asapgraph.graph.io import load_graph


def _refusal(path, **kw):
    with pytest.raises(InputError) as e:
        load_graph(str(path), **kw)
    return e.value.line, e.value.message


CASES = [
    # (integer file, the same with names), what one process names
    (b"1 2\r2 3\r3 1\n", 1, "bare CR"),
    (b"1 2\n2 3\r\n3 1 \r \n", 3, "bare CR"),
    (b"1 2\n3 4\r", 2, "bare CR"),
    (b"1 2\n  \n2\n", 3, "missing column 2"),
    (b"1 2\r\n\r\n\t\r\n2\r\n", 4, "missing column 2"),
]


WEIGHTED = [
    (b"1 2 nan\n2 3 1_0\n", 1, "not a finite number"),
    (b"1 2 1\n2 3 inf\n3 1 x\n", 2, "not a finite number"),
    (b"1 2\n2 3 0,5\n", 1, "missing column 3"),
    (b"1 2 1\n2 3\r4 5 1\n", 2, "bare CR"),
    (b"1 2 1\n\n2 3 abc\n3 1 nan\n", 3, "expected a number"),
]


@pytest.mark.parametrize("weighted,data,line,words",
                         [(False, *c) for c in CASES] + [(True, *c) for c in WEIGHTED])
def test_labels_lines_as_integer_reader(tmp_path, weighted, data, line, words):
    """The same file (integer ids, read as ids and as names) is refused at the same line
    with the same words by both readers; of several bad lines, the first in file order
    (WEIGHTED)."""
    f = tmp_path / "g.txt"
    f.write_bytes(data)
    a = _refusal(f, weighted=weighted)
    b = _refusal(f, weighted=weighted, labels=True)
    assert a[0] == b[0] == line, (a, b)
    assert words in a[1] and words in b[1], (a, b)


def test_labels_names_not_utf8_after_a_bad_weight(tmp_path):
    """Names that are not UTF-8 at line 2 come after an infinite weight at line 1."""
    f = tmp_path / "n.txt"
    f.write_bytes(b"a b inf\nb c\xff 1\n")
    assert _refusal(f, weighted=True, labels=True) == (1, "weight 'inf' is not a finite number")


def test_labels_crlf_and_blank_lines_read(tmp_path):
    """CRLF line ends, blank lines of blanks and comments still read (the same graph)."""
    f = tmp_path / "ok.txt"
    f.write_bytes(b"a b 1\r\n\r\n  \r\nb c 2\r\n# x\r\nc a 1.5\r\n")
    g = load_graph(str(f), weighted=True, labels=True)
    assert (g.n, g.m) == (3, 3)
    assert sorted(g.edges()[2].tolist()) == [1.0, 1.5, 2.0]


@pytest.mark.parametrize("tok", [b"nan(1)", b"NAN(abc)", b"+nan(1_2)"])
def test_labels_nan_with_payload_as_integer_reader(tmp_path, tok):
    """strtod's ``nan(chars)`` is a NaN weight for the integer reader ("not a finite
    number"); ``--labels`` said "expected a number"."""
    f = tmp_path / "p.txt"
    f.write_bytes(b"1 2 1\n2 3 " + tok + b"\n")
    a = _refusal(f, weighted=True)
    b = _refusal(f, weighted=True, labels=True)
    assert a == b == (2, f"weight {tok.decode()!r} is not a finite number"), (a, b)


@pytest.mark.parametrize("data,line", [
    (b"# caf\xe9\na b\nb c\xff\n", 3),      # bytes in a comment are no name (line 1 named)
    (b"a b caf\xe9\nb c\xff\n", 2),         # nor in a column not read (line 1 named)
    (b"a b\nb c\xff\nc\xfe d\n", 2),        # a destination's before a later source's
])
def test_labels_not_utf8_at_the_name(tmp_path, data, line):
    f = tmp_path / "u.txt"
    f.write_bytes(data)
    assert _refusal(f, labels=True) == (line, "not UTF-8 text")


@pytest.mark.parametrize("data,line,words", [
    (b"1 0.5\r2 0.5\n3 x\n", 1, "bare CR"),          # was read as a line end: line 3 named
    (b"1 x\n2 0.5\r3 1\n", 1, "value 'x'"),          # a bad line before the bare CR first
    (b"1 0.5\n\x0c\n3 x\n", 3, "value 'x'"),          # a form feed broke a line: line 4
    (b"1 0.5\n2 0.5\xc2\x85 3 x\n", 2, "not a number"),   # U+0085 broke a line: line 3
    # of several bad lines, the first in file order
    (b"1\n2 0,5\n", 1, "expected 2 fields"),        # was the decimal comma at line 2
    (b"1 -1\n2 x\n", 1, "must be finite and >= 0"),  # was the value 'x' at line 2
    (b"1 1\n2 1\n3 nan\n1 x\n", 3, "must be finite"),
])
def test_vertex_values_lines_as_edge_lists(tmp_path, data, line, words):
    """--personalization/--dangling files: lines end at '\\n' as in edge lists, and of
    several bad lines the first is named."""
    from asapgraph.options import read_vertex_values

    f = tmp_path / "p.txt"
    f.write_bytes(data)
    with pytest.raises(InputError) as e:
        read_vertex_values(str(f))
    assert e.value.line == line and words in e.value.message, (e.value.line, e.value.message)


def test_vertex_values_name_with_no_break_space(tmp_path):
    """A name holding a no-break space (one name in a --labels edge list) is one field."""
    from asapgraph.options import read_vertex_values

    f = tmp_path / "p.txt"
    f.write_bytes("a\u00a0b 1\r\n\r\nc 2\r\n".encode())
    ids, vals, lines = read_vertex_values(str(f), text_ids=True)
    assert list(ids) == ["a\u00a0b", "c"] and list(vals) == [1.0, 2.0]
    assert list(lines) == [1, 3]


@pytest.mark.parametrize("text_ids,data,named", [
    (True, b"n_0x 1\nc 1\nn_0x 2\n", "node 'n_0x' appears more than once"),
    (False, b"7 1\n8 1\n7 2\n", "node 7 appears more than once")])
def test_vertex_values_duplicate_named_as_unknown(tmp_path, text_ids, data, named):
    """A name is quoted as 'is not a vertex of the graph' quotes it (was bare: n_0x)."""
    from asapgraph.options import read_vertex_values

    f = tmp_path / "p.txt"
    f.write_bytes(data)
    with pytest.raises(InputError) as e:
        read_vertex_values(str(f), text_ids=text_ids)
    assert (e.value.line, e.value.message) == (3, named)
