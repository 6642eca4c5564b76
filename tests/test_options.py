"""asapgraph.options: one validation, one meaning of tol, the refusal table, Katz's check.

Peers: ``scipy.sparse.linalg.eigs`` (largest eigenvalue, for the Katz bound), a direct
sparse solve (Katz) and a 1e-15 PageRank (true errors behind ``error_bound``).  The
1-vs-K-ranks comparisons are in ``tests/mpi/test_options_mpi.py``.
"""
import json
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as sla

import asapgraph as ag
from asapgraph import options
from asapgraph import cli
from asapgraph import programs as P
from asapgraph.errors import InputError
from asapgraph.graph import Graph


def run_main(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def rmat(scale=8):
    return ag.load_graph(f"rmat:{scale}")


def adjacency(g):
    return sp.csr_matrix((np.ones(g.m) if g.weights is None else np.asarray(g.weights),
                          np.asarray(g.indices), np.asarray(g.indptr)), shape=(g.n, g.n))


def lambda_max(g):
    return abs(sla.eigs(adjacency(g).astype(float), k=1, which="LM",
                        return_eigenvectors=False)[0])


# ----------------------------------------------------------------------------- scalars


@pytest.mark.parametrize("alpha,ok", [(0, True), (0.85, True), (0.999, True), (1, False),
                                      (-0.1, False), (float("nan"), False), ("x", False)])
def test_pagerank_alpha_range(alpha, ok):
    if ok:
        assert options.check_alpha(alpha) == float(alpha)
    else:
        with pytest.raises(ValueError, match="alpha"):
            options.check_alpha(alpha)


def test_tol_max_iter_weight_col():
    assert options.check_tol(0) == 0.0
    for bad in (-1e-9, float("inf"), float("nan")):
        with pytest.raises(ValueError, match="tol"):
            options.check_tol(bad)
    assert options.check_max_iter(5) == 5 and options.check_max_iter(None, True) is None
    for bad in (-1, 2.5, None):
        with pytest.raises(ValueError, match="max_iter"):
            options.check_max_iter(bad)
    assert options.weight_col_index(None) == 2 and options.weight_col_index(4) == 3
    with pytest.raises(ValueError, match="1-based"):
        options.weight_col_index(2)


def test_same_checks_in_every_api():
    g = rmat()
    for call in (lambda: ag.pagerank(g, alpha=1.0), lambda: P.pagerank_program(g, alpha=1.0),
                 lambda: ag.pagerank(g, tol=-1), lambda: P.katz(g, alpha=0.001, tol=-1),
                 lambda: P.hits(g, max_iter=-2), lambda: P.KatzProgram(alpha=0)):
        with pytest.raises(ValueError):
            call()


def test_alpha_zero_is_the_personalization():
    g = rmat()
    r = ag.pagerank(g, alpha=0.0)
    assert r.converged and r.error_bound == 0.0
    np.testing.assert_allclose(r.ranks, np.full(g.n, 1.0 / g.n), rtol=0, atol=1e-15)


# ----------------------------------------------------------------------------- tol


@pytest.mark.parametrize("tol", [1e-4, 1e-7])
def test_pagerank_tol_bounds_the_error_in_every_form(tol):
    g = rmat(10)
    exact = ag.pagerank(g, tol=1e-15, max_iter=10000).ranks
    r = ag.pagerank(g, tol=tol)
    assert r.converged and r.error_bound <= tol
    assert np.abs(r.ranks - exact).sum() <= r.error_bound
    assert r.error_bound == pytest.approx(0.85 / 0.15 * r.residual)
    for mode in ("bsp", "asap"):
        p = P.pagerank_program(g, tol=tol, mode=mode)
        assert p.converged and p.stats["error_bound"] <= tol
        assert np.abs(p.values / p.values.sum() - exact).sum() <= tol, mode


@pytest.mark.parametrize("mode", ["bsp", "asap"])
def test_katz_tol_bounds_the_error(mode):
    g = rmat(9)
    alpha = 0.5 / lambda_max(g)
    x = sla.spsolve(sp.identity(g.n, format="csc") - alpha * adjacency(g).tocsc(), np.ones(g.n))
    for tol in (1e-3, 1e-7):
        k = P.katz(g, alpha=alpha, tol=tol, normalized=False, mode=mode)
        assert k.converged and 0 <= k.stats["error_bound"] <= tol
        assert np.abs(k.values - x).sum() <= k.stats["error_bound"]


def test_min_max_programs_report_zero_bound():
    g = rmat()
    for mode in ("bsp", "asap"):
        assert P.run(P.WCCProgram(), g, mode=mode).stats["error_bound"] == 0.0
    assert P.hits(g).stats["error_bound"] is None


def test_hits_max_iter_counts_hits_iterations():
    g = rmat()
    r = P.hits(g, max_iter=3, tol=0.0)
    assert r.iterations == 3 and not r.converged


# ----------------------------------------------------------------------------- Katz


def _bound(g):
    M = adjacency(g)  # rows: destinations, so M @ x = A^T x
    return options.spectral_radius_bound(M.sum(axis=1).max(), M.sum(axis=0).max(), M.dot, g.n)


@pytest.mark.parametrize("spec", ["rmat:8", "rmat:11", "er:500:3000"])
def test_spectral_bound_is_certified_and_tight(spec):
    g = ag.load_graph(spec)
    lam = lambda_max(g)
    B, _ = _bound(g)
    assert lam <= B * (1 + 1e-12) <= 1.3 * lam
    k = P.KatzProgram(alpha=0.5 / lam)   # what the program computes before its run
    P.run(k, g, tol=1e-3)
    assert lam <= k.spectral_bound * (1 + 1e-12) and 0.5 / lam * k.spectral_bound < 1


def test_spectral_bound_weighted():
    rng = np.random.default_rng(4)
    src, dst = rng.integers(0, 300, 2000), rng.integers(0, 300, 2000)
    w = rng.uniform(0.1, 3.0, 2000)
    g = Graph.from_edges(src, dst, weights=w, n=300)
    lam = lambda_max(g)
    B, _ = _bound(g)
    assert lam <= B * (1 + 1e-12) <= 1.3 * lam
    k = P.KatzProgram(alpha=0.9 / lam, weighted=True)
    P.run(k, g, tol=1e-3)
    assert lam <= k.spectral_bound * (1 + 1e-12)


def test_katz_default_alpha_is_refused_with_the_bound(capsys):
    with pytest.raises(InputError, match=r"not below 1/B = .*use a smaller --alpha"):
        P.katz(rmat(), alpha=0.1)
    code, out, err = run_main(capsys, "katz", "rmat:8", "-q")
    assert code == 2 and out == "" and err.count("\n") == 1 and "1/B = 0.009" in err


def test_non_finite_residual_stops_with_exit_2():
    class Unchecked(P.KatzProgram):  # a diverging sum program without the alpha check
        def setup(self, ctx):
            self._factor = None

    g = rmat()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for mode in ("bsp", "asap"):
            with pytest.raises(InputError, match="diverged: its residual became"):
                P.run(Unchecked(alpha=1e80), g, mode=mode, max_iter=1000)


# ----------------------------------------------------------------------------- vertex files


def test_personalization_file_errors(tmp_path, capsys):
    p = tmp_path / "p.txt"
    p.write_text("# x\n1 0.5\n99999 1\n")
    code, _, err = run_main(capsys, "pagerank", "rmat:8", "--personalization", p, "-q")
    assert code == 2 and err == f"{p}:3: node 99999 is not a vertex of the graph\n"
    p.write_text("1 -2\n")
    code, _, err = run_main(capsys, "pagerank", "rmat:8", "--dangling", p, "-q")
    assert code == 2 and err == f"{p}:1: value -2.0 must be finite and >= 0\n"
    p.write_bytes(b"\xef\xbb\xbf1 2\n")  # a byte order mark is not part of the first id
    from asapgraph.options import read_vertex_values

    ids, vals, _ = read_vertex_values(str(p))
    assert ids.tolist() == [1] and vals.tolist() == [2.0]


def test_negative_weights_refused_by_every_pagerank(tmp_path, capsys):
    f = tmp_path / "g.txt"
    f.write_text("1 2 0.5\n2 3 -1\n3 1 2\n")
    code, _, err = run_main(capsys, "pagerank", f, "--weighted", "-q")
    assert code == 2 and "non-negative edge weights" in err
    g = ag.load_graph(str(f), weighted=True)
    for call in (lambda: ag.pagerank(g), lambda: P.pagerank_program(g, mode="asap")):
        with pytest.raises(InputError, match="non-negative edge weights"):
            call()


def test_weighted_refused_on_inputs_without_weights(tmp_path, capsys):
    """--weighted / --weight-col on an input with no weight column is one line, exit 2 (as
    a 2-column text file is), for every command that reads an input: a generator spec, a
    binary graph saved unweighted, a Matrix Market pattern file (plain or compressed).
    It ran unweighted on one process ("weighted": false) and with unit weights reported as
    "weighted": true on K ranks.  A weighted binary graph still reads its weights."""
    import gzip

    txt = tmp_path / "g.txt"
    txt.write_text("1 2 0.5\n2 3 2\n3 1 1\n")
    plain, weighted = tmp_path / "plain.asg", tmp_path / "weighted.asg"
    ag.save_binary(ag.load_graph(str(txt)), str(plain))
    ag.save_binary(ag.load_graph(str(txt), weighted=True), str(weighted))
    mtx = tmp_path / "p.mtx"
    mtx.write_text("%%MatrixMarket matrix coordinate pattern general\n3 3 3\n1 2\n2 3\n3 1\n")
    mtxgz = tmp_path / "p2.mtx.gz"
    mtxgz.write_bytes(gzip.compress(mtx.read_bytes()))
    cases = [(["pagerank", "rmat:8", "--weighted"], "generator spec"),
             (["pagerank", "rmat:8", "--weight-col", "3"], "generator spec"),
             (["pagerank", "rmat:8", "--weighted", "--np", "2"], "generator spec"),
             (["sssp", "er:50:200", "--weighted", "--source", "1"], "generator spec"),
             (["katz", "rmat:8", "--weighted", "--alpha", "0.002"], "generator spec"),
             (["hits", "rmat:8", "--weighted"], "generator spec"),
             (["pagerank", plain, "--weighted"], "saved without edge weights"),
             (["pagerank", plain, "--weighted", "--np", "2"], "saved without edge weights"),
             (["sssp", plain, "--weighted", "--source", "1"], "saved without edge weights"),
             (["convert", plain, tmp_path / "o.txt", "--weighted"], "saved without edge weights"),
             (["info", "rmat:8", "--weighted"], "generator spec"),
             (["pagerank", mtx, "--weighted"], "'pattern'"),
             (["pagerank", mtxgz, "--weighted"], "'pattern'")]
    for argv, words in cases:
        code, out, err = run_main(capsys, *argv, "-q", *(["--json"] if argv[0] not in (
            "convert", "info") else []))
        assert code == 2 and out == "" and err.count("\n") == 1, (argv, err)
        assert words in err and ("--weight-col" if "--weight-col" in argv else "--weighted") \
            in err, (argv, err)
    assert not (tmp_path / "o.txt").exists()
    code, out, err = run_main(capsys, "pagerank", weighted, "--weighted", "--json", "-q")
    assert code == 0 and json.loads(out)["weighted"] is True, err
    code, out, err = run_main(capsys, "pagerank", plain, "--json", "-q")
    assert code == 0 and json.loads(out)["weighted"] is False, err


# ----------------------------------------------------------------------------- refusals


@pytest.mark.parametrize("argv", [
    ["pagerank", "rmat:8", "--fanout", "3"],
    ["pagerank", "rmat:8", "--partition", "hash"],
    ["pagerank", "rmat:8", "--latency", "0.1"],
    ["pagerank", "rmat:8", "--np", "2", "--window", "3"],            # BSP
    ["pagerank", "rmat:8", "--np", "2", "--mode", "asap", "--threads", "2"],
    ["pagerank", "rmat:8", "--np", "2", "--method", "gauss-seidel"],
    ["pagerank", "rmat:8", "--np", "2", "--mode", "asap", "--emulate-seed", "3"],
    ["katz", "rmat:8", "--np", "2", "--mode", "asap", "--fanout", "7"],
    ["hits", "rmat:8", "--np", "2", "--fanout", "1"],                # not accumulative
    ["wcc", "rmat:8", "--np", "2", "--mode", "asap", "--approx", "0.5"],
    ["hits", "rmat:8", "--mode", "asap"],
    ["pagerank", "rmat:8", "--np", "2", "--labels"],                 # a spec has no names
    ["pagerank", "rmat:8", "--labels"],
    ["pagerank", "rmat:8", "--np", "2", "--latency", "0.001", "--straggler", "1:2,2:3"],
    ["run", "asapgraph.programs.components:WCCProgram", "rmat:8", "--seed", "2"],
])
def test_inapplicable_options_are_refused(capsys, argv):
    code, out, err = run_main(capsys, *argv)
    assert code == 2 and out == "" and err.count("\n") == 1 and err.startswith("asapgraph"), err


def test_defaults_and_generate_seed_are_not_refused(capsys, tmp_path):
    code, out, _ = run_main(capsys, "pagerank", "rmat:8", "--json", "-q")
    assert code == 0 and json.loads(out)["error_bound"] <= 1e-10
    code, _, err = run_main(capsys, "generate", "rmat", "--scale", "4", "--seed", "3",
                            "-o", tmp_path / "g.txt", "-q")
    assert code == 0, err


def test_every_rule_refuses_outside_its_commands():
    for dest, rule in options.RULES.items():
        for cmd in options.RUN_COMMANDS:
            why = options.refusal(dest, cmd, "asap", True, {"jitter"})
            if cmd not in rule.commands:
                assert why and options.option_name(dest) in why, (dest, cmd)


def test_help_states_the_default_schedule(capsys):
    """``--help`` names the ASAP schedule the engine uses when ``--schedule`` is absent."""
    from asapgraph.engine.asap import DEFAULT_SCHEDULE

    assert cli.main(["pagerank", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert f"default: {DEFAULT_SCHEDULE} (measured" in out


def _subparsers():
    import argparse

    p = cli.build_parser()
    sub = next(a for a in p._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices


def test_help_shows_each_default_once(capsys):
    """An option whose help states its default ("default: the personalization", "default
    off", "default: sweep ...") gets no second "(default: X)"; absent values (None, a
    flag's False, []) are not shown as defaults."""
    for name, parser in _subparsers().items():
        fmt = parser._get_formatter()
        for a in parser._actions:
            if not a.help or a.help == "==SUPPRESS==":
                continue
            text = fmt._get_help_string(a) % {"default": a.default, "prog": parser.prog}
            assert text.lower().count("(default:") <= 1, (name, a.dest, text)
            if "default" in a.help.lower():
                assert text == a.help % {"default": a.default, "prog": parser.prog}, \
                    (name, a.dest, text)
            for absent in ("(default: None)", "(default: False)", "(default: [])"):
                assert absent not in text, (name, a.dest, text)
    assert cli.main(["pagerank", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "(default: the personalization) (default" not in out and "(default: off)" not in out
    assert "--alpha A damping factor (default: 0.85)" in out


@pytest.mark.parametrize("command", options.RUN_COMMANDS)
def test_help_hides_the_options_always_refused(capsys, command):
    """``--asap-form``, ``--rebalance``, ``--schedule`` (and the other options whose rule
    names other commands) are left out of a command's --help where they are always
    refused; given anyway, they are refused as before (one line, exit 2)."""
    assert cli.main([command, "--help"]) == 0
    out = capsys.readouterr().out
    for dest, rule in options.RULES.items():
        opt = options.option_name(dest)
        if dest in ("method", "threads") and command != "pagerank":
            continue  # not options of the program commands at all
        assert (opt + " " in out or opt + "\n" in out) == (command in rule.commands), \
            (command, opt)
    for dest in ("asap_form", "rebalance", "schedule"):
        if command in options.RULES[dest].commands:
            continue
        value = {"asap_form": "push", "rebalance": "start", "schedule": "priority"}[dest]
        argv = [command, *(["asapgraph.programs.components:WCCProgram"] if command == "run"
                           else []), "rmat:8", options.option_name(dest), value, "--np", "2",
                *(["--source", "1"] if command in ("sssp", "bfs") else [])]
        code, out, err = run_main(capsys, *argv)
        assert code == 2 and out == "" and err.count("\n") == 1, (argv, err)
        assert err.startswith(f"asapgraph: {options.option_name(dest)} does not apply to "
                              f"{command}"), err


def test_asap_env_knobs_checked_up_front(monkeypatch):
    """A bad value of an ASAP experiment knob is one InputError (exit 2 in the CLI), not an
    error on every rank; the table covers every knob the ASAP solver reads."""
    import re
    from pathlib import Path

    import asapgraph.engine.asap as asap_mod
    from asapgraph.errors import InputError
    from asapgraph.options import ASAP_ENV, check_env

    src = Path(asap_mod.__file__).read_text()
    read = set(re.findall(r'environ\.get\(\s*"(ASAPGRAPH_ASAP_[A-Z_]+)"', src))
    # (the on/off switches too, since audit 24: tests/test_audit24.py; the table also
    # holds knobs read outside this module)
    assert read and read <= set(ASAP_ENV)
    check_env({})
    check_env({"ASAPGRAPH_ASAP_RHO": "0.5", "ASAPGRAPH_ASAP_BLOCK": "32",
               "ASAPGRAPH_ASAP_QUANT": "q16c"})
    check_env({"ASAPGRAPH_ASAP_OMEGA": "1.15"})
    check_env({"ASAPGRAPH_ASAP_OMEGA": "1.999"})
    om = "is not a number strictly between 0 and 2 \\(the SOR over-relaxation factor\\)"
    for env, msg in (({"ASAPGRAPH_ASAP_RHO": "x"}, "is not a number"),
                     ({"ASAPGRAPH_ASAP_BLOCK": "1.5"}, "is not an integer"),
                     ({"ASAPGRAPH_ASAP_QUANT": "bogus"}, "expected one of q16"),
                     # SOR's omega outside (0, 2) diverges (audit 22: -1 was taken)
                     *(({"ASAPGRAPH_ASAP_OMEGA": v}, f"ASAPGRAPH_ASAP_OMEGA='{v}' {om}")
                       for v in ("-1", "0", "2", "2.5", "nan", "inf", "x", ""))):
        with pytest.raises(InputError, match=msg):
            check_env(env)
    from asapgraph.cli import main

    monkeypatch.setenv("ASAPGRAPH_ASAP_PATIENCE", "soon")
    assert main(["pagerank", "rmat:6", "-q"]) == 2
    monkeypatch.delenv("ASAPGRAPH_ASAP_PATIENCE")
    monkeypatch.setenv("ASAPGRAPH_ASAP_OMEGA", "-1")
    assert main(["pagerank", "rmat:6", "--mode", "asap", "-q"]) == 2
