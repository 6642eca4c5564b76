"""The algorithm library vs peers nobody here wrote (scipy.sparse.csgraph, networkx) and a
plain numpy reference (label propagation), on generated graphs and the shared datasets.

Tolerances (full vectors compared):
* WCC: the partition must equal scipy's, and every label must be the smallest original id
  of its component (exact).
* SSSP: exact equality with ``scipy.sparse.csgraph.dijkstra`` on integer weights (every
  path sum is exact in float64); relative 1e-12 on random float weights (two paths of
  equal length may round differently).  BFS levels: exact.
* PageRank program vs ``asapgraph.pagerank`` and networkx: L1 <= 1e-8 (``L1_TOL``).
* Katz vs ``networkx.katz_centrality`` (run to tol 1e-13): L1 <= 1e-8.
* HITS vs ``networkx.hits``: L1 <= 1e-6 for hubs and for authorities.
* Label propagation: exact equality with the numpy reference below.
"""
import gzip

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse import csgraph

import asapgraph.programs as P
from asapgraph import Graph, InputError

L1_PR = 1e-8
L1_KATZ = 1e-8
L1_HITS = 1e-6
MODES_ACC = ["bsp", "asap"]


# ----------------------------------------------------------------------------- helpers
def read_edges(path, weighted=False):
    """Private reader of the shared text files (independent of asapgraph.graph.io)."""
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt") as f:
        delim = "," if ".csv" in str(path) else None
        arr = np.loadtxt(f, comments="#", delimiter=delim, usecols=(0, 1, 2) if weighted else (0, 1), ndmin=2)
    src, dst = arr[:, 0].astype(np.int64), arr[:, 1].astype(np.int64)
    w = arr[:, 2].astype(np.float64) if weighted else None
    return src, dst, w


def peer_matrix(src, dst, w=None):
    """scipy CSR adjacency over original ids (sorted), built without asapgraph."""
    ids, inv = np.unique(np.concatenate([src, dst]), return_inverse=True)
    s, d = inv[: src.size], inv[src.size:]
    n = ids.size
    data = np.ones(src.size) if w is None else w
    A = sp.coo_matrix((data, (s, d)), shape=(n, n)).tocsr()   # duplicates add up
    return ids, A


def by_ids(result_ids, values, ids):
    """Reorder ``values`` (indexed like ``result_ids``) to follow ``ids``."""
    order = np.argsort(result_ids)
    pos = np.searchsorted(result_ids, ids, sorter=order)
    assert np.array_equal(result_ids[order[pos]], ids)
    return np.asarray(values)[order[pos]]


def canon(labels):
    """Canonical partition labels: components numbered by first occurrence."""
    _, first, inv = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty(first.size, dtype=np.int64)
    rank[np.argsort(first)] = np.arange(first.size)
    return rank[inv.ravel()]


def random_graph(rng, n=400, m=1600, weights=None, sparse_ids=True):
    """Random multigraph with self-loops, duplicate edges and isolated vertices."""
    used = rng.choice(n, size=int(0.9 * n), replace=False)       # 10% isolated
    src = used[rng.integers(0, used.size, m)]
    dst = used[rng.integers(0, used.size, m)]
    src = np.concatenate([src, src[:20], used[:10]])              # duplicates, self-loops
    dst = np.concatenate([dst, dst[:20], used[:10]])
    w = None
    if weights == "int":
        w = rng.integers(1, 20, src.size).astype(np.float64)
    elif weights == "float":
        w = rng.random(src.size) + 0.01
    ids = np.sort(rng.choice(10 * n, size=n, replace=False)).astype(np.int64) if sparse_ids else None
    g = Graph.from_edges(src, dst, n=n, weights=w, ids=ids)
    orig = np.arange(n) if ids is None else ids
    A = sp.coo_matrix((np.ones(src.size) if w is None else w, (src, dst)), shape=(n, n)).tocsr()
    return g, orig, A, (src, dst, w)


def min_matrix(src, dst, w, n):
    """Adjacency keeping the lightest of parallel edges (shortest-path peers need that:
    scipy's COO->CSR conversion would add duplicate weights up)."""
    order = np.lexsort((w, dst, src))
    s, d, ww = src[order], dst[order], w[order]
    first = np.ones(s.size, dtype=bool)
    first[1:] = (s[1:] != s[:-1]) | (d[1:] != d[:-1])
    return sp.csr_matrix((ww[first], (s[first], d[first])), shape=(n, n))


