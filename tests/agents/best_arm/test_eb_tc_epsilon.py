"""EB-TC epsilon (Jourdan, Degenne and Kaufmann 2023): the TC epsilon challenger and the per-pair tracking against a
plain-Python statement of the rule, on hand-made statistics and in lockstep over whole episodes; the compiled shifted
cost against a scalar minimisation; seeded fixed-confidence runs with several epsilon-good arms; bad parameters.
(The compiled rule against its own source run by the interpreter: ``tests/agents/test_kernels.py``.)"""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest
from scipy import optimize

from bandit_gym.agents import EBTCEpsilon
from bandit_gym.agents.best_arm import _stopping
from bandit_gym.agents.best_arm._stopping import shifted_cost as slack_cost
from bandit_gym.divergences import divergence
from bandit_gym.rollout import play_episode, play_vector
from tests.agents.best_arm.test_fixed_confidence import decide


def tc_ratio(counts, means, leader, j, slack):
    """The paper's TC epsilon statistic ``(mu_B - mu_j + epsilon_0) / sqrt(1 / N_B + 1 / N_j)``."""
    return (means[leader] - means[j] + slack) / math.sqrt(1 / counts[leader] + 1 / counts[j])


def kl_cost(counts, means, i, j, slack, distribution="bernoulli", sigma=1.0):
    """``inf_{lambda_j >= lambda_i + slack} N_i d(mu_i, lambda_i) + N_j d(mu_j, lambda_j)`` by a bounded scalar
    minimisation over lambda_i (lambda_j = lambda_i + slack), 0 when arm j already beats arm i by the slack."""
    mu_i, mu_j, n_i, n_j = float(means[i]), float(means[j]), float(counts[i]), float(counts[j])
    if mu_j >= mu_i + slack:
        return 0.0
    d = divergence(distribution, sigma)
    low, high = ((max(mu_j - slack, 0.0), min(mu_i, 1.0 - slack)) if distribution == "bernoulli"
                 else (mu_j - slack, mu_i))

    def cost(x):
        with np.errstate(divide="ignore"):
            return float(n_i * d(mu_i, x) + n_j * d(mu_j, x + slack))

    found = optimize.minimize_scalar(cost, bounds=(low, high), method="bounded", options={"xatol": 1e-14})
    return min(found.fun, cost(high))


def first_least(values):
    """The first index of the least value (the rule's ties: the first in the arms' order)."""
    return int(np.flatnonzero(np.asarray(values) == np.min(values))[0])


class PlainEBTCEpsilon:
    """The sampling rule as the paper's poster states it, in plain Python for one env (arms in index order): each
    arm once; then B = argmax mu, C = argmin_{j != B} of the TC epsilon statistic (the Gaussian ratio, or the
    Bernoulli shifted cost), and C if ``N^B_C <= (1 - beta_bar_{n+1}(B, C)) T_{n+1}(B, C)``, else B."""

    def __init__(self, k, slack, beta=None, distribution="gaussian"):
        self.k, self.slack, self.beta, self.distribution = k, slack, beta, distribution
        self.chosen, self.pulled, self.proportions = {}, {}, {}  # T(i, j), N^i_j, the beta_n(i, j) so far

    def arm(self, counts, sums):
        counts, sums = np.asarray(counts, np.float64), np.asarray(sums, np.float64)
        made = int(counts.sum())
        if made < self.k:
            return made
        means = sums / counts
        leader = first_least(-means)
        others = [j for j in range(self.k) if j != leader]
        if self.distribution == "gaussian":
            stats = [tc_ratio(counts, means, leader, j, self.slack) for j in others]
        else:
            stats = [kl_cost(counts, means, leader, j, self.slack) for j in others]
        challenger = others[first_least(stats)]
        pair = (leader, challenger)
        share = self.beta if self.beta is not None else counts[challenger] / (counts[leader] + counts[challenger])
        self.chosen[pair] = self.chosen.get(pair, 0) + 1
        self.proportions.setdefault(pair, []).append(share)
        beta_bar = float(np.mean(self.proportions[pair]))
        if self.pulled.get(pair, 0) <= (1 - beta_bar) * self.chosen[pair]:
            self.pulled[pair] = self.pulled.get(pair, 0) + 1
            return challenger
        return leader


