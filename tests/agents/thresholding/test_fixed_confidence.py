"""The thresholding bandit at fixed confidence: the per-arm GLR stop and its thresholds against their formulas and a
plain-numpy reference, Track-and-Stop's D-tracking against a plain-numpy reference and against w* (slow), seeded
episodes, and the error rate of the proved thresholds against delta (slow, exact Clopper-Pearson intervals)."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest
from scipy import stats

from bandit_gym.agents import ThresholdingAPT, ThresholdingRacing, ThresholdingTaS, ThresholdingUniform
from bandit_gym.agents.thresholding import _glr
from bandit_gym.divergences import divergence, mixture_boundary
from bandit_gym.lower_bounds import thresholding_allocation
from bandit_gym.rollout import play_episode, play_vector

RULES = [ThresholdingTaS, ThresholdingUniform, ThresholdingRacing, ThresholdingAPT]
PROVED = ("mixture", "union")


def make_obs(counts, sums, theta=0.5, epsilon=0.0, last=-1.0, budget_left=1000.0) -> dict[str, np.ndarray]:
    counts, sums = np.asarray(counts, np.float32), np.asarray(sums, np.float32)
    return {"threshold": np.array([theta], np.float32), "epsilon": np.array([epsilon], np.float32),
            "budget_left": np.array([budget_left], np.float32), "last_arm": np.array([last], np.float32),
            "last_value": np.zeros(1, np.float32), "counts": counts, "sums": sums,
            "means": (sums / np.maximum(counts, 1.0)).astype(np.float32)}


# ------------------------------------------------------------------------------------ reference (plain numpy)
def reference_statistics(counts, sums, theta, epsilon, distribution="bernoulli", sigma=1.0):
    """Per arm: the GLR statistic Z_i of the side of the larger statistic, and that side (1: above), from
    ``bandit_gym.divergences`` (float64 of the float32 observation, as the agents read it)."""
    d = divergence(distribution, sigma)
    n = np.asarray(counts, np.float32).astype(np.float64)
    m = np.asarray(sums, np.float32).astype(np.float64) / np.maximum(n, 1.0)
    theta, epsilon = float(np.float32(theta)), float(np.float32(epsilon))

    def side(point, wrong_side_ok):
        if distribution == "bernoulli" and not 0.0 < point < 1.0:
            return np.where(wrong_side_ok, np.inf, 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(wrong_side_ok, d(m, point), 0.0)

    up, down = side(theta - epsilon, m > theta - epsilon), side(theta + epsilon, m < theta + epsilon)
    above = (up > down) | ((up == down) & (m >= theta))
    cost = np.where(above, up, down)
    return np.where(n > 0, n * np.where(n > 0, cost, 0.0), 0.0), above.astype(int), cost


def reference_thresholds(counts, delta, threshold, distribution="bernoulli"):
    """beta_i of each arm from its formula (``mixture``: ``bandit_gym.divergences.mixture_boundary``)."""
    k, t = len(counts), float(np.sum(counts))
    if threshold == "mixture":
        return np.array([mixture_boundary([n], math.log(k / delta), distribution) if n > 0 else np.inf
                         for n in counts])
    if threshold == "union":
        return np.array([math.log(k * n * (n + 1) / delta) if n > 0 else np.inf for n in counts])
    return np.full(k, math.log((1 + math.log(max(t, 1.0))) / delta))


def reference_d_tracking(counts, cost):
    """GK 2016 §3.1's D-tracking with w* proportional to 1 / c_i (shared evenly by the arms of cost 0, the limit):
    the arms it may pull, those of the least count in U_t, else those within rounding (1e-9 relative) of the
    largest ``t w*_i - N_i`` (arms of mirrored means, 0.35 and 0.65, have costs equal up to rounding)."""
    counts = np.asarray(counts, np.float64)
    t, k = counts.sum(), len(counts)
    forced = counts < math.sqrt(t) - k / 2
    if forced.any():
        return np.flatnonzero(forced & (counts == counts[forced].min()))
    zero = cost == 0
    w = zero / zero.sum() if zero.any() else (1 / cost) / np.sum(1 / cost)
    value = t * w - counts
    return np.flatnonzero(value >= value.max() - 1e-9 * max(1.0, abs(value.max())))


# ------------------------------------------------------------------------------------ the thresholds
@pytest.mark.parametrize("distribution", ["bernoulli", "gaussian"])
def test_each_threshold_is_its_formula(distribution: str) -> None:
    family = float(_glr.DISTRIBUTIONS.index(distribution))
    for k, delta in ((2, 0.1), (10, 0.01), (7, 1e-6)):
        for n in (1.0, 2.0, 17.0, 1e4):
            t = 3.0 * n + 5.0
            assert _glr.boundary(n, t, k, delta, _glr.MIXTURE, family) == pytest.approx(
                mixture_boundary([n], math.log(k / delta), distribution), rel=1e-13)
            assert _glr.boundary(n, t, k, delta, _glr.UNION, family) == pytest.approx(
                math.log(k * n * (n + 1) / delta), rel=1e-13)
            assert _glr.boundary(n, t, k, delta, _glr.HEURISTIC, family) == pytest.approx(
                math.log((1 + math.log(t)) / delta), rel=1e-13)
    # Bernoulli, by hand: ln(K / delta) + ln(N) / 2 + ln 2 (Krichevsky-Trofimov), and the union is looser from N = 2
    by_hand = math.log(80) + math.log(4) + math.log(2)
    assert _glr.boundary(16.0, 0.0, 4, 0.05, _glr.MIXTURE, 0.0) == pytest.approx(by_hand)
    assert _glr.boundary(2.0, 0.0, 4, 0.05, _glr.UNION, 0.0) > _glr.boundary(2.0, 0.0, 4, 0.05, _glr.MIXTURE, 0.0)


@pytest.mark.parametrize(("distribution", "sigma"), [("bernoulli", 1.0), ("gaussian", 0.3)])
def test_the_compiled_cost_and_side_are_the_reference_statistic(distribution: str, sigma: float) -> None:
    family = float(_glr.DISTRIBUTIONS.index(distribution))
    means = np.r_[0.0, 1.0, np.linspace(0.01, 0.99, 99), 0.5, 0.45, 0.55, 0.9]
    for theta, epsilon in ((0.5, 0.0), (0.5, 0.05), (0.9, 0.05), (0.3, 0.35), (0.5, 0.45)):
        _, above, cost = reference_statistics(np.ones_like(means), means, theta, epsilon, distribution, sigma)
        for m, side, c in zip(means.astype(np.float32).astype(np.float64), above, cost, strict=True):
            got, got_above = _glr.arm_cost(m, float(np.float32(theta)), float(np.float32(epsilon)), family, sigma)
            assert got_above == bool(side), (m, theta, epsilon)
            assert got == pytest.approx(c, rel=1e-12, abs=1e-300) or (np.isinf(got) and np.isinf(c))


# ------------------------------------------------------------------------------------ the stop, by hand
STOP_CASES = [  # counts, sums, theta, epsilon, threshold, delta
    ([40, 40, 40], [4, 35, 32], 0.5, 0.0, "mixture", 0.05),
    ([40, 40, 40], [4, 35, 30], 0.5, 0.0, "mixture", 0.05),  # arm 2 at 0.75: not yet (Z = 5.2 < 6.6)
    ([400, 30, 25], [250, 3, 24], 0.5, 0.0, "union", 0.1),  # arm 0 at 0.625: not yet (Z = 12.6 < 15.4)
    ([400, 30, 25], [250, 3, 24], 0.5, 0.0, "heuristic", 0.1),  # the same arms stop at a lower threshold
    ([1000, 30, 25], [625, 3, 24], 0.5, 0.0, "union", 0.1),
    ([400, 400, 60], [192, 208, 59], 0.5, 0.1, "mixture", 0.05),  # zone arms 0.48 and 0.52: either side
    ([600, 50, 500], [540, 5, 450], 0.9, 0.05, "mixture", 0.1),  # means 0.9 = theta: certified below (asymmetry)
    ([1, 1, 1], [0, 1, 1], 0.3, 0.35, "mixture", 0.05),  # "above" is never wrong: every arm certified above
]


@pytest.mark.parametrize("case", STOP_CASES)
@pytest.mark.parametrize("rule", RULES)
def test_the_stop_and_the_answer_are_the_hand_computed_statistics_against_their_thresholds(case, rule) -> None:
    counts, sums, theta, epsilon, threshold, delta = case
    statistic, above, _ = reference_statistics(counts, sums, theta, epsilon)
    beta = reference_thresholds(counts, delta, threshold)
    expected_stop = bool(np.all(statistic > beta))
    agent = rule(delta=delta, threshold=threshold, tie_break="index")
    agent.reset(seed=0)
    action = agent.act(make_obs(counts, sums, theta, epsilon))
    assert (action[0] == len(counts)) == expected_stop, (statistic, beta)
    np.testing.assert_array_equal(action[1:], above)
    batch = {key: np.repeat(value[None], 3, axis=0) for key, value in make_obs(counts, sums, theta, epsilon).items()}
    agent.reset(seed=0)
    actions = agent.act(batch)  # a batch of three copies: the same decision in each
    assert (actions[:, 0] == len(counts)).tolist() == [expected_stop] * 3
    np.testing.assert_array_equal(actions[:, 1:], np.repeat(above[None], 3, axis=0))


def test_the_hand_cases_stop_where_the_numbers_say() -> None:
    """The cases above are not all trivial: some stop, some do not (so the test above compares both outcomes)."""
    outcomes = []
    for counts, sums, theta, epsilon, threshold, delta in STOP_CASES:
        statistic, _, _ = reference_statistics(counts, sums, theta, epsilon)
        outcomes.append(bool(np.all(statistic > reference_thresholds(counts, delta, threshold))))
    assert outcomes == [True, False, False, True, True, True, True, True]
    # the empirical answer 1{m_i >= theta} would answer the arms at theta = 0.9 above, and not stop yet
    counts, sums, theta, epsilon, _, delta = STOP_CASES[6]
    assert reference_statistics(counts, sums, theta, epsilon)[1].tolist() == [0, 0, 0]
    above = 600 * float(divergence("bernoulli")(0.9, 0.85))
    assert above < reference_thresholds(counts, delta, "mixture")[0]


# ------------------------------------------------------------------------------------ the sampling rules
def test_d_tracking_is_the_plain_numpy_rule_step_by_step() -> None:
    """ThresholdingTaS's arm at every step of an episode (ties to the smallest index) is the reference D-tracking
    on the same observation, the initial round and the stop aside; and the compiled step that updates only the arm
    pulled last agrees with one that recomputes every arm."""
    env = gym.make("ThresholdingBandit-v0", means=[0.1, 0.35, 0.45, 0.7, 0.9, 0.56], setting="fixed_confidence",
                   budget=20_000)
    agent, fresh = ThresholdingTaS(delta=0.05, tie_break="index"), ThresholdingTaS(delta=0.05, tie_break="index")
    obs, _ = env.reset(seed=1)
    agent.reset(seed=0)
    checked = ties = 0
    for _ in range(20_000):
        action = agent.act(obs)
        fresh.reset(seed=0)
        np.testing.assert_array_equal(fresh.act(obs), action)  # every arm recomputed (a fresh agent)
        counts = obs["counts"]
        if counts.min() > 0 and action[0] < 6:
            _, above, cost = reference_statistics(counts, obs["sums"], 0.5, 0.0)
            allowed = reference_d_tracking(counts, cost)
            assert action[0] == allowed[0] or (action[0] in allowed and len(allowed) > 1)
            ties += len(allowed) > 1
            np.testing.assert_array_equal(action[1:], above)
            checked += 1
        elif counts.min() == 0:
            assert action[0] == int(np.flatnonzero(counts == 0)[0])  # the initial round, in index order
        obs, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            break
    assert terminated and checked > 500 and ties < checked / 10


def test_racing_pulls_only_the_arms_in_the_race_and_uniform_all() -> None:
    means = [0.05, 0.3, 0.46, 0.8, 0.95]
    for rule, racing in ((ThresholdingRacing, True), (ThresholdingUniform, False)):
        env = gym.make("ThresholdingBandit-v0", means=means, setting="fixed_confidence", budget=50_000)
        agent = rule(delta=0.05, tie_break="index")
        obs, _ = env.reset(seed=2)
        agent.reset(seed=0)
        left, terminated = [], False
        while not terminated:
            action = agent.act(obs)
            statistic, _, _ = reference_statistics(obs["counts"], obs["sums"], 0.5, 0.0)
            certified = statistic > reference_thresholds(obs["counts"], 0.05, "mixture")
            if action[0] < 5 and obs["counts"].min() > 0:
                assert not certified[action[0]] if racing else True
                left.append(int(certified.sum()))
            obs, _, terminated, truncated, _ = env.step(action)
            assert not truncated
        counts = obs["counts"]
        if racing:  # the easy arms left early: the hard one (0.46) took most pulls
            assert counts[2] > 0.8 * counts.sum() and max(left) == 4
        else:  # round robin: the counts differ by at most one
            assert counts.max() - counts.min() <= 1


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("threshold", ["mixture", "union", "heuristic"])
def test_a_seeded_episode_stops_with_the_right_answer(rule, threshold: str) -> None:
    means = [0.15, 0.38, 0.62, 0.85, 0.3]
    env = gym.make("ThresholdingBandit-v0", means=means, setting="fixed_confidence", budget=100_000)
    result = play_episode(env, rule(delta=0.05, threshold=threshold), seed=3)
    assert result["error"] == 0.0 and result["answer"].tolist() == [0, 0, 1, 1, 0]
    assert 5 < result["pulls"] < 100_000  # stopped by the rule, not the cap


@pytest.mark.parametrize("rule", RULES)
def test_gaussian_arms_and_an_indifference_zone(rule) -> None:
    env = gym.make("ThresholdingBandit-v0", means=[-1.0, -0.1, 0.05, 0.8], threshold=0.0, epsilon=0.2,
                   arm_distribution="gaussian", sigma=0.5, setting="fixed_confidence", budget=100_000)
    agent = rule(delta=0.05, distribution="gaussian", sigma=0.5)
    agent.check_env(env)
    result = play_episode(env, agent, seed=4)
    assert result["error"] == 0.0 and result["answer"][[0, 3]].tolist() == [0, 1]  # arms 1 and 2: either side
    with pytest.raises(ValueError, match=r"sigma=1\.0"):
        rule(distribution="gaussian").check_env(env)
    with pytest.raises(ValueError, match="reads Bernoulli arms"):
        rule().check_env(env)


@pytest.mark.parametrize("rule", RULES)
def test_a_fixed_budget_env_is_played_with_its_budget_as_the_cap(rule) -> None:
    """The observation does not tell the settings apart: on a fixed-budget env the rule stops early when confident
    (the env scores the stop) and otherwise answers at the budget."""
    easy = gym.make("ThresholdingBandit-v0", means=[0.05, 0.95, 0.1], budget=5000)
    result = play_episode(easy, rule(delta=0.05), seed=0)
    assert result["pulls"] < 5000 and result["error"] == 0.0
    hard = gym.make("ThresholdingBandit-v0", means=[0.49, 0.51], budget=50)
    assert play_episode(hard, rule(delta=0.05), seed=0)["pulls"] == 50


@pytest.mark.parametrize("rule", RULES)
def test_bad_arguments_are_named(rule) -> None:
    for kwargs, match in (({"delta": 1.5}, r"delta=1.5 is outside"), ({"threshold": "gk2016"}, "threshold='gk2016'"),
                          ({"distribution": "poisson"}, "distribution='poisson'"), ({"sigma": 0.0}, "sigma=0.0")):
        with pytest.raises(ValueError, match=match):
            rule(**kwargs)
    with pytest.raises(ValueError, match="rewards are not Bernoulli"):
        rule().act(make_obs([2, 2], [3, -1]))


def test_the_vector_env_restarts_the_rules_of_stopped_copies() -> None:
    """Copies stop at different times and are autoreset; each restarts with a fresh state (the first episode's
    answers are right, and a second episode in every copy is right too)."""
    venv = gym.make_vec("ThresholdingBandit-v0", num_envs=16, vectorization_mode="vector_entry_point",
                        means=[0.1, 0.42, 0.7], setting="fixed_confidence", budget=20_000)
    for rule in RULES:
        first = play_vector(venv, rule(delta=0.05), seed=5)
        assert (first["error"] == 0).all() and len(set(first["pulls"].tolist())) > 4


# ------------------------------------------------------------------------------------ slow: w* and delta
@pytest.mark.slow
def test_the_tracking_converges_to_the_optimal_allocation() -> None:
    """After 40,000 pulls (delta = 1e-100 keeps every copy sampling: it would stop near T* ln(K / delta) = 56,000)
    the proportions N_i / t of 40 copies are w*(mu) within 0.01 on average, where uniform sampling would give 0.2
    each, and each copy's distance to w* has shrunk since 2,500 pulls (its median by more than half)."""
    means, copies, cap = [0.1, 0.35, 0.45, 0.7, 0.9], 40, 40_000
    target = thresholding_allocation(means, 0.5).weights
    venv = gym.make_vec("ThresholdingBandit-v0", num_envs=copies, vectorization_mode="vector_entry_point",
                        means=means, setting="fixed_confidence", budget=cap)
    agent = ThresholdingTaS(delta=1e-100)
    agent.reset(seed=0)
    obs, _ = venv.reset(seed=0)
    distance = {}
    for t in range(1, cap + 1):
        obs, *_ = venv.step(agent.act(obs))
        if t in (2_500, cap):
            proportions = obs["counts"] / obs["counts"].sum(axis=1, keepdims=True)
            distance[t] = np.abs(proportions - target).max(axis=1)
    assert (obs["counts"].sum(axis=1) == cap).all()
    np.testing.assert_allclose(proportions.mean(axis=0), target, atol=0.01)
    assert np.median(distance[cap]) < 0.5 * np.median(distance[2_500]) and distance[cap].max() < 0.06
    assert target.max() > 0.8  # the hard arm 0.45 takes most: far from uniform


