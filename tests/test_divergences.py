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
    mixture_boundary,
    pair_statistic,
    shifted_transportation_cost,
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


def test_the_shifted_cost_is_the_least_cost_of_an_epsilon_overtake() -> None:
    # w_i d(mu_i, x) + w_j d(mu_j, x + eps), least over x by brute force on a fine grid
    for mui, muj, eps in ((0.8, 0.3, 0.1), (0.5, 0.55, 0.1), (0.9, 0.0, 0.2), (1.0, 0.7, 0.05), (0.3, 0.1, 0.6)):
        x = np.linspace(0.0, 1.0 - eps, 400_001)
        with np.errstate(divide="ignore", invalid="ignore"):
            grid = np.nan_to_num(3.0 * kl_bernoulli(mui, x) + 2.0 * kl_bernoulli(muj, x + eps), nan=np.inf)
        want = float(np.min(grid)) if muj < mui + eps else 0.0
        got = shifted_transportation_cost(kl_bernoulli, 3.0, 2.0, mui, muj, eps)
        assert got == pytest.approx(want, rel=1e-6, abs=1e-9), (mui, muj, eps)
    gaussian = divergence("gaussian", 0.5)
    assert shifted_transportation_cost(gaussian, 3.0, 2.0, 0.2, 0.4, 0.3) == pytest.approx(
        0.1**2 / (2 * 0.25 * (1 / 3 + 1 / 2)), rel=1e-9)
    assert shifted_transportation_cost(kl_bernoulli, 3.0, 2.0, 0.8, 0.3, 0.0) == transportation_cost(
        kl_bernoulli, 3.0, 2.0, 0.8, 0.3)
    assert shifted_transportation_cost(kl_bernoulli, 3.0, 2.0, 0.3, 0.5, 0.1) == 0.0  # j already beats i by eps


def test_the_krichevsky_trofimov_bound_holds_for_every_count() -> None:
    """``P_KT(a, b) >= (a / n)^a (b / n)^b / (2 sqrt(n))`` for every a + b = n <= 2000 (the Bernoulli mixture
    boundary's lemma), with equality at n = 1."""
    from scipy.special import gammaln, xlogy

    for n in range(1, 2001):
        a = np.arange(n + 1, dtype=np.float64)
        b = n - a
        log_kt = gammaln(a + 0.5) + gammaln(b + 0.5) - np.log(np.pi) - gammaln(n + 1.0)
        log_bound = xlogy(a, a / n) + xlogy(b, b / n) - np.log(2.0) - 0.5 * np.log(n)
        assert np.all(log_kt >= log_bound - 1e-12), n


def test_the_normal_mixture_is_a_mean_one_martingale_bound() -> None:
    """The Gaussian boundary's martingale ``(1 + n)^(-1/2) exp(S^2 / (2 (1 + n)))`` is the N(0, 1) mixture of
    ``exp(lambda S - lambda^2 n / 2)`` (numerical integration), and the boundary is where it reaches
    ``e^level``."""
    from scipy import integrate

    for n, total in ((1, 0.7), (10, -3.0), (250, 20.0)):
        mixed = integrate.quad(lambda lam, n=n, total=total: np.exp(lam * total - lam**2 * (n + 1) / 2)
                               / np.sqrt(2 * np.pi), -40, 40, epsabs=0, epsrel=1e-12)[0]
        assert mixed == pytest.approx(np.exp(total**2 / (2 * (1 + n))) / np.sqrt(1 + n), rel=1e-9)
    level, n = 5.0, 40.0
    b = mixture_boundary([n], level, "gaussian")
    # at n d(mu_hat, mu) = b: ln M = n / (1 + n) * b - ln(1 + n) / 2 = level
    assert n / (1 + n) * b - 0.5 * np.log1p(n) == pytest.approx(level, rel=1e-12)
    assert mixture_boundary([n], level, "bernoulli") == pytest.approx(level + 0.5 * np.log(n) + np.log(2.0))
    assert mixture_boundary([4.0, 9.0], level, "bernoulli") == pytest.approx(level + np.log(6.0) + 2 * np.log(2.0))
    with pytest.raises(ValueError, match="counts"):
        mixture_boundary([0.0], level)


