"""The characteristic times and optimal allocations of ``bandit_gym.lower_bounds``, each against a computation
that shares none of its method: closed forms at K = 2 and on symmetric instances, a generic optimiser of the
max-min definition (whose inner infimum is itself found numerically) on small K, and the values that Garivier and
Kaufmann (2016, §5) print for their two instances; epsilon-best-arm identification also against best-arm
identification at epsilon = 0 and its own fixed-beta times."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import optimize

from bandit_gym.divergences import kl_bernoulli
from bandit_gym.instances import complexity
from bandit_gym.lower_bounds import (
    GAP,
    best_arm_allocation,
    confidence_kl,
    divergence,
    epsilon_best_arm_allocation,
    lower_bound,
    thresholding_allocation,
    top_m_allocation,
    transportation_cost,
)

DISTRIBUTIONS = [("bernoulli", 1.0), ("gaussian", 1.0), ("gaussian", 0.3)]


def generic_max_min(means, alternatives, d, restarts=4, seed=0):
    """max over the simplex of min over ``alternatives`` (pairs (i, j) that must meet, or single arms i and a
    point it must reach) of the least weighted divergence, by Nelder-Mead on a softmax parameterisation; the
    inner infimum over the meeting point is a bounded scalar minimisation, not the weighted mean."""
    mu = np.asarray(means, dtype=np.float64)
    k = mu.shape[0]

    def inner(w, alternative):
        if alternative[0] == "point":
            _, i, point = alternative
            return w[i] * d(mu[i], point)
        if alternative[0] == "shifted":  # arm j must beat arm i by epsilon: lambda_j = lambda_i + epsilon
            _, i, j, epsilon, low, high = alternative
            found = optimize.minimize_scalar(lambda x: w[i] * d(mu[i], x) + w[j] * d(mu[j], x + epsilon),
                                             bounds=(low, high), method="bounded", options={"xatol": 1e-13})
            return min(found.fun, w[i] * d(mu[i], high) + w[j] * d(mu[j], high + epsilon))
        _, i, j = alternative
        low, high = sorted((mu[i], mu[j]))
        found = optimize.minimize_scalar(lambda x: w[i] * d(mu[i], x) + w[j] * d(mu[j], x), bounds=(low, high),
                                         method="bounded", options={"xatol": 1e-13})
        return found.fun

    def value(z):
        w = np.exp(np.append(z, 0.0) - np.max(np.append(z, 0.0)))
        w /= w.sum()
        return -min(inner(w, a) for a in alternatives), w

    rng = np.random.default_rng(seed)
    best = None
    for _ in range(restarts):
        found = optimize.minimize(lambda z: value(z)[0], rng.normal(size=k - 1), method="Nelder-Mead",
                                  options={"xatol": 1e-11, "fatol": 1e-16, "maxiter": 40_000, "maxfev": 40_000})
        for _ in range(3):  # Nelder-Mead stalls at the kinks of a min: restart it where it stopped
            found = optimize.minimize(lambda z: value(z)[0], found.x, method="Nelder-Mead",
                                      options={"xatol": 1e-11, "fatol": 1e-16, "maxiter": 40_000, "maxfev": 40_000})
        if best is None or found.fun < best.fun:
            best = found
    score, w = value(best.x)
    return 1.0 / -score, w


# ------------------------------------------------------------------------------------------ best arm
@pytest.mark.parametrize(("distribution", "sigma"), DISTRIBUTIONS)
def test_two_arms_have_the_chernoff_information_as_inverse_characteristic_time(distribution, sigma):
    """At K = 2, T*^-1 is the Chernoff information d(mu_1, x*) = d(mu_2, x*) (GK 2016 §2.2), and w*_1 places the
    weighted mean at x*; for Gaussian arms, T* = 8 sigma^2 / Delta^2 with equal weights."""
    mu1, mu2 = 0.62, 0.35
    d = divergence(distribution, sigma)
    x = optimize.brentq(lambda x: d(mu1, x) - d(mu2, x), mu2, mu1, xtol=1e-15)
    found = best_arm_allocation([mu2, mu1], distribution, sigma)
    assert found.time == pytest.approx(1.0 / d(mu1, x), rel=1e-10)
    assert found.weights[1] == pytest.approx((x - mu2) / (mu1 - mu2), rel=1e-9)
    if distribution == "gaussian":
        assert found.time == pytest.approx(8.0 * sigma**2 / (mu1 - mu2) ** 2, rel=1e-12)
        np.testing.assert_allclose(found.weights, [0.5, 0.5], rtol=1e-10)


@pytest.mark.slow
@pytest.mark.parametrize(("distribution", "sigma"), DISTRIBUTIONS)
@pytest.mark.parametrize("means", [[0.2, 0.5, 0.4], [0.7, 0.3, 0.45, 0.6], [0.55, 0.5, 0.5, 0.1]])
def test_best_arm_allocation_maximises_the_max_min_as_a_generic_optimiser_finds(means, distribution, sigma):
    best = int(np.argmax(means))
    pairs = [("pair", best, a) for a in range(len(means)) if a != best]
    time, weights = generic_max_min(means, pairs, divergence(distribution, sigma))
    found = best_arm_allocation(means, distribution, sigma)
    assert found.time == pytest.approx(time, rel=2e-6)
    assert found.time <= time * (1 + 1e-9)  # the optimiser's point is feasible: its value is no better
    np.testing.assert_allclose(found.weights, weights, atol=2e-4)


def test_best_arm_allocation_matches_the_papers_printed_weights():
    """GK 2016 §5: w*(mu) = [0.417, 0.390, 0.136, 0.057] for mu = [0.5, 0.45, 0.43, 0.4] and [0.336, 0.251,
    0.177, 0.132, 0.104] for [0.3, 0.21, 0.2, 0.19, 0.18], Bernoulli arms."""
    np.testing.assert_allclose(best_arm_allocation([0.5, 0.45, 0.43, 0.4]).weights,
                               [0.417, 0.390, 0.136, 0.057], atol=5e-4)
    np.testing.assert_allclose(best_arm_allocation([0.3, 0.21, 0.2, 0.19, 0.18]).weights,
                               [0.336, 0.251, 0.177, 0.132, 0.104], atol=5e-4)


def test_the_lower_bound_is_the_characteristic_time_times_the_binary_divergence():
    found = best_arm_allocation([0.5, 0.45, 0.43, 0.4])
    assert confidence_kl(0.1) == pytest.approx(0.8 * np.log(9.0), rel=1e-14)
    assert lower_bound(found, 0.1) == found.lower_bound(0.1) == pytest.approx(found.time * 0.8 * np.log(9.0))
    assert 1735 < found.lower_bound(0.1) < 1745  # the instance's bound, about 1,740 pulls


def test_permuting_the_arms_permutes_the_allocation():
    means = np.array([0.31, 0.62, 0.48, 0.55, 0.2])
    perm = np.random.default_rng(3).permutation(5)
    for allocation in (lambda mu: best_arm_allocation(mu), lambda mu: top_m_allocation(mu, 2),
                       lambda mu: thresholding_allocation(mu, 0.5), lambda mu: epsilon_best_arm_allocation(mu, 0.1)):
        plain, permuted = allocation(means), allocation(means[perm])
        assert permuted.time == pytest.approx(plain.time, rel=1e-7)
        np.testing.assert_allclose(permuted.weights, plain.weights[perm], atol=1e-6)


# ------------------------------------------------------------------------------------------ epsilon best arm
def generic_epsilon_time(means, epsilon, distribution, sigma):
    """T*_epsilon by the generic optimiser: for every epsilon-good answer i, the max-min over the pairs "arm j beats
    arm i by epsilon" (each inner infimum a bounded scalar minimisation over lambda_i); the least time and its
    answer and weights."""
    mu, d = np.asarray(means, dtype=np.float64), divergence(distribution, sigma)
    found = []
    for i in range(mu.shape[0]):
        if mu[i] - np.max(np.delete(mu, i)) + epsilon <= 1e-12:
            continue
        bounds = [((max(mu[j] - epsilon, 0.0), min(mu[i], 1.0 - epsilon)) if distribution == "bernoulli"
                   else (mu[j] - epsilon, mu[i])) for j in range(mu.shape[0])]
        pairs = [("shifted", i, j, epsilon, *bounds[j]) for j in range(mu.shape[0]) if j != i]
        found.append((*generic_max_min(means, pairs, d), i))
    return min(found, key=lambda entry: entry[0])


@pytest.mark.parametrize(("distribution", "sigma"), DISTRIBUTIONS)
def test_epsilon_zero_is_best_arm_identification(distribution, sigma):
    rng = np.random.default_rng(7)
    for means in ([0.5, 0.45, 0.43, 0.4], [0.3, 0.21, 0.2, 0.19, 0.18], rng.uniform(0.05, 0.95, 8)):
        found, exact = epsilon_best_arm_allocation(means, 0.0, distribution, sigma), best_arm_allocation(
            means, distribution, sigma)
        assert found.time == pytest.approx(exact.time, rel=1e-10)
        np.testing.assert_allclose(found.weights, exact.weights, atol=1e-10)
        assert found.answer == int(np.argmax(means))


def shifted_cost(distribution, sigma, w_i, w_j, mu_i, mu_j, epsilon):
    """inf_{lambda_j >= lambda_i + epsilon} w_i d(mu_i, lambda_i) + w_j d(mu_j, lambda_j), by a bounded scalar
    minimisation over lambda_i with lambda_j = lambda_i + epsilon (0 when arm j already beats arm i by epsilon)."""
    if mu_j >= mu_i + epsilon:
        return 0.0
    d = divergence(distribution, sigma)
    low, high = ((max(mu_j - epsilon, 0.0), min(mu_i, 1.0 - epsilon)) if distribution == "bernoulli"
                 else (mu_j - epsilon, mu_i))
    found = optimize.minimize_scalar(lambda x: w_i * d(mu_i, x) + w_j * d(mu_j, x + epsilon), bounds=(low, high),
                                     method="bounded", options={"xatol": 1e-14})
    return min(found.fun, w_i * d(mu_i, high) + w_j * d(mu_j, high + epsilon))


@pytest.mark.parametrize(("distribution", "sigma"), DISTRIBUTIONS)
def test_the_epsilon_allocation_equalises_the_answer_s_pairs_at_the_inverse_time(distribution, sigma):
    """At w*, every pair (answer, j) costs 1 / T* (each found by a scalar minimisation of its own); [0.97, 0.95,
    0.5] has a Bernoulli best arm above 1 - epsilon, whose pairs cost something even with no weight on the other
    arm; [0.5, 0.5, 0.45, 0.2] ties the best arms."""
    for means, epsilon in [([0.7, 0.3, 0.65, 0.6], 0.08), ([0.97, 0.95, 0.5], 0.1), ([0.5, 0.5, 0.45, 0.2], 0.1)]:
        mu = np.array(means)
        found = epsilon_best_arm_allocation(mu, epsilon, distribution, sigma)
        w, i = found.weights, found.answer
        costs = [shifted_cost(distribution, sigma, w[i], w[j], mu[i], mu[j], epsilon) for j in range(len(mu)) if j != i]
        np.testing.assert_allclose(costs, 1.0 / found.time, rtol=1e-8)


@pytest.mark.parametrize("sigma", [1.0, 0.3])
def test_gaussian_epsilon_times_have_their_closed_forms(sigma):
    """K = 2: 8 sigma^2 / (Delta + epsilon)^2 with equal weights. One arm Delta above K - 1 equal ones: the top-1
    two-group form 2 sigma^2 (1 + sqrt(K - 1))^2 / (Delta + epsilon)^2, finite even when all K means tie."""
    found = epsilon_best_arm_allocation([0.35, 0.62], 0.1, "gaussian", sigma)
    assert found.time == pytest.approx(8 * sigma**2 / (0.27 + 0.1) ** 2, rel=1e-12)
    np.testing.assert_allclose(found.weights, [0.5, 0.5], rtol=1e-10)
    assert found.answer == 1
    for k, delta in [(5, 0.2), (12, 0.05), (6, 0.0)]:
        found = epsilon_best_arm_allocation(np.r_[0.4 + delta, np.full(k - 1, 0.4)], 0.1, "gaussian", sigma)
        assert found.time == pytest.approx(2 * sigma**2 * (1 + np.sqrt(k - 1)) ** 2 / (delta + 0.1) ** 2, rel=1e-9)
        assert found.answer == 0


def test_bernoulli_two_arms_have_the_shifted_chernoff_information_as_inverse_time():
    """K = 2 with one epsilon-good arm: by the minimax theorem T^-1 = min_l max(d(mu_1, l), d(mu_2, l + epsilon)),
    at the l* where the two are equal, and w*_1 is the weight whose first-order condition puts the minimiser at
    l*: ``w_1 (l* - mu_1) / V(l*) + (1 - w_1) (l* + epsilon - mu_2) / V(l* + epsilon) = 0``."""
    mu1, mu2, epsilon = 0.7, 0.45, 0.1
    x = optimize.brentq(lambda x: kl_bernoulli(mu1, x) - kl_bernoulli(mu2, x + epsilon), mu2 - epsilon, mu1,
                        xtol=1e-15)
    first, second = (x - mu1) / (x * (1 - x)), (x + epsilon - mu2) / ((x + epsilon) * (1 - x - epsilon))
    found = epsilon_best_arm_allocation([mu2, mu1], epsilon)
    assert found.time == pytest.approx(1.0 / kl_bernoulli(mu1, x), rel=1e-10)
    assert found.weights[1] == pytest.approx(second / (second - first), rel=1e-9)


@pytest.mark.parametrize(("distribution", "sigma"), DISTRIBUTIONS)
def test_the_epsilon_time_is_the_least_fixed_beta_time(distribution, sigma):
    """T_epsilon(mu) = min_beta T_epsilon,beta(mu) (Jourdan et al. 2023), at beta = w*_answer, where the two
    allocations agree; T_epsilon,1/2 <= 2 T_epsilon."""
    means, epsilon = [0.7, 0.3, 0.65, 0.6], 0.08
    found = epsilon_best_arm_allocation(means, epsilon, distribution, sigma)
    least = optimize.minimize_scalar(lambda b: epsilon_best_arm_allocation(means, epsilon, distribution, sigma,
                                                                           beta=b).time,
                                     bounds=(0.01, 0.99), method="bounded", options={"xatol": 1e-10})
    assert least.fun == pytest.approx(found.time, rel=1e-9) and least.fun >= found.time * (1 - 1e-12)
    assert least.x == pytest.approx(found.weights[found.answer], abs=1e-6)
    at = epsilon_best_arm_allocation(means, epsilon, distribution, sigma, beta=found.weights[found.answer])
    assert at.time == pytest.approx(found.time, rel=1e-12)
    np.testing.assert_allclose(at.weights, found.weights, atol=1e-12)
    half = epsilon_best_arm_allocation(means, epsilon, distribution, sigma, beta=0.5)
    assert found.time < half.time <= 2 * found.time and half.weights[half.answer] == 0.5


def test_the_best_arm_is_the_answer_that_attains_the_max():
    """Every epsilon-good answer is computed; the best arm attains the max on Gaussian arms (for every beta too),
    and on these Bernoulli instances."""
    rng = np.random.default_rng(3)
    for _ in range(20):
        epsilon = rng.uniform(0.05, 0.3)
        means = rng.permutation(np.r_[0.8, 0.8 - epsilon / 2, 0.8 - rng.uniform(0.0, 2 * epsilon, 4)])
        assert np.sum(means >= means.max() - epsilon) >= 2  # several epsilon-good arms
        for distribution, beta in (("gaussian", None), ("gaussian", 0.3), ("bernoulli", None)):
            found = epsilon_best_arm_allocation(means, epsilon, distribution, beta=beta)
            assert found.answer == int(np.argmax(means))


@pytest.mark.slow
@pytest.mark.parametrize(("distribution", "sigma"), DISTRIBUTIONS)
@pytest.mark.parametrize(("means", "epsilon"), [([0.2, 0.5, 0.45], 0.1), ([0.7, 0.3, 0.65, 0.6], 0.08),
                                                ([0.97, 0.95, 0.5], 0.1), ([0.55, 0.5, 0.5, 0.1], 0.05)])
def test_epsilon_allocation_maximises_the_max_min_as_a_generic_optimiser_finds(means, epsilon, distribution, sigma):
    """Several epsilon-good answers each time; [0.97, 0.95, 0.5] has a Bernoulli best arm above 1 - epsilon, whose
    cost is positive even with no weight on the other arm."""
    time, weights, answer = generic_epsilon_time(means, epsilon, distribution, sigma)
    found = epsilon_best_arm_allocation(means, epsilon, distribution, sigma)
    assert found.time == pytest.approx(time, rel=2e-6)
    assert found.time <= time * (1 + 1e-9)
    np.testing.assert_allclose(found.weights, weights, atol=2e-4)
    assert found.answer == answer


# ------------------------------------------------------------------------------------------ top m
@pytest.mark.parametrize(("distribution", "sigma"), DISTRIBUTIONS)
def test_top_one_is_best_arm_identification(distribution, sigma):
    means = np.random.default_rng(5).uniform(0.1, 0.9, 8)
    top, best = top_m_allocation(means, 1, distribution, sigma), best_arm_allocation(means, distribution, sigma)
    assert top.time == pytest.approx(best.time, rel=1e-7)
    np.testing.assert_allclose(top.weights, best.weights, atol=1e-5)


def test_gaussian_top_m_on_two_groups_has_its_closed_form():
    """m arms at mu + Delta and K - m at mu: by symmetry and concavity the optimum is equal within each group,
    and minimising 1/p + 1/q subject to m p + (K - m) q = 1 gives T* = 2 sigma^2 (sqrt(m) + sqrt(K - m))^2 /
    Delta^2."""
    for k, m, sigma in [(6, 2, 1.0), (10, 3, 0.5), (20, 10, 2.0), (30, 1, 1.0)]:
        means = np.r_[np.full(m, 0.7), np.full(k - m, 0.4)]
        found = top_m_allocation(means, m, "gaussian", sigma)
        assert found.time == pytest.approx(2 * sigma**2 * (np.sqrt(m) + np.sqrt(k - m)) ** 2 / 0.09, rel=1e-7)


def test_gaussian_top_k_minus_one_is_the_mirrored_best_arm_problem():
    """Top K - 1 = finding the worst arm; Gaussian divergences are symmetric, so it is best-arm identification on
    -mu."""
    means = np.array([0.1, 0.35, 0.4, 0.8, 0.55])
    top, mirrored = top_m_allocation(means, 4, "gaussian"), best_arm_allocation(-means, "gaussian")
    assert top.time == pytest.approx(mirrored.time, rel=1e-7)
    np.testing.assert_allclose(top.weights, mirrored.weights, atol=1e-5)


@pytest.mark.slow
@pytest.mark.parametrize(("distribution", "sigma"), DISTRIBUTIONS[:2])
def test_top_m_allocation_maximises_the_max_min_as_a_generic_optimiser_finds(distribution, sigma):
    means = [0.5, 0.45, 0.43, 0.4]
    pairs = [("pair", i, j) for i in (0, 1) for j in (2, 3)]
    time, weights = generic_max_min(means, pairs, divergence(distribution, sigma))
    found = top_m_allocation(means, 2, distribution, sigma)
    assert found.time == pytest.approx(time, rel=2e-6)
    np.testing.assert_allclose(found.weights, weights, atol=2e-4)


def test_top_m_allocation_on_fifty_arms_is_a_maximum():
    """No nearby allocation does better (the program is concave: a local maximum is the global one), and the
    value found is the min over the pairs of their transportation costs."""
    means = np.random.default_rng(11).uniform(0.1, 0.9, 50)
    found = top_m_allocation(means, 10)
    order = np.argsort(-means)
    i, j = np.repeat(order[:10], 40), np.tile(order[10:], 10)

    def value(w):
        return transportation_cost(kl_bernoulli, w[i], w[j], means[i], means[j]).min()

    assert value(found.weights) == pytest.approx(1.0 / found.time, rel=1e-12)
    rng = np.random.default_rng(0)
    for step in (1e-2, 1e-4):
        for _ in range(200):
            w = np.clip(found.weights + step * rng.normal(size=50) * found.weights, 0.0, None)
            assert value(w / w.sum()) <= value(found.weights) * (1 + 1e-7)



#: instances where the polish once stalled (a linear program infeasible on a tiny trust region, or a certified gap
#: of 1e-7 to 1e-6 against the 1e-7 then asked): K = 10, m = 8; K = 6, m = 5; K = 11, m = 9; K = 10, m = 3
STALLED = [
    ([0.102711, 0.352505, 0.185252, 0.455305, 0.766692, 0.257578, 0.096819, 0.414097, 0.228662, 0.131678], 8),
    ([0.179241, 0.597431, 0.51593, 0.409917, 0.180708, 0.600507], 5),
    ([0.784125, 0.635584, 0.570408, 0.911243, 0.405784, 0.401958, 0.377256, 0.503358, 0.684283, 0.445428,
      0.439822], 9),
    ([0.82351, 0.567364, 0.626345, 0.430434, 0.358998, 0.856209, 0.768921, 0.444726, 0.455935, 0.768842], 3),
]


@pytest.mark.parametrize(("means", "m"), STALLED)
def test_top_m_allocation_is_certified_where_its_polish_stalls(means, m):
    """The value is within the certified gap of the linear upper bound at the weights found, and no nearby
    allocation does better."""
    means = np.asarray(means)
    found = top_m_allocation(means, m)
    order = np.argsort(-means)
    i, j = np.repeat(order[:m], len(means) - m), np.tile(order[m:], m)

    def value(w):
        return transportation_cost(kl_bernoulli, w[i], w[j], means[i], means[j]).min()

    assert value(found.weights) == pytest.approx(1.0 / found.time, rel=1e-12)
    rng = np.random.default_rng(1)
    for _ in range(200):
        w = np.clip(found.weights * (1.0 + 1e-3 * rng.normal(size=len(means))), 0.0, None)
        assert value(w / w.sum()) <= value(found.weights) * (1.0 + GAP)


# ------------------------------------------------------------------------------------------ thresholding
@pytest.mark.slow
@pytest.mark.parametrize(("distribution", "sigma"), DISTRIBUTIONS)
def test_thresholding_allocation_maximises_the_max_min_as_a_generic_optimiser_finds(distribution, sigma):
    means, theta = [0.2, 0.55, 0.7, 0.42], 0.5
    points = [("point", i, theta) for i in range(4)]
    time, weights = generic_max_min(means, points, divergence(distribution, sigma))
    found = thresholding_allocation(means, theta, distribution, sigma)
    assert found.time == pytest.approx(time, rel=2e-6)
    np.testing.assert_allclose(found.weights, weights, atol=2e-4)


def test_gaussian_thresholding_time_is_twice_sigma_squared_times_tao2019s_complexity():
    means = np.array([0.1, 0.35, 0.45, 0.62, 0.9])
    found = thresholding_allocation(means, 0.5, "gaussian", 0.25)
    assert found.time == pytest.approx(2 * 0.25**2 * complexity(means, 0.5), rel=1e-12)


# ------------------------------------------------------------------------------------------ bad input
@pytest.mark.parametrize(("call", "message"), [
    (lambda: best_arm_allocation([0.5, 0.5, 0.2]), "unique best arm"),
    (lambda: best_arm_allocation([0.5, 1.0]), r"open interval \(0, 1\)"),
    (lambda: best_arm_allocation([0.5]), "means"),
    (lambda: best_arm_allocation([0.5, 0.4], "poisson"), "distribution"),
    (lambda: best_arm_allocation([0.5, 0.4], "gaussian", sigma=0.0), "sigma"),
    (lambda: top_m_allocation([0.5, 0.4, 0.4], 2), "2 largest means must be unique"),
    (lambda: top_m_allocation([0.5, 0.4, 0.3], 3), "m"),
    (lambda: top_m_allocation(np.linspace(0.01, 0.99, 400), 200), "constraints"),
    (lambda: thresholding_allocation([0.5, 0.4], 0.5), "equal the threshold"),
    (lambda: thresholding_allocation([0.5, 0.4], 1.0), "threshold"),
    (lambda: confidence_kl(0.7), "delta"),
    (lambda: epsilon_best_arm_allocation([0.5, 0.5, 0.2], 0.0), "unique best arm when epsilon = 0"),
    (lambda: epsilon_best_arm_allocation([0.5, 0.4], -0.1), "epsilon"),
    (lambda: epsilon_best_arm_allocation([0.5, 0.4], 1.0), "epsilon"),
    (lambda: epsilon_best_arm_allocation([0.5, 0.4], 0.1, beta=1.0), "beta"),
    (lambda: epsilon_best_arm_allocation([0.5, 1.4], 0.1), r"open interval \(0, 1\)"),
])
def test_bad_input_is_named(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.slow
@pytest.mark.parametrize(("distribution", "sigma"), DISTRIBUTIONS)
def test_epsilon_thresholding_allocation_is_the_best_answers_max_min_as_a_generic_optimiser_finds(distribution, sigma):
    """With an indifference zone epsilon: for every answer vector correct on mu (an arm inside the zone may take
    either side), the max-min over the instances where some arm's answer is wrong, its inner infimum over the arm's
    wrong half-line found numerically (``lambda_i <= theta - epsilon`` for "above", ``>= theta + epsilon`` for
    "below"); T*^-1 is the best answer's value (Degenne and Koolen 2019), and w* that answer's weights."""
    import itertools

    means, theta, epsilon = [0.2, 0.55, 0.7, 0.42], 0.5, 0.1  # arms 1 and 3 inside the zone (0.4, 0.6)
    d = divergence(distribution, sigma)
    low, high = (1e-9, 1 - 1e-9) if distribution == "bernoulli" else (-10.0, 10.0)

    def half_line(mu, wrong):
        """inf of d(mu, x) over the wrong set ``wrong = (side, boundary)``, a bounded scalar minimisation."""
        side, boundary = wrong
        bounds = (low, boundary) if side == "above" else (boundary, high)
        return optimize.minimize_scalar(lambda x: d(mu, x), bounds=bounds, method="bounded",
                                        options={"xatol": 1e-12}).fun

    sides = [["above"] if mu >= theta + epsilon else ["below"] if mu <= theta - epsilon else ["above", "below"]
             for mu in means]
    best_time, best_weights = np.inf, None
    for answer in itertools.product(*sides):
        points = [("point", i, (side, theta - epsilon if side == "above" else theta + epsilon))
                  for i, side in enumerate(answer)]
        time, weights = generic_max_min(means, points, half_line, restarts=2)
        if time < best_time:
            best_time, best_weights = time, weights
    found = thresholding_allocation(means, theta, distribution, sigma, epsilon=epsilon)
    assert found.time == pytest.approx(best_time, rel=2e-6)
    np.testing.assert_allclose(found.weights, best_weights, atol=2e-4)


def test_epsilon_thresholding_allocation_in_closed_form():
    """Gaussian arms: ``T* = 2 sigma^2 sum_i (|Delta_i| + epsilon)^-2`` (each arm's farther end of the zone), an arm
    at theta included; epsilon = 0 is the exact problem; a Bernoulli side whose wrong set holds no mean inside (0, 1)
    costs nothing to certify."""
    means, theta, sigma = np.array([0.1, 0.35, 0.5, 0.62, 0.9]), 0.5, 0.25
    with pytest.raises(ValueError, match="equal the threshold"):  # epsilon = 0: the arm at theta costs T* = inf
        thresholding_allocation(means, theta, "gaussian", sigma)
    for epsilon in (0.05, 0.3):
        found = thresholding_allocation(means, theta, "gaussian", sigma, epsilon=epsilon)
        inverse = 1.0 / (np.abs(means - theta) + epsilon) ** 2
        assert found.time == pytest.approx(2 * sigma**2 * inverse.sum(), rel=1e-12)
        np.testing.assert_allclose(found.weights, inverse / inverse.sum(), rtol=1e-12)
    exact, zero = thresholding_allocation(means[[0, 1, 3, 4]], theta), thresholding_allocation(
        means[[0, 1, 3, 4]], theta, epsilon=0.0)
    assert zero.time == exact.time and np.array_equal(zero.weights, exact.weights)
    assert exact.time == pytest.approx(sum(1 / kl_bernoulli(mu, theta) for mu in means[[0, 1, 3, 4]]), rel=1e-12)
    # Bernoulli, theta = 0.3, epsilon = 0.35: "above" is never wrong (no mean is <= theta - epsilon = -0.05), and
    # every arm may be answered above (0.1 and 0.4 are inside the zone, 0.8 above it): T* = 0
    found = thresholding_allocation([0.1, 0.4, 0.8], 0.3, epsilon=0.35)
    assert found.time == 0.0 and found.weights.tolist() == pytest.approx([1 / 3] * 3)
    # theta = 0.5, epsilon = 0.45: arm 0.02 <= theta - epsilon must be told from 0.95; arm 0.5 takes its cheaper side
    found = thresholding_allocation([0.02, 0.5, 0.97], 0.5, epsilon=0.45)
    costs = np.array([kl_bernoulli(0.02, 0.95), max(kl_bernoulli(0.5, 0.05), kl_bernoulli(0.5, 0.95)),
                      kl_bernoulli(0.97, 0.05)])
    assert found.time == pytest.approx((1 / costs).sum(), rel=1e-12)
    with pytest.raises(ValueError, match="epsilon"):
        thresholding_allocation([0.2, 0.7], 0.5, epsilon=-0.1)