HARD = [0.4, 0.45, 0.55, 0.6]
"""A hard instance: T*(mu) = 500 (Bernoulli, theta = 0.5); delta = 0.2 keeps the runs short."""


@pytest.mark.slow
@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("threshold", PROVED)
def test_the_proved_thresholds_err_at_most_delta(rule, threshold: str) -> None:
    """2000 runs at delta = 0.2 on a hard instance: the exact (Clopper-Pearson) 99.9% interval of the error rate
    reaches below delta, and the mean number of pulls is at least the lower bound T*(mu) kl(delta, 1 - delta),
    which no delta-correct rule beats (a stop too eager would break one of the two)."""
    delta, runs = 0.2, 2000
    venv = gym.make_vec("ThresholdingBandit-v0", num_envs=runs, vectorization_mode="vector_entry_point",
                        means=HARD, setting="fixed_confidence", budget=1_000_000, copy=False)
    result = play_vector(venv, rule(delta=delta, threshold=threshold), seed=11)
    errors = int(result["error"].sum())
    interval = stats.binomtest(errors, runs).proportion_ci(confidence_level=0.999, method="exact")
    assert interval.low <= delta, (errors, runs)
    bound = thresholding_allocation(HARD, 0.5).lower_bound(delta)
    pulls = result["pulls"].astype(float)
    assert pulls.mean() + 3.3 * pulls.std(ddof=1) / math.sqrt(runs) >= bound, (pulls.mean(), bound)
