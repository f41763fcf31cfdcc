"""Compiled parts of the top-K agents (numba), imported on first use."""

from __future__ import annotations

import numba
import numpy as np

ACTIVE, ACCEPTED, REJECTED = 0, 1, 2


@numba.njit(cache=True, nogil=True)
def accept_reject(theta: np.ndarray, status: np.ndarray, rows: np.ndarray, k: int, threshold: np.ndarray) -> None:
    """AdaptiveTopK's inner loop (chen2017 Algorithm 1, lines 6-14) for the copies ``rows``; ``theta[j]`` are
    copy ``rows[j]``'s round means. With S sorted by decreasing theta (ties: smaller index first), the arm of
    largest ``Delta~_i = max(theta_i - theta_a, theta_b - theta_i)`` is the first or the last of S, so each
    removal is O(1) (ties between equal values: the smallest index)."""
    n_arms = status.shape[1]
    for j in range(rows.shape[0]):
        row = rows[j]
        th = theta[j]
        members = np.empty(n_arms, np.int64)
        size, kp = 0, k
        for i in range(n_arms):
            if status[row, i] == ACTIVE:
                members[size] = i
                size += 1
            elif status[row, i] == ACCEPTED:
                kp -= 1
        order = members[:size][np.argsort(-th[members[:size]], kind="mergesort")]
        hi, lo = 0, size - 1
        while kp > 0 and lo - hi + 1 > kp:
            theta_b, theta_a = th[order[hi + kp - 1]], th[order[hi + kp]]
            top_gap, bottom_gap = th[order[hi]] - theta_a, theta_b - th[order[lo]]
            best = max(top_gap, bottom_gap)
            if best <= threshold[j]:
                break
            bottom_first = lo  # the smallest index among the arms tied at the bottom value
            while bottom_first > hi and th[order[bottom_first - 1]] == th[order[lo]]:
                bottom_first -= 1
            take_top = top_gap == best and (bottom_gap < best or order[hi] < order[bottom_first])
            if take_top:
                status[row, order[hi]] = ACCEPTED  # theta_x > theta_a: top_gap > threshold >= 0
                hi += 1
                kp -= 1
            else:
                order[bottom_first], order[lo] = order[lo], order[bottom_first]  # equal values: swap freely
                status[row, order[lo]] = REJECTED  # theta_x <= theta_b, and the bottom is not above theta_a
                lo -= 1
