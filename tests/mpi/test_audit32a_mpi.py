"""Audit 32a on ranks: the networkx backend's PageRank with ``np = K`` against networkx on
an adversarial graph, and ``threads`` on ranks (the backend's config, ``asapgraph.run`` on
a communicator, the distributed ``pagerank`` API): applied or refused, never ignored.

The scripts are written to ``tmp_path`` and run there in fresh processes with timeouts;
answers are compared, never timings.
"""
import json
import os
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("networkx")

pytestmark = [pytest.mark.mpi]


def _env():
    return {k: v for k, v in os.environ.items()
            if not k.startswith(("PMI_", "OMPI_", "PMIX_", "MPI_LOCALNRANKS"))
            and k != "ASAPGRAPH_LAUNCHED"}


NX_SCRIPT = textwrap.dedent('''
    import json, sys, warnings
    import networkx as nx
    from asapgraph.interop import nx_ranks

    warnings.simplefilter("ignore")
    G = nx.MultiDiGraph()
    G.add_nodes_from(["iso", (1, "t"), frozenset({2})])
    for i in range(40):
        G.add_edge(i, (i * 7 + 3) % 40, w=(i % 4) * 0.5)     # zero weights too
        G.add_edge(i, (i * 11 + 5) % 40, w=i % 3)
    G.add_edge(5, 5, w=2.0)                                   # a self-loop
    G.add_edge(6, (i * 7 + 3) % 40, w=1.5)                    # a parallel edge
    G.add_edge((1, "t"), frozenset({2}))                      # w missing: 1
    G.remove_edges_from([(u, v) for u, v in list(G.edges()) if u in (3, 9)])   # dangling
    pers = {i: float(i % 3) for i in range(40)}
    pers["iso"] = 2.0
    dang = {0: 1.0, 7: 3.0}
    kw = dict(weight="w", personalization=pers, dangling=dang, tol=1e-10)
    ref = nx.pagerank(G, backend="networkx", **kw)
    one = nx.pagerank(G, backend="asapgraph", **kw)
    cfg = nx.config.backends.asapgraph
    rec = {"n": len(G), "one": sum(abs(one[k] - ref[k]) for k in ref)}
    for np_, mode, threads in [(2, "bsp", 2), (3, "asap", None), (2, "asap", 2)]:
        cfg.np, cfg.mode, cfg.threads = np_, mode, threads
        key = f"{np_}-{mode}-{threads}"
        try:
            got = nx.pagerank(G, backend="asapgraph", **kw)
        except Exception as e:
            rec[key] = {"error": f"{type(e).__name__}: {e}"}
            continue
        assert set(got) == set(ref)
        rec[key] = {"l1": sum(abs(got[k] - ref[k]) for k in ref), "run": nx_ranks.last_run()}
    json.dump(rec, open(sys.argv[1], "w"))
''')


def test_nx_pagerank_on_ranks_adversarial_graph(tmp_path):
    """A MultiDiGraph with zero weights, a self-loop, parallel edges, a missing weight,
    tuple/frozenset/str nodes, an isolated node, dangling nodes, a non-default weight key
    and personalization/dangling dicts with zeros: networkx's answer on 2 BSP ranks with
    ``threads = 2`` (the setting was not passed to the ranks) and on 3 ASAP ranks within
    the bound networkx's rule certifies; ``threads = 2`` in ASAP is refused in one line
    (it ran on one thread without a word)."""
    script = tmp_path / "nx_ranks_audit.py"
    script.write_text(NX_SCRIPT)
    out = tmp_path / "rec.json"
    r = subprocess.run([sys.executable, str(script), str(out)], cwd=tmp_path, env=_env(),
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-3000:]
    rec = json.loads(out.read_text())
    n = rec["n"]
    assert rec["one"] <= 1e-9
    bsp = rec["2-bsp-2"]
    assert "error" not in bsp, bsp
    assert bsp["l1"] <= 1e-9 and bsp["run"]["ranks"] == 2 and bsp["run"]["converged"]
    asap = rec["3-asap-None"]
    assert "error" not in asap, asap
    assert asap["l1"] <= 0.85 / 0.15 * n * 1e-10 * 2      # networkx's own error counts too
    assert asap["run"]["ranks"] == 3 and asap["run"]["mode"] == "asap"
    refused = rec["2-asap-2"]
    assert refused["error"].startswith("ValueError") and "threads" in refused["error"], refused


