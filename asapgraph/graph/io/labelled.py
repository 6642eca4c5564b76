"""Text edge lists whose vertices are named by arbitrary tokens (``--labels``).

Rationale
---------
The compiled parser of :mod:`asapgraph.graph.io` reads integer ids only.  A labelled file is read
whole (decompressed like any input), comment and blank lines are dropped, and the tokens are
split by ``bytes.split`` (C) after turning commas into blanks; when every line has the same
number of columns the tokens are one reshaped numpy bytes array, so no Python code runs per
edge.  Endpoint columns are factorized once (``np.unique``, sorted labels) and the weight
column parsed by numpy.  Errors name ``FILE:LINE``.
"""
from __future__ import annotations

import re

import numpy as np

from asapgraph.errors import InputError, first_bad_line
from asapgraph.graph.io._text import (_DECOMP_ERRORS, BINARY_HEAD, bare_cr_error, before_damage,
                                      blank_header, damage_error, display_name, nul_refusal,
                                      open_binary, os_error)

__all__ = ["read_labelled"]


_FORMATS = {"mtx": "a Matrix Market file", "npy": "a .npy edge array",
            "binary": "an asapgraph binary graph"}


def labels_refusal(name, fmt):
    """``--labels`` (Python: ``labels=True``) names the vertices of a text edge list by
    its tokens; the other inputs say what their ids are.  A Parquet table's column types
    do (strings are names already): it was ignored on one process, and K ranks read the
    file as text ('binary data, not a text edge list')."""
    if fmt == "parquet":
        return InputError(name, None, "--labels applies to text edge lists, and this is a "
                          "Parquet table (its column types say whether vertices are named: "
                          "strings are names already): drop --labels")
    return InputError(name, None, f"--labels applies to text edge lists, and this is "
                      f"{_FORMATS[fmt]} (integer vertex ids): drop --labels")


def _read_all(path):
    """``(data, damage)``: the file's bytes and None, or, for a damaged compressed stream,
    its whole lines before the damage and the error that names it."""
    name = display_name(path)
    try:
        stream, kind, _total = open_binary(path)
        try:
            return stream.read(), None
        except _DECOMP_ERRORS + (OSError,) as exc:
            if kind is None and isinstance(exc, OSError):
                raise
            # as the integer reader says it (was 'internal error: EOFError' for a
            # truncated .bz2/.xz, LZMAError for a corrupt .xz, 'cannot read: Not a
            # gzipped file' for a .gz with trailing garbage); a bad line before a cut
            # first, as the integer reader (audit 30b; not before corrupt data)
            damage = damage_error(path, kind, exc)
            if not damage.truncated:
                raise damage from None
            data = before_damage(path)
            return data[:data.rfind(b"\n") + 1], damage
        finally:
            if path != "-":
                stream.close()
    except OSError as exc:
        raise os_error(name, exc) from None


def read_labelled(path, *, weight_col=0, src_col=1, dst_col=2, header=False):
    """``(src, dst, weights or None)``: label arrays (str) and float64 weights.

    ``weight_col``: 1-based column of the weight, 0 for none.  ``header``: the first line
    that is neither blank nor a comment is a header, skipped whatever it holds (turned
    into a blank line: the lines keep their numbers).
    """
    name = display_name(path)
    if path != "-":
        from asapgraph.graph.io._readers import detect_format, is_parquet

        fmt = "parquet" if is_parquet(path) else detect_format(path)
        if fmt != "text":   # a Matrix Market size line would be read as an edge
            raise labels_refusal(name, fmt)
    data, damage = _read_all(path)
    if damage is None:
        return _read_data(data, name, weight_col, src_col, dst_col, header)
    try:  # the first problem in the file's order: a bad line before the damage
        _read_data(data, name, weight_col, src_col, dst_col, header)
    except InputError as exc:
        if exc.line is not None:
            raise
    raise damage


