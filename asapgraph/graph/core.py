"""The in-memory graph: dense vertex ids, in-CSR for pull kernels, original-id map.

Semantics (the same as networkx's MultiDiGraph and igraph's): every input edge is one
edge.  Duplicate ``(u, v)`` pairs are parallel edges (their weights add up in PageRank,
Katz and HITS; shortest paths use the lightest parallel edge), self-loops are kept.
Vertex ids seen in the input are remapped to dense internal ids ``0..n-1``;
``Graph.ids[i]`` is the original id of internal vertex ``i``
(``None`` when the two coincide), and every output is reported with original ids.
"""
from __future__ import annotations

import numpy as np

from asapgraph.kernels._typedefs import EID, WEIGHT, vid_dtype


def _check_shapes(indptr, indices, weights):
    """O(1) checks of the CSR arrays given to :class:`Graph` (ValueError): the kernels
    index with them unchecked, so ``Graph([0, 1, 3], [1, 0])`` was a segmentation fault."""
    if indptr.ndim != 1 or indptr.shape[0] < 1:
        raise ValueError(f"Graph: indptr must be a 1-d array of n + 1 >= 1 offsets, got "
                         f"shape {indptr.shape}")
    if indices.ndim != 1 or indices.dtype.kind not in "iu":
        raise ValueError(f"Graph: indices must be a 1-d integer array, got shape "
                         f"{indices.shape}, dtype {indices.dtype}")
    m = indices.shape[0]
    if indptr[0] != 0 or indptr[-1] != m:
        raise ValueError(f"Graph: indptr must start at 0 and end at len(indices) = {m}, "
                         f"got {int(indptr[0])} ... {int(indptr[-1])}")
    if weights is not None and weights.shape != (m,):
        raise ValueError(f"Graph: weights must have one value per edge ({m}), got shape "
                         f"{weights.shape}")


def _check_rows(indptr, indices):
    """O(n + m) checks of CSR arrays from outside the package (ValueError): ``indptr``
    non-decreasing and every index a vertex (the kernels read out of bounds otherwise:
    pagerank of ``Graph([0, 2, 1, 2], [1, 0])`` returned ranks, of ``Graph([0, 1], [5])``
    a broadcast error from inside it).  Not run when ``out_degree`` is given: the
    package's builders pass it, for arrays they made (a binary file is checked on load)."""
    n = indptr.shape[0] - 1
    bad = np.flatnonzero(indptr[1:] < indptr[:-1])
    if bad.size:
        v = int(bad[0])
        raise ValueError(f"Graph: indptr must be non-decreasing, got indptr[{v + 1}] = "
                         f"{int(indptr[v + 1])} < indptr[{v}] = {int(indptr[v])}")
    if indices.shape[0]:
        lo, hi = int(indices.min()), int(indices.max())
        if lo < 0 or hi >= n:
            raise ValueError(f"Graph: indices must be vertex ids in [0, {n}), got "
                             f"{lo if lo < 0 else hi}")


