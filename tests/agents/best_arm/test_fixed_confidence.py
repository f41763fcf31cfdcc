"""Fixed confidence: the stopping-rule components, the compiled optimal allocation, Track-and-Stop's first
decisions computed by hand, and the delta-correctness of every stopping rule that claims it (slow)."""

from __future__ import annotations

import math
import os
import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest
from scipy import optimize, stats

from bandit_gym.agents import EBTCI, KLLUCB, LilUCB, TrackAndStop
from bandit_gym.agents.best_arm import _stop, _stopping
from bandit_gym.agents.best_arm._base import records
from bandit_gym.agents.best_arm._oracle import optimal_weights
from bandit_gym.agents.best_arm.lil_ucb import confidence_delta
from bandit_gym.divergences import kl_bernoulli, pair_statistic
from bandit_gym.lower_bounds import best_arm_allocation
from bandit_gym.rollout import play_vector


# ------------------------------------------------------------------------------------------ components
@pytest.mark.parametrize("distribution", ["bernoulli", "gaussian"])
def test_the_compiled_allocation_is_the_lower_bounds_module_s(distribution):
    rng = np.random.default_rng(0)
    family = _stopping.DISTRIBUTIONS.index(distribution)
    for _ in range(60):
        k = int(rng.integers(2, 25))
        means = rng.uniform(0.05, 0.95, k)
        weights, scratch = np.zeros(k), np.zeros(k)
        optimal_weights(means, family, 0.4, weights, scratch)
        np.testing.assert_allclose(weights, best_arm_allocation(means, distribution, 0.4).weights, rtol=1e-8)


def test_the_compiled_allocation_spreads_over_tied_best_arms_and_clamps_the_edges():
    weights, scratch = np.zeros(4), np.zeros(4)
    optimal_weights(np.array([0.6, 0.2, 0.6, 0.5]), 0.0, 1.0, weights, scratch)
    np.testing.assert_array_equal(weights, [0.5, 0.0, 0.5, 0.0])
    optimal_weights(np.array([1.0, 0.0, 0.5]), 0.0, 1.0, weights[:3], scratch[:3])
    clamped = best_arm_allocation([1 - 1e-9, 1e-9, 0.5]).weights
    np.testing.assert_allclose(weights[:3], clamped, rtol=1e-7)


def test_the_glr_statistic_is_the_least_pairwise_likelihood_ratio():
    # three Bernoulli arms: N = (40, 30, 20), means (0.6, 0.4, 0.5); the answer is arm 0
    counts, means, answer = np.array([40.0, 30.0, 20.0]), np.array([0.6, 0.4, 0.5]), np.array([1, 0, 0])

    def z(i, j):
        return pair_statistic(kl_bernoulli, counts, means, i, j)

    found = _stopping.glr(counts, means, answer, _stopping.BERNOULLI, 1.0)
    assert found == pytest.approx(min(z(0, 1), z(0, 2)), rel=1e-12)
    assert found == pytest.approx(z(0, 2), rel=1e-12)  # the closer, less pulled arm 2 is the challenger
    gaussian = _stopping.glr(counts, means, answer, _stopping.GAUSSIAN, 0.5)
    assert gaussian == pytest.approx(min(40 * 30 / 70 * 0.2**2, 40 * 20 / 60 * 0.1**2) / (2 * 0.25), rel=1e-12)
    assert _stopping.glr(counts, np.array([0.6, 0.6, 0.5]), answer, _stopping.BERNOULLI, 1.0) == 0.0  # a tie
    top_two = _stopping.glr(counts, means, np.array([1, 0, 1]), _stopping.BERNOULLI, 1.0)
    assert top_two == pytest.approx(min(z(0, 1), z(2, 1)), rel=1e-12)


