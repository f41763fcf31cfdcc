"""Shared machinery of the thresholding agents that pull ``argmin_i index_i``, where an arm's index depends only
on its own statistics (count, sum) and on per-copy constants. Only the arm pulled at the previous step changes
its index, so each step recomputes one entry per copy (O(N)) and takes one argmin over the arms."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from bandit_gym.agents.base import Agent, Obs


class IndexAgent(Agent):
    """Base class: subclasses implement :meth:`arm_index` (smaller is pulled first)."""

    families: ClassVar[tuple[str, ...]] = ("thresholding",)
    #: pull each arm once, in index order, before following the index (rounds 1..K)
    init_pulls: ClassVar[bool] = True

    def arm_index(
        self, counts: np.ndarray, sums: np.ndarray, theta: np.ndarray, rows: np.ndarray | slice
    ) -> np.ndarray:
        """Index of arms with ``counts`` pulls and sample sums ``sums`` (float64) in copies ``rows``; ``theta``
        broadcasts against them. Called with 1-D arrays (one arm per copy) or 2-D ``(r, K)`` arrays."""
        raise NotImplementedError

    def allocate(self, n: int, k: int) -> None:
        self.index = self.new_scores()
        self._initialising = False

    def begin(self, obs: Obs, rows: np.ndarray) -> None:
        self.prepare(obs, rows)
        self._initialising = self.init_pulls  # some copies may still be in their first K pulls

    def prepare(self, obs: Obs, rows: np.ndarray) -> None:
        """Set per-copy constants at the start of an episode (e.g. UCBE's exploration parameter)."""

    def update(self, obs: Obs) -> None:
        """Recompute the index of the arm each copy pulled last (``self.moved``, ``self.last_arms``)."""
        theta = obs["threshold"][self.moved, 0].astype(np.float64)
        values = self.arm_index(self.last_counts, self.last_sums, theta, self.moved)
        self.index.set_arms(self.moved, self.last_arms, values)

    def select(self, obs: Obs) -> np.ndarray:
        if self.last_arms.size:
            self.update(obs)
        rows = self.whole  # episode starts and batched allocations: every arm may have changed
        if rows.size:
            counts = obs["counts"][rows].astype(np.float64)
            sums = obs["sums"][rows].astype(np.float64)
            self.index.set_rows(rows, self.arm_index(counts, sums, obs["threshold"][rows].astype(np.float64), rows))
        arms = self.index.argmin()
        if self._initialising:
            pulled = self.total_budget - obs["budget_left"][:, 0].astype(np.int64)
            first = pulled < self.num_arms
            arms = np.where(first, pulled, arms)
            self._initialising = bool(first.any())
        return arms


def empirical_gap(counts: np.ndarray, sums: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """``Delta_hat = |theta_hat - theta|`` (0 samples: ``|0 - theta|``)."""
    return np.abs(sums / np.maximum(counts, 1.0) - theta)
