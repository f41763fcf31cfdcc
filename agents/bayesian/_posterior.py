"""The Gaussian posterior over K correlated arm means, for N copies at once (hoffman2014 §2; ALGORITHMS.md §E.2).

Prior ``mu ~ N(0, eta^2 G)`` for a positive semi-definite kernel matrix G; an observation ``y ~ N(mu_a,
sigma^2)`` of arm a updates the mean m and the covariance C of every copy by one rank-one step::

    s = C[a, a] + sigma^2,    m <- m + C[:, a] (y - m[a]) / s,    C <- C - C[:, a] C[a, :] / s

which is the paper's Bayesian linear regression (eq. 4-5) on the features ``X = V D^(1/2)`` of ``G = V D V^T``,
without forming them (G may be singular). O(K^2) per observation and copy, no Python loop over copies.
"""

from __future__ import annotations

import numpy as np


def check_kernel(kernel: object, name: str = "kernel") -> np.ndarray:
    """``kernel`` as a symmetric positive semi-definite float matrix, or a ValueError naming what is wrong."""
    g = np.asarray(kernel, dtype=np.float64)
    if g.ndim != 2 or g.shape[0] != g.shape[1] or g.shape[0] < 1:
        raise ValueError(f"{name} must be a square K x K matrix, got shape {g.shape}")
    if not np.all(np.isfinite(g)):
        raise ValueError(f"{name} must be finite")
    if not np.allclose(g, g.T, rtol=1e-10, atol=1e-12):
        raise ValueError(f"{name} must be symmetric (max |G - G^T| = {np.abs(g - g.T).max():.3g})")
    lowest = np.linalg.eigvalsh(g).min()
    if lowest < -1e-9 * max(1.0, np.abs(g).max()):
        raise ValueError(f"{name} must be positive semi-definite, its smallest eigenvalue is {lowest:.3g}")
    return g


class GaussianPosterior:
    """Posterior means ``mean`` (N, K) and covariances ``cov`` (N, K, K) of the arm means of N copies, all under
    the prior ``N(0, eta^2 G)`` and the noise variance ``sigma^2``."""

    def __init__(self, kernel: object, eta: float, sigma: float, num: int = 1) -> None:
        self.kernel = check_kernel(kernel)
        if not (np.isfinite(eta) and eta > 0):
            raise ValueError(f"eta must be > 0, got {eta!r}")
        if not (np.isfinite(sigma) and sigma > 0):
            raise ValueError(f"sigma must be > 0, got {sigma!r}")
        if int(num) < 1:
            raise ValueError(f"num must be >= 1, got {num!r}")
        self.eta, self.sigma = float(eta), float(sigma)
        k = self.kernel.shape[0]
        self.mean = np.zeros((int(num), k))
        self.cov = np.empty((int(num), k, k))
        self.reset()

    def reset(self, rows: np.ndarray | slice = slice(None)) -> None:
        """Back to the prior for the copies ``rows``."""
        self.mean[rows] = 0.0
        self.cov[rows] = self.eta**2 * self.kernel

    def update(self, rows: np.ndarray, arms: np.ndarray, values: np.ndarray) -> None:
        """Copy ``rows[j]`` observed ``values[j]`` at arm ``arms[j]`` (distinct rows): one rank-one step each."""
        rows, arms = np.asarray(rows, dtype=np.int64), np.asarray(arms, dtype=np.int64)
        column = self.cov[rows, :, arms]  # C[:, a] of each copy, (J, K)
        s = column[np.arange(rows.size), arms] + self.sigma**2
        gain = column / s[:, None]
        self.mean[rows] += gain * (np.asarray(values, dtype=np.float64) - self.mean[rows, arms])[:, None]
        self.cov[rows] -= gain[:, :, None] * column[:, None, :]

    def std(self) -> np.ndarray:
        """Posterior standard deviations of the arm means, (N, K)."""
        return np.sqrt(np.maximum(np.diagonal(self.cov, axis1=1, axis2=2), 0.0))
