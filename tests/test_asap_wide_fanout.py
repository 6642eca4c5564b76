"""The expander's fanout of a round beyond 8 ranks (:func:`asapgraph.engine.asap.wide_fanout`).

A round flushes to its ``fanout`` expander neighbours; with the asked fanout 2 on 16 or 64
ranks a sweep's output reached each peer only every few sweeps, so beyond
:data:`~asapgraph.engine.asap.WIDE_FANOUT_K` ranks the fanout is raised to
``ceil(sqrt(K - 1))`` (benchmarks/REPORT.md, eighteenth session).  Up to 8 ranks the asked
fanout stays, so the 4-rank figures of issue 14 cannot move.
"""
import pytest

from asapgraph.engine.asap import WIDE_FANOUT_K, WIDE_PERIOD, wide_fanout
from asapgraph.engine.reduce import Schedule


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    monkeypatch.delenv("ASAPGRAPH_ASAP_WIDE_FANOUT", raising=False)
    monkeypatch.delenv("ASAPGRAPH_ASAP_WIDE_FANOUT_K", raising=False)
    monkeypatch.delenv("ASAPGRAPH_ASAP_WIDE_PERIOD", raising=False)


def test_the_asked_fanout_stays_up_to_8_ranks():
    assert WIDE_FANOUT_K == 8
    for K in range(1, WIDE_FANOUT_K + 1):
        for f in (1, 2, 3):
            assert wide_fanout(K, f) == f


@pytest.mark.parametrize("K,want", [(9, 2), (10, 3), (16, 4), (17, 4), (18, 5), (64, 16),
                                    (65, 16), (66, 17)])
def test_beyond_8_ranks_a_round_reaches_a_quarter_of_the_peers(K, want):
    assert wide_fanout(K, 2) == want
    assert wide_fanout(K, 1) == want
    assert wide_fanout(K, 40) == 40  # a wider asked fanout stays


def test_the_environment_moves_or_turns_off_the_rule(monkeypatch):
    monkeypatch.setenv("ASAPGRAPH_ASAP_WIDE_FANOUT", "0")
    assert wide_fanout(64, 2) == 2
    monkeypatch.delenv("ASAPGRAPH_ASAP_WIDE_FANOUT")
    monkeypatch.setenv("ASAPGRAPH_ASAP_WIDE_FANOUT_K", "2")
    assert wide_fanout(4, 1) == 1 and wide_fanout(6, 1) == 2  # period 8 on 4 / 6 ranks
    monkeypatch.setenv("ASAPGRAPH_ASAP_WIDE_PERIOD", "4")
    assert wide_fanout(4, 1) == 2 and wide_fanout(2, 1) == 1


@pytest.mark.parametrize("K", [16, 64])
def test_every_peer_is_still_served_within_the_schedules_period(K):
    """The widened expander is the same seeded schedule: every peer within
    ``2 ceil((K - 1) / fanout)`` rounds, at most WIDE_PERIOD whatever K."""
    k = wide_fanout(K, 2)
    s = Schedule(K, k, seed=3)
    period = 2 * -(-(K - 1) // k)
    assert period <= WIDE_PERIOD < 2 * -(-(K - 1) // 2)
    for t0 in (0, 5, 100):
        seen = set()
        for t in range(t0, t0 + period):
            seen.update(int(q) for q in s.neighbours(0, t))
        assert seen == set(range(1, K))
