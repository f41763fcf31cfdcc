"""The JAX Opt-KG: its float32 numbers against the numpy agent's compiled float64 kernel, first decisions and
answers computed by hand, and equality in distribution with ``bandit_gym.agents.OptKG`` (also at a budget where
``R+`` itself would underflow)."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import special, stats

import bandit_gym
from bandit_gym.jax.agents.optkg import OptKG, excess, log_c, log_optimistic_gain, upper_tail
from bandit_gym.jax.envs import ThresholdingFunctional
from bandit_gym.jax.rollout import play
from bandit_gym.registration import ENV_SPECS

from ._compare import Z_LIMIT, numpy_metric, z_statistic

SETUP1 = "ThresholdingBandit-Tao2019Setup1-v0"
SETUP3 = "ThresholdingBandit-Tao2019Setup3-v0"
EPS32 = float(np.finfo(np.float32).eps)


def kernels():
    pytest.importorskip("numba")
    from bandit_gym.agents.thresholding import optkg

    return optkg


def observation(counts: list[float], sums: list[float], threshold: float = 0.5, last_value: float = 0.0) -> dict:
    counts_, sums_ = np.asarray(counts, np.float32), np.asarray(sums, np.float32)
    means = np.where(counts_ > 0, sums_ / np.maximum(counts_, 1), 0)
    return {key: jnp.asarray(value, dtype=jnp.float32) for key, value in {
        "counts": counts_, "sums": sums_, "means": means, "threshold": [threshold], "epsilon": [0.0],
        "budget_left": [100.0], "last_arm": [-1.0], "last_value": [last_value]}.items()}


def exact_gain(a: float, b: float, theta: float) -> float:
    """``R+(a, b)`` by its definition, in float64 (scipy)."""
    def h(x: float) -> float:
        return max(x, 1.0 - x)

    def tail(a: float, b: float) -> float:
        return float(stats.beta.sf(theta, a, b))

    p = tail(a, b)
    return max(h(tail(a + 1, b)) - h(p), h(tail(a, b + 1)) - h(p))


def grid(a0: float, b0: float) -> tuple[np.ndarray, np.ndarray]:
    """Posteriors ``(a0 + ones, b0 + zeros)`` from 0 to 100,000 pulls, shares of ones around 1/2 and away."""
    a, b = [a0], [b0]
    for n in (1, 2, 3, 5, 10, 30, 100, 1000, 10_000, 40_000, 100_000):
        for share in (0.1, 0.3, 0.45, 0.49, 0.5, 0.51, 0.55, 0.7, 0.9):
            ones = round(n * share)
            a.append(a0 + ones)
            b.append(b0 + n - ones)
    return np.asarray(a), np.asarray(b)


@pytest.mark.parametrize("theta", [0.5, 0.3, 0.77])
@pytest.mark.parametrize("prior", [(1.0, 1.0), (0.5, 0.5)])
def test_log_gain_against_the_numpy_kernel(theta: float, prior: tuple[float, float]) -> None:
    """log c and log R+ at counts up to a + b = 1e5 (from I in float64 rounded to float32), against the numpy
    agent's ``fresh`` (float64). Tolerance: float32 sums terms of size up to |log R+| + ln(a + b) (Stirling's part
    and the divergence), each rounded to eps/2 relative; 16 eps times that size bounds their rounding."""
    fresh = kernels().fresh
    a0, b0 = prior
    a, b = grid(a0, b0)
    want_gain, want_p, want_logc = np.empty(a.size), np.empty(a.size), np.empty(a.size)
    for i in range(a.size):
        v, _, want_p[i], want_logc[i] = fresh(a[i] + b[i] - a0 - b0, a[i] - a0, theta, a0, b0, 0.0)
        want_gain[i] = -v
    agent = OptKG(a0=a0, b0=b0)
    a32, b32, th = jnp.asarray(a, jnp.float32), jnp.asarray(b, jnp.float32), jnp.float32(theta)
    logc = jax.jit(log_c, static_argnums=3)(a32, b32, th, agent.table)
    p = jnp.asarray(want_p, jnp.float32)
    gain = np.asarray(log_optimistic_gain(a32, b32, excess(p, p - p, a32, b32, th), logc), np.float64)
    scale = np.abs(want_gain) + np.log(a + b) + 1.0
    np.testing.assert_array_less(np.abs(np.asarray(logc, np.float64) - want_logc), 16 * EPS32 * scale)
    crossing = np.abs(want_p - 0.5) < np.exp(want_logc - np.log(np.minimum(a, b)))
    # at a crossing R+ is a difference with I, whose float32 rounding (eps/4 absolute) counts relative to R+
    slack = np.where(crossing, EPS32 * np.exp(np.minimum(-want_gain, 80.0)), 0.0)
    np.testing.assert_array_less(np.abs(gain - want_gain), 16 * EPS32 * scale + slack)
    error = np.abs(gain - want_gain)
    worst = np.max(error / scale)
    print(f"theta={theta} prior={prior}: max |log R+ error| / scale = {worst:.2e} ({worst / EPS32:.1f} eps), "
          f"max |error| = {error.max():.2e} at log R+ = {want_gain[np.argmax(error)]:.1f}")
    assert worst < 8 * EPS32


@pytest.mark.parametrize(("a0", "b0", "theta", "mean"), [(1.0, 1.0, 0.5, 0.5), (0.5, 0.5, 0.5, 0.505),
                                                         (1.0, 0.5, 0.5, 0.5), (1.0, 1.0, 0.3, 0.3)])
def test_the_recurrence_of_i_against_the_numpy_kernel(a0: float, b0: float, theta: float, mean: float) -> None:
    """20,000 pulls of one arm: I - 1/2 and log R+ after every pull, JAX (float32 pair) against the numpy agent's
    ``pulled`` (float64), and I at the end against scipy's ``betaincc``. (1, 0.5) at theta = 1/2 crosses 1/2."""
    pulled, fresh = kernels().pulled, kernels().fresh
    pulls = 20_000
    ones = (np.random.default_rng(3).random(pulls) < mean).astype(np.float32)
    counts, sums = np.arange(1, pulls + 1, dtype=np.float32), np.cumsum(ones).astype(np.float32)
    agent = OptKG(a0=a0, b0=b0)

    def obs(count: jax.Array, total: jax.Array, value: jax.Array) -> dict:
        return {"counts": count[None], "sums": total[None], "threshold": jnp.float32(theta)[None],
                "last_value": value[None], "budget_left": jnp.ones(1)}

    def step(state, pull):
        state = agent.update(state, obs(*pull))
        u = excess(state.p_hi, state.p_lo, a0 + pull[1], b0 + pull[0] - pull[1], theta)
        return state, (u[0], state.gain[0])

    start = agent.init(jax.random.key(0), obs(jnp.float32(0), jnp.float32(0), jnp.float32(0)))
    _, (u, gain) = jax.jit(lambda s: jax.lax.scan(step, s, (counts, sums, ones)))(start)
    _, _, p, logc = fresh(0.0, 0.0, theta, a0, b0, 0.0)
    want_u, want_gain = np.empty(pulls), np.empty(pulls)
    for t in range(pulls):
        v, _, p, logc = pulled(float(counts[t]), float(sums[t]), bool(ones[t]), p, logc, theta, a0, b0, 0.0)
        want_u[t], want_gain[t] = p - 0.5, -v
    u, gain = np.asarray(u, np.float64), np.asarray(gain, np.float64)
    assert np.abs(u - want_u).max() < (1e-6 if theta == 0.5 else 4e-6)
    assert np.all(np.sign(u) == np.sign(want_u))
    relative = np.abs(gain - want_gain) / np.abs(want_gain)
    assert np.max(relative) < (1e-6 if theta == 0.5 else 2e-3)  # theta != 1/2: crossings divide I's drift by R+
    final = special.betaincc(a0 + sums[-1], b0 + pulls - sums[-1], theta) - 0.5
    assert abs(u[-1] - final) < 4e-6


