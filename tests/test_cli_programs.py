"""CLI subcommands of the algorithm library (katz, hits, wcc, sssp, bfs, labelprop, run).

Every result is read back from the ``-o`` file and compared, as a full vector over the
original vertex ids, with a peer nobody here wrote: scipy.sparse.csgraph (components,
Dijkstra, unweighted shortest paths), networkx (Katz by a linear solve, HITS by SVD) and,
for label propagation, a small independent numpy reference written below.  Graphs: a
seeded random graph with sparse original ids, parallel edges, self-loops and unreachable
parts, and one real graph from ../shared/datasets.  Most cases call
``asapgraph.cli.main`` in-process; two run ``python -m asapgraph`` in a subprocess with
``cwd=tmp_path`` (the installed package, not the source tree).
"""
import gzip
import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse import csgraph

from asapgraph import cli

SHARED_GRAPH = "p2p-Gnutella08.txt"  # directed, 6,301 vertices, 20,777 edges

_spec = importlib.util.spec_from_file_location("_asap_conftest_tables",
                                               Path(__file__).with_name("conftest.py"))
_conf = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_conf)
#: L1 norm of the difference of the full vectors (the project's table, conftest.L1_TOL)
L1_KATZ, L1_HITS = _conf.L1_TOL["katz"], _conf.L1_TOL["hits"]


# ----------------------------------------------------------------------------- helpers


