"""TTTS (Russo 2016): the posterior draws against exact probabilities, the first decisions at K = 2 against their
closed form, the pairwise challenger against its formula, stopping, correctness, bad parameters. (The compiled
rule against its own source run by the interpreter, over whole fixed-confidence episodes:
``tests/agents/test_kernels.py``; the variates it draws against plain Python: ``tests/agents/test_variates.py``.)"""

from __future__ import annotations

import math

import gymnasium as gym
import numba
import numpy as np
import pytest
from scipy import integrate, stats

from bandit_gym.agents import TTTS
from bandit_gym.agents.best_arm import _stopping
from bandit_gym.agents.best_arm._base import records
from bandit_gym.agents.best_arm._kernels import WORK_ROWS
from bandit_gym.agents.best_arm.ttts import pairwise_challenger, prepare, sample_best
from bandit_gym.rollout import play_episode, play_vector
from tests.agents.best_arm.test_fixed_confidence import MEANS


def copy_records(family: int, sigma: float = 1.0, key: int = 12345) -> tuple[np.ndarray, np.ndarray]:
    constants = np.zeros(1, records(TTTS.constant_fields, _stopping.CHOICES))
    constants["family"], constants["sigma"], constants["key"] = family, sigma, key
    return constants, np.zeros(1, records(TTTS.state_fields))


@numba.njit
def _draw_bests(prepare, sample_best, counts, sums, mean, constants, state, n):  # pragma: no cover (compiled)
    out = np.zeros(n, np.int64)
    work = np.zeros((WORK_ROWS, counts.shape[0]))
    prepare(counts, sums, constants, work)
    for i in range(n):
        out[i] = sample_best(mean, constants, state, work)
    return out


def argmax_probabilities(posteriors) -> np.ndarray:
    """P(argmax theta = a) for independent frozen scipy laws, by quadrature."""
    def density(x, a):
        return posteriors[a].pdf(x) * np.prod([p.cdf(x) for j, p in enumerate(posteriors) if j != a])
    low = min(p.ppf(1e-12) for p in posteriors)
    high = max(p.ppf(1 - 1e-12) for p in posteriors)
    return np.array([integrate.quad(density, low, high, args=(a,), limit=200)[0] for a in range(len(posteriors))])


# ------------------------------------------------------------------------------------------ the posterior draws
@pytest.mark.parametrize(("family", "counts", "sums", "sigma"), [
    (0, [100, 100, 100, 100], [50, 45, 43, 40], 1.0),  # Beta(1 + S, 1 + N - S)
    (0, [3, 10, 40, 7], [2, 6, 25, 5], 1.0),
    (1, [20, 5, 8, 30], [4.0, 0.5, 1.2, 5.1], 0.5),  # N(mu, sigma^2 / N)
])
def test_the_best_arm_of_a_posterior_draw_has_the_exact_probabilities(family, counts, sums, sigma):
    counts, sums = np.array(counts, np.float32), np.array(sums, np.float32)
    mean = sums.astype(float) / counts
    if family == 0:
        laws = [stats.beta(1 + s, 1 + n - s) for n, s in zip(counts, sums, strict=True)]
    else:
        laws = [stats.norm(m, sigma / math.sqrt(n)) for n, m in zip(counts, mean, strict=True)]
    exact = argmax_probabilities(laws)
    constants, state = copy_records(family, sigma)
    runs = 40_000
    best = _draw_bests(prepare, sample_best, counts, sums, mean, constants[0], state[0], runs)
    assert state["draws"][0] == runs  # one event per draw of the K posteriors
    observed = np.bincount(best, minlength=4)
    # a chi-square test of the counts against the exact probabilities (fixed key: one fixed outcome)
    assert stats.chisquare(observed, exact / exact.sum() * runs).pvalue > 1e-3
    assert np.allclose(observed / runs, exact, atol=0.012)


@numba.njit
def _draw_pairwise(pairwise, counts, sums, mean, leader, constants, state, n):  # pragma: no cover (compiled)
    out = np.zeros(n, np.int64)
    centre, weights = np.zeros(counts.shape[0]), np.zeros(counts.shape[0])
    for i in range(n):
        out[i] = pairwise(counts, sums, mean, leader, constants, state, centre, weights)
    return out


@pytest.mark.parametrize(("family", "sums", "sigma"), [
    (0, [240, 210, 205, 200], 1.0),
    (1, [48.0, 40.0, 38.0, 30.0], 2.0),
    (1, [400.0, 60.0, 48.0, 40.0], 2.0),  # z = 6.0, 6.2, 6.4: the tails beyond z = 5
])
def test_the_pairwise_challenger_draws_the_normal_approximation_of_p_theta_j_above_theta_leader(family, sums, sigma):
    counts = np.full(4, 400, np.float32)
    sums = np.array(sums, np.float32)
    mean = sums.astype(float) / counts
    if family == 0:  # the Beta posteriors' means and variances
        a, b = 1 + sums.astype(float), 1 + counts - sums.astype(float)
        centre, var = a / (a + b), a * b / ((a + b) ** 2 * (a + b + 1))
    else:
        centre, var = mean, np.full(4, sigma**2 / 400)
    weights = stats.norm.cdf(-(centre[0] - centre[1:]) / np.sqrt(var[0] + var[1:]))
    exact = weights / weights.sum()
    assert exact.min() > 0.01  # every arm has a chance: the test can see a wrong weight
    constants, state = copy_records(family, sigma)
    runs = 30_000
    drawn = _draw_pairwise(pairwise_challenger, counts, sums, mean, 0, constants[0], state[0], runs)
    assert not np.any(drawn == 0)
    observed = np.bincount(drawn, minlength=4)[1:]
    assert stats.chisquare(observed, exact * runs).pvalue > 1e-3


