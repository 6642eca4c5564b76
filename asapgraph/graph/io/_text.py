"""Text edge lists: opening (plain, .gz, .bz2, .xz, stdin), streaming, error messages.

The heavy lifting is in :mod:`asapgraph.kernels._parse` (C parser, OpenMP); this module
reads blocks, carries partial lines over, and turns parser error codes and OS /
decompression failures into :class:`asapgraph.errors.InputError`.
"""
from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import re
import sys
import zlib

import numpy as np

from asapgraph.errors import InputError, refuse_pipe
from asapgraph.progress import get as _get_progress
from asapgraph.kernels import _graph, _parse

#: Default size of the blocks read and parsed at a time.
CHUNK_BYTES = 32 << 20

GZIP_MAGIC = b"\x1f\x8b"
BZ2_MAGIC = b"BZh"
XZ_MAGIC = b"\xfd7zXZ\x00"



class EdgeList:
    """Edges as parsed from an input, with the original vertex ids.

    Attributes
    ----------
    src, dst : int64 arrays, shape (m,)
        Original ids of the endpoints of each edge, in file order.
    weights : float64 array, shape (m,), or None
        Weight of each edge (None when the input was read unweighted).
    path : str
        Where the edges came from (for messages).
    first_line : int
        1-based physical line number at which this piece starts (chunks, ranges).
    max_id : int or None
        Largest id of the piece when the parser knows it (-1 when empty; set by
        :func:`asapgraph.graph.io.parse_byte_range`), else None.
    """

    __slots__ = ("src", "dst", "weights", "path", "first_line", "max_id")

    def __init__(self, src, dst, weights=None, path=None, first_line=1):
        self.src = src
        self.dst = dst
        self.weights = weights
        self.path = path
        self.first_line = first_line
        self.max_id = None

    def __len__(self):
        return int(self.src.shape[0])

    @property
    def m(self):
        return len(self)

    def __repr__(self):
        return (f"EdgeList(m={len(self)}, weighted={self.weights is not None}, "
                f"path={self.path!r})")


# ---------------------------------------------------------------------- errors
def _plural(k, word):
    return f"{k} {word}" if k == 1 else f"{k} {word}s"


#: a number written with a decimal comma ('0,5', '-1,25'): refused, never read as 0
DECIMAL_COMMA = r"[+-]?[0-9]+,[0-9]+"
#: a column separator that is not made of commas only ('<TAB>', ' ', ', '): a comma in the
#: number after it is a decimal comma (asap_parse.c's csv_sep_before: '1,2<TAB>0,5' and
#: '1<TAB>2<TAB>0,5' are refused, the comma CSV '1,2,0,5' reads the weight 0)
NOT_CSV_SEP = r"[ \t\v\f\r,]*[ \t\v\f\r][ \t\v\f\r,]*"
_DECIMAL_COMMA = re.compile(DECIMAL_COMMA)


def decimal_comma_hint(token, what="the weight"):
    """The refusal's hint for a ``token`` written with a decimal comma, else ``""``."""
    if not _DECIMAL_COMMA.fullmatch(token):
        return ""
    return f" (a decimal comma? write {what} with a point, {token.replace(',', '.')!r})"


def shown(tok):
    """A token as a message quotes it: the repr of its text, or where the bytes are not
    UTF-8, of the bytes without the ``b`` (``'caf\\xe9'``, where the text with
    ``backslashreplace`` showed its escape doubled, ``'caf\\\\xe9'``)."""
    try:
        return repr(bytes(tok).decode("utf-8"))
    except UnicodeDecodeError:
        return repr(bytes(tok))[1:]


#: the refusal of a line ending with a bare CR (the integer parser's BARE_CR; --labels too)
BARE_CR_MESSAGE = "line ends with a bare CR (old Mac line endings): convert with `tr '\\r' '\\n'`"


def bare_cr_error(data, name):
    """The refusal of the first line of the text ``data`` (bytes) that ends with a bare CR,
    as the integer parser refuses it, or None (the readers that split lines in Python:
    ``--labels``, personalization files; ``splitlines`` read a bare CR as a line end)."""
    if b"\r" not in data or data.count(b"\r") == data.count(b"\r\n"):  # (fast on CRLF)
        return None
    at = re.search(rb"\r(?!\n)", data).start()
    return InputError(name, data.count(b"\n", 0, at) + 1, BARE_CR_MESSAGE)