RUN_SCRIPT = textwrap.dedent('''
    import json, sys
    import numpy as np
    from mpi4py import MPI
    import asapgraph
    from asapgraph.engine import api
    from asapgraph.programs import PageRankProgram

    comm = MPI.COMM_WORLD
    rec = {}
    import networkx as nx
    G = nx.gnm_random_graph(60, 240, seed=4, directed=True)
    for t in ("x", 0, 1.5):
        try:
            asapgraph.run(PageRankProgram(), G, comm=comm, threads=t)
            rec[f"run {t!r}"] = "ran"
        except ValueError as e:
            rec[f"run {t!r}"] = str(e)
        try:
            api.pagerank("er:60:240", comm, threads=t)
            rec[f"api {t!r}"] = "ran"
        except ValueError as e:
            rec[f"api {t!r}"] = str(e)
    res = asapgraph.run(PageRankProgram(), G, comm=comm, threads=1)
    one = asapgraph.run(PageRankProgram(), G, threads=1)
    rec["same"] = bool(res.values is None or np.allclose(
        np.asarray(res.values)[np.argsort(res.ids)], np.asarray(one.values)[np.argsort(one.ids)],
        rtol=0, atol=1e-9))
    d = api.pagerank("er:60:240", comm, threads=None)
    rec["api None converged"] = bool(d.converged) if comm.Get_rank() == 0 else None
    json.dump(rec, open(f"{sys.argv[1]}.{comm.Get_rank()}", "w"))
''')


def test_threads_on_a_communicator_checked(tmp_path, mpirun):
    """``asapgraph.run(program, G, comm=<2 ranks>, threads=...)`` neither checked nor
    applied ``threads`` ('x' and 0 ran); the distributed ``api.pagerank`` said "invalid
    literal for int()" for 'x' and raised TypeError for None, its documented default
    behaviour (one thread)."""
    script = tmp_path / "run_threads.py"
    script.write_text(RUN_SCRIPT)
    r = mpirun(2, [sys.executable, str(script), str(tmp_path / "rec")], timeout=300)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-3000:]
    for k in range(2):
        rec = json.loads((tmp_path / f"rec.{k}").read_text())
        for t in ("'x'", "0", "1.5"):
            assert rec[f"run {t}"].startswith("threads must be a positive integer"), rec
            assert rec[f"api {t}"].startswith("threads must be a positive integer"), rec
        assert rec["same"], rec
        if k == 0:
            assert rec["api None converged"]


LABELS_SCRIPT = textwrap.dedent('''
    import json, sys
    import networkx as nx
    from mpi4py import MPI
    import asapgraph
    from asapgraph.programs import PageRankProgram, bfs, sssp, wcc

    comm = MPI.COMM_WORLD
    G = nx.DiGraph()
    G.add_nodes_from(["iso", ("t", 1)])
    for i in range(30):
        G.add_edge(f"n{i}", f"n{(i * 7 + 3) % 30}", weight=1.0 + i % 3)
        G.add_edge(f"n{i}", f"n{(i * 5 + 1) % 30}", weight=0.5)
    G.add_edge(("t", 1), "n4", weight=2.0)
    runs = {"sssp": lambda c, m: sssp(G, "n0", mode=m, comm=c),
            "bfs": lambda c, m: bfs(G, ("t", 1), mode=m, comm=c),
            "wcc": lambda c, m: wcc(G, mode=m, comm=c),
            "pagerank": lambda c, m: asapgraph.run(PageRankProgram(), G, mode=m, comm=c)}
    rec = {}
    for name, f in runs.items():
        for mode in ("bsp", "asap"):
            one = f(None, mode).to_dict()
            res = f(comm, mode)
            if comm.Get_rank() == 0:
                got = res.to_dict()
                rec[f"{name} {mode}"] = {
                    "same_keys": set(got) == set(one),
                    "diff": max(abs(got[k] - one[k]) if got[k] != one[k] else 0.0
                                for k in one) if set(got) == set(one) else None,
                    "pandas_nodes": sorted(map(repr, res.to_pandas()["node"])) ==
                                    sorted(map(repr, one))}
    if comm.Get_rank() == 0:
        json.dump(rec, open(sys.argv[1], "w"))
''')


