"""Audit 32a: the networkx backend against networkx itself (one process).

Each test names the input, what the backend did and what networkx does.  A backend call
must return networkx's answer, raise networkx's exception, or decline (NotImplementedError:
under ``nx.config.backend_priority`` networkx's own code then runs).
"""
import math
import warnings

import numpy as np
import pytest

nx = pytest.importorskip("networkx")
pytest.importorskip("scipy")

BACKEND = {"backend": "asapgraph"}


def _outcome(f):
    """``("ok", value)`` or ``("raised", exception class)``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return "ok", f()
        except Exception as e:  # noqa: BLE001  (compared with networkx's)
            return "raised", type(e)


@pytest.fixture
def priority():
    """Dispatch to asapgraph first, networkx where it declines (a user's configuration)."""
    old = list(nx.config.backend_priority.algos)
    nx.config.backend_priority.algos = ["asapgraph"]
    try:
        yield
    finally:
        nx.config.backend_priority.algos = old


@pytest.fixture
def cfg():
    c = nx.config.backends.asapgraph
    old = {k: getattr(c, k) for k in ("threads", "np", "mode")}
    try:
        yield c
    finally:
        for k, v in old.items():
            setattr(c, k, v)


def _assert_same(want, got, tol=1e-9):
    assert want[0] == got[0], (want, got)
    if want[0] == "raised":
        assert got[1] is want[1], (want, got)
        return
    a, b = want[1], got[1]
    assert set(a) == set(b)
    for k in a:
        assert type(a[k]) is type(b[k]) or isinstance(a[k], float), (k, a[k], b[k])
        assert a[k] == b[k] or abs(a[k] - b[k]) <= tol, (k, a[k], b[k])


# ------------------------------------------------------------------ pagerank
def _path():
    return nx.path_graph(4, create_using=nx.DiGraph)


@pytest.mark.parametrize("kw", [{"nstart": {0: 0.0}}, {"nstart": {}},
                                {"nstart": {"not a node": 1.0}}, {"dangling": {1: 0}},
                                {"dangling": {}}, {"dangling": {2: 0.0}, "alpha": 0.0}])
def test_pagerank_zero_sum_vector_raises_networkx_error(kw):
    """A zero-sum ``nstart`` or ``dangling``: networkx divides by the sum (NaN everywhere,
    whether or not a node is dangling) and raises PowerIterationFailedConvergence; the
    backend declined, so ``backend="asapgraph"`` was a NotImplementedError."""
    G = _path()
    for extra in ({}, BACKEND):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(nx.PowerIterationFailedConvergence):
                nx.pagerank(G, **kw, **extra)
    # networkx's order: a float max_iter (range()) is its TypeError first
    for extra in ({}, BACKEND):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(TypeError):
                nx.pagerank(G, max_iter=5.0, **kw, **extra)


def _weighted(ws, cls=nx.DiGraph):
    G = cls()
    G.add_weighted_edges_from((u, v, w) for (u, v), w in
                              zip([(0, 1), (1, 2), (2, 0), (2, 3), (3, 0)], ws))
    return G


@pytest.mark.parametrize("ws", [
    [5e-320, 1.0, 1.0, 1.0, 1.0],          # 1 / 5e-320 is inf in networkx: NaN, no answer
    [1.0, 1.0, 1e-310, 1e-310, 1.0],      # a row sum of 2e-310: 1 / S overflows
    [1.0, 1.0, 1e308, 1e308, 1.0],        # the row sum overflows: networkx scales by 0
])
def test_pagerank_weights_networkx_cannot_normalise_are_declined(ws, priority):
    """Weights whose out-weight sum is below 1 / DBL_MAX, or overflows: networkx scales the
    row by ``1 / S`` (inf: NaN and PowerIterationFailedConvergence; 0: the row's mass is
    lost) while the engine divided each weight by the sum and answered a different vector
    (the mathematical one).  Declined: under backend_priority networkx's answer is given."""
    G = _weighted(ws)
    want = _outcome(lambda: nx.pagerank(G, backend="networkx"))
    with pytest.raises(NotImplementedError):
        nx.pagerank(G, **BACKEND)
    _assert_same(want, _outcome(lambda: nx.pagerank(G)))


@pytest.mark.parametrize("cls", [nx.DiGraph, nx.Graph, nx.MultiDiGraph])
def test_pagerank_tiny_weights_with_normal_row_sums_still_run(cls):
    """The decline looks at the row sums, not at single weights: a 5e-320 edge beside a
    1.0 edge out of the same node is a normal sum (networkx's answer, within 1e-12)."""
    G = _weighted([1.0, 1.0, 5e-320, 1.0, 1.0], cls)
    G.add_edge(2, 1, weight=1.0)
    for tol in (1e-6, 1e-12):
        want = nx.pagerank(G, tol=tol, backend="networkx")
        got = nx.pagerank(G, tol=tol, **BACKEND)
        assert sum(abs(want[k] - got[k]) for k in want) <= 1e-12


# ------------------------------------------------------------------ katz
@pytest.mark.parametrize("nstart", [{3: 1.0, 2: 1.0}, {0: 1.0, 1: 1.0}, {3: 0.5}])
def test_katz_nstart_without_every_node_is_networkx_answer(nstart, priority):
    """networkx iterates over ``nstart``'s keys: where they are closed under successors
    ({3, 2} on 0->1->2->3) it returns a dict of those keys alone, else KeyError for the
    first successor without a value.  The backend raised KeyError(0) for both; it now
    declines and networkx decides."""
    G = nx.path_graph(4, create_using=nx.DiGraph)
    want = _outcome(lambda: nx.katz_centrality(G, nstart=dict(nstart), backend="networkx"))
    with pytest.raises(NotImplementedError):
        nx.katz_centrality(G, nstart=dict(nstart), **BACKEND)
    _assert_same(want, _outcome(lambda: nx.katz_centrality(G, nstart=dict(nstart))))


def test_katz_full_nstart_still_runs():
    G = nx.path_graph(4, create_using=nx.DiGraph)
    nstart = {3: 1.0, 0: 2.0, 1: 0.5, 2: 1.0}
    want = nx.katz_centrality(G, nstart=dict(nstart), tol=1e-12)
    got = nx.katz_centrality(G, nstart=dict(nstart), tol=1e-12, **BACKEND)
    assert max(abs(want[k] - got[k]) for k in want) <= 1e-12


# ------------------------------------------------------------------ shortest paths
@pytest.mark.parametrize("directed", [True, False])
def test_dijkstra_nan_cutoff_lists_every_reached_node(directed):
    """networkx skips a node when ``dist > cutoff``, never true for a NaN cutoff: every
    reached node is listed.  The backend kept ``dist <= cutoff``: the source alone."""
    G = nx.path_graph(4, create_using=nx.DiGraph if directed else nx.Graph)
    G.add_edge(1, 7, weight=2.5)
    for w in ("weight", None):
        want = nx.single_source_dijkstra_path_length(G, 0, cutoff=math.nan, weight=w)
        got = nx.single_source_dijkstra_path_length(G, 0, cutoff=math.nan, weight=w,
                                                    **BACKEND)
        assert got == want and len(got) == 5


def test_dijkstra_unhashable_source_is_networkx_type_error():
    """networkx puts the source in a set: an unhashable source is TypeError, not the
    backend's NodeNotFound."""
    G = nx.path_graph(3)
    for extra in ({}, BACKEND):
        with pytest.raises(TypeError, match="unhashable"):
            nx.single_source_dijkstra_path_length(G, [1], **extra)


# ------------------------------------------------------------------ configuration
def _calls(G):
    return {
        "pagerank": lambda: nx.pagerank(G, **BACKEND),
        "hits": lambda: nx.hits(G, **BACKEND),
        "katz_centrality": lambda: nx.katz_centrality(G, alpha=0.05, **BACKEND),
        "weakly_connected_components":
            lambda: list(nx.weakly_connected_components(G, **BACKEND)),
        "single_source_shortest_path_length":
            lambda: nx.single_source_shortest_path_length(G, 0, **BACKEND),
        "single_source_dijkstra_path_length":
            lambda: nx.single_source_dijkstra_path_length(G, 0, **BACKEND),
    }


@pytest.mark.parametrize("key,value,message", [
    ("threads", 0, "threads must be a positive integer"),
    ("threads", -1, "threads must be a positive integer"),
    ("threads", 1.5, "threads must be a positive integer"),
    ("threads", "x", "threads must be a positive integer"),
    ("threads", True, "threads must be a positive integer"),
    ("mode", "fast", "mode must be one of"),
    ("np", 0, "np must be a positive integer"),
    ("np", "2", "np must be a positive integer"),
])
def test_bad_config_refused_by_every_function(cfg, key, value, message):
    """katz, hits and the components ran with ``threads`` 0 or -1 (all cores), 1.5 and
    True were truncated to 1, 'x' was "invalid literal for int()"; a bad ``np`` or
    ``mode`` was refused by pagerank only."""
    G = nx.gnp_random_graph(12, 0.3, seed=2, directed=True)
    setattr(cfg, key, value)
    for name, call in _calls(G).items():
        with pytest.raises(ValueError, match=f"nx.config.backends.asapgraph.{message}"):
            call()


def test_good_config_runs_every_function(cfg):
    G = nx.gnp_random_graph(12, 0.3, seed=2, directed=True)
    cfg.threads, cfg.np, cfg.mode = 2.0, 1, "asap"
    for name, call in _calls(G).items():
        call()


def test_asap_on_ranks_gets_max_iter_once_and_threads(cfg, monkeypatch):
    """The engine counts ASAP's ``max_iter`` in BSP supersteps' worth of edge work (8 x
    max_iter sweeps, 3e6ee60); the backend still multiplied it by 10 itself (80 x: ten
    times ``--np K --mode asap``).  ``threads`` was not passed to the ranks at all."""
    from asapgraph.interop import nx_ranks

    seen = []

    def spawn(g, K, params, P, D):
        seen.append(dict(params, K=K))
        return np.full(g.n, 1.0 / g.n), True

    monkeypatch.setattr(nx_ranks, "_spawn", spawn)
    monkeypatch.setattr(nx_ranks, "local_ranks_refusal", lambda *a: None)
    G = nx.gnp_random_graph(10, 0.3, seed=1, directed=True)
    cfg.np = 2
    for mode, threads in (("asap", None), ("bsp", None), ("bsp", 2)):
        cfg.mode, cfg.threads = mode, threads
        nx.pagerank(G, max_iter=7, **BACKEND)
    assert [(p["mode"], p["max_iter"], p["threads"], p["K"]) for p in seen] == [
        ("asap", 7, 1, 2), ("bsp", 7, 1, 2), ("bsp", 7, 2, 2)]


# ------------------------------------------------------------------ the Python API
@pytest.mark.parametrize("kw,text", [
    ({"weighted": True}, "drop weighted=True"),
    ({"weight_col": 3}, "drop weight_col"),
    ({"labels": True}, "drop labels=True"),
])
def test_load_graph_spec_refuses_weights_and_labels(kw, text):
    """``load_graph("er:10:20", weighted=True)`` returned an unweighted graph (and
    ``labels=True`` integer ids) without a word; the command line refuses both."""
    import asapgraph

    with pytest.raises(asapgraph.InputError, match=text):
        asapgraph.load_graph("er:10:20", **kw)
    assert asapgraph.load_graph("er:10:20", undirected=True).n == 10


def test_load_graph_seed_applies_to_specs_only(tmp_path):
    """``seed`` seeds a generator spec; given with a file or a networkx graph it was
    ignored without a word."""
    import asapgraph

    p = tmp_path / "e.txt"
    p.write_text("1 2\n2 3\n")
    with pytest.raises(asapgraph.InputError, match="seed applies to generator specs"):
        asapgraph.load_graph(str(p), seed=3)
    with pytest.raises(asapgraph.InputError, match="seed applies to generator specs"):
        asapgraph.load_graph(nx.path_graph(3), seed=3)
    a = asapgraph.load_graph("er:30:60", seed=np.int64(4))
    b = asapgraph.load_graph("er:30:60:4")
    assert np.array_equal(a.indices, b.indices) and np.array_equal(a.indptr, b.indptr)


@pytest.mark.parametrize("seed", [1.5, True, "x"])
def test_generator_seed_must_be_an_integer(seed):
    """``int(seed)`` read 1.5 and True as 1, and 'x' failed as "invalid literal for int()
    with base 10"."""
    import asapgraph

    with pytest.raises(ValueError, match="seed must be an integer >= 0"):
        asapgraph.generators.erdos_renyi(10, 20, seed)
    with pytest.raises(ValueError, match="seed must be an integer >= 0"):
        asapgraph.load_graph("rmat:4", seed=seed)
    assert asapgraph.generators.erdos_renyi(10, 20, 2.0)[0].shape == (20,)


@pytest.mark.parametrize("key", [3.7, math.inf, -math.inf, math.nan])
def test_pagerank_personalization_ids_must_be_integers(tmp_path, key):
    """``asapgraph.pagerank(g, personalization={3.7: 1})`` personalised vertex 3 (the ids
    went through ``astype(int64)``), and ``{inf: 1}`` said "0 vertex id(s) not in the
    graph, e.g. []"; a float without a fraction (3.0) is still vertex 3."""
    import asapgraph

    p = tmp_path / "gap.txt"
    p.write_text("10 3\n3 7\n7 10\n7 3\n20 20\n")
    g = asapgraph.load_graph(str(p))
    with pytest.raises(asapgraph.InputError, match="vertex ids must be integers"):
        asapgraph.pagerank(g, personalization={key: 1.0, 7: 1.0})
    a = asapgraph.pagerank(g, personalization={3.0: 1.0, np.float64(7.0): 2.0}).to_dict()
    b = asapgraph.pagerank(g, personalization={3: 1.0, 7: 2.0}).to_dict()
    assert a == b
