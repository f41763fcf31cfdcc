"""Semantics of the threshold bandit: threshold regimes, censoring, counts, info, bad input."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest

from bandit_gym.envs import ThresholdBanditEnv, ThresholdBanditVectorEnv
from bandit_gym.envs.threshold import DEFAULT_DISTRIBUTIONS
from bandit_gym.metrics import survival_from_distribution


def thresholds_of(env: ThresholdBanditEnv, seed: int = 0, arm: int = 0) -> list[int]:
    obs, _ = env.reset(seed=seed)
    seen = []
    while True:
        seen.append(int(obs["threshold"][0]))
        obs, _, term, _, _ = env.step(arm)
        if term:
            return seen


def test_default_instance_best_arm_changes_with_threshold() -> None:
    F = survival_from_distribution(DEFAULT_DISTRIBUTIONS)
    np.testing.assert_allclose(F, [[1, 1, 0.5, 0, 0], [0.9, 0.8, 0.7, 0.6, 0.3], [0.45] * 5])
    assert F.argmax(axis=0).tolist() == [0, 0, 1, 1, 2]


def test_threshold_regimes() -> None:
    increasing = thresholds_of(ThresholdBanditEnv(thresholds="increasing", horizon=12))
    assert increasing == [1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 5, 5]
    assert thresholds_of(ThresholdBanditEnv(thresholds="decreasing", horizon=11)) == [5, 5, 4, 4, 3, 3, 2, 2, 1, 1, 1]
    cyclic = thresholds_of(ThresholdBanditEnv(thresholds="cyclic", horizon=23))
    for block in range(4):
        assert sorted(cyclic[5 * block: 5 * block + 5]) == [1, 2, 3, 4, 5]
    assert cyclic[:5] == cyclic[5:10] and cyclic[20:] == cyclic[:3]
    iid = thresholds_of(ThresholdBanditEnv(thresholds="iid", horizon=5000))
    counts = np.bincount(iid, minlength=6)[1:]
    assert counts.min() > 900 and counts.max() < 1100
    assert thresholds_of(ThresholdBanditEnv(thresholds=[3, 1, 2], horizon=3)) == [3, 1, 2]


def test_uncensored_feedback_counts_levels() -> None:
    env = ThresholdBanditEnv(survival=[[1.0, 1.0, 0.0], [1.0, 0.0, 0.0]], thresholds=[3, 1, 2, 2], horizon=4)
    env.reset(seed=0)
    obs, reward, _, _, info = env.step(0)  # X = 2 against c = 3
    assert (reward, obs["last_value"][0], obs["last_censored"][0]) == (0.0, 2.0, 0.0)
    assert info == {"expected_reward": 0.0, "best_expected_reward": 0.0}
    obs, reward, _, _, info = env.step(1)  # X = 1 against c = 1
    assert reward == 1.0 and obs["last_value"][0] == 1.0
    np.testing.assert_array_equal(obs["level_exceed"].reshape(2, 3), [[1, 1, 0], [1, 0, 0]])
    np.testing.assert_array_equal(obs["level_trials"].reshape(2, 3), [[1, 1, 1], [1, 1, 1]])
    obs, _, _, _, info = env.step(1)  # c = 2: arm 1 has F(2) = 0, arm 0 has F(2) = 1
    assert info == {"expected_reward": 0.0, "best_expected_reward": 1.0}
    np.testing.assert_array_equal(obs["counts"], [1, 2])
    np.testing.assert_array_equal(obs["means"], [0, 0.5])


def test_censored_feedback_uses_kaplan_meier_counts() -> None:
    env = ThresholdBanditEnv(survival=[[1.0, 1.0, 1.0], [1.0, 0.0, 0.0]], feedback="censored",
                             thresholds=[2, 3, 3], horizon=3)
    env.reset(seed=0)
    obs, reward, *_ = env.step(0)  # X = 3 >= c = 2: censored, A = 2
    assert reward == 1.0 and obs["last_censored"][0] == 1.0 and obs["last_value"][0] == -1.0
    np.testing.assert_array_equal(obs["level_exceed"].reshape(2, 3)[0], [1, 1, 0])
    np.testing.assert_array_equal(obs["level_trials"].reshape(2, 3)[0], [1, 1, 0])
    obs, reward, *_ = env.step(1)  # X = 1 < c = 3: observed, A = 1
    assert reward == 0.0 and obs["last_censored"][0] == 0.0 and obs["last_value"][0] == 1.0
    np.testing.assert_array_equal(obs["level_exceed"].reshape(2, 3)[1], [1, 0, 0])
    np.testing.assert_array_equal(obs["level_trials"].reshape(2, 3)[1], [1, 1, 1])


def test_value_distribution_is_sampled_exactly() -> None:
    p = np.array([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]])
    env = ThresholdBanditEnv(distributions=p, horizon=20000)
    env.reset(seed=1)
    values = []
    for _ in range(20000):
        obs, *_ = env.step(0)
        values.append(int(obs["last_value"][0]))
    freq = np.bincount(values, minlength=3) / len(values)
    assert np.all(np.abs(freq - p[0]) < 4 * np.sqrt(p[0] * (1 - p[0]) / len(values)))


def test_episode_ends_after_horizon_with_threshold_zero() -> None:
    env = ThresholdBanditEnv(horizon=3)
    obs, _ = env.reset(seed=0)
    for t in range(3):
        obs, _, term, trunc, _ = env.step(0)
        assert term == (t == 2) and not trunc
    assert obs["threshold"][0] == 0 and obs["budget_left"][0] == 0
    with pytest.raises(ValueError, match="after the episode terminated"):
        env.step(0)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"distributions": [[0.5, 0.5]]}, ValueError, "K >= 2"),
        ({"distributions": [[0.5, 0.6], [0.5, 0.5]]}, ValueError, "must sum to 1"),
        ({"distributions": [[-0.5, 1.5], [0.5, 0.5]]}, ValueError, "entries below 0.0"),
        ({"distributions": [[1.0], [1.0]]}, ValueError, "m \\+ 1 >= 2 columns"),
        ({"survival": [[0.2, 0.5], [0.5, 0.1]]}, ValueError, "non-increasing"),
        ({"survival": [[0.5], [0.5]], "distributions": [[0.5, 0.5], [0.5, 0.5]]}, ValueError, "not both"),
        ({"feedback": "partial"}, ValueError, "feedback='partial' is not allowed"),
        ({"thresholds": "random"}, ValueError, "thresholds='random' is not allowed"),
        ({"thresholds": [1, 2], "horizon": 3}, ValueError, "sequence of horizon=3 integers"),
        ({"thresholds": [1, 2, 9], "horizon": 3}, ValueError, "must lie in 1..m = 1..5"),
        ({"thresholds": "increasing", "horizon": 3}, ValueError, "needs horizon >= m"),
        ({"horizon": 0}, ValueError, "horizon=0 is too small"),
    ],
)
def test_bad_constructor_arguments(kwargs: dict, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        ThresholdBanditEnv(**kwargs)


def test_bad_actions_and_options() -> None:
    env = ThresholdBanditEnv()
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"action=3 is not an arm; allowed arms are 0\.\.2"):
        env.step(3)
    with pytest.raises(TypeError, match="integer arm index"):
        env.step(1.0)
    with pytest.raises(ValueError, match="shape"):
        env.step(np.asarray([0, 1]))
    with pytest.raises(ValueError, match=r"\(K, m\) = \(2, 1\)"):
        env.reset(options={"survival": [[0.5], [0.4]]})
    venv = ThresholdBanditVectorEnv(num_envs=2)
    venv.reset(seed=0)
    with pytest.raises(ValueError, match="action=-1"):
        venv.step(np.asarray([0, -1]))


def test_reset_option_pins_instance() -> None:
    env = ThresholdBanditEnv(horizon=5)
    env.reset(seed=0, options={"survival": np.zeros((3, 5))})
    _, reward, _, _, info = env.step(0)
    assert reward == 0.0 and info["best_expected_reward"] == 0.0
    env.reset(seed=0)
    assert env.unwrapped.survival[0, 0] == 1.0


def test_render_modes() -> None:
    env = ThresholdBanditEnv(render_mode="ansi", feedback="censored")
    env.reset(seed=0)
    env.step(0)
    assert "current threshold c_t=" in env.render()
    frame = ThresholdBanditEnv(render_mode="rgb_array")
    frame.reset(seed=0)
    assert frame.render().shape[2] == 3


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
