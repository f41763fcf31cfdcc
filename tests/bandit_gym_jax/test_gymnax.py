"""gymnax's ``Environment`` interface over the functional envs (``bandit_gym.jax.gymnax_env``): ``make`` for every
JAX id, the spaces, an episode's end, truncation and refused actions computed by hand, gymnax's own ``step``
(auto-reset) and PureJaxRL's ``LogWrapper`` in a jit / vmap / scan loop, against exact expectations."""

from __future__ import annotations

import os

import gymnasium as gym
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import bandit_gym  # noqa: F401  (registers the ids)

if os.environ.get("BANDIT_GYM_TESTED") == "installed":
    import gymnax  # noqa: F401  (CI installs it: a missing gymnax fails the run instead of skipping it)
else:
    pytest.importorskip("gymnax")

from gymnax.environments import spaces as gymnax_spaces
from gymnax.wrappers.purerl import LogWrapper

from bandit_gym.jax.gymnax_env import GymnaxBandit, MultiDiscrete, make


def small(name: str) -> dict:
    """Short episodes: the threshold bandit takes a horizon, the others a budget (chen2017's have 1000 arms)."""
    if name.startswith("ThresholdBandit"):
        return {"horizon": 20}
    return {"budget": 2000 if name.startswith("TopKIdentification-Chen2017") else 30}


JAX_IDS = sorted(key.removeprefix("jax/") for key in gym.registry if key.startswith("jax/"))


@pytest.mark.parametrize("name", JAX_IDS)
def test_every_jax_id_resets_and_steps_with_sampled_actions(name: str) -> None:
    env, params = make(name, **small(name))
    assert isinstance(env, GymnaxBandit) and env.name == name
    obs, state = env.reset(jax.random.key(0), params)
    space = env.observation_space(params)
    assert set(obs) == set(space.spaces) == set(env.func_env.observation_space.spaces)
    for key, box in space.spaces.items():
        assert obs[key].shape == box.shape and bool(box.contains(obs[key])), key
    action = env.action_space(params).sample(jax.random.key(1))
    assert bool(env.action_space(params).contains(action))
    _, _, reward, _, _, info = env.step(jax.random.key(2), state, action, params)
    assert not bool(info["action_outside_space"]) and jnp.shape(reward) == ()


def test_make_refuses_an_unknown_id_and_bad_arguments() -> None:
    with pytest.raises(ValueError, match=r"env_id='Nope-v0' has no JAX env; allowed: .*ThresholdingBandit-v0"):
        make("Nope-v0")
    with pytest.raises(ValueError, match="budget"):
        make("ThresholdingBandit-v0", budget=0)
    env, _ = make("jax/MultiArmedBandit-v0", budget=5)  # the prefix of gym.make's id is accepted
    assert env.name == "MultiArmedBandit-v0" and env.num_actions == 10
    with pytest.raises(NotImplementedError, match="the arm, then the answer bits"):
        make("ThresholdingBandit-v0", budget=5)[0].num_actions  # noqa: B018


def test_multi_discrete_samples_every_value_and_nothing_outside() -> None:
    space = MultiDiscrete([3, 2, 2])
    draws = np.asarray(jax.vmap(space.sample)(jax.random.split(jax.random.key(0), 3000)))
    for i, n in enumerate((3, 2, 2)):
        assert set(np.unique(draws[:, i])) == set(range(n))
        assert abs(np.mean(draws[:, i] == n - 1) - 1 / n) < 4 * np.sqrt((1 / n) * (1 - 1 / n) / 3000)
    assert bool(space.contains(jnp.array([2, 1, 0])))
    assert not bool(space.contains(jnp.array([3, 1, 0]))) and not bool(space.contains(jnp.array([0, 2, 0])))
    assert not bool(space.contains(jnp.array([-1, 0, 0])))


def test_a_thresholding_episode_by_hand() -> None:
    """Round robin over 3 arms for the budget of 6, then the answer "all above" at the answer step: the reward is
    minus the aggregate regret, the number of arms below theta = 0.5 (one, mean 0.2), and gymnax resets."""
    env, params = make("ThresholdingBandit-v0", means=[0.2, 0.6, 0.7], threshold=0.5, epsilon=0.0, budget=6)
    obs, state = env.reset(jax.random.key(0), params)
    assert float(obs["threshold"][0]) == 0.5 and float(obs["budget_left"][0]) == 6
    for t in range(6):
        obs, state, reward, terminated, truncated, _ = env.step(jax.random.key(t + 1), state,
                                                                jnp.array([t % 3, 0, 0, 0]), params)
        assert float(reward) == 0.0 and not bool(terminated) and not bool(truncated)
    np.testing.assert_array_equal(obs["counts"], [2, 2, 2])
    obs, state, reward, terminated, truncated, info = env.step(jax.random.key(9), state, jnp.array([0, 1, 1, 1]),
                                                               params)
    assert bool(terminated) and not bool(truncated) and float(reward) == -1.0
    assert float(info["regret"]) == 1.0 and int(info["pulls"]) == 6
    np.testing.assert_array_equal(info["final_observation"]["counts"], [2, 2, 2])
    np.testing.assert_array_equal(obs["counts"], [0, 0, 0])  # the next episode's first observation
    assert float(obs["budget_left"][0]) == 6


