"""FWS (Wang, Tzeng and Proutiere 2021): the zero-sum game against a linear program, a game solved by hand, the
first decisions by hand, 400 steps against the rule written in plain Python after the authors' code, stopping and
correctness, bad parameters."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest
from scipy.optimize import linprog

from bandit_gym.agents import FWSampling
from bandit_gym.agents.best_arm.fw_sampling import solve as game_solver
from bandit_gym.rollout import play_vector
from tests.agents.best_arm.test_fixed_confidence import MEANS, decide


def kl(p: float, q: float) -> float:
    """Bernoulli divergence, 0 ln 0 = 0."""
    value = 0.0
    if p > 0:
        value += p * math.log(p / q)
    if p < 1:
        value += (1 - p) * math.log((1 - p) / (1 - q))
    return value


def game_value(best, members, g, h, f, z) -> float:
    """The smallest payoff ``z_best g_j + z_j h_j - f_j`` over the members."""
    return min(z[best] * g[j] + z[j] * h[j] - f[j] for j in np.flatnonzero(members))


def lp_value(best, members, g, h, f) -> float:
    """The game's value by scipy's LP (HiGHS): max w s.t. z_best g_j + z_j h_j - f_j >= w, z in the simplex."""
    k = len(g)
    cost = np.zeros(k + 1)
    cost[-1] = -1.0
    rows = []
    for j in np.flatnonzero(members):
        row = np.zeros(k + 1)
        row[best], row[j], row[-1] = -g[j], -h[j], 1.0
        rows.append(row)
    bounds = [(0, None)] * k + [(None, None)]
    done = linprog(cost, A_ub=np.array(rows), b_ub=-np.asarray(f)[members], A_eq=[[1.0] * k + [0.0]], b_eq=[1.0],
                   bounds=bounds, method="highs")
    assert done.status == 0
    return -done.fun


# ------------------------------------------------------------------------------------------ the zero-sum game
def test_the_game_solver_reaches_the_value_of_the_linear_program() -> None:
    solve = game_solver
    rng = np.random.default_rng(0)
    for _ in range(200):
        k = int(rng.integers(3, 9))
        best = int(rng.integers(k))
        members = rng.random(k) < 0.6
        members[best] = False
        members[(best + 1) % k] = True
        members[(best + 2) % k] |= rng.random() < 0.7
        g, h = rng.uniform(0.01, 1.0, k), rng.uniform(0.01, 1.0, k)
        f = rng.uniform(0.0, 0.5, k)
        z = np.zeros(k)
        solve(best, members, g, h, f, z)
        assert z.min() >= 0 and z.sum() == pytest.approx(1.0, abs=1e-12)
        assert not z[~members & (np.arange(k) != best)].any()  # mass on the best arm and the members only
        assert game_value(best, members, g, h, f, z) == pytest.approx(lp_value(best, members, g, h, f), abs=1e-9)


def test_a_game_with_an_interval_of_solutions_takes_its_middle() -> None:
    # Gaussian arms (sigma = 1), means 0.9, 0.5, 0.1, x = 1/3 each: m_1 = 0.7, m_2 = 0.5;
    # g_1 = h_1 = 0.2^2 / 2 = 0.02, f_1 = 0.04 / 3; g_2 = h_2 = 0.08, f_2 = 0.16 / 3.
    # Row 1's payoff 0.02 (z_0 + z_1) - 0.04 / 3 is at most 1/150 (z_2 = 0), reached by every z_0 in [0.75, 1]
    # (row 2's payoff 0.08 z_0 - 0.16 / 3 >= 1/150 there): the middle share is 0.875
    g, h = np.array([0.0, 0.02, 0.08]), np.array([0.0, 0.02, 0.08])
    f = np.array([0.0, 0.04 / 3, 0.16 / 3])
    z = np.zeros(3)
    game_solver(0, np.array([False, True, True]), g, h, f, z)
    np.testing.assert_allclose(z, [0.875, 0.125, 0.0], atol=1e-9)
    assert game_value(0, np.array([False, True, True]), g, h, f, z) == pytest.approx(1 / 150)


# ------------------------------------------------------------------------------------------ first decisions
def test_forced_exploration_when_t_over_k_is_a_square_then_the_least_pulled_arm() -> None:
    # t = 36 pulls, K = 4: floor(36 / 4) = 9 = 3^2: z uniform, x stays uniform, the pull is argmax 1/N_a
    action = decide(FWSampling(tie_break="index"), [10, 8, 9, 9], [6, 4, 4, 3])
    assert int(action[0]) == 1 and action[1:].tolist() == [1, 0, 0, 0]


def test_one_near_minimal_challenger_gets_the_best_response() -> None:
    # t = 480 (floor(480 / 4) = 120, not a square), means 0.7, 0.5, 0.45, 0.3, x = 1/4 each: f_1 = (kl(.7, .6) +
    # kl(.5, .6)) / 4 is the smallest, by more than r = 480^-0.9 / 4; grad f_1 = (kl(.7, .6), kl(.5, .6), 0, 0):
    # z = e_0, x = (481 / 1920, 479 / 1920, ...), and arm 0, the furthest below its share, is pulled
    counts, sums = [120, 120, 120, 120], [84, 60, 54, 36]
    means = np.array(sums) / np.array(counts)
    f = [(kl(means[0], (means[0] + m) / 2) + kl(m, (means[0] + m) / 2)) / 4 for m in means[1:]]
    assert f[1] - f[0] > 480**-0.9 / 4 and f[0] == min(f)
    assert kl(0.7, 0.6) > kl(0.5, 0.6)
    action = decide(FWSampling(tie_break="index"), counts, sums)
    assert int(action[0]) == 0 and action[1:].tolist() == [1, 0, 0, 0]


# ------------------------------------------------------------------------------------------ 400 steps, by hand
def reference_step(counts, sums, x, solve) -> tuple[int, np.ndarray]:
    """One FWS step after the authors' ``nextsample`` (standard/samplingrules.jl, utilities/envelope.jl), in plain
    Python; the zero-sum game by the package's solver (its solution need not be unique). Ties: smallest index."""
    counts, sums = np.asarray(counts, float), np.asarray(sums, float)
    k, t = len(counts), counts.sum()
    mu = sums / counts
    best = int(np.argmax(mu))
    tie = any(i != best and mu[best] - mu[i] <= np.finfo(float).eps for i in range(k))
    rounds = math.floor(t / k)
    if tie or math.isqrt(rounds) ** 2 == rounds:
        z = np.full(k, 1.0 / k)
    else:
        g, h, f = np.zeros(k), np.zeros(k), np.zeros(k)
        for j in range(k):
            if j != best:
                mid = (x[best] * mu[best] + x[j] * mu[j]) / (x[best] + x[j])
                g[j], h[j] = kl(mu[best], mid), kl(mu[j], mid)
                f[j] = x[best] * g[j] + x[j] * h[j]
        lowest = min(f[j] for j in range(k) if j != best)
        members = np.array([j != best and f[j] < lowest + t**-0.9 / k for j in range(k)])
        z = np.zeros(k)
        if members.sum() == 1:
            j = int(np.flatnonzero(members)[0])
            z[best if g[j] > h[j] or (g[j] == h[j] and best < j) else j] = 1.0
        else:
            solve(best, members, g, h, f, z)
    x = x * ((t - 1) / t) + z / t
    return int(np.argmax(x / counts)), x


