"""ASAP PageRank has no precision floor (issue 14 item 4): it certifies tol 1e-12 / 1e-13.

The ``jacobi`` form conserves the signed residual mass, which is 0 on exact arithmetic;
rounding in the sweeps used to leave a drift (5e-15 on rmat:13, 7.5e-14 on rmat:16) that
no push shrinks, so the residual L1 sum, and with it the certified bound, could not go
below it: rmat:13 on 3 ranks stopped at a bound of 1.2e-13 against tol 1e-13 after
``max_iter``.  The sweeps now put the drift back (:meth:`.asap_delta.DeltaState._recentre`);
``debug_mass`` shows the signed sum stays at rounding level.  Small real graphs from
../shared/datasets (skipped when it is absent) run at tol 1e-12 on 2-4 ranks.
"""
import pytest

from asapgraph.engine.asap import SCHEDULES

pytestmark = pytest.mark.mpi

#: small shared graphs (a few seconds each on 2-4 ranks); the weighted one with its weights
DATASETS = [("karate.txt", False), ("foodweb-baydry.txt", True), ("email-Eu-core.txt", False),
            ("p2p-Gnutella08.txt", False), ("wiki-Vote.txt.gz", False)]


def _check(recs, n, tol):
    assert len(recs) == n
    for r in recs:
        # the reference is a power iteration to L1 change 1e-15 (error ~1e-14)
        assert r["same_ids"] and r["converged"] and r["residual"] <= tol, r
        assert r["l1"] <= tol + 5e-14, r
        if r.get("max_mass_error") is not None:
            assert r["max_mass_error"] <= 1e-16, r


@pytest.mark.parametrize("k", [2, 3, 4])
def test_rmat_reaches_1e_13(k, run_cases):
    runs = [{"mode": "asap", "schedule": s, "tol": 1e-13, "max_iter": 300, "debug_mass": True}
            for s in SCHEDULES]
    recs = run_cases(k, [{"name": "rmat13", "source": "rmat:13:16:1", "runs": runs}],
                     timeout=240)
    _check(recs, len(runs), 1e-13)


@pytest.mark.parametrize("k", [2, 3, 4])
def test_shared_graphs_reach_1e_12(k, run_cases, optional_shared):
    cases = []
    for name, weighted in DATASETS:
        p = optional_shared(name)
        if p is None:  # dataset absent: left out (warned)
            continue
        cases.append({"name": name, "source": str(p), "weighted": weighted,
                      "runs": [{"mode": "asap", "tol": 1e-12, "max_iter": 3000}]})
    if not cases:
        pytest.skip("../shared/datasets is absent")
    _check(run_cases(k, cases, timeout=240), len(cases), 1e-12)
