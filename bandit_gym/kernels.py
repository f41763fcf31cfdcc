"""Kernels over arms for correlated best-arm identification (hoffman2014): the prior ``mu ~ N(0, eta^2 G)`` of
the arm means, for the env's generating model and for a Bayesian agent's own model.

A kernel is a K x K symmetric positive semi-definite matrix G, or the name of one of :data:`KERNELS`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

#: arms (sensor locations) of the synthetic stand-in for hoffman2014's traffic data, and its historical readings
TRAFFIC_SENSORS, TRAFFIC_HISTORY = 357, 1680


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


def squared_exponential(locations: Any, length_scale: float = 1.0) -> np.ndarray:
    """``G_ij = exp(-||x_i - x_j||^2 / length_scale^2)`` for arm locations ``(K,)`` or ``(K, d)`` (hoffman2014
    §6.2 writes the unit-length-scale kernel ``exp(-(x - x')^2)``)."""
    x = np.asarray(locations, dtype=np.float64)
    if x.ndim == 1:
        x = x[:, None]
    if x.ndim != 2 or x.shape[0] < 2 or not np.all(np.isfinite(x)):
        raise ValueError(f"locations must be finite, of shape (K,) or (K, d) with K >= 2, got shape {x.shape}")
    if not (np.isfinite(length_scale) and length_scale > 0):
        raise ValueError(f"length_scale={length_scale!r} must be a positive real number")
    sq = ((x[:, None, :] - x[None, :, :]) ** 2).sum(axis=2)
    return np.exp(-sq / length_scale**2)


@functools.lru_cache(maxsize=1)
def traffic_synthetic() -> np.ndarray:
    """A **synthetic** stand-in for the empirical covariance of hoffman2014's traffic data (K = 357 sensors
    on I-880 South; the data is not available offline).

    357 sensor positions drawn uniformly on a 40-mile road (fixed seed); 1680 "historical" speed profiles
    (two thirds of the paper's 2520 readings), each a draw of a Gaussian process over the positions: a
    squared-exponential component of length 3 miles (congestion waves), one of 0.5 mile (local bottlenecks,
    variance 0.5) and independent sensor noise (variance 0.2). G is their empirical covariance, as in the
    paper, scaled to a unit mean diagonal. Deterministic; read-only."""
    rng = np.random.default_rng(2014)
    positions = np.sort(rng.uniform(0.0, 40.0, TRAFFIC_SENSORS))
    truth = squared_exponential(positions, 3.0) + 0.5 * squared_exponential(positions, 0.5)
    truth += 0.2 * np.eye(TRAFFIC_SENSORS)
    history = rng.standard_normal((TRAFFIC_HISTORY, TRAFFIC_SENSORS)) @ np.linalg.cholesky(truth).T
    g = np.cov(history, rowvar=False)
    g = (g + g.T) / 2.0 / np.mean(np.diag(g))
    g.flags.writeable = False
    return g


def _model_selection() -> np.ndarray:
    from bandit_gym.model_selection import model_kernel

    return model_kernel()


#: named kernels: ``"traffic-synthetic"`` (357 arms), ``"model-selection"`` (hoffman2014 §6.2's 160 models)
KERNELS: dict[str, Callable[[], np.ndarray]] = {"traffic-synthetic": traffic_synthetic,
                                                "model-selection": _model_selection}


def resolve_kernel(kernel: object, name: str = "kernel") -> np.ndarray:
    """A kernel given as a matrix or as the name of one of :data:`KERNELS`, checked, as a float matrix."""
    if isinstance(kernel, str):
        if kernel not in KERNELS:
            raise ValueError(f"{name}={kernel!r} is not a known kernel; use a K x K matrix or one of "
                             f"{', '.join(map(repr, KERNELS))}")
        return KERNELS[kernel]()
    return check_kernel(kernel, name)


def prior_factor(kernel: np.ndarray, eta: float, tolerance: float = 1e-10) -> np.ndarray:
    """A factor F (K, r) with ``F F^T = eta^2 G``, r the numerical rank of G (eigenvalues below ``tolerance``
    times the largest are dropped): ``X = V D^(1/2)`` of hoffman2014 §4, scaled by eta."""
    d, v = np.linalg.eigh(kernel)
    keep = d > tolerance * max(d.max(), 0.0)
    return eta * v[:, keep] * np.sqrt(d[keep])


class GaussianProcessMeans:
    """Sampler of arm means from the prior ``N(0, eta^2 G)``, one vector per episode (pass it as ``means=``):
    ``F z`` with ``F F^T = eta^2 G`` (:func:`prior_factor`) and z standard normal."""

    def __init__(self, kernel: np.ndarray, eta: float = 1.0) -> None:
        self.kernel, self.eta = kernel, float(eta)
        self.factor = prior_factor(kernel, self.eta)

    def __repr__(self) -> str:
        return f"GaussianProcessMeans(K={self.kernel.shape[0]}, eta={self.eta:g})"

    def __call__(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return rng.standard_normal((n, self.factor.shape[1])) @ self.factor.T
