"""TTUCB (Jourdan and Degenne 2023): the UCB leader, the TC challenger and the tracking of beta by hand; stopping,
correctness, bad parameters. (The compiled rule against its own source run by the interpreter, over whole
fixed-confidence episodes: ``tests/agents/test_kernels.py``.)"""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest

from bandit_gym.agents import TTUCB
from bandit_gym.rollout import play_episode, play_vector
from tests.agents.best_arm.test_fixed_confidence import MEANS, decide, transportation

#: the default exploration constant alpha (1 + s) of g_u(n) = 2 alpha (1 + s) ln n
ALPHA_ONE_PLUS_S = 1.2 * (1 + 1.2)


def ucb_indices(counts, sums, sigma):
    """mu_a + sqrt(2 sigma^2 alpha (1 + s) ln n / N_a), n = the pulls made + 1 (the decision's time)."""
    counts, sums = np.asarray(counts, float), np.asarray(sums, float)
    n = counts.sum() + 1
    return sums / counts + np.sqrt(2 * sigma**2 * ALPHA_ONE_PLUS_S * math.log(n) / counts)


def tc_ratio(counts, means, leader, j, sigma):
    """The paper's TC challenger's statistic (mu_B - mu_j)_+ / sqrt(sigma^2 (1 / N_B + 1 / N_j))."""
    return max(means[leader] - means[j], 0.0) / math.sqrt(sigma**2 * (1 / counts[leader] + 1 / counts[j]))


def with_pull(counts, sums, arm, reward):
    counts, sums = list(counts), list(sums)
    counts[arm] += 1
    sums[arm] += reward
    return counts, sums


# ------------------------------------------------------------------------------------------ first decisions
def test_the_leader_is_the_largest_ucb_index_and_the_challenger_the_least_transportation_cost():
    # means 0.7, 0.5, 0.4, 0.3 after 20, 4, 10, 10 pulls: the UCB leader is arm 1 (few pulls), not the empirical
    # best arm 0; arm 0's mean exceeds the leader's, so W(1, 0) = 0: the challenger is arm 0 (EB-TCI's would be 2)
    steps = [([20, 4, 10, 10], [14, 2, 4, 3])]
    steps.append(with_pull(*steps[-1], 1, 1))  # the leader pulled, reward 1
    steps.append(with_pull(*steps[-1], 1, 1))
    for counts, sums in steps:
        assert int(np.argmax(ucb_indices(counts, sums, 0.5))) == 1
    counts, sums = np.array(steps[-1][0], float), np.array(steps[-1][1], float)
    means = sums / counts
    assert int(np.argmax(means)) == 0
    costs = [transportation(counts, means, 1, j) for j in (0, 2, 3)]
    assert costs[0] == 0.0 and min(costs[1:]) > 0.0
    improved = [cost + math.log(counts[j]) for cost, j in zip(costs, (0, 2, 3), strict=True)]
    assert (0, 2, 3)[int(np.argmin(improved))] == 2  # EB-TCI's challenger would be arm 2
    actions = decide(TTUCB(tie_break="index"), *steps[0], *steps[1:])
    # led 1, 2, 3 times, pulled 0, 1, 2 times while leading: 0 <= 1/2, 1 <= 1, 2 > 3/2
    assert [int(a[0]) for a in actions] == [1, 1, 0]
    assert [a[1:].tolist() for a in actions] == [[1, 0, 0, 0]] * 3  # the answer: the empirical best arm


@pytest.mark.parametrize(("counts", "means", "closest"), [
    # the TC challenger is arm 1; TCI's (+ ln N_j) would be arm 2, pulled 10 times less
    ([2000, 1000, 100, 2000], [0.8, 0.7, 0.525, 0.3], 1),
    # the TC challenger is arm 2, although arm 1's mean is closer to the leader's: arm 1 was pulled 10 times more
    ([2000, 1000, 100, 2000], [0.8, 0.69, 0.525, 0.3], 1),
])
def test_gaussian_arms_challenger_is_the_paper_s_tc_ratio(counts, means, closest):
    sigma = 0.5
    counts, means = np.array(counts, float), np.array(means)
    steps = [(counts.tolist(), (counts * means).tolist())]
    steps.append(with_pull(*steps[-1], 0, 0.8))  # the leader pulled, its mean kept
    steps.append(with_pull(*steps[-1], 0, 0.8))
    for n, x in steps:
        assert int(np.argmax(ucb_indices(n, x, sigma))) == 0  # the leader: arm 0, the empirical best
    n = np.array(steps[-1][0], float)
    ratios = [tc_ratio(n, means, 0, j, sigma) for j in (1, 2, 3)]
    want = int(np.argmin(ratios)) + 1
    improved = [r * r / 2 + math.log(n[j]) for r, j in zip(ratios, (1, 2, 3), strict=True)]
    gaps = means[0] - means[1:]
    assert want != int(np.argmin(improved)) + 1 or want != int(np.argmin(gaps)) + 1  # not TCI's, or not the gap's
    assert int(np.argmin(gaps)) + 1 == closest
    agent = TTUCB(distribution="gaussian", sigma=sigma, tie_break="index")
    actions = decide(agent, *steps[0], *steps[1:])
    assert [int(a[0]) for a in actions] == [0, 0, want]


