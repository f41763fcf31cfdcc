"""Simulated regret against values computed exactly: Uniform's binomial tails and a fixed arm's pseudo-regret."""

from __future__ import annotations

import itertools

import gymnasium as gym
import numpy as np
import pytest
from scipy import stats

from bandit_gym.agents import Uniform
from bandit_gym.envs.threshold import DEFAULT_DISTRIBUTIONS
from bandit_gym.instances import TAO2019_SETUPS
from bandit_gym.metrics import survival_from_distribution, threshold_pseudo_regret
from bandit_gym.rollout import play_vector
from bandit_gym.wrappers import RecordEpisodeRegretVector

Z = 3.89  # two-sided 99.99% normal quantile: a correct implementation fails one check in 10^4


def uniform_error_probabilities(means: np.ndarray, theta: float, budget: int,
                                extra: np.ndarray | None = None) -> np.ndarray:
    """P(arm i misclassified) under round-robin: arm i gets n_i pulls and is answered 1 iff S_i/n_i >= theta.
    The ``budget mod K`` arms ``extra`` (the first ones by default, round robin in index order) get one pull more."""
    k = len(means)
    extra = np.arange(budget % k) if extra is None else extra
    pulls = budget // k + np.isin(np.arange(k), extra)
    errors = np.empty(k)
    for i, (mu, n) in enumerate(zip(means, pulls, strict=False)):
        s_min = int(np.flatnonzero(np.arange(n + 1) / n >= theta)[0])  # smallest S with S/n >= theta
        above = stats.binom.sf(s_min - 1, n, mu)                        # P(S >= s_min)
        errors[i] = 1.0 - above if mu >= theta else above
    return errors


def uniform_exact(means: np.ndarray, theta: float, budget: int) -> tuple[float, float]:
    """Uniform's exact aggregate regret and error (any arm wrong) with round robin in a uniformly random arm
    order: every set of ``budget mod K`` arms is equally likely to get the extra pulls (all sets enumerated)."""
    k = len(means)
    sets = list(itertools.combinations(range(k), budget % k))
    regret = error = 0.0
    for chosen in sets:
        e = uniform_error_probabilities(means, theta, budget, np.array(chosen, dtype=np.int64))
        regret += e.sum() / len(sets)
        error += (1.0 - np.prod(1.0 - e)) / len(sets)
    return regret, error


@pytest.mark.slow
@pytest.mark.parametrize("setup", [1, 3])
def test_uniform_aggregate_regret_matches_binomial_tails(setup: int) -> None:
    means = np.array(TAO2019_SETUPS[setup])
    budgets = [10, 105, 500, 1000]
    n = 20_000
    venv = gym.make_vec(f"ThresholdingBandit-Tao2019Setup{setup}-v0", num_envs=n,
                        vectorization_mode="vector_entry_point", budget=1000)
    result = play_vector(venv, Uniform(), seed=2024 + setup, budgets=budgets)
    for j, budget in enumerate(budgets):
        regret, error = uniform_exact(means, 0.5, budget)  # round robin in a random order per copy (tie rule)
        for key, exact in (("anytime_regret", regret), ("anytime_error", error)):
            sample = result[key][:, j]
            se = sample.std(ddof=1) / np.sqrt(n)
            assert abs(sample.mean() - exact) < Z * se + 1e-12, (budget, key, sample.mean(), exact)
    assert np.array_equal(result["regret"], result["anytime_regret"][:, -1])


def test_exact_uniform_helper_on_a_hand_case() -> None:
    # one arm of mean 0.4 pulled twice against theta 0.5: wrong iff S >= 1, probability 1 - 0.6^2
    e = uniform_error_probabilities(np.array([0.4, 0.9]), 0.5, 4)
    assert e[0] == pytest.approx(1 - 0.6**2) and e[1] == pytest.approx(0.1**2)
    # T = 3: one arm gets 2 pulls, the other 1, each with probability 1/2 in a random order
    one, two = {0: 1 - 0.6, 1: 0.1}, {0: 1 - 0.6**2, 1: 0.1**2}  # P(wrong) after 1 and after 2 pulls
    regret, error = uniform_exact(np.array([0.4, 0.9]), 0.5, 3)
    assert regret == pytest.approx(0.5 * (two[0] + one[1]) + 0.5 * (one[0] + two[1]))
    both_right = 0.5 * (1 - two[0]) * (1 - one[1]) + 0.5 * (1 - one[0]) * (1 - two[1])
    assert error == pytest.approx(1 - both_right)


def fixed_arm_regret(env_id: str, arm: int, n: int, seed: int, **kwargs: object) -> np.ndarray:
    venv = RecordEpisodeRegretVector(gym.make_vec(env_id, num_envs=n, vectorization_mode="vector_entry_point",
                                                  **kwargs))
    venv.reset(seed=seed)
    actions = np.full(n, arm)
    while True:
        _, _, term, _, info = venv.step(actions)
        if term.all():
            return info["bandit"]["regret"]


@pytest.mark.parametrize("arm", [0, 1, 2])
def test_fixed_arm_pseudo_regret_is_exact_under_cyclic_thresholds(arm: int) -> None:
    F = survival_from_distribution(DEFAULT_DISTRIBUTIONS)
    exact = 100 / 5 * (F.max(axis=0) - F[arm]).sum()
    regret = fixed_arm_regret("ThresholdBandit-v0", arm, 50, 0, thresholds="cyclic", horizon=100)
    np.testing.assert_allclose(regret, exact, rtol=1e-12)
    assert threshold_pseudo_regret(F, np.full(100, arm), np.tile(np.arange(1, 6), 20)) == pytest.approx(exact)


@pytest.mark.parametrize("feedback", ["uncensored", "censored"])
def test_fixed_arm_pseudo_regret_matches_expectation_under_iid_thresholds(feedback: str) -> None:
    F = survival_from_distribution(DEFAULT_DISTRIBUTIONS)
    T, n = 200, 4000
    for arm in range(3):
        exact = T * (F.max(axis=0) - F[arm]).mean()
        regret = fixed_arm_regret("ThresholdBandit-v0", arm, n, arm, horizon=T, feedback=feedback)
        se = regret.std(ddof=1) / np.sqrt(n)
        assert abs(regret.mean() - exact) < Z * se, (arm, regret.mean(), exact)
