r"""Per-copy arm scores with fast row-wise \(\operatorname{arg\,min}\)/\(\operatorname{arg\,max}\) and the agents'
tie rule built in."""

from __future__ import annotations

import numpy as np


class ArmScores:
    r"""Scores of \(K\) arms in each of \(N\) copies, for the ``argmin``/``argmax`` of index policies.

    Each copy owns an order of its arms: position p of copy n holds arm ``arm_at[n, p]`` and its score
    ``values[n, p]``, and among tied scores the first position wins. A random order per copy and episode
    therefore breaks ties at random, the identity order breaks them by smallest index (``tie_break="index"``).
    The papers mostly leave ties open; random is the default because a fixed smallest-index rule biases
    best-arm and thresholding experiments toward low indices, and drawing one order per copy and episode from
    the agent's seeded generator costs nothing per step. The reductions run in one compiled pass over the
    copies.
    """

    def __init__(self, n: int, k: int) -> None:
        self.n, self.k = n, k
        self.values = np.zeros((n, k))
        # int32: half the memory of the default, which a step over many copies feels (cache misses)
        identity = np.repeat(np.arange(k, dtype=np.int32)[None, :], n, axis=0)
        self.arm_at = identity.copy()      # position -> arm
        self.position_of = identity        # arm -> position
        self._rows = np.arange(n)
        self._out = np.zeros(n, dtype=np.int64)

    def shuffle(self, rng: np.random.Generator, rows: np.ndarray) -> None:
        """Draw a fresh random order of the arms for copies ``rows``."""
        order = rng.random((rows.size, self.k)).argsort(axis=1)          # order[r, p] = arm at position p
        self.arm_at[rows] = order
        positions = np.empty_like(order)
        np.put_along_axis(positions, order, np.arange(self.k)[None, :], axis=1)
        self.position_of[rows] = positions

    def set_rows(self, rows: np.ndarray, values: np.ndarray) -> None:
        """Set every arm's score in copies ``rows`` from ``values`` of shape ``(r, K)`` (indexed by arm)."""
        rows = np.asarray(rows)
        self.values[rows[:, None], self.position_of[rows]] = values

    def set_all(self, values: np.ndarray) -> None:
        """Set every score from ``values`` of shape ``(N, K)`` indexed by arm (O(N K))."""
        self.values[...] = np.take_along_axis(values, self.arm_at, axis=1)

    def best_of(self, rows: np.ndarray, values: np.ndarray, largest: bool = True) -> np.ndarray:
        """The arm of largest (or smallest) ``values[r]`` (``(r, K)``, indexed by arm) in each copy ``rows[r]``,
        ties by the copy's arm order, without touching the stored scores."""
        by_position = np.take_along_axis(values, self.arm_at[rows], axis=1)
        position = by_position.argmax(axis=1) if largest else by_position.argmin(axis=1)
        return np.take_along_axis(self.arm_at[rows], position[:, None], axis=1)[:, 0]

    def set_arms(self, rows: np.ndarray | slice, arms: np.ndarray, values: np.ndarray) -> None:
        """Set the score of one arm per copy: ``arms[j]`` of copy ``rows[j]`` gets ``values[j]``. O(copies)."""
        flat = self._rows[rows] * self.k
        position = self.position_of.reshape(-1).take(flat + arms)
        self.values.reshape(-1)[flat + position] = values

    def get_arms(self, rows: np.ndarray | slice, arms: np.ndarray) -> np.ndarray:
        flat = self._rows[rows] * self.k
        return self.values.reshape(-1).take(flat + self.position_of.reshape(-1).take(flat + arms))

    def table(self) -> np.ndarray:
        """All scores indexed by arm, shape ``(N, K)`` (for inspection and tests; O(N K))."""
        return np.take_along_axis(self.values, self.position_of, axis=1)

    def argmin(self) -> np.ndarray:
        """The arm of smallest score in every copy (ties: the copy's arm order)."""
        return self._best(False)

    def argmax(self) -> np.ndarray:
        """The arm of largest score in every copy (ties: the copy's arm order)."""
        return self._best(True)

    def _best(self, largest: bool) -> np.ndarray:
        from bandit_gym.agents._kernels import best_arms

        return best_arms(self.values, self.arm_at, largest, self._out).copy()