# ------------------------------------------------------------------------------------------ the challenger
#: leader 0 (mean 0.8, 2,000 pulls); arm 1 close and well pulled, arm 2 far and pulled 20 times, arm 3 far and well
#: pulled: without a slack the challenger is arm 1, with epsilon_0 = 0.1 arm 2
COUNTS, MEANS = np.array([2000, 1000, 20, 2000]), np.array([0.8, 0.78, 0.6, 0.3])


@pytest.mark.parametrize(("slack", "expected"), [(0.1, 2), (0.001, 1)])
def test_the_gaussian_challenger_is_the_papers_tc_epsilon_ratio(slack, expected):
    sigma = 0.5
    ratios = [tc_ratio(COUNTS, MEANS, 0, j, slack) for j in (1, 2, 3)]
    assert (1, 2, 3)[int(np.argmin(ratios))] == expected
    agent = EBTCEpsilon(epsilon_0=slack, distribution="gaussian", sigma=sigma, tie_break="index")
    action = decide(agent, COUNTS, COUNTS * MEANS)
    assert int(action[0]) == expected  # a pair's first choice pulls the challenger: N^B_C = 0 <= (1 - beta) 1
    assert action[1:].tolist() == [1, 0, 0, 0]  # the answer: the empirical best arm


@pytest.mark.parametrize(("slack", "expected"), [(0.1, 2), (0.001, 1)])
def test_the_bernoulli_challenger_minimises_the_shifted_transportation_cost(slack, expected):
    costs = [kl_cost(COUNTS, MEANS, 0, j, slack) for j in (1, 2, 3)]
    assert (1, 2, 3)[int(np.argmin(costs))] == expected
    action = decide(EBTCEpsilon(epsilon_0=slack, tie_break="index"), COUNTS, COUNTS * MEANS)
    assert int(action[0]) == expected


def test_the_compiled_shifted_cost_is_the_scalar_minimisation():
    """Bernoulli (the bisection) and Gaussian (the closed form), over means with 0 and 1, ties, single pulls and a
    leader above 1 - epsilon_0; 0 where arm j beats arm i by the slack."""
    rng = np.random.default_rng(0)
    grid = [0.0, 0.02, 0.3, 0.5, 0.55, 0.93, 1.0]
    for mu_i in grid:
        for mu_j in grid:
            for slack in (0.05, 0.1, 0.4):
                counts = np.array([float(rng.integers(1, 60)), float(rng.integers(1, 60))])
                means = np.array([mu_i, mu_j])
                for family, distribution, sigma in ((0.0, "bernoulli", 1.0), (1.0, "gaussian", 0.7)):
                    found = slack_cost(counts, means, 0, 1, slack, family, sigma)
                    assert found == pytest.approx(kl_cost(counts, means, 0, 1, slack, distribution, sigma),
                                                  rel=1e-8, abs=1e-12)


# ------------------------------------------------------------------------------------------ the tracking
def with_pull(counts, sums, arm, reward):
    counts, sums = np.array(counts, float), np.array(sums, float)
    counts[arm] += 1
    sums[arm] += reward
    return counts, sums


