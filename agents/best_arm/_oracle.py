"""The optimal allocation w*(mu) of best-arm identification, compiled for the sampling rules that track it at every
step (Track-and-Stop). The same computation as ``bandit_gym.lower_bounds.best_arm_allocation`` (GK 2016 Theorem
5), with fixed-iteration root finding that numba compiles, tested equal to it.

- x_a(y), the root of the concave, increasing ``g_a(x) = d(mu_1, m) + x d(mu_a, m)`` (m = (mu_1 + x mu_a) / (1 +
  x)) at level y: Newton's method from x = 0, ``g_a'(x) = d(mu_a, m)`` (the envelope theorem); on a concave
  increasing function it climbs to the root from below without overshooting.
- y*, the root of the increasing ``F(y) = sum_a d(mu_1, m_a) / d(mu_a, m_a) - 1`` on (0, d(mu_1, mu_(2))):
  bisection until F is finite at both ends of the bracket, then the Illinois variant of regula falsi, to machine
  precision; then ``w*_a = x_a(y*) / sum_b x_b(y*)``.

Readings where the paper is silent (the statistic is the empirical means, which may tie or sit on the edge of
the Bernoulli support):

- several arms share the largest mean: w* spreads evenly over them (T* is infinite; the authors' code does the
  same);
- Bernoulli means are clamped to [1e-9, 1 - 1e-9] for this computation (a mean of 0 or 1 would make a
  divergence infinite).
"""

from __future__ import annotations

import math

import numpy as np

from bandit_gym.agents.best_arm._stopping import BERNOULLI, divergence
from bandit_gym.jit import called

EDGE = 1e-9
NEWTON_STEPS = 100
STEPS = 200


@called
def x_of_y(mu1: float, mua: float, y: float, family: float, sigma: float) -> float:
    """x_a(y) by Newton's method from 0 (monotone from below)."""
    x = 0.0
    for _ in range(NEWTON_STEPS):
        mid = (mu1 + x * mua) / (1.0 + x)
        slope = divergence(mua, mid, family, sigma)
        gap = y - (divergence(mu1, mid, family, sigma) + x * slope)
        if gap <= 0.0 or slope <= 0.0:
            break
        step = gap / slope
        x += step
        if step <= 1e-15 * (1.0 + x):
            break
    return x


@called
def balance(mean: np.ndarray, best: int, y: float, family: float, sigma: float, xs: np.ndarray) -> float:
    """F(y) = sum_a d(mu_1, m_a) / d(mu_a, m_a) - 1, filling ``xs`` with x_a(y) (x_best = 1)."""
    total = -1.0
    for a in range(mean.shape[0]):
        if a == best:
            xs[a] = 1.0
            continue
        x = x_of_y(mean[best], mean[a], y, family, sigma)
        xs[a] = x
        mid = (mean[best] + x * mean[a]) / (1.0 + x)
        below = divergence(mean[a], mid, family, sigma)
        total += math.inf if below <= 0.0 else divergence(mean[best], mid, family, sigma) / below
    return total


@called
def optimal_weights(values: np.ndarray, family: float, sigma: float, weights: np.ndarray,
                    scratch: np.ndarray) -> None:
    """``weights`` = w*(values) (the ties and edges as the module says); ``scratch`` is a row of K floats
    (left holding the clamped means)."""
    k = values.shape[0]
    mean = scratch
    for a in range(k):
        mean[a] = min(max(values[a], EDGE), 1.0 - EDGE) if family == BERNOULLI else values[a]
    best, ties = 0, 0
    for a in range(k):
        if mean[a] > mean[best]:
            best = a
    second = -math.inf
    for a in range(k):
        if mean[a] == mean[best]:
            ties += 1
        elif mean[a] > second:
            second = mean[a]
    if ties > 1:
        for a in range(k):
            weights[a] = 1.0 / ties if mean[a] == mean[best] else 0.0
        return
    low, high = 0.0, divergence(mean[best], second, family, sigma)
    f_low, f_high = -1.0, math.inf
    side = 0
    for _ in range(STEPS):
        y = 0.5 * (low + high)  # bisect while F is infinite at the top, or if the secant leaves the bracket
        if not math.isinf(f_high):  # Illinois: the secant through the bracket's ends
            secant = (low * f_high - high * f_low) / (f_high - f_low)
            if low < secant < high:
                y = secant
        f = balance(mean, best, y, family, sigma, weights)  # the weights hold x(y) of the last y tried
        if f > 0.0:
            high, f_high = y, f
            if side == -1:
                f_low *= 0.5
            side = -1
        else:
            low, f_low = y, f
            if side == 1:
                f_high *= 0.5
            side = 1
        if abs(f) <= 1e-13 or high - low <= 1e-15 * high:
            break
    total = 0.0
    for a in range(k):
        total += weights[a]
    for a in range(k):
        weights[a] /= total