def test_the_thresholds_are_their_formulas():
    constants = np.zeros(1, records(_stopping.fields("glr", "gk2016"), _stopping.CHOICES))
    beta = _stopping.beta
    _stopping.set_constants(constants, np.array([0]), "glr", "gk2016", 0.05, "bernoulli", 1.0, 5, 1, 0.0)
    assert beta(1000.0, 5, 1, constants[0]) == pytest.approx(math.log(2 * 1000 * 4 / 0.05), rel=1e-14)
    _stopping.set_constants(constants, np.array([0]), "glr", "gk2016", 0.05, "bernoulli", 1.0, 5, 2, 0.0)
    assert beta(1000.0, 5, 2, constants[0]) == pytest.approx(math.log(2 * 1000 * 6 / 0.05), rel=1e-14)
    _stopping.set_constants(constants, np.array([0]), "glr", "heuristic", 0.05, "bernoulli", 1.0, 5, 1, 0.0)
    assert beta(1000.0, 5, 1, constants[0]) == pytest.approx(math.log((1 + math.log(1000)) / 0.05), rel=1e-14)
    for distribution, c in (("bernoulli", 2.0), ("gaussian", 1.0)):
        _stopping.set_constants(constants, np.array([0]), "glr", "ls2020", 0.05, distribution, 1.0, 5, 1, 0.0)
        x = constants["offset"][0]
        assert x >= 2 and (x / 2) ** 2 * math.exp(2 - x) == pytest.approx(0.05 / 4, rel=1e-10)
        assert beta(1000.0, 5, 1, constants[0]) == pytest.approx(2 * math.log(c * 1000 * 1001) + x, rel=1e-14)


def test_the_mixture_thresholds_are_one_per_pair():
    constants = np.zeros(1, records(_stopping.fields("glr", "mixture"), _stopping.CHOICES))
    _stopping.set_constants(constants, np.array([0]), "glr", "mixture", 0.05, "bernoulli", 1.0, 3, 1, 0.0)
    assert constants["offset"][0] == pytest.approx(math.log(2 / 0.05), rel=1e-14)
    counts, means, answer = np.array([1600.0, 400.0, 3600.0]), np.array([0.6, 0.4, 0.5]), np.array([1, 0, 0])
    level = constants["offset"][0]
    z01, z02 = (_stopping.transportation_cost(counts, means, 0, j, _stopping.BERNOULLI, 1.0) for j in (1, 2))
    b01 = level + 0.5 * math.log(1600 * 400) + 2 * math.log(2)
    b02 = level + 0.5 * math.log(1600 * 3600) + 2 * math.log(2)
    assert z01 > b01 and z02 > b02  # every pair passes its own threshold: stop
    assert _stop.stopped(counts, means, answer, 5600, 1, 0.0, constants[0])
    counts[2] = 200.0  # the pair (0, 2) now falls below its threshold
    z02 = _stopping.transportation_cost(counts, means, 0, 2, _stopping.BERNOULLI, 1.0)
    assert z02 < level + 0.5 * math.log(1600 * 200) + 2 * math.log(2)
    assert not _stop.stopped(counts, means, answer, 2200, 1, 0.0, constants[0])
    # never above gk2016's ln(2 t P / delta) on Bernoulli arms: ln(N_i N_j) / 2 + 2 ln 2 <= ln(2 t) when N_i + N_j <= t
    assert _stopping.beta(1000.0, 3, 1, constants[0]) == pytest.approx(math.log(2 * 1000 * 2 / 0.05), rel=1e-12)


def test_the_glr_rule_reads_epsilon():
    """With epsilon = 0.1 an arm 0.05 below the leader no longer keeps the rule from stopping."""
    constants = np.zeros(1, records(_stopping.fields("glr", "gk2016"), _stopping.CHOICES))
    _stopping.set_constants(constants, np.array([0]), "glr", "gk2016", 0.05, "bernoulli", 1.0, 3, 1, 0.1)
    counts, means, answer = np.array([3000.0, 3000.0, 3000.0]), np.array([0.6, 0.55, 0.2]), np.array([1, 0, 0])
    assert not _stop.stopped(counts, means, answer, 9000, 1, 0.0, constants[0])
    assert _stop.stopped(counts, means, answer, 9000, 1, 0.1, constants[0])