@pytest.mark.parametrize(("beta", "pattern"), [
    (0.5, "LLCLCLCL"),
    (0.25, "LCCLCCCL"),  # N <= beta L after L += 1: 0 <= .25, 1 > .5, 1 > .75, 1 <= 1, 2 > 1.25, ...
    (0.75, "LLLLCLLL"),  # 0 <= .75, 1 <= 1.5, 2 <= 2.25, 3 <= 3, 4 > 3.75, 4 <= 4.5, ...
])
def test_the_leader_is_pulled_a_beta_share_of_the_steps_it_leads(beta, pattern):
    # means 0.52, 0.5, 0.45, 0.4 (far from a stop): leader 0, challenger 1
    counts, sums = [400, 400, 400, 400], [208, 200, 180, 160]
    steps, pulled = [(counts, sums)], 0
    expected = []
    for led in range(1, len(pattern) + 1):  # L_0 after this step's lead
        n, x = steps[-1]
        assert int(np.argmax(ucb_indices(n, x, 0.5))) == 0
        arm = 0 if pulled <= beta * led else 1
        pulled += arm == 0
        expected.append("L" if arm == 0 else "C")
        steps.append(with_pull(n, x, arm, x[arm] / n[arm]))  # the pulled arm's mean kept
    assert "".join(expected) == pattern
    actions = decide(TTUCB(beta=beta, tie_break="index"), *steps[0], *steps[1:-1])
    assert "".join("L" if int(a[0]) == 0 else "C" for a in actions) == pattern


def test_a_repeated_observation_gets_the_same_arm_and_counts_once():
    counts, sums = [400, 400, 400, 400], [208, 200, 180, 160]
    actions = decide(TTUCB(tie_break="index"), counts, sums, (counts, sums), with_pull(counts, sums, 0, 0.52))
    # the second act repeats the first (L_0 stays 1); the third is arm 0's second lead: N = 1 <= 1. Had the repeat
    # counted as a lead, the third would be its third lead (N = 2 > 3/2): the challenger
    assert [int(a[0]) for a in actions] == [0, 0, 0]


# ------------------------------------------------------------------------------------------ whole episodes
def test_it_stops_and_answers_the_best_arm_on_an_easy_instance():
    venv = gym.make_vec("BestArmIdentification-v0", num_envs=20, vectorization_mode="vector_entry_point",
                        means=[0.7, 0.4, 0.3], setting="fixed_confidence", budget=100_000)
    result = play_vector(venv, TTUCB(delta=0.05), seed=1)
    assert np.all(result["pulls"] < 100_000) and np.all(result["pulls"] > 3)
    assert result["error"].sum() == 0


def test_each_leader_is_pulled_a_beta_share_of_its_steps_over_an_episode():
    env = gym.make("BestArmIdentification-v0", means=[0.6, 0.5, 0.45, 0.3], setting="fixed_confidence",
                   budget=100_000)
    for beta in (0.5, 0.3):
        agent = TTUCB(delta=0.05, beta=beta)
        result = play_episode(env, agent, seed=2)
        led, pulled = agent.arrays["led"][0], agent.arrays["pulled_leading"][0]
        assert result["error"] == 0.0 and led.sum() == result["pulls"] - 4  # one leader a step after the K pulls
        assert np.all(beta * led <= pulled) and np.all(pulled <= beta * led + 1)


def test_gaussian_arms_stop_with_the_best_arm():
    env = gym.make("BestArmIdentification-v0", means=[0.5, 0.0, -0.2], arm_distribution="gaussian", sigma=1.0,
                   setting="fixed_confidence", budget=100_000)
    result = play_episode(env, TTUCB(delta=0.05, distribution="gaussian", sigma=1.0), seed=0)
    assert result["pulls"] < 100_000 and result["error"] == 0.0


# ------------------------------------------------------------------------------------------ parameters
@pytest.mark.parametrize(("kwargs", "message"), [
    ({"delta": 1.0}, "delta"),
    ({"delta": 0.0}, "delta"),
    ({"beta": 0.0}, "beta"),
    ({"beta": 1.0}, "beta"),
    ({"alpha": 0.0}, "alpha"),
    ({"s": -1.0}, "s="),
    ({"stopping": "lil"}, "lil'UCB's own rule"),
    ({"distribution": "gaussian", "threshold": "gk2016"}, "Bernoulli arms only"),
])
def test_bad_parameters_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        TTUCB(**kwargs)


def test_it_identifies_the_best_arm_only():
    with pytest.raises(ValueError, match="m = 2"):
        TTUCB().act(gym.make("BestArmIdentification-v0", means=MEANS, m=2).reset(seed=0)[0])
    TTUCB().act(gym.make("BestArmIdentification-v0", means=MEANS, epsilon=0.1).reset(seed=0)[0])  # GLR reads epsilon


def test_the_bernoulli_bonus_is_the_sub_gaussian_one_at_sigma_one_half():
    agent = TTUCB(alpha=1.5, s=2.0)
    decide(agent, [5, 5, 5, 5], [4, 3, 1, 2])
    assert agent.constants["rate"][0] == pytest.approx(2 * 0.25 * 1.5 * 3.0)
    gaussian = TTUCB(alpha=1.5, s=2.0, distribution="gaussian", sigma=2.0)
    decide(gaussian, [5, 5, 5, 5], [4, 3, 1, 2])
    assert gaussian.constants["rate"][0] == pytest.approx(2 * 4.0 * 1.5 * 3.0)
