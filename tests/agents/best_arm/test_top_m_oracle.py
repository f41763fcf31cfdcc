"""The compiled optimal allocation of top-m identification (``_oracle.top_m_weights``, Track-and-Stop's w* for
m >= 1): equal to ``bandit_gym.lower_bounds.top_m_allocation`` and, where the problem is best-arm identification in
disguise, to the exact ``optimal_weights``; its ties, edges and label invariance; its accurate divergence."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

from bandit_gym.agents.best_arm import _stopping
from bandit_gym.agents.best_arm._oracle import (
    EDGE,
    close_divergence,
    interior_point,
    optimal_weights,
    top_m_weights,
)
from bandit_gym.divergences import divergence, transportation_cost
from bandit_gym.lower_bounds import top_m_allocation

DISTRIBUTIONS = ["bernoulli", "gaussian"]
SIGMA = 0.4


def weights_of(means, m, distribution="bernoulli", sigma=SIGMA):
    means = np.asarray(means, dtype=np.float64)
    weights, scratch = np.full(means.shape[0], np.nan), np.zeros(means.shape[0])
    top_m_weights(means, m, float(_stopping.DISTRIBUTIONS.index(distribution)), sigma, weights, scratch)
    return weights


def characteristic_time(means, m, weights, distribution="bernoulli", sigma=SIGMA):
    """``1 / min_{i in S, j not in S} C_ij(w)``, S the m largest means (numpy, the lower bounds' divergences)."""
    d, mu = divergence(distribution, sigma), np.asarray(means)
    order = np.argsort(-mu, kind="stable")
    i, j = np.repeat(order[:m], mu.size - m), np.tile(order[m:], m)
    return 1.0 / float(np.min(transportation_cost(d, weights[i], weights[j], mu[i], mu[j])))


def instances(distribution):
    """Hand-picked instances, then seeded random ones with K in 4..12 and every m in 1..K-1 among them."""
    fixed = [([0.6, 0.5, 0.4, 0.3, 0.2], 2), ([0.5, 0.45, 0.43, 0.4], 2), ([0.9, 0.8, 0.2, 0.1], 2),
             ([0.7, 0.5, 0.5, 0.45, 0.3, 0.1], 3), ([0.95, 0.05, 0.5, 0.52, 0.48, 0.3, 0.7], 4),
             ([0.3, 0.31, 0.32, 0.33, 0.34, 0.35, 0.36, 0.37, 0.38, 0.39, 0.4, 0.41], 6)]
    rng = np.random.default_rng(2024 + DISTRIBUTIONS.index(distribution))
    drawn = []
    for _ in range(30):
        k = int(rng.integers(4, 13))
        drawn.append((rng.uniform(0.05, 0.95, k).tolist(), int(rng.integers(1, k))))
    for k in (4, 8, 12):  # every m
        drawn += [(rng.uniform(0.05, 0.95, k).tolist(), m) for m in range(1, k)]
    return fixed + drawn


@pytest.mark.parametrize("distribution", DISTRIBUTIONS)
def test_the_compiled_allocation_is_the_lower_bounds_module_s(distribution):
    worst_time, worst_weight = 0.0, 0.0
    for means, m in instances(distribution):
        reference = top_m_allocation(means, m, distribution, SIGMA)
        weights = weights_of(means, m, distribution)
        assert np.all(weights > 0.0) and weights.sum() == pytest.approx(1.0, abs=1e-12)
        found = characteristic_time(means, m, weights, distribution)
        worst_time = max(worst_time, abs(found / reference.time - 1.0))
        worst_weight = max(worst_weight, float(np.max(np.abs(weights - reference.weights))))
        np.testing.assert_allclose(found, reference.time, rtol=1e-4, err_msg=f"{means}, m = {m}")
        np.testing.assert_allclose(weights, reference.weights, atol=1e-3, err_msg=f"{means}, m = {m}")
    # the measured accuracy is far better than the assertions above: a regression shows here first
    assert worst_time < 1e-6 and worst_weight < 1e-5


@pytest.mark.parametrize("distribution", DISTRIBUTIONS)
def test_the_barrier_method_at_m_1_is_the_exact_best_arm_allocation(distribution):
    """``top_m_weights`` dispatches m = 1 to ``optimal_weights``; its barrier method, run at m = 1, meets that exact
    computation (GK 2016 Theorem 5, to machine precision) within 1e-8."""
    family = float(_stopping.DISTRIBUTIONS.index(distribution))
    rng = np.random.default_rng(7)
    for _ in range(40):
        k = int(rng.integers(2, 21))
        mu = np.sort(rng.uniform(0.02, 0.98, k))[::-1].copy()
        exact, ours = np.zeros(k), np.zeros(k)
        optimal_weights(mu, family, SIGMA, exact, np.zeros(k))
        np.testing.assert_array_equal(weights_of(mu, 1, distribution), exact)
        interior_point(mu, 1, family, SIGMA, ours)
        np.testing.assert_allclose(ours, exact, atol=1e-8, rtol=1e-6)


@pytest.mark.parametrize("distribution", DISTRIBUTIONS)
def test_top_k_minus_1_is_the_best_arm_allocation_of_the_mirrored_means(distribution):
    """Top-(K-1) identification is finding the worst arm: the best arm of -mu (Gaussian) or 1 - mu (Bernoulli,
    d(1 - p, 1 - q) = d(p, q)), whose allocation ``optimal_weights`` computes exactly."""
    family = float(_stopping.DISTRIBUTIONS.index(distribution))
    rng = np.random.default_rng(8)
    for _ in range(30):
        k = int(rng.integers(3, 16))
        mu = rng.uniform(0.02, 0.98, k)
        exact = np.zeros(k)
        optimal_weights(1.0 - mu if distribution == "bernoulli" else -mu, family, SIGMA, exact, np.zeros(k))
        np.testing.assert_allclose(weights_of(mu, k - 1, distribution), exact, atol=1e-8, rtol=1e-6)


def test_a_symmetric_instance_by_hand():
    """Gaussian means (1, 1, 0, 0), sigma = 1, m = 2: by symmetry w* = 1/4 each, and each pair costs
    ``w_i w_j / (w_i + w_j) (1 - 0)^2 / 2 = 1/16``: T* = 16."""
    weights = weights_of([1.0, 0.0, 1.0, 0.0], 2, "gaussian", 1.0)
    np.testing.assert_allclose(weights, 0.25, rtol=1e-9)
    assert characteristic_time([1.0, 0.0, 1.0, 0.0], 2, weights, "gaussian", 1.0) == pytest.approx(16.0, rel=1e-9)


def test_a_tie_at_the_boundary_spreads_the_weight_over_its_arms_and_the_edges_are_clamped():
    np.testing.assert_array_equal(weights_of([0.6, 0.5, 0.2, 0.5], 2), [0.0, 0.5, 0.0, 0.5])
    np.testing.assert_array_equal(weights_of([0.6, 0.2, 0.6, 0.6], 2), [1 / 3, 0.0, 1 / 3, 1 / 3])
    np.testing.assert_array_equal(weights_of([0.3, 0.3, 0.3, 0.3, 0.3], 3), [0.2] * 5)
    np.testing.assert_array_equal(weights_of([0.6, 0.5, 0.5, 0.6], 1), [0.5, 0.0, 0.0, 0.5])  # m = 1: the same
    # a tie inside the answer or outside it is no tie at the boundary: both arms get the same weight
    inside = weights_of([0.7, 0.7, 0.4, 0.2], 2, "gaussian")
    assert inside[0] == inside[1] and np.all(inside > 0.0)
    # means of 0 and 1: the allocation of the means clamped to [EDGE, 1 - EDGE]
    edges = weights_of([1.0, 1.0, 0.5, 0.0, 0.3], 2)
    clamped = [1 - EDGE, 1 - EDGE, 0.5, EDGE, 0.3]
    np.testing.assert_allclose(edges, top_m_allocation(clamped, 2).weights, atol=1e-5)
    assert np.all(np.isfinite(edges)) and edges.sum() == pytest.approx(1.0)


@pytest.mark.parametrize("distribution", DISTRIBUTIONS)
def test_permuting_the_means_permutes_the_weights(distribution):
    """Label invariance, exactly: the allocation depends on the multiset of means, not on the arms' order (with
    ties among the means too)."""
    rng = np.random.default_rng(9)
    for trial in range(30):
        k = int(rng.integers(4, 13))
        means = rng.uniform(0.05, 0.95, k)
        if trial % 2:
            means = np.round(means, 1)  # equal means, at the boundary or not
        m = int(rng.integers(1, k))
        weights = weights_of(means, m, distribution)
        for _ in range(3):
            perm = rng.permutation(k)
            np.testing.assert_array_equal(weights_of(means[perm], m, distribution), weights[perm])


def test_the_close_divergence_is_accurate_where_the_plain_one_cancels():
    mpmath.mp.dps = 40
    rng = np.random.default_rng(10)
    for _ in range(300):
        q = float(rng.uniform(1e-6, 1.0 - 1e-6))
        p = q * (1.0 + float(rng.choice([-1.0, 1.0])) * 10.0 ** float(rng.uniform(-12.0, -0.3)))
        if not 0.0 < p < 1.0:
            continue
        exact = float(mpmath.mpf(p) * mpmath.log(mpmath.mpf(p) / q)
                      + (1 - mpmath.mpf(p)) * mpmath.log((1 - mpmath.mpf(p)) / (1 - mpmath.mpf(q))))
        assert close_divergence(p, q, _stopping.BERNOULLI, 1.0) == pytest.approx(exact, rel=1e-11)
    assert close_divergence(0.3, 0.8, _stopping.GAUSSIAN, 2.0) == _stopping.divergence(0.3, 0.8, _stopping.GAUSSIAN,
                                                                                       2.0)