def nx_digraph(A):
    """networkx DiGraph with weight = summed multiplicity/weight of parallel edges."""
    G = nx.DiGraph()
    G.add_nodes_from(range(A.shape[0]))
    C = A.tocoo()
    G.add_weighted_edges_from(zip(C.row.tolist(), C.col.tolist(), C.data.tolist()))
    return G


def nx_vec(d, n):
    return np.array([d[i] for i in range(n)])


@pytest.fixture(scope="module")
def gen(request):
    rng = np.random.default_rng(int(__import__("os").environ.get("ASAPGRAPH_TEST_SEED", "12345")))
    return random_graph(rng)


# ----------------------------------------------------------------------------- WCC
def check_wcc(res, ids, A):
    nc, lab = csgraph.connected_components(A, directed=True, connection="weak")
    ours = by_ids(res.ids, res.values, ids)
    assert np.array_equal(canon(ours), canon(lab))
    mins = np.full(nc, np.iinfo(np.int64).max)
    np.minimum.at(mins, lab, ids)
    assert np.array_equal(ours, mins[lab])
    assert res.converged


@pytest.mark.parametrize("mode", MODES_ACC)
def test_wcc_generated(gen, mode):
    g, orig, A, _ = gen
    check_wcc(P.wcc(g, mode=mode), orig, A)


@pytest.mark.parametrize("mode", MODES_ACC)
@pytest.mark.parametrize("name", ["wiki-Vote.txt.gz", "p2p-Gnutella08.txt", "email-Eu-core.txt",
                                  "cit-HepTh.txt.gz"])
def test_wcc_shared(shared, name, mode):
    src, dst, _ = read_edges(shared(name))
    ids, A = peer_matrix(src, dst)
    g = Graph.from_original_ids(src, dst)
    check_wcc(P.wcc(g, mode=mode), ids, A)


# ----------------------------------------------------------------------------- SSSP / BFS
@pytest.mark.parametrize("mode", MODES_ACC)
@pytest.mark.parametrize("weights", ["int", "float"])
def test_sssp_generated(rng, mode, weights):
    g, orig, _, (src, dst, w) = random_graph(rng, weights=weights)
    A = min_matrix(src, dst, w, g.n)
    for s in rng.choice(g.n, 3, replace=False):
        ref = csgraph.dijkstra(A, indices=int(s))
        res = P.sssp(g, orig[s], mode=mode)
        ours = res.values
        assert np.array_equal(np.isinf(ours), np.isinf(ref))
        fin = np.isfinite(ref)
        if weights == "int":
            assert np.array_equal(ours[fin], ref[fin])
        else:
            np.testing.assert_allclose(ours[fin], ref[fin], rtol=1e-12, atol=0)


@pytest.mark.parametrize("mode", MODES_ACC)
@pytest.mark.parametrize("name", ["wiki-Vote.txt.gz", "p2p-Gnutella08.txt", "email-Eu-core.txt",
                                  "cit-HepTh.txt.gz"])
def test_sssp_bfs_shared(shared, rng, name, mode):
    src, dst, _ = read_edges(shared(name))
    # integer weights derived from the edge index: deterministic, exact path sums
    w = (1 + (np.arange(src.size) * 7919) % 97).astype(np.float64)
    ids, A = peer_matrix(src, dst, w)
    ids_u, Au = peer_matrix(src, dst)
    g = Graph.from_original_ids(src, dst, weights=w)
    for s in rng.choice(ids.size, 2, replace=False):
        # highest-out-degree vertex reaches many vertices; a random one tests the rest
        for si in (int(s), int(np.argmax(np.diff(A.indptr)))):
            ref = csgraph.dijkstra(A, indices=si)
            got = by_ids(g.original_ids(), P.sssp(g, ids[si], mode=mode).values, ids)
            assert np.array_equal(got, ref)
            lev = csgraph.shortest_path(Au, indices=si, unweighted=True)
            lev = np.where(np.isinf(lev), -1, lev).astype(np.int64)
            got = by_ids(g.original_ids(), P.bfs(g, ids[si], mode=mode).values, ids_u)
            assert np.array_equal(got, lev)


