"""Shared fixtures: the registry drives the tests."""

from __future__ import annotations

import gymnasium as gym
import pytest

import bandit_gym
from bandit_gym.agents import AGENTS

ENV_IDS = list(bandit_gym.ENV_SPECS)


def family_of_id(env_id: str) -> str:
    if env_id.startswith(("BestArm", "CorrelatedBestArm", "ModelSelection")):
        return "best_arm"
    if env_id.startswith("TopK"):
        return "top_k"
    return (gym.spec(env_id).kwargs.get("feedback") and "threshold") or "thresholding"


def small_kwargs(env_id: str) -> dict:
    """Shrink the budget/horizon so whole episodes stay fast in tests."""
    return {"horizon": 60} if family_of_id(env_id) == "threshold" else {"budget": 60}


def make_agent(name: str, env_id: str, **params: object):
    """An agent of the registry, with its oracle parameters computed from the env's (fixed) instance."""
    cls = AGENTS[name]
    if cls.oracle_parameters:
        env = gym.make(env_id)
        env.reset(seed=0)
        engine = env.unwrapped.engine
        # a sampled instance: the oracle of the first episode's instance (enough to exercise the protocol)
        truth = engine.oracle_values(engine.means[0])
        params = {**{key: truth[key] for key in cls.oracle_parameters}, **params}
    return cls(**params)


AGENT_ENV_PAIRS = [
    (name, env_id) for name, cls in AGENTS.items() for env_id in ENV_IDS if family_of_id(env_id) in cls.families
]


@pytest.fixture(params=ENV_IDS)
def env_id(request: pytest.FixtureRequest) -> str:
    return request.param