class Graph:
    """A directed graph stored as an in-CSR (for each vertex, its in-edges).

    Attributes
    ----------
    n, m : int
        Number of vertices and edges (parallel edges and self-loops count).
    indptr : int64 array, shape (n+1,)
        In-edges of ``v`` are ``indices[indptr[v]:indptr[v+1]]``.
    indices : int32 (or int64 when n >= 2**31) array, shape (m,)
        Source vertex of each in-edge.
    weights : float64 array, shape (m,), or None
        Edge weights aligned with ``indices`` (None: unweighted, every weight 1).
    out_degree : int64 array, shape (n,)
        Number of out-edges of each vertex.
    out_weight : float64 array, shape (n,), or None
        Sum of out-edge weights (weighted graphs only).
    ids : int64 array, shape (n,), or None
        Original id of each internal vertex (None: ids are 0..n-1).
    labels : array, shape (n,), or None
        Original label of each internal vertex when the input named vertices by strings or
        other hashable objects (:mod:`asapgraph.graph.convert`); ``ids`` is then None and every
        result reports these labels (``to_dict``, ``to_pandas``).
    """

    __slots__ = ("n", "m", "indptr", "indices", "weights", "out_degree", "out_weight",
                 "ids", "_out_csr", "source", "labels", "weight_col",
                 "header")  # (weight_col, header: where a refusal finds a weight's line)

    def __init__(self, indptr, indices, weights=None, out_degree=None, out_weight=None,
                 ids=None, source=None):
        self.indptr = np.asarray(indptr, dtype=EID)
        self.indices = np.asarray(indices)
        if self.indices.shape == (0,) and self.indices.dtype.kind not in "iu":
            self.indices = self.indices.astype(np.int32)   # np.asarray([]) is float64
        self.weights = None if weights is None else np.asarray(weights, dtype=WEIGHT)
        _check_shapes(self.indptr, self.indices, self.weights)
        self.n = int(self.indptr.shape[0] - 1)
        self.m = int(self.indices.shape[0])
        if out_degree is None:   # arrays from outside (the builders pass out_degree)
            _check_rows(self.indptr, self.indices)
            out_degree = np.bincount(self.indices, minlength=self.n).astype(np.int64)
        self.out_degree = np.asarray(out_degree, dtype=np.int64)
        if self.weights is not None and out_weight is None:
            out_weight = np.bincount(self.indices, weights=self.weights,
                                     minlength=self.n).astype(np.float64, copy=False)
        self.out_weight = out_weight
        self.ids = ids
        self.source = source
        self._out_csr = None
        self.labels = None

    # ------------------------------------------------------------------ builders
    @classmethod
    def from_edges(cls, src, dst, n=None, weights=None, ids=None, source=None,
                   undirected=False, _trusted=False):
        """Build from dense-id edge arrays ``src[i] -> dst[i]`` (ids in ``0..n-1``).

        Parameters
        ----------
        src, dst : int arrays, shape (m,)
            Dense ids (int32 or int64; other integer dtypes are converted).
        n : int, optional
            Number of vertices (default: largest id + 1).
        weights : float array, shape (m,), optional
        ids : int64 array, shape (n,), optional
            Original id of each dense vertex (None: the dense ids are the ids).
        undirected : bool
            Also add ``dst -> src`` for every non-loop edge (a self-loop once).

        Construction is a stable counting sort by destination (``_graph.build_in_csr``),
        O(n + m) time, no argsort.
        """
        from asapgraph.kernels import _graph

        src = _as_vid(src)
        dst = _as_vid(dst)
        if src.shape != dst.shape or src.ndim != 1:
            raise ValueError("src and dst must be 1-d arrays of the same length")
        if dst.dtype != src.dtype:
            src, dst = src.astype(np.int64), dst.astype(np.int64)
        m = src.shape[0]
        if m and not _trusted:
            (lo1, hi1), (lo2, hi2) = _graph.minmax(src), _graph.minmax(dst)
            lo, hi = min(lo1, lo2), max(hi1, hi2)
            if lo < 0:
                raise ValueError(f"dense vertex ids must be >= 0, got {lo}")
        else:
            hi = -1
        if _trusted:
            pass
        elif n is None:
            n = int(hi) + 1
        elif hi >= n:
            raise ValueError(f"vertex id {hi} out of range for n={n}")
        n = int(n)
        w = None
        if weights is not None:
            w = np.ascontiguousarray(weights, dtype=WEIGHT)
            if w.shape != (m,):
                raise ValueError("weights must have the same length as src")
        if undirected:
            loops = int(np.count_nonzero(src == dst)) if m else 0
            mm = 2 * m - loops
        else:
            mm = m
        indices = np.empty(mm, dtype=vid_dtype(n))
        wout = None if w is None else np.empty(mm, dtype=WEIGHT)
        indptr, out_degree, out_weight = _graph.build_in_csr(
            src, dst, n, indices, w, wout, bool(undirected))
        return cls(indptr, indices, wout, out_degree, out_weight, ids, source)

    @classmethod
    def from_original_ids(cls, src, dst, weights=None, undirected=False, source=None,
                          inplace=False, max_id=None, _consume=False):
        """Build from edges given with arbitrary non-negative int64 ids (remapped densely).

        Dense ids follow the order of the original ids.  With ``inplace=True`` the
        (int32/int64) ``src``/``dst`` arrays are overwritten by dense ids when
        possible, saving a copy (the caller must not use them afterwards).
        ``_consume=True`` (internal: ``load_graph``, for the parser's own arrays, which
        share memory with nothing else) lets the build hand their pages back as it reads
        them (:func:`remap_build` ``release``).
        """
        src = np.asarray(src)
        dst = np.asarray(dst)
        if src.dtype not in (np.int32, np.int64):
            src = src.astype(np.int64)
        if dst.dtype != src.dtype:
            dst = dst.astype(src.dtype)
        if not undirected:
            g = _fused_build(src, dst, weights, max_id, source, consume=_consume)
            if g is not None:
                return g
        ids, (s, d) = remap_ids(src, dst, inplace=inplace, max_id=max_id)
        del src, dst
        if ids is not None:
            n = len(ids)
        elif max_id is not None:
            n = int(max_id) + 1
        else:
            n = 0 if s.size == 0 else int(max(_minmax(s)[1], _minmax(d)[1])) + 1
        # remap_ids guarantees 0 <= ids < n: skip the range check
        return cls.from_edges(s, d, n=n, weights=weights, ids=ids, source=source,
                              undirected=undirected, _trusted=True)

    @classmethod
    def from_scipy(cls, matrix, *, weighted=None, source=None):
        """Graph of a scipy sparse matrix ``A[u, v]`` = weight of ``u -> v``; see
        :func:`asapgraph.graph.convert.from_scipy`."""
        from asapgraph.graph.convert import from_scipy

        return from_scipy(matrix, weighted=weighted, source=source)

    @classmethod
    def from_pandas(cls, df, source="source", target="target", weight=None, *,
                    undirected=False):
        """Graph of a pandas edge DataFrame; see :func:`asapgraph.graph.convert.from_pandas`."""
        from asapgraph.graph.convert import from_pandas

        return from_pandas(df, source=source, target=target, weight=weight,
                           undirected=undirected)

    @classmethod
    def from_arrow(cls, table, source=None, target=None, weight=None, *, undirected=False):
        """Graph of a pyarrow Table of edges; see :func:`asapgraph.graph.convert.from_arrow`."""
        from asapgraph.graph.convert import from_arrow

        return from_arrow(table, source=source, target=target, weight=weight,
                          undirected=undirected)

    @classmethod
    def from_labels(cls, src, dst, weights=None, *, undirected=False, source=None):
        """Graph of edges between arbitrary hashable labels (strings, tuples, ...); see
        :func:`asapgraph.graph.convert.from_labels`."""
        from asapgraph.graph.convert import from_labels

        return from_labels(src, dst, weights, undirected=undirected, source=source)

    # ------------------------------------------------------------------ views
    def vertex_labels(self):
        """Original label of every internal vertex: ``labels`` when set, else the ids."""
        return self.original_ids() if self.labels is None else self.labels

    def original_ids(self):
        """Original id of every internal vertex (int64 array of length n)."""
        return np.arange(self.n, dtype=np.int64) if self.ids is None else self.ids

    def out_csr(self):
        """``(indptr, indices, weights)`` of the out-CSR (built once, cached)."""
        if self._out_csr is None:
            from asapgraph.kernels import _graph

            indices = np.ascontiguousarray(self.indices)
            out_idx = np.empty(self.m, dtype=indices.dtype)
            w = None if self.weights is None else np.ascontiguousarray(self.weights)
            wout = None if w is None else np.empty(self.m, dtype=WEIGHT)
            indptr = _graph.transpose_csr(np.ascontiguousarray(self.indptr), indices,
                                          np.ascontiguousarray(self.out_degree, dtype=np.int64),
                                          out_idx, w, wout)
            self._out_csr = (indptr, out_idx, wout)
        return self._out_csr

    def edges(self):
        """``(src, dst, weights)`` dense-id arrays of all edges (in-CSR order)."""
        dst = np.repeat(np.arange(self.n, dtype=np.int64), np.diff(self.indptr))
        return self.indices.astype(np.int64), dst, self.weights

    def to_scipy(self):
        """The adjacency matrix ``A[u, v] = sum of weights of edges u->v`` (CSR, float64)."""
        import scipy.sparse as sp

        data = np.ones(self.m) if self.weights is None else self.weights
        # in-CSR of A is the CSR of A.T
        at = sp.csr_matrix((data, self.indices, self.indptr), shape=(self.n, self.n))
        return at.T.tocsr()

    @property
    def weighted(self):
        return self.weights is not None

    def nbytes(self):
        tot = self.indptr.nbytes + self.indices.nbytes + self.out_degree.nbytes
        for a in (self.weights, self.out_weight, self.ids):
            if a is not None:
                tot += a.nbytes
        return tot

    def __repr__(self):
        return f"Graph(n={self.n}, m={self.m}, weighted={self.weighted})"


