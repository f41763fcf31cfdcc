"""Agents: the protocol on every env of their family, hand-checked selection rules, bad observations."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from bandit_gym.agents import LSA, UCB, Agent, Uniform
from bandit_gym.rollout import play_episode, play_vector
from tests.conftest import AGENT_ENV_PAIRS, AGENTS, family_of_id, make_agent, small_kwargs


@pytest.mark.parametrize(("name", "env_id"), AGENT_ENV_PAIRS)
def test_every_agent_plays_every_env_of_its_family(name: str, env_id: str) -> None:
    kwargs = small_kwargs(env_id)
    single = play_episode(gym.make(env_id, **kwargs), make_agent(name, env_id), seed=0)
    venv = gym.make_vec(env_id, num_envs=8, vectorization_mode="vector_entry_point", **kwargs)
    vector = play_vector(venv, make_agent(name, env_id), seed=0)
    # top-K agents may stop and leave budget unused (their docstrings), and so may an agent with a stop rule
    # (Sequential Halving after its last round) and a policy (the untrained PPO of SB3Agent: its action K is stop)
    stops = AGENTS[name].stop is not Agent.stop or (name == "SB3Agent" and family_of_id(env_id) != "threshold")
    if family_of_id(env_id) == "top_k" or stops:
        assert 0 <= single["pulls"] <= 60 and all(0 <= p <= 60 for p in vector["pulls"].tolist())
    else:
        assert single["pulls"] == 60
        assert vector["pulls"].tolist() == [60] * 8


@pytest.mark.parametrize("tie_break", ["random", "index"])
def test_uniform_is_round_robin_and_answers_empirically(tie_break: str) -> None:
    env = gym.make("ThresholdingBandit-Tao2019Setup1-v0", budget=23)
    agent = Uniform(tie_break=tie_break)
    agent.reset(seed=0)
    obs, _ = env.reset(seed=0)
    arms = []
    for _ in range(23):
        action = agent.act(obs)
        arms.append(int(action[0]))
        expected = (obs["sums"] / np.maximum(obs["counts"], 1) >= 0.5).astype(int)
        np.testing.assert_array_equal(action[1:], expected)
        obs, *_ = env.step(action)
    order = agent.order.arm_at[0]  # round robin in the copy's arm order: the identity with tie_break="index"
    assert sorted(order.tolist()) == list(range(10))
    assert (order.tolist() != list(range(10))) == (tie_break == "random")  # seed 0 draws another order
    assert arms == [int(order[t % 10]) for t in range(23)]
    extra = np.zeros(10, dtype=int)
    extra[order[:3]] = 1  # the first 23 mod 10 arms of the order get one pull more
    np.testing.assert_array_equal(obs["counts"], 2 + extra)


def test_uniform_same_action_on_repeated_calls() -> None:
    env = gym.make("ThresholdBandit-v0")
    agent = Uniform()
    obs, _ = env.reset(seed=0)
    agent.reset(seed=0)
    obs, *_ = env.step(agent.act(obs))
    assert agent.act(obs) == agent.act(obs) == agent.order.arm_at[0, 1]  # the second arm of the order


def ucb_obs(counts: list[float], sums: list[float], budget_left: float, last_arm: float) -> dict:
    len(counts)
    return {
        "threshold": np.array([2.0], np.float32), "budget_left": np.array([budget_left], np.float32),
        "last_arm": np.array([last_arm], np.float32), "last_reward": np.zeros(1, np.float32),
        "counts": np.array(counts, np.float32), "sums": np.array(sums, np.float32),
        "means": np.divide(sums, np.maximum(counts, 1)).astype(np.float32),
    }


def test_ucb_index_by_hand() -> None:
    agent = UCB(tie_break="index")
    agent.reset(seed=0)
    T = 100
    agent.act(ucb_obs([0, 0, 0], [0, 0, 0], T, -1))  # episode start: T = 100
    # state after arms 0, 1 pulled: only arm 2 unpulled -> +inf
    assert agent.act(ucb_obs([1, 0, 0], [1, 0, 0], T - 1, 0)) == 1
    assert agent.act(ucb_obs([1, 1, 0], [1, 0, 0], T - 2, 1)) == 2
    # all pulled: index = mean + sqrt(log(4 T^2) / (2 N))
    log_term = np.log(4 * T**2)
    agent.scores.set_rows(np.array([0]), np.array([[1 + np.sqrt(log_term / 2), 0 + np.sqrt(log_term / 2), np.inf]]))
    obs = ucb_obs([1, 1, 4], [1, 0, 3], T - 6, 2)
    arm = agent.act(obs)
    expected = [1 + np.sqrt(log_term / 2), np.sqrt(log_term / 2), 0.75 + np.sqrt(log_term / 8)]
    np.testing.assert_allclose(agent.scores.table()[0], expected)
    assert arm == int(np.argmax(expected)) == 0


def test_ucb_fixed_delta_and_random_ties() -> None:
    agent = UCB(delta=0.1)
    first = []
    for seed in range(30):
        agent.reset(seed=seed)
        first.append(int(agent.act(ucb_obs([0, 0, 0], [0, 0, 0], 50, -1))))
        assert agent.log_term[0] == pytest.approx(np.log(20))
    assert set(first) == {0, 1, 2}  # random tie-breaking among the unpulled arms
    assert UCB(tie_break="index").act(ucb_obs([0, 0, 0], [0, 0, 0], 50, -1)) == 0


def test_bad_agent_arguments_and_observations() -> None:
    with pytest.raises(ValueError, match=r"delta=1\.5"):
        UCB(delta=1.5)
    with pytest.raises(ValueError, match="tie_break='first'"):
        Uniform(tie_break="first")
    agent = UCB()
    with pytest.raises(ValueError, match=r"lacks the keys \['budget_left'\]"):
        agent.act({k: v for k, v in ucb_obs([0, 0], [0, 0], 5, -1).items() if k != "budget_left"})
    bad = ucb_obs([0, 0], [0, 0], 5, -1)
    bad["sums"] = np.zeros(3, np.float32)
    with pytest.raises(ValueError, match=r"obs\['sums'\] must have shape \(2,\)"):
        agent.act(bad)
    with pytest.raises(TypeError, match="obs must be the dict observation"):
        agent.act([1, 2])
    thresholding_obs, _ = gym.make("ThresholdingBandit-v0").reset(seed=0)
    with pytest.raises(ValueError, match="UCB plays \\('threshold',\\) envs, not a 'thresholding' env"):
        agent.act(thresholding_obs)


def test_an_observation_missing_some_of_its_family_keys_is_reported_as_lacking_them_not_as_another_family() -> None:
    obs, _ = gym.make("ThresholdingBandit-v0").reset(seed=0)
    del obs["epsilon"]  # its marker key now reads as a threshold bandit's observation
    with pytest.raises(ValueError, match=r"^obs lacks the keys \['epsilon'\] of a 'thresholding' env's observation; "
                                         r"LSA needs \[.*'epsilon'"):
        LSA().act(obs)
    del obs["threshold"]
    with pytest.raises(ValueError, match=r"^obs lacks the keys \['threshold', 'epsilon'\] of a 'thresholding' env"):
        LSA().act(obs)
