"""Partitioned loading on 4 ranks: no rank holds the whole edge list (per-rank peak memory).

Peaks are ``VmHWM`` (``asapgraph._rss``; ``ru_maxrss`` would inherit pytest's own size
across exec), deterministic up to a few MB.  Every process starts from an
import baseline (a plain interpreter with numpy + asapgraph; an MPI rank also has mpi4py
and MPICH), so the comparison is of the growth above the baseline: a rank's share must be
a clear fraction of what the single process needs for the same load + PageRank.
"""
import json
import os
import subprocess
import sys

import pytest

pytestmark = [pytest.mark.mpi, pytest.mark.slow]

_RSS = "from asapgraph._rss import peak_rss_bytes;print(peak_rss_bytes()/2**20)"


def _py(tmp_path, code, timeout=180):
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=dict(os.environ),
                       capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, r.stderr[-3000:]
    return float(r.stdout.split()[-1])


def _single_peak(tmp_path, source):
    base = _py(tmp_path, "import asapgraph.io, asapgraph.pagerank;" + _RSS)
    peak = _py(tmp_path, "from asapgraph.io import load_graph;from asapgraph.pagerank import "
               f"pagerank;g=load_graph({source!r});r=pagerank(g,tol=1e-6);" + _RSS)
    return base, peak


def _rank_baseline(mpirun):
    code = ("from mpi4py import MPI;import numpy;import asapgraph.cli, asapgraph.dist.api, "
            "asapgraph.dist.loader, asapgraph.dist.bsp;MPI.COMM_WORLD.Barrier();" + _RSS)
    r = mpirun(1, [sys.executable, "-c", code], timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]
    return float(r.stdout.split()[-1])


def _four_ranks(tmp_path, source):
    r = subprocess.run([sys.executable, "-m", "asapgraph", "pagerank", source, "--np", "4",
                        "--json", "-q", "--tol", "1e-6"], cwd=tmp_path, env=dict(os.environ),
                       capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def _report(name, sbase, single, rbase, js):
    per = [q["peak_rss_mb"] for q in js["per_rank"]]
    top = js["peak_rss_mb_max_rank"]
    print(f"\n{name} peak RSS: single process {single:.0f} MB (import baseline {sbase:.0f}); "
          f"4 ranks {[round(q) for q in per]} MB (max {top:.0f}; rank baseline {rbase:.0f}); "
          f"growth ratio max-rank/single = {(top - rbase) / (single - sbase):.2f}")
    return top


@pytest.mark.shared
def test_cnr2000_four_ranks_peak_memory(tmp_path, shared, mpirun):
    p = str(shared("cnr-2000.txt.gz"))
    sbase, single = _single_peak(tmp_path, p)
    rbase = _rank_baseline(mpirun)
    js = _four_ranks(tmp_path, p)
    top = _report("cnr-2000", sbase, single, rbase, js)
    per = js["per_rank"]
    m = js["edges"]
    assert sum(q["edges"] for q in per) == m == 3_216_152
    assert max(q["edges"] for q in per) < 0.5 * m
    # measured: growth ~0.6x of the single process (~35 vs ~57 MB); absolute 83 vs 104 MB
    assert top - rbase < 0.75 * (single - sbase)
    assert top < single


def test_rmat20_four_ranks_peak_memory(tmp_path, mpirun):
    sbase, single = _single_peak(tmp_path, "rmat:20")
    rbase = _rank_baseline(mpirun)
    js = _four_ranks(tmp_path, "rmat:20")
    top = _report("rmat:20", sbase, single, rbase, js)
    assert sum(q["edges"] for q in js["per_rank"]) == js["edges"] == 16 * 2**20
    # measured: growth ~0.48x of the single process (~100 vs ~208 MB)
    assert top - rbase < 0.6 * (single - sbase)
    assert top < 0.75 * single