# ------------------------------------------------------------------------------------------ first decisions
def test_each_arm_is_pulled_once_first_in_the_copy_s_order():
    env = gym.make("BestArmIdentification-v0", means=MEANS, setting="fixed_confidence", budget=10_000)
    agent = TTTS(tie_break="index")
    obs, _ = env.reset(seed=0)
    agent.reset(seed=0)
    arms = []
    for _ in range(len(MEANS)):
        action = agent.act(obs)
        arms.append(int(action[0]))
        obs, *_ = env.step(action)
    assert arms == list(range(len(MEANS)))
    assert agent.state["draws"][0] == 0  # no posterior draw before every arm is pulled


@pytest.mark.parametrize("beta", [0.5, 0.2])
def test_at_two_arms_arm_one_is_pulled_with_beta_p_plus_one_minus_beta_one_minus_p(beta):
    # K = 2: the challenger is always the other arm, so P(pull arm 1) = beta p + (1 - beta)(1 - p) with
    # p = P(theta_1 > theta_0) = P(I = 1); one decision in each of 20,000 copies at the same statistics
    counts, sums = np.array([6.0, 6.0], np.float32), np.array([4.0, 2.0], np.float32)
    p = argmax_probabilities([stats.beta(1 + s, 1 + n - s) for n, s in zip(counts, sums, strict=True)])[1]
    want = beta * p + (1 - beta) * (1 - p)
    n = 20_000
    venv = gym.make_vec("BestArmIdentification-v0", num_envs=n, vectorization_mode="vector_entry_point",
                        means=[0.5, 0.4], setting="fixed_confidence", budget=10_000)
    obs, _ = venv.reset(seed=0)
    agent = TTTS(beta=beta, delta=0.01, tie_break="index")
    agent.reset(seed=0)
    agent.act(obs)
    later = {**obs, "counts": np.tile(counts, (n, 1)), "sums": np.tile(sums, (n, 1)),
             "means": np.tile(sums / counts, (n, 1)), "budget_left": np.full((n, 1), 10_000 - 12, np.float32)}
    arms = agent.act(later)[:, 0]
    assert set(np.unique(arms)) == {0, 1}  # no stop: Z(t) is far below the threshold
    assert stats.binomtest(int(np.sum(arms == 1)), n, want).pvalue > 1e-3
    assert abs(np.mean(arms == 1) - want) < 0.015


# ------------------------------------------------------------------------------------------ whole episodes
def test_it_stops_and_answers_the_best_arm_on_an_easy_instance():
    venv = gym.make_vec("BestArmIdentification-v0", num_envs=20, vectorization_mode="vector_entry_point",
                        means=[0.7, 0.4, 0.3], setting="fixed_confidence", budget=100_000)
    result = play_vector(venv, TTTS(delta=0.05), seed=1)
    assert np.all(result["pulls"] < 100_000) and np.all(result["pulls"] > 3)
    assert result["error"].sum() == 0


def test_gaussian_arms_stop_with_the_best_arm():
    env = gym.make("BestArmIdentification-v0", means=[0.5, 0.0, -0.2], arm_distribution="gaussian", sigma=1.0,
                   setting="fixed_confidence", budget=100_000)
    result = play_episode(env, TTTS(delta=0.05, distribution="gaussian", sigma=1.0), seed=0)
    assert result["pulls"] < 100_000 and result["error"] == 0.0


def test_the_same_seed_gives_the_same_episode_and_another_seed_another():
    env = gym.make("BestArmIdentification-v0", means=[0.6, 0.5, 0.45], setting="fixed_confidence", budget=100_000)
    pulls = [play_episode(env, TTTS(delta=0.1), seed=seed)["pulls"] for seed in (4, 4, 5)]
    assert pulls[0] == pulls[1] != pulls[2]


# ------------------------------------------------------------------------------------------ parameters
@pytest.mark.parametrize(("kwargs", "error", "message"), [
    ({"delta": 1.0}, ValueError, "delta"),
    ({"beta": 0.0}, ValueError, "beta"),
    ({"beta": 1.0}, ValueError, "beta"),
    ({"max_resamples": 0}, ValueError, "max_resamples"),
    ({"max_resamples": 2.5}, TypeError, "max_resamples"),
    ({"stopping": "lil"}, ValueError, "lil'UCB's own rule"),
    ({"distribution": "gaussian", "threshold": "gk2016"}, ValueError, "Bernoulli arms only"),
])
def test_bad_parameters_are_named(kwargs, error, message):
    with pytest.raises(error, match=message):
        TTTS(**kwargs)


def test_it_identifies_the_best_arm_only():
    with pytest.raises(ValueError, match="m = 2"):
        TTTS().act(gym.make("BestArmIdentification-v0", means=MEANS, m=2).reset(seed=0)[0])


def test_the_keys_are_exact_in_the_float64_constants():
    agent = TTTS()
    agent.reset(seed=0)
    agent.act(gym.make_vec("BestArmIdentification-v0", num_envs=50, vectorization_mode="vector_entry_point",
                           means=MEANS, setting="fixed_confidence").reset(seed=0)[0])
    keys = agent.constants["key"]
    assert np.all(keys == np.floor(keys)) and keys.max() < 2**52 and len(np.unique(keys)) == 50