#: the blank and comment lines at the start of a text, as the parser skips them (a line of
#: blanks -- space, tab, CR, VT, FF, comma -- or one whose first other byte is '#' or '%')
_LEADING = re.compile(rb"(?:[ \t\v\f\r,]*(?:[#%][^\n]*)?\n)*")
_NEWLINE = re.compile(rb"\n")
_NOT_BLANK = re.compile(rb"[^ \t\v\f\r,]")
_BARE_CR = re.compile(rb"\r(?!\n)")


def header_span(text, final=True):
    """``(h, e)``: where the header line of ``--header`` (Python: ``header=True``) lies in
    ``text`` (bytes-like, starting at a line start with only blank and comment lines
    before it in the file): the first line that is neither blank nor a comment,
    ``text[h:e]`` with its newline.  Whatever it holds, it is no edge.  ``(n, n)`` when
    ``text`` holds no such line (``final``: its end is a line end -- the file's, or that of
    a piece of whole lines); None when its end is not in ``text`` yet (more bytes are
    needed)."""
    n = len(text)
    h = _LEADING.match(text).end()
    m = _NEWLINE.search(text, h)
    if m is not None:
        return h, m.end()
    if not final:
        return None
    tok = _NOT_BLANK.search(text, h)   # the last line, without a newline
    if tok is None or text[tok.start()] in b"#%":   # (a comment or blanks)
        return n, n
    return h, n


def header_bare_cr(text, e):
    """The offset in ``text`` of a bare CR (old Mac line endings) before ``e`` (the end of
    its header line), else None: refused at its line, as the parser refuses one (the
    header would be the whole file)."""
    cr = _BARE_CR.search(text, 0, e)
    return None if cr is None else cr.start()