def test_program_results_on_ranks_keyed_by_labels(tmp_path, mpirun):
    """A program run on ranks over a networkx graph with node objects ('n0', ('t', 1),
    'iso'): rank 0's ``to_dict()`` / ``to_pandas()`` were keyed by dense ids 0 .. n-1
    where one process gives the nodes; now the same keys and the same values (within the
    modes' tolerances) on 2 ranks, BSP and ASAP."""
    script = tmp_path / "labels_ranks.py"
    script.write_text(LABELS_SCRIPT)
    out = tmp_path / "rec.json"
    r = mpirun(2, [sys.executable, str(script), str(out)], timeout=300)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-3000:]
    rec = json.loads(out.read_text())
    assert len(rec) == 8
    for key, v in rec.items():
        assert v["same_keys"] and v["pandas_nodes"], (key, v)
        assert v["diff"] <= (1e-9 if key.startswith("pagerank") else 0.0), (key, v)


API_SCRIPT = textwrap.dedent('''
    import json, sys
    import networkx as nx
    import numpy as np
    from mpi4py import MPI
    from asapgraph.engine import api

    comm = MPI.COMM_WORLD
    cases = {
        "networkx source": dict(source=nx.path_graph(4)),
        "fanout 0": dict(mode="asap", fanout=0),
        "fanout 1.5": dict(mode="asap", fanout=1.5),
        "window -1": dict(mode="asap", window=-1),
        "approx nan": dict(mode="asap", approx=float("nan")),
        "seed x": dict(mode="asap", seed="x"),
        "schedule in bsp": dict(mode="bsp", schedule="priority"),
        "schedule x": dict(mode="asap", schedule="x"),
        "pers str key": dict(personalization={"a": 1.0}),
        "pers 3.7": dict(personalization={3.7: 1.0}),
        "pers float array": dict(personalization=(np.array([1.5, 2.0]), np.ones(2))),
        "weighted spec": dict(weighted=True),
        "ok": dict(mode="asap", fanout=1, window=2, approx=0.0, seed=np.int64(3),
                   schedule="sweep", personalization={3.0: 1.0, np.int64(4): 2.0}),
    }
    rec = {}
    for name, kw in cases.items():
        src = kw.pop("source", "er:40:160")
        try:
            r = api.pagerank(src, comm, **kw)
            rec[name] = "converged" if r.converged else "not converged"
        except Exception as e:
            rec[name] = f"{type(e).__name__}: {e}"
    json.dump(rec, open(f"{sys.argv[1]}.{comm.Get_rank()}", "w"))
''')


def test_distributed_pagerank_arguments_refused_in_one_line(tmp_path, mpirun):
    """``asapgraph.engine.api.pagerank`` on 2 ranks: a networkx graph as source reached
    the file reader ("expected str, bytes or os.PathLike object, not Graph"); fanout 0 or
    1.5 ran as 1, window -1 and approx NaN ran, seed 'x' failed in int(), a BSP run
    ignored schedule='priority'; a personalization key 'a' failed on rank 0 in int() and
    3.7 read vertex 3; weighted=True with a generator spec ran unweighted (the command
    line refuses it).  Each is now one exception on every rank saying what is wanted."""
    script = tmp_path / "api_args.py"
    script.write_text(API_SCRIPT)
    r = mpirun(2, [sys.executable, str(script), str(tmp_path / "rec")], timeout=300)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-3000:]
    want = {"networkx source": "TypeError: source must be an edge-list path",
            "fanout 0": "ValueError: fanout must be a positive integer",
            "fanout 1.5": "ValueError: fanout must be a positive integer",
            "window -1": "ValueError: window must be a positive integer",
            "approx nan": "ValueError: approx must be a finite number >= 0",
            "seed x": "ValueError: seed must be an integer >= 0",
            "schedule in bsp": "ValueError: schedule='priority' applies to mode 'asap'",
            "schedule x": "ValueError: schedule must be one of sweep, priority",
            "pers str key": "personalization: vertex ids must be integers, got 'a'",
            "pers 3.7": "personalization: vertex ids must be integers, got 3.7",
            "pers float array": "personalization: vertex ids must be integers",
            "weighted spec": "a generator spec has no edge weights",
            "ok": "converged"}
    for k in range(2):
        rec = json.loads((tmp_path / f"rec.{k}").read_text())
        for name, text in want.items():
            assert text in rec[name], (k, name, rec[name])
