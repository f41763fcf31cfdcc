"""The optimal allocation w*(mu) of best-arm and top-m identification, compiled for the sampling rules that track it
at every step (Track-and-Stop).

Best arm (m = 1), ``optimal_weights``: the same computation as ``bandit_gym.lower_bounds.best_arm_allocation`` (GK
2016 Theorem 5), with fixed-iteration root finding that numba compiles, tested equal to it.

- x_a(y), the root of the concave, increasing ``g_a(x) = d(mu_1, m) + x d(mu_a, m)`` (m = (mu_1 + x mu_a) / (1 +
  x)) at level y: Newton's method from x = 0, ``g_a'(x) = d(mu_a, m)`` (the envelope theorem); on a concave
  increasing function it climbs to the root from below without overshooting.
- y*, the root of the increasing ``F(y) = sum_a d(mu_1, m_a) / d(mu_a, m_a) - 1`` on (0, d(mu_1, mu_(2))):
  bisection until F is finite at both ends of the bracket, then the Illinois variant of regula falsi, to machine
  precision; then ``w*_a = x_a(y*) / sum_b x_b(y*)``.

Top m (m >= 1; ``top_m_weights``, which calls ``optimal_weights`` for m = 1; ``best_arm_weights`` is its m = 1
form, compiled without the barrier method, which a best-arm rule never reaches): the lower bound of Kaufmann, Cappé
and Garivier (2016; their Lemma 1's change of measure, Alt(mu) the instances whose m best arms differ), as
``bandit_gym.lower_bounds.top_m_allocation`` states it,

    w*(mu) = argmax_{w in Sigma_K} min_{i in S, j not in S} C_ij(w),
    C_ij(w) = w_i d(mu_i, m_ij) + w_j d(mu_j, m_ij),  m_ij = (w_i mu_i + w_j mu_j) / (w_i + w_j),

S the m arms of largest mean. Each C_ij is concave and 1-homogeneous, with gradient ``(d(mu_i, m_ij), d(mu_j,
m_ij))`` on (i, j) and Hessian ``-(mu_i - mu_j)^2 / (v(m_ij) (w_i + w_j)^3) u u^T``, u = (w_j, -w_i), v(m) = m (1 -
m) (Bernoulli) or sigma^2 (Gaussian). By homogeneity the max-min is ``1 / min {sum_a w_a : C_ij(w) >= 1 for every
pair}`` at the same w normalised: a linear objective over a convex set, solved by the barrier method (Boyd and
Vandenberghe 2004, §11.3) on ``t sum_a w_a - sum_ij ln(C_ij(w) - 1) - sum_a ln w_a``:

- from the equal allocation (the costs scaled so that it has value 2, inside the set) and t = P + K (P = m (K -
  m) pairs), damped Newton steps (the Hessian in closed form, Cholesky's factorisation after a scaling to a unit
  diagonal, Armijo backtracking of at most 12 halvings) until Newton's decrement^2 / 2 is at most 1; then t
  times 10, until the duality gap (P + K) / t is below 1e-9 of sum_a w_a; then steps until the decrement^2 / 2 is
  at most 1e-4. A fixed budget: 16 rounds of at most 40 steps; a step that gains nothing ends its round.
- accuracy: on 600 seeded instances (K in 3..20, every m, Bernoulli and Gaussian, means uniform, clustered in
  [0.4, 0.6], rounded to 0.01 or near the edges of [0, 1]) T* and w* within 1e-7 (relative, and absolute) of
  ``top_m_allocation``, and with m = 1 within 3e-10 of ``optimal_weights``, in 31 Newton steps on average (58 at
  most). A call costs about 35 microseconds at K = 5 (m = 2), 0.1 to 0.15 ms at K = 10 and 0.3 to 0.6 ms at K =
  20 (m = 2 to K / 2) on Bernoulli arms, half of that on Gaussian ones.
- the Bernoulli divergence of two close means, which the gradients of a pair with very unequal weights need, is
  computed without cancellation (``close_divergence``).
- label invariance: the means are sorted (stably) first and arms of equal means get their group's average weight,
  so permuting the means permutes the weights exactly.

Readings where the papers are silent (the statistic is the empirical means, which may tie or sit on the edge of
the Bernoulli support):

- several arms share the largest mean (m = 1), or the m-th and (m + 1)-th largest means are equal (m > 1): T* is
  infinite and w* spreads evenly over the arms of that mean (for m = 1 the authors' code does the same);
- Bernoulli means are clamped to [1e-9, 1 - 1e-9] for this computation (a mean of 0 or 1 would make a
  divergence infinite).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from bandit_gym.agents.best_arm._stopping import BERNOULLI, divergence
from bandit_gym.agents.ranking import stable_order
from bandit_gym.jit import called, driver

EDGE = 1e-9
NEWTON_STEPS = 100
STEPS = 200
#: the terms of ``log1p_minus``'s series
SERIES_TERMS = 8
#: the barrier method of ``top_m_weights``: rounds of centring (t times ``GROWTH`` after each), damped Newton steps per
#: centring at most, halvings of a step at most, the decrement^2 / 2 of a point centred while t grows and at the
#: end, the duality gap aimed at (relative to sum_a w_a)
ROUNDS, CENTRING_STEPS, BACKTRACKS, LOOSE, CENTRED, TOLERANCE, GROWTH = 16, 40, 12, 1.0, 1e-4, 1e-9, 10.0


@called
def x_of_y(mu1: float, mua: float, y: float, family: int, sigma: float) -> float:
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
def balance(mean: np.ndarray, best: int, y: float, family: int, sigma: float, xs: np.ndarray) -> float:
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
def optimal_weights(values: np.ndarray, family: int, sigma: float, weights: np.ndarray,
                    scratch: np.ndarray) -> None:
    """``weights`` = w*(values) (the ties and edges as the module says); ``scratch`` is a row of K floats
    (left holding the clamped means)."""
    k = values.shape[0]
    mean = scratch
    for a in range(k):
        mean[a] = min(max(values[a], EDGE), 1.0 - EDGE) if family == BERNOULLI else values[a]
    best, ties = np.int64(0), 0  # not a literal 0: bandit_gym.jit, "Literals"
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


# ------------------------------------------------------------------------------------------ top-m
@called
def log1p_minus(x: float) -> float:
    """``ln(1 + x) - x`` without cancellation for |x| <= 0.1: ``-x u + 2 sum_n u^(2n+3) / (2n + 3)``, u = x / (2 +
    x) (``ln(1 + x) = 2 artanh(u)``), 8 terms (u^2 < 0.003: to machine precision)."""
    u = x / (2.0 + x)
    u2 = u * u
    series = 0.0
    for n in range(SERIES_TERMS - 1, -1, -1):
        series = series * u2 + 1.0 / (2 * n + 3)
    return -x * u + 2.0 * u * u2 * series


@called
def close_divergence(p: float, q: float, family: int, sigma: float) -> float:
    """d(p, q) (``_stopping.divergence``), accurate to machine precision relative to its value when p and q are
    close (Bernoulli: the first-order terms of ``p ln(1 + x) + (1 - p) ln(1 + y)``, x = (p - q) / q and y = (q - p)
    / (1 - q), cancel exactly into ``(p - q)^2 / (q (1 - q))``; the rest by ``log1p_minus``)."""
    if family == BERNOULLI:
        x, y = (p - q) / q, (q - p) / (1.0 - q)
        if abs(x) <= 0.1 and abs(y) <= 0.1:
            return (p - q) * (p - q) / (q * (1.0 - q)) + p * log1p_minus(x) + (1.0 - p) * log1p_minus(y)
    return divergence(p, q, family, sigma)


@called
def pair_terms(mui: float, muj: float, wi: float, wj: float, family: int, sigma: float) -> tuple[float, float,
                                                                                                      float, float]:
    """C_ij(w) and its derivatives in (w_i, w_j): ``(C, d(mu_i, m), d(mu_j, m), q)``, m the w-weighted mean, the
    Hessian ``-q [w_j, -w_i]^T [w_j, -w_i]``, ``q = (mu_i - mu_j)^2 / (v(m) (w_i + w_j)^3)``, v(m) = m (1 - m)
    (Bernoulli) or sigma^2 (Gaussian)."""
    total = wi + wj
    mid = (wi * mui + wj * muj) / total
    gi, gj = close_divergence(mui, mid, family, sigma), close_divergence(muj, mid, family, sigma)
    variance = sigma * sigma if family != BERNOULLI else mid * (1.0 - mid)
    gap = mui - muj
    return wi * gi + wj * gj, gi, gj, gap * gap / (variance * total * total * total)


@called
def barrier(mu: np.ndarray, m: int, w: np.ndarray, t: float, family: int, sigma: float, scale: float) -> float:
    """The barrier ``t sum_a w_a - sum_{i in S, j not in S} ln(scale C_ij(w) - 1) - sum_a ln w_a``, +inf outside
    its domain."""
    k = mu.shape[0]
    value = 0.0
    for a in range(k):
        if not w[a] > 0.0:
            return math.inf
        value += t * w[a] - math.log(w[a])
    for i in range(m):
        for j in range(m, k):
            slack = pair_terms(mu[i], mu[j], w[i], w[j], family, sigma)[0] * scale - 1.0
            if not slack > 0.0:
                return math.inf
            value -= math.log(slack)
    return value


@called
def newton_system(mu: np.ndarray, m: int, w: np.ndarray, t: float, family: int, sigma: float, scale: float,
                  hessian: np.ndarray, gradient: np.ndarray) -> None:
    """The barrier's Hessian and gradient at w: ``sum_p (q_p / r_p) u_p u_p^T + (g_p / r_p)(g_p / r_p)^T +
    diag(1 / w^2)`` and ``t - sum_p g_p / r_p - 1 / w``, with r_p = scale C_p(w) - 1, g_p its gradient, u_p =
    (w_j, -w_i) on (i, j) (``pair_terms``)."""
    k = mu.shape[0]
    hessian[:, :] = 0.0
    for a in range(k):
        hessian[a, a] = 1.0 / (w[a] * w[a])
        gradient[a] = t - 1.0 / w[a]
    for i in range(m):
        for j in range(m, k):
            cost, gi, gj, q = pair_terms(mu[i], mu[j], w[i], w[j], family, sigma)
            r = cost * scale - 1.0
            gi, gj, c = gi * scale / r, gj * scale / r, q * scale / r  # per unit of the slack
            gradient[i] -= gi
            gradient[j] -= gj
            hessian[i, i] += c * w[j] * w[j] + gi * gi
            hessian[j, j] += c * w[i] * w[i] + gj * gj
            hessian[i, j] += gi * gj - c * w[i] * w[j]
            hessian[j, i] = hessian[i, j]


@called
def solve(matrix: np.ndarray, rhs: np.ndarray, scaling: np.ndarray) -> bool:
    """``rhs`` <- ``matrix^-1 rhs`` for a symmetric positive definite ``matrix`` (its lower triangle overwritten):
    Cholesky's factorisation of ``D matrix D``, D = diag(matrix)^-1/2 (in ``scaling``); False if it breaks down."""
    n = rhs.shape[0]
    for a in range(n):
        if not matrix[a, a] > 0.0:
            return False
        scaling[a] = 1.0 / math.sqrt(matrix[a, a])
    for j in range(n):
        for i in range(j, n):
            total = matrix[i, j] * scaling[i] * scaling[j]
            for c in range(j):
                total -= matrix[i, c] * matrix[j, c]
            if i == j:
                if not total > 0.0:
                    return False
                matrix[j, j] = math.sqrt(total)
            else:
                matrix[i, j] = total / matrix[j, j]
    for i in range(n):  # L y = D rhs
        total = rhs[i] * scaling[i]
        for c in range(i):
            total -= matrix[i, c] * rhs[c]
        rhs[i] = total / matrix[i, i]
    for i in range(n - 1, -1, -1):  # L^T z = y, then x = D z
        total = rhs[i]
        for c in range(i + 1, n):
            total -= matrix[c, i] * rhs[c]
        rhs[i] = total / matrix[i, i]
    for i in range(n):
        rhs[i] *= scaling[i]
    return True


