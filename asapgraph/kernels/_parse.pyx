# distutils: sources = csrc/asap_parse.c
"""Streaming accumulation of parsed text edge lists (kernel behind ``asapgraph.graph.io``).

Algorithm
---------
The caller (``asapgraph.graph.io._text``) reads the input in large blocks (default
32 MiB) and calls :meth:`EdgeAccumulator.feed` with each block.  ``feed`` parses
the block up to its last newline (the partial last line is left for the next
block) and appends the edges to growable C arrays:

1. the block is split into ``T`` line-aligned pieces (``T`` = OpenMP threads,
   at least 1 MiB per piece);
2. the newlines of each piece are counted (8 bytes at a time): that bounds the edges of the
   piece, so every piece gets its own slot range of the output arrays;
3. the pieces are parsed in parallel (``prange``, no GIL) straight into their
   slots by ``asap_parse_piece`` (csrc/asap_parse.c);
4. the slot ranges are compacted with memmove (comment/blank lines leave gaps).

Variant and invariants
----------------------
* Vertex ids are stored as int32 while every id seen is < 2^31 (the common case:
  8 bytes per edge instead of 16) and the storage is widened to int64 in place
  (once) when a larger id shows up; the block is then parsed again.
* Output arrays grow by ``realloc`` (x1.5, amortised).  Large reallocations are
  ``mremap`` calls in glibc, pages beyond the filled size are never touched, so
  resident memory tracks the edges stored, not the capacity or the text size.
* ``lines`` counts the physical lines consumed so far, so a piece-relative error
  line becomes a file line number.  The first error (in file order) wins.
* :meth:`enable_counts` (``load_graph``): right after a block is parsed, its edges'
  out-degrees and destinations are counted per thread (int32 rows and bit maps in
  zero-filled mappings, the counters prefetched), so the CSR build needs no counting
  pass of its own (``core.counted_build``).  Counting inside ``asap_parse_piece``
  instead, where the next ids are not known for a prefetch, cost 2-4x the CPU.
* :meth:`take` hands the arrays to numpy without copying (the memory is owned by
  a small object that frees it) and resets the accumulator, so the same object
  can produce bounded chunks (``iter_edge_chunks``).

References
----------
W. D. Clinger, "How to read floating point numbers accurately", PLDI 1990
(the exact fast path for short decimal weights in asap_parse.c).
"""
from libc.stdint cimport int32_t, int64_t, uint64_t
from posix.mman cimport (mmap, munmap, madvise, PROT_READ, PROT_WRITE, MAP_PRIVATE,
                         MAP_ANONYMOUS, MAP_FAILED, MADV_NOHUGEPAGE)
from asapgraph.kernels._mapping cimport Mapping
from asapgraph.kernels._typedefs cimport eid_t, vid_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memchr, memmove
from cython.parallel cimport prange

import numpy as np

cimport numpy as cnp

cnp.import_array()

cdef extern from "omp.h" nogil:
    int omp_get_max_threads()

cdef extern from "asap_parse.h" nogil:
    ctypedef struct asap_parse_opts:
        int src_col
        int dst_col
        int weight_col
    ctypedef struct asap_parse_error:
        int code
        int column
        int ncols
        int64_t line
        int64_t tok_off
        int64_t tok_len
    int64_t asap_parse_piece(const char *buf, int64_t len, const asap_parse_opts *o,
                             void *src, void *dst, double *w, int64_t cap, int id32,
                             int64_t *max_id, asap_parse_error *err)
    int64_t asap_count_newlines(const char *buf, int64_t len)
    int64_t asap_count_newlines_nul(const char *buf, int64_t len, int *nul)
    int64_t asap_count_newlines_nul_cr(const char *buf, int64_t len, int *nul, int *cr)
    int64_t asap_first_bare_cr(const char *buf, int64_t len)
    int asap_parse_weight(const char *t, int64_t len, double *out)

# error codes (asap_parse.h)
OK = 0
BAD_ID = 1
NEG_ID = 2
SIGNED_ID = 3
DECIMAL_ID = 4
ID_OVERFLOW = 5
MISSING_COL = 6
BAD_WEIGHT = 7
NONFINITE = 8
BINARY = 9
BARE_CR = 12  # a '\r' not followed by '\n' (Python-side code; the C parser reads it as a blank)
cdef enum:
    NEED64 = 10
    MAXPIECES = 64
    MIN_PIECE = 1048576


