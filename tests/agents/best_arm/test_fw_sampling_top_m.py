"""FWS for top-m identification (m > 1): the zero-sum game's linear program against scipy's, its choice among
optimal strategies (the one nearest the uniform, certified by its optimality conditions), 400 steps against the
rule written in plain Python, whole episodes on the best-arm and top-K envs; label invariance, delta-correctness
and the ratio to the lower bound (slow)."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest
from scipy import optimize, stats

from bandit_gym.agents import FWSampling
from bandit_gym.agents.best_arm import _stopping
from bandit_gym.agents.best_arm._base import records
from bandit_gym.agents.best_arm._game import solve_game
from bandit_gym.agents.best_arm.fw_sampling import Z, direction
from bandit_gym.lower_bounds import lower_bound, top_m_allocation
from bandit_gym.rollout import play_vector
from tests.agents.best_arm.test_fw_sampling import kl

MEANS = [0.6, 0.5, 0.4, 0.3, 0.2]


def lp_value(payoff: np.ndarray) -> float:
    """max_z min_p (payoff z)_p over the simplex by scipy's LP (HiGHS): max w s.t. payoff z >= w."""
    n, k = payoff.shape
    cost = np.zeros(k + 1)
    cost[-1] = -1.0
    done = optimize.linprog(cost, A_ub=np.hstack([-payoff, np.ones((n, 1))]), b_ub=np.zeros(n),
                            A_eq=[[1.0] * k + [0.0]], b_eq=[1.0], bounds=[(0, None)] * k + [(None, None)],
                            method="highs")
    assert done.status == 0
    return -done.fun


def pair_game(rng: np.random.Generator, k: int, m: int) -> np.ndarray:
    """A game as FWS builds it for top-m: rows ``grad f_p(x) - f_p(x)`` for random pairs p = (i in S, j not in
    S), ``f_p = x_i g_p + x_j h_p``."""
    x = rng.dirichlet(np.ones(k))
    pairs = [(i, j) for i in range(m) for j in range(m, k)]
    rows = []
    for index in rng.choice(len(pairs), size=int(rng.integers(2, len(pairs) + 1)), replace=False):
        i, j = pairs[index]
        g, h = rng.uniform(0.01, 1.0, 2)
        row = np.full(k, -(x[i] * g + x[j] * h))
        row[i] += g
        row[j] += h
        rows.append(row)
    return np.array(rows)


def nearest_certificate(payoff: np.ndarray, z: np.ndarray, value: float) -> float:
    """The residual of the optimality conditions of z as the point of the optimal set ``{z in simplex : payoff z
    >= value}`` nearest the origin: ``z = sum_p lambda_p payoff_p + sum_a mu_a e_a + nu 1`` with lambda, mu >= 0
    on the constraints tight at z (0 certifies it; nonnegative least squares)."""
    tight_rows = payoff[payoff @ z <= value + 1e-9]
    tight_bounds = np.eye(len(z))[z <= 1e-9]
    basis = np.vstack([tight_rows, tight_bounds, np.ones(len(z)), -np.ones(len(z))]).T
    return optimize.nnls(basis, z)[1]


# ------------------------------------------------------------------------------------------ the zero-sum game
def test_the_game_solver_reaches_the_value_of_the_linear_program_on_200_random_games() -> None:
    rng = np.random.default_rng(0)
    for n in range(200):
        if n % 2:
            payoff = rng.normal(size=(int(rng.integers(1, 7)), int(rng.integers(1, 9))))
            if n % 4 == 1:  # ties and duplicate columns: optimal sets that are not a point
                payoff = np.round(payoff)
                payoff[:, -1] = payoff[:, 0]
        else:
            k = int(rng.integers(3, 9))
            payoff = pair_game(rng, k, int(rng.integers(1, k)))
        z = np.zeros(payoff.shape[1])
        value = solve_game(payoff, z)
        assert z.min() >= 0.0 and z.sum() == pytest.approx(1.0, abs=1e-12)
        assert value == pytest.approx((payoff @ z).min(), abs=1e-12)  # the value z reaches
        assert value == pytest.approx(lp_value(payoff), abs=1e-9)


