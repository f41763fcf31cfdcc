"""Compiled rank-one posterior updates of the Bayesian agents (numba), one pass over the copies that observed.

Imported on the first update, not with ``bandit_gym.agents`` (numba takes about a second to load).
"""

from __future__ import annotations

import math

import numpy as np

from bandit_gym.agents._kernels import copy_into
from bandit_gym.jit import kernel


@kernel
def update_covariance(cov: np.ndarray, mean: np.ndarray, var: np.ndarray, rows: np.ndarray, arms: np.ndarray,
                      values: np.ndarray, noise: np.ndarray) -> None:
    r"""Copy ``rows[j]`` observed ``values[j]`` at arm ``arms[j]`` with noise variance ``noise[j]``:

    $$
    s = C_{aa} + \text{noise}, \qquad m \leftarrow m + C_{:,a} (y - m_a) / s, \qquad
    C \leftarrow C - C_{:,a} C_{a,:} / s
    $$

    The products \(C_{ia} C_{la}\) are formed before the division, so \(C\) stays exactly symmetric (an upper
    triangle alone was not faster: measured)."""
    k = mean.shape[1]
    column = np.empty(k)
    for j in range(rows.size):
        n, a = rows[j], arms[j]
        c = cov[n]
        copy_into(c[a], column)  # C[a, :] = C[:, a] (C is symmetric)
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
    r"""The same update on a square-root factor \(C = F F^\top\) (\(F\) of shape (K, r)), Potter's form:

    $$
    \begin{aligned}
    f &= F_{a,:}, \qquad c = F f \; (= C_{:,a}), \qquad s = c_a + \text{noise}, \qquad
    F \leftarrow F - \beta c f^\top, \\
    \beta &= \big(1 - \sqrt{\text{noise} / s}\big) / c_a
    \end{aligned}
    $$

    since \((I - \beta f f^\top)^2 = I - f f^\top / s\). \(O(K r)\) per observation."""
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
