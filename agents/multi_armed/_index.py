"""Shared bookkeeping of the classic K-armed bandit agents: float64 pull counts and empirical means per copy,
updated for the one arm each copy pulled (O(N) per step), and the number of pulls made so far."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from bandit_gym.agents.base import Agent, Obs, plays_select
from bandit_gym.families import Family


class MultiArmedAgent(Agent):
    """Base of the agents of the stochastic K-armed bandit (``MultiArmedBandit-v0``).

    Keeps ``count`` (N_i) and ``mean`` (mu_hat_i), float64 ``(N, K)``, in step with the observation: whole rows
    at an episode's start (or when the agent first sees a copy mid-episode), then only the arm each copy pulled
    at the previous round. ``pulls`` is the number of pulls made so far in each copy. Subclasses implement
    ``select`` and may extend ``refresh`` (called after the update of the arms that changed)."""

    families: ClassVar[tuple[str, ...]] = ("multi_armed",)
    #: the agents of this family never read the horizon T
    anytime: ClassVar[bool] = True

    def allocate(self, n: int, k: int) -> None:
        self.scores = self.new_scores()  # its arm order breaks the ties of the argmax
        self.count = np.zeros((n, k))
        self.mean = np.zeros((n, k))
        self._pulls_at_left = np.zeros(n)  # pulls made so far + budget left: constant in an episode

    def begin(self, obs: Obs, rows: np.ndarray) -> None:
        counts = obs["counts"][rows].astype(np.float64)
        self.count[rows] = counts
        self.mean[rows] = obs["sums"][rows] / np.maximum(counts, 1.0)
        self._pulls_at_left[rows] = counts.sum(axis=1) + obs["budget_left"][rows, 0]
        self.refresh(rows, None)

    def pulls(self, obs: Obs) -> np.ndarray:
        """The pulls made so far in every copy, float64 ``(N,)`` (0 at an episode's start)."""
        return self._pulls_at_left - obs["budget_left"][:, 0]

    @plays_select
    def _act_batch(self, obs: Obs, last: np.ndarray, family: Family) -> np.ndarray:
        self._gather_last(obs, last)
        if self.last_arms.size:
            flat = self._offsets[self.moved] + self.last_arms
            self.count.reshape(-1)[flat] = self.last_counts
            self.mean.reshape(-1)[flat] = self.last_sums / self.last_counts
            self.refresh(self.moved, self.last_arms)
        return self.select(obs)

    def refresh(self, rows: np.ndarray | slice, arms: np.ndarray | None) -> None:
        """Hook: the statistics of ``arms`` (one per copy of ``rows``; every arm if None) just changed."""


def check_unit_means(agent: MultiArmedAgent, rows: np.ndarray | slice, arms: np.ndarray | None) -> None:
    """Raise a ValueError if an empirical mean that just changed lies outside [0, 1]: an agent built for
    Bernoulli arms (``distribution="bernoulli"``) was given rewards outside [0, 1]."""
    means = agent.mean[rows] if arms is None else agent.mean.reshape(-1)[agent._offsets[rows] + arms]
    if means.size and (means.min() < 0.0 or means.max() > 1.0):
        bad = means[(means < 0.0) | (means > 1.0)][0]
        raise ValueError(f"{type(agent).__name__}(distribution='bernoulli') needs rewards in [0, 1], but an arm's "
                         f"empirical mean is {bad:g}; on Gaussian arms pass distribution='gaussian' (and sigma)")