def _read_data(data, name, weight_col, src_col, dst_col, header=False):
    if data[:14] == b"%%MatrixMarket":
        raise labels_refusal(name, "mtx")
    bom = 3 if data[:3] == b"\xef\xbb\xbf" else 0  # not part of the first name
    data = data[bom:]
    bad = nul_refusal(name, data[:BINARY_HEAD - bom])  # (the file's first 64 KiB)
    if bad is not None:  # zstd, zip, ... (named), or a NUL byte: as the integer reader
        raise bad
    if header:   # a blank line now (its bytes; the line numbers do not move)
        data = blank_header(data, True, name, labels=True)[0]
    nul = data.find(b"\x00")
    if nul < 0:
        return _read_text(data, name, weight_col, src_col, dst_col)
    # as the integer reader: a NUL byte further on is binary data at its line, unless a
    # line before it is refused first
    line = data[:nul].count(b"\n") + 1
    try:
        _read_text(data[:data.rfind(b"\n", 0, nul) + 1], name, weight_col, src_col, dst_col)
    except InputError as exc:
        if exc.line is not None:
            raise
    raise InputError(name, line, "binary data, not a text edge list")


def _read_text(data, name, weight_col, src_col, dst_col):
    """:func:`read_labelled` of the text ``data`` (its byte order mark removed); of several
    bad lines the first is named, as the integer reader names it
    (:func:`asapgraph.errors.first_bad_line`)."""
    return first_bad_line(_read_lines, data, name, weight_col, src_col, dst_col)


def _read_lines(data, name, weight_col, src_col, dst_col):
    """:func:`_read_text`'s pass: raises at the first bad line of the first check that
    fails.  Lines are numbered by their ``\\n`` as the integer reader numbers them (a
    blank line of blanks or a CRLF one counts; ``bytes.splitlines`` also broke lines at a
    bare CR, read as a line end, and line numbers skipped such blank lines)."""
    cr = bare_cr_error(data, name)   # refused at its line, as the integer reader
    if cr is not None:
        raise cr
    if weight_col and b"," in data:
        _refuse_decimal_comma(data, weight_col, name)
    lines = data.replace(b",", b" ").split(b"\n")
    if lines and not lines[-1]:   # (after the last line end)
        lines.pop()
    if b"#" in data or b"%" in data:
        keep = [i for i, ln in enumerate(lines)
                if ln.strip() and ln.lstrip()[:1] not in (b"#", b"%")]
        kept = [lines[i] for i in keep]
    else:
        kept = [ln for ln in lines if ln.strip()]
        keep = None if len(kept) == len(lines) else \
            [i for i, ln in enumerate(lines) if ln.strip()]
    lineno = None if keep is None else np.asarray(keep, dtype=np.int64) + 1
    if not kept:
        raise InputError(name, None, "no edges found")
    ncol = np.fromiter(map(len, map(bytes.split, kept)), dtype=np.int64, count=len(kept))
    need = max(src_col, dst_col, weight_col)

    def line_of(i):
        return int(lineno[i]) if lineno is not None else i + 1

    short = np.flatnonzero(ncol < need)
    if short.size:   # the integer reader's words: columns past the ones used are ignored
        i = int(short[0])
        n = int(ncol[i])
        raise InputError(name, line_of(i), f"missing column {need} (line has {n} "
                         f"column{'' if n == 1 else 's'})")
    _refuse_header(kept[0], line_of(0), name, src_col, dst_col)
    k = int(ncol[0])
    if np.all(ncol == k):
        tok = np.array(b" ".join(kept).split()).reshape(-1, k)
    else:            # ragged lines (an optional timestamp, ...): the first `need` tokens
        tok = np.array([ln.split()[:need] for ln in kept])
    src = _names(tok[:, src_col - 1], name, line_of)
    dst = _names(tok[:, dst_col - 1], name, line_of)
    w = None
    if weight_col:
        w = _weights(tok[:, weight_col - 1], weight_col, name, line_of)
    return src, dst, w


#: column names of edge-list headers (lower case): a first line whose source and target
#: tokens are both one of these is a header, not an edge (single letters such as ``u v``
#: or ``a b`` are not taken: they name vertices in small examples)
HEADER_WORDS = frozenset(
    b"source target src dst from to fromnodeid tonodeid from_id to_id src_id dst_id "
    b"source_id target_id sourceid targetid node1 node2 node_1 node_2 id1 id2 id_1 id_2 "
    b"head tail origin destination sender receiver".split())


