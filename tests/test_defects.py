"""Defects fixed on their own, each with the test that failed before the fix."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("env_id", ["CorrelatedBestArm-v0", "ModelSelection-v0"])
def test_a_vector_env_resets_with_the_model_as_the_single_env(env_id: str) -> None:
    _, single = gym.make(env_id).reset(seed=0)
    envs = gym.make_vec(env_id, num_envs=3, vectorization_mode="vector_entry_point")
    _, info = envs.reset(seed=0)
    assert info["model"].keys() == single["model"].keys()
    for key, value in single["model"].items():
        np.testing.assert_array_equal(info["model"][key], value)


def test_the_threshold_bandit_assumption_warning_fires_once_per_instance() -> None:
    survival = [[1.0, 0.5], [1.0, 0.5]]  # two identical arms: no unique best arm at any level
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        env = gym.make("ThresholdBandit-v0", survival=survival)
        env.reset(seed=0)
        env.reset(seed=1)
    assert sum("breaks an assumption" in str(w.message) for w in caught) == 1
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        env.reset(options={"survival": [[1.0, 0.4], [1.0, 0.4]]})  # another such instance: warned about once
    assert sum("breaks an assumption" in str(w.message) for w in caught) == 1


def test_play_episode_and_play_vector_pass_reset_options() -> None:
    from bandit_gym.agents import AGENTS
    from bandit_gym.rollout import play_episode, play_vector

    means = [0.1, 0.2, 0.3, 0.45, 0.55, 0.7, 0.8, 0.9, 0.95, 0.99]
    env = gym.make("ThresholdingBandit-v0", budget=50)
    play_episode(env, AGENTS["APT"](), seed=0, options={"means": means})
    np.testing.assert_allclose(env.unwrapped.engine.means[0], means)
    envs = gym.make_vec("ThresholdingBandit-v0", num_envs=4, vectorization_mode="vector_entry_point", budget=50)
    play_vector(envs, AGENTS["APT"](), seed=0, options={"means": means})
    np.testing.assert_allclose(envs.unwrapped.engine.means, np.tile(means, (4, 1)))


def test_opt_kg_finds_scipys_float64_betaincc_by_its_signature() -> None:
    """Not by the name Cython made up for it (``__pyx_fuse_0betaincc`` in today's scipy)."""
    from scipy import special

    from bandit_gym.agents.thresholding.optkg import compiled, double_version

    assert double_version("betaln") == "betaln"
    assert double_version("betaincc").endswith("betaincc")
    with pytest.raises(ImportError, match="no float64 nope"):
        double_version("nope")
    betaincc = compiled().betaincc
    assert betaincc(2.0, 3.0, 0.4) == pytest.approx(special.betaincc(2.0, 3.0, 0.4), rel=1e-15)


def test_the_compiled_rollout_reads_only_public_engine_state() -> None:
    import inspect

    from bandit_gym import rollout
    from bandit_gym.agents import AGENTS

    source = inspect.getsource(rollout)
    assert "._seeds" not in source and "AnytimeTracker(" not in source  # no private state, no throwaway objects
    envs = gym.make_vec("ThresholdingBandit-Tao2019Setup1-v0", num_envs=4, vectorization_mode="vector_entry_point",
                        common_random_numbers=True, budget=50)
    envs.reset(seed=0)
    seeds = envs.unwrapped.engine.stream_seeds
    assert seeds.shape == (4, 10) and not seeds.flags.writeable
    with pytest.raises(ValueError, match="strictly increasing"):
        rollout.play_compiled(envs, AGENTS["APT"](), seed=0, budgets=[30, 20])
