"""The JAX Track-and-Stop: its optimal allocation w* against the numpy computations, hand-computed decisions on
crafted observations, and equality in distribution with the numpy ``TrackAndStop``."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import bandit_gym.agents as numpy_agents
from bandit_gym.agents.best_arm._oracle import optimal_weights as numpy_oracle
from bandit_gym.jax.agents._base import ArmOrder
from bandit_gym.jax.agents._oracle import clamped_means, optimal_weights
from bandit_gym.jax.agents.track_and_stop import TrackAndStop, TrackAndStopState, project
from bandit_gym.jax.envs import BestArmFunctional
from bandit_gym.jax.rollout import play
from bandit_gym.lower_bounds import best_arm_allocation

from ._compare import Z_LIMIT, numpy_metric, z_statistic

KEY = jax.random.key(0)


def numpy_weights(means: np.ndarray, gaussian: bool = False, sigma: float = 1.0) -> np.ndarray:
    """w* by the numpy Track-and-Stop's compiled oracle (float64; its clamp and tie rules)."""
    weights, scratch = np.zeros(means.shape[0]), np.zeros(means.shape[0])
    numpy_oracle(np.asarray(means, np.float64), 1.0 if gaussian else 0.0, sigma, weights, scratch)
    return weights


def jax_weights(counts: np.ndarray, sums: np.ndarray, gaussian: bool = False, sigma: float = 1.0) -> np.ndarray:
    """w* of a batch of statistics ``(N, K)`` by the JAX oracle, as the agent computes it."""
    return np.asarray(batched_weights(gaussian, sigma)(jnp.asarray(counts, jnp.float32),
                                                       jnp.asarray(sums, jnp.float32)))


@functools.cache
def batched_weights(gaussian: bool, sigma: float) -> Any:
    def one(c: jax.Array, s: jax.Array) -> jax.Array:
        return optimal_weights(*clamped_means(c, s, gaussian), gaussian, sigma)

    return jax.jit(jax.vmap(one))


@jax.jit
def gaussian_weights(means: jax.Array, sigma: float) -> jax.Array:
    return optimal_weights(means, 1.0 - means, True, sigma)


# --------------------------------------------------------------------------------------------- w*
@pytest.mark.parametrize("gaussian", [False, True])
@pytest.mark.parametrize("k", range(2, 9))
def test_weights_equal_lower_bounds(k: int, gaussian: bool) -> None:
    """Random Bernoulli and Gaussian instances (unique best arm): w* within 2e-6 of
    ``bandit_gym.lower_bounds.best_arm_allocation`` (float64 to machine precision, Brent's method); the means are
    float32 ratios s / n as the agent sees them (measured: at most 1.0e-6 over K = 2..8)."""
    rng = np.random.default_rng(k)
    counts = np.full((40, k), 1000.0, np.float32)
    if gaussian:
        sums, sigma = (rng.normal(0.0, 1.5, (40, k)) * 1000.0).astype(np.float32), 0.7
    else:
        sums, sigma = rng.integers(10, 991, (40, k)).astype(np.float32), 1.0
    got = jax_weights(counts, sums, gaussian, sigma)
    for row in range(40):
        means = sums[row].astype(np.float64) / 1000.0
        if np.sum(means == means.max()) > 1:
            continue
        want = best_arm_allocation(means, "gaussian" if gaussian else "bernoulli", sigma).weights
        assert np.abs(got[row] - want).max() < 2e-6, (means, got[row], want)


