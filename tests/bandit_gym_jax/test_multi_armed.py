"""The functional K-armed bandit and its JAX agents (UCB1, KL-UCB, Thompson) against their numpy twins: the same
spaces and contract, an episode played by hand, Gymnasium's checks, the vector shell's autoreset, first decisions
computed by hand, and equal regret statistics."""

from __future__ import annotations

import functools
from typing import Any

import gymnasium as gym
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from scipy import optimize, special

import bandit_gym  # noqa: F401  (registers the numpy envs)
import bandit_gym.agents as numpy_agents
from bandit_gym.agents.multi_armed.kl_ucb import kl_ucb_bernoulli as numpy_kl_ucb_bernoulli
from bandit_gym.divergences import kl_bernoulli as numpy_kl_bernoulli
from bandit_gym.families import CONTRACTS, Family
from bandit_gym.instances import UniformMeans
from bandit_gym.jax.agents.kl_ucb import KLUCB, kl_ucb_bernoulli
from bandit_gym.jax.agents.thompson import Thompson
from bandit_gym.jax.agents.ucb1 import UCB1
from bandit_gym.jax.envs.multi_armed import (
    MultiArmedBanditJaxEnv,
    MultiArmedBanditJaxVectorEnv,
    MultiArmedFunctional,
    MultiArmedParams,
)
from bandit_gym.jax.rollout import play

from ._compare import Z_LIMIT, numpy_metric, z_statistic

ID = "MultiArmedBandit-v0"
MEANS = [0.3, 0.5, 0.6, 0.65]
BUDGET = 500
EPISODES = 2000


def as_numpy(obs: dict) -> dict[str, np.ndarray]:
    return {key: np.asarray(value) for key, value in obs.items()}


# ------------------------------------------------------------------------------------------------------ env
@pytest.mark.parametrize("kwargs", [{"means": [0.2, 0.5, 0.9], "budget": 40},
                                    {"num_arms": 5, "budget": 7},
                                    {"means": [-1.0, 0.0, 2.5], "distribution": "gaussian", "sigma": 2.0}])
def test_spaces_and_keys_are_the_numpy_envs(kwargs: dict) -> None:
    twin = gym.make(ID, **kwargs)
    env = MultiArmedFunctional(**kwargs)
    assert env.observation_space == twin.observation_space
    assert env.action_space == twin.action_space
    assert isinstance(env.observation_space, gym.spaces.Dict)
    assert set(env.observation_space.spaces) == set(CONTRACTS[Family.MULTI_ARMED].observation_keys)
    assert "last_reward" in env.observation_space.spaces
    obs = env.observation(env.initial(jax.random.key(0)))
    assert set(obs) == set(CONTRACTS[Family.MULTI_ARMED].observation_keys)
    assert env.observation_space.contains(as_numpy(obs))
    np.testing.assert_equal(as_numpy(obs), twin.reset(seed=0)[0])  # the first observation carries no draw


def test_instance_kinds_and_params() -> None:
    env = MultiArmedFunctional(num_arms=5, budget=9)  # means=None: UniformMeans per episode, as the numpy env
    assert env.instance == "uniform" and env.num_arms == 5
    params = env.default_params
    assert isinstance(params, MultiArmedParams)
    assert (float(params.low), float(params.high), int(params.budget)) == (0.0, 1.0, 9)
    means = np.stack([np.asarray(env.initial(jax.random.key(seed)).means) for seed in range(200)])
    assert means.shape == (200, 5) and means.min() >= 0.0 and means.max() <= 1.0
    assert abs(means.mean() - 0.5) < 0.03  # 1000 uniforms: sd of the mean 0.009
    narrow = MultiArmedFunctional(means=UniformMeans(num_arms=3, low=0.2, high=0.4))
    drawn = np.asarray(narrow.initial(jax.random.key(1)).means)
    assert narrow.instance == "uniform" and ((drawn >= 0.2) & (drawn <= 0.4)).all()
    fixed = MultiArmedFunctional(means=[0.1, 0.7], distribution="gaussian", sigma=0.5, budget=3)
    assert fixed.instance == "fixed" and fixed.gaussian and float(fixed.get_default_params().sigma) == 0.5
    np.testing.assert_allclose(np.asarray(fixed.initial(jax.random.key(0)).means), [0.1, 0.7], rtol=1e-6)


