"""Native vector envs: autoreset, and statistics of N copies against N single envs run one by one."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from scipy import stats

from bandit_gym.agents import UCB, Uniform
from bandit_gym.rollout import play_episode, play_vector


def test_next_step_autoreset_after_early_stop() -> None:
    venv = gym.make_vec("ThresholdingBandit-Tao2019Setup1-v0", num_envs=2, vectorization_mode="vector_entry_point",
                        budget=5)
    venv.reset(seed=0)
    stop = np.zeros((2, 11), dtype=np.int64)
    stop[0, 0] = 10  # copy 0 stops, copy 1 pulls arm 0
    _, rewards, term, _, _ = venv.step(stop)
    assert term.tolist() == [True, False]
    obs, rewards, term, _, _ = venv.step(np.zeros((2, 11), dtype=np.int64))
    assert obs["last_arm"][0, 0] == -1 and obs["counts"][0].sum() == 0 and rewards[0] == 0 and not term[0]
    assert obs["counts"][1].sum() == 2
    obs, *_ = venv.step(np.zeros((2, 11), dtype=np.int64))
    assert obs["counts"][0].sum() == 1


def test_observations_are_fresh_arrays_by_default_and_shared_buffers_with_copy_false() -> None:
    """copy=True (the default, Gymnasium's convention): an observation kept from one step stays what it was;
    copy=False: the env's read-only buffers, updated in place by the next step."""
    fresh = gym.make_vec("ThresholdBandit-v0", num_envs=4, vectorization_mode="vector_entry_point")
    assert fresh.unwrapped.copy is True
    obs, _ = fresh.reset(seed=0)
    kept = obs["counts"]
    after, *_ = fresh.step(np.zeros(4, dtype=np.int64))
    assert kept.sum() == 0 and after["counts"][:, 0].tolist() == [1, 1, 1, 1] and after["counts"] is not kept
    shared = gym.make_vec("ThresholdBandit-v0", num_envs=4, vectorization_mode="vector_entry_point", copy=False)
    obs, _ = shared.reset(seed=0)
    kept = obs["counts"]
    after, *_ = shared.step(np.zeros(4, dtype=np.int64))
    assert kept[:, 0].tolist() == [1, 1, 1, 1] and np.shares_memory(kept, after["counts"])
    assert not kept.flags.writeable
    with pytest.raises(TypeError, match="copy must be True or False"):
        gym.make_vec("ThresholdBandit-v0", num_envs=2, vectorization_mode="vector_entry_point", copy="yes")


def test_logging_observations_step_by_step_records_distinct_steps() -> None:
    """The trap the default removes: a log of the observations of every step (a list, a replay buffer) holds
    each step's values; with copy=False every entry is the same buffer, the last step's."""
    def log(**kwargs: object) -> list[np.ndarray]:
        venv = gym.make_vec("ThresholdingBandit-Tao2019Setup1-v0", num_envs=3, vectorization_mode="vector_entry_point",
                            budget=5, **kwargs)
        obs, _ = venv.reset(seed=0)
        kept = [obs["counts"]]
        for arm in range(5):
            action = np.zeros((3, 11), dtype=np.int64)
            action[:, 0] = arm
            obs, *_ = venv.step(action)
            kept.append(obs["counts"])
        return kept

    fresh, shared = log(), log(copy=False)
    assert [int(counts.sum()) for counts in fresh] == [0, 3, 6, 9, 12, 15]
    assert [int(counts.sum()) for counts in shared] == [15] * 6


@pytest.mark.slow
@pytest.mark.parametrize(
    ("env_id", "agent", "kwargs"),
    [
        ("ThresholdingBandit-Tao2019Setup1-v0", Uniform, {"budget": 100}),
        ("ThresholdingBandit-v0", Uniform, {"budget": 60}),
        ("ThresholdBandit-v0", UCB, {"horizon": 100}),
        ("ThresholdBanditCensored-v0", UCB, {"horizon": 100}),
    ],
)
def test_vector_copies_match_single_envs_in_distribution(env_id: str, agent: type, kwargs: dict) -> None:
    n = 400
    venv = gym.make_vec(env_id, num_envs=n, vectorization_mode="vector_entry_point", **kwargs)
    vector = play_vector(venv, agent(), seed=123)
    single = [play_episode(gym.make(env_id, **kwargs), agent(), seed=10_000 + i) for i in range(n)]
    for key in ("regret", "return"):
        a = vector[key]
        b = np.array([episode[key] for episode in single])
        # Two-sample tests at a level where a real mismatch of this size would fail: Welch's t and KS.
        assert stats.ttest_ind(a, b, equal_var=False).pvalue > 1e-3, key
        assert stats.ks_2samp(a, b).pvalue > 1e-3, key


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("env_id", ["CorrelatedBestArm-v0", "ModelSelection-v0"])
def test_a_vector_env_resets_with_the_model_as_the_single_env(env_id: str) -> None:
    _, single = gym.make(env_id).reset(seed=0)
    envs = gym.make_vec(env_id, num_envs=3, vectorization_mode="vector_entry_point")
    _, info = envs.reset(seed=0)
    assert info["model"].keys() == single["model"].keys()
    for key, value in single["model"].items():
        np.testing.assert_array_equal(info["model"][key], value)
