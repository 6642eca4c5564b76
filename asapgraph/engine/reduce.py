"""The stochastic reduce of ASAP: a seeded rotating circulant expander over the ranks.

Rationale
---------
In round ``t`` a rank flushes only to its ``fanout`` out-neighbours ``(rank + o) mod K``
on a circulant expander whose offsets ``o`` are a window of a seeded random permutation of
``1..K-1`` (re-drawn every epoch from a seeded cycle of 64, rotated every round): every
peer is served within ``2 ceil((K-1)/fanout)`` rounds, so a buffer never starves.  All
ranks draw the same graph for the same round without communicating.  The mixing matrix
``P = (I + sum_o C_o) / (k + 1)`` (``C_o`` the cyclic shift) is doubly stochastic; its
spectral gap ``1 - sigma_2(P)`` is reported (``spectral_gap`` of round 0 and
``spectral_gap_mean`` over one rotation).  A push-sum pair ``(s, w)`` rides on the data
messages (header fields of :mod:`.exchange`) and estimates the global residual, used by
ASAP's approximation knob.

References: Boyd, Ghosh, Prabhakar, Shah, "Randomized gossip algorithms", IEEE TIT 2006
(spectral gap); Kempe, Dobra, Gehrke, "Gossip-based computation of aggregate
information", FOCS 2003 (push-sum).
"""
from __future__ import annotations

import numpy as np

__all__ = ["Schedule"]


class Schedule:
    """Seeded rotating circulant expander over K ranks (same for every rank)."""

    def __init__(self, K, fanout, seed):
        self.K = K
        self.k = max(1, min(int(fanout), K - 1)) if K > 1 else 0
        self.seed = int(seed)
        self.L = -(-(K - 1) // self.k) if K > 1 else 1
        # permutations of a cycle of epochs, drawn once (offsets() runs every round)
        self.period = max(1, min(64, 4096 // self.L))
        # drawn here, not in the first round: there the draw (and numpy's first use of a
        # generator, ~12 ms) was charged to the round on the virtual clock, times the
        # rank's straggler factor
        self._windows = self._draw() if K > 1 else None

    def _draw(self):
        rng = np.random.default_rng([self.seed, 0xE1])
        ar = np.arange(1, self.K, dtype=np.int64)
        windows = []
        for _ in range(self.period):
            perm = rng.permutation(ar)
            # k <= K - 1 consecutive positions mod K - 1 are distinct: sorting is
            # np.unique without its overhead (128 calls cost a cold run ~30 ms)
            windows.append([np.sort(perm[(i * self.k + np.arange(self.k)) % (self.K - 1)])
                            for i in range(self.L)])
        return windows

    def offsets(self, t):
        """Offsets ``o`` of round ``t``: this round a rank sends to ``(rank + o) mod K``."""
        if self.K <= 1:
            return np.zeros(0, dtype=np.int64)
        e, i = divmod(int(t), self.L)
        return self._windows[e % self.period][i]

    def neighbours(self, rank, t):
        return (rank + self.offsets(t)) % self.K

    def mixing_matrix(self, t):
        K = self.K
        P = np.eye(K)
        offs = self.offsets(t)
        for o in offs:
            P += np.roll(np.eye(K), int(o), axis=1)
        return P / (len(offs) + 1)

    def spectral_gap(self, t=0):
        """``1 - sigma_2(P)`` of round ``t``'s mixing matrix.  ``P`` is circulant, hence
        normal: its singular values are the moduli of its eigenvalues ``(1 + sum_o
        w^(j o)) / (k + 1)``, ``w = exp(2 pi i / K)`` (closed form: no LAPACK call, whose
        first use cost a run ~15-30 ms)."""
        if self.K <= 1:
            return 1.0
        offs = self.offsets(t)
        j = np.arange(self.K)[:, None]
        lam = (1.0 + np.exp(2j * np.pi * j * offs[None, :] / self.K).sum(axis=1)) / (len(offs) + 1)
        return float(np.clip(1.0 - np.sort(np.abs(lam))[-2], 0.0, 1.0))

    def mean_gap(self):
        return float(np.mean([self.spectral_gap(t) for t in range(self.L)]))

    def figures(self):
        """What ``--json`` reports of the schedule."""
        return {"spectral_gap": self.spectral_gap(0), "spectral_gap_mean": self.mean_gap(),
                "fanout": self.k, "seed": self.seed, "schedule_period": 2 * self.L}