def run_main(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def run_sub(tmp_path, *argv, timeout=120):
    return subprocess.run([sys.executable, "-m", "asapgraph", *map(str, argv)], cwd=tmp_path,
                          env=dict(os.environ), capture_output=True, text=True,
                          timeout=timeout)


def read_out(path):
    """Independent reader of a ``-o`` CSV/TSV(.gz): header list, int64 ids, {col: float64}."""
    opener = gzip.open if str(path).endswith(".gz") else open
    sep = "\t" if ".tsv" in str(path) else ","
    with opener(path, "rt") as f:
        head = f.readline().rstrip("\n").split(sep)
        rows = [ln.split(sep) for ln in f.read().splitlines()]
    ids = np.array([int(r[0]) for r in rows], dtype=np.int64)
    cols = {h: np.array([float(r[i + 1]) for r in rows]) for i, h in enumerate(head[1:])}
    return head, ids, cols


def by_id(ids, values, order_ids):
    """``values`` (aligned with ``ids``) rearranged to follow ``order_ids``."""
    pos = {int(i): k for k, i in enumerate(ids)}
    assert len(pos) == len(ids), "a vertex appears twice in the output"
    assert set(pos) == set(int(i) for i in order_ids), "output vertices differ from the graph's"
    return np.asarray(values)[[pos[int(i)] for i in order_ids]]


class EdgeGraph:
    """An edge list with original ids, and its peer views (scipy, networkx)."""

    def __init__(self, src, dst, w=None):
        self.src, self.dst, self.w = np.asarray(src), np.asarray(dst), w
        self.ids = np.unique(np.concatenate([self.src, self.dst]))  # sorted original ids
        self.n = self.ids.size
        self.s = np.searchsorted(self.ids, self.src)
        self.d = np.searchsorted(self.ids, self.dst)

    def write(self, path):
        with open(path, "w") as f:
            f.write("# generated for test_cli_programs\n")
            if self.w is None:
                f.write("".join(f"{a}\t{b}\n" for a, b in zip(self.src, self.dst)))
            else:
                f.write("".join(f"{a}\t{b}\t{c!r}\n"
                                for a, b, c in zip(self.src, self.dst, self.w.tolist())))
        return path

    def multiplicity_csr(self):
        """Adjacency with parallel edges summed (count, or weight sum)."""
        data = np.ones(self.s.size) if self.w is None else self.w
        return sp.coo_matrix((data, (self.s, self.d)), shape=(self.n, self.n)).tocsr()

    def lightest_csr(self):
        """Adjacency keeping the lightest of parallel edges (shortest-path semantics)."""
        dense = np.full((self.n, self.n), np.inf)
        np.minimum.at(dense, (self.s, self.d), self.w)
        r, c = np.nonzero(np.isfinite(dense))
        return sp.csr_matrix((dense[r, c], (r, c)), shape=(self.n, self.n))

    def nx_digraph(self):
        A = self.multiplicity_csr().tocoo()
        G = nx.DiGraph()
        G.add_nodes_from(range(self.n))
        G.add_weighted_edges_from(zip(A.row.tolist(), A.col.tolist(), A.data.tolist()))
        return G


def random_graph(rng, n=240, m=900, weighted=False):
    """Sparse original ids, parallel edges, self-loops, a separate small piece, vertices
    that nothing reaches."""
    orig = np.sort(rng.choice(10**7, size=n + 6, replace=False)) + 5
    a = rng.integers(0, n, size=m)
    b = rng.integers(0, n, size=m)
    a = np.concatenate([a, a[:15], [3, 7], [n, n + 1, n + 2, n + 4]])   # parallel edges,
    b = np.concatenate([b, b[:15], [3, 7], [n + 1, n + 2, n, n + 5]])   # loops, a 2nd piece
    w = None
    if weighted:
        w = np.round(rng.uniform(0.5, 5.0, size=a.size), 6)
    return EdgeGraph(orig[a], orig[b], w)


def shared_edges(path):
    """Independent reader (numpy.loadtxt) of a SNAP edge list."""
    e = np.loadtxt(path, dtype=np.int64, comments="#", usecols=(0, 1), ndmin=2)
    return EdgeGraph(e[:, 0], e[:, 1])


def lpa_reference(g, max_iter):
    """Synchronous label propagation, numpy only (see asapgraph.programs.labelprop's
    documented semantics): undirected view with multiplicities, mode, ties -> smallest
    label, isolated vertices keep theirs; stop when nothing changes."""
    tgt = np.concatenate([g.d, g.s])
    frm = np.concatenate([g.s, g.d])
    labels = g.ids.copy()
    for _ in range(max_iter):
        lab = labels[frm]
        pairs, counts = np.unique(np.stack([tgt, lab]), axis=1, return_counts=True)
        order = np.lexsort((pairs[1], -counts, pairs[0]))  # per target: most, then smallest
        t_sorted = pairs[0][order]
        first = np.ones(order.size, bool)
        first[1:] = t_sorted[1:] != t_sorted[:-1]
        new = labels.copy()
        new[t_sorted[first]] = pairs[1][order][first]
        if np.array_equal(new, labels):
            break
        labels = new
    return labels


def canonical(labels):
    """Relabel a partition by first occurrence (compare partitions, not label values)."""
    _, first, inv = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty(first.size, dtype=np.int64)
    rank[np.argsort(first)] = np.arange(first.size)
    return rank[inv]


@pytest.fixture
def graph_file(tmp_path, rng):
    g = random_graph(rng)
    return g, g.write(tmp_path / "g.txt")


@pytest.fixture
def wgraph_file(tmp_path, rng):
    g = random_graph(rng, weighted=True)
    return g, g.write(tmp_path / "gw.txt")


# ----------------------------------------------------------------------------- wcc


def check_wcc(g, out):
    head, ids, cols = read_out(out)
    assert head == ["node", "component"]
    got = by_id(ids, cols["component"], g.ids).astype(np.int64)
    ncomp, lab = csgraph.connected_components(g.multiplicity_csr(), directed=True,
                                              connection="weak")
    np.testing.assert_array_equal(canonical(got), canonical(lab))
    # documented label: the smallest original id of the component
    smallest = np.full(ncomp, np.iinfo(np.int64).max)
    np.minimum.at(smallest, lab, g.ids)
    np.testing.assert_array_equal(got, smallest[lab])
    return ncomp


@pytest.mark.parametrize("mode", ["bsp", "asap"])
def test_wcc_matches_scipy(capsys, tmp_path, graph_file, mode):
    g, path = graph_file
    out = tmp_path / "cc.csv"
    code, stdout, err = run_main(capsys, "wcc", path, "-o", out, "--json", "-q", "--mode", mode)
    assert code == 0, err
    ncomp = check_wcc(g, out)
    summary = json.loads(stdout)
    assert summary["components"] == ncomp and summary["mode"] == mode
    assert summary["vertices"] == g.n and summary["edges"] == g.src.size


def test_wcc_shared_dataset(capsys, tmp_path, shared):
    g = shared_edges(shared("wiki-Vote.txt.gz"))  # sparse original ids 3..8297
    out = tmp_path / "cc.tsv.gz"
    code, _, err = run_main(capsys, "wcc", shared("wiki-Vote.txt.gz"), "-o", out, "-q")
    assert code == 0, err
    check_wcc(g, out)


def test_wcc_top_lists_largest_components(capsys, graph_file):
    g, path = graph_file
    code, out, err = run_main(capsys, "wcc", path, "--top", "2", "-q", "--json")
    assert code == 0, err
    top = json.loads(out)["top"]
    _, lab = csgraph.connected_components(g.multiplicity_csr(), directed=True, connection="weak")
    sizes = np.sort(np.bincount(lab))[::-1]
    assert [s for _, s in top] == sizes[:2].tolist()


# ----------------------------------------------------------------------------- sssp, bfs


@pytest.mark.parametrize("mode", ["bsp", "asap"])
def test_sssp_matches_scipy_dijkstra_exactly(capsys, tmp_path, wgraph_file, mode):
    g, path = wgraph_file
    src = int(g.src[0])
    out = tmp_path / "d.csv"
    code, stdout, err = run_main(capsys, "sssp", path, "--weighted", "--source", src, "-o", out,
                                 "--json", "-q", "--mode", mode)
    assert code == 0, err
    head, ids, cols = read_out(out)
    assert head == ["node", "distance"]
    got = by_id(ids, cols["distance"], g.ids)
    ref = csgraph.dijkstra(g.lightest_csr(), directed=True,
                           indices=int(np.searchsorted(g.ids, src)))
    assert np.isinf(ref).any(), "test graph should have unreachable vertices"
    np.testing.assert_array_equal(got, ref)  # inf round-trips through the CSV
    summary = json.loads(stdout)
    assert summary["source"] == src and summary["reachable"] == int(np.isfinite(ref).sum())
    assert summary["max_distance"] == pytest.approx(ref[np.isfinite(ref)].max(), rel=0, abs=0)


def test_sssp_npy_keeps_inf(capsys, tmp_path, wgraph_file):
    g, path = wgraph_file
    out = tmp_path / "d.npy"
    code, _, err = run_main(capsys, "sssp", path, "--weighted", "--source", int(g.src[1]), "-o",
                            out, "-q")
    assert code == 0, err
    rec = np.load(out)
    ref = csgraph.dijkstra(g.lightest_csr(), indices=int(np.searchsorted(g.ids, g.src[1])))
    np.testing.assert_array_equal(by_id(rec["node"], rec["distance"], g.ids), ref)


@pytest.mark.parametrize("mode", ["bsp", "asap"])
def test_bfs_matches_scipy_unweighted(capsys, tmp_path, graph_file, mode):
    g, path = graph_file
    src = int(g.src[2])
    out = tmp_path / "lv.csv"
    code, _, err = run_main(capsys, "bfs", path, "--source", src, "-o", out, "-q", "--mode", mode)
    assert code == 0, err
    head, ids, cols = read_out(out)
    assert head == ["node", "level"]
    got = by_id(ids, cols["level"], g.ids)
    s = int(np.searchsorted(g.ids, src))
    ref = csgraph.shortest_path(g.multiplicity_csr(), unweighted=True, indices=s)
    ref = np.where(np.isinf(ref), -1, ref)
    assert (ref == -1).any()
    np.testing.assert_array_equal(got, ref)
    # and the vertices in scipy's breadth-first order have non-decreasing levels
    order = csgraph.breadth_first_order(g.multiplicity_csr(), s, return_predecessors=False)
    assert np.all(np.diff(got[order]) >= 0) and got[order].size == int((ref >= 0).sum())


def test_bfs_and_sssp_on_shared_dataset(capsys, tmp_path, shared):
    p = shared(SHARED_GRAPH)
    g = shared_edges(p)
    src = 0
    s = int(np.searchsorted(g.ids, src))
    hops = csgraph.shortest_path(g.multiplicity_csr(), unweighted=True, indices=s)
    out = tmp_path / "lv.csv"
    assert run_main(capsys, "bfs", p, "--source", src, "-o", out, "-q")[0] == 0
    _, ids, cols = read_out(out)
    np.testing.assert_array_equal(by_id(ids, cols["level"], g.ids),
                                  np.where(np.isinf(hops), -1, hops))
    out2 = tmp_path / "d.csv"  # unweighted sssp counts 1 per edge
    assert run_main(capsys, "sssp", p, "--source", src, "-o", out2, "-q", "--mode", "asap")[0] == 0
    _, ids, cols = read_out(out2)
    np.testing.assert_array_equal(by_id(ids, cols["distance"], g.ids), hops)


@pytest.mark.parametrize("cmd", ["sssp", "bfs"])
def test_bad_source_is_exit_2_and_writes_nothing(capsys, tmp_path, graph_file, cmd):
    g, path = graph_file
    missing = int(g.ids.max()) + 1
    out = tmp_path / "x.csv"
    code, stdout, err = run_main(capsys, cmd, path, "--source", missing, "-o", out, "-q")
    assert code == 2
    assert err.strip().count("\n") == 0 and f"source vertex {missing} is not in the graph" in err
    assert not out.exists() and stdout == ""
    code, _, err = run_main(capsys, cmd, path, "--source", "abc")
    assert code == 2 and "integer vertex id" in err


# ----------------------------------------------------------------------------- katz, hits


def katz_ref(g, alpha, weighted):
    G = g.nx_digraph()  # edge weight = multiplicity (or summed weight)
    if not weighted:
        # count parallel edges but ignore the input weights: rebuild with counts
        G = EdgeGraph(g.src, g.dst).nx_digraph()
    d = nx.katz_centrality_numpy(G, alpha=alpha, beta=1.0, normalized=True, weight="weight")
    return np.array([d[i] for i in range(g.n)])


@pytest.mark.parametrize("mode", ["bsp", "asap"])
def test_katz_matches_networkx(capsys, tmp_path, graph_file, mode):
    g, path = graph_file
    out = tmp_path / "k.csv"
    code, stdout, err = run_main(capsys, "katz", path, "--alpha", "0.05", "--tol", "1e-13",
                                 "-o", out, "--json", "-q", "--mode", mode, "--top", "3")
    assert code == 0, err
    head, ids, cols = read_out(out)
    assert head == ["node", "katz"]
    got = by_id(ids, cols["katz"], g.ids)
    ref = katz_ref(g, 0.05, weighted=False)
    assert np.abs(got - ref).sum() <= L1_KATZ
    summary = json.loads(stdout)
    best = g.ids[np.argsort(-ref, kind="stable")[:3]]
    assert [t[0] for t in summary["top"]] == best.tolist()


def test_katz_weighted_and_shared(capsys, tmp_path, wgraph_file, shared):
    g, path = wgraph_file
    out = tmp_path / "k.csv"
    assert run_main(capsys, "katz", path, "--weighted", "--alpha", "0.01", "--tol", "1e-13",
                    "-o", out, "-q")[0] == 0
    _, ids, cols = read_out(out)
    assert np.abs(by_id(ids, cols["katz"], g.ids) - katz_ref(g, 0.01, True)).sum() <= L1_KATZ
    p = shared(SHARED_GRAPH)
    gs = shared_edges(p)
    out = tmp_path / "ks.csv"
    assert run_main(capsys, "katz", p, "--alpha", "0.1", "--tol", "1e-12", "-o", out, "-q")[0] == 0
    _, ids, cols = read_out(out)
    # peer for the larger graph: a direct sparse solve of (I - alpha A^T) x = 1 (scipy),
    # networkx's dense katz_centrality_numpy takes ~15 s here
    from scipy.sparse.linalg import spsolve

    A = gs.multiplicity_csr()
    x = spsolve((sp.identity(gs.n, format="csc") - 0.1 * A.T.tocsc()), np.ones(gs.n))
    assert np.abs(by_id(ids, cols["katz"], gs.ids) - x / np.linalg.norm(x)).sum() <= L1_KATZ


def test_katz_unconverged_exit_3(capsys, tmp_path, graph_file):
    g, path = graph_file
    out = tmp_path / "k.csv"
    code, _, err = run_main(capsys, "katz", path, "--max-iter", "2", "-o", out, "-q")
    assert code == 3 and "did not converge" in err and not out.exists()
    code, _, err = run_main(capsys, "katz", path, "--max-iter", "2", "-o", out, "-q",
                            "--allow-unconverged")
    assert code == 0 and out.exists()


def hits_check(g, out):
    head, ids, cols = read_out(out)
    assert head == ["node", "hub", "authority"]
    hubs, auth = nx.hits(g.nx_digraph(), max_iter=10000, tol=1e-12)
    hub_ref = np.array([hubs[i] for i in range(g.n)])
    auth_ref = np.array([auth[i] for i in range(g.n)])
    assert np.abs(by_id(ids, cols["hub"], g.ids) - hub_ref).sum() <= L1_HITS
    assert np.abs(by_id(ids, cols["authority"], g.ids) - auth_ref).sum() <= L1_HITS


def test_hits_matches_networkx(capsys, tmp_path, graph_file, shared):
    g, path = graph_file
    out = tmp_path / "h.csv"
    code, _, err = run_main(capsys, "hits", path, "--tol", "1e-13", "--max-iter", "5000",
                            "-o", out, "-q")
    assert code == 0, err
    hits_check(g, out)
    p = shared(SHARED_GRAPH)
    out = tmp_path / "hs.csv"
    code, _, err = run_main(capsys, "hits", p, "--tol", "1e-13", "--max-iter", "5000",
                            "-o", out, "-q")
    assert code == 0, err
    hits_check(shared_edges(p), out)


# ----------------------------------------------------------------------------- labelprop


def test_labelprop_matches_numpy_reference(capsys, tmp_path, graph_file, shared):
    g, path = graph_file
    for graph, p, k in ((g, path, 30), (shared_edges(shared(SHARED_GRAPH)),
                                        shared(SHARED_GRAPH), 12)):
        out = tmp_path / "lp.csv"
        code, _, err = run_main(capsys, "labelprop", p, "--max-iter", k, "--allow-unconverged",
                                "-o", out, "-q")
        assert code == 0, err
        head, ids, cols = read_out(out)
        assert head == ["node", "label"]
        np.testing.assert_array_equal(by_id(ids, cols["label"], graph.ids),
                                      lpa_reference(graph, k))


@pytest.mark.parametrize("cmd", ["labelprop", "hits"])
def test_asap_refused_for_non_accumulative(capsys, tmp_path, graph_file, cmd):
    _, path = graph_file
    out = tmp_path / "x.csv"
    code, stdout, err = run_main(capsys, cmd, path, "--mode", "asap", "-o", out)
    assert code == 2 and stdout == "" and not out.exists()
    assert err.count("\n") == 1 and "--mode asap is not available" in err and "bsp" in err


# ----------------------------------------------------------------------------- json, top, help


JSON_KEYS = {"vertices", "edges", "iterations", "converged", "load_seconds", "compute_seconds",
             "mode", "ranks", "peak_rss_bytes", "input", "command", "columns"}


@pytest.mark.parametrize("argv,extra", [
    (["wcc"], {"components", "largest_component"}),
    (["sssp", "--source", "SRC"], {"source", "reachable", "max_distance"}),
    (["bfs", "--source", "SRC"], {"source", "reachable", "max_level"}),
    (["katz"], {"alpha", "beta", "normalized", "residual", "tol"}),
    (["hits"], {"residual", "tol"}),
    (["labelprop", "--allow-unconverged"], {"communities", "largest_community"}),
])
def test_json_summary_keys(capsys, graph_file, argv, extra):
    g, path = graph_file
    argv = [str(g.src[0]) if a == "SRC" else a for a in argv]
    code, out, err = run_main(capsys, argv[0], path, *argv[1:], "--json", "-q")
    assert code == 0, err
    summary = json.loads(out)  # stdout is exactly one JSON object
    assert JSON_KEYS | extra <= set(summary), sorted(JSON_KEYS | extra - set(summary))
    assert summary["ranks"] == 1 and summary["vertices"] == g.n and err == ""


def test_default_output_and_top_table(capsys, graph_file):
    g, path = graph_file
    code, out, _ = run_main(capsys, "bfs", path, "--source", int(g.src[0]), "-q")
    assert code == 0 and "reachable:" in out and "level" in out
    code, out, _ = run_main(capsys, "hits", path, "--top", "4", "-q")
    lines = out.strip().splitlines()
    assert code == 0 and lines[0].split() == ["rank", "node", "hub", "authority"]
    assert len(lines) == 5


def test_help_documents_inf(capsys):
    code, out, _ = run_main(capsys, "sssp", "--help")
    assert code == 0 and "'inf'" in out and "-1 (bfs)" in out


def test_param_parsing():
    p = cli._parse_param
    assert p("k=3") == ("k", 3) and isinstance(p("k=3")[1], int)
    assert p("x=2.5") == ("x", 2.5) and p("f=TRUE") == ("f", True) and p("f=false") == ("f", False)
    assert p("s=hello") == ("s", "hello") and p("s='a b'") == ("s", "a b")
    assert p("s=[1,2]") == ("s", "[1,2]")
    with pytest.raises(Exception):
        p("1bad=3")
    with pytest.raises(Exception):
        p("novalue")


# ----------------------------------------------------------------------------- run (user programs)

USER_PROGRAM = textwrap.dedent('''
    import numpy as np
    from asapgraph.programs import VertexProgram

    class OffsetHops(VertexProgram):
        """Hops from `source` (an original id) plus `offset`; min-accumulative."""
        name = "hops"
        value_dtype = np.float64
        combiner = "min"
        direction = "out"
        edge_op = "add"
        use_weights = False
        accumulative = True
        default_max_iter = 1 << 30

        def __init__(self, source, offset=0.0, scale=1):
            self.source, self.offset, self.scale = source, offset, scale

        def init(self, ctx):
            d = np.full(ctx.n_local, np.inf)
            d[ctx.ids == self.source] = 0.0
            return d

        def result(self, ctx, d):
            return {"hops": d * self.scale + self.offset, "reached": np.isfinite(d) * 1}

    class InDegree(VertexProgram):
        """One value-form superstep: count the in-edges (not accumulative)."""
        name = "indeg"
        combiner = "sum"
        edge_op = "copy"

        def init(self, ctx):
            return np.ones(ctx.n_local)

        def apply(self, ctx, state, combined, has_msg):
            return combined, np.zeros(ctx.n_local, dtype=bool)
''')


@pytest.fixture
def user_file(tmp_path):
    p = tmp_path / "myprogs.py"
    p.write_text(USER_PROGRAM)
    return p


@pytest.mark.parametrize("mode", ["bsp", "asap"])
def test_run_user_program_with_params(capsys, tmp_path, graph_file, user_file, mode):
    g, path = graph_file
    src = int(g.src[0])
    out = tmp_path / "u.csv"
    code, stdout, err = run_main(capsys, "run", f"{user_file}:OffsetHops", path, "--param",
                                 f"source={src}", "--param", "offset=0.5", "--param", "scale=2",
                                 "-o", out, "--json", "-q", "--mode", mode)
    assert code == 0, err
    head, ids, cols = read_out(out)
    assert head == ["node", "hops", "reached"]
    ref = csgraph.shortest_path(g.multiplicity_csr(), unweighted=True,
                                indices=int(np.searchsorted(g.ids, src)))
    np.testing.assert_array_equal(by_id(ids, cols["hops"], g.ids), ref * 2 + 0.5)
    np.testing.assert_array_equal(by_id(ids, cols["reached"], g.ids), np.isfinite(ref) * 1.0)
    summary = json.loads(stdout)
    assert summary["params"] == {"source": src, "offset": 0.5, "scale": 2}
    assert summary["columns"] == ["hops", "reached"] and summary["mode"] == mode


def test_run_value_form_program_and_asap_refused(capsys, tmp_path, graph_file, user_file):
    g, path = graph_file
    out = tmp_path / "deg.csv"
    code, _, err = run_main(capsys, "run", f"{user_file}:InDegree", path, "-o", out, "-q")
    assert code == 0, err
    head, ids, cols = read_out(out)
    assert head == ["node", "indeg"]
    np.testing.assert_array_equal(by_id(ids, cols["indeg"], g.ids),
                                  np.bincount(g.d, minlength=g.n))
    code, _, err = run_main(capsys, "run", f"{user_file}:InDegree", path, "--mode", "asap",
                            "-o", tmp_path / "y.csv")
    assert code == 2 and "accumulative" in err and not (tmp_path / "y.csv").exists()


def test_run_bad_specs_exit_2(capsys, graph_file, user_file):
    _, path = graph_file
    for spec, needle in ((f"{user_file}:Nope", "no attribute"),
                         ("nosuchmodule_xyz:Prog", "cannot load"),
                         ("noseparator", "MODULE:CLASS")):
        code, out, err = run_main(capsys, "run", spec, path)
        assert code == 2 and needle in err and err.count("\n") == 1, err
    code, _, err = run_main(capsys, "run", f"{user_file}:OffsetHops", path, "--param", "bogus=1")
    assert code == 2 and "cannot load" in err  # constructor TypeError -> exit 2


# ----------------------------------------------------------------------------- subprocesses


def test_subprocess_sssp_csv_roundtrip(tmp_path, wgraph_file):
    g, path = wgraph_file
    src = int(g.src[3])
    r = run_sub(tmp_path, "sssp", path, "--weighted", "--source", src, "-o", "d.csv", "-q")
    assert r.returncode == 0, r.stderr
    head, ids, cols = read_out(tmp_path / "d.csv")
    ref = csgraph.dijkstra(g.lightest_csr(), indices=int(np.searchsorted(g.ids, src)))
    np.testing.assert_array_equal(by_id(ids, cols["distance"], g.ids), ref)
    r = run_sub(tmp_path, "bfs", path, "--source", int(g.ids.max()) + 7, "-q")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "not in the graph" in r.stderr


def test_subprocess_run_module_spec(tmp_path, graph_file, user_file):
    g, path = graph_file
    # MODULE:CLASS form: the module is importable from the working directory's PYTHONPATH
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), *filter(None, [env.get("PYTHONPATH")])])
    r = subprocess.run([sys.executable, "-m", "asapgraph", "run", "myprogs:InDegree", str(path),
                        "--top", "3", "-q"], cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    assert lines[0].split() == ["rank", "node", "indeg"]
    deg = np.bincount(g.d, minlength=g.n)
    assert [float(ln.split()[2]) for ln in lines[1:]] == sorted(deg, reverse=True)[:3]


#: the ``asapgraph`` console script: ``main()`` with the script's directory first on
#: ``sys.path`` instead of the cwd (``python -m`` puts the cwd there)
_CONSOLE_SCRIPT = ("import sys; sys.path[0] = sys.prefix; from asapgraph.cli import main; "
                   "sys.exit(main())")


@pytest.mark.parametrize("np_", [1, pytest.param(2, marks=pytest.mark.mpi)])
def test_console_script_finds_a_module_in_the_cwd(tmp_path, graph_file, user_file, np_):
    """``asapgraph run my_module:MyProgram`` from the directory holding my_module.py, as
    the README's example: the console script refused it ("No module named") while
    ``python -m asapgraph`` found it.  On 1 process and on K ranks alike."""
    g, path = graph_file
    r = subprocess.run([sys.executable, "-c", _CONSOLE_SCRIPT, "run", "myprogs:InDegree",
                        str(path), "--top", "3", "-q", "--np", str(np_)], cwd=tmp_path,
                       env=dict(os.environ), capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    assert lines[0].split() == ["rank", "node", "indeg"] and len(lines) == 4, r.stdout
    deg = np.bincount(g.d, minlength=g.n)
    assert [float(ln.split()[2]) for ln in lines[1:]] == sorted(deg, reverse=True)[:3]
    # a module that is nowhere: still one line, exit 2
    r = subprocess.run([sys.executable, "-c", _CONSOLE_SCRIPT, "run", "nosuchmod:X", str(path),
                        "-q", "--np", str(np_)], cwd=tmp_path, env=dict(os.environ),
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "No module named 'nosuchmod'" in r.stderr