@pytest.mark.parametrize(("proportions", "beta", "pattern"), [
    ("fixed", 0.5, "CCLCLCLC"),   # N^B_C <= (1 - beta) T after T += 1: 0 <= .5, 1 <= 1, 2 > 1.5, 2 <= 2, ...
    ("fixed", 0.25, "CCCCLCCC"),  # 0 <= .75, 1 <= 1.5, 2 <= 2.25, 3 <= 3, 4 > 3.75, 4 <= 4.5, ...
    ("fixed", 0.75, "CLLCLLLC"),  # 0 <= .25, 1 > .5, 1 > .75, 1 <= 1, 2 > 1.25, 2 > 1.5, 2 > 1.75, 2 <= 2
    ("ids", 0.5, None),           # beta_n = N_C / (N_B + N_C): 400 / 800 at first, then the challenger's share grows
])
def test_the_pair_is_tracked_to_its_mean_proportion(proportions, beta, pattern):
    # means 0.52, 0.5, 0.45, 0.4 after 400 pulls each (far from a stop): leader 0, challenger 1 at every step
    counts, sums = np.full(4, 400.0), np.array([208.0, 200.0, 180.0, 160.0])
    plain = PlainEBTCEpsilon(4, 0.1, beta if proportions == "fixed" else None)
    steps, expected = [(counts, sums)], []
    for _ in range(8):
        n, x = steps[-1]
        arm = plain.arm(n, x)
        expected.append("L" if arm == 0 else "C" if arm == 1 else "?")
        steps.append(with_pull(n, x, arm, x[arm] / n[arm]))  # the pulled arm's mean kept
    if pattern is not None:
        assert "".join(expected) == pattern
    else:
        assert set(expected) == {"L", "C"}
    agent = EBTCEpsilon(epsilon_0=0.1, proportions=proportions, beta=beta, tie_break="index")
    actions = decide(agent, *steps[0], *steps[1:-1])
    assert "".join("L" if int(a[0]) == 0 else "C" if int(a[0]) == 1 else "?" for a in actions) == "".join(expected)


@pytest.mark.parametrize(("distribution", "proportions"), [("gaussian", "ids"), ("gaussian", "fixed"),
                                                           ("bernoulli", "ids"), ("bernoulli", "fixed")])
def test_the_rule_plays_as_the_papers_statement_in_lockstep(distribution, proportions):
    """400 steps of a real episode (the pairs change as the means move), each arm chosen by the agent and by
    ``PlainEBTCEpsilon`` from the same observation (beta = 3/8, exact in binary: the rule's ``T - sum beta_n`` and
    the plain ``(1 - beta_bar) T`` round alike where the tracking's inequality is an equality)."""
    means = [0.6, 0.55, 0.5, 0.45, 0.2]
    kwargs = {"arm_distribution": "gaussian", "sigma": 1.0} if distribution == "gaussian" else {}
    env = gym.make("BestArmIdentification-v0", means=means, setting="fixed_confidence", budget=10_000, **kwargs)
    agent = EBTCEpsilon(epsilon_0=0.05, proportions=proportions, beta=0.375, stopping="lucb", tie_break="index",
                        distribution=distribution)
    plain = PlainEBTCEpsilon(5, 0.05, 0.375 if proportions == "fixed" else None, distribution)
    obs, _ = env.reset(seed=4)
    agent.reset(seed=0)
    pairs = set()
    for _ in range(400):
        action = agent.act(obs)
        arm = plain.arm(obs["counts"], obs["sums"])
        assert int(action[0]) == arm
        pairs |= set(plain.chosen)
        obs, *_ = env.step(action)
    assert len(pairs) >= 2  # more than one pair was tracked


def test_each_pair_is_pulled_its_share_over_an_episode():
    """After every choice of a pair, ``0 <= N^B_C - (1 - beta_bar) T <= 1`` (``T - sum beta_n`` for
    ``(1 - beta_bar) T``), and one pair is chosen at each step after the K initial pulls."""
    env = gym.make("BestArmIdentification-v0", means=[0.6, 0.56, 0.45, 0.3], epsilon=0.05,
                   setting="fixed_confidence", budget=100_000)
    for proportions in ("ids", "fixed"):
        agent = EBTCEpsilon(delta=0.05, epsilon_0=0.05, proportions=proportions, beta=0.3, stopping="kllucb")
        result = play_episode(env, agent, seed=2)
        selected, pulled, shares = (agent.arrays[name][0] for name in ("selected", "pulled", "shares"))
        assert result["error"] == 0.0 and selected.sum() == result["pulls"] - 4
        assert np.count_nonzero(selected) >= 2
        owed = pulled - (selected - shares)
        assert np.all(owed >= -1e-9) and np.all(owed <= 1 + 1e-9)


