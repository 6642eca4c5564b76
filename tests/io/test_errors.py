"""Bad input: one InputError per problem, ``FILE:LINE: message`` text, exact line numbers."""
import bz2
import gzip
import lzma
import os

import numpy as np
import pytest

from asapgraph.errors import InputError
from asapgraph.graph.io import load_graph, read_edges


def err_of(path, **kw):
    with pytest.raises(InputError) as ei:
        read_edges(path, **kw)
    with pytest.raises(InputError) as ei2:  # load_graph reports the same problem
        load_graph(path, **kw)
    assert str(ei.value) == str(ei2.value)
    return ei.value


CASES = [
    (b"1 2\n# c\n3 abc\n", {}, 3, "expected an integer vertex id in column 2, got 'abc'"),
    (b"src dst\n1 2\n", {}, 1,
     "expected an integer vertex id in column 1, got 'src' (a header line? pass --header, or "
     "start it with '#'; vertex names? pass --labels)"),
    (b"1 2\nalice bob\n", {}, 2,
     "expected an integer vertex id in column 1, got 'alice' (vertex names? pass --labels)"),
    (b"1 2\n3 4$\n", {}, 2, "expected an integer vertex id in column 2, got '4$'"),
    (b"1;2;0,5\n", {}, 1, "expected an integer vertex id in column 1, got '1;2;0' (';' does "
     "not separate columns: use tabs, spaces or commas)"),
    (b"1 2\n3|4\n", {}, 2, "expected an integer vertex id in column 1, got '3|4' ('|' does "
     "not separate columns: use tabs, spaces or commas)"),
    (b"1 2\n-4 5\n", {}, 2, "negative vertex id '-4' in column 1 (ids must be >= 0)"),
    (b"+4 5\n", {}, 1, "vertex id '+4' in column 1 has a sign (ids are plain digits)"),
    (b"1 2\n4.0 5\n", {}, 2, "vertex id '4.0' in column 1 is not an integer"),
    (b"1 2\n3 92233720368547758070\n", {}, 2,
     "vertex id 92233720368547758070 does not fit in int64"),
    (b"9223372036854775808 1\n", {}, 1, "vertex id 9223372036854775808 does not fit in int64"),
    (b"1 2\r\n\r\n7\r\n", {}, 3, "missing column 2 (line has 1 column)"),
    (b"1 2 3\n1 2\n", {"weighted": True}, 2, "missing column 3 (line has 2 columns)"),
    (b"1 2 1.5\n3 4 nan\n", {"weighted": True}, 2, "weight 'nan' is not a finite number"),
    (b"1 2 inf\n", {"weighted": True}, 1, "weight 'inf' is not a finite number"),
    (b"1 2 1e999\n", {"weighted": True}, 1, "weight '1e999' is not a finite number"),
    (b"1 2 x1\n", {"weighted": True}, 1,
     "expected a number for the weight in column 3, got 'x1'"),
    (b"1 2 5 6\n1 2 3\n", {"weight_col": 4}, 2, "missing column 4 (line has 3 columns)"),
]


@pytest.mark.parametrize("data,kw,line,msg", CASES)
def test_malformed_line(tmp_path, data, kw, line, msg):
    p = tmp_path / "edges.txt"
    p.write_bytes(data)
    e = err_of(p, **kw)
    assert (e.line, e.message) == (line, msg)
    assert str(e) == f"{p}:{line}: {msg}"


@pytest.mark.parametrize("comp", ["gz", "bz2", "xz"])
def test_error_line_in_compressed_file(tmp_path, comp):
    mod = {"gz": gzip, "bz2": bz2, "xz": lzma}[comp]
    p = tmp_path / ("edges.txt." + comp)
    p.write_bytes(mod.compress(b"# h\n1 2\n3 4\n5 zz\n"))
    e = err_of(p)
    assert (e.line, e.message) == (4, "expected an integer vertex id in column 2, got 'zz'")


@pytest.mark.parametrize("data", [b"", b"# only a comment\n\n  \n", b"\r\n"])
def test_no_edges(tmp_path, data):
    p = tmp_path / "edges.txt"
    p.write_bytes(data)
    assert str(err_of(p)) == f"{p}: no edges found"


