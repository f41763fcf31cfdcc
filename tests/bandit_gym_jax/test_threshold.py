"""The threshold bandit's functional env (``bandit_gym.jax.envs.threshold``) against the numpy env: the same
observation keys and spaces, the same rounds played by hand on a deterministic instance, and the same
distributions of the pseudo-regret and of the level counts under the Uniform agent."""

from __future__ import annotations

import pickle
import warnings
from typing import Any

import gymnasium as gym
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from bandit_gym.agents import Uniform as NumpyUniform
from bandit_gym.envs.threshold import ThresholdBanditEnv
from bandit_gym.families import CONTRACTS, Family
from bandit_gym.instances import RandomSurvival
from bandit_gym.jax.agents import Uniform
from bandit_gym.jax.agents._base import act
from bandit_gym.jax.envs.threshold import (
    ThresholdBanditJaxEnv,
    ThresholdBanditJaxVectorEnv,
    ThresholdFunctional,
    draw_random_survival,
)
from bandit_gym.jax.rollout import play
from bandit_gym.registration import ENV_SPECS

from ._compare import Z_LIMIT, numpy_metric, z_statistic

IDS = ("ThresholdBandit-v0", "ThresholdBanditCensored-v0", "ThresholdBandit-Delivery-v0")
LEVEL_KEYS = ("level_exceed", "level_trials")

POINT_MASSES = ((0, 1, 0, 0), (0, 0, 1, 0), (0, 0, 0, 1))
"""Arms that always take the value 1, 2 and 3 (m = 3): ``F = [[1, 0, 0], [1, 1, 0], [1, 1, 1]]``, every round's
outcome known in advance (no unique best arm at levels 1 and 2: the constructors warn)."""
SEQUENCE = (1, 2, 3, 3, 2)
ARMS = (0, 0, 1, 2, 1)


