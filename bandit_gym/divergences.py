r"""The information quantities of the package, written once: the divergences of the arms' families, the
transportation cost of two arms and the generalised likelihood ratio (GLR) statistic. This module is the numpy /
scipy reference; every other form is tested against it point by point (``tests/test_divergences.py``, over a grid
with means 0 and 1, equal means and single pulls).

- ``kl_bernoulli(p, q)`` \(= p \ln(p / q) + (1 - p) \ln\big((1 - p) / (1 - q)\big)\) (\(0 \ln 0 = 0\); \(+\infty\)
  where \(q\) is 0 or 1 and \(p\) is not), ``kl_gaussian(p, q, sigma)`` \(= (p - q)^2 / (2 \sigma^2)\);
  ``divergence(distribution, sigma)`` picks one by name.
- ``transportation_cost(d, w_i, w_j, mu_i, mu_j)`` \(= w_i\, d(\mu_i, m) + w_j\, d(\mu_j, m)\) with
  \(m = (w_i \mu_i + w_j \mu_j) / (w_i + w_j)\): the least weighted divergence of moving two arms to a common mean
  (Garivier and Kaufmann 2016, Lemma 3). With the pull counts as weights and the empirical means it is
  \(Z_{ij}(t)\), the GLR statistic of "arm \(i\) beats arm \(j\)" (``pair_statistic``, taken as 0 unless
  \(\mu_i > \mu_j\) and both arms were pulled).
- ``glr_statistic(d, counts, means, answer)`` \(= \min_{i \in S,\, j \notin S} Z_{ij}(t)\): the GLR statistic of
  the answer \(S\) (a best arm, the top \(m\)) that Chernoff's stopping rule compares with a threshold (GK 2016,
  eq. 8 and §4).
- with a slack \(\epsilon \ge 0\) (\(\epsilon\)-good answers):
  ``shifted_transportation_cost(d, w_i, w_j, mu_i, mu_j, epsilon)``
  \(= \inf_{\lambda_j \ge \lambda_i + \epsilon} w_i\, d(\mu_i, \lambda_i) + w_j\, d(\mu_j, \lambda_j)\), the least
  cost of making arm \(j\) beat arm \(i\) by \(\epsilon\) (0 if it already does); ``pair_statistic`` and
  ``glr_statistic`` take ``epsilon`` and use it (``transportation_cost`` at \(\epsilon = 0\)).
- ``mixture_boundary(counts, log_term, distribution)``: the value that \(\sum_a N_a\, d(\hat\mu_a, \mu_a)\) over
  one arm or a pair of arms exceeds only when their mixture martingale exceeds \(e^{\text{log\_term}}\) (Ville's
  inequality: with probability at most \(e^{-\text{log\_term}}\), at any time), the boundary of the ``"mixture"``
  stopping thresholds.

The optimal allocation \(w^*(\mu)\) and the characteristic time \(T^*(\mu)\) built on these are
``bandit_gym.lower_bounds`` (its reference). The compiled forms, one per backend:

- numba: ``bandit_gym.agents.best_arm._stopping`` (``divergence``, ``transportation_cost``, ``glr``: float64,
  \(q\) strictly inside \((0, 1)\)) and ``bandit_gym.agents.best_arm._oracle`` (\(w^*\); its top-\(m\) gradients
  take the divergence of two close means from ``close_divergence``, which is ``divergence`` except where the two
  logarithms would cancel: written into ``divergence`` itself, it made every rule that calls it compile longer,
  0.8 CPU-seconds more for FWS's and Track-and-Stop's first compilation);
- JAX (float32): ``bandit_gym.jax.divergences`` (``bernoulli``, ``gaussian``, ``divergence``, ``log1p_minus``:
  the one Bernoulli divergence of the JAX agents, which takes the means' difference and complements where a caller
  knows them more precisely than a float32 subtraction gives them), on which ``bandit_gym.jax.agents._stopping``
  (``transportation_cost``, ``glr_statistic``) and ``bandit_gym.jax.agents._oracle`` (\(w^*\)) are built.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import scipy
from numpy.typing import ArrayLike

from bandit_gym import _validation as check

DISTRIBUTIONS = ("bernoulli", "gaussian")
r"""The arms' families whose divergence is known in closed form: Bernoulli, and Gaussian of a known \(\sigma\)."""

Divergence = Callable[[np.ndarray | float, np.ndarray | float], np.ndarray]


