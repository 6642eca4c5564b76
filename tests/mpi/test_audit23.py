"""Audit 23: regressions of defects found by a user-level audit, each checked alike on
one process and on K ranks where the defect could differ."""
import json

import pytest

pytestmark = [pytest.mark.mpi, pytest.mark.timeout(600)]

PR = "asapgraph.programs:PageRankProgram"


@pytest.mark.parametrize("cmd", [["pagerank"], ["pagerank", "--rebalance", "start"],
                                 ["run", PR]])
def test_pagerank_residual_means_the_same_on_asap_ranks(tmp_path, cli, cmd):
    """``residual`` in ``--json`` is PageRank's L1 change everywhere: the last sweep's on
    one process and in BSP, and in ASAP on ranks the change that certifies the bound,
    ``error_bound * (1 - alpha) / alpha`` (``run PageRankProgram`` on ranks already said
    so).  ``pagerank --np K --mode asap`` reported the bound itself as ``residual``: 5.67x
    the other paths' figure at alpha 0.85, 1x at alpha 0.5."""
    runs = [("0.85", "1", "bsp"), ("0.85", "1", "asap"), ("0.85", "2", "bsp"),
            ("0.85", "2", "asap"), ("0.85", "3", "asap"), ("0.5", "2", "asap")]
    for alpha, np_, mode in runs:
        if "--rebalance" in cmd and np_ == "1":
            continue  # (a distributed option: refused on one process)
        a = float(alpha)
        extra = ["--param", f"alpha={alpha}"] if cmd[0] == "run" else ["--alpha", alpha]
        r = cli([*cmd, "rmat:9", "--tol", "1e-9", "--np", np_, "--mode", mode, "--json",
                 "-q", *extra], tmp_path)
        assert r.returncode == 0, (cmd, alpha, np_, mode, r.stderr)
        j = json.loads(r.stdout)
        assert j["converged"] and j["error_bound"] <= 1e-9, (cmd, alpha, np_, mode, j)
        assert j["residual"] == pytest.approx(j["error_bound"] * (1 - a) / a,
                                              rel=1e-9), (cmd, alpha, np_, mode, j)