@pytest.mark.parametrize("k", [2, 3, 4, 6, 8])
def test_weights_equal_numpy_oracle_on_edges_and_ties(k: int) -> None:
    """Statistics as an episode makes them, small counts included: means of 0 and 1 (clamped to [1e-9, 1 - 1e-9]),
    ties, near ties. Within 3e-5 of the numpy agent's oracle (the largest differences, about 2e-5, are at near ties
    of the two largest means, where a float32 rounding of a mean moves w* that much; elsewhere about 1e-6)."""
    rng = np.random.default_rng(100 + k)
    rows = []
    for high in (3, 20, 500, 20_000):
        counts = np.exp(rng.uniform(0.0, np.log(high), (150, k))).round()
        level = rng.uniform(0.0, 1.0, (150, 1)) + rng.normal(0.0, 0.1, (150, k))
        sums = np.clip(np.round(np.clip(level, 0.0, 1.0) * counts), 0.0, counts)
        rows.append((counts, np.where(rng.uniform(size=(150, k)) < 0.2, counts, sums)))  # some means of 1
    counts = np.concatenate([c for c, _ in rows]).astype(np.float32)
    sums = np.concatenate([s for _, s in rows]).astype(np.float32)
    got = jax_weights(counts, sums)
    want = np.array([numpy_weights(s.astype(np.float64) / c) for c, s in zip(counts, sums, strict=True)])
    assert np.abs(got - want).max() < 3e-5
    assert np.allclose(got.sum(axis=1), 1.0, atol=1e-6)


def test_weights_closed_forms_and_ties() -> None:
    # Gaussian, K = 2: g(x) = D x / (1 + x) and r(x) = x^2, so x* = 1 and w* = (1/2, 1/2) whatever the means
    for means in ([1.0, 0.0], [0.3, 2.5], [-1.0, -0.999]):
        w = gaussian_weights(jnp.asarray(means), 0.5)
        assert np.allclose(np.asarray(w), [0.5, 0.5], atol=1e-6)
    # Gaussian, K = 3 with equal others: x_2 = x_3 = 1 / sqrt 2, w* = (1, 1/sqrt2, 1/sqrt2) / (1 + sqrt 2)
    w = gaussian_weights(jnp.asarray([1.0, 0.0, 0.0]), 1.0)
    s2 = np.sqrt(2.0)
    assert np.allclose(np.asarray(w), np.array([1.0, 1 / s2, 1 / s2]) / (1.0 + s2), atol=1e-6)
    # Bernoulli means mu and 1 - mu: d is symmetric, so w* = (1/2, 1/2); also at the clamped edges 1 and 0
    for counts, sums in (([10, 10], [7, 3]), ([1, 2], [1, 0]), ([5, 3], [0, 3])):
        w = jax_weights(np.asarray([counts]), np.asarray([sums]))[0]
        assert np.allclose(w, [0.5, 0.5], atol=1e-6), (counts, sums, w)
    # ties of the largest mean: shared evenly, 0 elsewhere (Bernoulli ones of 1 too)
    w = jax_weights(np.asarray([[4, 2, 4], [3, 1, 2]]), np.asarray([[2, 1, 1], [3, 1, 0]]))
    assert np.asarray(w).tolist() == [[0.5, 0.5, 0.0], [0.5, 0.5, 0.0]]


# --------------------------------------------------------------------------------------------- by hand
def observation(env: BestArmFunctional, counts: Sequence[float], sums: Sequence[float]) -> dict[str, jax.Array]:
    """The env's observation with crafted counts and sums (budget_left follows from the pulls made)."""
    obs = env.observation(env.initial(KEY))
    counts_, sums_ = jnp.asarray(counts, jnp.float32), jnp.asarray(sums, jnp.float32)
    means = jnp.where(counts_ > 0, sums_ / jnp.maximum(counts_, 1.0), 0.0)
    return {**obs, "counts": counts_, "sums": sums_, "means": means, "budget_left": obs["budget_left"] - counts_.sum()}


def reorder(state: TrackAndStopState, arm_at: list[int]) -> TrackAndStopState:
    order = jnp.asarray(arm_at, jnp.int32)
    return state._replace(order=ArmOrder(arm_at=order, position_of=jnp.argsort(order).astype(jnp.int32),
                                         total=state.order.total))


