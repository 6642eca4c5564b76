"""Distributed PageRank (BSP and ASAP) equals a scipy power iteration (and networkx).

Every launch runs a batch of cases under ``mpiexec -n K`` (see ``_worker.py``) and the
test asserts on the L1 error of the full rank vector of each run.
"""
import json
import sys

import numpy as np
import pytest

# a launch runs up to 60 solves on K ranks: ~90 s at load 20 on 2 cores, and it once went
# past 300 s (test_equals_reference[4], load 19-21, beside benchmark grids); the limits
# are for a hang, not for speed
pytestmark = [pytest.mark.mpi, pytest.mark.timeout(1500)]
LAUNCH_TIMEOUT = 1200

TOL = 1e-8  # conftest.L1_TOL["pagerank"]
RUNS = ([{"mode": m, "partition": p, "tol": t, "max_iter": 2000}
         for m, t in (("bsp", 1e-13), ("asap", 1e-11)) for p in ("range", "hash")]
        + [{"mode": "asap", "asap_form": "push", "partition": "hash", "tol": 1e-11,
           "max_iter": 2000}])


def _files(tmp_path, rng):
    """Generated graphs: duplicates, self-loops, dangling vertices, sparse ids, weights."""
    n, m = 120, 700
    ids = np.sort(rng.choice(10_000, size=n, replace=False)) * 7 + 3
    s = rng.integers(0, n, m)
    d = rng.integers(0, n // 2, m)  # vertices >= n/2 with no in-edges...
    s[:40] = s[40:80]  # duplicates
    d[:40] = d[40:80]
    d[80:100] = s[80:100]  # self-loops
    keep = s < int(0.8 * n)  # ... and the top 20% of sources are dangling
    s, d = s[keep], d[keep]
    w = rng.uniform(0.1, 5.0, len(s))
    g = tmp_path / "mixed.txt"
    g.write_text("# generated\n" + "".join(f"{ids[a]}\t{ids[b]}\t{x:.6f}\n"
                                           for a, b, x in zip(s, d, w)))
    pers = tmp_path / "pers.txt"
    present = np.unique(np.concatenate([s, d]))  # an id that is not a vertex is refused
    sel = rng.choice(present, 15, replace=False)
    pers.write_text("".join(f"{ids[i]} {rng.uniform(0.5, 2):.4f}\n" for i in sel))
    dang = tmp_path / "dang.txt"
    sel = rng.choice(present, 10, replace=False)
    dang.write_text("".join(f"{ids[i]} {rng.uniform(0.5, 2):.4f}\n" for i in sel))
    tiny = tmp_path / "tiny.txt"  # 3 vertices: with 4 ranks some rank owns nothing
    tiny.write_text("5 9\n9 5\n9 12\n")
    star = tmp_path / "star.txt"  # every edge leaves vertex 0: one rank holds all edges
    star.write_text("".join(f"0 {i}\n" for i in range(1, 60)))
    dense = tmp_path / "dense.txt"  # ids < m / 8: the ranks' presence-map id mapping
    ds, dd = rng.integers(0, 400, 4000), rng.integers(0, 200, 4000) * 2  # odd ids: sources only
    dense.write_text("".join(f"{a} {b}\n" for a, b in zip(ds, dd)))
    return {"mixed": str(g), "pers": str(pers), "dang": str(dang), "tiny": str(tiny),
            "star": str(star), "dense": str(dense)}


def _cases(f, optional_shared):
    cases = [
        {"name": "mixed", "source": f["mixed"], "runs": RUNS},
        {"name": "mixed-weighted-pers", "source": f["mixed"], "weighted": True,
         "personalization": f["pers"], "runs": RUNS},
        {"name": "mixed-pers-dangling", "source": f["mixed"], "personalization": f["pers"],
         "dangling": f["dang"], "runs": RUNS},
        {"name": "tiny", "source": f["tiny"], "runs": RUNS},
        {"name": "star", "source": f["star"], "runs": RUNS},
        {"name": "all-dangling", "source": "er:7:0", "runs": RUNS},
        {"name": "rmat8", "source": "rmat:8:4:3", "runs": RUNS},
        {"name": "dense-ids", "source": f["dense"], "runs": RUNS},
        {"name": "rmat11", "source": "rmat:11:16:4", "runs": RUNS},
    ]
    for name, opts in (("p2p-Gnutella08.txt", {}), ("wiki-Vote.txt.gz", {}),
                       ("foodweb-baydry.txt", {"weighted": True})):
        p = optional_shared(name)
        if p is None:  # dataset absent: left out (warned)
            continue
        cases.append({"name": name, "source": str(p), "runs": RUNS, **opts})
    return cases


def _check(recs, ncases):
    assert len(recs) == ncases * len(RUNS)
    bad = [r for r in recs if not (r["same_ids"] and r["l1"] <= TOL and r["converged"])]
    assert not bad, bad
    for r in recs:
        if r["nx_l1"] is not None:  # the scipy reference agrees with networkx
            assert r["nx_l1"] <= 1e-10, r


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_equals_reference(k, run_cases, tmp_path, rng, optional_shared):
    f = _files(tmp_path, rng)
    cases = _cases(f, optional_shared)
    recs = _check_and_return(run_cases(k, cases, timeout=LAUNCH_TIMEOUT), len(cases))
    if k == 4:  # the degenerate layouts really happened
        tiny = [r for r in recs if r["case"] == "tiny"]
        assert any(0 in r["vertices_per_rank"] for r in tiny)
        star = [r for r in recs if r["case"] == "star"]
        assert all(sorted(r["edges_per_rank"])[-2] == 0 for r in star)


def _check_and_return(recs, ncases):
    _check(recs, ncases)
    return recs


@pytest.mark.parametrize("k,reorder", [(2, "1"), (3, "1"), (3, "0")])
def test_asap_relabelled_push_layout_equals_reference(k, reorder, run_cases, tmp_path, rng,
                                                      shared):
    """The jacobi sweep on its relabelled rows (env ``ASAPGRAPH_ASAP_REORDER=1``; the
    policy relabels only graphs of a million edges) or on the given ones, with a short
    prefetch distance, so rows near the end of the edges are pushed without prefetch:
    every run equals the reference, conserves mass (debug_mass, emulated delays), and
    really relabelled (or not)."""
    f = _files(tmp_path, rng)
    emu = {"latency": 2e-4, "jitter": 1e-3, "seed": k}
    runs = [{"mode": "asap", "partition": p, "tol": 1e-11, "max_iter": 2000}
            for p in ("range", "hash")]
    runs.append({"mode": "asap", "partition": "hash", "tol": 1e-11, "max_iter": 2000,
                 "emulation": emu, "debug_mass": True, "window": 2})
    cases = [{"name": "mixed-weighted-pers-dangling", "source": f["mixed"], "weighted": True,
              "personalization": f["pers"], "dangling": f["dang"], "runs": runs},
             {"name": "tiny", "source": f["tiny"], "runs": runs},
             {"name": "rmat11", "source": "rmat:11:16:4", "runs": runs}]
    recs = run_cases(k, cases, timeout=LAUNCH_TIMEOUT,
                     env={"ASAPGRAPH_ASAP_REORDER": reorder, "ASAPGRAPH_ASAP_PREFETCH": "3"})
    assert len(recs) == len(cases) * len(runs)
    for r in recs:
        # with emulated delays a run may end at its work cap, as in the other emulated
        # tests: on "tiny" (3 edges on a rank) each trickle of 1 ms-jittered input is a
        # sweep, and 1 run in 4 used its 2000 sweeps before the tol; the answer is checked
        assert r["same_ids"] and r["l1"] <= TOL and (r["converged"] or r.get("emulation")), r
        if r.get("debug_mass"):
            assert r["mass_checks"] >= 1 and r["max_mass_error"] <= 1e-9, r
        assert all(rl == (reorder == "1")
                   for rl, nv in zip(r["rank_relabelled"], r["vertices_per_rank"]) if nv), r


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_asap_emulated_delays_stragglers(seed, run_cases, shared, tmp_path, rng):
    """Random delays (reordering), a slow rank, a window and the approximation knob."""
    f = _files(tmp_path, rng)
    emu = {"latency": 2e-4, "jitter": 2e-3, "bandwidth": 5e8, "straggler": {"1": 3.0},
           "pause_prob": 0.05, "pause_seconds": 0.003, "seed": seed}
    runs = [
        {"mode": "asap", "partition": "hash", "tol": 1e-11, "emulation": emu, "seed": seed,
         "debug_mass": True, "max_iter": 2000},
        {"mode": "asap", "partition": "range", "tol": 1e-11, "emulation": emu, "seed": seed,
         "window": 3, "approx": 0.2, "fanout": 1, "debug_mass": True, "max_iter": 2000},
        {"mode": "asap", "asap_form": "push", "partition": "range", "tol": 1e-11,
         "emulation": emu, "seed": seed, "window": 2, "debug_mass": True, "max_iter": 2000},
        {"mode": "bsp", "partition": "hash", "tol": 1e-13, "emulation": emu, "max_iter": 2000},
    ]
    cases = [{"name": "mixed-w", "source": f["mixed"], "weighted": True,
              "personalization": f["pers"], "runs": runs}]
    recs = run_cases(3, cases, timeout=LAUNCH_TIMEOUT)
    assert len(recs) == len(runs)
    for r in recs:
        assert r["same_ids"] and r["l1"] <= TOL, r
        if r["mode"] == "asap":
            assert r["mass_checks"] >= 1 and r["max_mass_error"] <= 1e-9, r
            assert 0 < r["spectral_gap"] <= 1


def test_asap_debug_mass_four_ranks(run_cases, shared):
    p = shared("p2p-Gnutella08.txt")
    runs = [{"mode": "asap", "partition": part, "tol": 1e-11, "debug_mass": True, "fanout": 1,
             "asap_form": form} for part in ("range", "hash") for form in ("jacobi", "push")]
    recs = run_cases(4, [{"name": "p2p", "source": str(p), "runs": runs}])
    for r in recs:
        assert r["l1"] <= TOL and r["mass_checks"] >= 1 and r["max_mass_error"] <= 1e-9, r


def test_asap_error_trace_sums_the_ranks_parts(mpirun, tmp_path):
    """error_reference: the summed per-rank error at each wave is the true L1 error, and
    the per-rank rows (``error_trace_ranks``) are those parts.

    Its last sample is close to the final error (the final flushes only shrink it), the
    trace covers the run, and the bytes column never decreases.
    """
    code = f"""
import json, numpy as np
from mpi4py import MPI
import asapgraph.engine as ad
comm = MPI.COMM_WORLD
ref = ad.pagerank("rmat:13:8:5", comm, mode="bsp", tol=1e-14, max_iter=1000)
ids, vals = comm.bcast((ref.ids, ref.ranks) if comm.rank == 0 else None)
r = ad.pagerank("rmat:13:8:5", comm, mode="asap", tol=1e-9, error_reference=(ids, vals))
if comm.rank == 0:
    tr = r.stats["error_trace"]
    json.dump({{"trace": tr, "ranks": r.stats["error_trace_ranks"],
               "final": float(np.abs(r.ranks - vals).sum()),
               "bytes": r.stats["bytes_sent"]}}, open({str(tmp_path / "o.json")!r}, "w"))
"""
    p = mpirun(3, [sys.executable, "-c", code], timeout=120)
    assert p.returncode == 0, p.stderr[-3000:]
    d = json.loads((tmp_path / "o.json").read_text())
    tr = d["trace"]
    assert len(tr) >= 2
    errs = [e for _, e, _ in tr]
    assert errs[0] >= errs[-1] and errs[-1] <= 1e-7  # it ends (nearly) converged
    assert abs(errs[-1] - d["final"]) <= max(1e-9, 0.5 * errs[-1])
    b = [x for _, _, x in tr]
    assert b == sorted(b) and b[-1] <= d["bytes"]
    # the per-rank rows: one error per rank's part, summing to the wave's error
    assert len(d["ranks"]) == len(tr)
    for row, (_, e, _) in zip(d["ranks"], tr):
        assert len(row) == 3 and min(row) >= 0.0
        assert abs(sum(row) - e) <= 1e-12 * max(e, 1e-300)


@pytest.mark.parametrize("form", ["jacobi", "push"])
def test_asap_max_iter_stops_cleanly_not_converged(mpirun, tmp_path, form):
    """max_iter bounds the ranks' edge work (8 x max_iter sweeps of the graph, summed: BSP
    supersteps' worth, audit 31): the run flushes, ends, and says so honestly."""
    code = f"""
import json, numpy as np
from mpi4py import MPI
import asapgraph.engine as ad
comm = MPI.COMM_WORLD
out = []
for mi in (1, 2000):  # (1: 8 graph sweeps; jacobi converges in ~32, push ~414)
    r = ad.pagerank("rmat:12:8:2", comm, mode="asap", tol=1e-12, max_iter=mi,
                    asap_form={form!r})
    if comm.rank == 0:
        out.append({{"converged": r.converged, "error_bound": r.error_bound,
                     "sum": float(r.ranks.sum()), "edges": r.stats["edges_visited"],
                     "m": r.stats["m"], "budget": r.stats["work_budget_edges"]}})
if comm.rank == 0:
    json.dump(out, open({str(tmp_path / "o.json")!r}, "w"))
"""
    p = mpirun(3, [sys.executable, "-c", code], timeout=120)
    assert p.returncode == 0, p.stderr[-3000:]
    short, full = json.loads((tmp_path / "o.json").read_text())
    assert not short["converged"] and short["error_bound"] > 1e-12
    assert short["budget"] == 8 * 1 * short["m"]
    # stopped at a wave after the budget (the waves carrying the sums are in flight while
    # the ranks sweep: not a tight cap, 12 graph sweeps past it under load, CI): far
    # below the ~414 sweeps the push form takes without it
    assert short["budget"] <= short["edges"] <= short["budget"] + 64 * short["m"]
    assert abs(short["sum"] - 1.0) < 1e-9
    assert full["converged"] and full["error_bound"] <= 1e-12