def quietly(make: Any, **kwargs: Any) -> Any:
    """``make(**kwargs)`` without the warning about abernethy2016's unique-best-arm assumption."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="this threshold-bandit instance breaks")
        return make(**kwargs)


# ----------------------------------------------------------------------------------------------- spaces
@pytest.mark.parametrize("env_id", IDS)
def test_keys_and_spaces_are_the_numpy_envs(env_id: str) -> None:
    kwargs = ENV_SPECS[env_id].kwargs
    functional = ThresholdFunctional(**kwargs)
    numpy_env = ThresholdBanditEnv(**kwargs)
    keys = set(functional.engine.observation_space().spaces)
    assert keys == set(functional.observation_space)  # type: ignore[call-overload]
    assert keys == set(CONTRACTS[Family.THRESHOLD].observation_keys)
    assert functional.observation_space == numpy_env.observation_space
    assert functional.action_space == numpy_env.action_space
    state = functional.initial(jax.random.key(0))
    for _ in range(2):
        obs = {key: np.asarray(value) for key, value in functional.observation(state).items()}
        assert set(obs) == keys
        assert all(value.dtype == np.float32 for value in obs.values())
        assert functional.observation_space.contains(obs)
        state = functional.transition(state, jnp.int32(1), jax.random.key(1))


# ----------------------------------------------------------------------------------------------- by hand
EXPECTED: dict[str, dict[str, Any]] = {
    # rewards 1{X >= c}: X = 1, 1, 2, 3, 2 against c = 1, 2, 3, 3, 2; regret max_i F_i(c) - F_a(c) = 0, 1, 1, 0, 0
    "uncensored": {"exceed": [[2, 0, 0], [2, 2, 0], [1, 1, 1]], "trials": [[2, 2, 2], [2, 2, 2], [1, 1, 1]],
                   "last_value": [1, 1, 2, 3, 2], "last_censored": [0, 0, 0, 0, 0]},
    # censored: X seen when X < c; exceed counts min(X, c) >= j, trials c >= j
    "censored": {"exceed": [[2, 0, 0], [2, 2, 0], [1, 1, 1]], "trials": [[2, 1, 0], [2, 2, 1], [1, 1, 1]],
                 "last_value": [-1, 1, 2, -1, -1], "last_censored": [1, 0, 0, 1, 1]},
}


@pytest.mark.parametrize("feedback", ["uncensored", "censored"])
def test_a_deterministic_episode_by_hand_and_as_the_numpy_env_plays_it(feedback: str) -> None:
    kwargs = {"distributions": POINT_MASSES, "thresholds": np.array(SEQUENCE), "feedback": feedback,
              "horizon": len(SEQUENCE)}
    env = quietly(ThresholdBanditJaxEnv, **kwargs)
    numpy_env = quietly(ThresholdBanditEnv, **kwargs)
    obs, _ = env.reset(seed=3)
    numpy_obs, _ = numpy_env.reset(seed=4)
    expected = EXPECTED[feedback]
    assert float(obs["threshold"][0]) == SEQUENCE[0]
    for t, arm in enumerate(ARMS):
        for key in numpy_obs:
            np.testing.assert_array_equal(np.asarray(obs[key]), numpy_obs[key], err_msg=f"{key} before round {t}")
        obs, reward, terminated, truncated, info = env.step(arm)
        numpy_obs, numpy_reward, numpy_terminated, numpy_truncated, numpy_info = numpy_env.step(arm)
        assert {key: float(value) for key, value in info.items()} == numpy_info
        value = POINT_MASSES[arm].index(1)
        assert reward == numpy_reward == float(value >= SEQUENCE[t])
        assert (terminated, truncated) == (numpy_terminated, numpy_truncated) == (t == len(ARMS) - 1, False)
        assert float(obs["last_value"][0]) == expected["last_value"][t]
        assert float(obs["last_censored"][0]) == expected["last_censored"][t]
        assert float(obs["last_reward"][0]) == reward
        assert float(obs["threshold"][0]) == (SEQUENCE[t + 1] if t + 1 < len(SEQUENCE) else 0)
    for key in numpy_obs:
        np.testing.assert_array_equal(np.asarray(obs[key]), numpy_obs[key], err_msg=f"{key} at the end")
    np.testing.assert_array_equal(np.asarray(obs["level_exceed"]).reshape(3, 3), expected["exceed"])
    np.testing.assert_array_equal(np.asarray(obs["level_trials"]).reshape(3, 3), expected["trials"])
    np.testing.assert_array_equal(np.asarray(obs["counts"]), [2, 2, 1])
    np.testing.assert_array_equal(np.asarray(obs["sums"]), [1, 1, 1])
    metrics = env.func_env.episode_metrics(env.state)
    assert float(metrics["regret"]) == float(env.state.loss) == 2.0
    assert int(metrics["pulls"]) == len(SEQUENCE)
    with pytest.raises(ValueError, match="after the episode terminated"):
        env.step(0)


def test_a_pure_transition_after_the_end_changes_nothing() -> None:
    functional = quietly(ThresholdFunctional, distributions=POINT_MASSES, horizon=1)
    state = functional.transition(functional.initial(jax.random.key(0)), jnp.int32(2), jax.random.key(1))
    assert bool(state.done) and int(state.threshold) == 0
    after = functional.transition(state, jnp.int32(0), jax.random.key(2))
    for name, before, now in zip(state._fields, state, after, strict=True):
        np.testing.assert_array_equal(np.asarray(now), np.asarray(before), err_msg=name)
    assert float(functional.reward(state, jnp.int32(0), after)) == 0.0


@pytest.mark.parametrize("regime", ["increasing", "decreasing"])
def test_staged_thresholds_are_the_numpy_envs(regime: str) -> None:
    # m = 5: stages of 2 rounds, 3 rounds left in the last stage
    kwargs: dict[str, Any] = {"thresholds": regime, "horizon": 13}
    env, numpy_env = ThresholdBanditJaxEnv(**kwargs), ThresholdBanditEnv(**kwargs)
    seen: list[tuple[float, float]] = []
    obs, _ = env.reset(seed=0)
    numpy_obs, _ = numpy_env.reset(seed=0)
    for _ in range(13):
        seen.append((float(obs["threshold"][0]), float(numpy_obs["threshold"][0])))
        obs, *_ = env.step(0)
        numpy_obs, *_ = numpy_env.step(0)
    jax_levels, numpy_levels = zip(*seen, strict=True)
    assert jax_levels == numpy_levels
    assert jax_levels[:2] == ((1.0, 1.0) if regime == "increasing" else (5.0, 5.0))


def test_cyclic_thresholds_repeat_one_permutation_per_episode() -> None:
    functional = ThresholdFunctional(thresholds="cyclic", horizon=12)
    episode = jax.jit(lambda key: _final(functional, key, record_thresholds=True))
    firsts = set()
    for seed in range(6):
        levels = np.asarray(episode(jax.random.key(seed))[1])
        assert sorted(levels[:5]) == [1, 2, 3, 4, 5]
        np.testing.assert_array_equal(levels[5:10], levels[:5])
        np.testing.assert_array_equal(levels[10:], levels[:2])
        firsts.add(tuple(levels[:5]))
    assert len(firsts) > 1  # a new permutation at each reset


def test_the_vector_shell_ends_every_copy_after_the_horizon_and_autoresets() -> None:
    envs = ThresholdBanditJaxVectorEnv(num_envs=4, horizon=3, feedback="censored")
    obs, _ = envs.reset(seed=0)
    assert obs["level_trials"].shape == (4, 15)
    for t in range(3):
        obs, reward, terminated, truncated, _ = envs.step(jnp.full(4, t % 3, dtype=jnp.int32))
        assert bool(jnp.all(terminated == (t == 2))) and not bool(jnp.any(truncated))
    np.testing.assert_array_equal(np.asarray(obs["threshold"]), 0.0)
    np.testing.assert_array_equal(np.asarray(obs["counts"]), 1.0)
    obs, reward, terminated, truncated, _ = envs.step(jnp.zeros(4, dtype=jnp.int32))
    np.testing.assert_array_equal(np.asarray(obs["budget_left"]), 3.0)
    np.testing.assert_array_equal(np.asarray(reward), 0.0)
    assert bool(jnp.all(obs["threshold"] >= 1))


def test_gymnasium_env_checker_and_pickling() -> None:
    check_env(ThresholdBanditJaxEnv(horizon=40, feedback="censored"), skip_render_check=True)
    env = ThresholdBanditJaxEnv(**ENV_SPECS["ThresholdBandit-Delivery-v0"].kwargs)
    copy = pickle.loads(pickle.dumps(env))
    assert copy.observation_space == env.observation_space


# ----------------------------------------------------------------------------------------------- refusals
def test_a_survival_sampler_other_than_random_survival_is_refused() -> None:
    def sampler(rng: np.random.Generator, n: int) -> np.ndarray:
        return np.tile([[0.9, 0.1], [0.5, 0.5]], (n, 1, 1))

    assert ThresholdBanditEnv(survival=sampler).action_space == gym.spaces.Discrete(2)  # the numpy env takes it
    with pytest.raises(ValueError, match=r"survival=.*RandomSurvival"):
        ThresholdFunctional(survival=sampler)


def test_the_numpy_envs_argument_errors_are_kept() -> None:
    with pytest.raises(ValueError, match="thresholds"):
        ThresholdFunctional(thresholds="random")
    with pytest.raises(ValueError, match="feedback"):
        ThresholdFunctional(feedback="partial")


def test_random_survival_gives_up_with_nan_where_numpy_raises() -> None:
    sampler = RandomSurvival(num_arms=3, num_levels=5, min_gap=0.9)
    with pytest.raises(ValueError, match="accepts too few draws"):
        sampler(np.random.default_rng(0), 1)
    assert bool(jnp.all(jnp.isnan(draw_random_survival(jax.random.key(0), sampler))))
    # such a sampler never reaches an episode: the env draws one instance when it is built, as the numpy env does
    with pytest.raises(ValueError, match="accepts too few draws"):
        ThresholdFunctional(survival=sampler)


# ----------------------------------------------------------------------------------------------- distributions
def _final(functional: ThresholdFunctional, key: jax.Array, record_thresholds: bool = False) -> Any:
    """One episode of the JAX Uniform agent: its last observation (and the threshold of every round)."""
    agent = Uniform()
    params: Any = functional.default_params
    horizon = int(params.horizon)
    env_key, agent_key, loop_key = jax.random.split(key, 3)
    state = functional.initial(env_key, params)
    obs = functional.observation(state)

    def step(carry: tuple[Any, ...], key: jax.Array) -> tuple[tuple[Any, ...], jax.Array]:
        state, agent_state, obs = carry
        act_key, env_key = jax.random.split(key)
        arm, agent_state = act(agent, functional.family, agent_state, obs, act_key)
        level = state.threshold
        state = functional.transition(state, arm, env_key, params)
        return (state, agent_state, functional.observation(state)), level

    carry = (state, agent.init(agent_key, obs), obs)
    (state, _, obs), levels = jax.lax.scan(step, carry, jax.random.split(loop_key, horizon))
    return (obs, levels) if record_thresholds else obs


def jax_final_obs(episodes: int, seed: int, **kwargs: Any) -> dict[str, np.ndarray]:
    functional = ThresholdFunctional(**kwargs)
    run = jax.jit(jax.vmap(lambda key: _final(functional, key)))
    return {key: np.asarray(value) for key, value in run(jax.random.split(jax.random.key(seed), episodes)).items()}


def numpy_final_obs(episodes: int, seed: int, **kwargs: Any) -> dict[str, np.ndarray]:
    envs = gym.make_vec("ThresholdBandit-v0", num_envs=episodes, vectorization_mode="vector_entry_point", **kwargs)
    agent = NumpyUniform()
    agent.reset(seed=seed)
    obs, _ = envs.reset(seed=seed)
    terminated = np.zeros(episodes, dtype=bool)
    while not terminated.all():
        obs, _, terminated, _, _ = envs.step(agent.act(obs))
    return obs


def worst_z(a: dict[str, np.ndarray], b: dict[str, np.ndarray], keys: tuple[str, ...]) -> float:
    """The largest |z| of the per-entry means of ``keys`` between two batches of observations."""
    return max(abs(z_statistic(a[key][:, i], b[key][:, i])) for key in keys for i in range(a[key].shape[1]))


@pytest.mark.parametrize("env_id", ["ThresholdBandit-v0", "ThresholdBanditCensored-v0"])
def test_uniform_regret_equals_the_numpy_envs_in_distribution(env_id: str) -> None:
    episodes, horizon = 2000, 300
    kwargs = {**ENV_SPECS[env_id].kwargs, "horizon": horizon}
    result = play(ThresholdFunctional(**kwargs), Uniform(), 11, episodes)
    assert set(result) == {"regret", "pulls"}
    np.testing.assert_array_equal(np.asarray(result["pulls"]), horizon)
    theirs = numpy_metric(env_id, NumpyUniform(), "regret", episodes, seed=12, horizon=horizon)
    z = z_statistic(np.asarray(result["regret"]), theirs)
    assert abs(z) < Z_LIMIT, f"{env_id}: JAX mean {float(result['regret'].mean()):.3f}, numpy {theirs.mean():.3f}"


def test_censored_level_counts_equal_the_numpy_envs_in_distribution_and_differ_from_uncensored() -> None:
    episodes, horizon = 2000, 60
    censored = jax_final_obs(episodes, 21, feedback="censored", horizon=horizon)
    theirs = numpy_final_obs(episodes, 22, feedback="censored", horizon=horizon)
    assert worst_z(censored, theirs, LEVEL_KEYS) < Z_LIMIT
    assert worst_z(censored, theirs, ("counts", "sums")) < Z_LIMIT
    # the negative control: the same comparison sees the uncensored counts (trials at every level, all X >= j)
    uncensored = numpy_final_obs(episodes, 23, feedback="uncensored", horizon=horizon)
    assert worst_z(censored, uncensored, ("level_exceed",)) > Z_LIMIT
    assert worst_z(censored, uncensored, ("level_trials",)) > Z_LIMIT


@pytest.mark.slow
def test_random_survival_draws_and_regret_equal_the_numpy_envs_in_distribution() -> None:
    sampler = RandomSurvival()
    draws = np.asarray(jax.vmap(lambda key: draw_random_survival(key, sampler))(
        jax.random.split(jax.random.key(31), 4000)))
    theirs = sampler(np.random.default_rng(32), 4000)
    assert worst_z({"F": draws.reshape(4000, -1)}, {"F": theirs.reshape(4000, -1)}, ("F",)) < Z_LIMIT
    episodes, horizon = 1000, 50
    kwargs = {"survival": sampler, "thresholds": "cyclic", "horizon": horizon}
    ours = np.asarray(play(ThresholdFunctional(**kwargs), Uniform(), 33, episodes)["regret"])
    assert abs(z_statistic(ours, numpy_metric("ThresholdBandit-v0", NumpyUniform(), "regret", episodes, seed=34,
                                              **kwargs))) < Z_LIMIT


def test_play_refuses_common_random_numbers() -> None:
    """The threshold bandit draws no per-arm sample streams (nor does its numpy env): ``play`` says so rather than
    play independent draws under that name."""
    env = ThresholdFunctional(horizon=20)
    with pytest.raises(ValueError, match="common_random_numbers=True: the threshold env"):
        play(env, Uniform(), 0, 4, common_random_numbers=True)