def test_a_record_names_its_kind_by_one_field_and_the_constants_must_be_of_that_kind():
    """The kind of stopping rule is the constants record's type (``_stop.kind``): one field ``stops_by_<kind>``;
    a record without one, with two or with an unknown kind is refused, and so is writing one kind's constants into
    a record of another."""
    def record(*names: str) -> np.ndarray:
        return np.zeros(1, records(names, tuple(c for c in _stopping.CHOICES if c in names)))

    assert _stop.kind(record(*_stopping.fields("glr", "heuristic"))[0]) == _stop.GLR
    assert _stop.kind(record(*_stopping.fields("glr", "mixture"))[0]) == _stop.GLR_MIXTURE
    assert _stop.kind(record(*_stopping.fields("own", "gk2016"), "b")[0]) == _stop.OWN
    for names in (_stopping.FIELDS, (*_stopping.fields("lucb", "gk2016"), "stops_by_glr"),
                  (*_stopping.FIELDS, "stops_by_chernoff")):
        with pytest.raises(TypeError, match="names its kind by one field stops_by_<kind>"):
            _stop.kind(record(*names)[0])
    with pytest.raises(TypeError, match="not one of stopping='glr', threshold='mixture'"):
        _stopping.set_constants(record(*_stopping.fields("glr", "gk2016")), np.array([0]), "glr", "mixture", 0.05,
                                "bernoulli", 1.0, 3, 1, 0.0)


@pytest.mark.slow  # a fresh process compiling two rules
def test_a_rule_is_compiled_with_its_own_stopping_kind_alone(tmp_path) -> None:
    """An agent's compiled step holds the stopping rule of its kind, not the others: LUCB1 with its own rule
    compiles none of the components, EB-TCI with the GLR rule none of the LUCB, KL-LUCB or mixture tests."""
    probe = """
import sys, warnings
warnings.simplefilter("ignore")
from numba.core import event
import gymnasium as gym
from bandit_gym.agents import EBTCI, LUCB
compiled = []
class Names(event.Listener):
    def on_start(self, ev):
        function = getattr(ev.data["dispatcher"], "py_func", None)
        compiled.append(getattr(function, "__qualname__", ""))
    def on_end(self, ev):
        pass
event.register("numba:compile", Names())
for agent in (LUCB(delta=0.1), EBTCI(delta=0.1)):
    compiled.clear()
    env = gym.make_vec("BestArmIdentification-v0", num_envs=2, vectorization_mode="vector_entry_point")
    obs, _ = env.reset(seed=0)
    agent.reset(seed=0)
    agent.act(obs)
    print(type(agent).__name__, *sorted(set(compiled)))
"""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    names = {line.split()[0]: set(line.split()[1:]) for line in done.stdout.splitlines()}
    components = {"shifted_glr", "mixture_stops", "lucb_gap", "kl_lucb_gap"}
    assert "lucb" in names["LUCB"] and not names["LUCB"] & components
    assert "eb_tci" in names["EBTCI"] and names["EBTCI"] & components == {"shifted_glr"}


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"stopping": "chernoff"}, "stopping"),
    ({"threshold": "gk"}, "threshold"),
    ({"distribution": "gaussian", "threshold": "gk2016"}, "Bernoulli arms only"),
    ({"distribution": "poisson"}, "distribution"),
    ({"sigma": 0.0, "distribution": "gaussian"}, "sigma"),
    ({"tracking": "E"}, "tracking"),
    ({"delta": 1.0}, "delta"),
])
def test_bad_parameters_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        TrackAndStop(**kwargs)


def test_the_agent_refuses_arms_of_another_family():
    agent = TrackAndStop()
    with pytest.raises(ValueError, match="Bernoulli arms"):
        agent.check_env(gym.make("CorrelatedBestArm-v0"))
    with pytest.raises(ValueError, match="sigma"):
        TrackAndStop(distribution="gaussian", sigma=1.0).check_env(gym.make("CorrelatedBestArm-v0"))
    env = gym.make("BestArmIdentification-v0", means=[-0.5, 0.2, 0.1], arm_distribution="gaussian", budget=50)
    obs, _ = env.reset(seed=0)
    agent.reset(seed=0)
    with pytest.raises(ValueError, match="not Bernoulli"):
        for _ in range(10):
            obs, *_ = env.step(agent.act(obs))
    TrackAndStop().act(gym.make("BestArmIdentification-v0", epsilon=0.1).reset(seed=0)[0])  # the GLR reads epsilon


# ------------------------------------------------------------------------------------------ first decisions
MEANS = np.array([0.5, 0.45, 0.43, 0.4])