def test_the_budget_truncates_a_fixed_confidence_episode() -> None:
    env, params = make("BestArmIdentification-v0", means=[0.6, 0.5, 0.4], budget=4, setting="fixed_confidence")
    _, state = env.reset(jax.random.key(0), params)
    for t in range(4):
        _, state, _, terminated, truncated, _ = env.step(jax.random.key(t + 1), state, jnp.array([t % 3, 1, 0, 0]),
                                                         params)
        assert not bool(terminated | truncated)
    _, state, reward, terminated, truncated, info = env.step(jax.random.key(7), state, jnp.array([0, 1, 0, 0]),
                                                             params)
    assert bool(terminated) and bool(truncated) and bool(info["capped"]) and float(info["error"]) == 0.0
    assert float(reward) == 0.0  # the right arm: simple regret 0


@pytest.mark.parametrize(("name", "kwargs", "bad"), [
    ("ThresholdingBandit-v0", {"means": [0.2, 0.6, 0.7], "budget": 6}, [4, 0, 0, 0]),
    ("ThresholdingBandit-v0", {"means": [0.2, 0.6, 0.7], "budget": 6}, [0, 2, 0, 0]),
    ("ThresholdingBandit-v0", {"means": [0.2, 0.6, 0.7], "budget": 6}, [-1, 0, 0, 0]),
    ("MultiArmedBandit-v0", {"means": [0.2, 0.6], "budget": 6}, 2),
    ("ThresholdBandit-v0", {"horizon": 6}, -1),
])
def test_an_action_outside_the_space_changes_nothing(name: str, kwargs: dict, bad: object) -> None:
    env, params = make(name, **kwargs)
    _, state = env.reset(jax.random.key(0), params)
    _, after, reward, terminated, info = env.step_env(jax.random.key(1), state, jnp.asarray(bad), params)
    assert bool(info["action_outside_space"]) and float(reward) == 0.0 and not bool(terminated)
    for old, new in zip(jax.tree.leaves(state), jax.tree.leaves(after), strict=True):
        np.testing.assert_array_equal(old, new)


def test_uniform_play_in_a_compiled_loop_has_the_exact_expected_regret_and_return() -> None:
    """PureJaxRL's pattern: ``LogWrapper`` around the env, ``vmap`` over 4000 copies, ``lax.scan`` over 3 episodes
    of 20 steps with uniformly drawn arms. The pseudo-regret of an episode has mean ``T (max mu - mean mu)`` and
    its return ``T mean mu``; both within 4 standard errors, and every episode ends after exactly T steps."""
    means, horizon, copies = [0.1, 0.4, 0.5, 0.8], 20, 4000
    env, params = make("MultiArmedBandit-v0", means=means, budget=horizon)
    env = LogWrapper(env)
    space = env.action_space(params)
    assert isinstance(space, gymnax_spaces.Discrete)

    def one_step(carry: tuple, key: jax.Array) -> tuple:
        state = carry
        pick, step = jax.random.split(key)
        action = space.sample(pick)
        _, state, _, terminated, _, info = env.step(step, state, action, params)
        return state, (terminated, info["regret"], info["returned_episode_returns"])

    def run(key: jax.Array) -> tuple:
        start, steps = jax.random.split(key)
        _, state = env.reset(start, params)
        _, out = jax.lax.scan(one_step, state, jax.random.split(steps, 3 * horizon))
        return out

    terminated, regret, returns = jax.jit(jax.vmap(run))(jax.random.split(jax.random.key(2026), copies))
    terminated = np.asarray(terminated)
    assert terminated.sum(axis=1).tolist() == [3] * copies
    assert np.flatnonzero(terminated[0]).tolist() == [horizon - 1, 2 * horizon - 1, 3 * horizon - 1]
    regret, returns = np.asarray(regret)[terminated], np.asarray(returns)[terminated]
    for sample, expected in ((regret, horizon * (max(means) - np.mean(means))), (returns, horizon * np.mean(means))):
        se = sample.std(ddof=1) / np.sqrt(sample.size)
        assert abs(sample.mean() - expected) < 4 * se, (sample.mean(), expected, se)
