"""The JAX top-K agents (AdaptiveTopK, CLUCB-PAC): the exact selection and accept / reject rules against the numpy
ones, hand-computed decisions on crafted observations, and equality in distribution with their numpy twins."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import bandit_gym.agents as numpy_agents
from bandit_gym.agents.top_k.adaptive_top_k import accept_reject as numba_accept_reject
from bandit_gym.agents.top_k.adaptive_top_k import round_size as numpy_round_size
from bandit_gym.jax.agents import JAX_AGENTS
from bandit_gym.jax.agents._ranking import top_positions
from bandit_gym.jax.agents.adaptive_top_k import (
    ACCEPTED,
    ACTIVE,
    REJECTED,
    AdaptiveTopK,
    accept_reject,
    round_size,
    size_table,
)
from bandit_gym.jax.agents.clucb_pac import CLUCBPAC
from bandit_gym.jax.envs import TopKFunctional
from bandit_gym.jax.rollout import play
from bandit_gym.rollout import play_batched, play_vector
from tests.bandit_gym_jax._compare import Z_LIMIT, z_statistic

KEY = jax.random.key(0)
MEANS = [0.9, 0.8, 0.7, 0.6, 0.55, 0.5, 0.3, 0.2]


# --------------------------------------------------------------------------------------------- exact rules
def test_top_positions_equals_a_stable_sort() -> None:
    """The m largest values, ties to the smaller position, on values with many ties, -inf, -0.0 and 0.0."""
    rng = np.random.default_rng(0)
    select = jax.jit(top_positions)
    for _ in range(400):
        k = int(rng.integers(1, 30))
        m = int(rng.integers(0, k + 1))
        values = (rng.integers(-3, 4, size=k) / rng.integers(1, 5)).astype(np.float32)
        values[values == 0] = rng.choice([0.0, -0.0], size=int((values == 0).sum()))
        values[rng.random(k) < 0.15] = -np.inf
        want = np.zeros(k, dtype=bool)
        want[np.lexsort((np.arange(k), -values.astype(np.float64)))[:m]] = True
        assert (np.asarray(select(jnp.asarray(values), m)) == want).all(), (values, m)


def test_accept_reject_equals_the_numpy_rule() -> None:
    """AdaptiveTopK's inner loop against the numba one on random rounds, compared on sums as both agents do at a
    round's end (every arm of S has the same count c): equal gaps and gaps equal to the threshold are frequent."""
    rule, jitted = numba_accept_reject, jax.jit(accept_reject)
    rng = np.random.default_rng(1)
    for _ in range(1500):
        n = int(rng.integers(2, 12))
        k = int(rng.integers(1, n))
        status = rng.choice([ACTIVE, ACTIVE, ACTIVE, ACCEPTED, REJECTED], size=n).astype(np.int8)
        c = int(rng.integers(1, 9))
        sums = np.where(status == ACTIVE, rng.integers(0, c + 1, size=n), 0).astype(np.float64)
        threshold = float(rng.choice([0.0, 0.25, 0.5, 1.0])) * c
        want = status[None].copy()
        rule(sums[None], want, np.array([0]), k, np.array([threshold]))
        got = jitted(jnp.asarray(sums, jnp.float32), jnp.asarray(status, jnp.int32), jnp.int32(k),
                     jnp.float32(threshold))
        assert np.asarray(got).tolist() == want[0].tolist(), (sums, status, k, threshold)