def _refuse_header(first, line, name, src_col, dst_col):
    """Refuse a first line that names the columns (``source,target``): with ``--labels``
    any token is a vertex name, so it was read as an edge between vertices 'source' and
    'target' (as networkx's read_edgelist does) -- a wrong answer for a CSV export; the
    integer reader refuses it at its id.  A graph whose vertices are really named so:
    put that edge after another one."""
    words = first.split()
    a, b = words[src_col - 1].lower(), words[dst_col - 1].lower()
    if a in HEADER_WORDS and b in HEADER_WORDS:
        raise InputError(name, line, f"a header line ({words[src_col - 1].decode()!r}, "
                         f"{words[dst_col - 1].decode()!r}) where the first edge should be: "
                         "pass --header (Python: header=True), or start it with '#'")


def _refuse_decimal_comma(data, weight_col, name):
    """Refuse a weight written with a decimal comma (``a<TAB>b<TAB>0,5``, ``a,b<TAB>0,5``:
    the separator before it is not a bare comma, so its comma is not a column separator)
    at its line, as the integer reader does; turning commas into blanks read it as weight
    0 (a wrong answer)."""
    from asapgraph.graph.io._text import DECIMAL_COMMA, NOT_CSV_SEP, decimal_comma_hint

    m = re.search(rb"^[ \t\v\f\r,]*(?![#%])(?:[^\s,]+[ \t\v\f\r,]+){" +
                  str(weight_col - 2).encode() + rb"}[^\s,]+" + NOT_CSV_SEP.encode() +
                  rb"(" + DECIMAL_COMMA.encode() + rb")", data, re.MULTILINE)
    if m is not None:
        t = m.group(1).decode()
        raise InputError(name, data[:m.start()].count(b"\n") + 1,
                         f"expected a number for the weight in column {weight_col}, got {t!r}"
                         f"{decimal_comma_hint(t)}")


def _weights(col, weight_col, name, line_of):
    """The weight column, with the integer reader's rules and messages: a number
    (``strtod`` syntax without hex; numpy alone would take ``1_0``), finite."""
    try:
        w = col.astype(np.float64)
        bad = np.char.find(col, b"_") >= 0
    except ValueError:   # some token numpy does not read (a hex float, which strtod takes)
        vals = [_float_or_none(x) for x in col.tolist()]
        bad = np.array([v is None for v in vals])
        w = np.array([0.0 if v is None else v for v in vals], dtype=np.float64)
    if np.any(bad):
        i = int(np.flatnonzero(bad)[0])
        raise InputError(name, line_of(i), f"expected a number for the weight in column "
                         f"{weight_col}, got {col[i].decode(errors='replace')!r}")
    fin = np.isfinite(w)
    if not np.all(fin):
        i = int(np.flatnonzero(~fin)[0])
        raise InputError(name, line_of(i), f"weight {col[i].decode(errors='replace')!r} "
                         "is not a finite number")
    return w


def _names(col, name, line_of):
    """A column of name tokens (bytes) as str: ASCII at numpy's speed, else UTF-8 (4x
    slower); a name that is not UTF-8 is ``FILE:LINE: not UTF-8 text`` at its line (the
    first such name of the column; bytes elsewhere -- a comment, a column not read -- are
    not names: the line of the file's first such byte was named)."""
    try:
        return col.astype(str)
    except UnicodeDecodeError:
        pass
    try:
        return np.char.decode(col, "utf-8")
    except UnicodeDecodeError:
        for i, tok in enumerate(col.tolist()):
            try:
                tok.decode("utf-8")
            except UnicodeDecodeError:
                raise InputError(name, line_of(i), "not UTF-8 text") from None
        raise


#: strtod's NaN with a payload, ``nan(1)`` (the integer reader: "not a finite number")
_NAN_CHARS = re.compile(rb"[+-]?nan\([0-9A-Za-z_]*\)", re.IGNORECASE)


def _float_or_none(x):
    """``x`` (bytes) as the integer reader's parser reads a weight: decimal only (hex
    floats such as ``0x10``, which networkx refuses too, and Python's ``1_000`` are not
    numbers there); None when it is not a number."""
    if b"x" in x.lower():   # (before a NaN's chars too, as the parser checks)
        return None
    if _NAN_CHARS.fullmatch(x):   # strtod's 'nan(chars)': NaN there (refused as not finite)
        return float("nan")
    if b"_" in x:
        return None
    try:
        return float(x)
    except ValueError:
        return None
