"""ASAP's split of the balance weight by probed speeds
(:func:`asapgraph.engine.rebalance.asap_shares`): equal cycle times with a fixed cost and a
cost per peer, so slow ranks get less than their speed's share and fast ones more."""
import numpy as np
import pytest

from asapgraph.engine.rebalance import (ASAP_FIXED_COST, ASAP_MIN_SHARE, ASAP_PEER_COST,
                                        asap_shares, split_cost)


def test_no_split_stays_none():
    assert asap_shares(None, 4) is None


@pytest.mark.parametrize("speeds", [[3, 1, 3, 3], [1, 1 / 1.5, 1 / 2, 1 / 3], [1, 2],
                                    [5, 1, 1, 1, 1, 1, 1, 1]])
def test_equal_cycle_times(speeds):
    s = np.asarray(speeds, dtype=np.float64)
    prop = s / s.sum()
    K = len(s)
    f = asap_shares(prop, K)
    assert f.sum() == pytest.approx(1.0)
    phi = ASAP_FIXED_COST + ASAP_PEER_COST * (K - 1)
    t = (f + phi) / s
    if (f > ASAP_MIN_SHARE * prop + 1e-12).all():  # no rank at its floor
        np.testing.assert_allclose(t, t[0], rtol=1e-12)
    # the slowest rank gets less than its speed's share, the fastest more
    assert f[np.argmin(s)] < prop[np.argmin(s)]
    assert f[np.argmax(s)] > prop[np.argmax(s)]
    assert (f >= ASAP_MIN_SHARE * prop / (1 + 1e-9) / f.sum()).all()


def test_even_speeds_keep_the_even_split():
    np.testing.assert_allclose(asap_shares(np.full(4, 0.25), 4), np.full(4, 0.25))


def test_floor_and_env_off(monkeypatch):
    prop = np.array([0.49, 0.02, 0.49])
    phi = ASAP_FIXED_COST + 2 * ASAP_PEER_COST
    fast = 0.49 * (1 + 3 * phi) - phi
    slow = max(0.02 * (1 + 3 * phi) - phi, ASAP_MIN_SHARE * 0.02)
    f = asap_shares(prop, 3)
    np.testing.assert_allclose(f, np.array([fast, slow, fast]) / (2 * fast + slow))
    monkeypatch.setenv("ASAPGRAPH_ASAP_PEER_COST", "0")
    assert split_cost(3) == {"fixed": ASAP_FIXED_COST, "per_peer": 0.0, "phi": ASAP_FIXED_COST}
    assert not np.allclose(asap_shares(prop, 3), prop)  # the fixed part still applies
    monkeypatch.setenv("ASAPGRAPH_ASAP_FIXED_COST", "0")
    np.testing.assert_allclose(asap_shares(prop, 3), prop)


def test_fixed_part_does_not_grow_with_peers(monkeypatch):
    monkeypatch.setenv("ASAPGRAPH_ASAP_PEER_COST", "0")
    monkeypatch.setenv("ASAPGRAPH_ASAP_FIXED_COST", "0.02")
    assert split_cost(4)["phi"] == split_cost(16)["phi"] == 0.02
    assert split_cost(1)["phi"] == 0.0
    monkeypatch.setenv("ASAPGRAPH_ASAP_PEER_COST", "0.01")
    assert split_cost(16)["phi"] == pytest.approx(0.02 + 0.15)