@pytest.mark.parametrize("comp", ["gz", "bz2", "xz"])
def test_truncated_archive(tmp_path, comp, rng):
    mod = {"gz": gzip, "bz2": bz2, "xz": lzma}[comp]
    text = "".join(f"{a} {b}\n" for a, b in rng.integers(0, 10**6, (5000, 2))).encode()
    blob = mod.compress(text)
    p = tmp_path / ("edges.txt." + comp)
    p.write_bytes(blob[: len(blob) // 2])
    name = {"gz": "gzip", "bz2": "bz2", "xz": "xz"}[comp]
    assert str(err_of(p)) == f"{p}: corrupt or truncated {name} data"


def test_corrupt_gzip(tmp_path, rng):
    text = "".join(f"{a} {b}\n" for a, b in rng.integers(0, 10**6, (5000, 2))).encode()
    blob = bytearray(gzip.compress(text))
    blob[len(blob) // 2: len(blob) // 2 + 64] = bytes(64)
    p = tmp_path / "edges.txt.gz"
    p.write_bytes(bytes(blob))
    assert str(err_of(p)) == f"{p}: corrupt or truncated gzip data"


def test_binary_garbage(tmp_path, rng):
    p = tmp_path / "edges.txt"
    p.write_bytes(b"\x7fELF\x02\x01\x01\x00" + rng.bytes(4000))
    assert str(err_of(p)) == f"{p}:1: binary data, not a text edge list"
    # a NUL far from the start (after the first block) is caught too, at its line
    p.write_bytes(b"1 2\n" * 300000 + b"3 \x00 4\n")
    assert str(err_of(p)) == f"{p}:300001: binary data, not a text edge list"


@pytest.mark.parametrize("head,what", [
    (b"\x28\xb5\x2f\xfd\x24\x1d\xe9\x00", "zstd-compressed"),
    (b"PK\x03\x04\x14\x00\x00\x00", "a zip archive"),
    (b"\x04\x22\x4d\x18\x64\x40\xa7\x1d", "lz4-compressed"),
])
@pytest.mark.parametrize("labels", [False, True])
def test_unsupported_compression_is_named(tmp_path, head, what, labels):
    """A .zst/.zip/.lz4 edge list was "binary data, not a text edge list" (or, with no
    NUL in its first bytes, "expected an integer vertex id ... got 'PK...'"): the refusal
    names the format and what unpacks it."""
    p = tmp_path / "edges.txt.x"
    p.write_bytes(head + b"1 2\n2 3\n" * 10)
    if labels:
        with pytest.raises(InputError) as ei:
            load_graph(p, labels=True)
        e = ei.value
    else:
        e = err_of(p)
    assert str(e).startswith(f"{p}: {what}, which asapgraph does not read"), str(e)
    assert "unpack it first" in str(e)


def test_missing_file(tmp_path):
    p = tmp_path / "nope.txt"
    assert str(err_of(p)) == f"{p}: file not found"


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root can read anything")
def test_unreadable_file(tmp_path):
    p = tmp_path / "secret.txt"
    p.write_bytes(b"1 2\n")
    p.chmod(0)
    assert str(err_of(p)) == f"{p}: permission denied"


def test_directory(tmp_path):
    assert "is a directory" in str(err_of(tmp_path))


def test_bad_npy(tmp_path):
    p = tmp_path / "e.npy"
    np.save(p, np.array([[1.0, 2.0], [3.5, 4.0]]))
    assert "is not an integer" in str(err_of(p))
    np.save(p, np.array([[1, 2], [-3, 4]]))
    assert "negative vertex id -3" in str(err_of(p))
    np.save(p, np.zeros((3, 4, 2)))
    assert "shape" in str(err_of(p))


@pytest.mark.parametrize("arr,kw,want", [
    (np.array([[0, 1], [1, 2.5]]), {}, "row 1: vertex id 2.5 is not an integer"),
    (np.array([[0, 1], [np.nan, 2]]), {}, "row 1: vertex id nan is not an integer"),
    (np.array([[0, 1], [1, 2**64 - 1]], dtype=np.uint64), {},
     "row 1: vertex id 18446744073709551615 does not fit in int64"),
    (np.array([[0, 1, 1], [1, 2, np.nan]]), {"weighted": True},
     "row 1: weight nan is not a finite number"),
    (np.array([[0, 1], [1, 2], [2, 0.5], [1.5, 0]]), {}, "row 2: vertex id 0.5 is not an integer"),
    (np.array([[True, False]]), {}, "vertex ids must be integers, got dtype bool"),
])
def test_npy_messages_are_plain(tmp_path, arr, kw, want):
    """Plain numbers (no ``np.float64(...)``), the first bad row in row order: the same
    checker as the ranks' (tests/mpi/test_messy_input.py)."""
    p = tmp_path / "e.npy"
    np.save(p, arr)
    assert str(err_of(p, **kw)) == f"{p}: {want}"


def test_npy_extra_columns_are_ignored_as_documented(tmp_path):
    p = tmp_path / "e.npy"
    np.save(p, np.array([[0, 1, 2, 9], [1, 0, 4, 9]]))
    assert read_edges(p, weighted=True).weights.tolist() == [2.0, 4.0]
    assert read_edges(p, weight_col=4).weights.tolist() == [9.0, 9.0]
    np.save(p, np.zeros((3, 1)))
    assert "(m, k >= 3)" in str(err_of(p))


def test_permission_denied_message(tmp_path, monkeypatch):
    """Runs as root too: the OS error is simulated at the open() the reader uses."""
    import asapgraph.graph.io._text as t

    p = tmp_path / "secret.txt"
    p.write_bytes(b"1 2\n")

    def deny(*a, **k):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(t, "open", deny, raising=False)
    with pytest.raises(InputError) as ei:
        read_edges(p)
    assert str(ei.value) == f"{p}: permission denied"


def test_first_negative_weight_names_its_line(tmp_path):
    import gzip

    from asapgraph.graph.io import first_negative_weight

    body = "# c\n\n0 1 2 5\n% c\n1 2 3 -4e-3\n2 0 -1 1\n"
    (tmp_path / "a.txt").write_text(body)
    (tmp_path / "a.txt.gz").write_bytes(gzip.compress(body.encode()))
    for name in ("a.txt", "a.txt.gz"):
        p = str(tmp_path / name)
        assert first_negative_weight(p) == (6, "-1")  # the third column by default
        assert first_negative_weight(p, 4) == (5, "-4e-3")
    (tmp_path / "l.txt").write_text("# c\nx y 1\ny z -2\n")  # vertices named by tokens
    assert first_negative_weight(str(tmp_path / "l.txt")) == (3, "-2")
    (tmp_path / "ok.txt").write_text("0 1 1\n1 0 2\n")
    assert first_negative_weight(str(tmp_path / "ok.txt")) is None
    assert first_negative_weight(str(tmp_path / "missing.txt")) is None
    assert first_negative_weight("-") is None


@pytest.mark.parametrize("kw", [{"src_col": 99999999999999999999},
                                {"weight_col": 99999999999999999999}, {"dst_col": 2**31}])
def test_huge_columns_are_input_errors(tmp_path, kw):
    """Not an OverflowError from the C parser's int columns."""
    p = tmp_path / "w.txt"
    p.write_text("0 1 1\n")
    assert "(columns are at most 2147483647)" in str(err_of(p, **kw))


@pytest.mark.parametrize("tok", ["nan", "inf", "-inf", "1e400", "abc", "1_0", "0x10", "0x1p3",
                                 "+2", ".5", "5.", "-0", "1e-400"])
def test_labels_weights_read_as_integer_ids_are(tmp_path, tok):
    """``--labels --weighted`` parsed weights with numpy: NaN reached the CSR build (exit 1,
    "internal error"), inf/1e400 ran 1000 iterations to exit 3 on one process and exit 0
    on ranks, '1_0' read as 10, '0x10' refused; messages differed ("bad weight 'abc'").
    Now the same rules and words as the integer reader, token for token."""
    p = tmp_path / "w.txt"
    p.write_text(f"1 2 {tok}\n1 3 1\n3 1 2\n")
    try:
        want = load_graph(p, weighted=True)
    except InputError as e:
        with pytest.raises(InputError) as ei:
            load_graph(p, weighted=True, labels=True)
        assert str(ei.value) == str(e)
        return
    got = load_graph(p, weighted=True, labels=True)
    assert got.labels.tolist() == ["1", "2", "3"]
    assert np.array_equal(got.weights, want.weights)


def test_labels_ragged_columns_as_integer_ids(tmp_path):
    """A labelled file whose lines have different column counts (an optional third column)
    was refused ("expected 3 columns, got 2") where the integer reader ignores the columns
    it does not use; a line short of a used column has the integer reader's message."""
    p = tmp_path / "r.txt"
    p.write_text("1 2 5\n2 3\n3 1 7 x\n")
    a, b = load_graph(p), load_graph(p, labels=True)
    assert a.m == b.m == 3 and b.labels.tolist() == ["1", "2", "3"]
    for labels in (False, True):
        with pytest.raises(InputError) as ei:
            load_graph(p, weighted=True, labels=labels)
        assert str(ei.value) == f"{p}:2: missing column 3 (line has 2 columns)"


@pytest.mark.parametrize("comp", [None, "gz"])
def test_konect_headers(tmp_path, comp):
    """KONECT's first line names the network's kind.  '% sym' (undirected, every edge
    listed once) was read as a directed graph -- another graph, a wrong answer with exit
    0 -- and '% bip' (two vertex sets numbered independently) merged left vertex 1 with
    right vertex 1.  Refused at line 1 unless undirected=True for '% sym'; '% asym'
    (directed) reads as before."""
    def write(name, text):
        p = tmp_path / (name + (".gz" if comp else ""))
        p.write_bytes(gzip.compress(text.encode()) if comp else text.encode())
        return p

    sym = write("out.sym", "% sym unweighted\n% 3 3 3\n1 2\n2 3\n3 1\n")
    with pytest.raises(InputError) as ei:
        load_graph(sym)
    assert ei.value.line == 1 and "a KONECT undirected network ('% sym unweighted'" in str(ei.value)
    assert "--undirected" in str(ei.value)
    g = load_graph(sym, undirected=True)
    assert g.m == 6
    bip = write("out.bip", "% bip unweighted\n1 1\n1 2\n2 2\n")
    for und in (False, True):
        with pytest.raises(InputError, match=r":1: a KONECT bipartite network"):
            load_graph(bip, undirected=und)
    asym = write("out.asym", "% asym positive\n1 2\n2 3\n")
    assert load_graph(asym).m == 2
    other = write("out.c", "% symbols are fine in other comments\n1 2\n")
    assert load_graph(other).m == 1