def kl_bernoulli(p: ArrayLike, q: ArrayLike) -> np.ndarray:
    r"""\(d(p, q) = p \ln(p / q) + (1 - p) \ln\big((1 - p) / (1 - q)\big)\), the Kullback-Leibler divergence of
    Bernoulli laws, elementwise (\(0 \ln 0 = 0\); \(+\infty\) where \(q\) is 0 or 1 and \(p\) is not)."""
    p, q = np.asarray(p, dtype=np.float64), np.asarray(q, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        xlogy = scipy.special.xlogy
        return xlogy(p, p) - xlogy(p, q) + xlogy(1 - p, 1 - p) - xlogy(1 - p, 1 - q)


def kl_gaussian(p: ArrayLike, q: ArrayLike, sigma: float = 1.0) -> np.ndarray:
    r"""\((p - q)^2 / (2 \sigma^2)\), the Kullback-Leibler divergence of Gaussian laws of means \(p\) and \(q\) and
    the same standard deviation \(\sigma\), elementwise."""
    p, q = np.asarray(p, dtype=np.float64), np.asarray(q, dtype=np.float64)
    return (p - q) ** 2 / (2.0 * sigma**2)


def divergence(distribution: str = "bernoulli", sigma: float = 1.0) -> Divergence:
    r"""\(d(p, q)\) of the arms' family: ``kl_bernoulli``, or ``kl_gaussian`` of standard deviation \(\sigma\)."""
    distribution = check.choice("distribution", distribution, DISTRIBUTIONS)
    if distribution == "bernoulli":
        return kl_bernoulli
    sigma = check.real("sigma", sigma, low=0.0, low_open=True)
    return lambda p, q: kl_gaussian(p, q, sigma)


def transportation_cost(d: Divergence, w1: ArrayLike, wa: ArrayLike, mu1: ArrayLike, mua: ArrayLike) -> np.ndarray:
    r"""\(w_1\, d(\mu_1, m) + w_a\, d(\mu_a, m)\) with \(m = (w_1 \mu_1 + w_a \mu_a) / (w_1 + w_a)\) (arguments
    ``w1``, ``wa``, ``mu1``, ``mua``): the least weighted divergence of moving arms 1 and \(a\) to a common mean,
    the inner infimum of \(T^*\)'s definition for that pair (GK 2016 Lemma 3:
    \((w_1 + w_a)\, I_{w_1 / (w_1 + w_a)}(\mu_1, \mu_a)\)). Elementwise; 0 where both weights are 0."""
    w1, wa = np.asarray(w1, dtype=np.float64), np.asarray(wa, dtype=np.float64)
    m1, ma = np.asarray(mu1, dtype=np.float64), np.asarray(mua, dtype=np.float64)
    total = w1 + wa
    with np.errstate(invalid="ignore", divide="ignore"):
        mid = (w1 * m1 + wa * ma) / total
        cost = w1 * d(m1, mid) + wa * d(ma, mid)
    return np.where(total > 0, cost, 0.0)


def shifted_transportation_cost(d: Divergence, wi: float, wj: float, mui: float, muj: float,
                                epsilon: float) -> float:
    r"""\(\inf_{\lambda_j \ge \lambda_i + \epsilon} w_i\, d(\mu_i, \lambda_i) + w_j\, d(\mu_j, \lambda_j)\): the
    least weighted divergence of an instance in which arm \(j\) beats arm \(i\) by \(\epsilon\) or more; 0 if
    \(\mu_j \ge \mu_i + \epsilon\) already. The infimum is on the boundary \(\lambda_j = \lambda_i + \epsilon\), a
    convex function of \(\lambda_i\) minimised here by scipy's bounded scalar minimiser (Bernoulli: \(\lambda_i\) in
    \([0, 1 - \epsilon]\)); at \(\epsilon = 0\) it is ``transportation_cost``."""
    if muj >= mui + epsilon or wi + wj == 0.0:
        return 0.0
    if epsilon == 0.0:
        return float(transportation_cost(d, wi, wj, mui, muj))

    def cost(x: float) -> float:
        with np.errstate(divide="ignore", invalid="ignore"):
            value = float(wi * d(mui, x) + wj * d(muj, x + epsilon))
        return value if np.isfinite(value) else np.inf

    low, high = muj - epsilon, mui  # the minimiser lies between the two unconstrained ones
    if d is kl_bernoulli:
        low, high = max(low, 0.0), min(high, 1.0 - epsilon)
        if high <= low:
            return cost(low)
    found = scipy.optimize.minimize_scalar(cost, bounds=(low, high), method="bounded",
                                     options={"xatol": 1e-13 * max(1.0, abs(high - low))})
    return float(min(found.fun, cost(low), cost(high)))


def pair_statistic(d: Divergence, counts: ArrayLike, means: ArrayLike, i: int, j: int,
                   epsilon: float = 0.0) -> float:
    r"""\(Z_{ij}(t)\), the GLR statistic of "arm \(i\) beats arm \(j\)" (by more than \(-\epsilon\)): the shifted
    transportation cost with the pull counts as weights if \(\mu_i + \epsilon > \mu_j\) and both arms were pulled,
    else 0."""
    n, mu = np.asarray(counts, dtype=np.float64), np.asarray(means, dtype=np.float64)
    if n[i] == 0 or n[j] == 0 or mu[i] + epsilon <= mu[j]:
        return 0.0
    return shifted_transportation_cost(d, n[i], n[j], mu[i], mu[j], epsilon)


def glr_statistic(d: Divergence, counts: ArrayLike, means: ArrayLike, answer: ArrayLike,
                  epsilon: float = 0.0) -> float:
    r"""\(Z(t) = \min_{i \in S,\, j \notin S} Z_{ij}(t)\) for the answer \(S\) (a boolean mask over the arms,
    neither empty nor every arm): how strongly the samples reject every instance in which some arm outside \(S\)
    beats some arm of \(S\) by \(\epsilon\) or more (at \(\epsilon = 0\): every instance whose answer is not
    \(S\))."""
    inside = np.asarray(answer, dtype=bool)
    if inside.all() or not inside.any():
        raise ValueError(f"answer must hold some arms and leave some out, got {inside.tolist()}")
    return min(pair_statistic(d, counts, means, int(i), int(j), epsilon)
               for i in np.flatnonzero(inside) for j in np.flatnonzero(~inside))


def mixture_boundary(counts: ArrayLike, log_term: float, distribution: str = "bernoulli") -> float:
    r"""The boundary of the ``"mixture"`` stopping thresholds for one arm or a pair (``counts``: their pull counts,
    each at least 1): \(\big(\text{log\_term} + \sum_a c(N_a)\big) / \min_a f(N_a)\), with each arm's mixture
    martingale \(M_a\) (a nonnegative martingale of mean 1 in the arm's own samples, whatever the sampling rule)
    bounded as \(\ln M_a \ge f(N_a)\, N_a\, d(\hat\mu_a, \mu_a) - c(N_a)\):

    - Bernoulli arms, the Krichevsky-Trofimov mixture (a \(\mathrm{Beta}(1/2, 1/2)\) prior on the mean):
      \(c(n) = \ln(n) / 2 + \ln 2\), \(f = 1\), from
      \(P_{KT}(a, b) \ge (a / n)^a (b / n)^b / (2 \sqrt{n})\) (\(a + b = n\); the bound of the
      Krichevsky-Trofimov estimator in Willems, Shtarkov and Tjalkens 1995, checked for every \(n \le 2000\) in the
      tests);
    - Gaussian arms of known \(\sigma\), a \(\mathcal{N}(0, \sigma^2)\) prior on the mean's shift (Robbins' normal
      mixture): \(M_n = (1 + n)^{-1/2} \exp\big(n^2 (\hat\mu - \mu)^2 / (2 \sigma^2 (1 + n))\big)\), so
      \(c(n) = \ln(1 + n) / 2\), \(f(n) = n / (1 + n)\).

    Where \(\sum_a N_a\, d(\hat\mu_a, \mu_a)\) exceeds the boundary, \(\prod_a M_a > e^{\text{log\_term}}\); the
    product of the arms' martingales is a nonnegative martingale under any sampling rule, so by Ville's inequality
    this happens at some time with probability at most \(e^{-\text{log\_term}}\)."""
    n = np.asarray(counts, dtype=np.float64)
    if n.ndim != 1 or not 1 <= n.shape[0] <= 2 or np.any(n < 1):
        raise ValueError(f"counts must be the pull counts (at least 1) of one or two arms, got {n.tolist()}")
    distribution = check.choice("distribution", distribution, DISTRIBUTIONS)
    if distribution == "bernoulli":
        return float(log_term + np.sum(0.5 * np.log(n) + np.log(2.0)))
    return float((log_term + np.sum(0.5 * np.log1p(n))) / np.min(n / (1.0 + n)))
