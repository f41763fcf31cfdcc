"""abernethy2016's agents: estimators and indices on hand-made histories, KMUCB's epochs, the instances, and
the claims the paper proves (slow)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from scipy import stats

from bandit_gym.agents import DKWUCB, KMUCB, OPTIM, PerThresholdUCB
from bandit_gym.envs.threshold import ThresholdBanditEnv
from bandit_gym.instances import (
    DELIVERY_DISTRIBUTIONS,
    staircase_distributions,
    threshold_assumption_failures,
    threshold_gaps,
)
from bandit_gym.metrics import survival_from_distribution
from bandit_gym.rollout import play_vector

# Two arms on the values 0..3 with X fixed: arm 0 always 2, arm 1 always 3.
FIXED = [[0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]]
LEVELS = [3, 1, 2, 3, 2, 1]
ARMS = [0, 0, 1, 0, 1]


def history(feedback: str) -> dict[str, np.ndarray]:
    """The observation after pulling ARMS against the thresholds LEVELS (the sixth round, c = 1, is next)."""
    env = ThresholdBanditEnv(distributions=FIXED, feedback=feedback, thresholds=LEVELS, horizon=6)
    obs, _ = env.reset(seed=0)
    for arm in ARMS:
        obs, *_ = env.step(arm)
    return obs


def index_after(agent: DKWUCB | OPTIM, obs: dict[str, np.ndarray], level: int) -> np.ndarray:
    agent.reset(seed=0)
    start = {key: np.zeros_like(value) for key, value in obs.items()}
    start["last_arm"][:] = -1
    start["budget_left"][:] = 6
    start["threshold"][:] = 3
    agent.act(start)
    at_level = {**obs, "threshold": np.array([float(level)], dtype=np.float32)}
    agent.act(at_level)
    return agent.scores.table()[0]


def test_dkw_estimate_and_dkwucb_index_by_hand() -> None:
    obs = history("uncensored")
    # arm 0: X = 2 three times; arm 1: X = 3 twice; every pull counts at every level
    np.testing.assert_array_equal(obs["level_exceed"].reshape(2, 3), [[3, 3, 0], [2, 2, 2]])
    np.testing.assert_array_equal(obs["level_trials"].reshape(2, 3), [[3, 3, 3], [2, 2, 2]])
    delta = 0.1
    log_term = np.log(2 / delta)
    index = index_after(DKWUCB(delta=delta), obs, level=3)
    np.testing.assert_allclose(index, [0 / 3 + np.sqrt(log_term / 6), 2 / 2 + np.sqrt(log_term / 4)])


def test_kaplan_meier_counts_and_optim_index_by_hand() -> None:
    obs = history("censored")
    # A = min(X, c): round 1 (c=3, X=2 seen): A=2; round 2 (c=1, X=2 censored): A=1; round 4 (c=3): A=2.
    # Arm 1, rounds 3 and 5 (c=2, X=3 censored): A=2. D(j) = #{A >= j}, N(j) = #{c >= j}.
    np.testing.assert_array_equal(obs["level_exceed"].reshape(2, 3), [[3, 2, 0], [2, 2, 0]])
    np.testing.assert_array_equal(obs["level_trials"].reshape(2, 3), [[3, 2, 2], [2, 2, 0]])
    delta = 0.1
    log_term = np.log(2 / delta)
    at_two = index_after(OPTIM(delta=delta), obs, level=2)
    np.testing.assert_allclose(at_two, [2 / 2 + np.sqrt(2 * log_term / 2), 2 / 2 + np.sqrt(2 * log_term / 2)])
    at_three = index_after(OPTIM(delta=delta), obs, level=3)
    assert at_three[1] == np.inf  # N_1(3) = 0: never pulled at a threshold >= 3
    assert at_three[0] == pytest.approx(0 / 2 + np.sqrt(2 * log_term / 2))


def test_default_delta_reads_the_horizon() -> None:
    agent = DKWUCB()
    env = gym.make("ThresholdBandit-v0", horizon=500)
    obs, _ = env.reset(seed=0)
    agent.reset(seed=0)
    agent.act(obs)
    assert agent.log_term[0] == pytest.approx(np.log(4 * 500**2))  # delta = T^-2 / 2
    assert not DKWUCB.is_anytime({}) and DKWUCB.is_anytime({"delta": 0.01})


def test_per_threshold_ucb_counts_each_level_apart_and_once() -> None:
    env = gym.make("ThresholdBandit-v0", horizon=300, thresholds="iid")
    agent = PerThresholdUCB()
    agent.reset(seed=0)
    obs, _ = env.reset(seed=0)
    levels, arms = [], []
    for _ in range(299):
        levels.append(int(obs["threshold"][0]))
        action = agent.act(obs)
        assert agent.act(obs) == action  # a second call on the same observation counts nothing
        arms.append(int(action))
        obs, *_ = env.step(action)
    agent.act(obs)
    expected = np.zeros((3, 5))
    np.add.at(expected, (arms, np.array(levels) - 1), 1)
    np.testing.assert_array_equal(agent.pulls[0], expected)


def test_kmucb_explores_round_robin_then_resolves_levels_in_order() -> None:
    k, m = 2, 2
    venv = gym.make_vec("ThresholdBandit-v0", num_envs=20, vectorization_mode="vector_entry_point",
                        distributions=staircase_distributions(k, m), feedback="censored", thresholds="cyclic",
                        horizon=20000)
    agent = KMUCB()
    agent.reset(seed=0)
    obs, _ = venv.reset(seed=0)
    first_epoch = []
    for _ in range(k * m):
        action = agent.act(obs)
        first_epoch.append((obs["threshold"][:, 0].astype(int), action.copy()))
        obs, *_ = venv.step(action)
    for level in (1, 2):  # each arm once per level in the first epoch
        pulled = np.concatenate([arms[levels == level] for levels, arms in first_epoch])
        assert np.bincount(pulled, minlength=k).tolist() == [20, 20]
    play_vector(venv, agent, seed=1)
    best = survival_from_distribution(staircase_distributions(k, m)).argmax(axis=0)
    assert np.all(agent.level == m + 1)  # both levels resolved well within T
    np.testing.assert_array_equal(agent.kept, np.tile(best, (20, 1)))


def test_instances_keep_the_papers_assumption() -> None:
    delivery = survival_from_distribution(np.array(DELIVERY_DISTRIBUTIONS))
    assert delivery.argmax(axis=0).tolist() == [0, 0, 1, 2, 3, 3]  # ferry, ferry, motorway, ring, city, city
    assert threshold_assumption_failures(delivery) == []
    for k, m in [(2, 2), (4, 2), (4, 32), (5, 10)]:
        F = survival_from_distribution(staircase_distributions(k, m))
        assert threshold_assumption_failures(F) == []
        assert threshold_gaps(F).min() >= 0.4 / (k - 1) - 1e-12
        assert len(set(F.argmax(axis=0))) == min(k, m)  # the best arm changes with the threshold
    tie = [[0.9, 0.5], [0.9, 0.2]]
    assert threshold_assumption_failures(tie) == [
        "level 1: arms [0, 1] tie for the best (F = 0.9); the paper assumes a unique best arm per level"]
    with pytest.raises(ValueError, match="num_arms >= 2"):
        staircase_distributions(1, 4)


def regrets(agent: object, runs: int = 100, **env_kwargs: object) -> np.ndarray:
    venv = gym.make_vec("ThresholdBandit-v0", num_envs=runs, vectorization_mode="vector_entry_point", **env_kwargs)
    return play_vector(venv, agent, seed=11)["regret"]  # type: ignore[arg-type]


@pytest.mark.slow
def test_dkwucb_beats_per_threshold_ucb_with_many_levels() -> None:
    kwargs = {"distributions": staircase_distributions(4, 12), "feedback": "uncensored", "thresholds": "iid",
              "horizon": 10000}
    dkw, per = regrets(DKWUCB(), **kwargs), regrets(PerThresholdUCB(), **kwargs)
    test = stats.ttest_ind(dkw, per, equal_var=False)
    assert dkw.mean() < per.mean() and test.pvalue < 1e-6


@pytest.mark.slow
def test_optimistic_order_with_optim_beats_adversarial_order() -> None:
    kwargs = {"distributions": staircase_distributions(2, 16), "feedback": "censored", "horizon": 10000}
    optimistic = regrets(OPTIM(), thresholds="decreasing", **kwargs)
    adversarial = regrets(PerThresholdUCB(), thresholds="increasing", **kwargs)
    test = stats.ttest_ind(optimistic, adversarial, equal_var=False)
    assert optimistic.mean() < adversarial.mean() and test.pvalue < 1e-6


def test_env_says_which_assumption_an_instance_breaks() -> None:
    assert gym.make("ThresholdBandit-Delivery-v0").unwrapped.assumption_failures == []
    with pytest.warns(UserWarning, match="level 1: arms \\[0, 1\\] tie"):
        env = ThresholdBanditEnv(survival=[[0.9, 0.5], [0.9, 0.2]])
    assert len(env.unwrapped.assumption_failures) == 1