# ------------------------------------------------------------------------------------------ whole episodes
@pytest.mark.parametrize("stopping", ["lucb", "kllucb"])
def test_it_stops_at_an_epsilon_good_arm_where_several_are(stopping):
    """Means 0.8, 0.75, 0.72 are all 0.15-good: every copy stops, with an epsilon-good answer (no epsilon-error)."""
    means, epsilon, delta = [0.8, 0.75, 0.72, 0.3, 0.2], 0.15, 0.05
    venv = gym.make_vec("BestArmIdentification-v0", num_envs=30, vectorization_mode="vector_entry_point",
                        means=means, epsilon=epsilon, setting="fixed_confidence", budget=200_000)
    result = play_vector(venv, EBTCEpsilon(delta=delta, epsilon_0=epsilon, stopping=stopping), seed=3)
    assert np.all(result["pulls"] < 200_000) and result["error"].sum() == 0


@pytest.mark.skipif(hasattr(_stopping, "check_glr_epsilon"),
                    reason="the GLR stopping component still refuses epsilon > 0 (check_glr_epsilon)")
def test_the_default_glr_stopping_reads_the_envs_epsilon():
    venv = gym.make_vec("BestArmIdentification-v0", num_envs=30, vectorization_mode="vector_entry_point",
                        means=[0.8, 0.75, 0.72, 0.3, 0.2], epsilon=0.15, setting="fixed_confidence", budget=200_000)
    result = play_vector(venv, EBTCEpsilon(delta=0.05, epsilon_0=0.15), seed=5)
    assert np.all(result["pulls"] < 200_000) and result["error"].sum() == 0


def test_the_slack_may_be_the_envs_epsilon():
    env = gym.make("BestArmIdentification-v0", means=[0.6, 0.5, 0.3], epsilon=0.08, setting="fixed_confidence",
                   budget=100_000)
    agent = EBTCEpsilon(epsilon_0=None, stopping="lucb")
    agent.reset(seed=0)
    agent.act(env.reset(seed=0)[0])
    assert agent.constants["slack"][0] == np.float32(0.08)
    exact = gym.make("BestArmIdentification-v0", means=[0.6, 0.5, 0.3], setting="fixed_confidence")
    agent.reset(seed=0)
    with pytest.raises(ValueError, match="epsilon_0"):
        agent.act(exact.reset(seed=0)[0])


# ------------------------------------------------------------------------------------------ parameters
@pytest.mark.parametrize(("kwargs", "message"), [
    ({"delta": 1.0}, "delta"),
    ({"epsilon_0": 0.0}, "epsilon_0"),
    ({"epsilon_0": 1.0}, "epsilon_0"),
    ({"proportions": "random"}, "proportions"),
    ({"beta": 1.0}, "beta"),
    ({"stopping": "lil"}, "lil"),
    ({"distribution": "poisson"}, "distribution"),
])
def test_bad_parameters_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        EBTCEpsilon(**kwargs)


def test_defaults_and_a_top_m_env_refused():
    agent = EBTCEpsilon()
    assert (agent.stopping, agent.epsilon_0, agent.proportions, agent.beta) == ("glr", 0.1, "ids", 0.5)
    assert EBTCEpsilon(epsilon_0=2.0, distribution="gaussian").epsilon_0 == 2.0  # no upper bound on Gaussian arms
    with pytest.raises(ValueError, match="m = 2"):
        top_two = gym.make("BestArmIdentification-v0", m=2, means=[0.6, 0.5, 0.3])
        EBTCEpsilon(stopping="lucb").act(top_two.reset(seed=0)[0])