def decide(agent, counts, sums, *later):
    """The agent's action on an observation with the given statistics, after the first observation of an
    episode of budget 10,000 (the agent counts pulls from that budget); with ``later`` (pairs of counts and sums),
    the actions on those observations too, in order."""
    env = gym.make("BestArmIdentification-v0", means=MEANS, setting="fixed_confidence", budget=10_000)
    first, _ = env.reset(seed=0)
    agent.reset(seed=0)
    agent.act(first)
    actions = []
    for n, x in ((counts, sums), *later):
        obs = {**first, "counts": np.asarray(n, np.float32), "sums": np.asarray(x, np.float32),
               "means": np.asarray(x, np.float32) / np.asarray(n, np.float32),
               "budget_left": np.array([10_000 - int(np.sum(n))], np.float32)}
        actions.append(agent.act(obs).copy())
    return actions[0] if not later else actions


def transportation(counts, means, i, j):
    return pair_statistic(kl_bernoulli, counts, means, i, j)


def test_eb_tci_pulls_the_leader_for_a_beta_share_of_the_steps_it_leads_then_the_tci_challenger():
    # means 0.8, 0.6, 0.2, 0.4 after five pulls each: leader 0; the challenger minimises W(0, j) + ln N_j (N_j = 5)
    counts, sums = np.array([5, 5, 5, 5]), np.array([4, 3, 1, 2])
    costs = [transportation(counts, sums / counts, 0, j) + math.log(5) for j in (1, 2, 3)]
    assert int(np.argmin(costs)) + 1 == 1
    actions = decide(EBTCI(tie_break="index"), counts, sums, ([6, 5, 5, 5], [5, 3, 1, 2]), ([7, 5, 5, 5], [6, 3, 1, 2]))
    # led 1, 2, 3 times, pulled 0, 1, 2 times while leading: 0 <= 1/2, 1 <= 1, 2 > 3/2
    assert [int(a[0]) for a in actions] == [0, 0, 1]


def test_eb_tci_s_challenger_pays_ln_n_for_an_arm_pulled_often():
    # arm 1 is closer in W but pulled 200 times; arm 2, pulled 4 times, has the least W + ln N
    counts, sums = np.array([20, 200, 4, 20]), np.array([16, 140, 2, 4])
    means = sums / counts
    plain = [transportation(counts, means, 0, j) for j in (1, 2, 3)]
    improved = [transportation(counts, means, 0, j) + math.log(counts[j]) for j in (1, 2, 3)]
    assert int(np.argmin(plain)) != int(np.argmin(improved))
    want = int(np.argmin(improved)) + 1
    agent = EBTCI(tie_break="index")
    actions = decide(agent, counts, sums, ([21, 200, 4, 20], [17, 140, 2, 4]), ([22, 200, 4, 20], [18, 140, 2, 4]))
    assert int(actions[2][0]) == want


def kl_bounds(mean, n, level):
    upper = 1.0 if n * kl_bernoulli(mean, 1 - 1e-15) <= level else optimize.brentq(
        lambda q: n * kl_bernoulli(mean, q) - level, mean, 1 - 1e-15, xtol=1e-14)
    lower = 0.0 if n * kl_bernoulli(mean, 1e-15) <= level else optimize.brentq(
        lambda q: n * kl_bernoulli(mean, q) - level, 1e-15, mean, xtol=1e-14)
    return lower, upper


def test_kl_lucb_pulls_the_least_certain_top_arm_then_the_most_promising_other_arm():
    counts, sums = np.array([30, 12, 25, 8]), np.array([18, 6, 10, 2])  # t = 75 pulls: round 1 + (75 - 4) // 2
    means, rounds = sums / counts, 1 + (75 - 4) // 2
    inner = math.log(405.5 * 4 * rounds**1.1 / 0.05)
    level = inner + math.log(inner)
    bounds = [kl_bounds(means[a], counts[a], level) for a in range(4)]
    best = int(np.argmax(means))
    low = best  # m = 1: the top set is the empirical best arm alone
    u = max((a for a in range(4) if a != best), key=lambda a: bounds[a][1])
    assert bounds[u][1] - bounds[low][0] > 0  # the intervals overlap: no stop
    actions = decide(KLLUCB(tie_break="index"), counts, sums, ([31, 12, 25, 8], [19, 6, 10, 2]))
    assert [int(a[0]) for a in actions] == [low, u]
    got = _stopping.kl_bound(means[1], 12.0, level, True, _stopping.BERNOULLI, 1.0)
    assert got == pytest.approx(bounds[1][1], abs=1e-12)