def _as_vid(a):
    a = np.asarray(a)
    if a.dtype == np.int32 or a.dtype == np.int64:
        return np.ascontiguousarray(a)
    if a.dtype.kind not in "iu":
        raise ValueError(f"vertex ids must be integers, got dtype {a.dtype}")
    return np.ascontiguousarray(a, dtype=np.int64)


def _minmax(a):
    from asapgraph.kernels import _graph

    return _graph.minmax(_as_vid(a))


#: The fused build places edges block by block (cache-sized counting sorts) from this
#: many edges on; below, the whole ``indices`` array stays in cache anyway.
BLOCKED_MIN_EDGES = 1 << 22
#: Edges in a destination block of the blocked placement, on average.
BLOCK_EDGES = 1 << 16
#: The same when the placement writes 4 KB pages (``remap_build(release=True)``): half
#: as many blocks, so half as many pages written at once (TLB misses; measured on
#: rmat:22: 0.94-1.07 s of placement CPU against 1.11-1.24 s with ``BLOCK_EDGES``).
BLOCK_EDGES_SMALL_PAGES = 1 << 17
#: ``remap_build(release=True)``: a placing thread hands back its consumed pages of
#: ``src``/``dst`` every this many edges (4 MB of int32 per array).
RELEASE_EDGES = 1 << 20


