"""ASAP's message coding per link (:data:`asapgraph.engine.asap.EXACT_ON_HOST`): exact
float64 to a peer on the same host without network emulation, quantised (byte-coded)
on emulated links or when ``ASAPGRAPH_ASAP_QUANT`` asks for a coding; the same answer
either way, and the coding visible in ``--json`` (``exact_peers``, ``message_quant``)."""
import json
import os

import pytest

pytestmark = pytest.mark.mpi


def _run(cli, tmp_path, extra=(), env=None):
    e = dict(os.environ)
    e.pop("ASAPGRAPH_ASAP_QUANT", None)
    e.update(env or {})
    out = tmp_path / "r.csv"
    r = cli(["pagerank", "rmat:12", "--np", 2, "--mode", "asap", "--tol", "1e-10", "--json",
             "-q", "-o", out, *extra], tmp_path, timeout=300, env=e)
    assert r.returncode == 0, r.stderr
    rows = [line.split(",") for line in out.read_text().splitlines()[1:]]
    return json.loads(r.stdout), {int(v): float(x) for v, x in rows}


def test_exact_on_host_coded_on_emulated_links(cli, tmp_path):
    one = cli(["pagerank", "rmat:12", "--tol", "1e-13", "-q", "-o", tmp_path / "one.csv"],
              tmp_path, timeout=300)
    assert one.returncode == 0, one.stderr
    ref = {int(v): float(x) for v, x in
           (line.split(",") for line in (tmp_path / "one.csv").read_text().splitlines()[1:])}
    host, a = _run(cli, tmp_path)
    wire, b = _run(cli, tmp_path, ["--latency", "1e-4"])
    asked, c = _run(cli, tmp_path, env={"ASAPGRAPH_ASAP_QUANT": "q16b"})
    assert [p["exact_peers"] for p in host["per_rank"]] == [1, 1]
    assert [p["exact_peers"] for p in wire["per_rank"]] == [0, 0]
    assert [p["exact_peers"] for p in asked["per_rank"]] == [0, 0]
    assert all(p["message_quant"] == "q16b" for d in (host, wire, asked)
               for p in d["per_rank"])
    # exact float64 slots are 8 bytes, the byte-coded ones ~1.3: the same run sends more
    assert host["bytes_sent"] > 2 * asked["bytes_sent"]
    for got in (a, b, c):
        assert sorted(got) == sorted(ref)
        assert sum(abs(got[v] - ref[v]) for v in ref) <= 1e-10
