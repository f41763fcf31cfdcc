"""Loss and regret functions of the papers, as pure array functions.

Every function broadcasts over leading axes: pass one episode (arrays of shape ``(K,)``) or a batch of episodes
(shape ``(N, K)``) and get a scalar or an ``(N,)`` array back.

The losses of the pure-exploration families (``aggregate_regret``, ``error_indicator``, ``set_simple_regret``,
``set_error``, ``top_k_regret``, ``top_k_error``) also take JAX arrays, traced or not, and then compute with
``jax.numpy`` in JAX's default precision: the functional JAX envs (``bandit_gym.jax``) score their answers with
these same functions. NumPy arrays are computed in float64, as always; nothing here imports JAX.
"""

from __future__ import annotations

import sys
from types import ModuleType
from typing import Any

import numpy as np
from numpy.typing import ArrayLike


def _namespace(*arrays: Any) -> tuple[ModuleType, Any, Any]:
    """The array module for ``arrays``, its float type and its integer type: ``jax.numpy`` and JAX's default
    float and integer if any of them is a JAX array (only possible once JAX is imported), else ``numpy``, float64
    and int64."""
    jax = sys.modules.get("jax")
    if jax is not None and any(isinstance(a, jax.Array) for a in arrays):
        import jax.numpy as jnp

        return jnp, jnp.result_type(float), jnp.result_type(int)
    return np, np.float64, np.int64


def true_classes(means: ArrayLike, threshold: float) -> np.ndarray:
    r"""Ground truth of the thresholding bandit, \(z_i = \mathbb{1}\{\theta_i \ge \theta\}\) (tao2019 §2; an arm at
    \(\theta\) is positive)."""
    xp, _, _ = _namespace(means, threshold)
    return xp.asarray(means) >= threshold


def counted_arms(means: ArrayLike, threshold: float, epsilon: float = 0.0) -> np.ndarray:
    r"""Arms that count in the loss: those with \(\lvert \theta_i - \theta \rvert \ge \epsilon\).

    Arms strictly inside the indifference zone \((\theta - \epsilon, \theta + \epsilon)\) count for nothing; with
    \(\epsilon = 0\) every arm counts.
    """
    xp, real, _ = _namespace(means, threshold, epsilon)
    return xp.abs(xp.asarray(means, dtype=real) - threshold) >= epsilon


def misclassified(answer: ArrayLike, means: ArrayLike, threshold: float, epsilon: float = 0.0) -> np.ndarray:
    r"""Per-arm mask of counted arms whose answer bit \(d_i\) differs from \(z_i\)."""
    xp, _, _ = _namespace(answer, means, threshold, epsilon)
    bits = xp.asarray(answer).astype(bool)
    return (bits != true_classes(means, threshold)) & counted_arms(means, threshold, epsilon)


def aggregate_regret(answer: ArrayLike, means: ArrayLike, threshold: float, epsilon: float = 0.0) -> np.ndarray:
    r"""Aggregate regret of one answer: the number of misclassified counted arms,
    \(\sum_i \mathbb{1}\{d_i \ne z_i\}\) (tao2019 eq. 3, before the expectation)."""
    xp, _, _ = _namespace(answer, means, threshold, epsilon)
    return xp.asarray(misclassified(answer, means, threshold, epsilon).sum(axis=-1))


def error_indicator(answer: ArrayLike, means: ArrayLike, threshold: float, epsilon: float = 0.0) -> np.ndarray:
    r"""Error indicator \(\mathbb{1}\{\exists i: d_i \ne z_i\}\), whose expectation is the thresholding bandit's
    simple regret, the probability that some arm is misclassified (tao2019 §1; Locatelli et al. 2016's objective;
    tao2019 Appendix F.1)."""
    xp, _, integer = _namespace(answer, means, threshold, epsilon)
    return xp.asarray(misclassified(answer, means, threshold, epsilon).any(axis=-1), dtype=integer)


