"""Semantics of the thresholding bandit: budget, answer step, stop, loss, options, bad input."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from bandit_gym.envs import ThresholdingBanditEnv, ThresholdingBanditVectorEnv
from bandit_gym.instances import TAO2019_SETUPS, complexity

MEANS = [0.1, 0.4, 0.6, 0.9]


def action(arm: int, answer: list[int]) -> np.ndarray:
    return np.asarray([arm, *answer], dtype=np.int64)


def test_budget_of_t_means_t_pulls_and_t_plus_1_steps() -> None:
    env = ThresholdingBanditEnv(means=MEANS, budget=5)
    obs, _ = env.reset(seed=0)
    for t in range(5):
        assert obs["budget_left"][0] == 5 - t
        obs, reward, term, trunc, _ = env.step(action(t % 4, [0, 0, 1, 1]))
        assert (reward, term, trunc) == (0.0, False, False)
    assert obs["counts"].sum() == 5 and obs["budget_left"][0] == 0
    obs, reward, term, _, _ = env.step(action(0, [0, 0, 1, 1]))  # answer step: pulls nothing
    assert term and reward == 0.0 and obs["counts"].sum() == 5
    with pytest.raises(ValueError, match="after the episode terminated"):
        env.step(action(0, [0, 0, 1, 1]))


@pytest.mark.parametrize(
    ("answer", "loss", "expected"),
    [([0, 0, 1, 1], "aggregate", 0), ([1, 0, 1, 0], "aggregate", 2), ([1, 1, 0, 0], "aggregate", 4),
     ([1, 0, 1, 0], "simple", 1), ([0, 0, 1, 1], "simple", 0)],
)
def test_final_reward_is_minus_the_loss(answer: list[int], loss: str, expected: int) -> None:
    env = ThresholdingBanditEnv(means=MEANS, budget=1, loss=loss)
    env.reset(seed=0)
    env.step(action(0, answer))
    _, reward, term, _, _ = env.step(action(0, answer))
    assert term and reward == -expected


def test_epsilon_zone_arms_count_for_nothing() -> None:
    env = ThresholdingBanditEnv(means=[0.45, 0.52, 0.9, 0.1], budget=1, epsilon=0.05)
    env.reset(seed=0)
    _, reward, term, _, _ = env.step(action(4, [1, 0, 1, 0]))  # stop at once; arms 0 and 1 are inside the zone
    assert term and reward == 0.0


def test_arm_exactly_at_threshold_is_positive() -> None:
    env = ThresholdingBanditEnv(means=[0.5, 0.2], budget=1)
    env.reset(seed=0)
    _, reward, *_ = env.step(action(2, [1, 0]))
    assert reward == 0.0


def test_stop_ends_episode_with_the_submitted_answer() -> None:
    env = ThresholdingBanditEnv(means=MEANS, budget=100, sample_cost=0.5)
    env.reset(seed=0)
    _, reward, *_ = env.step(action(1, [0, 0, 0, 0]))
    assert reward == -0.5
    obs, reward, term, _, _ = env.step(action(4, [0, 0, 0, 1]))
    assert term and reward == -1.0 and obs["counts"].sum() == 1


def test_statistics_and_last_feedback() -> None:
    env = ThresholdingBanditEnv(means=[0.0, 1.0], budget=10)
    obs, _ = env.reset(seed=0)
    assert obs["last_arm"][0] == -1
    for arm in (1, 1, 0):
        obs, *_ = env.step(action(arm, [0, 0]))
    np.testing.assert_array_equal(obs["counts"], [1, 2])
    np.testing.assert_array_equal(obs["sums"], [0, 2])
    np.testing.assert_array_equal(obs["means"], [0, 1])
    assert obs["last_arm"][0] == 0 and obs["last_value"][0] == 0


def test_gaussian_arms_sample_mean_and_sd() -> None:
    env = ThresholdingBanditEnv(means=[1.0, -2.0], threshold=0.0, arm_distribution="gaussian", sigma=2.0,
                                budget=20000)
    obs, _ = env.reset(seed=0)
    values = []
    for _ in range(4000):
        obs, *_ = env.step(action(0, [0, 0]))
        values.append(obs["last_value"][0])
    assert abs(np.mean(values) - 1.0) < 4 * 2.0 / np.sqrt(4000)
    assert abs(np.std(values) - 2.0) < 0.1


def test_reset_options_pin_means_and_sampler_draws_per_episode() -> None:
    env = gym.make("ThresholdingBandit-v0")
    env.reset(seed=0)
    first = env.unwrapped.means.copy()
    env.reset()
    assert not np.array_equal(first, env.unwrapped.means)
    env.reset(options={"means": np.linspace(0.05, 0.95, 10)})
    np.testing.assert_array_equal(env.unwrapped.means, np.linspace(0.05, 0.95, 10))


def test_tao_presets_match_the_paper() -> None:
    assert complexity(np.array(TAO2019_SETUPS[1]), 0.5) == pytest.approx(993.11, abs=0.01)
    assert complexity(np.array(TAO2019_SETUPS[2]), 0.5) == pytest.approx(96697.70, abs=0.01)
    assert complexity(np.array(TAO2019_SETUPS[3]), 0.5) == pytest.approx(202000.0)
    env = gym.make("ThresholdingBandit-Tao2019Setup2-v0")
    env.reset(seed=0)
    assert env.unwrapped.means.shape == (20,) and env.unwrapped.budget == 40000


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"means": [0.5]}, ValueError, "K >= 2"),
        ({"means": [0.2, 1.2]}, ValueError, "means has entries above 1.0"),
        ({"means": [[0.2, 0.3]]}, ValueError, "means must be a 1-D array"),
        ({"means": ["a", "b"]}, TypeError, "means must be an array of real numbers"),
        ({"budget": 0}, ValueError, "budget=0 is too small"),
        ({"budget": 2.5}, TypeError, "budget must be an integer"),
        ({"threshold": 1.0}, ValueError, r"threshold=1.0 is outside the allowed interval \(0.0, 1.0\)"),
        ({"threshold": float("nan")}, ValueError, "threshold=nan"),
        ({"epsilon": -0.1}, ValueError, "epsilon=-0.1"),
        ({"loss": "hinge"}, ValueError, "loss='hinge' is not allowed; use one of 'aggregate', 'simple'"),
        ({"arm_distribution": "poisson"}, ValueError, "arm_distribution='poisson'"),
        ({"sigma": 0.0}, ValueError, "sigma=0.0"),
        ({"sample_cost": -1.0}, ValueError, "sample_cost=-1.0"),
    ],
)
def test_bad_constructor_arguments(kwargs: dict, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        ThresholdingBanditEnv(**kwargs)


@pytest.mark.parametrize(
    ("bad", "error", "match"),
    [
        (np.asarray([0, 0, 0]), ValueError, r"shape \(K \+ 1,\) = \(5,\)"),
        (np.asarray([5, 0, 0, 0, 0]), ValueError, r"action\[0\]=5 is not an arm in 0..3 or 4"),
        (np.asarray([-1, 0, 0, 0, 0]), ValueError, r"action\[0\]=-1"),
        (np.asarray([0, 0, 2, 0, 0]), ValueError, r"action\[1:\] is the answer and must hold bits 0 or 1"),
        (np.asarray([0.0, 0, 0, 0, 0]), TypeError, "must hold integers"),
    ],
)
def test_bad_actions(bad: np.ndarray, error: type, match: str) -> None:
    env = ThresholdingBanditEnv(means=MEANS, budget=3)
    env.reset(seed=0)
    with pytest.raises(error, match=match):
        env.step(bad)


def test_bad_reset_options_and_step_before_reset() -> None:
    env = ThresholdingBanditEnv(means=MEANS)
    with pytest.raises(RuntimeError, match="before reset"):
        env.step(action(0, [0] * 4))
    with pytest.raises(ValueError, match="reset options \\['mean'\\] are not supported"):
        env.reset(options={"mean": MEANS})
    with pytest.raises(ValueError, match="has 3 arms but this env has K=4"):
        env.reset(options={"means": [0.1, 0.2, 0.3]})
    with pytest.raises(ValueError, match="render_mode='human'"):
        ThresholdingBanditEnv(render_mode="human")


def test_vector_env_bad_input() -> None:
    venv = ThresholdingBanditVectorEnv(num_envs=2, means=MEANS)
    with pytest.raises(ValueError, match="num_envs=0 is too small"):
        ThresholdingBanditVectorEnv(num_envs=0)
    with pytest.raises(TypeError, match="one integer seed"):
        venv.reset(seed=[1, 2])
    venv.reset(seed=0)
    with pytest.raises(ValueError, match="shape"):
        venv.step(np.zeros((3, 5), dtype=np.int64))


def test_render_modes() -> None:
    env = ThresholdingBanditEnv(means=MEANS, budget=10, render_mode="ansi")
    env.reset(seed=0)
    env.step(action(2, [0] * 4))
    text = env.render()
    assert "threshold theta=0.5" in text and ("above" in text or "below" in text) and "?" in text
    image = ThresholdingBanditEnv(means=MEANS, render_mode="rgb_array")
    image.reset(seed=0)
    frame = image.render()
    assert frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[2] == 3 and frame.std() > 0


# ----------------------------------------------------------------------------------------------- fixed confidence
def test_fixed_confidence_stop_action_ends_and_scores_the_answer() -> None:
    env = ThresholdingBanditEnv(means=MEANS, budget=100, setting="fixed_confidence", sample_cost=0.5)
    env.reset(seed=0)
    env.step(action(1, [0, 0, 0, 0]))
    obs, reward, term, trunc, _ = env.step(action(4, [0, 1, 0, 1]))  # stop: arms 1 and 2 misclassified
    assert term and not trunc and reward == -2.0 and obs["counts"].sum() == 1
    with pytest.raises(ValueError, match="after the episode terminated"):
        env.step(action(0, [0] * 4))


@pytest.mark.parametrize("setting", ["fixed_budget", "fixed_confidence"])
def test_the_cap_truncates_in_fixed_confidence_and_terminates_in_fixed_budget(setting: str) -> None:
    env = ThresholdingBanditEnv(means=MEANS, budget=2, setting=setting, loss="simple")
    env.reset(seed=0)
    for arm in (0, 1):
        _, reward, term, trunc, _ = env.step(action(arm, [0, 0, 1, 1]))
        assert (reward, term, trunc) == (0.0, False, False)
    _, reward, term, trunc, _ = env.step(action(2, [1, 0, 1, 1]))  # no pull left: the answer is scored
    assert reward == -1.0  # arm 0 misclassified
    assert (term, trunc) == ((False, True) if setting == "fixed_confidence" else (True, False))
    with pytest.raises(ValueError, match="after the episode terminated"):  # ended either way
        env.step(action(0, [0] * 4))


def test_a_stop_on_the_answer_step_is_a_stop_not_the_cap() -> None:
    env = ThresholdingBanditEnv(means=MEANS, budget=1, setting="fixed_confidence")
    env.reset(seed=0)
    env.step(action(0, [0, 0, 1, 1]))
    _, reward, term, trunc, _ = env.step(action(4, [0, 0, 1, 1]))
    assert (reward, term, trunc) == (0.0, True, False)


def test_the_setting_changes_nothing_but_how_the_cap_ends_the_episode() -> None:
    """Same seed and actions: the same samples, observations and rewards in both settings (so the default,
    fixed budget, plays as before), up to the last step, which terminates in one and truncates in the other."""
    records = {}
    for setting in ("fixed_budget", "fixed_confidence"):
        env = ThresholdingBanditEnv(means=[0.3, 0.55, 0.7], budget=30, setting=setting, epsilon=0.05)
        obs, _ = env.reset(seed=7)
        steps = [obs]
        for t in range(31):
            obs, reward, term, trunc, _ = env.step(action(t % 3, [0, 1, 1]))
            steps.append((obs, reward, term or trunc))
        records[setting] = (steps, term, trunc)
    budget_steps, budget_term, budget_trunc = records["fixed_budget"]
    confidence_steps, confidence_term, confidence_trunc = records["fixed_confidence"]
    for a, b in zip(budget_steps[1:], confidence_steps[1:], strict=True):
        for key in a[0]:
            np.testing.assert_array_equal(a[0][key], b[0][key])
        assert a[1:] == b[1:]
    assert (budget_term, budget_trunc, confidence_term, confidence_trunc) == (True, False, False, True)


def test_epsilon_relaxed_answers_in_fixed_confidence() -> None:
    env = ThresholdingBanditEnv(means=[0.45, 0.52, 0.9, 0.1], budget=5, epsilon=0.05, setting="fixed_confidence")
    for zone in ([0, 0], [0, 1], [1, 0], [1, 1]):  # arms 0 and 1 are inside the zone: either answer is right
        env.reset(seed=0)
        _, reward, term, _, _ = env.step(action(4, [*zone, 1, 0]))
        assert term and reward == 0.0
    env.reset(seed=0)
    _, reward, *_ = env.step(action(4, [1, 1, 0, 1]))  # arms 2 and 3 wrong
    assert reward == -2.0


def test_a_bad_setting_names_the_allowed_values() -> None:
    with pytest.raises(ValueError, match=r"setting='anytime' is not allowed; use one of 'fixed_budget', "
                                         r"'fixed_confidence'"):
        ThresholdingBanditEnv(setting="anytime")


def test_presets_take_the_setting() -> None:
    env = gym.make("ThresholdingBandit-Tao2019Setup1-v0", setting="fixed_confidence", budget=3)
    env.reset(seed=0)
    assert env.unwrapped.setting == "fixed_confidence"
    assert gym.make("ThresholdingBandit-v0").unwrapped.setting == "fixed_budget"


def test_vector_env_autoresets_stopped_and_capped_copies() -> None:
    venv = gym.make_vec("ThresholdingBandit-v0", num_envs=3, vectorization_mode="vector_entry_point",
                        means=MEANS, setting="fixed_confidence", budget=2)
    venv.reset(seed=0)
    actions = np.zeros((3, 5), dtype=np.int64)
    actions[:, 3:] = 1  # the right answer
    actions[0, 0] = 4  # copy 0 stops at once
    obs, rewards, term, trunc, _ = venv.step(actions)
    assert term.tolist() == [True, False, False] and not trunc.any() and rewards.tolist() == [0.0, 0.0, 0.0]
    actions[0, 0] = 0
    obs, _, term, trunc, _ = venv.step(actions)  # copy 0 starts again; the others pull their last
    assert obs["last_arm"][0, 0] == -1 and obs["counts"][0].sum() == 0 and not term.any() and not trunc.any()
    actions[2, 0] = 4  # copy 2 stops on its answer step, copy 1 reaches the cap
    obs, rewards, term, trunc, _ = venv.step(actions)
    assert term.tolist() == [False, False, True] and trunc.tolist() == [False, True, False]
    obs, *_ = venv.step(actions)
    assert (obs["last_arm"][1:, 0] == -1).all() and obs["counts"][0].sum() == 2