def test_accept_reject_by_hand() -> None:
    """K = 2 of theta (sums over c = 4 samples) 4, 3, 3, 0 at threshold 2 (r = 1, 2 2^-1 = 1 times 4): theta_b = 3,
    theta_a = 3; the top gap 1 and the bottom gap 3: arm 3 (the last of S) is rejected; then the gaps are 1 and 0:
    clear, the round ends. At threshold 0 the first of S (gap 1 > 0) is accepted next, then K' = 1 and the two arms
    tied at 3 have gaps 0: clear."""
    status = jnp.zeros(4, jnp.int32)
    sums = jnp.asarray([4.0, 3.0, 3.0, 0.0])
    assert np.asarray(accept_reject(sums, status, jnp.int32(2), jnp.float32(2.0))).tolist() == [0, 0, 0, 2]
    assert np.asarray(accept_reject(sums, status, jnp.int32(2), jnp.float32(0.0))).tolist() == [1, 0, 0, 2]


def test_round_sizes_equal_numpy() -> None:
    """The exact table is the numpy agent's float64 round sizes; the float32 sizes of a delta read from the
    observation agree with them on the paper's settings (n = 1000 arms, delta = 0.01) and the suite's."""
    for n, delta, scale, schedule in [(1000, 0.01, 1.0, "printed"), (8, 0.1, 0.05, "log-free"), (6, 0.01, 0.25,
                                                                                                    "printed")]:
        table = size_table(n, delta, scale, schedule)
        rounds = np.arange(1, table.size)
        assert (table[:-1] == numpy_round_size(rounds, n, delta, scale, schedule)).all()
        assert table[-1] == 2**30 and table[-2] < 2**30
    assert size_table(1000, 0.01, 1.0, "printed")[:3].tolist() == [49, 218, 922]  # the numpy docstring's
    r = jnp.arange(1, 7)
    for n, delta, scale in [(1000, 0.01, 1.0), (8, 0.1, 0.05), (6, 0.01, 0.25), (250, 0.01, 0.1)]:
        assert np.asarray(round_size(r, n, jnp.float32(delta), scale, "printed")).tolist() == \
            size_table(n, delta, scale, "printed")[:6].tolist()


# --------------------------------------------------------------------------------------------- by hand
def observation(env: TopKFunctional, counts: list[float], sums: list[float]) -> dict[str, jax.Array]:
    """The env's observation with crafted counts and sums (budget_left follows from the pulls made)."""
    obs = env.observation(env.initial(KEY))
    counts_, sums_ = jnp.asarray(counts, jnp.float32), jnp.asarray(sums, jnp.float32)
    means = jnp.where(counts_ > 0, sums_ / jnp.maximum(counts_, 1.0), 0.0)
    return {**obs, "counts": counts_, "sums": sums_, "means": means,
            "budget_left": obs["budget_left"] - counts_.sum()}


def test_clucb_pac_first_decisions() -> None:
    """K = 2 of 4 arms, delta = 0.1, R = 1/2, at t = 18 pulls: counts 4, 2, 4, 8 and means 0.75, 0.5, 0.5, 0.25.
    M = {0, 1} (arms 1 and 2 tie at 0.5: the first); radius 0.5 sqrt(2 ln(4 4 18^3 / 0.1)) = 2.6217, rad = 1.311,
    1.854, 1.311, 0.927; w~ = -0.561, -1.354 (inside), 1.811, 1.177 (outside): M~ = {2, 3}, the gain 4.90 > K
    epsilon: pull the arm of largest rad in the symmetric difference, arm 1. With a million pulls each of means
    0.9, 0.8, 0.2, 0.1 the radii are tiny, M~ = M, the gain is 0: stop."""
    env = TopKFunctional(means=[0.5] * 4, k=2, epsilon=0.05, delta=0.1, budget=10**7)
    agent = CLUCBPAC(tie_break="index")
    state = agent.init(KEY, env.observation(env.initial(KEY)))
    obs = observation(env, [4, 2, 4, 8], [3, 1, 2, 2])
    stop, position = agent.selections(state, obs)
    assert (bool(stop), int(position)) == (False, 1)
    assert int(agent.select(state, obs, KEY)[0]) == 1 and not bool(agent.stop(state, obs))
    stop, arm, _ = agent.decide(state, obs, KEY)  # the rollout's call: both at once
    assert (bool(stop), int(arm)) == (False, 1)
    assert np.asarray(agent.answer(state, obs, KEY)).tolist() == [1, 1, 0, 0]
    sure = observation(env, [1e6] * 4, [9e5, 8e5, 2e5, 1e5])
    assert bool(agent.stop(state, sure)) and bool(agent.decide(state, sure, KEY)[0])
    # the first round: arm t at pull t in the copy's order, no stop (the order of a random tie rule is a shuffle)
    for made in range(4):
        assert int(agent.select(state, observation(env, [1] * made + [0] * (4 - made), [0] * 4), KEY)[0]) == made
        assert not bool(agent.stop(state, observation(env, [1] * made + [0] * (4 - made), [0] * 4)))
    shuffled = CLUCBPAC().init(jax.random.key(5), env.observation(env.initial(KEY)))
    first = [int(CLUCBPAC().select(shuffled, observation(env, [1] * t + [0] * (4 - t), [0] * 4), KEY)[0])
             for t in range(4)]
    assert first == np.asarray(shuffled.arm_at).tolist() != [0, 1, 2, 3]