def simple_regret(recommendation: ArrayLike, means: ArrayLike) -> np.ndarray:
    r"""Simple regret of a best-arm recommendation \(J\): \(\max_i \mu_i - \mu_J\)."""
    means = np.asarray(means, dtype=np.float64)
    rec = np.asarray(recommendation, dtype=np.int64)
    picked = np.take_along_axis(means, rec[..., None], axis=-1)[..., 0]
    return means.max(axis=-1) - picked


def survival_from_distribution(distribution: ArrayLike) -> np.ndarray:
    r"""Survival function \(F_i(j) = P(X_i \ge j)\) for \(j = 1..m\) from probability vectors over
    \(\{0..m\}\)."""
    p = np.asarray(distribution, dtype=np.float64)
    tail = np.cumsum(p[..., ::-1], axis=-1)[..., ::-1]
    return tail[..., 1:]


def pseudo_regret(expected_reward: ArrayLike, best_expected_reward: ArrayLike) -> np.ndarray:
    r"""Cumulative pseudo-regret \(\sum_t \big(\max_i F_i(c_t) - F_{I_t}(c_t)\big)\) from per-round expected rewards
    (abernethy2016 §3); the round axis is the last one."""
    gap = np.asarray(best_expected_reward, dtype=np.float64) - np.asarray(expected_reward, dtype=np.float64)
    return gap.sum(axis=-1)


def threshold_pseudo_regret(survival: ArrayLike, arms: ArrayLike, thresholds: ArrayLike) -> np.ndarray:
    r"""Exact cumulative pseudo-regret of a sequence of pulls ``arms`` against thresholds ``thresholds`` (both of
    shape ``(..., T)``, thresholds in \(1..m\)) on an instance with survival matrix \(F\) of shape \((K, m)\)."""
    F = np.asarray(survival, dtype=np.float64)
    arms = np.asarray(arms, dtype=np.int64)
    level = np.asarray(thresholds, dtype=np.int64) - 1
    return pseudo_regret(F[arms, level], F.max(axis=0)[level])


def set_simple_regret(answer: ArrayLike, means: ArrayLike, m: int) -> np.ndarray:
    r"""Simple regret of an answer set of \((\epsilon, m)\)-best arm identification (gabillon2012 §2, eq. 2):
    \(r = \mu_{(m)} - \min_{k \in \text{answer}} \mu_k\) for an answer of exactly \(m\) arms (bits, one per arm).
    Any other answer counts as the worst possible set: \(\mu_{(m)} - \min_k \mu_k\)."""
    xp, real, _ = _namespace(answer, means, m)
    bits = xp.asarray(answer).astype(bool)
    mu = xp.asarray(means, dtype=real)
    mth = -xp.sort(-mu, axis=-1)[..., m - 1]
    chosen_min = xp.where(bits, mu, xp.inf).min(axis=-1)
    valid = bits.sum(axis=-1) == m
    return xp.where(valid, mth - chosen_min, mth - mu.min(axis=-1))


def set_error(answer: ArrayLike, means: ArrayLike, m: int, epsilon: float = 0.0) -> np.ndarray:
    r"""\(\mathbb{1}\{r > \epsilon\}\) for the set simple regret \(r\). gabillon2012 §2 prints the error event as
    \(r \ge \epsilon\), which at \(\epsilon = 0\) holds for every answer; we read it as \(r > \epsilon\), the
    complement of its success (\(m\) arms with \(\mu_k \ge \mu_{(m)} - \epsilon\), the event of Theorem 2): with
    \(\epsilon = 0\) an answer errs iff it holds an arm below the \(m\)-th best mean."""
    _, _, integer = _namespace(answer, means, m, epsilon)
    return (set_simple_regret(answer, means, m) > epsilon).astype(integer)


