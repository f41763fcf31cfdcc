"""Wrappers: episode regret, anytime regret, the Discrete adapter."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from bandit_gym.agents import UCB, Uniform
from bandit_gym.envs.best_arm import top_m_answer
from bandit_gym.rollout import play_episode, play_vector
from bandit_gym.wrappers import (
    EmpiricalAnswer,
    EmpiricalAnswerVector,
    RecordAnytimeRegret,
    RecordEpisodeRegret,
    RecordEpisodeRegretVector,
)


def test_episode_regret_equals_minus_the_final_reward() -> None:
    venv = gym.make_vec("ThresholdingBandit-Tao2019Setup1-v0", num_envs=500, vectorization_mode="vector_entry_point",
                        budget=50)
    result = play_vector(venv, Uniform(), seed=0)
    np.testing.assert_array_equal(result["regret"], -result["return"])
    assert result["regret"].mean() > 0 and np.all(result["length"] == 51) and np.all(result["pulls"] == 50)
    np.testing.assert_array_equal(result["error"], result["regret"] > 0)


def test_threshold_regret_accumulates_info() -> None:
    env = RecordEpisodeRegret(gym.make("ThresholdBandit-v0", horizon=30))
    env.reset(seed=0)
    total = 0.0
    for t in range(30):
        _, _, term, _, info = env.step(t % 3)
        total += info["best_expected_reward"] - info["expected_reward"]
    assert term and info["bandit"]["regret"] == pytest.approx(total) and info["bandit"]["length"] == 30


def test_vector_record_restarts_after_autoreset() -> None:
    venv = RecordEpisodeRegretVector(gym.make_vec("ThresholdBandit-v0", num_envs=3,
                                                  vectorization_mode="vector_entry_point", horizon=4))
    obs, _ = venv.reset(seed=0)
    agent = UCB()
    lengths = []
    for _ in range(10):
        obs, _, _term, _, info = venv.step(agent.act(obs))
        if "_bandit" in info:
            lengths.append(info["bandit"]["length"][info["_bandit"]].tolist())
    assert lengths == [[4, 4, 4], [4, 4, 4]]


def test_anytime_records_the_answer_at_each_budget() -> None:
    env = RecordAnytimeRegret(gym.make("ThresholdingBandit-v0", budget=4), budgets=[0, 2, 4])
    env.reset(seed=0, options={"means": np.array([0.2, 0.4, 0.6, 0.8, 0.1, 0.1, 0.1, 0.1, 0.1, 0.9])})
    answers = [np.r_[0, np.ones(10, int)], np.r_[0, np.zeros(10, int)], np.r_[0, np.ones(10, int)],
               np.r_[0, np.zeros(10, int)], np.r_[0, [0, 0, 1, 1, 0, 0, 0, 0, 0, 1]]]
    for answer in answers:
        _, _, term, _, info = env.step(answer)
    assert term
    assert info["anytime"]["regret"].tolist() == [7.0, 7.0, 0.0]
    assert info["anytime"]["error"].tolist() == [1.0, 1.0, 0.0]


def test_anytime_stop_keeps_final_answer_and_bad_budgets() -> None:
    result = play_episode(gym.make("ThresholdingBandit-Tao2019Setup1-v0", budget=30), Uniform(), seed=0,
                          budgets=[5, 30])
    assert result["anytime"]["regret"][-1] == result["regret"]
    env = RecordAnytimeRegret(gym.make("ThresholdingBandit-Tao2019Setup1-v0", budget=10), budgets=[3, 8])
    env.reset(seed=0)
    _, _, term, _, info = env.step(np.r_[10, np.zeros(10, int)])  # stop at once with "all below"
    assert term and info["anytime"]["regret"].tolist() == [5.0, 5.0]
    for bad in ([5, 3], [0, 11], [1.5], []):
        with pytest.raises(ValueError, match="budgets"):
            RecordAnytimeRegret(gym.make("ThresholdingBandit-Tao2019Setup1-v0", budget=10), budgets=bad)
    with pytest.raises(ValueError, match="pure-exploration env"):
        RecordAnytimeRegret(gym.make("ThresholdBandit-v0"), budgets=[1])


def test_empirical_answer_adapter() -> None:
    env = EmpiricalAnswer(gym.make("ThresholdingBandit-Tao2019Setup1-v0", budget=20), allow_stop=True)
    assert env.action_space == gym.spaces.Discrete(11)
    obs, _ = env.reset(seed=0)
    for t in range(5):
        obs, *_ = env.step(t)
    _, reward, term, _, _ = env.step(10)
    expected = (obs["means"] >= 0.5).astype(int)
    truth = np.array([0.2, 0.25, 0.3, 0.35, 0.45, 0.55, 0.65, 0.7, 0.75, 0.8]) >= 0.5
    assert term and reward == -np.sum(expected != truth)
    with pytest.raises(ValueError, match="not in Discrete"):
        EmpiricalAnswer(gym.make("ThresholdingBandit-v0")).step(10)
    with pytest.raises(ValueError, match="needs a pure-exploration env"):
        EmpiricalAnswer(gym.make("ThresholdBandit-v0"))
    venv = EmpiricalAnswerVector(gym.make_vec("ThresholdingBandit-v0", num_envs=3,
                                              vectorization_mode="vector_entry_point"))
    venv.reset(seed=0)
    obs, *_ = venv.step(np.array([0, 1, 2]))
    assert obs["counts"][:, :3].trace() == 3


def test_empirical_answer_on_best_arm_and_top_k_envs_ranks_unpulled_arms_last() -> None:
    """The best-arm / top-K empirical answer is the m largest means among pulled arms: with negative rewards
    (ModelSelection's minus RMSE) an unpulled arm, whose observed mean reads 0, is not answered."""
    env = EmpiricalAnswer(gym.make("ModelSelection-v0", budget=3))
    assert env.action_space == gym.spaces.Discrete(160)
    env.reset(seed=0)
    for _ in range(3):
        env.step(5)
    _, reward, terminated, _, _ = env.step(7)  # the answer step: arm 5, the only pulled one
    means = env.unwrapped.means
    assert terminated and reward == pytest.approx(-(means.max() - means[5]))
    bits = top_m_answer({"means": np.array([[0.0, -1.0, -2.0, 0.0]]), "counts": np.array([[0, 1, 2, 0]]),
                         "m": np.array([[2]])})
    assert bits.tolist() == [[0, 1, 1, 0]]
    venv = EmpiricalAnswerVector(gym.make_vec("TopKIdentification-v0", num_envs=2,
                                              vectorization_mode="vector_entry_point", budget=20))
    obs, _ = venv.reset(seed=0)
    assert venv.single_action_space == gym.spaces.Discrete(100)
    obs, *_ = venv.step(np.array([3, 4]))
    assert obs["counts"][0, 3] == 1 and obs["counts"][1, 4] == 1