@pytest.mark.slow
def test_the_mixture_boundaries_hold_at_their_level_over_time() -> None:
    """Ville's inequality in action: over 4000 runs of 4000 pulls of one arm, the fraction that ever crosses the
    boundary at level ln(1 / delta) is at most delta (an exact 99.9% Clopper-Pearson upper bound below delta would
    be too strong: the bound is loose; the observed fraction is checked to be below delta)."""
    rng = np.random.default_rng(11)
    delta, runs, horizon = 0.1, 4000, 4000
    n = np.arange(1, horizon + 1, dtype=np.float64)
    for distribution, mu in (("bernoulli", 0.3), ("gaussian", 0.0)):
        if distribution == "bernoulli":
            draws = (rng.random((runs, horizon)) < mu).astype(np.float64)
            means = np.cumsum(draws, axis=1) / n
            stat = n * kl_bernoulli(means, mu)
            bound = np.log(1 / delta) + 0.5 * np.log(n) + np.log(2.0)
        else:
            means = np.cumsum(rng.normal(mu, 1.0, (runs, horizon)), axis=1) / n
            stat = n * kl_gaussian(means, mu, 1.0)
            bound = (np.log(1 / delta) + 0.5 * np.log1p(n)) * (1 + n) / n
        crossed = np.mean(np.any(stat > bound, axis=1))
        assert crossed <= delta, (distribution, crossed)


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


@pytest.mark.parametrize(("family", "sigma"), [(BERNOULLI, 1.0), (GAUSSIAN, 0.5)])
@pytest.mark.parametrize("epsilon", [0.05, 0.3])
def test_numba_shifted_statistics_are_the_reference(family: float, sigma: float, epsilon: float) -> None:
    d = divergence("bernoulli") if family == BERNOULLI else divergence("gaussian", sigma)
    for counts, means in pulls_and_means():
        for i, j in itertools.permutations(range(3), 2):
            want = pair_statistic(d, counts, means, i, j, epsilon)
            got = _stopping.shifted_cost(counts, means, i, j, epsilon, family, sigma)
            assert got == pytest.approx(want, rel=1e-7, abs=1e-10), (counts, means, i, j)
        for answer in ([1, 0, 0], [0, 1, 0], [1, 0, 1]):
            got = _stopping.shifted_glr(counts, means, np.array(answer), epsilon, family, sigma)
            assert got == pytest.approx(glr_statistic(d, counts, means, answer, epsilon), rel=1e-7, abs=1e-10)


def test_numba_mixture_boundaries_are_the_reference() -> None:
    for family, name in ((BERNOULLI, "bernoulli"), (GAUSSIAN, "gaussian")):
        for ni, nj, level in itertools.product([1.0, 2.0, 37.0, 1e6], [1.0, 500.0], [0.5, 14.0]):
            assert _stopping.mixture_boundary(ni, nj, level, family) == pytest.approx(
                mixture_boundary([ni, nj], level, name), rel=1e-13)
            assert _stopping.arm_mixture_boundary(ni, level, family) == pytest.approx(
                mixture_boundary([ni], level, name), rel=1e-13)


# -------------------------------------------------------------------------------------------------------- JAX
@pytest.fixture(scope="module")
def jax_forms() -> object:
    pytest.importorskip("jax")
    from bandit_gym.jax import divergences
    from bandit_gym.jax.agents import _stopping as jax_stopping

    return divergences, jax_stopping


def exact_log1p_minus(x: float) -> float:
    """``ln(1 + x) - x`` in 50-digit arithmetic."""
    mpmath.mp.dps = 50
    return float(mpmath.log1p(mpmath.mpf(x)) - mpmath.mpf(x))


