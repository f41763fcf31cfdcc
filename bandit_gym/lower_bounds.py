r"""Characteristic times and optimal allocations of fixed-confidence pure exploration: how many pulls any
\(\delta\)-correct algorithm needs, and in which proportions the arms must be pulled to need no more.

For a problem whose answer on the instance \(\mu\) must be found with probability at least \(1 - \delta\), Garivier and
Kaufmann (2016, Theorem 1; the change-of-measure argument of Kaufmann, Cappé and Garivier 2016, Lemma 1) show that every
\(\delta\)-correct algorithm has

$$
\mathbb{E}_\mu[\tau_\delta] \ge T^*(\mu)\, \mathrm{kl}(\delta, 1 - \delta), \qquad
T^*(\mu)^{-1} = \sup_{w \in \Sigma_K} \inf_{\lambda \in \mathrm{Alt}(\mu)} \sum_a w_a\, d(\mu_a, \lambda_a),
$$

where \(\mathrm{Alt}(\mu)\) is the set of instances whose answer differs from \(\mu\)'s, \(d\) the Kullback-Leibler
divergence of the arms' family, \(\mathrm{kl}\) the binary one and \(\Sigma_K\) the simplex. The maximising \(w\),
\(w^*(\mu)\), is the *optimal allocation*: an algorithm that pulls the arms in these proportions and stops as soon as
its generalised likelihood ratio passes \(\log(1 / \delta)\) needs about \(T^*(\mu) \log(1 / \delta)\) pulls
(Track-and-Stop's asymptotic optimality, GK 2016 Theorem 14). Every function here returns an ``Allocation`` (``time``
\(= T^*\), ``weights`` \(= w^*\)), for Bernoulli arms (means in \((0, 1)\)) or Gaussian arms of one known standard
deviation \(\sigma\):

- ``best_arm_allocation``: best-arm identification, computed exactly as GK 2016 Theorem 5 says (two nested
  one-dimensional root findings);
- ``epsilon_best_arm_allocation``: additive \(\epsilon\)-best-arm identification (any arm within \(\epsilon\) of the
  best is a correct answer), the max over the correct answers of each answer's max-min (Degenne and Koolen 2019), each
  computed as GK 2016 Theorem 5 does with the pairs' meeting points shifted by \(\epsilon\);
- ``top_m_allocation``: top-\(m\) identification, the exact max-min of the general bound (its inner infimum in closed
  form, the outer maximum a smooth concave program solved numerically);
- ``thresholding_allocation``: the thresholding bandit at fixed confidence (every arm classified above or below
  \(\theta\)), in closed form.

``lower_bound(allocation, delta)`` is \(T^*(\mu)\, \mathrm{kl}(\delta, 1 - \delta)\). These bounds are for the
fixed-confidence setting; the package's fixed-budget complexities are ``bandit_gym.instances.complexity`` (tao2019's
\(H\)), ``best_arm_complexity`` (\(H_1\)) and ``gap_complexity`` (gabillon2012's \(H_\epsilon\)).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy
from numpy.typing import ArrayLike

from bandit_gym import _validation as check
from bandit_gym.divergences import DISTRIBUTIONS, Divergence, divergence, kl_bernoulli, transportation_cost

#: the most arm pairs (m (K - m)) that ``top_m_allocation`` solves for: its program has one constraint per pair
MAX_PAIRS = 20_000
#: the largest relative gap between the max-min value found and its certified upper bound (``_upper_bound``): the
#: polish aims at ``GAP / 100``, but the linear programs' own precision (HiGHS at 1e-10 on gradients scaled to the
#: value) stalls it between 1e-7 and 1e-6 on about 2% of random instances (their smallest weights near 1e-8)
GAP = 1e-5
#: the smallest trust region of ``_polish``: below it the box constraints are within the LP tolerances
MIN_RADIUS = 1e-9
_HIGHS = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}  # HiGHS's are 1e-7
_XTOL = 1e-15  # brentq's absolute tolerance; its relative one is 4 machine epsilons


@dataclass(frozen=True)
class Allocation:
    r"""The characteristic time ``time`` \(= T^*(\mu)\) (pulls per unit of \(\mathrm{kl}(\delta, 1 - \delta)\)) and
    the optimal allocation ``weights`` \(= w^*(\mu)\) (one proportion per arm, summing to 1, in the arm order)."""

    time: float
    r"""\(T^*(\mu)\): the pulls per unit of \(\mathrm{kl}(\delta, 1 - \delta)\) that no \(\delta\)-correct algorithm
    can do without."""
    weights: np.ndarray
    r"""\(w^*(\mu)\): the proportions of the pulls that attain it, one per arm in the instance's order, summing to
    1."""

    def lower_bound(self, delta: float) -> float:
        r"""\(T^*(\mu)\, \mathrm{kl}(\delta, 1 - \delta)\): no \(\delta\)-correct algorithm has fewer pulls on
        average."""
        return lower_bound(self, delta)


def confidence_kl(delta: float) -> float:
    r"""\(\mathrm{kl}(\delta, 1 - \delta) = (1 - 2\delta) \ln\big((1 - \delta) / \delta\big)\), the binary
    divergence of the lower bound (about \(\ln(1 / \delta)\) for small \(\delta\))."""
    delta = check.real("delta", delta, low=0.0, high=0.5, low_open=True)
    return float(kl_bernoulli(delta, 1.0 - delta))


def lower_bound(allocation: Allocation, delta: float) -> float:
    r"""\(T^*(\mu)\, \mathrm{kl}(\delta, 1 - \delta)\), GK 2016 Theorem 1's lower bound on
    \(\mathbb{E}[\tau_\delta]\) for \(\delta \in (0, 1/2]\)."""
    return allocation.time * confidence_kl(delta)


def _means(means: ArrayLike, distribution: str) -> np.ndarray:
    distribution = check.choice("distribution", distribution, DISTRIBUTIONS)
    mu = check.real_array("means", means, ndim=1)
    check.arm_count("means", mu.shape[0])
    if distribution == "bernoulli" and np.any((mu <= 0.0) | (mu >= 1.0)):
        raise ValueError(f"means of Bernoulli arms must lie in the open interval (0, 1), got {mu}")
    return mu


# ------------------------------------------------------------------------------------------ best arm
def _x_of_y(d: Divergence, mu1: float, mua: float, y: float) -> float:
    """x_a(y) of GK 2016 Theorem 5: the x >= 0 with ``g_a(x) = d(mu1, m) + x d(mua, m) = y``, m = (mu1 + x mua) /
    (1 + x); g_a increases from 0 to d(mu1, mua), so the root exists for y in [0, d(mu1, mua))."""
    if y <= 0.0:
        return 0.0
    def g(x: float) -> float:
        return float(transportation_cost(d, 1.0, x, mu1, mua)) - y

    high = 1.0
    while g(high) < 0.0:
        high *= 2.0
    return float(scipy.optimize.brentq(g, 0.0, high, xtol=_XTOL))


def best_arm_allocation(means: ArrayLike, distribution: str = "bernoulli", sigma: float = 1.0) -> Allocation:
    r"""\(T^*(\mu)\) and \(w^*(\mu)\) of best-arm identification, computed as Garivier and Kaufmann (2016) Theorem 5
    does.

    With arm 1 the best (unique) arm, for each other arm \(a\) and \(y \in [0, d(\mu_1, \mu_a))\) let \(x_a(y)\) solve

    $$
    g_a(x) = d\big(\mu_1, m_a(x)\big) + x\, d\big(\mu_a, m_a(x)\big) = y, \qquad m_a(x) = \frac{\mu_1 + x \mu_a}{1 + x};
    $$

    \(y^*\) is the unique root on \((0, d(\mu_1, \mu_{(2)}))\) of the increasing

    $$
    F_\mu(y) = \sum_{a \ne 1} \frac{d\big(\mu_1, m_a(x_a(y))\big)}{d\big(\mu_a, m_a(x_a(y))\big)} - 1,
    $$

    and \(w^*_a = x_a(y^*) / \sum_b x_b(y^*)\) (\(x_1 = 1\)), \(T^*(\mu) = \sum_b x_b(y^*) / y^*\) (so that
    \(T^*(\mu)^{-1} = w^*_1 y^*\), Lemma 3's max-min value). Both roots are found by Brent's method to machine
    precision. Bernoulli means must lie in \((0, 1)\); the best arm must be unique (\(T^*\) is infinite otherwise)."""
    mu = _means(means, distribution)
    d = divergence(distribution, sigma)
    best = int(np.argmax(mu))
    if np.sum(mu == mu[best]) > 1:
        raise ValueError(f"means must have a unique best arm (T* is infinite otherwise), got {mu}")
    others = np.flatnonzero(np.arange(mu.shape[0]) != best)

    def xs(y: float) -> np.ndarray:
        return np.array([_x_of_y(d, mu[best], mu[a], y) for a in others])

    def f(y: float) -> float:
        x = xs(y)
        mid = (mu[best] + x * mu[others]) / (1.0 + x)
        return float(np.sum(d(mu[best], mid) / d(mu[others], mid))) - 1.0

    top = float(d(mu[best], np.max(mu[others])))
    high = top / 2.0
    while f(high) < 0.0:  # F grows to +inf as y reaches d(mu_1, mu_(2))
        high = (high + top) / 2.0
    y = float(scipy.optimize.brentq(f, 0.0, high, xtol=_XTOL * top))
    x = np.ones(mu.shape[0])
    x[others] = xs(y)
    return Allocation(time=float(x.sum() / y), weights=x / x.sum())


# ------------------------------------------------------------------------------------------ epsilon best arm
@dataclass(frozen=True)
class EpsilonAllocation(Allocation):
    r"""An ``Allocation`` of \(\epsilon\)-best-arm identification, with ``answer``: the \(\epsilon\)-good arm whose
    max-min attains \(T^*_\epsilon(\mu)\) (the first in the arms' order on a tie, to a relative \(10^{-10}\)), the
    answer that \(w^*\) verifies."""

    answer: int


def _variance(distribution: str, sigma: float) -> Callable[[float], float]:
    """V(q), the variance of the family's law of mean q (``d(p, q)``'s derivative in q is ``(q - p) / V(q)``)."""
    if distribution == "bernoulli":
        return lambda q: q * (1.0 - q)
    return lambda q: sigma * sigma


def _shifted_range(mu_i: float, mu_j: float, epsilon: float, distribution: str) -> tuple[float, float]:
    """Where the minimising lambda_i of the shifted pair lies: from mu_j - epsilon (arm j unmoved) to mu_i (arm i
    unmoved), and for Bernoulli arms within ``0 <= lambda_i`` and ``lambda_i + epsilon <= 1``."""
    if distribution == "bernoulli":
        return max(mu_j - epsilon, 0.0), min(mu_i, 1.0 - epsilon)
    return mu_j - epsilon, mu_i


def epsilon_best_arm_allocation(means: ArrayLike, epsilon: float, distribution: str = "bernoulli",
                                sigma: float = 1.0, *, beta: float | None = None) -> EpsilonAllocation:
    r"""\(T^*_\epsilon(\mu)\) and \(w^*(\mu)\) of additive \(\epsilon\)-best-arm identification: an answer is correct
    when its mean is at least \(\max_a \mu_a - \epsilon\) (``epsilon`` \(\ge 0\); \(\epsilon = 0\) is
    ``best_arm_allocation``).

    Definition. With several correct answers, Degenne and Koolen (2019, NeurIPS, "Pure Exploration with Multiple Correct
    Answers") bound every \(\delta\)-correct algorithm by
    \(\liminf \mathbb{E}[\tau_\delta] / \ln(1 / \delta) \ge T^*(\mu)\), with \(T^*(\mu)^{-1} =
    \max_{i\;\epsilon\text{-good}} \max_{w \in \Sigma_K} \inf_{\lambda \in \neg i} \sum_a w_a\, d(\mu_a, \lambda_a)\)
    (their paper was not read here, only its abstract: this is their bound as Jourdan et al.'s poster restates it for
    Gaussian arms, written with the arms' divergence \(d\)). The answer \(i\) is wrong at \(\lambda\) iff
    \(\lambda_j > \lambda_i + \epsilon\) for some \(j\), so the infimum is \(\min_{j \ne i} C_{ij}(w)\), with the pair's
    transportation cost shifted by \(\epsilon\) \(C_{ij}(w) = \inf_{\lambda_j \ge \lambda_i + \epsilon} w_i\, d(\mu_i,
    \lambda_i) + w_j\, d(\mu_j, \lambda_j)\) (Gaussian arms: \((\mu_i - \mu_j + \epsilon)^2 / \big(2 \sigma^2 (1 / w_i +
    1 / w_j)\big)\)). This function computes exactly that: the max over every \(\epsilon\)-good answer \(i\) of that
    answer's max-min; ``answer`` says which answer attains it. Jourdan, Degenne and Kaufmann (2023, NeurIPS,
    EB-TC\(\epsilon\); their poster states it without an equation number, and the paper's body was not read) write it
    for Gaussian arms as \(T_\epsilon(\mu) = \min_{i\;\epsilon\text{-good}} \min_{\beta \in (0, 1)}
    T_{\epsilon,\beta}(\mu, i)\), \(T_{\epsilon,\beta}(\mu, i)^{-1} = \max_{w \in \Sigma_K,\, w_i = \beta} \min_{j \ne
    i} (\mu_i - \mu_j + \epsilon)^2 / \big(2 \sigma^2 (1 / \beta + 1 / w_j)\big)\): the same number. With ``beta``
    given, this function returns \(\min_i T_{\epsilon,\beta}(\mu, i)\) and its allocation
    (\(w_{\text{answer}} = \beta\)).

    Which answer attains it. On Gaussian arms the best arm \(i^*\), for every \(\beta\): swapping the weights of an
    \(\epsilon\)-good arm \(i\) and of \(i^*\) turns each pair \((i, j)\) into the pair \((i^*, j)\) with the same
    weights and a gap \(\mu_{i^*} - \mu_j + \epsilon\) at least as large (and the pair \((i, i^*)\) into \((i^*, i)\),
    whose gap \(\mu_{i^*} - \mu_i + \epsilon\) is at least \(\mu_i - \mu_{i^*} + \epsilon\)), and the Gaussian cost is
    symmetric in the pair's weights. On Bernoulli arms the cost of \((i^*, i)\) is not symmetric under the swap, so
    every answer is computed.

    Method, per answer \(i\): Garivier and Kaufmann (2016) Theorem 5's, with the meeting point shifted (as Garivier and
    Kaufmann's public epsilon-BAI code does, EmilieKaufmann/BAI_epsBAI_code): for the pair \((i, j)\) and weights
    \((1, x)\), the minimiser \(\lambda_i = l\) of \(d(\mu_i, l) + x\, d(\mu_j, l + \epsilon)\) solves \(x = (\mu_i -
    l)\, V(l + \epsilon) / \big(V(l)\, (l + \epsilon - \mu_j)\big)\) (\(V\) the family's variance function), so \(l\)
    parametrises the pair's cost \(g_j(x)\); \(x_j(y)\) solves \(g_j(x) = y\), \(y^*\) is the root of the increasing
    \(F(y) = \sum_j d(\mu_i, l_j) / d(\mu_j, l_j + \epsilon) - 1\) (the first-order condition, as in GK 2016), and
    \(w_i = 1 / (1 + \sum_j x_j(y^*))\), \(w_j = x_j(y^*)\, w_i\), \(T_i = (1 + \sum_j x_j(y^*)) / y^*\). With ``beta``:
    \(\sum_j x_j(u) = (1 - \beta) / \beta\), \(w_j = \beta\, x_j(u)\), \(T_i = 1 / (\beta u)\). Roots by Brent's method.
    A Bernoulli answer above \(1 - \epsilon\) costs \(d(\mu_i, 1 - \epsilon)\) even with no weight on \(j\): \(F\)'s and
    the sum's search starts there.

    An arm exactly \(\epsilon\) below the best is \(\epsilon\)-good but cannot be verified (infinite time) and is
    skipped; with \(\epsilon = 0\) the best arm must be unique. Bernoulli means lie in \((0, 1)\), \(\epsilon\) in
    \([0, 1)\)."""
    mu = _means(means, distribution)
    bernoulli = distribution == "bernoulli"
    epsilon = check.real("epsilon", epsilon, low=0.0, high=1.0 if bernoulli else None, high_open=bernoulli)
    if beta is not None:
        beta = check.real("beta", beta, low=0.0, high=1.0, low_open=True, high_open=True)
    d, var = divergence(distribution, sigma), _variance(distribution, sigma)
    k = mu.shape[0]
    rounding = 8.0 * np.finfo(np.float64).eps * max(1.0, float(np.max(np.abs(mu))), epsilon)  # of the gaps' sums
    answers = [a for a in range(k) if mu[a] - np.max(np.delete(mu, a)) + epsilon > rounding]
    if not answers:
        raise ValueError(f"means must have a unique best arm when epsilon = 0 (T* is infinite otherwise), got {mu}")
    found = [_answer_allocation(mu, a, epsilon, d, var, bernoulli, beta) for a in answers]
    times = np.array([time for time, _ in found])
    best = int(np.argmax(times <= times.min() * (1.0 + 1e-10)))  # the first of the answers tied to rounding
    return EpsilonAllocation(time=found[best][0], weights=found[best][1], answer=answers[best])


def _answer_allocation(mu: np.ndarray, a: int, epsilon: float, d: Divergence, var: Callable[[float], float],
                       bernoulli: bool, beta: float | None) -> tuple[float, np.ndarray]:
    """(T_a, w) of answer a (``epsilon_best_arm_allocation``)."""
    others = np.flatnonzero(np.arange(mu.shape[0]) != a)
    ranges = [_shifted_range(mu[a], mu[b], epsilon, "bernoulli" if bernoulli else "gaussian") for b in others]
    top = ranges[0][1]  # the same for every pair: lambda_i = top costs the floor g_j(0) = d(mu_i, top)
    floor = float(d(mu[a], top))

    def pair(lam: float, b: int | np.integer) -> tuple[float, float]:  # g_b and x_b at the meeting point lam
        x = (mu[a] - lam) * var(lam + epsilon) / (var(lam) * (lam + epsilon - mu[b]))
        return float(d(mu[a], lam) + (x * d(mu[b], lam + epsilon) if x > 0.0 else 0.0)), x

    def points(y: float) -> np.ndarray:  # l_j(y) for every other arm j
        found = np.full(others.shape[0], top)
        for n, (b, (low, _)) in enumerate(zip(others, ranges, strict=True)):
            if y <= floor:
                continue
            inside = next((low + (top - low) * 0.5**s for s in range(1, 1100)
                           if pair(low + (top - low) * 0.5**s, b)[0] >= y), low)
            found[n] = scipy.optimize.brentq(lambda lam, b=b: pair(lam, b)[0] - y, inside, top, xtol=_XTOL)
        return found

    def xs(y: float) -> np.ndarray:
        return np.array([pair(lam, b)[1] for lam, b in zip(points(y), others, strict=True)])

    def condition(y: float) -> float:  # F(y), or sum_j x_j(y) - (1 - beta) / beta with beta
        if beta is not None:
            return float(np.sum(xs(y))) - (1.0 - beta) / beta
        lam = points(y)
        return float(np.sum(d(mu[a], lam) / d(mu[others], lam + epsilon))) - 1.0

    sup = min(float(d(mu[a], low)) if low > 0.0 or not bernoulli else np.inf for low, _ in ranges)
    high = floor + 1.0 if np.isinf(sup) else (floor + sup) / 2.0
    for _ in range(2000):  # the condition grows to +inf as y reaches sup
        if condition(high) >= 0.0:
            break
        high = floor + 2.0 * (high - floor) if np.isinf(sup) else (high + sup) / 2.0
    y = float(scipy.optimize.brentq(condition, floor, high, xtol=_XTOL * high))
    x = np.ones(mu.shape[0])
    x[others] = xs(y)
    if beta is not None:
        return 1.0 / (beta * y), np.where(np.arange(mu.shape[0]) == a, beta, beta * x)
    return float(x.sum() / y), x / x.sum()


# ------------------------------------------------------------------------------------------ top m
def top_m_allocation(means: ArrayLike, m: int, distribution: str = "bernoulli", sigma: float = 1.0) -> Allocation:
    r"""\(T^*(\mu)\) and \(w^*(\mu)\) of top-\(m\) identification (the \(m\) arms of largest mean, unique), exactly as
    defined.

    An instance's top-\(m\) set differs from \(\mu\)'s top set \(S^*\) iff some \(j\) outside \(S^*\) has
    \(\lambda_j \ge \lambda_i\) for some \(i \in S^*\); so \(\mathrm{Alt}(\mu)\) is the union of those half-spaces, the
    infimum over each moves only arms \(i\) and \(j\) (to their weighted mean, ``transportation_cost``), and

    $$
    \begin{aligned}
    T^*(\mu)^{-1} &= \max_{w \in \Sigma_K} \min_{i \in S^*,\, j \notin S^*} C_{ij}(w),\\
    C_{ij}(w) &= w_i\, d(\mu_i, m_{ij}) + w_j\, d(\mu_j, m_{ij}), \qquad
    m_{ij} = \frac{w_i \mu_i + w_j \mu_j}{w_i + w_j}.
    \end{aligned}
    $$

    Each \(C_{ij}\) is concave (an infimum of linear functions of \(w\)) with gradient
    \(\big(d(\mu_i, m_{ij}), d(\mu_j, m_{ij})\big)\), so the maximum is that of a smooth concave program, solved here in
    epigraph form by SLSQP (scipy) from the equal allocation, to a relative \(10^{-12}\) in the objective, polished by
    sequential linear programming and certified within a relative ``GAP`` (\(10^{-5}\)) of the optimum by a linear upper
    bound (a RuntimeError otherwise; none in 2,000 random instances). This is the lower bound's own complexity (the
    characteristic time of Kaufmann, Cappé and Garivier 2016's general bound, computed without relaxation), not a bound
    on it; with \(m = 1\) it is ``best_arm_allocation``'s. The \(m\)-th and \((m+1)\)-th largest means must differ."""
    mu = _means(means, distribution)
    k = mu.shape[0]
    m = check.integer("m", m, minimum=1, maximum=k - 1)
    if m * (k - m) > MAX_PAIRS:
        raise ValueError(f"top_m_allocation solves a program with m (K - m) = {m * (k - m)} constraints; at most "
                         f"{MAX_PAIRS} are allowed (K = {k}, m = {m})")
    d = divergence(distribution, sigma)
    order = np.argsort(-mu, kind="stable")
    if mu[order[m - 1]] == mu[order[m]]:
        raise ValueError(f"the {m} largest means must be unique (T* is infinite otherwise), got {mu}")
    top, rest = order[:m], order[m:]
    i, j = np.repeat(top, k - m), np.tile(rest, m)
    return _max_min(k, lambda w, pairs: _pair_costs(d, w, mu, i[pairs], j[pairs]),
                    lambda w, pairs: _pair_gradients(d, w, mu, i[pairs], j[pairs]),
                    start=(i == top[-1]) | (j == rest[0]))


def _pair_costs(d: Divergence, w: np.ndarray, mu: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    return transportation_cost(d, w[i], w[j], mu[i], mu[j])


def _pair_gradients(d: Divergence, w: np.ndarray, mu: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """The gradient of every C_ij in w: ``d(mu_i, m_ij)`` at i, ``d(mu_j, m_ij)`` at j (the envelope theorem)."""
    total = np.maximum(w[i] + w[j], 1e-300)
    mid = (w[i] * mu[i] + w[j] * mu[j]) / total
    grad = np.zeros((i.shape[0], w.shape[0]))
    rows = np.arange(i.shape[0])
    grad[rows, i] = d(mu[i], mid)
    grad[rows, j] = d(mu[j], mid)
    return grad


def _max_min(k: int, costs: Callable[[np.ndarray, np.ndarray], np.ndarray],
             gradients: Callable[[np.ndarray, np.ndarray], np.ndarray], start: np.ndarray) -> Allocation:
    """max over the simplex of min_p C_p(w), the pairs p given by ``costs(w, pairs)`` (``pairs`` a boolean mask),
    with an active set: SLSQP solves the program over the pairs in the set (``start`` first), the pairs that the
    solution leaves below its value join the set, and so on until none does; the value is then certified against
    the upper bound of ``_upper_bound`` over all pairs."""
    every = np.ones(start.shape[0], dtype=bool)
    active, w = start.copy(), np.full(k, 1.0 / k)
    for _ in range(start.shape[0]):
        w = _solve(k, _restricted(costs, active.copy()), _restricted(gradients, active.copy()), w)
        value = costs(w, every)
        below = value < value[active].min() * (1.0 - GAP / 10.0)
        if not np.any(below & ~active):
            break
        active |= below
    w = _polish(lambda v: costs(v, every), lambda v: gradients(v, every), w)
    found = float(costs(w, every).min())
    bound = _upper_bound(gradients(w, every) / found) * found  # the program in units of the value found
    if bound > found * (1.0 + GAP):
        raise RuntimeError(f"the max-min program stopped {GAP:g} or more from its optimum (value {found:.6g}, "
                           f"certified bound {bound:.6g})")
    return Allocation(time=1.0 / found, weights=w)


def _polish(costs: Callable[[np.ndarray], np.ndarray], gradients: Callable[[np.ndarray], np.ndarray],
            w: np.ndarray, steps: int = 100) -> np.ndarray:
    """Sequential linear programming with a trust region, until ``_upper_bound`` certifies w to ``GAP / 100`` or
    the region is below ``MIN_RADIUS``: each step maximises the linearised min (``min_p g_p . v``, an upper bound
    of the true one) over the allocations v within ``radius`` of w, and keeps v when its true value gains at least
    a quarter of the gain predicted (a step the solver fails on is rejected)."""
    radius = 0.05
    for _ in range(steps):
        value = float(costs(w).min())
        scaled = gradients(w) / value
        if _upper_bound(scaled) <= 1.0 + GAP / 100.0 or radius < MIN_RADIUS:
            break
        step = _linear_step(scaled, w, radius)
        if step is None:  # the solver failed on this box: a rejected step
            radius /= 4.0
            continue
        v, predicted = step
        if float(costs(v).min()) / value - 1.0 >= 0.25 * (predicted - 1.0):
            w, radius = v, min(2.0 * radius, 1.0)
        else:
            radius /= 4.0
    return w


def _linear_step(gradients: np.ndarray, w: np.ndarray, radius: float) -> tuple[np.ndarray, float] | None:
    """``argmax_{v in Sigma_K, |v - w| <= radius} min_p g_p . v`` and its value (a linear program); None when the
    solver finds no solution (a box of a tiny radius can be infeasible within its tolerances)."""
    pairs, k = gradients.shape
    result = scipy.optimize.linprog(np.append(np.zeros(k), -1.0), A_ub=np.hstack([-gradients, np.ones((pairs, 1))]),
                              b_ub=np.zeros(pairs), A_eq=np.append(np.ones(k), 0.0)[None], b_eq=[1.0],
                              bounds=[(max(x - radius, 0.0), x + radius) for x in w] + [(None, None)],
                              method="highs", options=_HIGHS)
    if result.x is None:
        return None
    v = np.clip(result.x[:k], 0.0, None)
    return v / v.sum(), float(-result.fun)


def _restricted(f: Callable[[np.ndarray, np.ndarray], np.ndarray],
                pairs: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    return lambda w: f(w, pairs)


def _solve(k: int, costs: Callable[[np.ndarray], np.ndarray], gradients: Callable[[np.ndarray], np.ndarray],
           start: np.ndarray) -> np.ndarray:
    """SLSQP on the epigraph form, from ``start``: variables (w, s), maximise s subject to ``costs(w) >= s``,
    ``sum w = 1``, ``w >= 0`` (the values scaled by the start's, so that s is about 1)."""
    scale = 1.0 / max(float(costs(start).min()), 1e-300)
    pairs = costs(start).shape[0]
    constraints = [
        {"type": "ineq", "fun": lambda z: costs(z[:k]) * scale - z[k],
         "jac": lambda z: np.hstack([gradients(z[:k]) * scale, -np.ones((pairs, 1))])},
        {"type": "eq", "fun": lambda z: np.sum(z[:k]) - 1.0, "jac": lambda z: np.append(np.ones(k), 0.0)},
    ]
    result = scipy.optimize.minimize(lambda z: -z[k], np.append(start, 1.0), jac=lambda z: np.append(np.zeros(k), -1.0),
                               method="SLSQP", bounds=[(0.0, 1.0)] * k + [(0.0, None)],
                               constraints=constraints, options={"ftol": 1e-12, "maxiter": 1000})
    w = np.clip(result.x[:k], 0.0, None)
    return w / w.sum()


def _upper_bound(gradients: np.ndarray) -> float:
    """``max_{w in Sigma_K} min_p g_p . w``, an upper bound on the max-min value: each C_p is concave and
    1-homogeneous, so ``C_p(w) <= C_p(v) + g_p . (w - v) = g_p . w`` for its gradient g_p at any v (Euler's
    identity C_p(v) = g_p . v). A linear program (HiGHS): variables (w, s), maximise s, ``s <= g_p . w``."""
    pairs, k = gradients.shape
    result = scipy.optimize.linprog(np.append(np.zeros(k), -1.0), A_ub=np.hstack([-gradients, np.ones((pairs, 1))]),
                              b_ub=np.zeros(pairs), A_eq=np.append(np.ones(k), 0.0)[None], b_eq=[1.0],
                              bounds=[(0.0, None)] * k + [(None, None)], method="highs", options=_HIGHS)
    return float(-result.fun)


# ------------------------------------------------------------------------------------------ thresholding
def thresholding_allocation(means: ArrayLike, threshold: float, distribution: str = "bernoulli",
                            sigma: float = 1.0, epsilon: float = 0.0) -> Allocation:
    r"""\(T^*(\mu)\) and \(w^*(\mu)\) of the thresholding bandit at fixed confidence: classify every arm as above or
    below \(\theta\), correct for all arms with probability at least \(1 - \delta\), with the env's indifference zone
    \(\epsilon \ge 0\) (``bandit_gym.metrics``: an arm with \(\lvert \mu_i - \theta \rvert < \epsilon\) may be answered
    either way; any other arm must be answered \(\mathbb{1}\{\mu_i \ge \theta\}\)).

    The answer "above" of arm \(i\) is wrong on the instances with \(\lambda_i \le \theta - \epsilon\)
    (\(\lambda_i < \theta\) at \(\epsilon = 0\)), "below" on those with \(\lambda_i \ge \theta + \epsilon\). The least
    cost of moving arm \(i\) into the wrong set of an answer is \(w_i\, d(\mu_i, \theta - \epsilon)\) for "above" (0 if
    \(\mu_i\) is in it already), \(w_i\, d(\mu_i, \theta + \epsilon)\) for "below". An instance contradicts an answer
    iff one arm lies in its wrong set, so the inner infimum is a minimum over the arms; with several correct answers the
    bound is the largest over the correct answers of their max-min (Degenne and Koolen 2019, Theorem 1), and as each
    arm's cost grows with its own side's, each arm takes the side of larger cost:

    $$
    \begin{aligned}
    c_i &= \max\big(d(\mu_i, \theta - \epsilon)\, \mathbb{1}\{\mu_i > \theta - \epsilon\},\
    d(\mu_i, \theta + \epsilon)\, \mathbb{1}\{\mu_i < \theta + \epsilon\}\big),\\
    T^*(\mu)^{-1} &= \max_w \min_i w_i c_i, \qquad w^*_i \propto 1 / c_i, \qquad T^*(\mu) = \sum_i 1 / c_i,
    \end{aligned}
    $$

    in closed form (equalising the terms is optimal: raising one lowers another). An arm at or above
    \(\theta + \epsilon\) costs \(d(\mu_i, \theta - \epsilon)\), one at or below \(\theta - \epsilon\)
    \(d(\mu_i, \theta + \epsilon)\), one inside the zone the larger of the two: it still needs samples, to certify
    whichever answer is given. At \(\epsilon = 0\), \(c_i = d(\mu_i, \theta)\) and no mean may equal \(\theta\) (its
    \(c_i\) is 0: \(T^*\) would be infinite). A side whose wrong set holds no Bernoulli mean but 0 or 1
    (\(\theta - \epsilon \le 0\), \(\theta + \epsilon \ge 1\)) is never wrong: its cost is infinite and the arm needs no
    sample (\(w^*_i = 0\)); if no arm needs one, \(T^* = 0\) and the weights are uniform (any allocation is optimal).
    For Gaussian arms \(T^* = 2 \sigma^2 \sum_i (\lvert \Delta_i \rvert + \epsilon)^{-2}\), \(2 \sigma^2 H\) at
    \(\epsilon = 0\), \(H\) being tao2019's and Locatelli et al. (2016)'s fixed-budget complexity
    (``bandit_gym.instances.complexity``)."""
    mu = _means(means, distribution)
    if distribution == "bernoulli":
        threshold = check.real("threshold", threshold, low=0.0, high=1.0, low_open=True, high_open=True)
    else:
        threshold = check.real("threshold", threshold)
    epsilon = check.real("epsilon", epsilon, low=0.0)
    d = divergence(distribution, sigma)

    def side_cost(point: float, side: np.ndarray) -> np.ndarray:
        """d(mu_i, point) where ``side`` (mu_i strictly on the other side of point from its wrong set), else 0;
        infinite for a Bernoulli point at or outside {0, 1}."""
        if distribution == "bernoulli" and not 0.0 < point < 1.0:
            return np.where(side, np.inf, 0.0)
        return np.where(side, d(mu, point), 0.0)

    cost = np.maximum(side_cost(threshold - epsilon, mu > threshold - epsilon),
                      side_cost(threshold + epsilon, mu < threshold + epsilon))
    if np.any(cost == 0.0):
        raise ValueError(f"no mean may equal the threshold {threshold} at epsilon = 0 (T* is infinite otherwise), "
                         f"got {mu}")
    inverse = 1.0 / cost
    if inverse.sum() == 0.0:  # every arm is right whatever its answer: nothing to sample
        return Allocation(time=0.0, weights=np.full(mu.shape[0], 1.0 / mu.shape[0]))
    return Allocation(time=float(inverse.sum()), weights=inverse / inverse.sum())
