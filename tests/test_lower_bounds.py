"""The characteristic times and optimal allocations of ``bandit_gym.lower_bounds``, each against a computation
that shares none of its method: closed forms at K = 2 and on symmetric instances, a generic optimiser of the
max-min definition (whose inner infimum is itself found numerically) on small K, and the values that Garivier and
Kaufmann (2016, §5) print for their two instances."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import optimize

from bandit_gym.divergences import kl_bernoulli
from bandit_gym.instances import complexity
from bandit_gym.lower_bounds import (
    best_arm_allocation,
    confidence_kl,
    divergence,
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
                       lambda mu: thresholding_allocation(mu, 0.5)):
        plain, permuted = allocation(means), allocation(means[perm])
        assert permuted.time == pytest.approx(plain.time, rel=1e-7)
        np.testing.assert_allclose(permuted.weights, plain.weights[perm], atol=1e-6)


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
])
def test_bad_input_is_named(call, message):
    with pytest.raises(ValueError, match=message):
        call()