def test_refuses_what_the_jax_path_cannot_draw() -> None:
    with pytest.raises(ValueError, match="common_random_numbers"):
        MultiArmedFunctional(means=[0.2, 0.4], common_random_numbers=True)
    with pytest.raises(ValueError, match="UniformMeans"):
        MultiArmedFunctional(means=lambda rng, n: rng.uniform(size=(n, 3)))
    with pytest.raises(ValueError, match="num_arms"):  # the numpy engine checks the arguments
        MultiArmedFunctional(means=[0.2, 0.4], num_arms=2)


def test_an_episode_by_hand_matches_the_numpy_env() -> None:
    """Arms of means 0 and 1 are deterministic for Bernoulli: the pulls 1, 0, 1, 1 give samples 1, 0, 1, 1, and
    the pseudo-regret is the gap 1 of the one pull of arm 0."""
    env = MultiArmedFunctional(means=[0.0, 1.0], budget=4)
    twin = gym.make(ID, means=[0.0, 1.0], budget=4)
    twin_obs, _ = twin.reset(seed=0)
    state = env.initial(jax.random.key(0))
    np.testing.assert_equal(as_numpy(env.observation(state)), twin_obs)
    expected = [  # (counts, sums, budget_left, last_reward, regret)
        ([0, 1], [0, 1], 3, 1.0, 0.0),
        ([1, 1], [0, 1], 2, 0.0, 1.0),
        ([1, 2], [0, 2], 1, 1.0, 1.0),
        ([1, 3], [0, 3], 0, 1.0, 1.0),
    ]
    for t, (arm, (counts, sums, left, last, regret)) in enumerate(zip([1, 0, 1, 1], expected, strict=True)):
        key = jax.random.key(100 + t)
        nxt = env.transition(state, jnp.int32(arm), key)
        obs = as_numpy(env.observation(nxt))
        reward = float(env.reward(state, jnp.int32(arm), nxt))
        info = env.transition_info(state, jnp.int32(arm), nxt)
        twin_obs, twin_reward, terminated, truncated, twin_info = twin.step(arm)
        np.testing.assert_equal(obs, twin_obs)
        np.testing.assert_array_equal(obs["counts"], counts)
        np.testing.assert_array_equal(obs["sums"], sums)
        assert obs["budget_left"][0] == left and obs["last_arm"][0] == arm and obs["last_reward"][0] == last
        assert reward == last == twin_reward
        assert float(nxt.loss) == regret == twin_info["pseudo_regret"]
        assert float(info["expected_reward"]) == twin_info["expected_reward"] == float(arm)
        assert float(info["best_expected_reward"]) == twin_info["best_expected_reward"] == 1.0
        assert bool(env.terminal(nxt)) == terminated == (left == 0) and not truncated
        state = nxt
    assert env.episode_metrics(state) == {"regret": 1.0, "pulls": 4}
    after = env.transition(state, jnp.int32(0), jax.random.key(9))  # a finished episode pulls nothing
    assert float(env.reward(state, jnp.int32(0), after)) == 0.0 and int(after.counts.sum()) == 4


def test_gaussian_reward_is_the_sample() -> None:
    env = MultiArmedBanditJaxEnv(means=[0.0, 5.0, -2.0], distribution="gaussian", sigma=0.5, budget=30)
    obs, _ = env.reset(seed=3)
    rewards = []
    for t in range(30):
        arm = t % 3
        before = np.asarray(obs["sums"][arm])
        obs, reward, terminated, truncated, info = env.step(arm)
        assert reward == float(obs["last_reward"][0])
        np.testing.assert_allclose(np.asarray(obs["sums"][arm]) - before, reward, rtol=1e-5, atol=1e-5)
        assert terminated == (t == 29) and not truncated
        rewards.append(reward)
    samples = np.asarray(rewards).reshape(10, 3)
    assert np.abs(samples.mean(axis=0) - [0.0, 5.0, -2.0]).max() < 4 * 0.5 / np.sqrt(10)
    assert float(info["pseudo_regret"]) == pytest.approx(10 * 5.0 + 10 * 7.0)
    with pytest.raises(ValueError, match="terminated"):
        env.step(0)


