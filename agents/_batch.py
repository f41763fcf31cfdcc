"""Batched pulls: the first pulls of a pull-by-pull schedule, computed at once."""

from __future__ import annotations

import numpy as np


def most_owed_first(owed: np.ndarray, left: np.ndarray) -> np.ndarray:
    """The pulls made by ``left[n]`` steps of "pull the arm with the most pulls still owed (ties: the smallest
    index)" on the owed counts ``owed`` ``(N, K)``: all of ``owed`` where it fits in ``left``. Otherwise the owed
    counts are levelled down from the top: with the level lambda the largest with
    ``sum_i max(owed_i - lambda, 0) <= left``, each arm gets ``max(owed_i - lambda, 0)`` and the r pulls still
    left go, one each, to the arms owed at least lambda in index order (which is round robin when every arm is
    owed the same)."""
    owed = np.asarray(owed, dtype=np.int64)
    pulls = owed.copy()
    for row in np.flatnonzero(owed.sum(axis=1) > left):  # only rows the budget cuts short (once per episode)
        o, budget = owed[row], int(left[row])
        lo, hi = 0, int(o.max())  # f(level) = sum max(o - level, 0) decreases in level; f(hi) = 0 <= budget
        while lo < hi:
            mid = (lo + hi) // 2
            if np.maximum(o - mid, 0).sum() <= budget:
                hi = mid
            else:
                lo = mid + 1
        level = lo
        take = np.maximum(o - level, 0)
        rest = budget - int(take.sum())
        if rest:
            take[np.flatnonzero(o >= level)[:rest]] += 1
        pulls[row] = take
    return pulls