cdef class _Owner:
    """Owns a malloc'd block that numpy arrays view (freed with the last view)."""
    cdef void *ptr

    def __dealloc__(self):
        if self.ptr != NULL:
            free(self.ptr)
            self.ptr = NULL


cdef extern from "sys/mman.h":
    int MAP_NORESERVE


cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define asapp_prefetch_w(p) __builtin_prefetch((const void *)(p), 1, 3)
    #else
    #define asapp_prefetch_w(p) ((void)(p))
    #endif
    """
    void asapp_prefetch_w(const void *p) nogil


cdef void *_map_zeroed(size_t length) noexcept:
    """A zero-filled private anonymous mapping of ``length`` bytes (pages faulted on
    first touch, none reserved; 4 KB pages), or NULL."""
    cdef void *p = mmap(NULL, length, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
    if p == MAP_FAILED:
        return NULL
    madvise(p, length, MADV_NOHUGEPAGE)
    return p


cdef object _wrap_mapped(void *ptr, size_t length, int64_t rows, int64_t cols, int typenum):
    """A 2-d ``(rows, cols)`` numpy array viewing (and owning) the mapping ``ptr``."""
    cdef cnp.npy_intp dims[2]
    cdef Mapping owner = Mapping()
    owner.ptr = ptr
    owner.length = length
    dims[0] = <cnp.npy_intp>rows
    dims[1] = <cnp.npy_intp>cols
    arr = cnp.PyArray_SimpleNewFromData(2, dims, typenum, ptr)
    cnp.set_array_base(arr, owner)
    return arr


cdef object _wrap(void *ptr, int64_t count, int typenum, size_t itemsize):
    """A 1-d numpy array owning ``ptr`` (shrunk to ``count`` items)."""
    cdef cnp.npy_intp dims = <cnp.npy_intp>count
    cdef void *p = ptr
    cdef _Owner owner
    if p == NULL:
        p = malloc(8)
    elif count > 0:
        p = realloc(ptr, <size_t>count * itemsize)
        if p == NULL:
            p = ptr
    if p == NULL:
        raise MemoryError()
    owner = _Owner()
    owner.ptr = p
    arr = cnp.PyArray_SimpleNewFromData(1, &dims, typenum, p)
    cnp.set_array_base(arr, owner)
    return arr


cdef class EdgeAccumulator:
    """Growable src/dst(/weight) arrays filled by parsing text blocks.

    Parameters
    ----------
    src_col, dst_col : int
        1-based columns of the source and destination ids.
    weight_col : int
        1-based column of the weight, 0 for unweighted.
    id32 : bool
        Start with int32 id storage (widened to int64 when needed).
    """
    cdef void *src
    cdef void *dst
    cdef double *w
    cdef int64_t _m, cap
    cdef bint _id32
    cdef asap_parse_opts opts
    cdef public int64_t lines
    cdef public int64_t max_id
    cdef public object error
    # degree counts taken while parsing (enable_counts): per piece slot r, out-degree
    # row odeg[r * ccap + id] (int32) and in-presence bit map bits[r * cwords + id / 64]
    cdef int32_t *odeg
    cdef uint64_t *bits
    cdef int64_t ccap, cwords, crows
    cdef size_t odeg_len, bits_len

    def __cinit__(self, int src_col=1, int dst_col=2, int weight_col=0, bint id32=True):
        if src_col < 1 or dst_col < 1 or weight_col < 0 or src_col == dst_col:
            raise ValueError("bad column numbers")
        if weight_col == src_col or weight_col == dst_col:
            raise ValueError("the weight column must differ from the id columns")
        self.opts.src_col = src_col
        self.opts.dst_col = dst_col
        self.opts.weight_col = weight_col
        self._id32 = id32
        self.src = NULL
        self.dst = NULL
        self.w = NULL
        self._m = 0
        self.cap = 0
        self.lines = 0
        self.max_id = -1
        self.error = None
        self.odeg = NULL
        self.bits = NULL
        self.ccap = 0
        self.cwords = 0
        self.crows = 0

    def __dealloc__(self):
        free(self.src)
        free(self.dst)
        free(self.w)
        self._drop_counts()

    cdef void _drop_counts(self) noexcept:
        if self.odeg != NULL:
            munmap(self.odeg, self.odeg_len)
            self.odeg = NULL
        if self.bits != NULL:
            munmap(self.bits, self.bits_len)
            self.bits = NULL
        self.ccap = 0

    def enable_counts(self, int64_t cap):
        """Count, as blocks are parsed, the out-degree and the in-presence of every id
        below ``cap`` (for :meth:`take_counts`; ``load_graph``'s CSR build then needs no
        counting pass over the edges).  Per piece slot (thread) an int32 out-degree row
        and a bit map of the ids seen as destinations, in zero-filled mappings of
        ``cap`` ids whose pages are touched only where ids occur.  The counts are
        dropped (:meth:`take_counts` returns None) when an id reaches ``cap``, the ids
        widen to int64, the edges are weighted or reach 2^31 - 1.  Returns whether
        counting is on."""
        cdef int64_t rows = min(<int64_t>omp_get_max_threads(), <int64_t>MAXPIECES)
        self._drop_counts()
        if cap <= 0 or cap >= 2147483647 or self._m > 0 or not self._id32 or \
                self.opts.weight_col > 0:
            return False
        self.cwords = (cap + 63) // 64
        self.ccap = self.cwords * 64
        self.crows = max(rows, 1)
        self.odeg_len = <size_t>(self.crows * self.ccap) * sizeof(int32_t)
        self.bits_len = <size_t>(self.crows * self.cwords) * sizeof(uint64_t)
        self.odeg = <int32_t *>_map_zeroed(self.odeg_len)
        self.bits = <uint64_t *>_map_zeroed(self.bits_len)
        if self.odeg == NULL or self.bits == NULL:
            self._drop_counts()
            return False
        return True

    @property
    def counting(self):
        """True while degree counts are being taken (:meth:`enable_counts`)."""
        return self.ccap > 0

    def take_counts(self):
        """``(odeg, bits)`` of :meth:`enable_counts` as numpy arrays owning their
        mappings (``(rows, cap)`` int32 out-degrees, ``(rows, cap / 64)`` uint64 bit maps
        of the destinations; rows summed / or'ed give the counts), or None when counting
        is off; counting stops either way."""
        if self.ccap == 0:
            return None
        odeg = _wrap_mapped(self.odeg, self.odeg_len, self.crows, self.ccap, cnp.NPY_INT32)
        self.odeg = NULL
        bits = _wrap_mapped(self.bits, self.bits_len, self.crows, self.cwords, cnp.NPY_UINT64)
        self.bits = NULL
        self.ccap = 0
        return odeg, bits

    @property
    def m(self):
        """Number of edges held."""
        return self._m

    @property
    def id32(self):
        """True while ids are stored as int32."""
        return self._id32

    @property
    def weighted(self):
        return self.opts.weight_col > 0

    cdef int _reserve(self, int64_t need) except -1:
        cdef int64_t newcap
        cdef size_t isz = 4 if self._id32 else 8
        cdef void *p
        if need <= self.cap:
            return 0
        newcap = max(need, self.cap + self.cap // 2, 1 << 16)
        p = realloc(self.src, <size_t>newcap * isz)
        if p == NULL:
            raise MemoryError()
        self.src = p
        p = realloc(self.dst, <size_t>newcap * isz)
        if p == NULL:
            raise MemoryError()
        self.dst = p
        if self.opts.weight_col > 0:
            p = realloc(self.w, <size_t>newcap * sizeof(double))
            if p == NULL:
                raise MemoryError()
            self.w = <double *>p
        self.cap = newcap
        return 0

    cdef int _widen(self) except -1:
        """Switch the id storage from int32 to int64, in place (back to front)."""
        cdef int64_t i
        cdef void *p
        cdef int32_t *s32
        cdef int64_t *s64
        if not self._id32:
            return 0
        for which in range(2):
            p = realloc(self.src if which == 0 else self.dst, <size_t>max(self.cap, 1) * 8)
            if p == NULL:
                raise MemoryError()
            s32 = <int32_t *>p
            s64 = <int64_t *>p
            with nogil:
                i = self._m - 1
                while i >= 0:
                    s64[i] = s32[i]
                    i -= 1
            if which == 0:
                self.src = p
            else:
                self.dst = p
        self._id32 = False
        return 0

    def feed(self, const unsigned char[::1] block, bint final):
        """Parse ``block`` up to its last newline (to its end when ``final``).

        Returns the number of bytes consumed (0 when the block holds no complete
        line), or -1 on an error, described by :attr:`error` as a tuple
        ``(code, line, column, ncols, token_bytes)`` (``line`` is the 1-based
        line number counted from the first block fed).
        """
        cdef int64_t n = block.shape[0]
        cdef const char *buf
        cdef const char *q
        cdef int64_t end, i, T, pos, total_ub, total_k, total_nl, mx, wpos
        cdef int64_t bnd[MAXPIECES + 1]
        cdef int64_t nl[MAXPIECES]
        cdef int nuls[MAXPIECES]
        cdef int crs[MAXPIECES]
        cdef int64_t cr_line, cr_at, err_line, nul_line
        cdef int64_t ub[MAXPIECES]
        cdef int64_t off[MAXPIECES]
        cdef int64_t got[MAXPIECES]
        cdef int64_t mxs[MAXPIECES]
        cdef asap_parse_error errs[MAXPIECES]
        cdef size_t isz
        cdef char *sbase
        cdef char *dbase
        cdef int id32
        cdef int first_err
        cdef int64_t lines_before
        cdef int64_t j
        if n == 0:
            return 0
        buf = <const char *>&block[0]
        if final:
            end = n
        else:
            end = n
            while end > 0 and buf[end - 1] != b'\n':
                end -= 1
            if end == 0:
                return 0
        T = min(<int64_t>omp_get_max_threads(), <int64_t>MAXPIECES, max(<int64_t>1, end // MIN_PIECE))
        bnd[0] = 0
        for i in range(1, T):
            pos = max(end * i // T, bnd[i - 1])
            q = <const char *>memchr(buf + pos, b'\n', <size_t>(end - pos)) if pos < end else NULL
            bnd[i] = (q - buf) + 1 if q != NULL else end
        bnd[T] = end
        # a NUL byte means binary data (checked piece by piece, in parallel): refused at
        # its line unless a parse error or a bare CR comes first in file order (as the
        # ranks' byte ranges find it; the readers refuse a NUL in a file's first 64 KiB
        # before any line is parsed)
        with nogil:
            for i in prange(T, schedule="static", num_threads=T):
                nl[i] = asap_count_newlines_nul_cr(buf + bnd[i], bnd[i + 1] - bnd[i], &nuls[i],
                                                   &crs[i])
        nul_line = -1
        lines_before = self.lines
        for i in range(T):
            if nuls[i]:
                q = <const char *>memchr(buf + bnd[i], 0, <size_t>(bnd[i + 1] - bnd[i]))
                nul_line = lines_before + 1 + asap_count_newlines(buf + bnd[i], q - (buf + bnd[i]))
                break
            lines_before += nl[i]
        total_ub = 0
        total_nl = 0
        for i in range(T):
            ub[i] = nl[i]
            if bnd[i + 1] > bnd[i] and buf[bnd[i + 1] - 1] != b'\n':
                ub[i] += 1
            off[i] = self._m + total_ub
            total_ub += ub[i]
            total_nl += nl[i]
        while True:
            self._reserve(self._m + total_ub)
            isz = 4 if self._id32 else 8
            id32 = 1 if self._id32 else 0
            sbase = <char *>self.src
            dbase = <char *>self.dst
            with nogil:
                for i in prange(T, schedule="static", num_threads=T):
                    got[i] = asap_parse_piece(
                        buf + bnd[i], bnd[i + 1] - bnd[i], &self.opts,
                        sbase + off[i] * isz, dbase + off[i] * isz,
                        (self.w + off[i]) if self.w != NULL else NULL,
                        ub[i], id32, &mxs[i], &errs[i])
            first_err = -1
            for i in range(T):
                if errs[i].code != 0:
                    first_err = i
                    break
            if first_err >= 0 and errs[first_err].code == NEED64:
                self._widen()
                continue
            break
        # a bare CR (old Mac line ends: "0 1\r1 2\r" would read as one line): its line,
        # refused unless a parse error comes first in file order (a line is '\n'-ended,
        # so one process and each rank's byte range find the same first one)
        cr_line = -1
        lines_before = self.lines
        for i in range(T):
            if crs[i]:
                cr_at = asap_first_bare_cr(buf + bnd[i], bnd[i + 1] - bnd[i])
                if cr_at >= 0:
                    cr_line = lines_before + 1 + asap_count_newlines(buf + bnd[i], cr_at)
                    break
            lines_before += nl[i]
        err_line = -1
        if first_err >= 0:
            i = first_err
            lines_before = self.lines
            for j in range(i):
                lines_before += nl[j]
            err_line = lines_before + errs[i].line
        if nul_line >= 0 and (err_line < 0 or nul_line <= err_line) and (
                cr_line < 0 or nul_line <= cr_line):
            self.error = (BINARY, nul_line, 0, 0, b"")
            return -1
        if cr_line >= 0 and (err_line < 0 or cr_line <= err_line):
            self.error = (BARE_CR, cr_line, 0, 0, b"")
            return -1
        if first_err >= 0:
            i = first_err
            tok = bytes(block[bnd[i] + errs[i].tok_off: bnd[i] + errs[i].tok_off + min(errs[i].tok_len, 60)])
            self.error = (errs[i].code, err_line, errs[i].column,
                          errs[i].ncols, tok)
            return -1
        # compact the pieces
        wpos = self._m
        mx = self.max_id
        for i in range(T):
            if got[i] and off[i] != wpos:
                memmove(sbase + wpos * isz, sbase + off[i] * isz, <size_t>got[i] * isz)
                memmove(dbase + wpos * isz, dbase + off[i] * isz, <size_t>got[i] * isz)
                if self.w != NULL:
                    memmove(self.w + wpos, self.w + off[i], <size_t>got[i] * sizeof(double))
            wpos += got[i]
            if mxs[i] > mx:
                mx = mxs[i]
        if self.ccap > 0:
            if not self._id32 or mx >= self.ccap or self.w != NULL or T > self.crows or \
                    wpos >= 2147483647:
                self._drop_counts()
            elif wpos > self._m:
                self._count(self._m, wpos, T)
        self._m = wpos
        self.max_id = mx
        self.lines += total_nl
        if final and end > 0 and buf[end - 1] != b'\n':
            self.lines += 1
        return end

    cdef void _count(self, int64_t a, int64_t b, int64_t T) noexcept:
        """Degree counts of the edges ``[a, b)`` just parsed (int32 ids below ``ccap``),
        on ``T`` threads, thread ``i`` into row ``i``, while the block's arrays are still
        in cache: a separate loop, so that the counters can be prefetched (counting
        inside the parser, where the next ids are not known yet, missed on every edge:
        2-4x the CPU)."""
        cdef const int32_t *s = <const int32_t *>self.src
        cdef const int32_t *d = <const int32_t *>self.dst
        cdef int32_t *od
        cdef uint64_t *bt
        cdef int64_t i, e, lo, hi, v
        cdef int64_t span = b - a
        with nogil:
            for i in prange(T, schedule="static", num_threads=T):
                lo = a + span * i // T
                hi = a + span * (i + 1) // T
                od = self.odeg + i * self.ccap
                bt = self.bits + i * self.cwords
                for e in range(lo, hi):
                    if e + 32 < hi:
                        asapp_prefetch_w(&od[s[e + 32]])
                    od[s[e]] += 1
                    v = d[e]
                    bt[v >> 6] |= (<uint64_t>1) << (v & 63)

    def take(self, bint as_int64=False):
        """Hand over ``(src, dst, weights)`` as numpy arrays and reset to empty.

        ``as_int64`` converts int32 storage to int64 (``read_edges`` contract);
        otherwise the arrays are int32 when every id fit.
        """
        cdef int typenum = cnp.NPY_INT32 if self._id32 else cnp.NPY_INT64
        cdef size_t isz = 4 if self._id32 else 8
        src = _wrap(self.src, self._m, typenum, isz)
        self.src = NULL
        dst = _wrap(self.dst, self._m, typenum, isz)
        self.dst = NULL
        w = None
        if self.opts.weight_col > 0:
            w = _wrap(self.w, self._m, cnp.NPY_FLOAT64, sizeof(double))
            self.w = NULL
        self._m = 0
        self.cap = 0
        if as_int64 and typenum == cnp.NPY_INT32:
            src = src.astype(np.int64)
            dst = dst.astype(np.int64)
        return src, dst, w


def parse_weight(bytes token):
    """Parse one weight token with the C parser: ``(code, value)`` (a test twin)."""
    cdef double v = 0.0
    cdef int rc = asap_parse_weight(token, len(token), &v)
    return rc, v


def count_newlines(const unsigned char[::1] block):
    """Number of ``\\n`` bytes in ``block`` (nogil, 8 bytes at a time)."""
    cdef int64_t r
    if block.shape[0] == 0:
        return 0
    with nogil:
        r = asap_count_newlines(<const char *>&block[0], block.shape[0])
    return r