def test_jax_divergence_is_the_reference_to_float32_precision(jax_forms: object) -> None:
    """The one JAX Bernoulli divergence, on every pair of the float32 grid (q at 0 and 1 included: infinite unless
    p = q), from the means alone and from a difference and complements given exactly (as the oracle and the GLR
    statistic give them); the Gaussian one; and ``log1p_minus`` on both sides of its series' range."""
    import jax.numpy as jnp

    divergences, _ = jax_forms  # type: ignore[misc]
    pairs = np.array(list(itertools.product(MEANS32, MEANS32)), dtype=np.float32).astype(np.float64)
    p, q = pairs[:, 0], pairs[:, 1]  # the points float32 holds, in float64
    with np.errstate(divide="ignore"):
        want = kl_bernoulli(p, q)
    tolerance = {"rtol": 1e-5, "atol": 1e-6}
    p32, q32 = jnp.asarray(p, jnp.float32), jnp.asarray(q, jnp.float32)
    np.testing.assert_allclose(np.asarray(divergences.bernoulli(p32, q32)), want, **tolerance)
    np.testing.assert_allclose(np.asarray(divergences.divergence(p32, q32, False, 1.0)), want, **tolerance)
    given = (jnp.asarray(x, jnp.float32) for x in (p - q, 1 - p, 1 - q))  # each rounded once, from float64
    np.testing.assert_allclose(np.asarray(divergences.bernoulli(p32, q32, *given)), want, **tolerance)
    np.testing.assert_allclose(np.asarray(divergences.divergence(p32, q32, True, 0.5)), kl_gaussian(p, q, 0.5),
                               **tolerance)
    # two means one float32 step apart, where a float32 subtraction of the two logarithms would cancel
    close = np.array([[0.5, 0.5 + 2**-23], [0.3, 0.3 + 2**-24], [1e-3, 1e-3 * (1 + 2**-22)], [0.9, 0.9 - 2**-24]])
    close = close.astype(np.float32).astype(np.float64)
    got = divergences.bernoulli(jnp.asarray(close[:, 0], jnp.float32), jnp.asarray(close[:, 1], jnp.float32))
    np.testing.assert_allclose(np.asarray(got), [exact_kl(a, b) for a, b in close], rtol=1e-4)
    xs = np.array([-0.9, -0.5, -0.4999, -0.25, -1e-3, -1e-7, 0.0, 1e-7, 1e-3, 0.25, 0.4999, 0.5, 2.0, 1e3],
                  dtype=np.float32).astype(np.float64)
    got = np.asarray(divergences.log1p_minus(jnp.asarray(xs, jnp.float32)))
    np.testing.assert_allclose(got, [exact_log1p_minus(x) for x in xs], rtol=2e-6, atol=1e-30)


def test_the_jax_agents_use_the_one_divergence(jax_forms: object) -> None:
    """No JAX module but ``bandit_gym.jax.divergences`` writes a divergence or ``ln(1 + x) - x`` of its own: the
    agents' names for them are that module's functions."""
    import importlib
    import pathlib
    import re

    divergences, jax_stopping = jax_forms  # type: ignore[misc]
    assert jax_stopping.divergence is divergences.divergence
    folder = pathlib.Path(divergences.__file__).parent
    own = re.compile(r"^\s*def (\w*divergence|kl_bernoulli|\w*bernoulli_from|bernoulli|\w*log1p_minus)\(", re.M)
    written = {(path.relative_to(folder).as_posix(), name) for path in folder.rglob("*.py")
               if path.name != "divergences.py" for name in own.findall(path.read_text())}
    assert not written
    for module in ("_oracle", "optkg", "kl_ucb"):
        names = vars(importlib.import_module(f"bandit_gym.jax.agents.{module}"))
        for name in ("divergence", "bernoulli", "log1p_minus"):
            assert names.get(name, getattr(divergences, name)) is getattr(divergences, name)


@pytest.mark.parametrize("gaussian", [False, True])
def test_jax_transportation_cost_and_glr_are_the_reference(jax_forms: object, gaussian: bool) -> None:
    _, jax_stopping = jax_forms  # type: ignore[misc]
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
