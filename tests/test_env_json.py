"""A run's experiment knobs (the ``ASAPGRAPH_ASAP_*`` environment variables that
:func:`asapgraph.options.check_env` validates) are part of its configuration: ``--json``
shows the ones set under ``env`` (``{}`` when none is), on one process and on ranks, for
PageRank and the vertex programs alike, so a result is never produced by a knob it does
not show."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from asapgraph.options import ASAP_ENV, env_knobs

RMAT12 = Path(__file__).resolve().parents[1] / "datasets" / "rmat-12.txt.gz"


def _json(args, env_extra, cwd):
    env = {k: v for k, v in os.environ.items() if k not in ASAP_ENV}
    env.update(env_extra)
    r = subprocess.run([sys.executable, "-m", "asapgraph", *args, "--json", "-q"], cwd=cwd,
                       env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout)


def test_env_knobs_reads_only_the_known_names():
    env = {"ASAPGRAPH_ASAP_GS": "0", "ASAPGRAPH_ASAP_QUANT": "off", "PATH": "/bin",
           "ASAPGRAPH_NOT_A_KNOB": "1"}
    assert env_knobs(env) == {"ASAPGRAPH_ASAP_GS": "0", "ASAPGRAPH_ASAP_QUANT": "off"}
    assert env_knobs({}) == {}


@pytest.mark.parametrize("cmd", [["pagerank", str(RMAT12)], ["wcc", str(RMAT12)]])
@pytest.mark.parametrize("ranks", [[], ["--np", "2", "--mode", "asap"]])
def test_json_shows_the_knobs_set(tmp_path, cmd, ranks):
    assert _json(cmd + ranks, {}, tmp_path)["env"] == {}
    knobs = {"ASAPGRAPH_ASAP_GS": "0", "ASAPGRAPH_ASAP_QUANT": "off"}
    assert _json(cmd + ranks, knobs, tmp_path)["env"] == knobs
