"""ASAP must end when the ranks' residual can only shrink together.

A 3-node graph (a 2-cycle and an isolated node that is the only teleport target): the
isolated node is dangling and its own teleport target, so every push of its residual
returns it whole; only the cycle's residual, of the opposite sign and on the other rank,
cancels it.  That rank was passive (below its share of the target), the first rank stayed
busy for ever, and no termination wave could end the run: the networkx backend on 2 ranks
hung (found by a soak).  Now a settled wave within the whole target ends it, and waves
without progress lower the target so the passive ranks work too.  Each case runs in a
fresh process with a timeout; the answer is compared with networkx's.
"""
import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("networkx")

pytestmark = pytest.mark.mpi

SCRIPT = r"""
import json, sys
import networkx as nx
nx.config.warnings_to_ignore.add("cache")
G = nx.DiGraph()
G.add_nodes_from([0, 1, 2])
G.add_edge(2, 1)
G.add_edge(1, 2)
nx.config.backends.asapgraph.np = int(sys.argv[1])
nx.config.backends.asapgraph.mode = "asap"
tol = float(sys.argv[2])
got = nx.pagerank(G, alpha=0.5, personalization={0: 1}, tol=tol, max_iter=100000,
                  backend="asapgraph")
print(json.dumps({str(k): v for k, v in got.items()}))
"""


def _env():
    return {k: v for k, v in os.environ.items()
            if not k.startswith(("PMI_", "OMPI_", "PMIX_", "MPI_LOCALNRANKS"))
            and k != "ASAPGRAPH_LAUNCHED"}


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("tol", [1e-6, 1e-10, 1e-12])
def test_asap_ends_when_only_the_ranks_together_make_progress(k, tol, tmp_path):
    r = subprocess.run([sys.executable, "-c", SCRIPT, str(k), str(tol)], cwd=tmp_path,
                       env=_env(), capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stderr[-3000:]
    got = json.loads(r.stdout.strip().splitlines()[-1])
    # the exact answer is [1, 0, 0]; networkx's rule certifies alpha/(1-alpha) * n * tol
    bound = 0.5 / 0.5 * 3 * tol
    assert abs(got["0"] - 1.0) + abs(got["1"]) + abs(got["2"]) <= bound, got
