"""The wrappers follow Gymnasium's conventions: constructor arguments recorded in the env's spec, a
configurable info key that refuses to overwrite, and the final answer in the record."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import bandit_gym  # noqa: F401
from bandit_gym.agents import APT, Uniform
from bandit_gym.wrappers import (
    EmpiricalAnswer,
    RecordAnytimeRegret,
    RecordAnytimeRegretVector,
    RecordEpisodeRegret,
    RecordEpisodeRegretVector,
)


def play(env: gym.Env, agent, seed: int = 0) -> dict:
    obs, _ = env.reset(seed=seed)
    agent.reset(seed=seed)
    while True:
        action = agent.act(obs)
        obs, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            return {"info": info, "action": action}


def test_the_wrappers_record_their_arguments_in_the_spec_and_the_spec_rebuilds_them() -> None:
    env = RecordAnytimeRegret(RecordEpisodeRegret(EmpiricalAnswer(gym.make("ThresholdingBandit-v0", budget=30),
                                                                  allow_stop=True), info_key="stats"),
                              budgets=[10, 30])
    wrappers = env.spec.additional_wrappers
    assert [w.name for w in wrappers] == ["EmpiricalAnswer", "RecordEpisodeRegret", "RecordAnytimeRegret"]
    assert [w.kwargs for w in wrappers] == [{"allow_stop": True}, {"info_key": "stats"},
                                            {"budgets": [10, 30], "info_key": "anytime"}]
    again = gym.make(env.spec)
    assert isinstance(again, RecordAnytimeRegret) and again.env._key == "stats"


def test_the_info_key_is_configurable_and_an_existing_key_is_refused() -> None:
    env = RecordEpisodeRegret(gym.make("ThresholdingBandit-v0", budget=20), info_key="regret_stats")
    info = play(env, APT())["info"]
    assert "regret_stats" in info and "bandit" not in info
    twice = RecordEpisodeRegret(RecordEpisodeRegret(gym.make("ThresholdingBandit-v0", budget=20)))
    with pytest.raises(ValueError, match=r"info already holds the key 'bandit'.*pass another info_key"):
        play(twice, APT())
    with pytest.raises(TypeError, match="info_key must be a non-empty string"):
        RecordEpisodeRegret(gym.make("ThresholdingBandit-v0"), info_key="")
    clash = RecordAnytimeRegret(RecordEpisodeRegret(gym.make("ThresholdingBandit-v0", budget=20),
                                                    info_key="anytime"), budgets=[20])
    with pytest.raises(ValueError, match="info already holds the key 'anytime'"):
        play(clash, APT())


def test_the_vector_wrappers_refuse_an_existing_key_or_its_mask() -> None:
    venv = gym.make_vec("ThresholdingBandit-v0", num_envs=3, vectorization_mode="vector_entry_point", budget=10)
    both = RecordAnytimeRegretVector(RecordEpisodeRegretVector(venv, info_key="anytime"), budgets=[10])
    obs, _ = both.reset(seed=0)
    agent = Uniform()
    agent.reset(seed=0)
    with pytest.raises(ValueError, match="info already holds the key 'anytime'"):
        for _ in range(11):
            obs, *_ = both.step(agent.act(obs))
    renamed = RecordEpisodeRegretVector(
        gym.make_vec("ThresholdingBandit-v0", num_envs=3, vectorization_mode="vector_entry_point", budget=10),
        info_key="final")
    obs, _ = renamed.reset(seed=0)
    agent.reset(seed=0)
    for _ in range(11):
        action = agent.act(obs)
        obs, _, terminated, _, info = renamed.step(action)
    assert terminated.all() and info["_final"].all()
    np.testing.assert_array_equal(info["final"]["answer"], action[:, 1:])


@pytest.mark.parametrize("env_id", ["ThresholdingBandit-v0", "BestArmIdentification-v0", "TopKIdentification-v0"])
def test_the_record_gives_the_final_answer_it_scored(env_id: str) -> None:
    env = RecordEpisodeRegret(gym.make(env_id, budget=40))
    out = play(env, Uniform())
    answer = out["info"]["bandit"]["answer"]
    assert answer.dtype == np.int8 and answer.shape == (env.unwrapped.num_arms,)
    np.testing.assert_array_equal(answer, out["action"][1:])


def test_online_records_have_no_answer() -> None:
    env = RecordEpisodeRegret(gym.make("ThresholdBandit-v0", horizon=20))
    assert "answer" not in play(env, Uniform())["info"]["bandit"]
