"""Compiled rank-one posterior updates of the Bayesian agents (numba), one pass over the copies that observed.

Imported on the first update, not with ``bandit_gym.agents`` (numba takes about a second to load).
"""

from __future__ import annotations

import math

import numpy as np

from bandit_gym.jit import kernel


@kernel
def update_covariance(cov: np.ndarray, mean: np.ndarray, var: np.ndarray, rows: np.ndarray, arms: np.ndarray,
                      values: np.ndarray, noise: np.ndarray) -> None:
    """Copy ``rows[j]`` observed ``values[j]`` at arm ``arms[j]`` with noise variance ``noise[j]``:

        s = C[a, a] + noise,   m <- m + C[:, a] (y - m[a]) / s,   C <- C - C[:, a] C[a, :] / s

    The products ``C[i, a] C[l, a]`` are formed before the division, so C stays exactly symmetric (an upper
    triangle alone was not faster: measured)."""
    k = mean.shape[1]
    column = np.empty(k)
    for j in range(rows.size):
        n, a = rows[j], arms[j]
        c = cov[n]
        column[:] = c[a]  # C[a, :] = C[:, a]
        inv_s = 1.0 / (column[a] + noise[j])
        step = (values[j] - mean[n, a]) * inv_s
        for i in range(k):
            mean[n, i] += column[i] * step
            ci = column[i]
            for col in range(k):
                c[i, col] -= (ci * column[col]) * inv_s
            var[n, i] = c[i, i]


@kernel
def update_factor(factor: np.ndarray, mean: np.ndarray, var: np.ndarray, rows: np.ndarray, arms: np.ndarray,
                  values: np.ndarray, noise: np.ndarray) -> None:
    """The same update on a square-root factor ``C = F F^T`` (F of shape (K, r)), Potter's form:

        f = F[a, :],  c = F f (= C[:, a]),  s = c[a] + noise,  F <- F - beta c f^T,
        beta = (1 - sqrt(noise / s)) / c[a]

    since ``(I - beta f f^T)^2 = I - f f^T / s``. O(K r) per observation."""
    k, r = factor.shape[1], factor.shape[2]
    f = np.empty(r)
    column = np.empty(k)
    for j in range(rows.size):
        n, a = rows[j], arms[j]
        F = factor[n]
        f[:] = F[a]
        for i in range(k):
            total = 0.0
            for q in range(r):
                total += F[i, q] * f[q]
            column[i] = total
        prior_var = column[a]
        if prior_var <= 0.0:  # the arm's mean is known exactly: the observation changes nothing
            continue
        s = prior_var + noise[j]
        beta = (1.0 - math.sqrt(noise[j] / s)) / prior_var
        step = (values[j] - mean[n, a]) / s
        for i in range(k):
            mean[n, i] += column[i] * step
            var[n, i] -= column[i] * column[i] / s
            bc = beta * column[i]
            for q in range(r):
                F[i, q] -= bc * f[q]
