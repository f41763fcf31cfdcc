"""Track-and-Stop for top-m identification (m > 1): its decisions computed by hand from ``top_m_allocation``, whole
episodes on the best-arm env with m = 2 and on the top-K env, and (slow) its error rate and stopping time against
the lower bound."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest
from scipy import stats

from bandit_gym.agents import TrackAndStop
from bandit_gym.lower_bounds import best_arm_allocation, lower_bound, top_m_allocation
from bandit_gym.rollout import play_episode, play_vector

MEANS = [0.6, 0.5, 0.4, 0.3, 0.2]


def decide(agent, counts, sums, m=2):
    """The agent's action on an observation with the given statistics, after the first observation of an episode
    of answer size m and budget 100,000."""
    env = gym.make("BestArmIdentification-v0", means=MEANS, m=m, setting="fixed_confidence", budget=100_000)
    first, _ = env.reset(seed=0)
    agent.reset(seed=0)
    agent.act(first)
    counts, sums = np.asarray(counts, np.float32), np.asarray(sums, np.float32)
    obs = {**first, "counts": counts, "sums": sums, "means": sums / counts,
           "budget_left": np.array([100_000 - int(counts.sum())], np.float32)}
    return agent.act(obs).copy()


def test_d_tracking_pulls_the_arm_furthest_behind_t_times_the_top_m_allocation():
    counts, sums = np.array([10, 10, 20, 30, 30]), np.array([6, 5, 8, 9, 6])  # t = 100: sqrt(t) - 5/2 = 7.5
    w = top_m_allocation(sums / counts, 2).weights
    behind = 100 * w - counts
    want = int(np.argmax(behind))
    assert np.sort(behind)[-1] - np.sort(behind)[-2] > 1.0  # a clear argmax
    assert int(np.argmax(w)) != want  # not the arm of largest weight: the tracking decides
    action = decide(TrackAndStop(tie_break="index"), counts, sums)
    assert action[0] == want and action[1:].tolist() == [1, 1, 0, 0, 0]
    # with m = 1 the best-arm allocation pulls another arm: the agent reads m from the observation
    best = int(np.argmax(100 * best_arm_allocation(sums / counts).weights - counts))
    assert best != want
    action = decide(TrackAndStop(tie_break="index"), counts, sums, m=1)
    assert action[0] == best and action[1:].tolist() == [1, 0, 0, 0, 0]


def test_c_tracking_pulls_the_arm_furthest_behind_the_cumulated_projected_top_m_allocation():
    counts, sums = np.array([10, 10, 20, 30, 30]), np.array([6, 5, 8, 9, 6])
    w = top_m_allocation(sums / counts, 2).weights
    eps = 0.5 / math.sqrt(25 + 100)
    eta = next(e for e in np.linspace(0, 1, 1_000_001) if np.maximum(w - e, eps).sum() <= 1.0)
    want = int(np.argmax(1.0 + np.maximum(w - eta, eps) - counts))  # the sum starts at one pull per arm
    assert decide(TrackAndStop(tracking="C", tie_break="index"), counts, sums)[0] == want


def test_the_glr_rule_stops_on_the_top_m_pairs():
    """Counts of 3,000 per arm: the least pair statistic (arms 1 and 2, 0.5 against 0.4) is far above the
    threshold with m = 2; with the means of arms 1 and 2 swapped in the statistics the answer follows them."""
    counts = np.full(5, 3000)
    action = decide(TrackAndStop(delta=0.1), counts, counts * np.array(MEANS))
    assert action[0] == 5 and action[1:].tolist() == [1, 1, 0, 0, 0]
    action = decide(TrackAndStop(delta=0.1), counts, counts * np.array([0.6, 0.4, 0.5, 0.3, 0.2]))
    assert action[0] == 5 and action[1:].tolist() == [1, 0, 1, 0, 0]
    # a pair of the answer and its complement 0.01 apart: no stop at these counts
    action = decide(TrackAndStop(delta=0.1), counts, counts * np.array([0.6, 0.41, 0.4, 0.3, 0.2]))
    assert action[0] < 5 and action[1:].tolist() == [1, 1, 0, 0, 0]


@pytest.mark.parametrize("tracking", ["D", "C"])
def test_it_stops_and_answers_the_top_2_of_the_best_arm_env(tracking):
    env = gym.make("BestArmIdentification-v0", means=MEANS, m=2, setting="fixed_confidence", budget=10**6)
    result = play_episode(env, TrackAndStop(delta=0.1, tracking=tracking), seed=0)
    assert result["pulls"] < 10**6 and result["error"] == 0.0
    assert result["answer"].tolist() == [1, 1, 0, 0, 0]


def test_it_stops_and_answers_the_top_k_env_and_gaussian_arms():
    env = gym.make("TopKIdentification-v0", means=[0.7, 0.6, 0.5, 0.4, 0.3, 0.2], k=3, epsilon=0.0,
                   setting="fixed_confidence", budget=10**6, loss="error")
    result = play_episode(env, TrackAndStop(delta=0.1), seed=3)
    assert result["pulls"] < 10**6 and result["error"] == 0.0 and result["answer"].sum() == 3
    venv = gym.make_vec("BestArmIdentification-v0", num_envs=8, vectorization_mode="vector_entry_point",
                        means=[1.0, 0.5, 0.2, 0.0, -0.5], m=3, arm_distribution="gaussian", sigma=0.5,
                        setting="fixed_confidence", budget=10**6)
    results = play_vector(venv, TrackAndStop(delta=0.1, distribution="gaussian", sigma=0.5), seed=3)
    assert np.all(results["pulls"] < 10**6) and np.all(results["error"] == 0.0)


@pytest.mark.slow
@pytest.mark.parametrize(("threshold", "most"), [("mixture", 10.0), ("heuristic", 4.0)])
def test_its_error_rate_is_below_delta_and_its_stopping_time_near_the_lower_bound(threshold, most):
    """delta = 0.1, 300 seeded runs of D-tracking with m = 2 on (0.6, 0.5, 0.4, 0.3, 0.2): the exact (Clopper-
    Pearson) 95% upper bound of the error rate is at most delta, and the mean stopping time lies between the lower
    bound kl(delta, 1 - delta) T* (406 pulls) and ``most`` times it (measured: 6.9 with "mixture", whose
    threshold ln(6 / delta) + ln(N_i N_j) / 2 + 2 ln 2 is about 7 times kl(delta, 1 - delta) at these counts;
    2.2 with "heuristic")."""
    delta, runs = 0.1, 300
    bound = lower_bound(top_m_allocation(MEANS, 2), delta)
    env = gym.make_vec("BestArmIdentification-v0", num_envs=runs, vectorization_mode="vector_entry_point",
                       means=MEANS, m=2, setting="fixed_confidence", budget=10**6)
    result = play_vector(env, TrackAndStop(delta=delta, threshold=threshold), seed=2)
    assert np.all(result["pulls"] < 10**6), "an episode reached the cap"
    errors = int(np.sum(result["error"]))
    assert stats.binomtest(errors, runs).proportion_ci(0.95, method="exact").high <= delta, f"{errors} errors"
    ratio = float(np.mean(result["pulls"])) / bound
    assert 1.0 < ratio < most, f"mean stopping time {ratio:.2f} times the lower bound"