def test_gymnasium_env_checker() -> None:
    check_env(MultiArmedBanditJaxEnv(means=[0.2, 0.5, 0.8], budget=40).unwrapped, skip_render_check=True)
    check_env(MultiArmedBanditJaxEnv(num_arms=4, budget=40), skip_render_check=True)


def test_vector_env_autoresets_after_the_budget() -> None:
    envs = MultiArmedBanditJaxVectorEnv(num_envs=3, means=[0.0, 1.0], budget=2)
    obs, _ = envs.reset(seed=0)
    assert obs["counts"].shape == (3, 2)
    _, reward, terminated, truncated, _ = envs.step(jnp.array([1, 1, 0]))
    np.testing.assert_array_equal(np.asarray(reward), [1.0, 1.0, 0.0])
    assert not np.asarray(terminated).any() and not np.asarray(truncated).any()
    obs, reward, terminated, truncated, _ = envs.step(jnp.array([0, 1, 0]))
    assert np.asarray(terminated).all() and not np.asarray(truncated).any()
    np.testing.assert_array_equal(np.asarray(obs["budget_left"])[:, 0], [0.0, 0.0, 0.0])
    obs, reward, terminated, _, _ = envs.step(jnp.array([1, 1, 1]))  # NEXT_STEP: the new episodes' start
    np.testing.assert_array_equal(np.asarray(reward), [0.0, 0.0, 0.0])
    assert not np.asarray(terminated).any()
    np.testing.assert_array_equal(np.asarray(obs["counts"]), np.zeros((3, 2)))
    np.testing.assert_array_equal(np.asarray(obs["budget_left"])[:, 0], [2.0, 2.0, 2.0])


def test_play_returns_the_numpy_metrics_exactly_on_a_deterministic_instance() -> None:
    """On means [0, 1] every sample is known: UCB1 with index ties pulls arm 0, then arm 1, then the arm of larger
    index, the same decisions as the numpy agent, so the regrets agree exactly."""
    env = MultiArmedFunctional(means=[0.0, 1.0], budget=30)
    jax_result = play(env, UCB1(tie_break="index"), 0, 4)
    numpy_result = play_numpy_episodes(numpy_agents.UCB1(tie_break="index"), 4, 0, means=[0.0, 1.0], budget=30)
    assert set(jax_result) <= set(numpy_result)
    np.testing.assert_array_equal(np.asarray(jax_result["pulls"]), numpy_result["pulls"])
    np.testing.assert_array_equal(np.asarray(jax_result["regret"]), numpy_result["regret"])
    assert np.asarray(jax_result["regret"]).min() >= 1.0  # arm 0 pulled at least once


def play_numpy_episodes(agent: Any, episodes: int, seed: int, **kwargs: Any) -> dict[str, np.ndarray]:
    from bandit_gym.rollout import play_vector

    envs = gym.make_vec(ID, num_envs=episodes, vectorization_mode="vector_entry_point", **kwargs)
    return play_vector(envs, agent, seed=seed)


# ------------------------------------------------------------------------------------------------------ agents
def crafted(counts: list[float], sums: list[float], budget: int) -> tuple[dict, dict]:
    """The start observation of an episode of ``budget`` pulls and a later one with ``counts`` and ``sums``."""
    c, s = np.asarray(counts, dtype=np.float32), np.asarray(sums, dtype=np.float32)
    k = c.size
    start = {"budget_left": np.array([budget], np.float32), "last_arm": np.array([-1.0], np.float32),
             "last_reward": np.zeros(1, np.float32), "counts": np.zeros(k, np.float32),
             "sums": np.zeros(k, np.float32), "means": np.zeros(k, np.float32)}
    later = {"budget_left": np.array([budget - c.sum()], np.float32), "last_arm": np.array([0.0], np.float32),
             "last_reward": np.array([s[0] / max(c[0], 1.0)], np.float32), "counts": c, "sums": s,
             "means": np.where(c > 0, s / np.maximum(c, 1.0), 0.0).astype(np.float32)}
    return start, later


def first_decision(agent: object, start: dict, obs: dict, key: int = 0) -> int:
    """The arm ``agent`` pulls on ``obs`` in an episode that started on ``start``, from the seed ``key``."""
    return int(decisions(agent, start, obs, jax.random.key(key)[None])[0])