def decide(agent: TrackAndStop, env: BestArmFunctional, state: Any, counts: Sequence[float],
           sums: Sequence[float]) -> tuple[int, bool, list[int], TrackAndStopState]:
    """One step on a crafted observation: (arm, stop, answer bits, next state)."""
    arm, stop, bits, state = compiled_step(agent)(state, observation(env, counts, sums))
    return int(arm), bool(stop), np.asarray(bits).tolist(), state


@functools.cache
def compiled_step(agent: TrackAndStop) -> Any:
    """``select``, ``stop`` and ``answer`` of one observation, compiled once per agent."""
    def step(state: TrackAndStopState, obs: dict[str, jax.Array]) -> tuple[Any, ...]:
        arm, state = agent.select(state, obs, KEY)
        return arm, agent.stop(state, obs), agent.answer(state, obs, KEY), state

    return jax.jit(step)


def start(agent: TrackAndStop, env: BestArmFunctional) -> TrackAndStopState:
    return agent.init(KEY, env.observation(env.initial(KEY)))


def bernoulli_env(k: int) -> BestArmFunctional:
    return BestArmFunctional(means=[0.9, 0.6, 0.5, 0.3][:k], budget=1000, setting="fixed_confidence")


def test_opening_pulls_each_arm_in_the_copys_order() -> None:
    env, agent = bernoulli_env(3), TrackAndStop(tie_break="index")
    state = start(agent, env)
    assert [decide(agent, env, state, [1] * p + [0] * (3 - p), [1] * p + [0] * (3 - p))[:2]
            for p in range(3)] == [(0, False), (1, False), (2, False)]
    # the order 2, 0, 1: arm 2 first, whatever the statistics say
    state = reorder(state, [2, 0, 1])
    assert [decide(agent, env, state, c, c)[0] for c in ([0, 0, 0], [0, 0, 1], [1, 0, 1])] == [2, 0, 1]
    # answer during the opening: an arm never pulled ranks last
    assert decide(agent, env, start(agent, env), [1, 0, 0], [0, 0, 0])[2] == [1, 0, 0]


def test_forced_exploration() -> None:
    """t = 36, K = 4: U_t = {a : N_a < sqrt(36) - 2 = 4}: its least pulled arm, whatever the tracking says."""
    env, agent = bernoulli_env(4), TrackAndStop(tie_break="index")
    state = start(agent, env)
    assert decide(agent, env, state, [20, 9, 3, 4], [14, 5, 1, 2])[0] == 2  # N = 4 is not below 4
    assert decide(agent, env, state, [20, 9, 4, 3], [14, 5, 1, 2])[0] == 3
    # two arms of 3 pulls: the first in the copy's order
    assert decide(agent, env, state, [21, 9, 3, 3], [14, 5, 1, 2])[0] == 2
    assert decide(agent, env, reorder(state, [3, 2, 1, 0]), [21, 9, 3, 3], [14, 5, 1, 2])[0] == 3
    # t = 35: sqrt(35) - 2 = 3.92, N = (19, 8, 4, 4): no forced pull. D-tracking: w* = (0.4727, 0.4536, 0.0134,
    # 0.0603) (float64), t w - N = (-2.46, 7.88, -3.53, -1.89): arm 1
    counts, sums = [19, 8, 4, 4], [14, 5, 1, 2]
    w = best_arm_allocation(np.asarray(sums) / np.asarray(counts)).weights
    assert np.allclose(w, [0.4727, 0.4536, 0.0134, 0.0603], atol=1e-4)
    assert decide(agent, env, state, counts, sums)[0] == 1