def test_kl_lucb_stops_when_its_intervals_separate():
    counts, sums = np.array([2000, 2000, 2000, 2000]), np.array([1600, 1000, 600, 200])
    action = decide(KLLUCB(tie_break="index"), counts, sums)
    assert action[0] == 4 and action[1:].tolist() == [1, 0, 0, 0]


def test_d_tracking_pulls_the_arm_furthest_behind_t_w_star():
    counts, sums = np.array([10, 8, 7, 5]), np.array([6, 3, 3, 2])  # t = 30: sqrt(30) - 2 = 3.48, none below
    w = best_arm_allocation(sums / counts).weights
    want = int(np.argmax(30 * w - counts))
    action = decide(TrackAndStop(tie_break="index"), counts, sums)
    assert action[0] == want and action[1:].tolist() == [1, 0, 0, 0]


def test_d_tracking_forces_exploration_of_the_least_pulled_arm_below_sqrt_t_minus_k_over_2():
    counts, sums = np.array([40, 40, 3, 5]), np.array([20, 18, 1, 2])  # t = 88: sqrt(88) - 2 = 7.38
    assert decide(TrackAndStop(tie_break="index"), counts, sums)[0] == 2
    counts = np.array([41, 41, 3, 3])  # two arms tie at 3: the first in the copy's order (index order here)
    assert decide(TrackAndStop(tie_break="index"), counts, np.array([20, 18, 1, 1]))[0] == 2


def test_c_tracking_pulls_the_arm_furthest_behind_the_cumulated_projected_allocation():
    counts, sums = np.array([10, 8, 7, 5]), np.array([6, 3, 3, 2])
    w = best_arm_allocation(sums / counts).weights
    eps = 0.5 / math.sqrt(16 + 30)
    eta = next(e for e in np.linspace(0, 1, 1_000_001) if np.maximum(w - e, eps).sum() <= 1.0)
    projected = np.maximum(w - eta, eps)
    want = int(np.argmax(1.0 + projected - counts))  # the sum starts at the initial pulls, one per arm
    assert decide(TrackAndStop(tracking="C", tie_break="index"), counts, sums)[0] == want == 3


def test_the_glr_rule_stops_exactly_when_the_statistic_passes_the_threshold():
    # two arms, N = (n, n), means (0.6, 0.4): Z = 2 n kl(0.6, 0.5) against ln(2 t (K - 1) / delta), t = 2 n
    for n, stops in ((240, False), (250, True)):  # Z = 9.66 < beta = 9.86; Z = 10.07 > beta = 9.90
        z = 2 * n * kl_bernoulli(0.6, 0.5)
        beta = math.log(2 * 2 * n / 0.05)
        assert (z > beta) == stops
        env = gym.make("BestArmIdentification-v0", means=[0.6, 0.4], setting="fixed_confidence", budget=10_000)
        obs, _ = env.reset(seed=0)
        agent = TrackAndStop(delta=0.05)
        agent.reset(seed=0)
        agent.act(obs)
        obs = {**obs, "counts": np.array([n, n], np.float32), "sums": np.array([0.6 * n, 0.4 * n], np.float32),
               "budget_left": np.array([10_000 - 2 * n], np.float32)}
        action = agent.act(obs)
        assert (action[0] == 2) == stops and action[1:].tolist() == [1, 0]


