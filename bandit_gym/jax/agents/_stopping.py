"""Stopping rules of fixed-confidence best-arm identification as pure JAX functions of one copy: the numpy
components of ``bandit_gym.agents.best_arm._stopping`` (read its docstring for the theory) for best-arm
identification (m = 1, the answer one arm, the *leader*).

- The GLR (Chernoff) rule of Garivier and Kaufmann (2016): stop as soon as

      Z(t) = min_{j != leader} W(leader, j) > beta(t, delta),
      W(i, j) = N_i d(mu_i, mu_ij) + N_j d(mu_j, mu_ij)  if mu_i > mu_j (else 0),
      mu_ij = (N_i mu_i + N_j mu_j) / (N_i + N_j),

  d the Bernoulli divergence (``0 ln 0 = 0``) or the Gaussian one ``(p - q)^2 / (2 sigma^2)``; W is also 0 when an
  arm was never pulled, so Z(t) is 0, and the rule never stops, before every arm is pulled or on a tie with the
  leader. Thresholds (``kind``), P = K - 1 pairs, t the pulls made (at least 1):

  - ``"gk2016"``: ``ln(2 t P / delta)`` (GK 2016 Theorem 10; Bernoulli arms only);
  - ``"ls2020"``: ``2 ln(c t (t + 1)) + x_P``, c = 2 (Bernoulli) or 1 (Gaussian), x_P >= 2 the root of
    ``(x / 2)^2 e^(2 - x) = delta / P`` (Lattimore and Szepesvari 2020, Lemma 33.7);
  - ``"heuristic"``: ``ln((1 + ln t) / delta)`` (GK 2016 §6, outside the theory).

  The numpy component's ``"mixture"`` thresholds (one per pair) and its GLR statistic with a slack epsilon > 0 are
  not on this backend: the JAX agents refuse them (``check_agent_stopping``, ``check_glr_epsilon``).

- LUCB1's rule (``lucb_gap``) and KL-LUCB's (``kl_lucb_gap``): stop when ``max_{j != leader} UCB_j - LCB_leader``
  falls below the env's epsilon, with the numpy component's confidence bounds.

Everything is jit/vmap compatible: the arrays may be traced; ``kind``, ``gaussian`` (and ``stopping``) are Python
values fixed at trace time. Arithmetic is float32 (numpy: float64 of the same float32 statistics), which can only
change a decision whose statistic lies within a float32 rounding of its threshold.

The parameters are validated by the numpy component's ``check_stopping`` (re-exported here), so the JAX agents
accept and refuse what the numpy ones do.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from bandit_gym.agents.best_arm._stopping import (
    DISTRIBUTIONS,
    KL_LUCB_ALPHA,
    KL_LUCB_K1,
    STOPPING_RULES,
    THRESHOLDS,
    check_arms,
    check_stopping,
    ls2020_offset,
)
from bandit_gym.jax.divergences import bernoulli, divergence, kl_bernoulli_bound

Array = jax.Array
Obs = dict[str, Array]
#: the GLR thresholds of this backend (the numpy component's, less the per-pair ``"mixture"`` ones)
JAX_THRESHOLDS = tuple(kind for kind in THRESHOLDS if kind != "mixture")

__all__ = [
    "DISTRIBUTIONS",
    "JAX_THRESHOLDS",
    "STOPPING_RULES",
    "THRESHOLDS",
    "check_agent_stopping",
    "check_arms",
    "check_glr_epsilon",
    "check_stopping",
    "divergence",
    "glr_statistic",
    "glr_stop",
    "kl_bound",
    "kl_lucb_gap",
    "ls2020_offset",
    "lucb_gap",
    "pair_cost",
    "stopped",
    "threshold_value",
    "transportation_cost",
]


def pair_cost(n_i: Any, mean_i: Any, n_j: Any, mean_j: Any, gaussian: bool, sigma: Any) -> Array:
    """W(i, j) from the two arms' pull counts and empirical means, elementwise (broadcasts): ``N_i d(mu_i, mu_ij) +
    N_j d(mu_j, mu_ij)`` if both arms were pulled and ``mu_i > mu_j``, else 0 (the numpy
    ``transportation_cost``). Computed from ``mu_i - mu_j`` without a cancellation in float32: the Gaussian cost in
    its closed form ``N_i N_j / (N_i + N_j) (mu_i - mu_j)^2 / (2 sigma^2)``, the Bernoulli one with the gaps
    ``mu_i - mu_ij = N_j (mu_i - mu_j) / (N_i + N_j)`` and ``mu_j - mu_ij = -N_i (mu_i - mu_j) / (N_i + N_j)``
    given to the divergence (the same values as the textbook formula, which in float32 loses about
    ``N * 1e-7`` to cancellation)."""
    n_i, n_j = jnp.asarray(n_i, jnp.float32), jnp.asarray(n_j, jnp.float32)
    mean_i, mean_j = jnp.asarray(mean_i, jnp.float32), jnp.asarray(mean_j, jnp.float32)
    valid = (n_i > 0.0) & (n_j > 0.0) & (mean_i > mean_j)
    total = jnp.where(valid, n_i + n_j, 1.0)
    diff = jnp.where(valid, mean_i - mean_j, 0.0)
    if gaussian:
        cost = n_i * n_j / total * diff * diff / (2.0 * jnp.asarray(sigma, jnp.float32) ** 2)
    else:
        # mid lies strictly between the means where valid: strictly inside (0, 1); elsewhere any q in (0, 1)
        mid = jnp.where(valid, (n_i * mean_i + n_j * mean_j) / total, 0.5)
        gap_i, gap_j = n_j * diff / total, -n_i * diff / total
        cost = n_i * bernoulli(mean_i, mid, gap_i) + n_j * bernoulli(mean_j, mid, gap_j)
    return jnp.where(valid, cost, 0.0)


def _means(counts: Array, sums: Array) -> Array:
    """The empirical means ``sums / max(counts, 1)`` (the numpy rules' ``empirical_means``), float32."""
    return jnp.asarray(sums, jnp.float32) / jnp.maximum(jnp.asarray(counts, jnp.float32), 1.0)


def _pick(values: Array, arm: Any) -> Array:
    """``values[arm]`` by a comparison over the K arms (no gather under ``vmap``)."""
    return jnp.sum(jnp.where(jnp.arange(values.shape[-1]) == arm, values, 0.0), axis=-1)


def transportation_cost(counts: Array, means: Array, i: Any, j: Any, gaussian: bool, sigma: Any) -> Array:
    """The transportation cost W(i, j) of arms i and j (integers, traced or not; arrays of them broadcast):
    ``N_i d(mu_i, mu_ij) + N_j d(mu_j, mu_ij)`` if ``mu_i > mu_j``, else 0 (also when an arm was never pulled),
    the GLR statistic of "i beats j" and the Top Two rules' cost; ``counts`` and ``means`` (K,) per arm.
    The numpy ``_stopping.transportation_cost``."""
    counts, means = jnp.asarray(counts, jnp.float32), jnp.asarray(means, jnp.float32)
    i, j = jnp.asarray(i), jnp.asarray(j)
    return pair_cost(counts[i], means[i], counts[j], means[j], gaussian, sigma)


def costs_from(counts: Array, means: Array, leader: Any, gaussian: bool, sigma: Any) -> Array:
    """W(leader, j) for every arm j (K,), the leader's own entry 0 (a tie with itself)."""
    counts, means = jnp.asarray(counts, jnp.float32), jnp.asarray(means, jnp.float32)
    return pair_cost(_pick(counts, leader), _pick(means, leader), counts, means, gaussian, sigma)


def glr_statistic(counts: Array, means: Array, leader: Any, gaussian: bool, sigma: Any) -> Array:
    """The GLR statistic ``Z(t) = min_{j != leader} W(leader, j)`` (float32 scalar): 0 if an arm was never pulled
    or some other arm's mean is at least the leader's (the numpy ``glr`` with the answer {leader})."""
    counts, means = jnp.asarray(counts, jnp.float32), jnp.asarray(means, jnp.float32)
    others = jnp.arange(counts.shape[-1]) != leader
    least = jnp.min(jnp.where(others, costs_from(counts, means, leader, gaussian, sigma), jnp.inf))
    lead_mean = _pick(means, leader)
    beaten = jnp.any(others & (means >= lead_mean)) | jnp.any(counts <= 0.0)
    return jnp.where(beaten | ~jnp.isfinite(least), 0.0, least).astype(jnp.float32)


def _ls2020_offset(delta: Any, pairs: int) -> Array:
    """x_P (``ls2020_offset``): the numpy value (float64 root, then float32) for a concrete delta, else the root of
    ``2 ln(x / 2) + 2 - x = ln(delta / P)`` on [2, inf) by bisection (the left side decreases there)."""
    try:
        return jnp.float32(ls2020_offset(float(delta), pairs))
    except (TypeError, jax.errors.ConcretizationTypeError):
        pass
    target = jnp.log(jnp.asarray(delta, jnp.float32) / pairs)

    def f(x: Array) -> Array:
        return 2.0 * jnp.log(x / 2.0) + 2.0 - x - target

    high = jnp.maximum(4.0, 8.0 - 2.0 * target)  # f(8 - 2 target) < 0 for every target <= 0
    def bisect(_: int, bounds: tuple[Array, Array]) -> tuple[Array, Array]:
        low, high = bounds
        mid = 0.5 * (low + high)
        above = f(mid) > 0.0
        return jnp.where(above, mid, low), jnp.where(above, high, mid)

    low, high = jax.lax.fori_loop(0, 64, bisect, (jnp.float32(2.0), high.astype(jnp.float32)))
    return 0.5 * (low + high)


def threshold_value(t: Any, delta: Any, k: int, kind: str, gaussian: bool = False) -> Array:
    """The GLR threshold beta(t, delta) of ``kind`` (``"gk2016"``, ``"ls2020"``, ``"heuristic"``; a Python str)
    for K = ``k`` arms (P = K - 1 pairs) after t pulls (t < 1 counts as 1, as numpy's ``max(made, 1)``), float32.
    ``gaussian`` (static) only changes ``"ls2020"`` (c = 1 instead of 2). ``delta`` may be traced; the
    ``"ls2020"`` offset of a concrete delta is the numpy one."""
    if kind not in JAX_THRESHOLDS:
        raise ValueError(f"threshold={kind!r} is not a GLR threshold of the JAX backend; allowed: {JAX_THRESHOLDS}")
    t = jnp.maximum(jnp.asarray(t, jnp.float32), 1.0)
    pairs = int(k) - 1
    if kind == "gk2016":
        return jnp.log(2.0 * pairs * t / jnp.asarray(delta, jnp.float32))
    if kind == "ls2020":
        c = 1.0 if gaussian else 2.0
        return 2.0 * (np.log(c) + jnp.log(t) + jnp.log(t + 1.0)) + _ls2020_offset(delta, pairs)
    return jnp.log((1.0 + jnp.log(t)) / jnp.asarray(delta, jnp.float32))


def pulls_made(obs: Obs) -> Array:
    """The pulls made so far: the sum of the pull counts (exact in float32 up to 2^24 pulls)."""
    return jnp.sum(jnp.asarray(obs["counts"], jnp.float32), axis=-1)


def glr_stop(obs: Obs, leader: Any, delta: Any, kind: str, gaussian: bool, sigma: Any) -> Array:
    """Whether the GLR rule stops on ``obs`` with ``leader`` as the answer: ``glr_statistic > threshold_value`` at
    t = the pulls made (bool scalar). False before every arm is pulled (the statistic is 0 then and every threshold
    is positive, as in numpy) and on a tie with the leader."""
    counts = jnp.asarray(obs["counts"], jnp.float32)
    z = glr_statistic(counts, _means(counts, obs["sums"]), leader, gaussian, sigma)
    beta = threshold_value(pulls_made(obs), delta, counts.shape[-1], kind, gaussian)
    return (z > beta) & jnp.all(counts > 0.0)


def lucb_gap(obs: Obs, leader: Any, delta: Any, gaussian: bool, sigma: Any) -> Array:
    """LUCB1's ``max_{j != leader} UCB_j - LCB_leader`` with ``UCB/LCB = mu +- s sqrt(2 ln(1.25 K t^4 / delta) /
    max(N, 1))``, s = 1/2 (Bernoulli) or sigma (Gaussian), t the pulls made (at least 1)."""
    counts = jnp.asarray(obs["counts"], jnp.float32)
    means, k = _means(counts, obs["sums"]), counts.shape[-1]
    t = jnp.maximum(pulls_made(obs), 1.0)
    scale = jnp.asarray(sigma, jnp.float32) if gaussian else jnp.float32(0.5)
    log_term = jnp.log(1.25 * k / jnp.asarray(delta, jnp.float32)) + 4.0 * jnp.log(t)
    width = scale * jnp.sqrt(2.0 * log_term / jnp.maximum(counts, 1.0))
    others = jnp.arange(k) != leader
    top = jnp.max(jnp.where(others, means + width, -jnp.inf))
    return top - _pick(means - width, leader)


def kl_bound(mean: Any, n: Any, level: Any, upper: bool, gaussian: bool, sigma: Any) -> Array:
    r"""The KL confidence bound, elementwise: the largest (``upper``) or smallest q on mean's side of it with ``n
    d(mean, q) <= level``, n counted as at least 1. Gaussian: ``mean +- sigma sqrt(2 level / n)``. Bernoulli: the
    root of ``d(mean, q) = level / n`` on mean's side by Newton's steps (``divergences.kl_bernoulli_bound``); the
    numba rule (``agents/best_arm/_stopping.kl_bound``) bisects 60 times, and the two agree to float32 precision
    (tested)."""
    mean = jnp.asarray(mean, jnp.float32)
    n = jnp.maximum(jnp.asarray(n, jnp.float32), 1.0)
    level = jnp.asarray(level, jnp.float32)
    if gaussian:
        width = jnp.asarray(sigma, jnp.float32) * jnp.sqrt(2.0 * level / n)
        return mean + width if upper else mean - width
    return kl_bernoulli_bound(mean, level / n, upper)


def kl_lucb_gap(obs: Obs, leader: Any, delta: Any, gaussian: bool, sigma: Any) -> Array:
    """KL-LUCB's ``max_{j != leader} U_j - L_leader`` at the rate ``b(t) = ln(k1 K t^alpha / delta) + ln ln(k1 K
    t^alpha / delta)`` (alpha = 1.1, k1 = 405.5), t the pulls made (at least 1)."""
    counts = jnp.asarray(obs["counts"], jnp.float32)
    means, k = _means(counts, obs["sums"]), counts.shape[-1]
    t = jnp.maximum(pulls_made(obs), 1.0)
    inner = jnp.log(KL_LUCB_K1 * k / jnp.asarray(delta, jnp.float32)) + KL_LUCB_ALPHA * jnp.log(t)
    level = inner + jnp.log(inner)
    others = jnp.arange(k) != leader
    top = jnp.max(jnp.where(others, kl_bound(means, counts, level, True, gaussian, sigma), -jnp.inf))
    return top - _pick(kl_bound(means, counts, level, False, gaussian, sigma), leader)


def stopped(obs: Obs, leader: Any, delta: Any, stopping: str, kind: str, gaussian: bool, sigma: Any) -> Array:
    """Whether the stopping component ``stopping`` (``"glr"``, ``"lucb"``, ``"kllucb"``; static) stops on ``obs``
    with ``leader`` as the answer (the numpy ``stopped`` at m = 1): the GLR rule with the threshold ``kind``, or
    an LUCB gap below the observation's epsilon."""
    if stopping == "glr":
        return glr_stop(obs, leader, delta, kind, gaussian, sigma)
    if stopping not in ("lucb", "kllucb"):
        raise ValueError(f"stopping={stopping!r} is not a stopping component of the JAX agents; allowed: "
                         "'glr', 'lucb', 'kllucb'")
    gap = (lucb_gap if stopping == "lucb" else kl_lucb_gap)(obs, leader, delta, gaussian, sigma)
    return gap < jnp.asarray(obs["epsilon"], jnp.float32).reshape(-1)[0]


def check_glr_epsilon(stopping: str, epsilon: float | np.floating) -> None:
    """Refuse an env whose answers may be epsilon-good (epsilon > 0) for the GLR rule: this backend's GLR statistic
    is the exact answer's (the numpy agents' takes epsilon)."""
    if stopping == "glr" and epsilon != 0.0:
        raise ValueError(f"the JAX agents' GLR stopping rule identifies the exact answer: the env's epsilon must be "
                         f"0, got {epsilon!s}; use the numpy agent, or stopping='lucb' for an epsilon-good answer")


def check_agent_stopping(agent: str, delta: Any, stopping: Any, threshold: Any, distribution: Any,
                         sigma: Any) -> dict[str, Any]:
    """The checks and messages of the numpy ``FixedConfidenceAgent`` for the JAX agent named ``agent``: delta in
    (0, 1), a stopping rule and threshold ``check_stopping`` accepts, and not lil'UCB's own rule; the checked
    values by name."""
    from bandit_gym import _validation as check

    delta = check.real("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)
    stopping, threshold = check_stopping(stopping, threshold, distribution, sigma)
    if threshold not in JAX_THRESHOLDS:
        raise ValueError(f"threshold={threshold!r} is not on the JAX backend (its thresholds are one per pair); "
                         f"allowed: {', '.join(map(repr, JAX_THRESHOLDS))}, or the numpy agent")
    if stopping == "lil":
        raise ValueError(f"stopping='lil' is lil'UCB's own rule (it answers the most pulled arm), not {agent}'s; "
                         "allowed: 'glr', 'lucb', 'kllucb'")
    return {"delta": delta, "stopping": stopping, "threshold": threshold, "sigma": float(sigma)}