def top_k_regret(answer: ArrayLike, means: ArrayLike, k: int) -> np.ndarray:
    r"""Aggregate regret of a top-\(K\) answer (chen2017 eq. 1):
    \(R = \frac{1}{K} \big(\text{sum of the } K \text{ best means} - \text{sum of the answer's means}\big)\) for an
    answer of exactly \(K\) arms; any other answer counts as the worst possible set (the \(K\) smallest means; ours:
    the paper's answers always hold \(K\) arms)."""
    xp, real, _ = _namespace(answer, means, k)
    bits = xp.asarray(answer).astype(bool)
    mu = xp.asarray(means, dtype=real)
    ranked = -xp.sort(-mu, axis=-1)
    if xp is np:
        best, worst = ranked[..., :k].sum(axis=-1), ranked[..., -k:].sum(axis=-1)
    else:  # k may be traced under jit: masks instead of slices
        position = xp.arange(ranked.shape[-1])
        best = xp.where(position < k, ranked, 0.0).sum(axis=-1)
        worst = xp.where(position >= ranked.shape[-1] - k, ranked, 0.0).sum(axis=-1)
    chosen = xp.where(bits, mu, 0.0).sum(axis=-1)
    valid = bits.sum(axis=-1) == k
    return (best - xp.where(valid, chosen, worst)) / k


def top_k_error(answer: ArrayLike, means: ArrayLike, k: int, epsilon: float) -> np.ndarray:
    r"""Failure \(\mathbb{1}\{R > \epsilon\}\) of a top-\(K\) answer, \(R\) its aggregate regret (chen2017's
    experiment metric)."""
    _, _, integer = _namespace(answer, means, k, epsilon)
    return (top_k_regret(answer, means, k) > epsilon).astype(integer)


def top_k_hardness(means: ArrayLike, k: int, epsilon: float) -> tuple[int, float]:
    r"""\((t, H^{(t, \epsilon)})\) of chen2017 (eqs. 2-6), with \(\theta\) sorted decreasingly and 1-based indices:

    $$
    \begin{aligned}
    \Delta_i &= \theta_i - \theta_{K+1}\ (i \le K), \quad \theta_K - \theta_i\ (i > K) && \text{(eq. 2)}\\
    t &= \text{the largest } t \in 0..K-1 \text{ with } \Delta_{K-t}\, t \le K \epsilon \text{ and }
    \Delta_{K+t+1}\, t \le K \epsilon && \text{(eq. 3)}\\
    \Psi &= \max\big(\epsilon, \min(\Delta_{K-t}, \Delta_{K+t+1})\big), \quad
    H = \sum_i \min(\Delta_i^{-2}, \Psi^{-2}) && \text{(eqs. 4-6)}
    \end{aligned}
    $$

    \(t\) is also kept at most \(n - K - 1\), for \(\Delta_{K+t+1}\) to exist (the paper's range \(0..K-1\) fits
    when \(n \ge 2K\)). \(H^{(0, \epsilon)} = \sum_i \min(\Delta_i^{-2}, \epsilon^{-2})\) is the hardness of
    CLUCB-PAC's bound (chen2017 §1); this function returns \(H\) at the computed \(t\)."""
    theta = -np.sort(-np.asarray(means, dtype=np.float64))
    n = theta.size
    if not 1 <= k < n:
        raise ValueError(f"k must be in 1..n-1 = 1..{n - 1}, got {k}")
    i = np.arange(1, n + 1)
    gaps = np.where(i <= k, theta - theta[k], theta[k - 1] - theta)  # Delta_i at position i - 1

    def delta(j: int) -> float:
        return float(gaps[j - 1])

    t = max(s for s in range(min(k - 1, n - k - 1) + 1)
            if delta(k - s) * s <= k * epsilon and delta(k + s + 1) * s <= k * epsilon)
    psi = max(epsilon, min(delta(k - t), delta(k + t + 1)))
    with np.errstate(divide="ignore"):
        return t, float(np.sum(np.minimum(gaps**-2.0, psi**-2.0)))
