"""The problem family is a type, named by the engine; agents' families are checked when their class is made."""

from __future__ import annotations

import gymnasium as gym
import pytest

import bandit_gym
from bandit_gym.agents import Agent
from bandit_gym.agents.base import family_of
from bandit_gym.envs._base import engine_of
from bandit_gym.families import Family


@pytest.mark.parametrize("env_id", sorted(bandit_gym.ENV_SPECS))
def test_every_engine_names_its_family_and_the_observation_agrees(env_id: str) -> None:
    env = gym.make(env_id)
    engine = engine_of(env)
    assert isinstance(engine.family, Family)
    obs, _ = env.reset(seed=0)
    assert family_of(obs) is engine.family
    # pure exploration: an answer in the action; online: an arm
    assert engine.pure_exploration == isinstance(env.action_space, gym.spaces.MultiDiscrete)
    assert engine.metric_names and engine.horizon_argument in ("budget", "horizon")


def test_a_family_reads_as_its_name() -> None:
    assert Family.TOP_K == "top_k" and f"{Family.TOP_K}" == "top_k" and str(Family.THRESHOLD) == "threshold"
    assert Family("best_arm") is Family.BEST_ARM
    assert [f.value for f in Family if f.pure_exploration] == ["thresholding", "best_arm", "top_k"]


def test_an_agent_class_with_a_misspelt_family_is_refused_when_defined() -> None:
    with pytest.raises(ValueError, match=r"Typo.families = \('thresholdin',\): must be a tuple of families from"):
        type("Typo", (Agent,), {"families": ("thresholdin",)})
    ok = type("Fine", (Agent,), {"families": ("thresholding", "top_k")})
    assert ok.families == (Family.THRESHOLDING, Family.TOP_K)