@pytest.mark.parametrize("mode", MODES_ACC)
def test_bfs_generated(gen, mode):
    g, orig, A, _ = gen
    for s in (0, 5, g.n - 1):
        ref = csgraph.shortest_path(A, indices=s, unweighted=True)
        ref = np.where(np.isinf(ref), -1, ref).astype(np.int64)
        assert np.array_equal(P.bfs(g, orig[s], mode=mode).values, ref)


def test_sssp_input_errors():
    g = Graph.from_original_ids(np.array([5, 6]), np.array([6, 7]), weights=np.array([1.0, -2.0]))
    with pytest.raises(InputError, match="non-negative"):
        P.sssp(g, 5)
    g = Graph.from_original_ids(np.array([5, 6]), np.array([6, 7]))
    with pytest.raises(InputError, match="not in the graph"):
        P.sssp(g, 4)
    with pytest.raises(InputError, match="not in the graph"):
        P.bfs(g, 99)
    assert P.bfs(g, 7).to_dict() == {5: -1, 6: -1, 7: 0}
    assert P.sssp(g, 5).to_dict() == {5: 0.0, 6: 1.0, 7: 2.0}


# ----------------------------------------------------------------------------- PageRank
def builtin_pagerank():
    from asapgraph.programs.pagerank import pagerank

    return pagerank


@pytest.mark.parametrize("mode", MODES_ACC)
@pytest.mark.parametrize("weights", [None, "float"])
def test_pagerank_program_generated(rng, mode, weights):
    g, orig, A, _ = random_graph(rng, weights=weights)
    G = nx_digraph(A)
    ref = nx_vec(nx.pagerank(G, alpha=0.85, tol=1e-15, max_iter=10000, weight="weight"), g.n)
    res = P.pagerank_program(g, tol=1e-12, mode=mode)
    assert res.converged
    assert np.abs(res.values - ref).sum() <= L1_PR
    # personalised, with a dangling distribution
    pers = {int(orig[i]): float(k + 1) for k, i in enumerate(rng.choice(g.n, 10, replace=False))}
    dang = {int(orig[i]): 1.0 for i in rng.choice(g.n, 5, replace=False)}
    dense = {int(np.searchsorted(orig, k)): v for k, v in pers.items()}
    dd = {int(np.searchsorted(orig, k)): v for k, v in dang.items()}
    ref = nx_vec(nx.pagerank(G, alpha=0.7, personalization=dense, dangling=dd, tol=1e-15,
                             max_iter=10000, weight="weight"), g.n)
    res = P.pagerank_program(g, alpha=0.7, personalization=pers, dangling=dang, tol=1e-12, mode=mode)
    assert np.abs(res.values - ref).sum() <= L1_PR