def test_d_tracking_by_hand() -> None:
    # Gaussian, K = 2: w* = (1/2, 1/2); t = 20, N = (12, 8): t w - N = (-2, 2): arm 1 (sqrt(20) - 1 = 3.5 < 8)
    env = BestArmFunctional(means=[1.0, 0.0], budget=1000, setting="fixed_confidence", arm_distribution="gaussian")
    agent = TrackAndStop(tie_break="index", distribution="gaussian", threshold="heuristic")
    arm, _, bits, _ = decide(agent, env, start(agent, env), [12, 8], [12.0, 0.0])
    assert (arm, bits) == (1, [1, 0])
    # Gaussian, K = 3, means (1, 0, 0): w* = (1, 2^-1/2, 2^-1/2) / (1 + 2^1/2) = (0.414, 0.293, 0.293); t = 20,
    # N = (10, 5, 5): t w - N = (-1.72, 0.86, 0.86): arms 1 and 2 tie, the first in the copy's order
    env = BestArmFunctional(means=[1.0, 0.0, 0.0], budget=1000, setting="fixed_confidence", arm_distribution="gaussian")
    state = start(agent, env)
    assert decide(agent, env, state, [10, 5, 5], [10.0, 0.0, 0.0])[0] == 1
    assert decide(agent, env, reorder(state, [2, 1, 0]), [10, 5, 5], [10.0, 0.0, 0.0])[0] == 2
    # Bernoulli, K = 3, t = 30, N = (14, 10, 6), means (5/7, 1/2, 1/6): w* = (0.4892, 0.4716, 0.0392) (float64),
    # t w - N = (0.68, 4.15, -4.83): arm 1
    env, agent = bernoulli_env(3), TrackAndStop(tie_break="index")
    w = best_arm_allocation([10 / 14, 0.5, 1 / 6]).weights
    assert np.allclose(w, [0.4892, 0.4716, 0.0392], atol=1e-4)
    assert decide(agent, env, start(agent, env), [14, 10, 6], [10, 5, 1])[:3] == (1, False, [1, 0, 0])


def test_c_tracking_by_hand() -> None:
    # the projection onto {w_a >= 0.2}: eta = 0.3, (0.9, 0.1, 0) -> (0.6, 0.2, 0.2)
    assert np.allclose(np.asarray(project(jnp.asarray([0.9, 0.1, 0.0]), jnp.float32(0.2))), [0.6, 0.2, 0.2],
                       atol=1e-6)
    # Gaussian, K = 2: w* = (1/2, 1/2) >= eps = (4 + t)^-1/2 / 2, unchanged by the projection. The sums start at 1
    # (the opening); after the opening (t = 2): 1.5 - N = (0.5, 0.5): arm 0 (index); then t = 3, N = (2, 1):
    # sums 2, 2: arm 1
    env = BestArmFunctional(means=[1.0, 0.0], budget=1000, setting="fixed_confidence", arm_distribution="gaussian")
    agent = TrackAndStop(tie_break="index", tracking="C", distribution="gaussian", threshold="heuristic")
    state = start(agent, env)
    arm, _, _, state = decide(agent, env, state, [1, 0], [1.0, 0.0])  # the opening leaves the sums alone
    assert arm == 1 and np.asarray(state.cumulated).tolist() == [1.0, 1.0]
    arm, _, _, state = decide(agent, env, state, [1, 1], [1.0, 0.0])
    assert arm == 0 and np.asarray(state.cumulated).tolist() == [1.5, 1.5]
    arm, _, _, state = decide(agent, env, state, [2, 1], [2.0, 0.0])
    assert arm == 1 and np.asarray(state.cumulated).tolist() == [2.0, 2.0]


def test_stop_and_answer() -> None:
    env, agent = bernoulli_env(2), TrackAndStop(delta=0.1, tie_break="index")
    state = start(agent, env)
    # Z = 100 d(0.9, 0.5) + 100 d(0.1, 0.5) = 73.6 > ln(2 * 200 / 0.1) = 8.29: stop, answer arm 0
    assert decide(agent, env, state, [100, 100], [90, 10])[1:3] == (True, [1, 0])
    # 3 pulls each, means 2/3 and 1/3: Z = 6 d(2/3, 1/2) = 0.34 < ln(120): go on
    assert decide(agent, env, state, [3, 3], [2, 1])[1] is False
    # a tie never stops; the answer is the first tied arm in the copy's order
    assert decide(agent, env, reorder(state, [1, 0]), [100, 100], [50, 50])[1:3] == (False, [0, 1])


