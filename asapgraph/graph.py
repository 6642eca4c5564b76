"""The in-memory graph: dense vertex ids, in-CSR for pull kernels, original-id map.

Semantics (the same as networkx's MultiDiGraph and igraph's): every input edge is one
edge.  Duplicate ``(u, v)`` pairs are parallel edges (their weights add up in every
algorithm), self-loops are kept.  Vertex ids seen in the input are remapped to dense
internal ids ``0..n-1``; ``Graph.ids[i]`` is the original id of internal vertex ``i``
(``None`` when the two coincide), and every output is reported with original ids.
"""
from __future__ import annotations

import numpy as np

from ._typedefs import EID, WEIGHT, vid_dtype


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
    """

    __slots__ = ("n", "m", "indptr", "indices", "weights", "out_degree", "out_weight",
                 "ids", "_out_csr", "source")

    def __init__(self, indptr, indices, weights=None, out_degree=None, out_weight=None,
                 ids=None, source=None):
        self.indptr = np.asarray(indptr, dtype=EID)
        self.n = int(self.indptr.shape[0] - 1)
        self.indices = np.asarray(indices)
        self.m = int(self.indices.shape[0])
        self.weights = None if weights is None else np.asarray(weights, dtype=WEIGHT)
        if out_degree is None:
            out_degree = np.bincount(self.indices, minlength=self.n).astype(np.int64)
        self.out_degree = np.asarray(out_degree, dtype=np.int64)
        if self.weights is not None and out_weight is None:
            out_weight = np.bincount(self.indices, weights=self.weights, minlength=self.n)
        self.out_weight = out_weight
        self.ids = ids
        self.source = source
        self._out_csr = None

    # ------------------------------------------------------------------ builders
    @classmethod
    def from_edges(cls, src, dst, n=None, weights=None, ids=None, source=None):
        """Build from dense-id edge arrays ``src[i] -> dst[i]`` (ids in ``0..n-1``)."""
        src = np.asarray(src)
        dst = np.asarray(dst)
        if n is None:
            n = int(max(src.max(initial=-1), dst.max(initial=-1)) + 1)
        vdt = vid_dtype(n)
        counts = np.bincount(dst, minlength=n)
        indptr = np.zeros(n + 1, dtype=EID)
        np.cumsum(counts, out=indptr[1:])
        order = np.argsort(dst, kind="stable")
        indices = src[order].astype(vdt, copy=False)
        w = None if weights is None else np.asarray(weights, dtype=WEIGHT)[order]
        out_degree = np.bincount(src, minlength=n).astype(np.int64)
        out_weight = None if w is None else np.bincount(src, weights=weights, minlength=n)
        return cls(indptr, indices, w, out_degree, out_weight, ids, source)

    @classmethod
    def from_original_ids(cls, src, dst, weights=None, undirected=False, source=None):
        """Build from edges given with arbitrary non-negative int64 ids (remapped densely)."""
        src = np.asarray(src, dtype=np.int64)
        dst = np.asarray(dst, dtype=np.int64)
        if undirected:
            loops = src == dst
            s2, d2 = dst[~loops], src[~loops]
            if weights is not None:
                weights = np.concatenate([weights, np.asarray(weights)[~loops]])
            src, dst = np.concatenate([src, s2]), np.concatenate([dst, d2])
        ids, (s, d) = remap_ids(src, dst)
        n = len(ids) if ids is not None else int(max(src.max(initial=-1), dst.max(initial=-1)) + 1)
        return cls.from_edges(s, d, n=n, weights=weights, ids=ids, source=source)

    # ------------------------------------------------------------------ views
    def original_ids(self):
        """Original id of every internal vertex (int64 array of length n)."""
        return np.arange(self.n, dtype=np.int64) if self.ids is None else self.ids

    def out_csr(self):
        """``(indptr, indices, weights)`` of the out-CSR (built once, cached)."""
        if self._out_csr is None:
            dst = np.repeat(np.arange(self.n, dtype=self.indices.dtype), np.diff(self.indptr))
            order = np.argsort(self.indices, kind="stable")
            indptr = np.zeros(self.n + 1, dtype=EID)
            np.cumsum(self.out_degree, out=indptr[1:])
            w = None if self.weights is None else self.weights[order]
            self._out_csr = (indptr, dst[order], w)
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


def remap_ids(src, dst):
    """Map original non-negative int64 ids to dense ids (sorted by original id).

    Returns ``(ids, (src_dense, dst_dense))``; ``ids`` is None when the ids already
    are exactly ``0..n-1`` with no gaps (then the inputs are returned unchanged).
    """
    if src.size == 0:
        return np.zeros(0, dtype=np.int64), (src, dst)
    hi = int(max(src.max(), dst.max()))
    if hi < 4 * (src.size + dst.size) + 1024:
        present = np.zeros(hi + 1, dtype=bool)
        present[src] = True
        present[dst] = True
        if present.all():
            return None, (src, dst)
        lookup = np.cumsum(present, dtype=np.int64) - 1
        ids = np.flatnonzero(present).astype(np.int64)
        return ids, (lookup[src], lookup[dst])
    ids, inv = np.unique(np.concatenate([src, dst]), return_inverse=True)
    return ids.astype(np.int64), (inv[: src.size], inv[src.size:])