def test_adaptive_top_k_first_round_by_hand() -> None:
    """log-free rounds of scale 2 (m_1 = 2, m_2 = 8), K = 2 of 4 arms: round 1 pulls 0, 1, 2, 3, 0, 1, 2, 3 (the
    most owed, the first position on ties) and decides nothing (threshold 1); round 2 with fresh-sum gaps: sums
    over its 8 pulls 8, 7, 1, 0 (threshold 1/2 = 4 in sums): theta_b = 7, theta_a = 1; top gap 7 = bottom gap 7:
    the first of S is accepted (its position 0 is before the bottom's 3); then K' = 1, theta_b = 7, theta_a = 1:
    the bottom gap 7 beats the top gap 6, arm 3 is rejected; then gaps 6 and 6: arm 1 accepted; K' = 0,
    finished: stop, answer {0, 1}."""
    env = TopKFunctional(means=[0.5] * 4, k=2, epsilon=0.05, delta=0.1, budget=100)
    agent = AdaptiveTopK(schedule="log-free", scale=2.0, pooled=False, tie_break="index")
    state = agent.init(KEY, env.observation(env.initial(KEY)))
    counts = [0.0] * 4
    for expected in [0, 1, 2, 3, 0, 1, 2, 3]:
        arm, state = agent.select(state, observation(env, counts, [c for c in counts]), KEY)
        assert int(arm) == expected
        counts[expected] += 1
    arm, state = agent.select(state, observation(env, counts, counts), KEY)  # the end of round 1
    assert int(state.round) == 2 and np.asarray(state.target).tolist() == [10] * 4 and int(arm) == 0
    end = observation(env, [10.0] * 4, [10.0, 9.0, 3.0, 2.0])  # round 2's fresh sums: 8, 7, 1, 0
    assert bool(agent.stop(state, end))
    _, state = agent.select(state, end, KEY)
    assert np.asarray(state.status).tolist() == [ACCEPTED, ACCEPTED, ACTIVE, REJECTED] and bool(state.finished)
    assert np.asarray(agent.answer(state, end, KEY)).tolist() == [1, 1, 0, 0]