@called
def damped_newton(mu: np.ndarray, m: int, w: np.ndarray, t: float, family: int, sigma: float, scale: float,
                  centred: float, work: np.ndarray, matrix: np.ndarray) -> bool:
    """One damped Newton step on the barrier at t from w (updated in place; Armijo backtracking), or False when w
    is centred (Newton decrement^2 / 2 at most ``centred``) or no step gains. ``work``: 4 rows of K floats."""
    k = mu.shape[0]
    gradient, step, trial = work[0], work[1], work[2]
    newton_system(mu, m, w, t, family, sigma, scale, matrix, gradient)
    for a in range(k):
        step[a] = -gradient[a]
    if not solve(matrix, step, work[3]):
        return False
    decrement = 0.0
    for a in range(k):
        decrement -= gradient[a] * step[a]  # lambda^2 = -grad . dx = dx^T H dx
    if not decrement > 2.0 * centred:
        return False
    start = barrier(mu, m, w, t, family, sigma, scale)
    alpha = 1.0
    for _ in range(BACKTRACKS):
        for a in range(k):
            trial[a] = w[a] + alpha * step[a]
        if barrier(mu, m, trial, t, family, sigma, scale) <= start - 0.25 * alpha * decrement:
            for a in range(k):  # a loop, not w[:] = trial: no shape check to compile (_game.py)
                w[a] = trial[a]
            return True
        alpha *= 0.5
    return False


