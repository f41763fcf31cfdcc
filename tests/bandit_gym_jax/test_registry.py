"""Registry-driven checks of the JAX path: every JAX agent names its numpy twin and plays every JAX env of its
families; every JAX id is the twin of a registered numpy id."""

from __future__ import annotations

import dataclasses

import gymnasium as gym
import numpy as np
import pytest

import bandit_gym
from bandit_gym.agents import AGENTS
from bandit_gym.families import CONTRACTS
from bandit_gym.instances import best_arm_complexity, complexity
from bandit_gym.jax.agents import JAX_AGENTS, JaxAgent
from bandit_gym.jax.rollout import play
from bandit_gym.registration import ENV_SPECS, JAX_ENV_IDS

#: one small env per family: (JAX id, its horizon argument's value)
SMALL = {"thresholding": "jax/ThresholdingBandit-Tao2019Setup1-v0", "best_arm":
         "jax/BestArmIdentification-Audibert2010Problem3-v0", "top_k": "jax/TopKIdentification-v0",
         "multi_armed": "jax/MultiArmedBandit-v0", "threshold": "jax/ThresholdBandit-v0"}
ORACLES = {"UCBE": {"H": complexity(np.asarray(ENV_SPECS["ThresholdingBandit-Tao2019Setup1-v0"].kwargs["means"]),
                                    0.5)},
           "UCBEBestArm": {"H1": best_arm_complexity(
               np.asarray(ENV_SPECS["BestArmIdentification-Audibert2010Problem3-v0"].kwargs["means"]))}}


@pytest.mark.parametrize("name", list(JAX_AGENTS))
def test_every_jax_agent_names_its_numpy_twin(name: str) -> None:
    cls = JAX_AGENTS[name]
    assert cls.numpy_agent == name and name in AGENTS
    assert set(cls.families) <= set(AGENTS[name].families)
    assert dataclasses.is_dataclass(cls) and cls.__doc__


@pytest.mark.parametrize(("name", "family"), [(n, f) for n, c in JAX_AGENTS.items() for f in c.families])
def test_every_jax_agent_plays_every_family_it_names(name: str, family: str) -> None:
    jax_id = SMALL[family]
    cls = JAX_AGENTS[name]
    stops = cls.stop is not JaxAgent.stop  # a fixed-confidence agent: played in that setting, within a cap
    size = {CONTRACTS[ENV_SPECS[JAX_ENV_IDS[jax_id]].family].horizon_argument: 40}
    setting = {"setting": "fixed_confidence"} if stops else {}
    env = gym.make(jax_id, **size, **setting).unwrapped.func_env
    result = play(env, cls(**ORACLES.get(name, {})), 0, 16)
    pulls = np.asarray(result["pulls"])
    assert np.all(pulls <= 40) if stops else np.all(pulls == 40)
    assert np.all(np.isfinite(np.asarray(result["regret"])))


def test_every_jax_id_twins_a_registered_id() -> None:
    assert set(SMALL.values()) <= set(JAX_ENV_IDS)
    for jax_id, env_id in JAX_ENV_IDS.items():
        assert jax_id == f"jax/{env_id}" and env_id in bandit_gym.ENV_SPECS and jax_id in gym.registry
