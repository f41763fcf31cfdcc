"""The dense reward of ``ShapedLoss``: potential-based, so an episode's shaped rewards sum to its unshaped return
plus the loss of the empirical answer before the first pull."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import bandit_gym  # noqa: F401
from bandit_gym import metrics
from bandit_gym.wrappers import EmpiricalAnswer, ShapedLoss, ShapedLossVector

CASES = [
    ("ThresholdingBandit-v0", {}),
    ("ThresholdingBandit-v0", {"loss": "simple", "sample_cost": 0.01}),
    ("BestArmIdentification-v0", {"budget": 60}),
    ("BestArmIdentification-v0", {"setting": "fixed_confidence", "budget": 60}),
    ("TopKIdentification-v0", {"budget": 300}),
    ("CorrelatedBestArm-v0", {}),
]


def initial_loss(env: gym.Env, obs: dict[str, np.ndarray], row: int = 0) -> float:
    """The loss of the empirical answer of ``obs`` (copy ``row`` of a batch, or a single observation)."""
    engine = env.unwrapped.engine
    answer = np.asarray(env.unwrapped.empirical_answer(obs))
    answer = answer[row:row + 1] if answer.ndim == 2 else answer[None]
    return float(engine.episode_loss(answer, engine.means[row:row + 1])[0])


@pytest.mark.parametrize(("env_id", "kwargs"), CASES)
def test_an_episodes_shaped_rewards_sum_to_its_return_plus_the_initial_loss(env_id: str, kwargs: dict) -> None:
    env = ShapedLoss(gym.make(env_id, **kwargs))
    env.action_space.seed(3)
    for episode in range(4):
        obs, _ = env.reset(seed=episode)
        start = initial_loss(env, obs)
        shaped, unshaped, done = 0.0, 0.0, False
        while not done:
            obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
            shaped += reward
            unshaped += info["unshaped_reward"]
            done = terminated or truncated
        assert shaped == pytest.approx(unshaped + start, abs=1e-9)
        assert unshaped < 0 or start == 0  # the random answer is scored: the sum is not trivially equal


def test_the_thresholding_initial_loss_by_hand() -> None:
    # before any pull every empirical mean is 0 < theta: the empirical answer says "below" for every arm, so
    # L_0 is the number of arms at or above theta, and a Uniform-like episode that ends with the right answer
    # pays L_0 in total
    env = ShapedLoss(gym.make("ThresholdingBandit-v0", means=[0.1, 0.9, 0.95, 0.2], threshold=0.5, budget=400))
    obs, _ = env.reset(seed=0)
    assert env.potential_loss == 2.0
    assert initial_loss(env, obs) == metrics.aggregate_regret(np.zeros((1, 4)), np.array([[0.1, 0.9, 0.95, 0.2]]),
                                                              0.5, 0.0)[0]
    total, done, t = 0.0, False, 0
    while not done:
        obs, reward, done, _, _ = env.step(np.array([t % 4, 0, 1, 1, 0]))
        total += reward
        t += 1
    assert total == pytest.approx(2.0)  # unshaped return 0 (the right answer) + L_0


def test_with_the_empirical_answer_the_answer_step_pays_nothing() -> None:
    env = ShapedLoss(EmpiricalAnswer(gym.make("ThresholdingBandit-Tao2019Setup1-v0", budget=50)))
    env.reset(seed=1)
    rewards = []
    done = False
    while not done:
        _, reward, done, _, info = env.step(len(rewards) % 10)
        rewards.append(reward)
    assert rewards[-1] == 0.0  # the answer is the empirical one: -L_T + L_T
    assert info["unshaped_reward"] == -env.unwrapped.engine.episode_loss(
        env.unwrapped.empirical_answer(env.unwrapped.engine.obs), env.unwrapped.engine.means)[0]
    assert any(r != 0 for r in rewards[:-1])


@pytest.mark.parametrize("mode", ["NextStep", "SameStep"])
@pytest.mark.parametrize(("env_id", "kwargs"), [CASES[0], CASES[3], CASES[4]])
def test_the_vector_twin_telescopes_per_copy_and_episode(env_id: str, kwargs: dict, mode: str) -> None:
    n = 8
    venv = ShapedLossVector(gym.make_vec(env_id, num_envs=n, vectorization_mode="vector_entry_point",
                                         autoreset_mode=mode, **kwargs))
    venv.action_space.seed(5)
    obs, _ = venv.reset(seed=0)
    start = np.array([initial_loss(venv, obs, i) for i in range(n)])
    shaped, unshaped = np.zeros(n), np.zeros(n)
    restart = np.zeros(n, dtype=bool)
    finished = 0
    for _ in range(400):
        obs, rewards, terminated, truncated, info = venv.step(venv.action_space.sample())
        if mode == "NextStep" and restart.any():  # the reset step: a new episode begins with this observation
            assert np.all(rewards[restart] == 0)
            for i in np.flatnonzero(restart):
                start[i] = initial_loss(venv, obs, i)
        live = ~restart
        shaped[live] += rewards[live]
        unshaped[live] += info["unshaped_reward"][live]
        done = terminated | truncated
        for i in np.flatnonzero(done):
            assert shaped[i] == pytest.approx(unshaped[i] + start[i], abs=1e-9)
            shaped[i] = unshaped[i] = 0.0
            finished += 1
            if mode == "SameStep":  # the env already reset the copy: obs is its next episode's first
                start[i] = initial_loss(venv, obs, i)
        restart = done if mode == "NextStep" else np.zeros(n, dtype=bool)
    assert finished > 2 * n


def test_online_envs_are_refused() -> None:
    with pytest.raises(ValueError, match="pure-exploration"):
        ShapedLoss(gym.make("ThresholdBandit-v0"))
    with pytest.raises(ValueError, match="pure-exploration"):
        ShapedLossVector(gym.make_vec("MultiArmedBandit-v0", num_envs=2, vectorization_mode="vector_entry_point"))


def test_step_before_reset_is_an_error() -> None:
    env = ShapedLoss(gym.make("ThresholdingBandit-v0"))
    with pytest.raises(RuntimeError, match="reset"):
        env.step(env.action_space.sample())
