"""LUCB and UGapEc with a stopping-rule component: their paper's own rule by default, bit for bit as before
(``stopping="own"``); any component (``"glr"`` with a ``threshold``, ``"lucb"``, ``"kllucb"``) instead, in Python
and in a spec, with their sampling and their answer unchanged."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest

from bandit_gym.agents import LUCB, UGapEc
from bandit_gym.agents.best_arm import _stop, _stopping
from bandit_gym.agents.best_arm._base import records
from bandit_gym.divergences import kl_bernoulli
from bandit_gym.experiments import ExperimentSpec, build_agent, run_experiment
from bandit_gym.rollout import play_compiled, play_vector

AGENTS = (LUCB, UGapEc)
#: GK 2016's first instance
GK_MEANS = [0.5, 0.45, 0.43, 0.4]


# ------------------------------------------------------------------------------------------ the default
def seeded_env(m: int, epsilon: float) -> gym.vector.VectorEnv:
    return gym.make_vec("BestArmIdentification-v0", num_envs=12, vectorization_mode="vector_entry_point",
                        means=[0.7, 0.5, 0.45, 0.3], m=m, epsilon=epsilon, setting="fixed_confidence",
                        budget=20_000)


#: pulls of the 12 copies (seed 3, delta = 0.1) recorded before the stopping components were added: play_vector at
#: m = 1, epsilon = 0 (no copy errs) and the compiled rollout at m = 2, epsilon = 0.05
RECORDED = {
    "LUCB": ([4614, 4608, 4790, 5888, 5492, 5104, 5214, 5114, 4430, 5014, 5726, 3860],
             [14082, 16694, 19506, 16842, 20000, 12660, 14874, 16862, 12780, 11830, 12558, 16994]),
    "UGapEc": ([3645, 3222, 3467, 3856, 3917, 4259, 4009, 3800, 2530, 4694, 3407, 3258],
               [11631, 14483, 16912, 15567, 19123, 9579, 12636, 14938, 10449, 9616, 10407, 14415]),
}


@pytest.mark.parametrize("cls", AGENTS)
def test_the_default_is_the_paper_s_own_rule_bit_for_bit(cls):
    vector, compiled = RECORDED[cls.__name__]
    assert cls().stopping == "own"
    result = play_vector(seeded_env(1, 0.0), cls(delta=0.1), seed=3)  # step by step: slow, played once
    assert result["pulls"].astype(int).tolist() == vector
    assert not result["error"].any()
    for agent in (cls(delta=0.1), cls(delta=0.1, stopping="own")):
        rollout = play_compiled(seeded_env(2, 0.05), agent, seed=3)
        assert rollout is not None  # the compiled rollout is kept
        assert rollout["pulls"].astype(int).tolist() == compiled
        explicit = play_compiled(seeded_env(1, 0.0), agent, seed=3)
        assert explicit is not None
        np.testing.assert_array_equal(explicit["pulls"], play_compiled(seeded_env(1, 0.0), cls(delta=0.1),
                                                                       seed=3)["pulls"])


# ------------------------------------------------------------------------------------------ a component
@pytest.mark.parametrize("cls", AGENTS)
def test_the_glr_rule_stops_much_earlier_and_still_right(cls):
    """GK 2016's first instance at delta = 0.1, 30 runs: the paper's own rule averages about 90,000 (LUCB) and
    75,000 (UGapEc) pulls, the GLR rule with the heuristic threshold about 5,000."""
    def play(**kwargs):
        env = gym.make_vec("BestArmIdentification-v0", num_envs=30, vectorization_mode="vector_entry_point",
                           means=GK_MEANS, setting="fixed_confidence", budget=1_000_000)
        result = play_compiled(env, cls(delta=0.1, **kwargs), seed=11)
        assert result is not None and np.all(result["pulls"] < 1_000_000)
        return result

    own, glr = play(), play(stopping="glr", threshold="heuristic")
    assert glr["pulls"].mean() < own["pulls"].mean() / 5
    assert glr["error"].sum() <= 3  # mostly right (the heuristic threshold is outside the theory)
    assert own["error"].sum() == 0


def decide(agent, counts, sums, means=(0.6, 0.4)):
    """The agent's action on an observation with the given statistics, after the first observation of an episode
    of budget 10,000 on Bernoulli ``means``."""
    env = gym.make("BestArmIdentification-v0", means=list(means), setting="fixed_confidence", budget=10_000)
    first, _ = env.reset(seed=0)
    agent.reset(seed=0)
    agent.act(first)
    obs = {**first, "counts": np.asarray(counts, np.float32), "sums": np.asarray(sums, np.float32),
           "means": np.asarray(sums, np.float32) / np.asarray(counts, np.float32),
           "budget_left": np.array([10_000 - int(np.sum(counts))], np.float32)}
    return agent.act(obs)


@pytest.mark.parametrize("cls", AGENTS)
def test_the_glr_component_stops_exactly_when_the_statistic_passes_the_threshold(cls):
    # two arms, N = (n, n), means (0.6, 0.4): Z = 2 n kl(0.6, 0.5) against ln(2 t (K - 1) / delta), t = 2 n
    for n, stops in ((240, False), (250, True)):  # Z = 9.66 < beta = 9.86; Z = 10.07 > beta = 9.90
        z, beta = 2 * n * kl_bernoulli(0.6, 0.5), math.log(2 * 2 * n / 0.05)
        assert (z > beta) == stops and abs(z - beta) < 0.25
        action = decide(cls(delta=0.05, stopping="glr", threshold="gk2016", tie_break="index"), [n, n],
                        [0.6 * n, 0.4 * n])
        assert (action[0] == 2) == stops and action[1:].tolist() == [1, 0]
        # the paper's own rule is far from stopping there: the component alone decides
        assert decide(cls(delta=0.05, tie_break="index"), [n, n], [0.6 * n, 0.4 * n])[0] != 2


def test_the_components_evaluate_the_answer_they_are_given():
    counts, means = np.array([250.0, 250.0]), np.array([0.6, 0.4])
    stopped = _stop.stopped
    for rule, epsilon in (("glr", 0.0), ("lucb", 0.3)):
        constants = np.zeros(1, records(_stopping.fields(rule, "gk2016"), _stopping.CHOICES))
        _stopping.set_constants(constants, np.array([0]), rule, "gk2016", 0.05, "bernoulli", 1.0, 2, 1, epsilon)
        assert stopped(counts, means, np.array([1, 0]), 500, 1, epsilon, constants[0])
        assert not stopped(counts, means, np.array([0, 1]), 500, 1, epsilon, constants[0])  # the worse arm


# ------------------------------------------------------------------------------------------ parameters
@pytest.mark.parametrize("cls", AGENTS)
@pytest.mark.parametrize(("kwargs", "message"), [
    ({"stopping": "chernoff"}, "stopping='chernoff' is not allowed; use one of 'own', 'glr', 'lucb', 'kllucb'"),
    ({"stopping": "lil"}, "stopping='lil' is lil'UCB's own rule .*allowed: 'own', 'glr', 'lucb', 'kllucb'"),
    ({"stopping": None}, "stopping"),
    ({"stopping": "glr", "threshold": "gk"}, "threshold='gk'"),
    ({"threshold": "gk"}, "threshold='gk'"),
    ({"stopping": "glr", "distribution": "gaussian", "threshold": "gk2016"}, "Bernoulli arms only"),
    ({"stopping": "glr", "distribution": "poisson"}, "distribution"),
    ({"stopping": "glr", "distribution": "gaussian", "sigma": 0.0}, "sigma"),
])
def test_bad_stopping_parameters_are_named(cls, kwargs, message):
    with pytest.raises(ValueError, match=message):
        cls(**kwargs)


@pytest.mark.parametrize("cls", AGENTS)
def test_params_round_trip_and_fill_the_threshold(cls):
    agent = cls(delta=0.1, stopping="glr", threshold="heuristic")
    params = agent.params()
    assert {key: params[key] for key in ("stopping", "threshold", "distribution", "sigma")} == {
        "stopping": "glr", "threshold": "heuristic", "distribution": "bernoulli", "sigma": 1.0}
    assert cls(**params).params() == params
    assert cls().params()["stopping"] == "own" and cls().params()["threshold"] == "gk2016"
    assert cls(stopping="glr", distribution="gaussian", sigma=0.5).params()["threshold"] == "ls2020"


@pytest.mark.parametrize("cls", AGENTS)
def test_a_component_refuses_what_the_own_rule_accepts(cls):
    # the GLR component reads the env's epsilon (epsilon-good answers) as the own rule does
    cls(stopping="glr").act(gym.make("BestArmIdentification-v0", epsilon=0.1).reset(seed=0)[0])
    gaussian = gym.make("BestArmIdentification-v0", means=[-0.5, 0.2, 0.1], arm_distribution="gaussian", sigma=0.5)
    cls().check_env(gaussian)  # the own rule reads the range b only
    with pytest.raises(ValueError, match="Bernoulli arms"):
        cls(stopping="glr").check_env(gaussian)
    with pytest.raises(ValueError, match="sigma"):
        cls(stopping="kllucb", distribution="gaussian", sigma=1.0).check_env(gaussian)
    cls(stopping="glr", distribution="gaussian", sigma=0.5).check_env(gaussian)
    # in Python, a Bernoulli component refuses rewards outside [0, 1] as it plays; the own rule plays them
    for agent, refuses in ((cls(), False), (cls(stopping="glr"), True),
                           (cls(stopping="glr", distribution="gaussian", sigma=0.5), False)):
        obs, _ = gaussian.reset(seed=0)
        agent.reset(seed=0)
        if refuses:
            with pytest.raises(ValueError, match="not Bernoulli"):
                for _ in range(10):
                    obs, *_ = gaussian.step(agent.act(obs))
        else:
            for _ in range(10):
                obs, *_ = gaussian.step(agent.act(obs))


# ------------------------------------------------------------------------------------------ in a spec
def test_a_spec_runs_lucb_and_ugapec_with_the_glr_rule():
    spec = ExperimentSpec.from_dict({
        "env": "BestArmIdentification-v0", "budgets": [200_000], "runs": 20, "chunk": 20, "seed": 5,
        "env_kwargs": {"means": GK_MEANS, "setting": "fixed_confidence"},
        "agents": [{"name": "LUCB", "params": {"stopping": "glr", "threshold": "heuristic", "delta": 0.1}},
                   {"name": "UGapEc", "params": {"stopping": "glr", "threshold": "heuristic", "delta": 0.1}}],
    })
    assert ExperimentSpec.from_dict(spec.to_dict()) == spec
    agent = build_agent(spec.agents[0], gym.make("BestArmIdentification-v0", means=GK_MEANS))
    assert isinstance(agent, LUCB) and (agent.stopping, agent.threshold) == ("glr", "heuristic")
    summary = run_experiment(spec, progress=False).summary()
    pulls = summary[summary.metric == "pulls"].set_index("agent")["mean"]
    assert set(pulls.index) == {spec.agents[0].display, spec.agents[1].display}
    assert all(1_000 < value < 20_000 for value in pulls)  # stopped by the GLR rule, far before the own rules'
    errors = summary[summary.metric == "error"]["mean"]
    assert (errors <= 0.2).all()