def test_the_priors_i_by_its_series() -> None:
    for a0, b0, theta in [(1.0, 1.0, 0.5), (0.5, 0.5, 0.5), (1.0, 1.0, 0.3), (0.5, 0.5, 0.8), (2.0, 3.0, 0.35),
                          (1.0, 0.5, 0.5)]:
        agent = OptKG(a0=a0, b0=b0)
        a, b, th = jnp.float32(a0), jnp.float32(b0), jnp.float32(theta)
        p = float(upper_tail(a, b, th, log_c(a, b, th, agent.table), agent.prior_terms))
        assert abs(p - special.betaincc(a0, b0, theta)) < 2 * EPS32, (a0, b0, theta)


@pytest.mark.slow
def test_the_answer_is_the_bayes_decision() -> None:
    agent = OptKG(tie_break="index")
    # (a, b) = (2, 2): I = 1/2 -> 1; (3, 1) -> 1; (2, 3) -> 0; never pulled (1, 1): I = 1/2 -> 1
    np.testing.assert_array_equal(answer(agent, observation([2, 2, 3, 0], [1, 2, 1, 0])), [1, 1, 0, 1])
    # theta = 0.4 and 0.35 with (a, b) = (2, 3): I = 0.4752 -> 0 and 0.5630 -> 1 (scipy's betaincc)
    for theta, bit in ((0.4, 0), (0.35, 1)):
        assert int(answer(agent, observation([3], [1], threshold=theta))[0]) == bit
    # the answer after a pull the state has not seen: (2, 2) -> (3, 2) by a one
    np.testing.assert_array_equal(answer(agent, observation([4, 1], [2, 1], last_value=1.0),
                                         observation([3, 1], [1, 1])), [1, 1])