def decisions(agent: object, start: dict, obs: dict, keys: jax.Array) -> jax.Array:
    """The arms ``agent`` pulls on ``obs`` from each of ``keys`` (its own arm order and draws per key)."""
    return _decisions(agent, {k: jnp.asarray(v) for k, v in start.items()},
                      {k: jnp.asarray(v) for k, v in obs.items()}, keys)


@functools.partial(jax.jit, static_argnames="agent")
def _decisions(agent: Any, start: dict, obs: dict, keys: jax.Array) -> jax.Array:
    def one(key: jax.Array) -> jax.Array:
        init_key, select_key = jax.random.split(key)
        return agent.select(agent.init(init_key, start), obs, select_key)[0]

    return jax.vmap(one)(keys)


def numpy_decision(agent: object, obs: dict) -> int:
    agent.reset(seed=0)  # type: ignore[attr-defined]
    return int(agent.act({k: v.copy() for k, v in obs.items()}))  # type: ignore[attr-defined]


def test_ucb1_first_decisions_by_hand() -> None:
    agent = UCB1(tie_break="index")
    start, _ = crafted([0, 0, 0], [0, 0, 0], 50)
    assert first_decision(agent, start, start) == 0  # every index +inf: the smallest arm
    start, obs = crafted([1, 0, 1], [1, 0, 0], 50)
    assert first_decision(agent, start, obs) == 1  # the arm never pulled
    # n = 10 pulls: sqrt(2 ln 10) = 2.1460; indices 0.8 + 2.1460/sqrt5 = 1.7597, 0.25 + 2.1460/2 = 1.3230,
    # 0 + 2.1460 = 2.1460: arm 2
    start, obs = crafted([5, 4, 1], [4, 1, 0], 50)
    assert first_decision(agent, start, obs) == 2 == numpy_decision(numpy_agents.UCB1(tie_break="index"), obs)
    # n = 40: sqrt(2 ln 40) = 2.7162; 0.9 + 2.7162/sqrt30 = 1.3959 against 0.4 + 2.7162/sqrt10 = 1.2589: arm 0
    start, obs = crafted([30, 10], [27, 4], 50)
    assert first_decision(agent, start, obs) == 0 == numpy_decision(numpy_agents.UCB1(tie_break="index"), obs)
    # equal statistics tie: the smallest arm with "index", either arm with "random"
    start, obs = crafted([4, 4], [2, 2], 50)
    assert first_decision(agent, start, obs) == 0
    assert set(np.asarray(decisions(UCB1(), start, obs, jax.random.split(jax.random.key(0), 20))).tolist()) == {0, 1}


def test_kl_ucb_first_decisions_by_hand() -> None:
    agent = KLUCB(tie_break="index")
    start, _ = crafted([0, 0, 0], [0, 0, 0], 200)
    assert first_decision(agent, start, start) == 0
    # t = 101 (100 pulls made): level ln(101) / N_i. Arm 0: mean 0.9 of 90 pulls; arm 1: mean 0.6 of 10 pulls.
    # KL-UCB: the roots of N d(p, q) = ln 101 (scipy below) are 0.9693 and 0.9352: arm 0. UCB1's Hoeffding
    # bonus ranks them the other way (0.9 + 0.3202 = 1.2202 < 0.6 + 0.9607 = 1.5607): the divergence matters.
    start, obs = crafted([90, 10], [81, 6], 200)
    level = np.log(101.0) / np.array([90.0, 10.0])
    roots = [optimize.brentq(lambda q, p=p, lv=lv: numpy_kl_bernoulli(p, q) - lv, p, 1 - 1e-15)
             for p, lv in zip([0.9, 0.6], level, strict=True)]
    assert roots[0] > roots[1]
    state = agent.init(jax.random.key(0), {k: jnp.asarray(v) for k, v in start.items()})
    index = np.asarray(agent.index(state, {k: jnp.asarray(v) for k, v in obs.items()}))
    np.testing.assert_allclose(index, roots, atol=2e-7)
    assert first_decision(agent, start, obs) == 0 == numpy_decision(numpy_agents.KLUCB(tie_break="index"), obs)
    assert first_decision(UCB1(tie_break="index"), start, obs) == 1
    # Gaussian arms (sigma 2): mu_hat + 2 sqrt(2 ln 101 / N): 0.9 + 0.6405 = 1.5405 < 0.6 + 1.9215 = 2.5215
    gaussian = KLUCB(distribution="gaussian", sigma=2.0, tie_break="index")
    assert first_decision(gaussian, start, obs) == 1
    assert numpy_decision(numpy_agents.KLUCB(distribution="gaussian", sigma=2.0, tie_break="index"), obs) == 1
    # c = 3: level (ln 101 + 3 ln ln 101) / N; an arm never pulled still first
    start, obs = crafted([90, 0, 10], [81, 0, 6], 200)
    assert first_decision(KLUCB(c=3.0, tie_break="index"), start, obs) == 1


