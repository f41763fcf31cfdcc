"""Per-copy arm scores with fast row-wise argmin/argmax and the agents' tie rule built in."""

from __future__ import annotations

import numpy as np


class ArmScores:
    """Scores of K arms in each of N copies, for the ``argmin``/``argmax`` of index policies.

    The scores are stored position-major, shape ``(K, N)``, so that the reduction over arms runs along
    contiguous rows of N values (a few SIMD passes instead of N short ones). Each copy owns an order of its
    arms: position p of copy n holds arm ``arm_at[p, n]``, and among tied scores the first position wins. A
    random order per copy and episode therefore breaks ties at random (ALGORITHMS.md §0), the identity order
    breaks them by smallest index (``tie_break="index"``).
    """

    def __init__(self, n: int, k: int) -> None:
        self.n, self.k = n, k
        self.values = np.zeros((k, n))
        identity = np.repeat(np.arange(k)[:, None], n, axis=1)
        self.arm_at = identity.copy()      # position -> arm
        self.position_of = identity        # arm -> position
        self._columns = np.arange(n)
        weight_type = np.min_scalar_type(k)
        self._first = np.arange(k, 0, -1, dtype=weight_type)[:, None]  # earlier positions weigh more

    def shuffle(self, rng: np.random.Generator, rows: np.ndarray) -> None:
        """Draw a fresh random order of the arms for copies ``rows``."""
        order = rng.random((rows.size, self.k)).argsort(axis=1)          # order[r, p] = arm at position p
        self.arm_at[:, rows] = order.T
        positions = np.empty_like(order)
        np.put_along_axis(positions, order, np.arange(self.k)[None, :], axis=1)
        self.position_of[:, rows] = positions.T

    def set_rows(self, rows: np.ndarray, values: np.ndarray) -> None:
        """Set every arm's score in copies ``rows`` from ``values`` of shape ``(r, K)`` (indexed by arm)."""
        cols = np.asarray(rows)
        self.values[self.position_of[:, cols], cols[None, :]] = values.T

    def set_arms(self, rows: np.ndarray | slice, arms: np.ndarray, values: np.ndarray) -> None:
        """Set the score of one arm per copy: ``arms[j]`` of copy ``rows[j]`` gets ``values[j]``. O(copies)."""
        cols = self._columns[rows]
        flat_pos = self.position_of.reshape(-1).take(arms * self.n + cols)
        self.values.reshape(-1)[flat_pos * self.n + cols] = values

    def get_arms(self, rows: np.ndarray | slice, arms: np.ndarray) -> np.ndarray:
        cols = self._columns[rows]
        flat_pos = self.position_of.reshape(-1).take(arms * self.n + cols)
        return self.values.reshape(-1).take(flat_pos * self.n + cols)

    def table(self) -> np.ndarray:
        """All scores indexed by arm, shape ``(N, K)`` (for inspection and tests; O(N K))."""
        return np.take_along_axis(self.values, self.position_of, axis=0).T

    def argmin(self) -> np.ndarray:
        """The arm of smallest score in every copy (ties: the copy's arm order)."""
        return self._first_at(self.values == self.values.min(axis=0))

    def argmax(self) -> np.ndarray:
        """The arm of largest score in every copy (ties: the copy's arm order)."""
        return self._first_at(self.values == self.values.max(axis=0))

    def _first_at(self, hits: np.ndarray) -> np.ndarray:
        position = self.k - (hits.view(np.uint8) * self._first).max(axis=0).astype(np.int64)
        return self.arm_at.reshape(-1).take(position * self.n + self._columns)