def block_span(m, n, block_edges=None):
    """Dense ids per destination block of the fused build's blocked placement (0: do not
    block): the power of two that puts about ``block_edges`` (default ``BLOCK_EDGES``)
    of ``m`` edges in a block of ``n`` ids, at most 65536."""
    if m < BLOCKED_MIN_EDGES:
        return 0
    block_edges = BLOCK_EDGES if block_edges is None else block_edges
    span = max(1, min(65536, n * block_edges // m))
    return 1 << (span.bit_length() - 1)


def remap_build(src, dst, N, T, weights=None, span=None, release=False):
    """The fused id remap + in-CSR build of original-id edges in ``0..N-1`` on ``T``
    threads (:func:`asapgraph.kernels._graph.remap_count`, ``remap_scan``, then
    ``remap_place`` or, unweighted and large, ``remap_place_blocked``; ``span`` forces
    the block span, 0 the unblocked placement).  Returns ``(n, indptr, indices, outdeg,
    ids, outw, wout)``; ``indptr``/``outdeg``/``ids``/``outw`` have ``N`` (+1) entries
    of which the first ``n`` (+1) are filled (``indptr``/``outdeg``/``ids`` in mappings of
    their own: :func:`asapgraph.kernels._graph.small_page_shrink` cuts them to ``n`` (+1)
    without a copy).

    ``release=True``: ``src``/``dst`` are destroyed (their pages handed back while the
    blocked placement consumes them; ``load_graph`` passes the parser's arrays).  The
    output ``indices`` is then written in 4 KB pages that take those pages over, which
    keeps both the fresh memory a load touches and its peak about 6 bytes per edge lower
    (benchmarks/REPORT.md, issue 13, "Seventeenth session").
    """
    from asapgraph.kernels import _graph

    m = src.shape[0]
    cdt = np.int32 if m < 2**31 - 1 else np.int64
    cin = np.zeros((T, N), dtype=cdt)
    cout = np.zeros((1, N), dtype=cdt)
    _graph.remap_count(src, dst, cin, cout)
    # written in order, the first n (+1) entries only: 4 KB pages (only those are touched)
    indptr = _graph.small_page_empty(N + 1, EID)
    outdeg = _graph.small_page_empty(N, np.int64)
    ids = _graph.small_page_empty(N, np.int64)
    blocks = BLOCK_EDGES_SMALL_PAGES if release else BLOCK_EDGES
    span = block_span(m, N, blocks) if span is None else span
    span = 0 if weights is not None else span
    bcount = np.zeros((T, (N + span - 1) // span + 1), dtype=np.int64) if span else None
    n = _graph.remap_scan(cin, cout, indptr, outdeg, ids, span, bcount)
    if span:
        brun = indptr[np.minimum(np.arange(0, n + span, span), n)]
        if T * np.diff(brun).max(initial=0) <= max(m // 8, T * blocks):
            del cin  # the blocked placement needs only the lookup (2 bytes per edge)
            if release:
                indices = _graph.small_page_empty(m, np.int32)
                _graph.remap_place_blocked(src, dst, cout, indices, indptr, n, brun, bcount,
                                           span, release=True, small_pages=True,
                                           release_step=RELEASE_EDGES)
            else:
                indices = np.empty(m, dtype=np.int32)
                _graph.remap_place_blocked(src, dst, cout, indices, indptr, n, brun, bcount,
                                           span)
            return n, indptr, indices, outdeg, ids, None, None
    indices = np.empty(m, dtype=np.int32)
    wout = None if weights is None else np.empty(m, dtype=WEIGHT)
    outw = None if weights is None else np.zeros(N, dtype=WEIGHT)
    _graph.remap_place(src, dst, cin, cout, indices, weights, wout, outw)
    return n, indptr, indices, outdeg, ids, outw, wout


def _fused_build(src, dst, weights, max_id, source, consume=False):
    """The Graph of original-id edges by the fused remap + counting sort
    (:func:`remap_build`; ``consume``: its ``release``), or None when it does not apply.

    It applies to directed edges whose largest id ``N - 1`` is small next to the edge
    count: its per-thread degree counters take ``(T + 1) N`` ints, so ``T`` is capped at
    ``m / (4 N)`` (at most 2 bytes per edge); when that leaves one thread on a machine
    with more, the unfused path (parallel, ``n``-sized counters) is used.  The result is
    the same Graph as the unfused path (same dense ids, same stable edge order).
    """
    from asapgraph.kernels import _graph

    src, dst = _as_vid(src), _as_vid(dst)
    m = src.shape[0]
    if m == 0 or src.dtype != dst.dtype or src.shape != dst.shape:
        return None
    if max_id is None:
        (lo1, hi1), (lo2, hi2) = _graph.minmax(src), _graph.minmax(dst)
        if min(lo1, lo2) < 0:
            return None  # remap_ids raises the error
        max_id = max(hi1, hi2)
    N = int(max_id) + 1
    if N >= 2**31 - 1 or 4 * N > m:
        return None
    w = None
    if weights is not None:
        w = np.ascontiguousarray(weights, dtype=WEIGHT)
        if w.shape != (m,):
            return None
    avail = max(1, int(_graph.max_threads()))
    T = max(1, min(avail, 64, m // (4 * N), m // 65536 + 1))
    if T == 1 and avail > 1 and m > (1 << 20):
        return None
    n, indptr, indices, outdeg, ids, outw, wout = remap_build(src, dst, N, T, w,
                                                              release=consume)
    del src, dst
    if n == N:
        ids = None
    else:
        shrink = _graph.small_page_shrink
        indptr, outdeg, ids = shrink(indptr, n + 1), shrink(outdeg, n), shrink(ids, n)
        if outw is not None:
            outw = outw[:n].copy()
    return Graph(indptr, indices, wout, outdeg, outw, ids, source)


def counted_build(src, dst, counts, max_id, source):
    """The Graph of the parser's original-id edges (int32) from the degree counts it took
    while parsing (``counts``: :meth:`asapgraph.kernels._parse.EdgeAccumulator.take_counts`,
    consumed), or None when the fused build would not apply (then ``src``/``dst`` are
    intact; the caller builds without the counts).  The same Graph as
    :func:`_fused_build` (same dense ids, indptr, stable edge order): the steps are
    :func:`asapgraph.kernels._graph.counted_scan`, ``counted_blocks`` and
    ``counted_place`` -- no counting pass over the edges, the id scan on every thread,
    blocks of original ids.  ``src``/``dst`` are destroyed when a Graph is returned
    (their pages handed back as the placement reads them, as ``remap_build(release=True)``).
    """
    from asapgraph.kernels import _graph

    m = src.shape[0]
    N = int(max_id) + 1
    odeg, bits = counts
    counts = None
    if (m == 0 or src.dtype != np.int32 or dst.dtype != np.int32 or dst.shape != src.shape
            or N >= 2**31 - 1 or 4 * N > m or odeg.shape[1] < N):
        return None
    avail = max(1, int(_graph.max_threads()))
    T = max(1, min(avail, 64, m // (4 * N), m // 65536 + 1))
    if T == 1 and avail > 1 and m > (1 << 20):
        return None
    span = block_span(m, N, BLOCK_EDGES_SMALL_PAGES)
    if not span:
        return None
    bcount = _graph.counted_blocks(dst, N, span, T)
    brun = np.zeros(bcount.shape[1], dtype=np.int64)
    np.cumsum(bcount.sum(axis=0)[:-1], out=brun[1:])
    if T * int(np.diff(brun).max(initial=0)) > max(m // 8, T * BLOCK_EDGES_SMALL_PAGES):
        return None
    W = (N + 63) // 64
    pres = np.empty(W, dtype=np.uint64)
    rank = np.empty(W + 1, dtype=np.int32)
    # written in order, the first n (+1) entries only: 4 KB pages (only those are touched)
    indptr = _graph.small_page_empty(N + 1, EID)
    outdeg = _graph.small_page_empty(N, np.int64)
    ids = _graph.small_page_empty(N, np.int64)
    n = _graph.counted_scan(odeg, bits, N, pres, rank, outdeg, ids)
    del odeg, bits  # 4 N bytes a thread, unmapped before the placement touches new pages
    indices = _graph.small_page_empty(m, np.int32)
    _graph.counted_place(src, dst, pres, rank, bcount, brun, indptr, indices, N, span,
                         release_step=RELEASE_EDGES)
    indptr[n] = m
    if n == N:
        ids = None
    else:
        shrink = _graph.small_page_shrink
        indptr, outdeg, ids = shrink(indptr, n + 1), shrink(outdeg, n), shrink(ids, n)
    return Graph(indptr, indices, None, outdeg, None, ids, source)


#: Use the dense lookup when ``max_id + 1 <= DENSE_FACTOR * (number of endpoints)``
#: or below DENSE_MIN (5 bytes per slot).
DENSE_FACTOR = 4
DENSE_MIN = 1 << 20


def remap_ids(src, dst, inplace=False, max_id=None):
    """Map original non-negative ids to dense ids ``0..n-1`` (ordered by original id).

    Parameters
    ----------
    src, dst : int32 or int64 arrays of original ids (>= 0)
    inplace : bool
        Write the dense ids into ``src``/``dst`` when they are int32 (no copy).
    max_id : int, optional
        The largest id, when already known (skips a pass; ids are then trusted
        to be in ``0..max_id``).

    Returns
    -------
    ids : int64 array (n,) or None
        Original id of each dense id; None when the ids already are exactly
        ``0..n-1`` (then ``src``/``dst`` are returned unchanged).
    (src_dense, dst_dense) : int32 arrays (int64 when n >= 2**31 - 1)

    Dense path (small ids): byte map + prefix scan + parallel lookup.  Sparse path
    (ids much larger than the edge count): sorted unique ids + parallel binary search.
    """
    from asapgraph.kernels import _graph

    src = _as_vid(src)
    dst = _as_vid(dst)
    if dst.dtype != src.dtype:
        src, dst = src.astype(np.int64), dst.astype(np.int64)
    if src.size == 0:
        return np.zeros(0, dtype=np.int64), (src, dst)
    if max_id is not None:  # known from the parser (which only produces ids >= 0)
        lo, hi = 0, int(max_id)
    else:
        lo1, hi1 = _graph.minmax(src)
        lo2, hi2 = _graph.minmax(dst)
        lo, hi = min(lo1, lo2), max(hi1, hi2)
    if lo < 0:
        raise ValueError(f"vertex ids must be >= 0, got {lo}")
    if hi + 1 <= max(DENSE_FACTOR * 2 * src.size, DENSE_MIN):
        present = np.zeros(hi + 1, dtype=np.uint8)
        _graph.mark_present(src, present)
        _graph.mark_present(dst, present)
        lookup, n = _graph.dense_lookup(present)
        if n == hi + 1:
            del present, lookup
            if src.dtype == vid_dtype(n):
                return None, (src, dst)
            return None, (src.astype(vid_dtype(n)), dst.astype(vid_dtype(n)))
        ids = np.flatnonzero(present).astype(np.int64)
        del present
        out = []
        for a in (src, dst):
            o = a if (inplace and a.dtype == np.int32) else np.empty(a.size, dtype=np.int32)
            _graph.map_dense(a, lookup, o)
            out.append(o)
        return ids, (out[0], out[1])
    ids = np.union1d(np.unique(src), np.unique(dst)).astype(np.int64)
    vdt = vid_dtype(len(ids))
    out = []
    for a in (src, dst):
        o = a if (inplace and a.dtype == vdt) else np.empty(a.size, dtype=vdt)
        _graph.map_sorted(a, ids, o)
        out.append(o)
    return ids, (out[0], out[1])
