"""Audit 24 on ranks: the answer rule's knobs are applied (in ``--json`` per rank) or
refused in one line before any rank starts, never taken as they were (a negative
``ASAPGRAPH_ASAP_ANSWER`` ran with the rule off and showed the negative value)."""
import pytest

pytestmark = pytest.mark.mpi


def test_answer_knobs_shown_per_rank(pagerank_run, tmp_path):
    js, _ = pagerank_run(tmp_path, "a", ["--np", "2", "--mode", "asap"],
                         env={"ASAPGRAPH_ASAP_ANSWER": "0.25",
                              "ASAPGRAPH_ASAP_ANSWER_HOLD": "0"}, graph="rmat:8")
    assert js["converged"], js
    for p in js["per_rank"]:
        assert p["answer_gate"] == 0.25 and p["answer_hold"] is False, p
    js, _ = pagerank_run(tmp_path, "b", ["--np", "2", "--mode", "asap"], graph="rmat:8")
    for p in js["per_rank"]:
        assert p["answer_gate"] == 0.4 and p["answer_hold"] is True, p


@pytest.mark.parametrize("name, value", [("ASAPGRAPH_ASAP_ANSWER", "-0.5"),
                                         ("ASAPGRAPH_ASAP_ANSWER_HOLD", "no")])
def test_answer_knobs_refused_alike(refused_alike, monkeypatch, tmp_path, name, value):
    monkeypatch.setenv(name, value)
    line = refused_alike(tmp_path, ["pagerank", "rmat:6", "--mode", "asap"], name,
                         repr(value), configs=[[], ["--np", "2"], ["--np", "3"]],
                         output="x.csv")
    assert line.startswith(f"asapgraph: {name}={value!r}")
