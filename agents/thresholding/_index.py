"""Shared machinery of the thresholding agents that pull ``argmin_i index_i``, where an arm's index depends only
on its own statistics (count, sum) and on per-copy constants. Only the arm pulled at the previous step changes
its index, so each step recomputes one entry per copy (O(N)) and takes one row-wise argmin."""

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
        self.index = np.zeros((n, k))

    def begin(self, obs: Obs, rows: np.ndarray) -> None:
        self.prepare(obs, rows)
        self._full_index(obs, rows)

    def prepare(self, obs: Obs, rows: np.ndarray) -> None:
        """Set per-copy constants at the start of an episode (e.g. UCBE's exploration parameter)."""

    def update(self, obs: Obs, rows: np.ndarray | slice, flat: np.ndarray) -> None:
        """Recompute the index of the arm each copy in ``rows`` pulled last (flat positions ``flat``)."""
        counts = np.ravel(obs["counts"]).take(flat).astype(np.float64)
        sums = np.ravel(obs["sums"]).take(flat).astype(np.float64)
        theta = obs["threshold"][rows, 0].astype(np.float64)
        self.index.reshape(-1)[flat] = self.arm_index(counts, sums, theta, rows)

    def _full_index(self, obs: Obs, rows: np.ndarray) -> None:
        counts = obs["counts"][rows].astype(np.float64)
        sums = obs["sums"][rows].astype(np.float64)
        self.index[rows] = self.arm_index(counts, sums, obs["threshold"][rows].astype(np.float64), rows)

    def select(self, obs: Obs) -> np.ndarray:
        last = obs["last_arm"][:, 0]
        moved = last >= 0
        rows: np.ndarray | slice = slice(None) if moved.all() else np.flatnonzero(moved)
        arm = last[rows].astype(np.int64)
        if arm.size:
            self.update(obs, rows, self._offsets[rows] + arm)
        batched = np.flatnonzero(last == -2)  # after a batched allocation every arm may have changed
        if batched.size:
            self._full_index(obs, batched)
        arms = self.argmin(self.index)
        if self.init_pulls:
            pulled = self.total_budget - obs["budget_left"][:, 0].astype(np.int64)
            arms = np.where(pulled < self.num_arms, pulled, arms)
        return arms


def empirical_gap(counts: np.ndarray, sums: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """``Delta_hat = |theta_hat - theta|`` (0 samples: ``|0 - theta|``)."""
    return np.abs(sums / np.maximum(counts, 1.0) - theta)
