"""The JAX fixed-confidence components and agents: the stopping rules of ``bandit_gym.jax.agents._stopping`` against
the numpy compiled ones on random inputs, EB-TCI's first decisions by hand, and EB-TCI's equality in distribution
(sample complexity and error rate) with its numpy twin on the fixed-confidence env.

The numpy rollouts compile their numba kernel on first use (half a minute on a loaded machine, once per session):
the first slow test pays it."""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any

import gymnasium as gym
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import bandit_gym.agents as numpy_agents
from bandit_gym.agents.best_arm import _stop as numpy_stop
from bandit_gym.agents.best_arm import _stopping as numpy_stopping
from bandit_gym.agents.best_arm._base import records
from bandit_gym.agents.best_arm._fixed_confidence import challenger as numpy_challenger
from bandit_gym.jax.agents import _stopping
from bandit_gym.jax.agents._base import ArmOrder, JaxAgent
from bandit_gym.jax.agents.eb_tci import EBTCI, TopTwoState
from bandit_gym.jax.agents.track_and_stop import TrackAndStop
from bandit_gym.jax.envs import BestArmFunctional
from bandit_gym.jax.rollout import play
from bandit_gym.rollout import play_vector
from tests.bandit_gym_jax._compare import Z_LIMIT, numpy_metric, z_statistic

KEY = jax.random.key(0)
EPISODES = 3_000
EASY = [0.7, 0.5, 0.45, 0.4]  # about 700 pulls at delta = 0.1 (GK 2016's threshold)
CLOSE = [0.6, 0.5, 0.45, 0.4]  # an error rate of about 12% with the heuristic threshold at delta = 0.5
CASES = 100  # random statistics per comparison with numpy


def constants(threshold: str, delta: float, distribution: str, sigma: float, k: int,
              stopping: str = "glr") -> Any:
    """The numpy stopping rule's constants record of one copy (``set_constants``, m = 1)."""
    record = np.zeros(1, records(numpy_stopping.fields(stopping, threshold), numpy_stopping.CHOICES))
    numpy_stopping.set_constants(record, np.array([0]), stopping, threshold, delta, distribution, sigma, k, 1, 0.0)
    return record[0]