def test_kl_ucb_root_reaches_float32_precision() -> None:
    """Against the numpy agent's float64 root on (s / n, ln t / n) for n up to 10^6 and t up to 10^7."""
    rng = np.random.default_rng(0)
    p, level = [], []
    for n in [1, 2, 3, 5, 10, 30, 100, 1000, 10_000, 1_000_000]:
        s = np.unique(np.concatenate([np.arange(min(n, 20) + 1), n - np.arange(min(n, 20) + 1),
                                      rng.integers(0, n + 1, 100)]))
        for t in [2, 10, 1000, 1e5, 1e7]:
            p.append(s / n)
            level.append(np.full(s.size, np.log(t) / n))
    p64, level64 = np.concatenate(p), np.concatenate(level)
    expected = numpy_kl_ucb_bernoulli(p64, level64)
    got = np.asarray(jax.jit(kl_ucb_bernoulli)(jnp.asarray(p64, jnp.float32), jnp.asarray(level64, jnp.float32)))
    assert np.abs(got - expected).max() < 2e-7  # a few float32 ulps of the mean itself
    assert (got >= p64.astype(np.float32)).all() and (got <= 1.0).all()
    assert float(kl_ucb_bernoulli(jnp.float32(1.0), jnp.float32(0.3))) == 1.0
    assert float(kl_ucb_bernoulli(jnp.float32(0.0), jnp.float32(0.3))) == pytest.approx(1 - np.exp(-0.3), rel=1e-6)


def test_thompson_first_decisions() -> None:
    start, _ = crafted([0, 0], [0, 0], 3000)
    start, sure = crafted([1000, 1000], [1000, 0], 3000)  # Beta(1001, 1) against Beta(1, 1001)
    keys = jax.random.split(jax.random.key(1), 20_000)
    assert (np.asarray(decisions(Thompson(), start, sure, keys)) == 0).all()
    # Beta(2, 1) against Beta(1, 2): P(arm 0) = integral of 2x (2x - x^2) dx over [0, 1] = 5/6
    start, obs = crafted([1, 1], [1, 0], 3000)
    share = float(jnp.mean(decisions(Thompson(), start, obs, keys) == 0))
    assert abs(share - 5 / 6) < 4 * np.sqrt(5 / 36 / keys.shape[0])
    # Gaussian: N(S/(N+1), sigma^2/(N+1)); arm 0 N(9/10, 1/10), arm 1 N(0, 1): P(arm 1) = Phi(-0.9/sqrt(1.1))
    start, obs = crafted([9, 0], [9, 0], 3000)
    share = float(jnp.mean(decisions(Thompson(distribution="gaussian"), start, obs, keys) == 1))
    expected = float(special.ndtr(-0.9 / np.sqrt(1.1)))
    assert abs(share - expected) < 4 * np.sqrt(expected * (1 - expected) / keys.shape[0])


def test_agents_refuse_bad_parameters() -> None:
    with pytest.raises(ValueError, match="tie_break"):
        UCB1(tie_break="first")
    with pytest.raises(ValueError, match="c="):
        KLUCB(c=-1.0)
    with pytest.raises(ValueError, match="distribution"):
        KLUCB(distribution="poisson")
    with pytest.raises(ValueError, match="sigma"):
        Thompson(sigma=0.0)
    for cls in (UCB1, KLUCB, Thompson):
        assert cls.families == ("multi_armed",) and cls.numpy_agent == cls.__name__
        assert hasattr(numpy_agents, cls.numpy_agent)


