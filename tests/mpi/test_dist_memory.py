"""Partitioned loading of cnr-2000 on 4 ranks: no rank holds the whole edge list."""
import json
import os
import subprocess
import sys

import pytest

pytestmark = [pytest.mark.mpi, pytest.mark.slow, pytest.mark.shared]


def test_cnr2000_four_ranks_peak_memory(tmp_path, shared):
    p = str(shared("cnr-2000.txt.gz"))
    env = dict(os.environ)
    code = ("import resource;from asapgraph.io import load_graph;from asapgraph.pagerank import "
            f"pagerank;g=load_graph({p!r});r=pagerank(g,tol=1e-6);"
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss/1024)")
    single = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=120)
    assert single.returncode == 0, single.stderr
    single_mb = float(single.stdout.split()[-1])
    r = subprocess.run([sys.executable, "-m", "asapgraph", "pagerank", p, "--np", "4", "--json",
                        "-q", "--tol", "1e-6"], cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=180)
    assert r.returncode == 0, r.stderr
    js = json.loads(r.stdout.strip().splitlines()[-1])
    per = js["per_rank"]
    print(f"\ncnr-2000 peak RSS: single process {single_mb:.0f} MB; 4 ranks: "
          f"{[round(q['peak_rss_mb']) for q in per]} MB (max {js['peak_rss_mb_max_rank']:.0f} MB)")
    m = js["edges"]
    assert sum(q["edges"] for q in per) == m == 3_216_152
    assert max(q["edges"] for q in per) < 0.5 * m
    # each rank's peak includes its own interpreter + MPI baseline (~45 MB here)
    assert js["peak_rss_mb_max_rank"] < 1.5 * single_mb