@functools.partial(jax.jit, static_argnums=0)
def decide(agent: OptKG, start: dict, obs: dict, seed: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
    """From a state initialised at ``start`` (seeded by ``seed``): ``log R+`` at ``obs``, the arm chosen, the
    answer."""
    state = agent.init(jax.random.key(seed), start)
    return (agent.log_gains(state, obs), agent.select(state, obs, jax.random.key(1))[0],
            agent.answer(state, obs, jax.random.key(2)))


def first_arm(agent: OptKG, obs: dict) -> int:
    return int(decide(agent, obs, obs, 0)[1])


def log_gains(agent: OptKG, obs: dict) -> np.ndarray:
    return np.asarray(decide(agent, obs, obs, 0)[0])


def answer(agent: OptKG, obs: dict, start: dict | None = None) -> np.ndarray:
    return np.asarray(decide(agent, obs if start is None else start, obs, 0)[2])


@pytest.mark.slow
def test_first_decisions_by_hand() -> None:
    agent = OptKG(tie_break="index")
    assert first_arm(agent, observation([0] * 5, [0] * 5)) == 0  # t = 1: every arm ties
    start = observation([0] * 4, [0] * 4)
    picks = {int(decide(OptKG(), start, start, s)[1]) for s in range(40)}
    assert picks == {0, 1, 2, 3}
    # theta = 1/2, (a, b) = (3, 3), (2, 3), (6, 2), (2, 1): R+ = c/a or c/b with c = 2^-(a+b) / B(a, b):
    #   30/64/3 = 0.15625, 12/32/3 = 0.125, 42/256/6 = 0.02734, 2/8/2 = 0.125
    obs = observation([4, 3, 6, 1], [2, 1, 5, 1])
    want = np.log([0.15625, 0.125, 42 / 256 / 6, 0.125])
    np.testing.assert_allclose(log_gains(agent, obs), want, rtol=1e-6)
    assert first_arm(agent, obs) == 0
    # arm 0 pulled once more (a zero): (3, 4), R+ = c/b = 60/128/4 = 0.1171875 < 0.125: arm 1, the first of two ties
    assert first_arm(agent, observation([5, 3, 6, 1], [2, 1, 5, 1])) == 1
    # theta = 0.3 and a non-integer prior difference, against R+ by its definition (scipy)
    for a0, b0, theta, counts, sums in [(1.0, 1.0, 0.3, [3, 5, 2, 8], [1, 1, 0, 3]),
                                        (1.0, 0.5, 0.5, [3, 4, 2, 6], [1, 2, 1, 3])]:
        agent = OptKG(a0=a0, b0=b0, tie_break="index")
        exact = [exact_gain(a0 + s, b0 + c - s, theta) for c, s in zip(counts, sums, strict=True)]
        obs = observation(counts, sums, threshold=theta)
        np.testing.assert_allclose(log_gains(agent, obs), np.log(exact), rtol=1e-5)
        assert first_arm(agent, obs) == int(np.argmax(exact))


def test_bad_parameters_name_the_argument() -> None:
    for bad in ({"a0": 0.0}, {"b0": -1.0}, {"a0": float("nan")}, {"b0": True}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            OptKG(**bad)
    assert OptKG.families == ("thresholding",) and OptKG.numpy_agent == "OptKG"


def regrets(env_id: str, jax_agent: OptKG, numpy_agent, budget: int, episodes: int) -> tuple[np.ndarray, np.ndarray]:
    """The regret of ``episodes`` episodes of ``env_id`` at ``budget``: JAX, numpy."""
    kwargs = {**ENV_SPECS[env_id].kwargs, "budget": budget}
    got = np.asarray(play(ThresholdingFunctional(**kwargs), jax_agent, 11, episodes)["regret"])
    want = numpy_metric(env_id, numpy_agent, "regret", episodes, seed=12, budget=budget)
    return got, want


@pytest.mark.slow
@pytest.mark.parametrize("prior", [(1.0, 1.0), (0.5, 0.5)], ids=str)
def test_equal_in_distribution_to_the_numpy_agent(prior: tuple[float, float]) -> None:
    got, want = regrets(SETUP1, OptKG(a0=prior[0], b0=prior[1]), bandit_gym.agents.OptKG(*prior), 300, 4000)
    print(f"Setup 1, T = 300, prior {prior}: regret JAX {got.mean():.4f}, numpy {want.mean():.4f}, "
          f"z = {z_statistic(got, want):.2f}; error z = {z_statistic(got > 0, want > 0):.2f}")
    assert abs(z_statistic(got, want)) < Z_LIMIT, (got.mean(), want.mean())
    # epsilon = 0: the error is 1{regret > 0}
    assert abs(z_statistic(got > 0, want > 0)) < Z_LIMIT, ((got > 0).mean(), (want > 0).mean())


@pytest.mark.slow
def test_the_comparison_can_fail() -> None:
    """The same comparison tells the JAX Opt-KG from the numpy Uniform."""
    got, uniform = regrets(SETUP1, OptKG(), bandit_gym.agents.Uniform(), 300, 4000)
    print(f"JAX Opt-KG {got.mean():.4f} vs numpy Uniform {uniform.mean():.4f}: z = {z_statistic(got, uniform):.1f}")
    assert abs(z_statistic(got, uniform)) > 3 * Z_LIMIT


@pytest.mark.slow
def test_long_episodes_do_not_degenerate_into_ties() -> None:
    """Setup 3 (K = 10, five arms at 0.45, five at 0.505) at budget 20,000: the factor theta^a (1 - theta)^b of c
    is 2^-(a + b), no float32 number past a + b = 150, and the arms' R+ spread over many orders of magnitude.
    The regret agrees with the numpy agent's; pulling by index-order ties instead (R+ lost to underflow) would
    leave arms at their prior, answered 1 (I = 1/2), so that at least four arms at 0.45 are wrong."""
    got, want = regrets(SETUP3, OptKG(), bandit_gym.agents.OptKG(), 20_000, 400)
    print(f"Setup 3, T = 20,000: regret JAX {got.mean():.3f}, numpy {want.mean():.3f}, "
          f"z = {z_statistic(got, want):.2f}")
    assert abs(z_statistic(got, want)) < Z_LIMIT, (got.mean(), want.mean())
    assert got.mean() < 2.5