def test_lil_ucb_pulls_the_arm_of_largest_lil_index_and_stops_when_one_arm_dominates():
    counts, sums = np.array([30, 12, 25, 8]), np.array([18, 6, 10, 2])
    d = confidence_delta(0.05, 0.01)
    c = 2.01 / 0.01 * (1 / math.log(1.01)) ** 1.01
    assert 4 * math.sqrt(c * d) + 4 * c * d == pytest.approx(0.05, rel=1e-12)  # Theorem 2's bound is delta
    index = [sums[a] / counts[a] + 2 * 1.1 * 0.5 * math.sqrt(2 * 1.01 * math.log(math.log(1.01 * counts[a]) / d)
                                                             / counts[a]) for a in range(4)]
    assert int(decide(LilUCB(tie_break="index"), counts, sums)[0]) == int(np.argmax(index))
    # 1 + 9 (12 + 25 + 8) = 406: arm 0 stops the episode at 406 pulls, not at 405; the answer is the most pulled
    for pulls, stops in ((405, False), (406, True)):
        action = decide(LilUCB(tie_break="index"), [pulls, 12, 25, 8], [pulls // 2, 11, 20, 7])
        assert (action[0] == 4) == stops
        if stops:
            assert action[1:].tolist() == [1, 0, 0, 0]  # the most pulled arm, not the empirical best (arm 3)
    with pytest.raises(ValueError, match="lil'UCB's own rule"):
        EBTCI(stopping="lil")


# ------------------------------------------------------------------------------------------ delta-correctness
INSTANCES = [[0.5, 0.3], [0.6, 0.4, 0.3], [0.45, 0.3, 0.3, 0.2], [0.7, 0.5, 0.5, 0.4, 0.3], [0.35, 0.15, 0.1]]
RULES = [("glr", "gk2016", "bernoulli"), ("glr", "ls2020", "bernoulli"), ("glr", "ls2020", "gaussian"),
         ("glr", "mixture", "bernoulli"), ("glr", "mixture", "gaussian"), ("lucb", None, "bernoulli"),
         ("kllucb", None, "bernoulli")]


@pytest.mark.slow
@pytest.mark.parametrize(("stopping", "threshold", "distribution"), RULES)
def test_every_stopping_rule_that_claims_delta_correctness_keeps_its_error_rate_below_delta(
        stopping, threshold, distribution):
    """delta = 0.2, 200 runs per instance, EB-TCI's sampling (the cheapest of the rules): the exact
    (Clopper-Pearson) 95% interval of the error rate must reach below delta on every instance (a rule that errs
    more often fails)."""
    delta, runs = 0.2, 200
    for i, means in enumerate(INSTANCES):
        kwargs = {"arm_distribution": "gaussian", "sigma": 0.5} if distribution == "gaussian" else {}
        env = gym.make_vec("BestArmIdentification-v0", num_envs=runs, vectorization_mode="vector_entry_point",
                           means=means, setting="fixed_confidence", budget=200_000, **kwargs)
        agent = EBTCI(delta=delta, stopping=stopping, threshold=threshold, distribution=distribution,
                      sigma=0.5 if distribution == "gaussian" else 1.0)
        result = play_vector(env, agent, seed=100 + i)
        assert np.all(result["pulls"] < 200_000), "an episode reached the cap"
        errors = int(np.sum(result["error"]))
        low = stats.binomtest(errors, runs).proportion_ci(0.95, method="exact").low
        assert low <= delta, f"{means}: {errors} errors in {runs} runs"


@pytest.mark.slow
@pytest.mark.parametrize("threshold", ["gk2016", "mixture"])
def test_the_glr_rule_with_a_slack_keeps_the_error_of_epsilon_good_answers_below_delta(threshold):
    """epsilon = 0.05 on an instance whose two best arms are 0.03 apart (both epsilon-good) and a third 0.1 below:
    the GLR rule with the slack stops, far sooner than without one, and its answer is epsilon-good in all but
    at most a delta share of the runs (exact 95% interval)."""
    delta, runs, means = 0.2, 200, [0.5, 0.47, 0.37]
    kwargs = {"num_envs": runs, "vectorization_mode": "vector_entry_point", "means": means,
              "setting": "fixed_confidence", "budget": 200_000}
    relaxed = play_vector(gym.make_vec("BestArmIdentification-v0", epsilon=0.05, **kwargs),
                          EBTCI(delta=delta, threshold=threshold), seed=7)
    exact = play_vector(gym.make_vec("BestArmIdentification-v0", **kwargs), EBTCI(delta=delta, threshold=threshold),
                        seed=7)
    assert np.mean(relaxed["pulls"]) < 0.5 * np.mean(exact["pulls"])
    errors = int(np.sum(relaxed["error"]))
    assert stats.binomtest(errors, runs).proportion_ci(0.95, method="exact").low <= delta