def test_play_refuses_a_family_the_agent_does_not_play() -> None:
    from bandit_gym.jax.envs.pure_exploration import ThresholdingFunctional

    with pytest.raises(ValueError, match="plays"):
        play(ThresholdingFunctional(means=[0.2, 0.8], budget=10), UCB1(), 0, 2)


# ------------------------------------------------------------------------------------------------------ equality
def compare(jax_agent: Any, numpy_agent: Any, episodes: int = EPISODES, seed: int = 5,
            **kwargs: Any) -> tuple[float, float, float]:
    env = MultiArmedFunctional(**kwargs)
    result = play(env, jax_agent, seed, episodes)
    ours = np.asarray(result["regret"], dtype=np.float64)
    assert (np.asarray(result["pulls"]) == env.engine.budget).all()
    theirs = numpy_metric(ID, numpy_agent, "regret", episodes, seed, **kwargs)
    return float(ours.mean()), float(theirs.mean()), z_statistic(ours, theirs)


@pytest.mark.parametrize(("jax_agent", "numpy_agent"), [
    (UCB1(), numpy_agents.UCB1()),
    (KLUCB(), numpy_agents.KLUCB()),
    pytest.param(Thompson(), numpy_agents.Thompson(), marks=pytest.mark.slow),
], ids=["UCB1", "KLUCB", "Thompson"])
def test_regret_equals_the_numpy_agents_in_distribution(jax_agent: object, numpy_agent: object) -> None:
    ours, theirs, z = compare(jax_agent, numpy_agent, means=MEANS, budget=BUDGET)
    assert abs(z) < Z_LIMIT, (ours, theirs, z)


@pytest.mark.parametrize(("jax_agent", "numpy_agent"), [
    (KLUCB(distribution="gaussian"), numpy_agents.KLUCB(distribution="gaussian")),
    (Thompson(distribution="gaussian", sigma=1.0), numpy_agents.Thompson(distribution="gaussian", sigma=1.0)),
], ids=["KLUCB", "Thompson"])
def test_gaussian_regret_equals_the_numpy_agents_in_distribution(jax_agent: object, numpy_agent: object) -> None:
    ours, theirs, z = compare(jax_agent, numpy_agent, means=[0.0, 0.3, 0.5, 1.0], distribution="gaussian",
                              budget=300)
    assert abs(z) < Z_LIMIT, (ours, theirs, z)


def test_regret_on_instances_drawn_per_episode_equals_the_numpy_envs() -> None:
    """means=None: both envs draw K = 6 means U(0, 1) per episode (the spread of the regret grows with it)."""
    ours, theirs, z = compare(UCB1(), numpy_agents.UCB1(), num_arms=6, budget=200)
    assert abs(z) < Z_LIMIT, (ours, theirs, z)


def test_the_comparison_detects_a_different_agent() -> None:
    """Negative control: KL-UCB at the level ln t (c = 0) against the numpy KL-UCB at ln t + ln ln t (c = 1),
    about 12% more regret on this instance, fails the comparison."""
    ours, theirs, z = compare(KLUCB(), numpy_agents.KLUCB(c=1.0), means=MEANS, budget=BUDGET)
    assert abs(z) > Z_LIMIT, (ours, theirs, z)


def test_common_random_numbers_pair_two_agents_episodes() -> None:
    """With ``common_random_numbers`` the s-th pull of arm i reads the same sample for every agent given the same
    key, so two agents' regrets of one episode move together (the numpy env's streams): measured 0.72 for UCB1
    and KL-UCB. Without it, step t's draw is shared instead (0.15), and with another key the pair is independent
    (-0.02). 2000 episodes: an independent pair's correlation has sd 0.022."""
    env = MultiArmedFunctional(means=MEANS, budget=200)

    def correlation(crn: bool, key: int = 7) -> float:
        one = play(env, UCB1(), 7, EPISODES, agent_key=1, common_random_numbers=crn)["regret"]
        two = play(env, KLUCB(), key, EPISODES, agent_key=2, common_random_numbers=crn)["regret"]
        return float(np.corrcoef(np.asarray(one), np.asarray(two))[0, 1])

    assert correlation(True) > 0.5 > 0.3 > correlation(False)
    assert abs(correlation(True, key=8)) < 0.1
