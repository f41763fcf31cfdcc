"""The information quantities of the package, written once: the divergences of the arms' families, the
transportation cost of two arms and the generalised likelihood ratio (GLR) statistic. This module is the numpy /
scipy reference; every other form is tested against it point by point (``tests/test_divergences.py``, over a grid
with means 0 and 1, equal means and single pulls).

- ``kl_bernoulli(p, q) = p ln(p / q) + (1 - p) ln((1 - p) / (1 - q))`` (``0 ln 0 = 0``; ``+inf`` where q is 0 or 1
  and p is not), ``kl_gaussian(p, q, sigma) = (p - q)^2 / (2 sigma^2)``; ``divergence(distribution, sigma)`` picks
  one by name.
- ``transportation_cost(d, w_i, w_j, mu_i, mu_j) = w_i d(mu_i, m) + w_j d(mu_j, m)`` with ``m = (w_i mu_i + w_j
  mu_j) / (w_i + w_j)``: the least weighted divergence of moving two arms to a common mean (Garivier and Kaufmann
  2016, Lemma 3). With the pull counts as weights and the empirical means it is ``Z_ij(t)``, the GLR statistic of
  "arm i beats arm j" (``pair_statistic``, taken as 0 unless ``mu_i > mu_j`` and both arms were pulled).
- ``glr_statistic(d, counts, means, answer) = min_{i in S, j not in S} Z_ij(t)``: the GLR statistic of the answer
  S (a best arm, the top m) that Chernoff's stopping rule compares with a threshold (GK 2016, eq. 8 and §4).

The optimal allocation w*(mu) and the characteristic time T*(mu) built on these are
``bandit_gym.lower_bounds`` (its reference). The compiled forms, one per backend:

- numba: ``bandit_gym.agents.best_arm._stopping`` (``divergence``, ``transportation_cost``, ``glr``: float64, q
  strictly inside (0, 1)) and ``bandit_gym.agents.best_arm._oracle`` (w*);
- JAX (float32): ``bandit_gym.jax.agents._stopping`` (``divergence``, ``transportation_cost``,
  ``glr_statistic``) and ``bandit_gym.jax.agents._oracle`` (w*). Float32 keeps the divergence's relative precision
  only when it is computed from differences taken directly, so two rules carry a form of their own, tested against
  this reference like the others: the oracle's ``_oracle.divergence`` (from the means' complements and
  difference) and KL-UCB's ``kl_ucb.kl_bernoulli`` (for q at or right of p).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from bandit_gym import _validation as check

DISTRIBUTIONS = ("bernoulli", "gaussian")
"""The arms' families whose divergence is known in closed form: Bernoulli, and Gaussian of a known sigma."""

Divergence = Callable[[np.ndarray | float, np.ndarray | float], np.ndarray]


def kl_bernoulli(p: ArrayLike, q: ArrayLike) -> np.ndarray:
    """``d(p, q) = p ln(p / q) + (1 - p) ln((1 - p) / (1 - q))``, the Kullback-Leibler divergence of Bernoulli
    laws, elementwise (``0 ln 0 = 0``; ``+inf`` where q is 0 or 1 and p is not)."""
    p, q = np.asarray(p, dtype=np.float64), np.asarray(q, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return special.xlogy(p, p) - special.xlogy(p, q) + special.xlogy(1 - p, 1 - p) - special.xlogy(1 - p, 1 - q)


def kl_gaussian(p: ArrayLike, q: ArrayLike, sigma: float = 1.0) -> np.ndarray:
    """``(p - q)^2 / (2 sigma^2)``, the Kullback-Leibler divergence of Gaussian laws of means p and q and the
    same standard deviation sigma, elementwise."""
    p, q = np.asarray(p, dtype=np.float64), np.asarray(q, dtype=np.float64)
    return (p - q) ** 2 / (2.0 * sigma**2)


def divergence(distribution: str = "bernoulli", sigma: float = 1.0) -> Divergence:
    """d(p, q) of the arms' family: ``kl_bernoulli``, or ``kl_gaussian`` of standard deviation sigma."""
    distribution = check.choice("distribution", distribution, DISTRIBUTIONS)
    if distribution == "bernoulli":
        return kl_bernoulli
    sigma = check.real("sigma", sigma, low=0.0, low_open=True)
    return lambda p, q: kl_gaussian(p, q, sigma)


def transportation_cost(d: Divergence, w1: ArrayLike, wa: ArrayLike, mu1: ArrayLike, mua: ArrayLike) -> np.ndarray:
    """``w1 d(mu1, m) + wa d(mua, m)`` with ``m = (w1 mu1 + wa mua) / (w1 + wa)``: the least weighted divergence
    of moving arms 1 and a to a common mean, the inner infimum of T*'s definition for that pair (GK 2016 Lemma 3:
    ``(w1 + wa) I_{w1 / (w1 + wa)}(mu1, mua)``). Elementwise; 0 where both weights are 0."""
    w1, wa = np.asarray(w1, dtype=np.float64), np.asarray(wa, dtype=np.float64)
    m1, ma = np.asarray(mu1, dtype=np.float64), np.asarray(mua, dtype=np.float64)
    total = w1 + wa
    with np.errstate(invalid="ignore", divide="ignore"):
        mid = (w1 * m1 + wa * ma) / total
        cost = w1 * d(m1, mid) + wa * d(ma, mid)
    return np.where(total > 0, cost, 0.0)


def pair_statistic(d: Divergence, counts: ArrayLike, means: ArrayLike, i: int, j: int) -> float:
    """``Z_ij(t)``, the GLR statistic of "arm i beats arm j": ``transportation_cost`` with the pull counts as
    weights if ``mu_i > mu_j`` and both arms were pulled, else 0."""
    n, mu = np.asarray(counts, dtype=np.float64), np.asarray(means, dtype=np.float64)
    if n[i] == 0 or n[j] == 0 or mu[i] <= mu[j]:
        return 0.0
    return float(transportation_cost(d, n[i], n[j], mu[i], mu[j]))


def glr_statistic(d: Divergence, counts: ArrayLike, means: ArrayLike, answer: ArrayLike) -> float:
    """``Z(t) = min_{i in S, j not in S} Z_ij(t)`` for the answer S (a boolean mask over the arms, neither empty
    nor every arm): how strongly the samples reject every instance whose answer is not S."""
    inside = np.asarray(answer, dtype=bool)
    if inside.all() or not inside.any():
        raise ValueError(f"answer must hold some arms and leave some out, got {inside.tolist()}")
    return min(pair_statistic(d, counts, means, int(i), int(j))
               for i in np.flatnonzero(inside) for j in np.flatnonzero(~inside))
