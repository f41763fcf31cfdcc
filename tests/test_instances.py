"""Instances drawn per episode, for training across instances: budgets (``BudgetRange``), means."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from scipy import stats

import bandit_gym  # noqa: F401
from bandit_gym.agents import Uniform
from bandit_gym.instances import BudgetRange, RandomSurvival, SpreadMeans, UniformMeans
from bandit_gym.rollout import play_compiled, play_episode, play_vector
from bandit_gym.wrappers import RecordAnytimeRegret

PURE = ["ThresholdingBandit-v0", "BestArmIdentification-v0", "TopKIdentification-v0", "CorrelatedBestArm-v0"]


def first_budgets(env_id: str, sampler: BudgetRange, n: int, seed: int) -> np.ndarray:
    venv = gym.make_vec(env_id, num_envs=n, vectorization_mode="vector_entry_point", budget=sampler)
    obs, _ = venv.reset(seed=seed)
    return obs["budget_left"][:, 0].astype(np.int64)


def test_uniform_budgets_follow_their_law() -> None:
    budgets = first_budgets("ThresholdingBandit-v0", BudgetRange(10, 19), 20_000, seed=0)
    counts = np.bincount(budgets - 10, minlength=10)
    assert budgets.min() == 10 and budgets.max() == 19
    assert stats.chisquare(counts).pvalue > 0.001


def test_log_uniform_budgets_follow_their_law() -> None:
    budgets = first_budgets("BestArmIdentification-v0", BudgetRange(100, 10_000, log=True), 20_000, seed=1)
    assert budgets.min() >= 100 and budgets.max() <= 10_000
    # ln T is uniform on [ln 100, ln 10^4] up to the rounding to integers (at most 0.5 / 100 in ln)
    u = (np.log(budgets) - np.log(100)) / (np.log(10_000) - np.log(100))
    assert stats.kstest(u, "uniform").statistic < 0.02
    assert abs(np.mean(budgets < 1000) - 0.5) < 0.02  # as many episodes below 1000 as above


def test_the_budgets_are_seeded_and_every_episode_spends_its_own() -> None:
    a = first_budgets("TopKIdentification-v0", BudgetRange(500, 3000), 64, seed=3)
    b = first_budgets("TopKIdentification-v0", BudgetRange(500, 3000), 64, seed=3)
    assert np.array_equal(a, b) and len(set(a.tolist())) > 10
    venv = gym.make_vec("ThresholdingBandit-v0", num_envs=32, vectorization_mode="vector_entry_point",
                        budget=BudgetRange(20, 200), means=UniformMeans(num_arms=10))
    obs, _ = venv.reset(seed=4)
    drawn = obs["budget_left"][:, 0].copy()
    result = play_vector(venv, Uniform(), seed=4)  # reset with the same seed: the same budgets
    assert np.array_equal(result["pulls"], drawn)


@pytest.mark.parametrize("env_id", PURE)
def test_a_single_env_episode_pulls_its_drawn_budget(env_id: str) -> None:
    env = gym.make(env_id, budget=BudgetRange(30, 60))
    for seed in range(3):
        obs, _ = env.reset(seed=seed)
        drawn = int(obs["budget_left"][0])
        assert 30 <= drawn <= 60
        assert play_episode(env, Uniform(), seed=seed)["pulls"] == drawn
    assert env.observation_space["budget_left"].high[0] == 60


def test_fixed_budget_paths_refuse_or_step_instead() -> None:
    env = gym.make("ThresholdingBandit-v0", budget=BudgetRange(30, 60))
    with pytest.raises(ValueError, match="fixed budget"):
        RecordAnytimeRegret(env, [10, 20]).reset(seed=0)
    for budget, compiled in ((60, True), (BudgetRange(30, 60), False)):  # the kernels play one budget
        venv = gym.make_vec("BestArmIdentification-v0", num_envs=4, vectorization_mode="vector_entry_point",
                            budget=budget, common_random_numbers=True)
        assert (play_compiled(venv, Uniform(), seed=0) is not None) == compiled


def test_bad_budget_ranges_are_refused() -> None:
    with pytest.raises(ValueError, match="low"):
        BudgetRange(0, 10)
    with pytest.raises(ValueError, match="high"):
        BudgetRange(10, 5)
    with pytest.raises(TypeError, match="BudgetRange"):
        gym.make("ThresholdingBandit-v0", budget="100")


def test_spread_means_follow_their_law() -> None:
    # with 2000 arms the largest mean is the top level and the smallest is top - spread, to 1/1000 of the spread
    sampler = SpreadMeans(num_arms=2000, top_low=0.5, top_high=0.7, spread_low=0.04, spread_high=0.5)
    means = sampler(np.random.default_rng(0), 5000)
    assert means.shape == (5000, 2000) and means.min() >= 0.0 and means.max() <= 0.7
    top, spread = means.max(axis=1), means.max(axis=1) - means.min(axis=1)
    assert stats.kstest((top - 0.5) / 0.2, "uniform").statistic < 0.02
    assert stats.kstest((np.log(spread) - np.log(0.04)) / np.log(0.5 / 0.04), "uniform").statistic < 0.02
    # an env draws its instances with it, seeded
    venv = gym.make_vec("BestArmIdentification-v0", num_envs=64, vectorization_mode="vector_entry_point",
                        means=SpreadMeans(num_arms=15), budget=100)
    first = [play_vector(venv, Uniform(), seed=seed)["regret"] for seed in (7, 7, 8)]
    assert np.array_equal(first[0], first[1]) and not np.array_equal(first[0], first[2])


def test_bad_spread_means_are_refused() -> None:
    with pytest.raises(ValueError, match="spread_high"):
        SpreadMeans(top_low=0.3, spread_high=0.5)  # means below 0
    with pytest.raises(ValueError, match="top_high"):
        SpreadMeans(top_low=0.6, top_high=0.5)
    with pytest.raises(ValueError, match="spread_low"):
        SpreadMeans(spread_low=0.0)


def test_random_survival_draws_valid_instances_with_a_unique_crossing_best_arm() -> None:
    sampler = RandomSurvival(num_arms=4, num_levels=6, min_gap=0.05)
    drawn = sampler(np.random.default_rng(0), 2000)
    assert drawn.shape == (2000, 4, 6)
    assert np.all((drawn >= 0) & (drawn <= 1)) and np.all(np.diff(drawn, axis=2) <= 1e-12)
    ranked = np.sort(drawn, axis=1)
    assert np.all(ranked[:, -1] - ranked[:, -2] >= 0.05)  # a unique best arm at every level, by the margin
    best = drawn.argmax(axis=1)
    assert np.all(np.any(best != best[:, :1], axis=1))  # it changes with the level
    assert len({tuple(b) for b in best}) > 50  # many patterns, not one
    # every arm is as likely to be the best at a level (the sampler is symmetric in the arms)
    counts = np.bincount(best[:, 2], minlength=4)
    assert stats.chisquare(counts).pvalue > 0.001
    again = sampler(np.random.default_rng(0), 2000)
    assert np.array_equal(drawn, again)


def test_the_threshold_bandit_draws_an_instance_per_episode_and_copy() -> None:
    venv = gym.make_vec("ThresholdBandit-v0", num_envs=16, vectorization_mode="vector_entry_point", horizon=5,
                        survival=RandomSurvival(3, 4))
    venv.reset(seed=0)
    first = venv.unwrapped.engine.survivals.copy()
    assert len({f.tobytes() for f in first}) == 16
    for _ in range(5):  # the episode ends; NEXT_STEP resets on the step after
        _, _, terminated, _, info = venv.step(np.zeros(16, dtype=np.int64))
    assert terminated.all()
    _, _, _, _, info = venv.step(np.zeros(16, dtype=np.int64))  # the reset step
    second = venv.unwrapped.engine.survivals
    assert not np.any(np.all(first == second, axis=(1, 2)))
    # the expected rewards of a round are the copy's own instance at its c_t
    c = venv.unwrapped.engine.c.copy()
    _, _, _, _, info = venv.step(np.ones(16, dtype=np.int64))
    rows = np.arange(16)
    np.testing.assert_allclose(info["expected_reward"], second[rows, 1, c - 1])
    np.testing.assert_allclose(info["best_expected_reward"], second[rows, :, c - 1].max(axis=1))


def test_a_pinned_instance_replaces_the_sampler_until_the_next_reset() -> None:
    env = gym.make("ThresholdBandit-v0", survival=RandomSurvival(3, 5))
    fixed = [[0.9, 0.5, 0.4, 0.2, 0.1], [0.8, 0.7, 0.3, 0.1, 0.0], [0.5, 0.4, 0.35, 0.3, 0.25]]
    env.reset(seed=0, options={"survival": fixed})
    np.testing.assert_allclose(env.unwrapped.engine.survivals[0], fixed)
    env.reset(seed=1)
    assert env.unwrapped.survival is None and not np.allclose(env.unwrapped.engine.survivals[0], fixed)
