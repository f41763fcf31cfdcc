"""The problem families (``bandit_gym.families``): a type, named by the engine; one contract per family, which the
envs, the engine and plotting agree with; one lookup; agents' families are checked when their class is made."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import bandit_gym
from bandit_gym.agents import Agent
from bandit_gym.envs._base import engine_of
from bandit_gym.families import CONTRACTS, ORDER, Family, contract, family_of
from bandit_gym.registration import family_of_env


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


@pytest.mark.parametrize("env_id", sorted(bandit_gym.ENV_SPECS))
def test_the_contract_states_what_the_env_does(env_id: str) -> None:
    env = gym.make(env_id)
    engine = engine_of(env)
    contract = CONTRACTS[engine.family]
    assert set(env.observation_space.spaces) == set(contract.observation_keys)
    assert engine.metric_names == contract.metric_names
    assert engine.horizon_argument == contract.horizon_argument
    assert set(contract.axes) == set(contract.metric_names)
    # the one lookup, from the registration (no env made) and from an observation, agree with the engine
    assert family_of_env(env_id) is engine.family
    assert family_of(env.observation_space.spaces) is engine.family
    assert family_of(list(env.reset(seed=0)[0])) is engine.family


def test_every_family_has_a_contract_and_the_lookup_order_ends_with_the_fallback() -> None:
    assert set(CONTRACTS) == set(Family) == set(ORDER)
    assert [CONTRACTS[family].marker is None for family in ORDER] == [False] * (len(ORDER) - 1) + [True]
    assert contract("top_k") is CONTRACTS[Family.TOP_K]
    with pytest.raises(ValueError, match=r"family='topk' is not a family; allowed: \['thresholding'"):
        contract("topk")


def test_a_results_table_carries_its_family_and_plotting_reads_it_without_an_env(tmp_path) -> None:
    from bandit_gym.experiments import ExperimentSpec, run_experiment
    from bandit_gym.plotting import results_family

    spec = ExperimentSpec.from_dict({"env": "TopKIdentification-v0", "budgets": [200], "runs": 2,
                                     "env_kwargs": {"k": 2, "means": [0.9, 0.8, 0.2, 0.1]}, "agents": ["Uniform"]})
    summary = run_experiment(spec, progress=False).summary()
    assert set(summary["family"]) == {"top_k"}
    assert results_family(summary) == "top_k"
    assert results_family(summary.assign(env="SomeoneElses-v0")) == "top_k"  # not registered here: the column
    assert results_family(summary.assign(env="CorrelatedBestArm-v0")) == "correlated"
    assert results_family(summary.drop(columns="family").assign(env="SomeoneElses-v0")) == "unknown"


@pytest.mark.parametrize("family", list(Family))
def test_the_contract_composes_the_action_the_env_takes(family: Family) -> None:
    rules = CONTRACTS[family]
    env_id = {"thresholding": "ThresholdingBandit-v0", "threshold": "ThresholdBandit-v0", "best_arm":
              "BestArmIdentification-v0", "top_k": "TopKIdentification-v0", "multi_armed": "MultiArmedBandit-v0"}
    env = gym.make_vec(env_id[family.value], num_envs=3, vectorization_mode="vector_entry_point")
    obs, _ = env.reset(seed=0)
    k = obs["counts"].shape[1]
    arms = np.array([0, 1, 1])
    if not family.pure_exploration:
        assert rules.empirical_answer is None
        with pytest.raises(ValueError, match="takes no answer"):
            rules.answer_rule()
        with pytest.raises(ValueError, match="no answer and has no stop"):
            rules.compose_action(arms, np.zeros((3, k)))
        action = rules.compose_action(arms)
    else:
        bits = rules.answer_rule()(obs, np.random.default_rng(0))
        assert bits.shape == (3, k) and set(np.unique(bits)) <= {0, 1}
        action = rules.compose_action(arms, bits, stop=np.array([False, True, False]))
        assert action.shape == (3, k + 1) and action[:, 0].tolist() == [0, k, 1]
        np.testing.assert_array_equal(action[:, 1:], bits)
        single = rules.compose_action(2, bits[0])
        assert single.shape == (k + 1,) and single[0] == 2
    assert env.action_space.contains(action)
    env.step(action)
