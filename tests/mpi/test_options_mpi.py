"""Options mean one thing on 1 and K ranks, and an option either applies or is refused.

* ``test_every_option_applies_or_is_refused``: every run command x every MPI option (a
  non-default value, ``--np 2``, rmat:8): the run either reports something different in
  ``--json`` (compared on the keys that do not vary from run to run: the echoed options,
  ``spectral_gap``, ``partition``, the ``emulation`` block ...) or exits with status 2 and
  one line on stderr.  The rules live in ``asapgraph.options.RULES``.
* ``test_same_on_1_and_4_ranks``: hits --max-iter, negative weights, a personalization
  file with an unknown id, alpha 0 and 1, tol and the Katz alpha check give the same exit
  status and stderr line on 1 and 4 ranks, and (successful runs) the same results within
  1e-8 L1 and the same iteration counts where the engine is deterministic (BSP).
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from asapgraph.engine.asap import DEFAULT_SCHEDULE, SCHEDULES

pytestmark = pytest.mark.mpi

GRAPH = "rmat:8"
#: every option of ``add_distributed_options`` with a non-default value
MPI_OPTIONS = [
    ["--partition", "hash"], ["--fanout", "7"], ["--window", "5"], ["--approx", "0.5"],
    ["--asap-form", "push"], ["--seed", "3"], ["--latency", "0.0005"], ["--bandwidth", "1G"],
    ["--jitter", "0.0005"], ["--straggler", "1:2"], ["--emulate-seed", "5"],
    ["--mpiexec", "MPIEXEC"], ["--clock", "virtual"], ["--clock", "virtual", "--latency", "0.0005"],
    ["--schedule", next(s for s in SCHEDULES if s != DEFAULT_SCHEDULE)],
    ["--rebalance", "start"],
]
#: options whose effect is on the launch, not on the run (nothing to see in --json)
LAUNCH_ONLY = {"--mpiexec"}
COMMANDS = {
    "pagerank": ["pagerank", GRAPH],
    "katz": ["katz", GRAPH, "--alpha", "0.002"],
    "hits": ["hits", GRAPH],
    "wcc": ["wcc", GRAPH],
    "sssp": ["sssp", GRAPH, "--source", "1"],
    "bfs": ["bfs", GRAPH, "--source", "1"],
    "labelprop": ["labelprop", GRAPH, "--allow-unconverged"],
    "run": ["run", "asapgraph.programs.components:WCCProgram", GRAPH],
    # a program with hooks: the general program engine (BSP and ASAP)
    "run_general": ["run", "hookpr.py:HookPR", GRAPH],
}
HOOKPR = """from asapgraph.programs import PageRankProgram


class HookPR(PageRankProgram):  # a hook of its own: the general engine
    def post_delta(self, ctx, deltas):
        return super().post_delta(ctx, deltas)
