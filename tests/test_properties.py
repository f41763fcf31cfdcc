"""Property-based checks (hypothesis): invariants of the thresholding env under arbitrary play."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bandit_gym import metrics
from bandit_gym.envs import ThresholdingBanditEnv
from bandit_gym.wrappers import RecordEpisodeRegretVector

means_st = st.lists(st.floats(0.0, 1.0), min_size=2, max_size=6)


@settings(max_examples=60, deadline=None)
@given(means=means_st, budget=st.integers(1, 15), seed=st.integers(0, 2**16), data=st.data())
def test_budget_counts_and_final_reward(means: list[float], budget: int, seed: int, data: st.DataObject) -> None:
    k = len(means)
    env = ThresholdingBanditEnv(means=means, budget=budget, threshold=0.5)
    obs, _ = env.reset(seed=seed)
    steps = 0
    while True:
        arm = data.draw(st.integers(0, k))  # k means stop
        answer = data.draw(st.lists(st.integers(0, 1), min_size=k, max_size=k))
        obs, reward, term, trunc, _ = env.step(np.asarray([arm, *answer]))
        steps += 1
        assert obs["counts"].sum() + obs["budget_left"][0] == budget
        np.testing.assert_allclose(obs["means"] * np.maximum(obs["counts"], 1), obs["sums"], atol=1e-5)
        assert not trunc
        if term:
            assert reward == -metrics.aggregate_regret(answer, means, 0.5)
            assert steps <= budget + 1
            return
        assert reward == 0.0


@settings(max_examples=60, deadline=None)
@given(means=means_st, bits=st.data(), epsilon=st.floats(0.0, 0.5))
def test_metrics_are_consistent(means: list[float], bits: st.DataObject, epsilon: float) -> None:
    answer = bits.draw(st.lists(st.integers(0, 1), min_size=len(means), max_size=len(means)))
    regret = metrics.aggregate_regret(answer, means, 0.5, epsilon)
    assert 0 <= regret <= len(means)
    assert metrics.error_indicator(answer, means, 0.5, epsilon) == (regret > 0)
    truth = metrics.true_classes(means, 0.5).astype(int)
    assert metrics.aggregate_regret(truth, means, 0.5, epsilon) == 0
    assert metrics.aggregate_regret(1 - truth, means, 0.5, 0.0) == len(means)


def test_wrappers_refuse_foreign_vector_envs() -> None:
    sync = gym.make_vec("ThresholdBandit-v0", num_envs=2, vectorization_mode="sync")
    with pytest.raises(TypeError, match="vectorization_mode='vector_entry_point'"):
        RecordEpisodeRegretVector(sync)
