r"""Shared bookkeeping of the classic \(K\)-armed bandit agents: float64 pull counts and empirical means per copy,
updated for the one arm each copy pulled (\(O(N)\) per step), and the number of pulls made so far."""

from __future__ import annotations

import numpy as np

from bandit_gym.agents.base import Obs


class ArmMeans:
    r"""The statistics of the agents of the stochastic \(K\)-armed bandit (``MultiArmedBandit-v0``), a component the
    agent owns (``agent.means``), not an agent.

    Keeps ``count`` (\(N_i\)) and ``mean`` (\(\hat\mu_i\)), float64 ``(N, K)``, in step with the observation: whole rows
    at an episode's start (or when the agent first sees a copy mid-episode; ``begin``), then only the arm each
    copy pulled at the previous round (``update``, from the agent's ``_gather_last`` fields). ``pulls`` is the
    number of pulls made so far in each copy."""

    def __init__(self) -> None:
        self.allocate(0, 0)

    def allocate(self, n: int, k: int) -> None:
        r"""Zero statistics for ``n`` copies of a \(K\)-armed problem."""
        self.count = np.zeros((n, k))
        self.mean = np.zeros((n, k))
        self._offsets = np.arange(n) * k
        self._pulls_at_left = np.zeros(n)  # pulls made so far + budget left: constant in an episode

    def begin(self, obs: Obs, rows: np.ndarray) -> None:
        """Read every arm's statistics of the copies ``rows`` from the observation."""
        counts = obs["counts"][rows].astype(np.float64)
        self.count[rows] = counts
        self.mean[rows] = obs["sums"][rows] / np.maximum(counts, 1.0)
        self._pulls_at_left[rows] = counts.sum(axis=1) + obs["budget_left"][rows, 0]

    def update(self, rows: np.ndarray | slice, arms: np.ndarray, counts: np.ndarray, sums: np.ndarray) -> None:
        """The arm ``arms[r]`` of copy ``rows[r]`` now has ``counts[r]`` pulls summing to ``sums[r]`` (float64)."""
        flat = self._offsets[rows] + arms
        self.count.reshape(-1)[flat] = counts
        self.mean.reshape(-1)[flat] = sums / counts

    def means_of(self, rows: np.ndarray | slice, arms: np.ndarray | None) -> np.ndarray:
        """The empirical means of ``arms`` (one per copy of ``rows``; every arm if None)."""
        return self.mean[rows] if arms is None else self.mean.reshape(-1)[self._offsets[rows] + arms]

    def pulls(self, obs: Obs) -> np.ndarray:
        """The pulls made so far in every copy, float64 ``(N,)`` (0 at an episode's start)."""
        return self._pulls_at_left - obs["budget_left"][:, 0]


def check_unit_means(means: ArmMeans, rows: np.ndarray | slice, arms: np.ndarray | None, agent: str) -> None:
    r"""Raise a ValueError if an empirical mean that just changed (of ``arms``, one per copy of ``rows``; every arm
    if None) lies outside \([0, 1]\): the agent named ``agent``, built for Bernoulli arms
    (``distribution="bernoulli"``), was given rewards outside \([0, 1]\)."""
    changed = means.means_of(rows, arms)
    if changed.size and (changed.min() < 0.0 or changed.max() > 1.0):
        bad = changed[(changed < 0.0) | (changed > 1.0)][0]
        raise ValueError(f"{agent}(distribution='bernoulli') needs rewards in [0, 1], but an arm's "
                         f"empirical mean is {bad:g}; on Gaussian arms pass distribution='gaussian' (and sigma)")