"""
#: --json keys that vary between two runs with the same options (timings, ASAP traffic)
VOLATILE = ("seconds", "rss", "per_rank", "messages", "bytes", "rounds", "iterations",
            "residual", "error_bound", "top", "wait", "waves", "sweeps", "edges_scanned",
            "steps", "output", "converged")


def _cli(args, cwd, timeout=180):
    return subprocess.run([sys.executable, "-m", "asapgraph", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout)


def _stable(stdout):
    d = json.loads(stdout)
    return {k: v for k, v in d.items() if not any(s in k for s in VOLATILE)}


def _mpiexec():
    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    return here if os.access(here, os.X_OK) else "mpiexec"


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("mode", ["bsp", "asap"])
def test_every_option_applies_or_is_refused(command, mode, tmp_path):
    # --allow-unconverged: an option may slow a run down (e.g. ASAP --approx 0.5 does not
    # reach tol 1e-10 on rmat:8 within --max-iter, before this change too): still --json
    base = [*COMMANDS[command], "--np", "2", "--mode", mode, "--json", "-q",
            "--allow-unconverged"]
    (tmp_path / "hookpr.py").write_text(HOOKPR)
    ref = _cli(base, tmp_path)
    if ref.returncode == 2:  # --mode asap of a non-accumulative program: refused already
        assert len(ref.stderr.strip().splitlines()) == 1, ref.stderr
        return
    assert ref.returncode == 0, ref.stderr
    ref_json = _stable(ref.stdout)
    for opt in MPI_OPTIONS:
        opt = [x.replace("MPIEXEC", _mpiexec()) for x in opt]
        r = _cli([*base, *opt], tmp_path)
        if r.returncode == 2:
            lines = r.stderr.strip().splitlines()
            assert len(lines) == 1 and lines[0].startswith("asapgraph: ") and \
                opt[0] in lines[0], (opt, r.stderr)
            continue
        assert r.returncode == 0, (opt, r.stderr)
        if opt[0] in LAUNCH_ONLY:
            continue
        assert _stable(r.stdout) != ref_json, f"{command} --mode {mode}: {opt} was ignored"


def test_fanout_and_seed_show_in_json_on_3_ranks(tmp_path):
    """On 2 ranks --fanout > 1 and --seed are refused (no choice of peers); on 3 ranks
    --fanout changes the expander (spectral_gap) and --seed the order of its peers."""
    base = ["pagerank", GRAPH, "--np", "3", "--mode", "asap", "--json", "-q"]
    runs = {}
    for extra in ([], ["--fanout", "1"], ["--fanout", "1", "--seed", "7"]):
        r = _cli([*base, *extra], tmp_path)
        assert r.returncode == 0, r.stderr
        runs[" ".join(extra)] = json.loads(r.stdout)
    assert runs[""]["fanout"] == 2 and runs["--fanout 1"]["fanout"] == 1
    assert runs[""]["spectral_gap"] != runs["--fanout 1"]["spectral_gap"]
    assert runs["--fanout 1 --seed 7"]["seed"] == 7
    r = _cli([*base, "--seed", "7"], tmp_path)  # fanout 2 = every other rank: nothing to seed
    assert r.returncode == 2 and "--seed changes nothing" in r.stderr


def test_message_payload_knobs_show_in_json(tmp_path):
    """The environment's message experiments (ASAPGRAPH_ASAP_QUANT,
    ASAPGRAPH_ASAP_REMAINDERS) are visible per ASAP rank in --json."""
    base = [sys.executable, "-m", "asapgraph", "pagerank", GRAPH, "--np", "2", "--mode",
            "asap", "--json", "-q", "--tol", "1e-10"]
    out = {}
    for env in ({}, {"ASAPGRAPH_ASAP_QUANT": "q16c", "ASAPGRAPH_ASAP_REMAINDERS": "0"}):
        r = subprocess.run(base, cwd=tmp_path, capture_output=True, text=True, timeout=180,
                           env={**os.environ, **env})
        assert r.returncode == 0, r.stderr
        d = json.loads(r.stdout)
        out[bool(env)] = {(p["message_quant"], p["keep_remainders"]) for p in d["per_rank"]}
    assert out == {False: {("q16b", True)}, True: {("q16c", False)}}


def test_refusal_table_is_what_the_cli_does(tmp_path):
    """The applied options are those of the table: the accumulative commands take the
    ASAP options (katz: shown in --json), hits and labelprop refuse them but take the
    emulation, and ``run`` is checked against its program."""
    from asapgraph.options import RULES

    assert "katz" in RULES["fanout"].commands and "hits" not in RULES["fanout"].commands
    r = _cli(["katz", GRAPH, "--alpha", "0.002", "--np", "2", "--mode", "asap", "--window",
              "3", "--json", "-q"], tmp_path)
    assert r.returncode == 0 and json.loads(r.stdout)["window"] == 3, r.stderr
    # the general program engine emulates the network too (BSP supersteps here); on the
    # virtual clock with the model, so the delay is the model's, not the host's (on the
    # host's clock a loaded host delivered every message after its due time: delay 0)
    r = _cli(["hits", GRAPH, "--np", "2", "--latency", "0.001", "--clock", "virtual",
              "--compute", "model", "--json", "-q"], tmp_path)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["emulation"]["latency"] == 0.001 and out["emulated_delay_seconds"] > 0, out
    # each of its supersteps waits at least the latency for its peer's message
    assert out["emulated_delay_seconds"] >= 0.001 * out["iterations"], out
    r = _cli(["run", "asapgraph.programs.labelprop:LabelPropProgram", GRAPH, "--np", "2",
              "--straggler", "1:3", "--allow-unconverged", "--json", "-q"], tmp_path)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["emulation"]["straggler"] == {"1": 3.0} and out["straggler_sleep_seconds"] > 0
    r = _cli(["hits", GRAPH, "--np", "2", "--fanout", "1", "--json"], tmp_path)
    assert r.returncode == 2 and "--fanout does not apply to hits" in r.stderr, r.stderr
    assert r.stderr.count("\n") == 1
    r = _cli(["wcc", GRAPH, "--np", "2", "--mode", "asap", "--approx", "0.5"], tmp_path)
    assert r.returncode == 2 and "--approx does not apply to wcc" in r.stderr
    r = _cli(["katz", GRAPH, "--fanout", "7"], tmp_path)
    assert r.returncode == 2 and r.stderr.count("\n") == 1


@pytest.mark.parametrize("command", [["pagerank", GRAPH], ["katz", GRAPH, "--alpha", "0.002"]])
def test_message_counts_mean_one_thing(tmp_path, command):
    """--json on ranks: ``messages_sent`` is every message (data + ASAP's ACKs), split as
    ``data_messages_sent`` + ``acks_sent`` in both modes; PageRank's ``per_rank``
    ``messages_sent``/``acks_sent`` sum to those (top level 150 against per-rank data
    messages summing to 75 read as a contradiction, with no split shown)."""
    for mode in ("bsp", "asap"):
        r = _cli([*command, "--np", "2", "--mode", mode, "--json", "-q"], tmp_path)
        assert r.returncode == 0, r.stderr
        d = json.loads(r.stdout)
        assert d["messages_sent"] == d["data_messages_sent"] + d["acks_sent"], d
        assert (d["acks_sent"] == 0) == (mode == "bsp"), (mode, d["acks_sent"])
        if "per_rank" in d:
            assert d["data_messages_sent"] == sum(p["messages_sent"] for p in d["per_rank"])
            assert d["acks_sent"] == sum(p["acks_sent"] for p in d["per_rank"])


def test_threads_apply_to_bsp_ranks(tmp_path):
    """``--np K --threads T`` (BSP): T OpenMP threads inside each rank, shown in --json
    (top level and per rank), the same answer as one thread per rank; ASAP refuses it."""
    base = ["pagerank", GRAPH, "--np", "2", "--json", "-q", "--tol", "1e-13"]
    out = {}
    for t in ("1", "2"):
        r = _cli([*base, "--threads", t, "-o", str(tmp_path / f"t{t}.csv")], tmp_path)
        assert r.returncode == 0, r.stderr
        d = json.loads(r.stdout)
        assert d["threads"] == int(t) and [q["threads"] for q in d["per_rank"]] == [int(t)] * 2
        out[t] = _read(tmp_path / f"t{t}.csv")
    assert np.array_equal(out["1"][:, 0], out["2"][:, 0])
    assert np.abs(out["1"][:, 1] - out["2"][:, 1]).sum() <= 1e-12
    r = _cli([*base, "--mode", "asap", "--threads", "2"], tmp_path)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "--threads" in r.stderr



# above pyproject's 300 s: nine launches of up to 180 s and one of up to 600 s, plus 60 s
@pytest.mark.timeout(2280)
def test_asap_refuses_tols_it_cannot_certify_and_obeys_max_iter_0(tmp_path):
    """ASAP stops on a certified bound: --tol 0 (every accumulative program) and PageRank
    tols below ``ASAP_PAGERANK_MIN_TOL`` are refused up front with one line (they ran
    to --max-iter and exit 3); BSP runs them.  --max-iter 0 is a usage error (one line,
    exit 2) on 1 and K ranks in both modes (BSP reported error bound inf, ASAP the bound of
    its start-up waves; ASAP once read 0 as "no limit" and converged)."""
    from asapgraph.options import ASAP_PAGERANK_MIN_TOL

    low = repr(ASAP_PAGERANK_MIN_TOL / 10)
    for args in (["pagerank", GRAPH, "--tol", "0"], ["pagerank", GRAPH, "--tol", low],
                 ["katz", GRAPH, "--alpha", "0.002", "--tol", "0"]):
        r = _cli([*args, "--np", "2", "-q"], tmp_path)
        assert r.returncode == 0, (args, r.stderr)
        r = _cli([*args, "--np", "2", "--mode", "asap", "-q"], tmp_path)
        assert r.returncode == 2 and r.stderr.count("\n") == 1, (args, r.stderr)
        assert r.stderr.startswith("asapgraph: --tol ") and "--mode bsp" in r.stderr, r.stderr
    r = _cli(["pagerank", GRAPH, "--tol", repr(ASAP_PAGERANK_MIN_TOL), "--np", "2", "--mode",
              "asap", "-q", "--json"], tmp_path, timeout=600)
    assert r.returncode == 0 and json.loads(r.stdout)["converged"], r.stderr
    for extra in ([], ["--np", "2"], ["--np", "2", "--mode", "asap"]):
        r = _cli(["pagerank", GRAPH, "--max-iter", "0", "-q", *extra], tmp_path)
        assert r.returncode == 2 and r.stderr.count("\n") == 1, (extra, r.stderr)
        assert r.stderr.startswith("asapgraph pagerank: error: argument --max-iter: expected "
                                   "a positive integer, got '0'"), r.stderr

# ----------------------------------------------------------------------------- 1 vs 4 ranks


def _files(tmp_path):
    neg = tmp_path / "neg.txt"
    neg.write_text("1 2 0.5\n2 3 -1\n3 1 2\n3 4 1\n4 1 1\n")
    pers = tmp_path / "pers.txt"
    pers.write_text("# seeds\n1 0.5\n123456 1\n")
    plain = tmp_path / "plain.asg"  # a binary graph saved without weights
    if not plain.exists():
        import asapgraph as ag

        ag.save_binary(ag.load_graph(str(neg)), str(plain))
    return {"NEG": str(neg), "PERS": str(pers), "PLAIN": str(plain)}


CASES = {
    # name: (argv, deterministic iteration count)
    "hits_max_iter": (["hits", GRAPH, "--max-iter", "3", "--allow-unconverged"], True),
    "negative_weights": (["pagerank", "NEG", "--weighted"], True),
    "negative_weights_asap": (["pagerank", "NEG", "--weighted", "--mode", "asap"], True),
    "personalization_unknown": (["pagerank", GRAPH, "--personalization", "PERS"], True),
    "alpha_0": (["pagerank", GRAPH, "--alpha", "0"], True),
    "alpha_1": (["pagerank", GRAPH, "--alpha", "1"], True),
    "tol_bsp": (["pagerank", GRAPH, "--tol", "1e-6"], True),
    "tol_asap": (["pagerank", GRAPH, "--tol", "1e-9", "--mode", "asap"], False),
    "katz_tol": (["katz", GRAPH, "--alpha", "0.002", "--tol", "1e-8"], True),
    "katz_alpha_refused": (["katz", GRAPH, "--alpha", "0.1"], True),
    "katz_asap": (["katz", GRAPH, "--alpha", "0.002", "--tol", "1e-8", "--mode", "asap"], False),
    # --weighted on an input without weights: refused alike (K ranks said "weighted": true)
    "weighted_spec": (["pagerank", GRAPH, "--weighted"], True),
    "weighted_spec_sssp": (["sssp", GRAPH, "--weighted", "--source", "1"], True),
    "weighted_binary": (["pagerank", "PLAIN", "--weighted", "--mode", "asap"], True),
}


def _read(out):
    rows = np.loadtxt(out, delimiter=",", skiprows=1, ndmin=2)
    return rows


@pytest.mark.parametrize("case", sorted(CASES))
def test_same_on_1_and_4_ranks(case, tmp_path):
    argv, deterministic = CASES[case]
    f = _files(tmp_path)
    argv = [f.get(a, a) for a in argv]
    runs = []
    for np_ in ("1", "4"):
        out = tmp_path / f"out{np_}.csv"
        r = _cli([*argv, "--np", np_, "--json", "-q", "-o", str(out)], tmp_path, timeout=240)
        runs.append((r, out))
    (r1, o1), (r4, o4) = runs
    assert r1.returncode == r4.returncode, (r1.stderr, r4.stderr)
    if r1.returncode != 0:
        assert r1.returncode == 2
        assert r1.stderr == r4.stderr, (r1.stderr, r4.stderr)
        assert not o1.exists() and not o4.exists()
        return
    j1, j4 = json.loads(r1.stdout), json.loads(r4.stdout)
    assert j1["converged"] == j4["converged"]
    if deterministic:
        assert j1["iterations"] == j4["iterations"], (j1["iterations"], j4["iterations"])
    for j in (j1, j4):
        if j["converged"] and j.get("error_bound") is not None:
            assert j["error_bound"] <= j["tol"]
    a, b = _read(o1), _read(o4)
    assert np.array_equal(a[:, 0], b[:, 0])
    assert np.abs(a[:, 1:] - b[:, 1:]).sum() <= 1e-8, case


INPUT_OPTIONS = {   # option -> what --json shows for it
    "--undirected": {"undirected": True},
    "--labels": {"labels": True},
    "--weighted": {"weight_col": 3},
    "--weight-col 4": {"weight_col": 4},
    "--personalization P": {"personalization": "P"},
    "--dangling P": {"dangling": "P"},
}


@pytest.mark.parametrize("extra", [[], ["--np", "2"], ["--np", "2", "--mode", "asap"]])
def test_input_options_show_in_json(tmp_path, extra):
    """``--undirected``, ``--labels``, ``--weighted``/``--weight-col``, ``--personalization``
    and ``--dangling`` apply but were nowhere in ``--json`` (only ``weighted``), on one
    process and on ranks: now each shows, and its absence shows as the default."""
    (tmp_path / "g.txt").write_text("1 2 1 5\n2 3 2 6\n3 1 3 7\n3 4 4 8\n")
    (tmp_path / "P").write_text("1 1\n")
    base = ["pagerank", "g.txt", "--json", "-q", *extra]
    r = _cli(base, tmp_path)
    assert r.returncode == 0, r.stderr
    plain = json.loads(r.stdout)
    assert {k: plain[k] for k in ("undirected", "labels", "weight_col", "personalization",
                                  "dangling")} == {"undirected": False, "labels": False,
                                                   "weight_col": None, "personalization": None,
                                                   "dangling": None}
    for opt, want in INPUT_OPTIONS.items():
        r = _cli(base + opt.split(), tmp_path)
        assert r.returncode == 0, (opt, r.stderr)
        got = json.loads(r.stdout)
        assert {k: got[k] for k in want} == want, (opt, extra)
    r = _cli(["wcc", "g.txt", "--json", "-q", "--undirected", "--labels", *extra], tmp_path)
    got = json.loads(r.stdout)
    assert (got["undirected"], got["labels"], got["weight_col"]) == (True, True, None)
