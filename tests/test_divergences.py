"""The information quantities written once (``bandit_gym.divergences``): the reference against exact values, and
every compiled form (numba, JAX) against the reference point by point, over a grid with means 0 and 1, equal means
and single pulls."""

from __future__ import annotations

import itertools

import mpmath
import numpy as np
import pytest

from bandit_gym.agents.best_arm import _stopping
from bandit_gym.divergences import (
    divergence,
    glr_statistic,
    kl_bernoulli,
    kl_gaussian,
    pair_statistic,
    transportation_cost,
)

#: means on and near the edges of [0, 1], equal and nearly equal ones
MEANS = [0.0, 1e-9, 1e-3, 0.1, 0.3, 0.5, 0.5 + 1e-6, 0.7, 0.9, 1 - 1e-3, 1 - 1e-9, 1.0]
INSIDE = [q for q in MEANS if 0.0 < q < 1.0]
#: the same in float32: the nearest means to 1/2 and to 1 that float32 tells apart from them
MEANS32 = [0.0, 1e-9, 1e-3, 0.1, 0.3, 0.5, 0.5 + 2**-23, 0.7, 0.9, 1 - 1e-3, 1 - 2**-24, 1.0]
INSIDE32 = [q for q in MEANS32 if 0.0 < q < 1.0]
BERNOULLI, GAUSSIAN = _stopping.BERNOULLI, _stopping.GAUSSIAN


def exact_kl(p: float, q: float) -> float:
    """The Bernoulli divergence in 50-digit arithmetic."""
    mpmath.mp.dps = 50
    p_, q_ = mpmath.mpf(p), mpmath.mpf(q)
    value = (p_ * mpmath.log(p_ / q_) if p else 0) + ((1 - p_) * mpmath.log((1 - p_) / (1 - q_)) if p < 1 else 0)
    return float(value)


def test_the_reference_is_the_exact_divergence_and_infinite_off_the_support() -> None:
    for p, q in itertools.product(MEANS, INSIDE):
        assert kl_bernoulli(p, q) == pytest.approx(exact_kl(p, q), rel=1e-9, abs=1e-15)
    assert kl_bernoulli(0.0, 0.0) == 0.0 and kl_bernoulli(1.0, 1.0) == 0.0 and kl_bernoulli(0.3, 0.3) == 0.0
    assert np.isinf(kl_bernoulli(0.3, 0.0)) and np.isinf(kl_bernoulli(0.3, 1.0))
    assert kl_gaussian(0.2, 0.7, sigma=0.5) == pytest.approx(0.5)
    assert divergence("gaussian", 0.5)(0.2, 0.7) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="distribution"):
        divergence("poisson")


def test_the_transportation_cost_is_the_least_cost_of_a_common_mean() -> None:
    # w1 d(mu1, x) + wa d(mua, x) is least at the weighted mean; and 0 for equal means or no weight
    x = np.linspace(0.3, 0.8, 100_001)
    least = np.min(3.0 * kl_bernoulli(0.8, x) + 2.0 * kl_bernoulli(0.3, x))
    assert transportation_cost(kl_bernoulli, 3.0, 2.0, 0.8, 0.3) == pytest.approx(least, rel=1e-9)
    assert transportation_cost(kl_bernoulli, 3.0, 2.0, 0.4, 0.4) == 0.0
    assert transportation_cost(kl_bernoulli, 0.0, 0.0, 0.8, 0.3) == 0.0


def test_the_glr_statistic_is_the_least_pair_statistic_and_refuses_an_empty_answer() -> None:
    counts, means = [40, 30, 20], [0.6, 0.4, 0.5]
    assert glr_statistic(kl_bernoulli, counts, means, [1, 0, 0]) == min(
        pair_statistic(kl_bernoulli, counts, means, 0, 1), pair_statistic(kl_bernoulli, counts, means, 0, 2))
    assert glr_statistic(kl_bernoulli, counts, [0.6, 0.6, 0.5], [1, 0, 0]) == 0.0  # a tie never stops
    assert glr_statistic(kl_bernoulli, [40, 0, 20], means, [1, 0, 0]) == 0.0  # an arm never pulled
    with pytest.raises(ValueError, match="answer must hold some arms"):
        glr_statistic(kl_bernoulli, counts, means, [1, 1, 1])


# ------------------------------------------------------------------------------------------------------ numba
def test_numba_divergence_is_the_reference_on_the_grid() -> None:
    for p, q in itertools.product(MEANS, INSIDE):
        assert _stopping.divergence(p, q, BERNOULLI, 1.0) == pytest.approx(float(kl_bernoulli(p, q)), rel=1e-9,
                                                                            abs=1e-15)
    for p, q, sigma in itertools.product([-1.0, 0.0, 0.5, 2.0], [0.0, 0.5, 3.0], [0.1, 1.0]):
        assert _stopping.divergence(p, q, GAUSSIAN, sigma) == pytest.approx(float(kl_gaussian(p, q, sigma)),
                                                                             rel=1e-15)