#: a comment line (the parser's: its first byte that is not a blank is '#' or '%')
_COMMENT_LINE = re.compile(rb"(?:^|\n)[ \t\v\f\r,]*[#%]")
_FIELDS = re.compile(rb"[ \t\n\v\f\r,;]+")
_NUMBER = re.compile(rb"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
#: the EdgeAccumulator.error code of a header line refused by :func:`numeric_header`
#: (not one of the parser's codes)
HEADER_EDGE = 1001
HEADER_EDGE_MESSAGE = ("--header would skip this line, the first that is neither blank nor "
                       "a comment, but it holds only numbers ({}): an edge after the file's "
                       "comment lines, not column names (drop --header)")


def has_comment_line(text, end):
    """Whether ``text[:end]`` (starting at a line start) holds a comment line."""
    return _COMMENT_LINE.search(text, 0, end) is not None


def numeric_header(text, h, e, comments=False):
    """Whether the header line ``text[h:e]`` (:func:`header_span`) must be refused: it
    holds only numbers and comment lines come before it (in ``text[:h]``, or earlier:
    ``comments``).  A SNAP-style file (``# FromNodeId ToNodeId`` comments, then edges)
    read with ``--header`` lost its first edge, silently; a count line (``1000 5000``)
    at the very top of a file without comments stays a header ``--header`` skips."""
    if not (comments or has_comment_line(text, h)):
        return False
    fields = [f for f in _FIELDS.split(bytes(text[h:e])) if f]
    return bool(fields) and all(_NUMBER.fullmatch(f) for f in fields)


def header_edge_error(name, line, text, h, e):
    """The refusal of :func:`numeric_header` at ``line``."""
    return InputError(name, line, HEADER_EDGE_MESSAGE.format(
        shown(bytes(text[h:e]).rstrip(b"\r\n"))))


def blank_header(data, final=True, name=None, line0=1, labels=False, comments=False):
    """``(data, found)``: the bytes ``data`` (starting at line ``line0``, only blank and
    comment lines before them in the file) with the bytes of their header line
    (:func:`header_span`) turned into blanks, newline kept (a blank line: the line numbers
    of the lines after it do not move), and whether it was in ``data``.  Without
    ``labels`` a header line of numbers after comment lines is refused
    (:func:`numeric_header`; ``comments``: comment lines came before ``data``)."""
    span = header_span(data, final)
    if span is None or span[0] == span[1]:
        return data, False
    h, e = span
    cr = header_bare_cr(data, e)
    if cr is not None:
        raise InputError(name, line0 + data.count(b"\n", 0, cr), BARE_CR_MESSAGE)
    if not labels and numeric_header(data, h, e, comments):
        raise header_edge_error(name, line0 + data.count(b"\n", 0, h), data, h, e)
    keep = e - 1 if data[e - 1:e] == b"\n" else e
    return data[:h] + b" " * (keep - h) + data[keep:], True


def feed_after_header(acc, mv, final):
    """``acc.feed(mv, final)`` of a block ``mv`` that starts where the header line may
    still come (only blank and comment lines before it in the file), with the header
    line skipped (counted as a line, no edge: the line numbers do not move).  Returns what
    ``feed`` returns (bytes consumed, or < 0 on a bad line: ``acc.error``, a bare CR up to
    the header's end included), or None when ``mv`` does not hold the end of the header
    line yet (feed it again with more).  Raises nothing: a memory map's block must not be
    held by a traceback when the map is closed."""
    span = header_span(mv, final)
    if span is None:
        return None
    h, e = span
    if h == e:   # no header line here
        return acc.feed(mv, final)
    cr = header_bare_cr(mv, e)
    if cr is not None:   # (as the parser reports it)
        acc.error = (_parse.BARE_CR, acc.lines + 1 + bytes(mv[:cr]).count(b"\n"), 0, 0, b"")
        return -1
    if numeric_header(mv, h, e):
        acc.error = (HEADER_EDGE, acc.lines + 1 + bytes(mv[:h]).count(b"\n"), 0, 0,
                     bytes(mv[h:e]).rstrip(b"\r\n"))
        return -1
    if h and acc.feed(mv[:h], False) < 0:
        return -1
    acc.feed(b"\n", False)   # the header: one line
    rest = acc.feed(mv[e:], final) if e < len(mv) else 0
    return rest if rest < 0 else e + rest


def error_message(err, line0=1):
    """``(line, message)`` for an ``EdgeAccumulator.error`` tuple of a buffer whose first
    line is line ``line0`` of the file."""
    code, line, col, ncols, tok = err
    if line is not None:
        line += line0 - 1
    t = tok.decode("utf-8", "backslashreplace")
    q = shown(tok)
    if code == HEADER_EDGE:
        return line, HEADER_EDGE_MESSAGE.format(q)
    if code == _parse.BAD_ID:
        sep = next((c for c in ";|" if c in t and t.replace(c, "").isdigit()), None)
        if sep is not None:   # '1;2;0,5' (a European CSV), '1|2': not separators here
            return line, (f"expected an integer vertex id in column {col}, got {q} ('{sep}' "
                          "does not separate columns: use tabs, spaces or commas)")
        named = col == 1 and any(c.isalpha() for c in t)   # a name, not a damaged number
        names = "; vertex names? pass --labels)" if named else ")"
        hint = (" (a header line? pass --header, or start it with '#'" + names) if line == 1 \
            else (" (vertex names? pass --labels)" if named else "")
        return line, f"expected an integer vertex id in column {col}, got {q}{hint}"
    if code == _parse.NEG_ID:
        return line, f"negative vertex id {q} in column {col} (ids must be >= 0)"
    if code == _parse.SIGNED_ID:
        return line, f"vertex id {q} in column {col} has a sign (ids are plain digits)"
    if code == _parse.DECIMAL_ID:
        return line, f"vertex id {q} in column {col} is not an integer"
    if code == _parse.ID_OVERFLOW:
        return line, f"vertex id {t} does not fit in int64"
    if code == _parse.MISSING_COL:
        return line, f"missing column {col} (line has {_plural(ncols, 'column')})"
    if code == _parse.BAD_WEIGHT:
        return line, (f"expected a number for the weight in column {col}, got {q}"
                      f"{decimal_comma_hint(t)}")
    if code == _parse.NONFINITE:
        return line, f"weight {q} is not a finite number"
    if code == _parse.BINARY:
        return line, "binary data, not a text edge list"
    if code == _parse.BARE_CR:
        return line, BARE_CR_MESSAGE
    return line, f"parse error (code {code})"


#: formats recognised by their magic bytes that asapgraph does not read (named in the
#: refusal so that the user knows what to run; ``.zst`` is common for large graph dumps)
_UNSUPPORTED_MAGIC = (
    (b"\x28\xb5\x2f\xfd", "zstd-compressed", "zstd -d"),
    (b"\x04\x22\x4d\x18", "lz4-compressed", "lz4 -d"),
    (b"PK\x03\x04", "a zip archive", "unzip"),
    (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive", "7z x"),
    (b"\x1f\x9d", "compress(1) (.Z) data", "uncompress"),
)


#: a NUL byte in a file's first ``BINARY_HEAD`` bytes (decompressed) refuses it as binary
#: data before any line is parsed, on one process and on every rank alike; a NUL further
#: on is refused at its line unless an error comes first in file order
BINARY_HEAD = 1 << 16


def nul_refusal(name, head, line0=1):
    """The :class:`InputError` refusing ``head`` (a file's first bytes, from its start)
    as binary data when it holds a NUL byte within ``BINARY_HEAD`` or starts with the
    magic bytes of a format that is not read; else None."""
    named = binary_data(head[:8])
    if named != binary_data():
        return InputError(name, None, named)
    at = bytes(head[:BINARY_HEAD]).find(b"\x00")
    if at < 0:
        return None
    return InputError(name, line0 + bytes(head[:at]).count(b"\n"), named)


def binary_data(head=b""):
    """The refusal of binary input whose file starts with ``head``: names a compression
    or archive format that is not read (with the command that unpacks it)."""
    for magic, what, tool in _UNSUPPORTED_MAGIC:
        if bytes(head[:len(magic)]) == magic:
            return (f"{what}, which asapgraph does not read (gzip, bzip2 and xz are read): "
                    f"unpack it first ({tool})")
    return "binary data, not a text edge list"


def os_error(path, exc):
    """InputError for an OSError raised while opening/reading ``path``."""
    if isinstance(exc, FileNotFoundError):
        return InputError(path, None, "file not found")
    if isinstance(exc, PermissionError):
        return InputError(path, None, "permission denied")
    if isinstance(exc, IsADirectoryError):
        return InputError(path, None, "is a directory, not a file")
    return InputError(path, None, f"cannot read: {exc.strerror or exc}")


#: ``-`` when the process has no standard input (descriptor 0 closed)
STDIN_CLOSED = "cannot read: standard input is closed"


#: a Matrix Market banner at the start of standard input (files are recognised by
#: :func:`asapgraph.graph.io.detect_format` before they are read; a stream is not)
MTX_IN_STREAM = ("Matrix Market data where a text edge list was expected: save it to a file "
                 "and give its path")


def display_name(path):
    return "<stdin>" if path == "-" else os.fspath(path)


# ---------------------------------------------------------------------- opening
def sniff(path):
    """First 16 bytes of ``path`` (raises InputError for OS errors)."""
    refuse_pipe(path)
    try:
        with open(path, "rb") as f:
            return f.read(16)
    except OSError as exc:
        raise os_error(display_name(path), exc) from None


def compression_of(head, path=None):
    """``'gzip'``, ``'bz2'``, ``'xz'`` or None, by magic bytes (then by extension)."""
    if head.startswith(GZIP_MAGIC):
        return "gzip"
    if head.startswith(BZ2_MAGIC) and len(head) >= 4 and head[3:4].isdigit():
        return "bz2"
    if head.startswith(XZ_MAGIC):
        return "xz"
    return None


class _StdinPeek:
    """stdin (binary) with its first bytes already read, for magic sniffing."""

    def __init__(self, raw):
        self.raw = raw
        self.head = raw.read(16) or b""
        self.pos = 0

    def peek(self, n):
        """The first ``n`` bytes (fewer at the end of the stream), without consuming them:
        they stay to be read.  Only before any read."""
        while len(self.head) < n and self.pos == 0:
            more = self.raw.read(n - len(self.head))
            if not more:
                break
            self.head += more
        return self.head[:n]

    def readinto(self, b):
        mv = memoryview(b)
        k = 0
        if self.pos < len(self.head):
            k = min(len(mv), len(self.head) - self.pos)
            mv[:k] = self.head[self.pos:self.pos + k]
            self.pos += k
            if k == len(mv):
                return k
        r = self.raw.readinto(mv[k:])
        return k + (r or 0)

    def read(self, n=-1):
        if n is None or n < 0:  # to the end, as io's read(): the --labels reader reads
            # its input whole; one readinto of 1 MiB cut plain stdin there (a line split
            # in two: "expected 2 columns, got 1", or edges silently dropped)
            head, self.pos = self.head[self.pos:], len(self.head)
            return head + (self.raw.read() or b"")
        buf = bytearray(n)
        k = self.readinto(buf)
        return bytes(buf[:k])

    def readable(self):
        return True

    def close(self):
        pass


class _StrictMultistream(io.RawIOBase):
    """bz2/xz decompression of concatenated streams, as ``bz2.BZ2File``/``lzma.LZMAFile``
    but strict about what follows a stream: zero bytes (padding) are skipped, anything
    else must be another valid stream.  Python's readers drop trailing data that is not
    a stream without a word (``_trailing_error``), so a .bz2/.xz with garbage appended
    was read as if the garbage were not there while a .gz with the same tail was refused
    as corrupt; now both are refused."""

    def __init__(self, fp, factory):
        self._fp = fp
        self._factory = factory
        self._dec = factory()
        self._done = False

    def readable(self):
        return True

    def readinto(self, b):
        with memoryview(b) as view, view.cast("B") as bv:
            data = self.read(len(bv))
            bv[:len(data)] = data
        return len(data)

    def read(self, size=-1):
        if size is None or size < 0:
            return self.readall()
        while not self._done and size:
            if self._dec.eof:
                rest = self._dec.unused_data
                while True:
                    rest = rest.lstrip(b"\0")
                    if rest:
                        break
                    rest = self._fp.read(_STRICT_BLOCK)
                    if not rest:
                        self._done = True
                        return b""
                self._dec = self._factory()
                data = self._dec.decompress(rest, size)  # garbage raises here
            elif self._dec.needs_input:
                raw = self._fp.read(_STRICT_BLOCK)
                if not raw:
                    raise EOFError("compressed data ended before the end-of-stream marker")
                data = self._dec.decompress(raw, size)
            else:
                data = self._dec.decompress(b"", size)
            if data:
                return data
        return b""

    def close(self):
        try:
            if self._fp is not None and hasattr(self._fp, "close"):
                self._fp.close()
        finally:
            self._fp = None
            super().close()


_STRICT_BLOCK = 1 << 16


def _strict(fp, kind):
    factory = bz2.BZ2Decompressor if kind == "bz2" else lzma.LZMADecompressor
    return io.BufferedReader(_StrictMultistream(fp, factory), 1 << 16)


_STDIN_PEEK = None   # the _StdinPeek of sys.stdin while none of it has been read


def _stdin_peek():
    """The process's standard input as a :class:`_StdinPeek`: the same one until something
    reads from it, so a look at its head (:func:`stdin_head`) leaves the bytes to the
    reader."""
    global _STDIN_PEEK
    raw = sys.stdin.buffer
    if _STDIN_PEEK is None or _STDIN_PEEK.raw is not raw or _STDIN_PEEK.pos:
        _STDIN_PEEK = _StdinPeek(raw)
    return _STDIN_PEEK


def stdin_head(k):
    """Up to ``k`` decompressed bytes at the start of standard input (gzip, bzip2 and xz
    by their magic bytes), left unread for the reader; b"" when stdin is closed, has been
    read from, or its data do not decompress (the reader reports that)."""
    if sys.stdin is None:
        return b""
    peek = _stdin_peek()
    kind = compression_of(peek.head)
    if kind is None:
        return peek.peek(k)
    # (a bzip2 block holds up to 900 kB of input before it gives any output)
    raw = peek.peek(1 << 16 if kind == "gzip" else 1 << 20)
    try:
        if kind == "gzip":
            return zlib.decompressobj(31).decompress(raw, k)
        dec = bz2.BZ2Decompressor() if kind == "bz2" else lzma.LZMADecompressor()
        return dec.decompress(raw, k)
    except (OSError, EOFError, ValueError, zlib.error, lzma.LZMAError):
        return b""


def open_binary(path):
    """Open ``path`` (or ``'-'``) for reading decompressed bytes.

    Returns ``(stream, kind, total)``: ``kind`` is the compression (None for
    plain), ``total`` the file size for plain files (None otherwise).
    """
    name = display_name(path)
    if path == "-":
        if sys.stdin is None:  # the process started with its descriptor 0 closed
            raise InputError(name, None, STDIN_CLOSED)
        peek = _stdin_peek()
        kind = compression_of(peek.head)
        if kind == "gzip":
            return gzip.GzipFile(fileobj=peek, mode="rb"), kind, None
        if kind in ("bz2", "xz"):
            return _strict(peek, kind), kind, None
        return peek, None, None
    refuse_pipe(path)
    try:
        f = open(path, "rb", buffering=0)
    except OSError as exc:
        raise os_error(name, exc) from None
    try:
        head = f.read(16)
        f.seek(0)
        total = os.fstat(f.fileno()).st_size
    except OSError as exc:
        f.close()
        raise os_error(name, exc) from None
    kind = compression_of(head)
    if kind == "gzip":
        return gzip.GzipFile(fileobj=f, mode="rb"), kind, None
    if kind in ("bz2", "xz"):
        return _strict(f, kind), kind, None
    return f, None, total


class ReadAhead:
    """Decompress in a background thread while the caller parses (zlib, bz2 and lzma
    release the GIL while they work).  ``readinto`` re-raises the reader's exception.
    At most ``depth`` blocks of ``block`` bytes wait in the queue.
    """

    def __init__(self, stream, block=4 << 20, depth=2):
        import queue
        import threading

        self.stream = stream
        self.block = block
        self.q = queue.Queue(maxsize=depth)
        self.cur = memoryview(b"")
        self.eof = False
        self.stop = threading.Event()
        self.t = threading.Thread(target=self._run, name="asapgraph-readahead", daemon=True)
        self.t.start()

    def _run(self):
        import queue

        while not self.stop.is_set():
            try:
                data = self.stream.read(self.block)
            except BaseException as exc:  # handed to the consumer
                item = exc
            else:
                item = data
            while not self.stop.is_set():
                try:
                    self.q.put(item, timeout=0.1)
                    break
                except queue.Full:
                    continue
            if not isinstance(item, bytes) or not item:
                return

    def readinto(self, b):
        mv = memoryview(b)
        got = 0
        while got < len(mv):
            if not len(self.cur):
                if self.eof:
                    break
                item = self.q.get()
                if isinstance(item, BaseException):
                    self.eof = True
                    raise item
                if not item:
                    self.eof = True
                    break
                self.cur = memoryview(item)
            k = min(len(self.cur), len(mv) - got)
            mv[got:got + k] = self.cur[:k]
            self.cur = self.cur[k:]
            got += k
        return got

    def close(self):
        self.stop.set()
        self.t.join(timeout=5)
        self.stream.close()


_DECOMP_ERRORS = (EOFError, zlib.error, gzip.BadGzipFile, lzma.LZMAError)


def _read_fill(stream, mv, path, kind):
    """Fill ``mv`` from ``stream`` as far as possible; bytes read (0 at EOF)."""
    got = 0
    n = len(mv)
    while got < n:
        try:
            r = stream.readinto(mv[got:])
        except _DECOMP_ERRORS as exc:
            raise damage_error(path, kind, exc) from None
        except OSError as exc:
            if kind is not None:
                raise damage_error(path, kind, exc) from None
            raise os_error(display_name(path), exc) from None
        if not r:
            break
        got += r
    return got


def damage_error(path, kind, exc):
    """The error of a damaged compressed stream (``exc`` raised by its reader), with
    ``truncated`` true when the stream merely ends early (``EOFError``): every byte before
    the cut is the file's own, so a bad line there is the first problem in the file's
    order (:func:`before_damage`).  Corrupt data is not: a decoder outputs garbage for a
    while before it notices (a gzip member's CRC is checked at its end), so the lines
    just before the point where it fails may be no lines of the file."""
    err = InputError(display_name(path), None, f"corrupt or truncated {kind} data")
    err.truncated = isinstance(exc, EOFError)
    return err


def before_damage(path, skip=0):
    """The decompressed bytes of the file ``path`` from offset ``skip`` up to where its
    stream ends early (a truncated file: :func:`damage_error`), read again in small
    pieces: a reader's block read that fails loses the bytes it had decompressed, and the
    first problem in the file's order is reported -- a bad line before the cut, else the
    cut.  An error path (the file is decompressed again); ``b""`` for standard input,
    which cannot be read twice."""
    if path == "-" or not isinstance(path, (str, os.PathLike)):
        return b""
    try:
        f, _, _ = open_binary(path)
    except (InputError, OSError):
        return b""
    read = getattr(f, "read1", None) or f.read
    out, pos = bytearray(), 0
    try:
        while True:
            try:
                b = read(1 << 16)
            except (OSError, *_DECOMP_ERRORS):
                break
            if not b:
                break
            if pos + len(b) > skip:
                out += b[max(0, skip - pos):]
            pos += len(b)
    finally:
        f.close()
    return bytes(out)


def _damage_after(acc, path, name, done, first, line_offset, exc, header=False):
    """``exc`` (a stream's damage) unless a whole line the parser had not reached before
    it is bad: then that line's error (:func:`before_damage`; ``header``: the header line
    is still to come, and is skipped)."""
    data = bytearray(before_damage(path, done))
    if first:   # the head's checks, as a block read whole makes them
        bad = nul_refusal(name, data[:BINARY_HEAD], 1 + line_offset)
        if bad is not None:
            return bad
        if data[:3] == b"\xef\xbb\xbf":
            data[:3] = b"   "
    cut = data.rfind(b"\n") + 1
    if cut:
        with memoryview(data) as mv:
            consumed = (feed_after_header(acc, mv[:cut], True) if header
                        else acc.feed(mv[:cut], False))
        if consumed < 0:
            line, msg = error_message(acc.error)
            return InputError(name, None if line is None else line + line_offset, msg)
    return exc


def unless_corrupt(stream, path, kind, err):
    """``err`` (a problem in the text of the compressed stream ``stream``), unless the
    rest of the stream is corrupt: then that damage (:func:`damage_error`).  Corrupt data
    is refused as such before any problem of the text, whatever block it lies in -- the
    lines a decoder put out before it noticed the damage (a gzip member's CRC is checked
    at its end) may be no lines of the file -- as on K ranks, where rank 0 decompresses
    the whole stream (:func:`asapgraph.partition.reading._stream_from_rank0`); on one
    process a bad line before the damage was named when it lay in an earlier block than
    the damage (which blocks depended on the file's size and the threads).  An error
    path: the rest of the stream is decompressed.  A stream that merely ends early
    keeps ``err`` (a line before the cut is the file's own)."""
    if kind is None or not isinstance(err, InputError):
        return err
    scratch = bytearray(1 << 20)
    with memoryview(scratch) as mv:
        try:
            while _read_fill(stream, mv, path, kind):
                pass
        except InputError as exc:
            if getattr(exc, "truncated", None) is False:
                return exc
    return err


def feed_blocks(stream, acc, path, kind=None, chunk_bytes=CHUNK_BYTES, total=None,
                progress=None, line_offset=0, header=False):
    """Feed all of ``stream`` to the accumulator ``acc``, block by block (a generator).

    Yields ``acc`` after each block has been parsed (the consumer may ``take()``
    the edges, which bounds memory for chunked reading).  ``line_offset`` is
    added to error line numbers (lines consumed before the stream was handed
    over, e.g. .mtx headers).  ``header``: the stream starts at the file's start and its
    first line that is neither blank nor a comment is a header, skipped
    (:func:`feed_after_header`).  Raises InputError on the first problem.
    """
    prog = _get_progress(progress)
    name = display_name(path)
    chunk_bytes = max(int(chunk_bytes), 1 << 12)
    # start small (small files, unknown sizes) and grow up to chunk_bytes
    start = min(chunk_bytes, total + 1 if total is not None else 1 << 20)
    buf = bytearray(max(start, 1 << 12))
    carry = 0
    done = 0
    first = True
    while True:
        mv = memoryview(buf)
        try:
            got = _read_fill(stream, mv[carry:], path, kind)
        except InputError as exc:
            mv.release()
            # (a .mtx: its header is not counted in done; corrupt data: see damage_error)
            if kind is None or line_offset or not getattr(exc, "truncated", False):
                raise
            raise _damage_after(acc, path, name, done, first, line_offset, exc,
                                header) from None
        filled = carry + got
        if first:
            first = False
            bad = nul_refusal(name, buf[: min(filled, BINARY_HEAD)], 1 + line_offset)
            if bad is not None:
                mv.release()
                raise unless_corrupt(stream, path, kind, bad)
            if buf[:3] == b"\xef\xbb\xbf":  # UTF-8 byte order mark: blank it out
                buf[:3] = b"   "
            if bytes(buf[:14]) == b"%%MatrixMarket" and line_offset == 0:
                # (files are recognised before; stdin is not): its size line is no edge
                mv.release()
                raise unless_corrupt(stream, path, kind, InputError(name, 1, MTX_IN_STREAM))
        if filled == 0:
            mv.release()
            break
        if header:   # (until the header line has been seen whole)
            consumed = feed_after_header(acc, mv[:filled], got == 0)
            header = consumed is None
            consumed = 0 if header else consumed
        else:
            consumed = acc.feed(mv[:filled], got == 0)
        if consumed < 0:
            line, msg = error_message(acc.error)
            mv.release()
            raise unless_corrupt(stream, path, kind, InputError(
                name, None if line is None else line + line_offset, msg))
        done += consumed
        rest = filled - consumed
        if got == 0:
            mv.release()
            yield acc
            break
        if rest == len(buf):  # one line longer than the buffer: grow it
            mv.release()
            buf.extend(bytes(len(buf)))
            carry = rest
            continue
        if rest:
            mv[:rest] = mv[consumed:filled]
        mv.release()
        carry = rest
        if filled == len(buf) and len(buf) < chunk_bytes:
            buf.extend(bytes(min(len(buf) * 3, chunk_bytes - len(buf))))
        prog.bytes(done, total, edges=acc.m)
        yield acc


def parse_stream(stream, acc, path, kind=None, chunk_bytes=CHUNK_BYTES, total=None,
                 progress=None, line_offset=0, header=False):
    """Parse all of ``stream`` into ``acc`` (see :func:`feed_blocks`)."""
    for _ in feed_blocks(stream, acc, path, kind, chunk_bytes, total, progress, line_offset,
                         header):
        pass


def parse_mapped(f, acc, path, total, chunk_bytes=CHUNK_BYTES, progress=None, begin=0,
                 stop=None, header=False):
    """Parse the uncompressed file ``f`` (open, binary), bytes ``[begin, stop)`` (whole
    lines; default all), into ``acc`` from a read-only memory map: no copy of the text
    into a buffer (``read`` is a serial memory copy, a sixth of the parse of rmat:22 on
    two threads); the parser threads fault the pages in themselves.  Blocks of
    ``chunk_bytes`` are cut where the previous one's last whole line ended, exactly as
    :func:`feed_blocks` does, and the pages of a parsed block are dropped from this
    process (``MADV_DONTNEED``: the page cache keeps them) so the resident set holds about
    one block of text, as with ``read``.  ``header``: the header line is still to come at
    ``begin`` (only blank and comment lines before it), and is skipped
    (:func:`feed_after_header`).  Returns False (nothing parsed) when the file cannot be
    mapped (then stream it)."""
    import mmap

    try:
        mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return False
    prog = _get_progress(progress)
    name = display_name(path)
    drop = getattr(mmap, "MADV_DONTNEED", None) if hasattr(mm, "madvise") else None
    page = mmap.PAGESIZE
    try:
        if hasattr(mm, "madvise") and hasattr(mmap, "MADV_SEQUENTIAL"):
            mm.madvise(mmap.MADV_SEQUENTIAL)
        size = len(mm) if stop is None else min(int(stop), len(mm))
        pos = int(begin)
        bad = nul_refusal(name, mm[: min(len(mm), BINARY_HEAD)]) if pos == 0 else None
        if bad is not None:  # (a byte range further on: parse_byte_range looked at the head)
            raise bad
        if pos == 0 and mm[:3] == b"\xef\xbb\xbf":  # UTF-8 byte order mark: a blank
            pos = 3
        step = max(int(chunk_bytes), 1 << 12)
        dropped = pos // page * page
        with memoryview(mm) as mv:
            while pos < size:
                end = min(size, pos + step)
                if header:   # (until the header line has been seen whole)
                    consumed = feed_after_header(acc, mv[pos:end], end == size)
                    header = consumed is None
                    consumed = 0 if header else consumed
                else:
                    consumed = acc.feed(mv[pos:end], end == size)
                if consumed < 0:
                    line, msg = error_message(acc.error)
                    raise InputError(name, line, msg)
                if consumed == 0:  # one line longer than the block: widen it
                    step *= 2
                    continue
                pos += consumed
                upto = pos // page * page
                if drop is not None and upto > dropped:
                    mm.madvise(drop, dropped, upto - dropped)
                    dropped = upto
                prog.bytes(pos, total, edges=acc.m)
    finally:
        mm.close()
    return True


def read_text(path, *, weight_col=0, src_col=1, dst_col=2, progress=None,
              chunk_bytes=CHUNK_BYTES, id32=True, counts=False, header=False):
    """Parse a whole text edge list; returns ``(src, dst, weights, info)``.

    ``header``: the file's first line that is neither blank nor a comment is a header
    (``source,target,weight``), skipped whatever it holds; the lines keep their numbers.

    ``info`` holds ``lines`` (physical lines read) and ``max_id`` (largest id); with
    ``counts`` (``load_graph``: unweighted, uncompressed file) also ``counts``, the degree
    counts the parser took as it went (:meth:`~asapgraph.kernels._parse.EdgeAccumulator.
    enable_counts`; None when they were dropped) for :func:`asapgraph.graph.core.
    counted_build`.

    Ids come back as int32 when all fit (``id32``), else int64.  An uncompressed file
    is parsed from a memory map (:func:`parse_mapped`), anything else streamed.
    """
    stream, kind, total = open_binary(path)
    if kind is not None and _graph.max_threads() > 1:  # one thread: decompress inline
        stream = ReadAhead(stream)
    acc = _parse.EdgeAccumulator(src_col, dst_col, weight_col, id32)
    if counts and kind is None and total and not weight_col and id32:
        # the fused build needs N <= m / 4 and a line holds at least 4 bytes ("0 1\n"):
        # no id of a file the build applies to reaches total / 16 (nor 2^31 - 1)
        acc.enable_counts(min(int(total) // 16 + 64, 2**31 - 2))
    try:
        prog = _get_progress(progress)
        prog.stage(f"reading {display_name(path)}")
        if not (kind is None and path != "-" and total
                and parse_mapped(stream, acc, path, total, chunk_bytes, progress,
                                 header=header)):
            parse_stream(stream, acc, path, kind, chunk_bytes, total, progress, header=header)
    finally:
        if path != "-" or isinstance(stream, ReadAhead):
            stream.close()
    if acc.m == 0:
        raise InputError(display_name(path), None, "no edges found")
    info = {"lines": acc.lines, "max_id": acc.max_id}
    if counts:
        info["counts"] = acc.take_counts()
    src, dst, w = acc.take()
    return src, dst, w, info


def as_int64(a):
    return a if a.dtype == np.int64 else a.astype(np.int64)