def random_statistics(rng: np.random.Generator, gaussian: bool, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Float32 pull counts of K arms (1 to 30,000, some arms tied) and sums (Bernoulli: integers, 0 and N
    included)."""
    counts = rng.integers(1, int(rng.choice([5, 200, 30_000])), k).astype(np.float32)
    if gaussian:
        sums = (counts * rng.normal(0.5, 0.3, k)).astype(np.float32)
    else:
        sums = np.floor(rng.uniform(0.0, 1.0, k) * (counts + 1)).clip(0, counts).astype(np.float32)
    if rng.random() < 0.2:  # an exact tie of two arms
        counts[1], sums[1] = counts[0], sums[0]
    return counts, sums


# --------------------------------------------------------------------------------------------- the components
@pytest.mark.parametrize("gaussian", [False, True])
def test_glr_statistic_equals_numpy(gaussian: bool) -> None:
    """The GLR statistic and the transportation costs equal numpy's float64 ones up to float32 rounding: a
    relative 1e-5, plus the rounding of the float32 means' difference where two means are close (the arithmetic
    avoids the Bernoulli divergence's cancellation, which alone would lose about N 1e-7)."""
    rng, compiled = np.random.default_rng(1), numpy_stopping
    family, sigma = (1.0, 0.7) if gaussian else (0.0, 1.0)
    glr = jax.jit(lambda c, m, lead: _stopping.glr_statistic(c, m, lead, gaussian, sigma))
    cost = jax.jit(lambda c, m, i, j: _stopping.transportation_cost(c, m, i, j, gaussian, sigma))
    checked = 0
    for case in range(300):
        counts, sums = random_statistics(rng, gaussian, 2 if case % 3 == 0 else 6)
        mean = sums.astype(np.float64) / counts
        k = counts.size
        for leader in (int(np.argmax(mean)), int(rng.integers(k))):  # the empirical best, and any arm
            answer = (np.arange(k) == leader).astype(np.int64)
            want = compiled.glr(counts, mean, answer, family, sigma)
            got = float(glr(counts, sums / counts, leader))
            gaps = np.abs(mean[leader] - np.delete(mean, leader))
            slack = 1e-5 + 4e-7 * np.abs(mean).max() / max(gaps.min(), 1e-12)
            assert got == pytest.approx(want, rel=slack, abs=1e-9), (counts, sums, leader)
            checked += want > 0
        i, j = rng.integers(k, size=2)
        want = compiled.transportation_cost(counts, mean, int(i), int(j), family, sigma)
        slack = 1e-5 + 4e-7 * np.abs(mean).max() / max(abs(mean[i] - mean[j]), 1e-12)
        assert float(cost(counts, sums / counts, i, j)) == pytest.approx(want, rel=slack, abs=1e-9)
    assert checked > 100  # most cases are a positive statistic, not the 0 of a tie or a lower leader


def test_glr_statistic_zero_cases() -> None:
    """0 (never a stop) when an arm was never pulled, on a tie with the leader, and for a leader that is not the
    empirical best; vmaps over copies."""
    counts, means = jnp.asarray([10.0, 10.0, 0.0]), jnp.asarray([0.8, 0.3, 0.0])
    assert float(_stopping.glr_statistic(counts, means, 0, False, 1.0)) == 0.0
    counts = jnp.asarray([10.0, 10.0, 10.0])
    assert float(_stopping.glr_statistic(counts, jnp.asarray([0.8, 0.8, 0.1]), 0, False, 1.0)) == 0.0
    assert float(_stopping.glr_statistic(counts, jnp.asarray([0.8, 0.5, 0.1]), 1, True, 1.0)) == 0.0
    batch = jax.vmap(lambda m: _stopping.glr_statistic(counts, m, 0, True, 1.0))(
        jnp.asarray([[0.8, 0.5, 0.1], [0.8, 0.8, 0.1]]))
    # Gaussian: min(10 * 10 / 20 * 0.3^2 / 2, ...) = 0.225
    assert np.asarray(batch) == pytest.approx([0.225, 0.0], rel=1e-5)


@pytest.mark.parametrize(("kind", "distribution"), [  # gk2016 is refused on Gaussian arms
    (kind, distribution) for kind in _stopping.JAX_THRESHOLDS for distribution in numpy_stopping.DISTRIBUTIONS
    if not (kind == "gk2016" and distribution == "gaussian")])
def test_thresholds_equal_numpy(kind: str, distribution: str) -> None:
    compiled = numpy_stopping
    rng = np.random.default_rng(2)
    ts = np.concatenate([[0.0, 1.0, 2.0, 3.0, 10.0], rng.integers(1, 10**7, 200)]).astype(np.float32)
    for k in (2, 4, 11):
        for delta in (0.5, 0.1, 1e-3, 1e-8):
            record = constants(kind, delta, distribution, 1.0, k)
            want = np.array([compiled.beta(max(float(t), 1.0), k, 1, record) for t in ts])
            concrete = jax.jit(functools.partial(_stopping.threshold_value, delta=delta, k=k, kind=kind,
                                                 gaussian=distribution == "gaussian"))
            assert np.asarray(concrete(ts)) == pytest.approx(want, rel=2e-6), (k, delta)
            # a traced delta: the ls2020 offset by bisection in float32
            traced = jax.jit(functools.partial(_stopping.threshold_value, k=k, kind=kind,
                                               gaussian=distribution == "gaussian"))
            assert np.asarray(traced(ts, jnp.float32(delta))) == pytest.approx(want, rel=1e-5), (k, delta)
    # by hand: gk2016 = ln(2 t (K - 1) / delta); heuristic = ln((1 + ln t) / delta)
    assert float(_stopping.threshold_value(100.0, 0.1, 4, "gk2016")) == pytest.approx(math.log(6000.0), rel=1e-6)
    assert float(_stopping.threshold_value(100.0, 0.1, 4, "heuristic")) == pytest.approx(
        math.log((1.0 + math.log(100.0)) / 0.1), rel=1e-6)
    with pytest.raises(ValueError, match="threshold"):
        _stopping.threshold_value(1.0, 0.1, 4, "chernoff")


@pytest.mark.parametrize("upper", [True, False])
def test_the_kl_bounds_are_the_numba_bisection_to_float32_precision(upper: bool) -> None:
    """KL-LUCB's Bernoulli confidence bounds by Newton's steps (the lower one by symmetry) are the numba rule's 60
    bisections to within two float32 steps, over means from 0 to 1 (both included, and 1e-4 from each), one pull to
    3 million and levels from 0.5 to 45 (the rate b(t) reaches about 40)."""
    rng = np.random.default_rng(0)
    means = np.concatenate([np.linspace(0.0, 1.0, 101), rng.uniform(0.0, 1.0, 100), [1e-4, 1 - 1e-4]])
    means = means.astype(np.float32)
    bound = jax.jit(lambda m, n, level: _stopping.kl_bound(m, n, level, upper, False, 1.0))
    for n in (1.0, 2.0, 7.0, 50.0, 1e3, 1e5, 3e6):
        for level in (0.5, 3.0, 10.0, 25.0, 45.0):
            got = np.asarray(bound(jnp.asarray(means), n, level), np.float64)
            want = [numpy_stopping.kl_bound(float(m), n, level, upper, numpy_stopping.BERNOULLI, 1.0) for m in means]
            np.testing.assert_allclose(got, want, rtol=0.0, atol=2.4e-7)
            assert np.all(got >= means) if upper else np.all(got <= means)


@pytest.mark.parametrize("stopping", ["glr", "lucb", "kllucb"])
@pytest.mark.parametrize("distribution", numpy_stopping.DISTRIBUTIONS)
def test_stopping_decisions_equal_numpy(stopping: str, distribution: str) -> None:
    """``glr_stop`` / ``stopped`` decide as numpy's ``stopped`` (m = 1, the empirical best as the answer) on random
    statistics near the thresholds, with the LUCB gaps equal to numpy's."""
    compiled, rng = numpy_stopping, np.random.default_rng(3)
    gaussian = distribution == "gaussian"
    kinds = ("ls2020", "heuristic") if gaussian else _stopping.JAX_THRESHOLDS
    decide = jax.jit(lambda obs, lead, kind: _stopping.stopped(obs, lead, 0.1, stopping, kind, gaussian, 0.8),
                     static_argnums=2)
    glr_stop = jax.jit(lambda obs, lead, kind: _stopping.glr_stop(obs, lead, 0.1, kind, gaussian, 0.8),
                       static_argnums=2)
    gap = jax.jit(lambda obs, lead: (_stopping.lucb_gap if stopping == "lucb" else _stopping.kl_lucb_gap)(
        obs, lead, 0.1, gaussian, 0.8))
    agree = stops = 0
    for _ in range(CASES):
        counts, sums = random_statistics(rng, gaussian, 5)
        mean = sums.astype(np.float64) / counts
        leader = int(np.argmax(mean))
        answer = (np.arange(counts.size) == leader).astype(np.int64)
        epsilon = float(rng.choice([0.0, 0.05, 0.3])) if stopping != "glr" else 0.0
        obs = {"counts": jnp.asarray(counts), "sums": jnp.asarray(sums), "epsilon": jnp.asarray([epsilon])}
        made = int(counts.sum())
        for kind in kinds:
            record = constants(kind, 0.1, distribution, 0.8, counts.size, stopping)
            want = numpy_stop.stopped(counts, mean, answer, made, 1, epsilon, record)
            agree += bool(decide(obs, leader, kind)) == want
            stops += want
            if stopping == "glr":  # glr_stop is the GLR rule of ``stopped``
                assert bool(glr_stop(obs, leader, kind)) == want
        if stopping != "glr":
            numpy_gap = compiled.lucb_gap if stopping == "lucb" else compiled.kl_lucb_gap
            want_gap = numpy_gap(counts, mean, answer, max(float(made), 1.0), record)
            assert float(gap(obs, leader)) == pytest.approx(want_gap, rel=1e-4, abs=1e-5)
    total = CASES * len(kinds)
    assert agree == total and 0 < stops < total


# --------------------------------------------------------------------------------------------- EB-TCI by hand
def fixed_confidence_env(means: list[float], budget: int = 1000, **kwargs: Any) -> BestArmFunctional:
    return BestArmFunctional(means=means, budget=budget, setting="fixed_confidence", **kwargs)


def observation(env: BestArmFunctional, counts: list[float], sums: list[float]) -> dict[str, jax.Array]:
    """The env's observation with crafted counts and sums (budget_left follows from the pulls made)."""
    obs = env.observation(env.initial(KEY))
    counts_, sums_ = jnp.asarray(counts, jnp.float32), jnp.asarray(sums, jnp.float32)
    means = jnp.where(counts_ > 0, sums_ / jnp.maximum(counts_, 1.0), 0.0)
    return {**obs, "counts": counts_, "sums": sums_, "means": means, "budget_left": obs["budget_left"] - counts_.sum()}


def decide(agent: EBTCI, env: BestArmFunctional, state: TopTwoState, counts: list[float],
           sums: list[float]) -> tuple[int, bool, list[int], TopTwoState]:
    """One step of ``agent`` on a crafted observation: (arm, stop, answer bits, next state)."""
    obs = observation(env, counts, sums)
    arm, next_state = agent.select(state, obs, KEY)
    return int(arm), bool(agent.stop(state, obs)), np.asarray(agent.answer(state, obs, KEY)).tolist(), next_state


def start(agent: EBTCI, env: BestArmFunctional, arm_at: list[int] | None = None) -> TopTwoState:
    state = agent.init(KEY, env.observation(env.initial(KEY)))
    if arm_at is not None:
        order = jnp.asarray(arm_at, jnp.int32)
        state = state._replace(order=ArmOrder(arm_at=order, position_of=jnp.argsort(order).astype(jnp.int32),
                                              total=state.order.total))
    return state


def bernoulli_kl(p: float, q: float) -> float:
    return sum(a * math.log(a / b) for a, b in ((p, q), (1.0 - p, 1.0 - q)) if a > 0.0)


def cost(n_i: float, mu_i: float, n_j: float, mu_j: float) -> float:
    mid = (n_i * mu_i + n_j * mu_j) / (n_i + n_j)
    return n_i * bernoulli_kl(mu_i, mid) + n_j * bernoulli_kl(mu_j, mid)


def test_eb_tci_opening() -> None:
    """Each arm once, in the copy's order, with no stopping test (even on statistics that would stop)."""
    env, agent = fixed_confidence_env([0.5, 0.4, 0.3, 0.2]), EBTCI(delta=0.1, tie_break="index")
    state = start(agent, env)
    assert isinstance(state, TopTwoState) and np.asarray(state.led).tolist() == [0, 0, 0, 0]
    arm, stop, bits, after = decide(agent, env, state, [0, 0, 0, 0], [0, 0, 0, 0])
    assert (arm, stop, bits) == (0, False, [1, 0, 0, 0])  # answer before any pull: all rank last, the first
    assert np.asarray(after.led).tolist() == [0, 0, 0, 0]  # the opening tracks nothing
    assert decide(agent, env, state, [1, 1, 0, 0], [0, 1, 0, 0])[:3] == (2, False, [0, 1, 0, 0])
    # 3 pulls made: position 3 is next, whatever the statistics say
    assert decide(agent, env, state, [1, 1, 1, 0], [1, 0, 0, 0])[:2] == (3, False)
    # the copy order 2, 0, 3, 1: arm 2 first, arm 1 last
    ordered = start(agent, env, [2, 0, 3, 1])
    assert decide(agent, env, ordered, [0, 0, 0, 0], [0, 0, 0, 0])[0] == 2
    assert decide(agent, env, ordered, [1, 0, 1, 1], [0, 0, 0, 0])[0] == 1


def test_eb_tci_leader_challenger_and_tracking() -> None:
    env, agent = fixed_confidence_env([0.5, 0.4, 0.3, 0.2]), EBTCI(delta=0.1, tie_break="index")
    counts, sums = [10.0, 10.0, 10.0, 10.0], [8.0, 6.0, 6.0, 2.0]
    # leader arm 0 (0.8); W(0, 1) = W(0, 2) = 10 d(0.8, 0.7) + 10 d(0.6, 0.7) = 0.4832 (+ ln 10), W(0, 3) = 3.8549
    assert cost(10, 0.8, 10, 0.6) == pytest.approx(0.48315, abs=1e-4)
    assert cost(10, 0.8, 10, 0.2) == pytest.approx(3.8549, abs=1e-4)
    obs = observation(env, counts, sums)
    state = start(agent, env)
    assert int(agent.leader(state, obs)) == 0 and int(agent.challenger(state, obs, jnp.int32(0))) == 1
    # the tracking with beta = 1/2: L_0 = 1, N = 0 <= 0.5: the leader; L = 2, N = 1 <= 1: the leader; L = 3,
    # N = 2 > 1.5: the challenger; L = 4, N = 2 <= 2: the leader
    arms = []
    for _ in range(4):
        arm, stop, bits, state = decide(agent, env, state, counts, sums)
        arms.append(arm)
        assert not stop and bits == [1, 0, 0, 0]
    assert arms == [0, 0, 1, 0]
    assert np.asarray(state.led).tolist() == [4, 0, 0, 0] and np.asarray(state.pulled_leading).tolist() == [3, 0, 0, 0]
    # the tie W(0, 1) + ln 10 = W(0, 2) + ln 10 in the copy order 3, 2, 1, 0: arm 2
    assert int(agent.challenger(start(agent, env, [3, 2, 1, 0]), obs, jnp.int32(0))) == 2
    # TCI: ln N_j matters. counts 20, 40, 2, 20, means 0.7, 0.6, 0.5, 0.2: W(0, 1) + ln 40 = 0.2917 + 3.689,
    # W(0, 2) + ln 2 = 0.1572 + 0.693: arm 2; the numpy compiled challenger agrees
    counts, sums = [20.0, 40.0, 2.0, 20.0], [14.0, 24.0, 1.0, 4.0]
    assert cost(20, 0.7, 40, 0.6) == pytest.approx(0.2917, abs=1e-3)
    assert cost(20, 0.7, 2, 0.5) == pytest.approx(0.1572, abs=1e-3)
    obs = observation(env, counts, sums)
    assert int(agent.challenger(start(agent, env), obs, jnp.int32(0))) == 2
    mean = np.asarray(sums) / np.asarray(counts)
    record = constants("gk2016", 0.1, "bernoulli", 1.0, 4)
    assert numpy_challenger(np.asarray(counts, np.float32), mean, 0, record, True) == 2
    # beta = 0.3: L = 1, N = 0 <= 0.3: the leader; L = 2, N = 1 > 0.6: the challenger
    low = EBTCI(delta=0.1, beta=0.3, tie_break="index")
    state = start(low, env)
    first, _, _, state = decide(low, env, state, counts, sums)
    second, _, _, state = decide(low, env, state, counts, sums)
    assert (first, second) == (0, 2)


def test_eb_tci_stops_by_the_glr_rule() -> None:
    env, agent = fixed_confidence_env([0.5, 0.4, 0.3, 0.2]), EBTCI(delta=0.1, tie_break="index")
    state = start(agent, env)
    # W(1, j) = 100 d(0.9, 0.7) + 100 d(0.5, 0.7) = 20.35 > ln(2 * 400 * 3 / 0.1) = 10.09: stop, answer arm 1
    assert cost(100, 0.9, 100, 0.5) > math.log(24_000.0)
    assert decide(agent, env, state, [100] * 4, [50, 90, 50, 50])[1:3] == (True, [0, 1, 0, 0])
    # ten times fewer pulls: W = 2.035 < ln(2 * 40 * 3 / 0.1) = 7.78: go on
    assert decide(agent, env, state, [10] * 4, [5, 9, 5, 5])[1] is False
    # a tie with the leader never stops
    assert decide(agent, env, state, [100] * 4, [90, 90, 50, 50])[1] is False
    # the heuristic threshold at t = 40 against W = 2.035: ln((1 + ln 40) / 0.5) = 2.24 goes on,
    # ln((1 + ln 40) / 0.9) = 1.65 stops
    assert decide(EBTCI(delta=0.5, threshold="heuristic"), env, state, [10] * 4, [5, 9, 5, 5])[1] is False
    assert decide(EBTCI(delta=0.9, threshold="heuristic"), env, state, [10] * 4, [5, 9, 5, 5])[1] is True


def test_eb_tci_parameters() -> None:
    agent = EBTCI()
    assert (agent.delta, agent.beta, agent.stopping, agent.threshold, agent.distribution, agent.sigma) == (
        0.05, 0.5, "glr", "gk2016", "bernoulli", 1.0)
    assert EBTCI(distribution="gaussian").threshold == "ls2020"
    assert (EBTCI.families, EBTCI.numpy_agent) == (("best_arm",), "EBTCI")
    numpy_agent = numpy_agents.EBTCI()
    for name in ("delta", "beta", "stopping", "threshold", "distribution", "sigma", "tie_break"):
        assert getattr(agent, name) == getattr(numpy_agent, name), name
    for bad, match in [(dict(beta=1.0), "beta"), (dict(delta=0.0), "delta"), (dict(stopping="lil"), "lil"),
                       (dict(stopping="own"), "stopping"),
                       (dict(threshold="gk2016", distribution="gaussian"), "gk2016"),
                       (dict(distribution="poisson"), "distribution"), (dict(sigma=0.0), "sigma"),
                       (dict(tie_break="first"), "tie_break")]:
        with pytest.raises(ValueError, match=match):
            EBTCI(**bad)
        with pytest.raises(ValueError, match=match):
            numpy_agents.EBTCI(**bad)
    hash(EBTCI(delta=0.1))  # a static argument of the compiled rollout


@pytest.mark.parametrize(("agent", "env_kwargs", "match"), [
    (EBTCI(), {"m": 2}, r"EBTCI identifies the best arm \(m = 1\); the env has m = 2"),
    (EBTCI(), {"arm_distribution": "gaussian", "sigma": 1.0}, "reads Bernoulli arms; the env's arms are 'gaussian'"),
    (EBTCI(distribution="gaussian", sigma=0.2), {"arm_distribution": "gaussian", "sigma": 0.3},
     r"EBTCI\(sigma=0.2\) is not the env's sigma=0.3"),
])
def test_play_refuses_the_envs_that_the_numpy_agents_refuse(agent: Any, env_kwargs: dict[str, Any],
                                                             match: str) -> None:
    env = BestArmFunctional(means=EASY, setting="fixed_confidence", budget=1000, **env_kwargs)
    with pytest.raises(ValueError, match=match):
        play(env, agent, 0, 2)
    numpy_agent = getattr(numpy_agents, type(agent).__name__)(**{
        name: getattr(agent, name) for name in ("delta", "stopping", "threshold", "distribution", "sigma")})
    numpy_env = gym.make_vec("BestArmIdentification-v0", num_envs=2, vectorization_mode="vector_entry_point",
                             means=EASY, setting="fixed_confidence", budget=1000, **env_kwargs)
    with pytest.raises(ValueError, match=match):  # the numpy twin's refusal (the engine's check_env, or play)
        numpy_agent.check_env(numpy_env)
        play_vector(numpy_env, numpy_agent, seed=0)


def test_play_refuses_what_only_the_numpy_agents_compute() -> None:
    """The GLR rule with epsilon > 0 and the per-pair ``"mixture"`` thresholds are the numpy agents' only."""
    env = BestArmFunctional(means=EASY, setting="fixed_confidence", budget=1000, epsilon=0.1)
    with pytest.raises(ValueError, match=r"the env's epsilon must be 0, got 0\.1"):
        play(env, TrackAndStop(), 0, 2)
    numpy_env = gym.make_vec("BestArmIdentification-v0", num_envs=2, vectorization_mode="vector_entry_point",
                             means=EASY, setting="fixed_confidence", budget=1000, epsilon=0.1)
    assert play_vector(numpy_env, numpy_agents.TrackAndStop(), seed=0)["pulls"].min() > 4
    with pytest.raises(ValueError, match="not on the JAX backend"):
        EBTCI(threshold="mixture")
    numpy_agents.EBTCI(threshold="mixture")


def test_play_takes_a_gaussian_agent_of_the_env_s_float32_sigma() -> None:
    env = BestArmFunctional(means=EASY, setting="fixed_confidence", budget=1000, arm_distribution="gaussian",
                            sigma=0.3)  # 0.3 in the float32 params
    assert int(play(env, EBTCI(distribution="gaussian", sigma=0.3), 0, 2)["pulls"].min()) > 4


@pytest.mark.parametrize("agent", [EBTCI(), EBTCI(stopping="lucb"), TrackAndStop(tracking="D"),
                                   TrackAndStop(tracking="C")], ids=["EBTCI-glr", "EBTCI-lucb", "TaS-D", "TaS-C"])
def test_the_rollout_asking_decide_plays_the_episodes_of_stop_then_select(agent: Any) -> None:
    """``FixedConfidenceAgent.decide`` sends the rollout down its fused path (a pending decision in the carry);
    the agent with the protocol's default ``decide`` takes the other (``stop`` in the loop's condition, ``select``
    in its step). Bit-identical episodes, seeds and agent keys."""
    plain = dataclasses.make_dataclass(f"Plain{type(agent).__name__}", [], bases=(type(agent),), frozen=True,
                                       namespace={"decide": JaxAgent.decide})
    twin = plain(**{f.name: getattr(agent, f.name) for f in dataclasses.fields(agent)})
    env = BestArmFunctional(means=EASY, setting="fixed_confidence", budget=20_000)
    fused, split = play(env, agent, 11, 32, agent_key=5), play(env, twin, 11, 32, agent_key=5)
    assert type(agent).decide is not JaxAgent.decide and type(twin).decide is JaxAgent.decide
    for name in fused:
        np.testing.assert_array_equal(np.asarray(fused[name]), np.asarray(split[name]), err_msg=name)
    assert 100 < float(np.mean(np.asarray(fused["pulls"]))) < 20_000  # episodes that stop


# --------------------------------------------------------------------------------------------- in distribution
def numpy_metrics(agent: Any, seed: int, episodes: int = EPISODES, **kwargs: Any) -> dict[str, np.ndarray]:
    """``pulls`` and ``error`` of ``episodes`` episodes of the numpy agent on the numpy fixed-confidence vector env,
    from one run (``tests.bandit_gym_jax._compare.numpy_metric`` gives one metric per run)."""
    envs = gym.make_vec("BestArmIdentification-v0", num_envs=episodes, vectorization_mode="vector_entry_point",
                        copy=False, setting="fixed_confidence", **kwargs)
    out = play_vector(envs, agent, seed=seed)
    return {key: np.asarray(out[key], dtype=np.float64) for key in ("pulls", "error")}


def assert_equal_in_distribution(params: dict[str, Any], **kwargs: Any) -> None:
    ours = play(fixed_confidence_env(**kwargs), EBTCI(**params), 1, EPISODES)
    theirs = numpy_metrics(numpy_agents.EBTCI(**params), 2, **kwargs)
    # no run capped: every episode ended by a stop, before the budget
    assert not np.asarray(ours["capped"]).any() and theirs["pulls"].max() < kwargs["budget"]
    for metric in ("pulls", "error"):
        ours_metric = np.asarray(ours[metric], dtype=np.float64)
        z = z_statistic(ours_metric, theirs[metric])
        assert abs(z) < Z_LIMIT, (metric, ours_metric.mean(), theirs[metric].mean(), z)


@pytest.mark.slow
def test_eb_tci_equals_numpy_bernoulli() -> None:
    """GK 2016's threshold at delta = 0.1: about 700 pulls, no error."""
    assert_equal_in_distribution(dict(delta=0.1), means=EASY, budget=20_000)


@pytest.mark.slow
def test_eb_tci_equals_numpy_heuristic_errors() -> None:
    """The heuristic threshold at delta = 0.5 on close arms: about 460 pulls and 12% of wrong answers."""
    assert_equal_in_distribution(dict(delta=0.5, threshold="heuristic"), means=CLOSE, budget=20_000)


@pytest.mark.slow
def test_eb_tci_equals_numpy_gaussian() -> None:
    """Gaussian arms (sigma = 1/2), Lattimore and Szepesvari's threshold at delta = 0.1."""
    params = dict(delta=0.1, distribution="gaussian", sigma=0.5)
    assert_equal_in_distribution(params, means=[1.0, 0.5, 0.3, 0.0], budget=20_000, arm_distribution="gaussian",
                                 sigma=0.5)


@pytest.mark.slow
def test_comparison_can_fail() -> None:
    """The negative control: EB-TCI at delta = 0.1 against the numpy one at delta = 0.01 (about 700 against 850
    pulls on ``EASY``) gives |z| well above the limit."""
    ours = play(fixed_confidence_env(EASY, 20_000), EBTCI(delta=0.1), 1, 1_000)
    theirs = numpy_metric("BestArmIdentification-v0", numpy_agents.EBTCI(delta=0.01), "pulls", 1_000, 2,
                          means=EASY, budget=20_000, setting="fixed_confidence")
    assert abs(z_statistic(np.asarray(ours["pulls"], dtype=np.float64), theirs)) > Z_LIMIT