@called
def centre(mu: np.ndarray, m: int, w: np.ndarray, t: float, family: int, sigma: float, scale: float,
           centred: float, work: np.ndarray, matrix: np.ndarray) -> int:
    """Damped Newton steps (``CENTRING_STEPS`` at most) until w is centred (``damped_newton``): the steps taken."""
    for n in range(CENTRING_STEPS):
        if not damped_newton(mu, m, w, t, family, sigma, scale, centred, work, matrix):
            return n
    return CENTRING_STEPS


@called
def interior_point(mu: np.ndarray, m: int, family: int, sigma: float, w: np.ndarray) -> int:
    """``w`` = argmax_{w in Sigma_K} min_{i < m <= j} C_ij(w) for ``mu`` sorted in decreasing order with mu_(m) >
    mu_(m+1): the barrier method on ``min sum_a w_a`` subject to ``C_ij(w) >= 1`` (C 1-homogeneous: the same
    w, normalised), from the equal allocation; returns the Newton steps taken."""
    k = mu.shape[0]
    work, matrix = np.empty((4, k)), np.empty((k, k))
    least = math.inf
    for i in range(m):
        for j in range(m, k):
            least = min(least, pair_terms(mu[i], mu[j], 1.0 / k, 1.0 / k, family, sigma)[0])
    scale = 1.0 / least  # the costs in units of the equal allocation's value; w = 2 / K is inside
    w[:] = 2.0 / k
    constraints = np.float64(m * (k - m) + k)
    t, steps = constraints, 0
    for _ in range(ROUNDS):  # centred loosely while t grows, then tightly at the last t
        steps += centre(mu, m, w, t, family, sigma, scale, LOOSE, work, matrix)
        total = 0.0
        for a in range(k):
            total += w[a]
        if constraints / t <= TOLERANCE * total:
            break
        t *= GROWTH
    steps += centre(mu, m, w, t, family, sigma, scale, CENTRED, work, matrix)
    total = 0.0
    for a in range(k):
        total += w[a]
    w /= total
    return steps


