"""The optimal allocation w*(mu) of best-arm identification as a pure function of one copy's statistics, float32,
with a fixed number of iterations (jit and vmap compatible): the computation of Garivier and Kaufmann (2016,
Theorem 5) that ``bandit_gym.lower_bounds.best_arm_allocation`` and the numpy Track-and-Stop's compiled oracle
(``bandit_gym.agents.best_arm._oracle``) make in float64, tested equal to them.

With arm 1 the best arm, ``m_a(x) = (mu_1 + x mu_a) / (1 + x)``, ``g_a(x) = d(mu_1, m_a) + x d(mu_a, m_a)``
(increasing and concave, ``g_a' = d(mu_a, m_a)`` by the envelope theorem) and
``r_a(x) = d(mu_1, m_a) / d(mu_a, m_a)`` (increasing), y* is the root on (0, d(mu_1, mu_(2))) of

    F(y) = sum_{a != 1} r_a(x_a(y)) - 1,       x_a(y) the root of g_a(x) = y,

and ``w*_a = x_a(y*) / sum_b x_b(y*)`` (x_1 = 1). Here:

- the start: the root of the same equation for a Gaussian stand-in, ``g_a(x) = D_a x / (1 + x)`` with
  ``D_a = d(mu_1, mu_a)`` (exact for Gaussian arms, where ``r_a = x^2``), solved by ``START_STEPS`` bisections
  (arithmetic only);
- then ``OUTER_STEPS`` safeguarded Newton steps on ``ln(F(y) + 1)`` in the variable ``ln y`` (F grows about
  exponentially in y where the means are far apart, and as y^2 near 0; ``F'(y) = sum_a r_a'(x_a) / g_a'(x_a)``);
  a step that leaves the bracket of y* found so far is replaced by the bracket's midpoint; each after
  ``INNER_STEPS`` Newton steps on every x_a from the previous one moved along its tangent (Newton on a concave
  increasing g from any start clamped at 0 climbs to the root from below: it cannot fail, only stop short);
- the Bernoulli divergence is computed from the differences of the means and their complements
  (``bandit_gym.jax.divergences.bernoulli``, given them), so that float32 keeps its relative precision when two means
  are close.

The readings of the numpy oracle where the paper is silent: several arms sharing the largest mean share w*
evenly (0 elsewhere); Bernoulli means are clamped to [1e-9, 1 - 1e-9] (as a mean and its complement, each at
least 1e-9, since 1 - 1e-9 is 1 in float32).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from bandit_gym.jax.agents._base import Array
from bandit_gym.jax.divergences import divergence

EDGE = 1e-9
"""Bernoulli means are clamped to [EDGE, 1 - EDGE] (the numpy oracle's clamp)."""
START_STEPS = 40
"""Bisections of the Gaussian stand-in's equation (the start of the Newton steps)."""
OUTER_STEPS = 8
"""Safeguarded Newton steps on y. With ``INNER_STEPS`` = 3, measured against the numpy oracle on 100,000 statistics
of K = 2..8 Bernoulli arms (counts 1 to 20,000, means of 0 and 1 and ties included) and random Gaussian instances:
at most 1e-6 from it (2e-5 at near ties of the two largest means, where the float32 rounding of the means moves
w* that much); 7 steps gave the same, 6 missed by 3e-6 on the statistics (0, 1) of K = 2."""
INNER_STEPS = 3
"""Newton steps on every x_a(y) per step on y (2 missed by up to 0.2 where the best mean is 1)."""
def _slope(diff: Array, q: Array, qc: Array, gaussian: bool, sigma: float) -> Array:
    """``d/dq d(p, q) = (q - p) / (q (1 - q))`` (Gaussian: ``(q - p) / sigma^2``), ``diff = p - q``."""
    return -diff / (sigma * sigma) if gaussian else -diff / (q * qc)


def clamped_means(counts: Array, sums: Array, gaussian: bool) -> tuple[Array, Array]:
    """The empirical means ``sums / max(counts, 1)`` and their complements ``(counts - sums) / max(counts, 1)``,
    float32; Bernoulli ones each clamped to at least ``EDGE`` (the numpy oracle's [1e-9, 1 - 1e-9])."""
    n = jnp.maximum(counts, 1.0)
    mean, comp = sums / n, (counts - sums) / n
    if gaussian:
        return mean, 1.0 - mean
    return jnp.clip(mean, EDGE, 1.0), jnp.clip(comp, EDGE, 1.0)


def optimal_weights(mean: Array, comp: Array, gaussian: bool = False, sigma: float = 1.0) -> Array:
    """w*(mu) of best-arm identification, ``(K,)`` float32, for the means ``mean`` (Bernoulli: in (0, 1], with
    their complements ``comp = 1 - mean``, both at least ``EDGE``: ``clamped_means``; Gaussian of standard
    deviation ``sigma``: ``comp`` unused). Arms sharing the largest mean share the weight evenly."""
    mean = jnp.asarray(mean, jnp.float32)
    comp = jnp.asarray(comp, jnp.float32)
    k = mean.shape[-1]
    top = jnp.max(mean)
    # the best arm (the largest mean; among clamped Bernoulli means of 1, the smallest complement)
    if gaussian:
        tied = mean == top
    else:
        top_comp = jnp.min(jnp.where(mean == top, comp, jnp.inf))
        tied = (mean == top) & (comp == top_comp)
    ties = jnp.sum(tied)
    best = jnp.argmax(tied)
    is_best = jnp.arange(k) == best
    mu1 = jnp.sum(jnp.where(is_best, mean, 0.0))
    mu1c = jnp.sum(jnp.where(is_best, comp, 0.0))
    others = ~is_best
    # the gaps mu_1 - mu_a, from the means or from their complements (whichever pair is the smaller numbers)
    gap = mu1 - mean if gaussian else jnp.where(mu1 + mean <= 1.0, mu1 - mean, comp - mu1c)
    gap = jnp.where(others, jnp.maximum(gap, 0.0), 1.0)
    safe_mean = jnp.where(others, mean, 0.5)
    safe_comp = jnp.where(others, comp, 0.5)
    cap = divergence(mu1, safe_mean, gaussian, sigma, gap, mu1c, safe_comp)  # D_a = sup g_a = d(mu_1, mu_a)
    cap = jnp.where(others, cap, jnp.inf)
    top_y = jnp.min(cap)  # d(mu_1, mu_(2))

    def pieces(x: Array) -> tuple[Array, Array, Array, Array]:
        """g_a(x_a), g_a'(x_a), r_a(x_a), r_a'(x_a) for every arm (meaningless at the best arm)."""
        inv = 1.0 / (1.0 + x)
        mid = (mu1 + x * safe_mean) * inv
        mid_c = (mu1c + x * safe_comp) * inv
        diff1, diffa = x * gap * inv, -gap * inv  # mu_1 - m, mu_a - m
        d1 = divergence(mu1, mid, gaussian, sigma, diff1, mu1c, mid_c)
        da = divergence(safe_mean, mid, gaussian, sigma, diffa, safe_comp, mid_c)
        s1, sa = _slope(diff1, mid, mid_c, gaussian, sigma), _slope(diffa, mid, mid_c, gaussian, sigma)
        da_safe = jnp.where(da > 0, da, 1.0)
        ratio = jnp.where(da > 0, d1 / da_safe, jnp.inf)
        ratio_slope = (s1 * da - d1 * sa) / (da_safe * da_safe) * (-gap * inv * inv)
        return d1 + x * da, da, ratio, ratio_slope

    def solve_x(x: Array, y: Array) -> Array:  # INNER_STEPS Newton steps on every g_a(x_a) = y
        def newton(_: int, x: Array) -> Array:
            g, slope = pieces(x)[:2]
            return jnp.maximum(x + (y - g) / jnp.where(slope > 0, slope, 1.0), 0.0)

        return jax.lax.fori_loop(0, INNER_STEPS, newton, x)

    # the start: the Gaussian stand-in, x_a = y / (D_a - y) and sum_a x_a^2 = 1, by bisection on y in (0, top_y)
    def stand_in(y: Array) -> Array:
        return jnp.where(others, y / jnp.maximum(cap - y, 1e-30 * cap), 1.0)

    def bisect(_: int, bracket: tuple[Array, Array]) -> tuple[Array, Array]:
        low, high = bracket
        y = 0.5 * (low + high)
        x = stand_in(y)
        over = jnp.sum(jnp.where(others, x * x, 0.0)) > 1.0
        return jnp.where(over, low, y), jnp.where(over, y, high)

    low, high = jax.lax.fori_loop(0, START_STEPS, bisect, (jnp.float32(0.0), top_y))
    y = 0.5 * (low + high)

    def outer(_: int, carry: tuple[Array, Array, Array, Array]) -> tuple[Array, Array, Array, Array]:
        x, y, low, high = carry
        x = solve_x(x, y)
        slope, ratio, ratio_slope = pieces(x)[1:]
        total = jnp.sum(jnp.where(others, ratio, 0.0))  # F(y) + 1
        f = jnp.log(total)  # Newton on ln(F + 1): F grows about exponentially in y where the means are far apart
        fprime = jnp.sum(jnp.where(others & (slope > 0), ratio_slope / jnp.where(slope > 0, slope, 1.0),
                                   0.0)) / total
        low, high = jnp.where(f > 0, low, y), jnp.where(f > 0, y, high)
        new = y * jnp.exp(-f / jnp.where(fprime > 0, y * fprime, 1.0))  # Newton in ln y: G ~ 2 ln y near 0
        new = jnp.where(jnp.isfinite(new) & (new >= low) & (new <= high), new, 0.5 * (low + high))
        x = jnp.maximum(x + (new - y) / jnp.where(slope > 0, slope, 1.0), 0.0)  # along the tangents
        return x, new, low, high

    x, y, _, _ = jax.lax.fori_loop(0, OUTER_STEPS, outer, (stand_in(y), y, jnp.float32(0.0), top_y))
    x = solve_x(x, y)
    x = jnp.where(others, x, 1.0)
    weights = x / jnp.sum(x)
    return jnp.where(ties > 1, jnp.where(tied, 1.0 / ties, 0.0), weights)