@pytest.mark.parametrize("mode", MODES_ACC)
@pytest.mark.parametrize("name", ["wiki-Vote.txt.gz", "email-Eu-core.txt", "p2p-Gnutella08.txt"])
def test_pagerank_program_shared(shared, name, mode):
    pagerank = builtin_pagerank()
    src, dst, _ = read_edges(shared(name))
    g = Graph.from_original_ids(src, dst)
    ref = pagerank(g, tol=1e-13, max_iter=1000)
    res = P.pagerank_program(g, tol=1e-12, mode=mode)
    assert np.array_equal(res.ids, ref.ids)
    assert np.abs(res.values - ref.ranks).sum() <= L1_PR
    ids, A = peer_matrix(src, dst)
    nxr = nx_vec(nx.pagerank(nx_digraph(A), tol=1e-15, max_iter=10000), ids.size)
    assert np.abs(by_ids(res.ids, res.values, ids) - nxr).sum() <= L1_PR
    # personalised PageRank
    pers = {int(i): 1.0 for i in ids[:: max(ids.size // 7, 1)]}
    ref = pagerank(g, personalization=pers, tol=1e-13, max_iter=1000)
    res = P.pagerank_program(g, personalization=pers, tol=1e-12, mode=mode)
    assert np.abs(res.values - ref.ranks).sum() <= L1_PR


# ----------------------------------------------------------------------------- Katz
def safe_alpha(A):
    """Half of a bound on 1/lambda_max (max row / column sums bound the spectral radius)."""
    return 0.5 / max(A.sum(axis=1).max(), A.sum(axis=0).max(), 1.0)


@pytest.mark.parametrize("mode", MODES_ACC)
def test_katz_generated(gen, mode):
    g, orig, A, _ = gen
    alpha = safe_alpha(A)
    ref = nx_vec(nx.katz_centrality(nx_digraph(A), alpha=alpha, beta=1.0, tol=1e-13,
                                    max_iter=100000, weight="weight"), g.n)
    res = P.katz(g, alpha=alpha, tol=1e-13, mode=mode)
    assert res.converged
    assert np.abs(res.values - ref).sum() <= L1_KATZ
    beta = {int(orig[i]): 1.0 + i % 3 for i in range(g.n)}
    refb = nx.katz_centrality(nx_digraph(A), alpha=alpha, beta={i: 1.0 + i % 3 for i in range(g.n)},
                              tol=1e-13, max_iter=100000, weight="weight", normalized=False)
    res = P.katz(g, alpha=alpha, beta=beta, tol=1e-13, normalized=False, mode=mode)
    assert np.abs(res.values - nx_vec(refb, g.n)).sum() <= L1_KATZ * g.n


@pytest.mark.parametrize("mode", MODES_ACC)
@pytest.mark.parametrize("name,weighted", [("email-Eu-core.txt", False), ("foodweb-baydry.txt", True)])
def test_katz_shared(shared, name, weighted, mode):
    src, dst, w = read_edges(shared(name), weighted=weighted)
    ids, A = peer_matrix(src, dst, w)
    g = Graph.from_original_ids(src, dst, weights=w)
    alpha = 0.5 / abs(sp.linalg.eigs(A, k=1, which="LM", return_eigenvectors=False)[0])
    ref = nx_vec(nx.katz_centrality(nx_digraph(A), alpha=alpha, tol=1e-14, max_iter=100000,
                                    weight="weight"), ids.size)
    res = P.katz(g, alpha=alpha, tol=1e-13, max_iter=100000, weighted=weighted, mode=mode)
    assert np.abs(by_ids(res.ids, res.values, ids) - ref).sum() <= L1_KATZ


# ----------------------------------------------------------------------------- HITS
def check_hits(res, ids, A):
    h, a = nx.hits(nx_digraph(A), tol=1e-12, max_iter=100000)
    hub = by_ids(res.ids, res.values["hub"], ids)
    auth = by_ids(res.ids, res.values["authority"], ids)
    assert res.converged
    assert abs(hub.sum() - 1) < 1e-12 and abs(auth.sum() - 1) < 1e-12
    assert np.abs(hub - nx_vec(h, ids.size)).sum() <= L1_HITS
    assert np.abs(auth - nx_vec(a, ids.size)).sum() <= L1_HITS


def test_hits_generated(gen):
    g, orig, A, _ = gen
    check_hits(P.hits(g, tol=1e-13, max_iter=10000), orig, A)


@pytest.mark.parametrize("name", ["email-Eu-core.txt", "wiki-Vote.txt.gz"])
def test_hits_shared(shared, name):
    src, dst, _ = read_edges(shared(name))
    ids, A = peer_matrix(src, dst)
    g = Graph.from_original_ids(src, dst)
    res = P.hits(g, tol=1e-13, max_iter=10000)
    check_hits(res, ids, A)


# ----------------------------------------------------------------------------- label propagation
def labelprop_reference(src, dst, labels, max_iter):
    """Straightforward numpy synchronous LPA: most frequent neighbour label, smallest on ties."""
    labels = labels.copy()
    tgt = np.concatenate([dst, src])
    frm = np.concatenate([src, dst])
    for it in range(1, max_iter + 1):
        lab = labels[frm]
        order = np.lexsort((lab, tgt))
        t, l = tgt[order], lab[order]
        new_run = np.ones(t.size, dtype=bool)
        new_run[1:] = (t[1:] != t[:-1]) | (l[1:] != l[:-1])
        starts = np.flatnonzero(new_run)
        counts = np.diff(np.append(starts, t.size))
        rt, rl = t[starts], l[starts]
        best = np.lexsort((rl, -counts, rt))          # per target: max count, then smallest label
        rt, rl = rt[best], rl[best]
        first = np.ones(rt.size, dtype=bool)
        first[1:] = rt[1:] != rt[:-1]
        new = labels.copy()
        new[rt[first]] = rl[first]
        changed = np.any(new != labels)
        labels = new
        if not changed:
            return labels, it, True
    return labels, max_iter, False


def test_labelprop_generated(gen):
    g, orig, A, (src, dst, _) = gen
    ref, iters, conv = labelprop_reference(src, dst, orig.copy(), 50)
    res = P.labelprop(g, max_iter=50)
    assert np.array_equal(res.values, ref)
    assert res.converged == conv


@pytest.mark.parametrize("name", ["karate.txt", "email-Eu-core.txt", "wiki-Vote.txt.gz", "ca-GrQc.txt"])
def test_labelprop_shared(shared, name):
    src, dst, _ = read_edges(shared(name))
    g = Graph.from_original_ids(src, dst)
    ids = g.original_ids()
    d_src = np.searchsorted(ids, src)
    d_dst = np.searchsorted(ids, dst)
    ref, iters, conv = labelprop_reference(d_src, d_dst, ids.copy(), 30)
    res = P.labelprop(g, max_iter=30)
    assert np.array_equal(res.values, ref)
    assert res.converged == conv
    if conv:
        assert res.iterations == iters


def test_labelprop_two_cliques():
    # two 4-cliques joined by one edge: two communities, each labelled by its smallest id
    a = [(i, j) for i in range(4) for j in range(4) if i < j]
    b = [(i + 10, j + 10) for i, j in a]
    e = np.array(a + b + [(3, 10)])
    g = Graph.from_original_ids(e[:, 0], e[:, 1])
    res = P.labelprop(g)
    d = res.to_dict()
    assert {d[i] for i in range(4)} == {0} and {d[i] for i in range(10, 14)} == {10}


# ----------------------------------------------------------------------------- R-MAT graphs
@pytest.mark.parametrize("mode", MODES_ACC)
def test_rmat_all_accumulative(seed, mode):
    gen = pytest.importorskip("asapgraph.graph.generators")
    src, dst = gen.rmat(11, 8, seed=seed % 1000)
    n = 1 << 11
    w = (1 + (np.arange(src.size) * 31) % 50).astype(np.float64)
    g = Graph.from_edges(src, dst, n=n, weights=w)
    A = sp.coo_matrix((w, (src, dst)), shape=(n, n)).tocsr()
    check_wcc(P.wcc(g, mode=mode), np.arange(n), A)
    Amin = min_matrix(src, dst, w, n)
    s = int(np.argmax(np.bincount(src, minlength=n)))
    assert np.array_equal(P.sssp(g, s, mode=mode).values, csgraph.dijkstra(Amin, indices=s))
    lev = csgraph.shortest_path(Amin, indices=s, unweighted=True)
    assert np.array_equal(P.bfs(g, s, mode=mode).values, np.where(np.isinf(lev), -1, lev).astype(np.int64))
    gu = Graph.from_edges(src, dst, n=n)
    ref = builtin_pagerank()(gu, tol=1e-13, max_iter=1000)
    assert np.abs(P.pagerank_program(gu, tol=1e-12, mode=mode).values - ref.ranks).sum() <= L1_PR


# ----------------------------------------------------------------------------- edge cases
@pytest.mark.parametrize("mode", MODES_ACC)
def test_edgeless_and_tiny_graphs(mode):
    g = Graph.from_edges(np.zeros(0, np.int64), np.zeros(0, np.int64), n=4,
                         ids=np.array([2, 4, 6, 8]))
    assert P.wcc(g, mode=mode).to_dict() == {2: 2, 4: 4, 6: 6, 8: 8}
    assert P.bfs(g, 4, mode=mode).to_dict() == {2: -1, 4: 0, 6: -1, 8: -1}
    assert np.allclose(P.pagerank_program(g, mode=mode).values, 0.25)
    k = P.katz(g, mode=mode)
    assert np.allclose(k.values, 0.5)            # beta everywhere, L2-normalised
    assert P.labelprop(g).values.tolist() == [2, 4, 6, 8]
    one = Graph.from_edges(np.array([0]), np.array([0]), n=1)   # a single self-loop
    assert np.allclose(P.pagerank_program(one, mode=mode).values, [1.0])
    assert P.sssp(one, 0, mode=mode).values.tolist() == [0.0]
    res = P.hits(one)
    assert np.allclose(res.values["hub"], 1) and np.allclose(res.values["authority"], 1)