@called
def best_arm_solver(mu: np.ndarray, m: int, family: int, sigma: float, w: np.ndarray) -> None:
    """``w`` = w*(mu) of best-arm identification (m = 1) at means sorted in decreasing order, the best one unique
    (``optimal_weights``)."""
    optimal_weights(mu, family, sigma, w, np.empty(mu.shape[0]))


@called
def any_m_solver(mu: np.ndarray, m: int, family: int, sigma: float, w: np.ndarray) -> None:
    """``w`` = w*(mu) of top-m identification at means sorted in decreasing order, mu_m > mu_(m+1):
    ``best_arm_solver`` for m = 1, ``interior_point`` otherwise."""
    if m == 1:
        best_arm_solver(mu, m, family, sigma, w)
    else:
        interior_point(mu, m, family, sigma, w)


@driver
def weights_by_rank(solver: Any, values: np.ndarray, m: int, family: int, sigma: float, weights: np.ndarray,
                    scratch: np.ndarray) -> None:
    """``weights`` = w*(values) of top-m identification, computed by ``solver`` (``best_arm_solver`` or
    ``any_m_solver``) on the means sorted in decreasing order (the ties and edges as the module says), arms of
    equal means given their group's average; ``scratch`` is a row of K floats (left holding the clamped means)."""
    k = values.shape[0]
    for a in range(k):
        scratch[a] = min(max(values[a], EDGE), 1.0 - EDGE) if family == BERNOULLI else values[a]
    if m < 1 or m >= k:  # no pair to tell apart
        weights[:] = 1.0 / k
        return
    order = stable_order(-scratch)
    mu, w = scratch[order], np.empty(k)
    if mu[m - 1] == mu[m]:  # T* is infinite: spread over the arms tied at the boundary
        ties = 0
        for a in range(k):
            ties += mu[a] == mu[m]
        for a in range(k):
            w[a] = 1.0 / ties if mu[a] == mu[m] else 0.0
    else:
        solver(mu, m, family, sigma, w)
    first = 0
    for a in range(1, k + 1):  # equal means, equal weights: the group's average
        if a == k or mu[a] != mu[first]:
            share = 0.0
            for b in range(first, a):
                share += w[b]
            for b in range(first, a):
                weights[order[b]] = share / (a - first)
            first = a


@called
def top_m_weights(values: np.ndarray, m: int, family: int, sigma: float, weights: np.ndarray,
                  scratch: np.ndarray) -> None:
    """``weights`` = w*(values) of top-m identification, any m (``weights_by_rank`` with ``any_m_solver``)."""
    weights_by_rank(any_m_solver, values, m, family, sigma, weights, scratch)


@called
def best_arm_weights(values: np.ndarray, family: int, sigma: float, weights: np.ndarray,
                     scratch: np.ndarray) -> None:
    """``top_m_weights`` at m = 1, compiled without the top-m barrier method (``best_arm_solver``)."""
    weights_by_rank(best_arm_solver, values, 1, family, sigma, weights, scratch)