def test_the_game_solver_takes_the_optimal_strategy_nearest_the_uniform_one() -> None:
    # columns 0 and 1 equal: the value 1/2 (z_0 + z_1 = z_2 = 1/2), the mass split evenly between them
    z = np.zeros(3)
    assert solve_game(np.array([[1.0, 1.0, 0.0], [0.0, 0.0, 1.0]]), z) == pytest.approx(0.5, abs=1e-12)
    np.testing.assert_allclose(z, [0.25, 0.25, 0.5], atol=1e-9)
    # FWS's m = 1 game of Gaussian means 0.9, 0.5, 0.1 at x = 1/3 (test_fw_sampling): row 1 reaches its best, 1/150,
    # for every z_0 in [0.75, 1] with z_1 = 1 - z_0, z_2 = 0; the nearest the uniform is z_0 = 0.75 (m = 1 takes
    # the middle, 0.875)
    f1, f2 = 0.04 / 3, 0.16 / 3
    game = np.array([[0.02 - f1, 0.02 - f1, -f1], [0.08 - f2, -f2, 0.08 - f2]])
    assert solve_game(game, z) == pytest.approx(1 / 150, abs=1e-12)
    np.testing.assert_allclose(z, [0.75, 0.25, 0.0], atol=1e-9)


def test_the_chosen_strategy_is_certified_nearest_and_follows_a_relabelling() -> None:
    rng = np.random.default_rng(1)
    for n in range(150):
        payoff = np.round(rng.normal(size=(int(rng.integers(1, 6)), int(rng.integers(2, 8)))))
        if n % 2:
            payoff[:, 1] = payoff[:, 0]
        z = np.zeros(payoff.shape[1])
        value = solve_game(payoff, z)
        assert nearest_certificate(payoff, z, value) < 1e-7
        rows, columns = rng.permutation(payoff.shape[0]), rng.permutation(payoff.shape[1])
        moved = np.zeros(payoff.shape[1])
        solve_game(np.ascontiguousarray(payoff[rows][:, columns]), moved)
        np.testing.assert_allclose(moved, z[columns], atol=1e-8)


