"""A corrupt (not truncated) compressed edge list is refused alike on 1 process and on
K ranks: ``FILE: corrupt or truncated KIND data``, no line number, exit 2.

Rank 0 decompresses the whole stream for the ranks and refuses corrupt data as such
before any line's error (the lines a decoder puts out before it notices the damage may
be no lines of the file: a gzip member's CRC is checked at its end).  One process named
the first bad line instead when it lay in a block it had parsed before the block in
which the decoder failed -- which depended on the file's size and on the threads
(``--threads 1`` reads 1 MiB blocks, more threads decompress 4 MiB ahead):

* a byte flipped in the middle of a gzip stream (stored blocks: the flipped byte is a
  letter in the text; deflated: the decoder's garbage; both caught by the CRC at the end):
  ``FILE:LINE: ...`` on one process, the damage on K ranks;
* a bad line at line 5 and a corrupt CRC trailer (gzip) or a corrupt last block (bz2,
  xz): line 5 on one process (``--threads 1`` only for a file of less than 4 MiB), the
  damage on K ranks.

Now the damage everywhere (one process reads the rest of a compressed stream after a
problem in its text: :func:`asapgraph.graph.io._text.unless_corrupt`).
"""
import bz2
import gzip
import lzma
import zlib

import pytest

pytestmark = [pytest.mark.mpi, pytest.mark.timeout(900)]

ROWS = 600_000   # ~8 MB of text: several blocks of the one-process reader
CONFIGS = [[], ["--threads", "1"], ["--np", "2"], ["--np", "3", "--mode", "asap"]]


def _text(bad5=None):
    rows = [f"{i} {(i * 7919) % 500_000}" for i in range(ROWS)]
    if bad5 is not None:
        rows[4] = bad5
    return ("\n".join(rows) + "\n").encode()


def _stored_flip(path):
    """gzip with stored (uncompressed) blocks, the text of line 1001 turned into '100x
    ...' in the middle of the stream: the decoder puts it out, the CRC refuses it."""
    data = _text()
    z = bytearray(gzip.compress(data, compresslevel=0, mtime=0))
    at = z.find(b"\n1000 ")
    assert at > 0 and z.find(b"\n1000 ", at + 1) < 0
    z[at + 4] = ord("x")    # '1000 ...' -> '100x ...'
    path.write_bytes(bytes(z))


def _refused(line):
    """True for a line the reader refuses (fewer than two ids, an id not an integer)."""
    f = line.split()
    return len(f) < 2 or not (f[0].isdigit() and f[1].isdigit())


def _deflate_flip(path):
    """A bit flipped at about 5% of a deflate stream (in the first MiB of text) where the
    decoder does not notice it (the first such bit: most are): it puts out garbage text
    -- a bad line -- and only the CRC at the end refuses the member."""
    data = _text()
    z = gzip.compress(data, compresslevel=6, mtime=0)
    for pos in range(int(len(z) * 0.05), int(len(z) * 0.1)):
        for bit in (0x10, 0x01, 0x80):
            y = bytearray(z)
            y[pos] ^= bit
            try:
                out = zlib.decompress(bytes(y[10:-8]), -15)   # the raw deflate stream
            except zlib.error:
                continue
            if out != data and any(_refused(t) for t in out.split(b"\n")[:-1]):
                path.write_bytes(bytes(y))
                return
    pytest.fail("no silent bit flip found")   # pragma: no cover


def _crc_trailer(path):
    """A bad line 5, and a corrupt CRC in the gzip trailer (every byte of text intact)."""
    z = bytearray(gzip.compress(_text("1 x"), mtime=0))
    z[-8] ^= 0xFF
    path.write_bytes(bytes(z))


def _late_damage(comp):
    def make(path):
        z = bytearray(comp(_text("1 x")))
        for i in range(int(len(z) * 0.9), int(len(z) * 0.9) + 16):
            z[i] ^= 0xFF
        path.write_bytes(bytes(z))
    return make


CASES = {"stored-flip.txt.gz": (_stored_flip, "gzip"),
         "deflate-flip.txt.gz": (_deflate_flip, "gzip"),
         "crc-trailer.txt.gz": (_crc_trailer, "gzip"),
         "late.txt.bz2": (_late_damage(lambda d: bz2.compress(d, 9)), "bz2"),
         "late.txt.xz": (_late_damage(lambda d: lzma.compress(d, preset=0)), "xz")}


@pytest.mark.parametrize("name", list(CASES))
def test_corrupt_compressed_is_refused_alike(tmp_path, name, refused_alike, refusal):
    make, kind = CASES[name]
    make(tmp_path / name)
    want = f"{name}: corrupt or truncated {kind} data"
    assert refused_alike(tmp_path, ["pagerank", name], configs=CONFIGS,
                         output="out.csv") == want
    # the library's readers alike (the path as given to them)
    assert refusal(tmp_path / name) == f"{tmp_path / name}: corrupt or truncated {kind} data"


@pytest.mark.parametrize("command", [["wcc"], ["sssp", "--source", "0"], ["katz"]])
def test_other_programs_alike(tmp_path, command, refused_alike):
    _stored_flip(tmp_path / "g.txt.gz")
    assert refused_alike(tmp_path, [command[0], "g.txt.gz", *command[1:]],
                         configs=[[], ["--np", "2"], ["--np", "3", "--mode", "asap"]],
                         output="out.csv") == "g.txt.gz: corrupt or truncated gzip data"