def test_parameters() -> None:
    with pytest.raises(ValueError, match="tracking='E' is not allowed; use one of 'D', 'C'"):
        TrackAndStop(tracking="E")
    with pytest.raises(ValueError, match="lil"):
        TrackAndStop(stopping="lil")
    with pytest.raises(ValueError, match="delta"):
        TrackAndStop(delta=1.0)
    with pytest.raises(ValueError, match="gk2016"):
        TrackAndStop(distribution="gaussian", threshold="gk2016")
    assert TrackAndStop().threshold == "gk2016" and TrackAndStop(distribution="gaussian").threshold == "ls2020"
    assert (TrackAndStop.families, TrackAndStop.numpy_agent) == (("best_arm",), "TrackAndStop")
    jax_defaults = TrackAndStop()
    numpy_defaults = numpy_agents.TrackAndStop()
    for name in ("delta", "tracking", "stopping", "threshold", "distribution", "sigma", "tie_break"):
        assert getattr(jax_defaults, name) == getattr(numpy_defaults, name), name


# --------------------------------------------------------------------------------------------- in distribution
MEANS = [0.9, 0.6, 0.5, 0.3]  # T* = 20.0: about 180 pulls at delta = 0.1, none above 1,000
CAP = 100_000
EPISODES = 1000


def jax_metrics(agent: TrackAndStop, seed: int) -> dict[str, np.ndarray]:
    env = BestArmFunctional(means=MEANS, budget=CAP, setting="fixed_confidence")
    out = play(env, agent, seed, EPISODES)
    return {key: np.asarray(out[key], dtype=np.float64) for key in ("pulls", "error", "capped")}


@pytest.fixture(scope="module")
def numpy_d_tracking() -> dict[str, np.ndarray]:
    agent = numpy_agents.TrackAndStop(delta=0.1)
    return {metric: numpy_metric("BestArmIdentification-v0", agent, metric, EPISODES, 2, setting="fixed_confidence",
                                 means=MEANS, budget=CAP) for metric in ("pulls", "error")}


@pytest.mark.slow
def test_d_tracking_equals_numpy(numpy_d_tracking: dict[str, np.ndarray]) -> None:
    ours = jax_metrics(TrackAndStop(delta=0.1), 1)
    assert not ours["capped"].any()
    for metric in ("pulls", "error"):
        z = z_statistic(ours[metric], numpy_d_tracking[metric])
        assert abs(z) < Z_LIMIT, (metric, ours[metric].mean(), numpy_d_tracking[metric].mean(), z)


@pytest.mark.slow
def test_c_tracking_equals_numpy() -> None:
    ours = jax_metrics(TrackAndStop(delta=0.1, tracking="C"), 3)
    theirs = numpy_metric("BestArmIdentification-v0", numpy_agents.TrackAndStop(delta=0.1, tracking="C"), "pulls",
                          EPISODES, 4, setting="fixed_confidence", means=MEANS, budget=CAP)
    z = z_statistic(ours["pulls"], theirs)
    assert abs(z) < Z_LIMIT, (ours["pulls"].mean(), theirs.mean(), z)


@pytest.mark.slow
def test_comparison_can_fail(numpy_d_tracking: dict[str, np.ndarray]) -> None:
    """The negative control: delta = 0.3 against the numpy agent's 0.1 (the threshold ln(6 t / delta) lower by
    ln 3, about 12 % fewer pulls) gives |z| above the limit (delta = 0.2, 8 % fewer, gave |z| = 3.2 with 1,500
    episodes)."""
    ours = jax_metrics(TrackAndStop(delta=0.3), 1)
    assert abs(z_statistic(ours["pulls"], numpy_d_tracking["pulls"])) > Z_LIMIT
