"""Batched allocation: c pulls in one call agree in distribution with c single pulls, and are charged alike."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from scipy import stats

from bandit_gym.agents import Uniform
from bandit_gym.envs import ThresholdingBanditEnv, ThresholdingBanditVectorEnv
from bandit_gym.wrappers import RecordAnytimeRegretVector

MEANS = [0.3, 0.55, 0.8]
ALLOCATION = [4, 7, 0]


def chi_square_against_binomial(sums: np.ndarray, n: int, p: float) -> float:
    observed = np.bincount(sums.astype(int), minlength=n + 1)
    expected = stats.binom.pmf(np.arange(n + 1), n, p) * len(sums)
    keep = expected > 5  # pool the sparse tail into one cell
    obs, exp = observed[keep], expected[keep]
    if not keep.all():
        obs, exp = np.r_[obs, observed[~keep].sum()], np.r_[exp, expected[~keep].sum()]
    return stats.chisquare(obs, exp * obs.sum() / exp.sum()).pvalue


@pytest.mark.slow
def test_allocation_and_single_pulls_agree_with_the_binomial() -> None:
    n = 20_000
    batched = ThresholdingBanditVectorEnv(num_envs=n, means=MEANS, budget=20)
    batched.reset(seed=0)
    obs = batched.allocate(np.tile(ALLOCATION, (n, 1)))
    single = ThresholdingBanditVectorEnv(num_envs=n, means=MEANS, budget=20)
    single.reset(seed=1)
    for arm, count in enumerate(ALLOCATION):
        for _ in range(count):
            step_obs, *_ = single.step(np.tile([arm, 0, 0, 0], (n, 1)))
    for arm, count in enumerate(ALLOCATION[:2]):  # 4 tests at level 1e-4: family-wise false alarm 4e-4
        assert chi_square_against_binomial(obs["sums"][:, arm], count, MEANS[arm]) > 1e-4
        assert chi_square_against_binomial(step_obs["sums"][:, arm], count, MEANS[arm]) > 1e-4
    np.testing.assert_array_equal(obs["counts"], step_obs["counts"])
    np.testing.assert_array_equal(obs["budget_left"], step_obs["budget_left"])


def test_gaussian_allocation_moments() -> None:
    n = 20_000
    venv = ThresholdingBanditVectorEnv(num_envs=n, means=[1.0, -1.0], threshold=0.0, arm_distribution="gaussian",
                                       sigma=2.0, budget=50)
    venv.reset(seed=0)
    obs = venv.allocate(np.tile([9, 1], (n, 1)))
    sums = obs["sums"][:, 0]
    assert abs(sums.mean() - 9.0) < 4 * 6.0 / np.sqrt(n)
    assert abs(sums.std() - 6.0) < 0.15  # sd of a sum of 9 N(1, 4) draws is 6
    np.testing.assert_allclose(obs["means"][:, 0], sums / 9, rtol=1e-6)


def test_allocation_is_charged_to_the_budget_and_marks_last_arm() -> None:
    env = ThresholdingBanditEnv(means=MEANS, budget=12)
    env.reset(seed=0)
    obs = env.allocate([4, 7, 0])
    assert obs["budget_left"][0] == 1 and obs["last_arm"][0] == -2 and obs["counts"].tolist() == [4, 7, 0]
    agent = Uniform()
    agent.reset(seed=0)
    action = agent.act(obs)
    np.testing.assert_array_equal(action[1:], (obs["means"] >= 0.5).astype(int))  # whole answer recomputed
    env.step(action)
    _, _, term, _, _ = env.step(action)
    assert term
    with pytest.raises(ValueError, match="after the episode terminated"):
        env.allocate([0, 0, 0])


@pytest.mark.parametrize(
    ("allocation", "error", "match"),
    [([1, 1], ValueError, r"shape \(K,\) = \(3,\)"), ([1.0, 0, 0], TypeError, "integers"),
     ([-1, 0, 0], ValueError, ">= 0"), ([5, 5, 3], ValueError, "asks for 13 pulls but only 12 are left")],
)
def test_bad_allocations(allocation: list, error: type, match: str) -> None:
    env = ThresholdingBanditEnv(means=MEANS, budget=12)
    env.reset(seed=0)
    with pytest.raises(error, match=match):
        env.allocate(allocation)


def test_anytime_checkpoints_passed_by_an_allocation_get_the_next_answer() -> None:
    venv = RecordAnytimeRegretVector(
        gym.make_vec("ThresholdingBandit-Tao2019Setup1-v0", num_envs=2, vectorization_mode="vector_entry_point",
                     budget=20), budgets=[1, 5, 10, 20])
    venv.reset(seed=0)
    all_below = np.zeros((2, 11), dtype=np.int64)
    venv.step(all_below)  # answer from 0 samples (no checkpoint)
    venv.unwrapped.allocate(np.full((2, 10), 1))  # 10 pulls: passes checkpoints 1, 5 and 10
    all_above = np.ones((2, 11), dtype=np.int64)
    all_above[:, 0] = 10  # stop
    _, _, term, _, info = venv.step(all_above)
    assert term.all()
    assert info["anytime"]["regret"].tolist() == [[5.0] * 4] * 2