def test_the_certificate_rejects_an_optimal_vertex_that_is_not_the_nearest() -> None:
    payoff = np.array([[1.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    assert nearest_certificate(payoff, np.array([0.5, 0.0, 0.5]), 0.5) > 1e-3


# ------------------------------------------------------------------------------------------ the iterates
@pytest.mark.parametrize(("means", "m", "distribution"), [(MEANS, 2, "bernoulli"),
                                                          ([1.0, 0.8, 0.5, 0.4, 0.1, 0.0], 3, "gaussian")])
def test_the_frank_wolfe_iterates_on_the_true_means_reach_the_optimal_allocation(means, m, distribution) -> None:
    """The directions of FWS fed the true means (and S, the true top m) from x = 1/K: F(x_t) T*(mu) -> 1 and x_t
    -> w*(mu) of ``top_m_allocation`` (measured on MEANS: 0.998 at t = 10^4, 0.9999 at 2 10^5)."""
    mu, k = np.array(means), len(means)
    family = float(_stopping.DISTRIBUTIONS.index(distribution))
    constants = np.zeros(1, records(_stopping.FIELDS, _stopping.CHOICES))
    constants["family"], constants["sigma"] = family, 1.0
    answer = (np.argsort(np.argsort(-mu)) < m).astype(np.int64)
    x, work = np.full(k, 1.0 / k), np.zeros((7, k))
    for t in range(k, 20_000):
        direction(float(t), mu, x, answer, m, constants[0], work)
        x = x * ((t - 1) / t) + work[Z] / t
    pairs = [(i, j) for i in range(k) for j in range(k) if answer[i] and not answer[j]]
    mids = {(i, j): (x[i] * mu[i] + x[j] * mu[j]) / (x[i] + x[j]) for i, j in pairs}
    value = min(x[i] * _stopping.divergence(mu[i], mids[i, j], family, 1.0)
                + x[j] * _stopping.divergence(mu[j], mids[i, j], family, 1.0) for i, j in pairs)
    optimal = top_m_allocation(mu, m, distribution)
    assert 0.995 < value * optimal.time <= 1.0 + 1e-9
    np.testing.assert_allclose(x, optimal.weights, atol=0.01)


# ------------------------------------------------------------------------------------------ steps, by hand
def reference_step(counts, sums, x, m) -> tuple[int, np.ndarray]:
    """One FWS step for top-m in plain Python (the class docstring); the game over all K arms by the package's
    solver. Ties: smallest index."""
    counts, sums = np.asarray(counts, float), np.asarray(sums, float)
    k, t = len(counts), counts.sum()
    mu = sums / counts
    inside = np.zeros(k, bool)
    inside[np.argsort(-mu, kind="stable")[:m]] = True
    rounds = math.floor(t / k)
    if mu[inside].min() - mu[~inside].max() <= np.finfo(float).eps or math.isqrt(rounds) ** 2 == rounds:
        z = np.full(k, 1.0 / k)
    else:
        pairs = [(i, j) for i in range(k) for j in range(k) if inside[i] and not inside[j]]
        mids = [(x[i] * mu[i] + x[j] * mu[j]) / (x[i] + x[j]) for i, j in pairs]
        grads = [(kl(mu[i], mid), kl(mu[j], mid)) for (i, j), mid in zip(pairs, mids, strict=True)]
        f = [x[i] * g + x[j] * h for (i, j), (g, h) in zip(pairs, grads, strict=True)]
        near = [p for p in range(len(pairs)) if f[p] < min(f) + t**-0.9 / k]
        z = np.zeros(k)
        if len(near) == 1:
            (i, j), (g, h) = pairs[near[0]], grads[near[0]]
            z[i if g > h or (g == h and i < j) else j] = 1.0
        else:
            payoff = np.array([np.full(k, -f[p]) for p in near])
            for row, p in enumerate(near):
                payoff[row, pairs[p][0]] += grads[p][0]
                payoff[row, pairs[p][1]] += grads[p][1]
            solve_game(payoff, z)
    x = x * ((t - 1) / t) + z / t
    return int(np.argmax(x / counts)), x


def decide(agent, means, m, steps):
    """The agent's actions on the observations ``steps`` (pairs of counts and sums) of one episode of an m-best
    env, after its first observation."""
    env = gym.make("BestArmIdentification-v0", means=means, m=m, setting="fixed_confidence", budget=10_000)
    first, _ = env.reset(seed=0)
    agent.reset(seed=0)
    agent.act(first)
    actions = []
    for n, s in steps:
        obs = {**first, "counts": np.asarray(n, np.float32), "sums": np.asarray(s, np.float32),
               "means": np.asarray(s, np.float32) / np.asarray(n, np.float32),
               "budget_left": np.array([10_000 - int(np.sum(n))], np.float32)}
        actions.append(agent.act(obs).copy())
    return actions


@pytest.mark.parametrize("m", [2, 3])
def test_400_steps_equal_the_rule_in_plain_python(m: int) -> None:
    means = np.array([0.7, 0.6, 0.55, 0.4, 0.3, 0.2])
    rng = np.random.default_rng(m)
    rewards = (rng.random((6, 2000)) < means[:, None]).astype(float)
    counts, sums = [1] * 6, [float(rewards[a, 0]) for a in range(6)]
    x = np.full(6, 1 / 6)
    steps, arms = [], []
    for _ in range(400):
        arm, x = reference_step(counts, sums, x, m)
        steps.append((list(counts), list(sums)))
        arms.append(arm)
        sums[arm] += rewards[arm, counts[arm]]
        counts[arm] += 1
    actions = decide(FWSampling(delta=1e-300, tie_break="index"), means, m, steps)
    assert [int(action[0]) for action in actions] == arms
    assert all(int(action[1:].sum()) == m for action in actions)
    assert len(set(arms)) == 6 and min(arms.count(a) for a in (m - 1, m)) > arms.count(5)  # the boundary arms


def test_a_tie_across_the_boundary_is_a_uniform_step() -> None:
    # t = 50, K = 5 (floor(50 / 5) = 10, not a square), m = 2: arms 1 and 2 tie at 0.5 across the boundary, so
    # z is uniform, x stays uniform and the least pulled arm (3) is pulled; the answer: 0 and 1 (index ties)
    (action,) = decide(FWSampling(tie_break="index"), MEANS, 2, [([10, 10, 10, 9, 11], [7, 5, 5, 3, 2])])
    assert int(action[0]) == 3 and action[1:].tolist() == [1, 1, 0, 0, 0]


# ------------------------------------------------------------------------------------------ whole episodes
def test_top_2_on_the_best_arm_env_and_top_3_on_the_top_k_env_stop_with_the_right_answer() -> None:
    env = gym.make_vec("BestArmIdentification-v0", num_envs=20, vectorization_mode="vector_entry_point",
                       means=MEANS, m=2, setting="fixed_confidence", budget=10**6)
    out = play_vector(env, FWSampling(delta=0.1), seed=0)
    assert out["pulls"].max() < 10**6 and out["error"].sum() == 0
    bound = lower_bound(top_m_allocation(MEANS, 2), 0.1)
    assert bound < out["pulls"].mean() < 20 * bound
    env = gym.make_vec("TopKIdentification-v0", num_envs=10, vectorization_mode="vector_entry_point",
                       means=[0.7, 0.6, 0.5, 0.35, 0.25, 0.1], k=3, epsilon=0.0, loss="error",
                       setting="fixed_confidence", budget=10**6)
    out = play_vector(env, FWSampling(delta=0.1), seed=0)
    assert out["pulls"].max() < 10**6 and out["error"].sum() == 0


def test_gaussian_arms_with_m_2() -> None:
    env = gym.make_vec("BestArmIdentification-v0", num_envs=10, vectorization_mode="vector_entry_point",
                       means=[1.0, 0.5, -0.5, -1.0], m=2, arm_distribution="gaussian", sigma=1.0,
                       setting="fixed_confidence", budget=10**6)
    out = play_vector(env, FWSampling(delta=0.05, distribution="gaussian", sigma=1.0), seed=0)
    assert out["error"].sum() == 0 and out["pulls"].max() < 10**6


@pytest.mark.slow
def test_a_relabelled_instance_has_the_same_stopping_times() -> None:
    """200 runs each on MEANS and on a permutation of it (m = 2): stopping times equal in distribution (Welch's
    t-test and Kolmogorov-Smirnov at 1e-3)."""
    pulls = []
    for means in (MEANS, [MEANS[a] for a in (3, 0, 4, 1, 2)]):
        env = gym.make_vec("BestArmIdentification-v0", num_envs=200, vectorization_mode="vector_entry_point",
                           means=means, m=2, setting="fixed_confidence", budget=10**6)
        pulls.append(play_vector(env, FWSampling(delta=0.1), seed=1)["pulls"])
    assert stats.ttest_ind(*pulls, equal_var=False).pvalue > 1e-3
    assert stats.ks_2samp(*pulls).pvalue > 1e-3


@pytest.mark.slow
@pytest.mark.parametrize("threshold", ["mixture", "heuristic"])
def test_delta_correct_and_above_the_lower_bound(threshold: str) -> None:
    """delta = 0.1, 300 runs, m = 2 on MEANS: no more errors than delta allows (exact binomial, 1e-3) and a mean
    stopping time above kl(delta, 1 - delta) T*(mu) and within ten times it (measured: "mixture" 6.78 times, 2754
    pulls, no error; "heuristic" 2.13 times, 865 pulls, 2 errors; the default "gk2016" 6.99 times)."""
    env = gym.make_vec("BestArmIdentification-v0", num_envs=300, vectorization_mode="vector_entry_point",
                       means=MEANS, m=2, setting="fixed_confidence", budget=10**6)
    out = play_vector(env, FWSampling(delta=0.1, threshold=threshold), seed=2)
    assert out["pulls"].max() < 10**6
    assert stats.binom.sf(out["error"].sum() - 1, 300, 0.1) > 1e-3
    bound = lower_bound(top_m_allocation(MEANS, 2), 0.1)
    assert bound < out["pulls"].mean() < 10 * bound