def pulls_and_means() -> list[tuple[np.ndarray, np.ndarray]]:
    """Three arms: single pulls, unequal pulls, no pull of an arm; means inside (0, 1) with ties."""
    means = [(0.7, 0.3, 0.5), (0.5, 0.5, 0.2), (1 - 1e-3, 1e-3, 0.5), (0.5 + 1e-6, 0.5, 0.1)]
    counts = [(1, 1, 1), (40, 3, 200), (1, 0, 5), (7, 7, 7)]
    return [(np.array(n, dtype=np.float64), np.array(m)) for n, m in itertools.product(counts, means)]


@pytest.mark.parametrize(("family", "sigma"), [(BERNOULLI, 1.0), (GAUSSIAN, 0.5)])
def test_numba_transportation_cost_and_glr_are_the_reference(family: float, sigma: float) -> None:
    d = divergence("bernoulli") if family == BERNOULLI else divergence("gaussian", sigma)
    for counts, means in pulls_and_means():
        for i, j in itertools.permutations(range(3), 2):
            want = pair_statistic(d, counts, means, i, j)
            assert _stopping.transportation_cost(counts, means, i, j, family, sigma) == pytest.approx(
                want, rel=1e-9, abs=1e-12)
        for answer in ([1, 0, 0], [0, 1, 0], [1, 0, 1]):
            got = _stopping.glr(counts, means, np.array(answer), family, sigma)
            assert got == pytest.approx(glr_statistic(d, counts, means, answer), rel=1e-9, abs=1e-12)


# -------------------------------------------------------------------------------------------------------- JAX
@pytest.fixture(scope="module")
def jax_forms() -> object:
    pytest.importorskip("jax")
    from bandit_gym.jax.agents import _oracle, kl_ucb
    from bandit_gym.jax.agents import _stopping as jax_stopping

    return _oracle, jax_stopping, kl_ucb


def test_jax_divergences_are_the_reference_to_float32_precision(jax_forms: object) -> None:
    import jax.numpy as jnp

    _oracle, jax_stopping, kl_ucb = jax_forms  # type: ignore[misc]
    pairs = np.array(list(itertools.product(MEANS32, INSIDE32)), dtype=np.float32).astype(np.float64)
    p, q = pairs[:, 0], pairs[:, 1]  # the points float32 holds, in float64
    want = kl_bernoulli(p, q)
    p32, q32 = jnp.asarray(p, jnp.float32), jnp.asarray(q, jnp.float32)
    tolerance = {"rtol": 1e-5, "atol": 1e-6}
    np.testing.assert_allclose(np.asarray(jax_stopping.divergence(p32, q32, False, 1.0)), want, **tolerance)
    inside = (p > 0) & (p < 1)  # the oracle's form takes means and complements above 0, each computed directly
    pc, qc, diff = (jnp.asarray(x, jnp.float32) for x in (1 - p[inside], 1 - q[inside], p[inside] - q[inside]))
    oracle = _oracle.divergence(p32[inside], pc, q32[inside], qc, diff, False, 1.0)
    np.testing.assert_allclose(np.asarray(oracle), want[inside], **tolerance)
    right = p <= q  # KL-UCB's form: q at or right of p
    np.testing.assert_allclose(np.asarray(kl_ucb.kl_bernoulli(p32[right], q32[right])), want[right], **tolerance)
    np.testing.assert_allclose(np.asarray(jax_stopping.divergence(p32, q32, True, 0.5)), kl_gaussian(p, q, 0.5),
                               **tolerance)


@pytest.mark.parametrize("gaussian", [False, True])
def test_jax_transportation_cost_and_glr_are_the_reference(jax_forms: object, gaussian: bool) -> None:
    _, jax_stopping, _ = jax_forms  # type: ignore[misc]
    d = divergence("gaussian", 0.5) if gaussian else divergence("bernoulli")
    for counts, means in pulls_and_means():
        means32 = means.astype(np.float32)
        for i, j in itertools.permutations(range(3), 2):
            want = pair_statistic(d, counts, means32.astype(np.float64), i, j)
            got = float(jax_stopping.transportation_cost(counts, means32, i, j, gaussian, 0.5))
            assert got == pytest.approx(want, rel=1e-4, abs=1e-5)
        for leader in range(3):
            answer = np.arange(3) == leader
            want = glr_statistic(d, counts, means32.astype(np.float64), answer)
            got = float(jax_stopping.glr_statistic(counts, means32, leader, gaussian, 0.5))
            assert got == pytest.approx(want, rel=1e-4, abs=1e-5)