def test_parameters_and_registry() -> None:
    assert JAX_AGENTS["AdaptiveTopK"] is AdaptiveTopK and JAX_AGENTS["CLUCBPAC"] is CLUCBPAC
    assert AdaptiveTopK.families == CLUCBPAC.families == ("top_k",)
    assert AdaptiveTopK(pooled=np.bool_(True)).pooled is True and AdaptiveTopK(scale=0.5).pools
    with pytest.raises(ValueError, match="form"):
        AdaptiveTopK(form="anytime")
    with pytest.raises(ValueError, match="schedule"):
        AdaptiveTopK(schedule="halving")
    with pytest.raises(TypeError, match="pooled"):
        AdaptiveTopK(pooled="yes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="delta"):
        CLUCBPAC(delta=1.0)
    with pytest.raises(ValueError, match="epsilon_sum"):
        CLUCBPAC(epsilon_sum="sum")
    with pytest.raises(ValueError, match="R"):
        CLUCBPAC(R=0.0)


# --------------------------------------------------------------------------------------------- in distribution
def assert_equal_in_distribution(jax_agent: Any, numpy_agent: Any, episodes: int, **kwargs: Any) -> None:
    """regret, error and pulls of the JAX agent on the functional env against the numpy agent on the vector env,
    played as the experiment engine plays it (its batched pulls where it has them: the same results in
    distribution as pull by pull, tested in ``tests/agents/top_k/test_top_k.py``, and ten times faster)."""
    ours = play(TopKFunctional(**kwargs), jax_agent, 1, episodes)
    envs = gym.make_vec("TopKIdentification-v0", num_envs=episodes, vectorization_mode="vector_entry_point",
                        copy=False, **kwargs)
    theirs = play_batched(envs, numpy_agent, seed=2) or play_vector(envs, numpy_agent, seed=2)
    for metric in ("regret", "error", "pulls"):
        z = z_statistic(np.asarray(ours[metric], np.float64), np.asarray(theirs[metric], np.float64))
        assert abs(z) < Z_LIMIT, (metric, float(np.mean(ours[metric])), float(np.mean(theirs[metric])), z)


# epsilon 0.04: no answer's aggregate regret equals epsilon on MEANS (the error's boundary is float rounding)
SETTINGS = dict(means=MEANS, k=3, epsilon=0.04, delta=0.1)


@pytest.mark.slow
@pytest.mark.parametrize(("params", "budget"), [
    (dict(), 1500),  # the printed rounds: round 1 (24 pulls per arm) decides nothing, round 2 is cut
    (dict(scale=0.05, pooled=False), 800),  # short rounds of fresh samples: many exact ties
    (dict(scale=0.05), 800),  # pooled
    (dict(schedule="log-free", scale=2.0), 600),
    (dict(form="pac", scale=0.1), 3000),  # the PAC form stops
])
def test_adaptive_top_k_equals_numpy(params: dict, budget: int) -> None:
    assert_equal_in_distribution(AdaptiveTopK(**params), numpy_agents.AdaptiveTopK(**params), 4000,
                                 budget=budget, **SETTINGS)


@pytest.mark.slow
@pytest.mark.parametrize(("params", "kwargs"), [
    (dict(), dict(SETTINGS, budget=1000)),  # runs to the budget
    (dict(epsilon_sum="epsilon", R=1.0), dict(SETTINGS, budget=6)),  # the budget ends within the first round
    (dict(), dict(means=[0.9, 0.7, 0.5, 0.3, 0.1], k=2, epsilon=0.1, delta=0.1, budget=20_000)),  # it stops
    (dict(R=0.25, delta=0.2), dict(means=[0.9, 0.7, 0.5, 0.3, 0.1], k=2, epsilon=0.02, delta=0.1, budget=20_000)),
])
def test_clucb_pac_equals_numpy(params: dict, kwargs: dict) -> None:
    assert_equal_in_distribution(CLUCBPAC(**params), numpy_agents.CLUCBPAC(**params), 4000, **kwargs)


@pytest.mark.slow
def test_comparison_can_fail() -> None:
    """The negative control: CLUCB-PAC at R = 1/2 against R = 1/4 stops after about 990 and 460 pulls."""
    with pytest.raises(AssertionError, match="pulls"):
        assert_equal_in_distribution(CLUCBPAC(), numpy_agents.CLUCBPAC(R=0.25), 2000, means=[0.9, 0.7, 0.5, 0.3,
                                     0.1], k=2, epsilon=0.1, delta=0.1, budget=20_000)