def test_400_steps_equal_the_rule_in_plain_python() -> None:
    rng = np.random.default_rng(3)
    rewards = (rng.random((4, 2000)) < MEANS[:, None]).astype(float)
    counts, sums = [1, 1, 1, 1], [float(rewards[a, 0]) for a in range(4)]
    x, solve = np.full(4, 0.25), game_solver
    steps, arms = [], []
    for _ in range(400):
        arm, x = reference_step(counts, sums, x, solve)
        steps.append((list(counts), list(sums)))
        arms.append(arm)
        sums[arm] += rewards[arm, counts[arm]]
        counts[arm] += 1
    actions = decide(FWSampling(delta=1e-300, tie_break="index"), *steps[0], *steps[1:])
    assert [int(action[0]) for action in actions] == arms
    assert len(set(arms)) == 4 and arms.count(0) > arms.count(3)


# ------------------------------------------------------------------------------------------ whole episodes
@pytest.mark.slow
def test_stops_correctly_and_near_the_bound() -> None:
    """delta = 0.1, 200 runs on [.6 .45 .4 .3]: no more errors than delta allows (binomial, 1e-3) and a mean
    stopping time above the lower bound kl(delta, 1 - delta) T*(mu) and within ten times it (measured: 6.1 times,
    1188 pulls, no error; on GK 2016's first instance [.5 .45 .43 .4] 7.7 times, 13,329 pulls, where the
    fixed-confidence study has Track-and-Stop D at 7.6 times with the same threshold; ten times as long to play)."""
    from scipy import stats

    from bandit_gym.lower_bounds import best_arm_allocation, lower_bound

    means = [0.6, 0.45, 0.4, 0.3]
    env = gym.make_vec("BestArmIdentification-v0", num_envs=200, vectorization_mode="vector_entry_point",
                       means=means, setting="fixed_confidence", budget=1_000_000)
    out = play_vector(env, FWSampling(delta=0.1), seed=0)
    assert out["pulls"].max() < 1_000_000
    assert stats.binom.sf(out["error"].sum() - 1, 200, 0.1) > 1e-3
    bound = lower_bound(best_arm_allocation(means), 0.1)
    assert bound < out["pulls"].mean() < 10 * bound


def test_gaussian_arms_and_bad_parameters() -> None:
    env = gym.make_vec("BestArmIdentification-v0", num_envs=20, vectorization_mode="vector_entry_point",
                       means=[1.0, 0.0, -0.5], arm_distribution="gaussian", sigma=1.0, setting="fixed_confidence",
                       budget=100_000)
    out = play_vector(env, FWSampling(delta=0.05, distribution="gaussian", sigma=1.0), seed=0)
    assert out["error"].sum() == 0 and out["pulls"].max() < 100_000
    with pytest.raises(ValueError, match="delta"):
        FWSampling(delta=1.0)
