"""Label invariance: permuting the arms of an instance leaves every agent's results unchanged in distribution.

Every agent of ``AGENTS`` plays, on each env family of its own, short Bernoulli episodes (Gaussian ones, with
an exchangeable kernel, on the correlated best-arm env) of 5 to 26 pulls over 4 to 8 arms, where exact ties in
the statistics are frequent: the situation in which a rule that prefers a position shows. No budget is a
multiple of K, so that the arms a round robin pulls once more are visible too. Two properties, with fixed seeds,
on every path the agent is played through (``play_vector`` step by step; ``play_batched`` and ``play_compiled``
where they apply):

(a) Exchangeability. Two arms A and B have means mu and mu - delta, ``delta = DELTA = 2^-20``. Their samples
    differ only when a uniform falls in an interval of length delta, so over at most 26 pulls the episodes with
    A and B swapped have the same law up to a total variation of 26 delta < 3e-5 (Gaussian arms: 5 pulls,
    less), far inside the tests' resolution; yet the loss tells A and B apart exactly. Best arm and top K: the
    final loss is 0 when the answer holds A and ``delta / m`` when it holds B instead; multi-armed and threshold
    bandits: the pseudo-regret is ``delta n_B + GAP n_rest``, exact in float64 (dyadic gaps), which gives the
    pull counts. Per copy ``d = 1{A answered} - 1{B answered}`` (or ``n_A - n_B``); the statistic is
    ``z = mean(d) / se(d)``. The thresholding loss counts misclassified arms without naming them: there (b)
    alone.

(b) Permutation. The instance with its arms reversed, and permuted by a fixed random permutation, against the
    instance as written: Welch's z of the final loss (``regret``) and of the error rate where the env reports
    one, on independent samples (other seeds).

A statistic fails at ``|z| > Z = 5`` (two-sided p = 5.7e-7 under the null): the 442 statistics of the first
test keep the chance of one false alarm near 2.5e-4 (with fixed seeds the outcome is reproducible anyway; on
agents with random ties the largest |z| measured was 3.3). The smallest-index tie rule gave, when this test was
written, a largest |z| per agent from 6.6 (ThompsonSampling) to several hundred at these sizes;
``test_the_smallest_index_rule_is_detected`` keeps that power checked, on twice the copies.

The default selection plays each agent through the path the experiment engine takes (batched pulls, else the
compiled rollout, else step by step); its other paths, and the learned agents (a network evaluated on every
copy's arms at every step), are marked slow. ``SB3Agent`` is left out: it plays a policy the user gives (none
ships with the package), and a generic policy network reads the observation by position, so label invariance is
a property of that policy, not of the adapter; the adapter's own part, the empirical answer, is played here by
``ArmwisePPO``, the shipped arm-wise policies that ``SB3Agent`` runs.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

from bandit_gym.agents import Agent
from bandit_gym.envs._base import engine_of
from bandit_gym.families import Family
from bandit_gym.rl.armwise_ppo import SHIPPED_PROBLEMS
from bandit_gym.rollout import play_batched, play_compiled, play_vector
from tests.conftest import AGENTS

DELTA = 2.0**-20
"""The gap between the exchangeable arms A and B."""
GAP = 0.25
"""The gap of every other arm on the multi-armed and threshold bandits (dyadic, so the regret sums exactly)."""
Z = 5.0
"""A statistic fails when ``|z| > Z``."""
LEARNED_COPIES = 4_000
"""Copies per order for the learned agents, whose network makes each step cost milliseconds per hundred copies."""
POWER_SCALE = 2
"""The check of power plays this many times the copies: the weakest detection, ThompsonSampling's (|z| = 6.6 on
the best-arm case at 10,000 copies), then has a margin."""


@dataclass(frozen=True)
class Case:
    """An instance of one env family, written with A at position 0 and B at position 1."""

    family: Family
    env_id: str
    kwargs: dict[str, Any]
    key: str  # the env argument that takes the instance (``means`` or ``survival``)
    instance: tuple[Any, ...]  # one entry per arm
    decode: Callable[[dict[str, np.ndarray]], np.ndarray] | None  # a rollout's result -> d per copy, for (a)
    copies: int = 20_000  # copies of the vector env per order of the arms

    @property
    def num_arms(self) -> int:
        return len(self.instance)


def answer_balance(scale: float) -> Callable[[dict[str, np.ndarray]], np.ndarray]:
    """``d = 1{A answered} - 1{B answered}``, the loss being 0 with A and ``scale`` with B (up to rounding)."""

    def decode(result: dict[str, np.ndarray]) -> np.ndarray:
        regret = result["regret"]
        return (regret < scale / 2).astype(np.int64) - (np.abs(regret - scale) < scale / 2).astype(np.int64)

    return decode


def pull_balance(result: dict[str, np.ndarray]) -> np.ndarray:
    """``d = n_A - n_B`` from the pseudo-regret ``DELTA n_B + GAP n_rest`` and the pulls."""
    regret, pulls = result["regret"], result["pulls"].astype(np.int64)
    rest = np.floor(regret / GAP).astype(np.int64)
    n_b = np.rint((regret - GAP * rest) / DELTA).astype(np.int64)
    assert np.array_equal(GAP * rest + DELTA * n_b, regret), "the pseudo-regret is not DELTA n_B + GAP n_rest"
    return pulls - rest - 2 * n_b


def equicorrelated(k: int, rho: float) -> np.ndarray:
    """``G = (1 - rho) I + rho 1 1^T``, a kernel that every permutation of the arms leaves unchanged."""
    return (1.0 - rho) * np.eye(k) + rho * np.ones((k, k))


CRN = {"common_random_numbers": True}  # the experiment engine's default
CASES = {
    "best_arm": Case(Family.BEST_ARM, "BestArmIdentification-v0", {"budget": 22, **CRN}, "means",
                     (0.5, 0.5 - DELTA, 0.4, 0.4, 0.3), answer_balance(DELTA), copies=10_000),
    "top_k": Case(Family.TOP_K, "TopKIdentification-v0", {"budget": 26, "k": 2, "shuffle": False, **CRN}, "means",
                  (0.5, 0.5 - DELTA, 0.7, 0.3, 0.3, 0.3), answer_balance(DELTA / 2), copies=10_000),
    "thresholding_short": Case(Family.THRESHOLDING, "ThresholdingBandit-v0", {"budget": 9, **CRN}, "means",
                               (0.6, 0.7, 0.8, 0.2, 0.3, 0.4), None, copies=50_000),
    "thresholding": Case(Family.THRESHOLDING, "ThresholdingBandit-v0", {"budget": 20, **CRN}, "means",
                         (0.4, 0.45, 0.55, 0.6, 0.2, 0.8), None, copies=50_000),
    "threshold": Case(Family.THRESHOLD, "ThresholdBandit-v0", {"horizon": 26}, "survival",
                      ((0.75, 0.5), (0.75 - DELTA, 0.5 - DELTA), (0.5, 0.25), (0.5, 0.25)), pull_balance,
                      copies=25_000),
    "multi_armed": Case(Family.MULTI_ARMED, "MultiArmedBandit-v0", {"budget": 26, **CRN}, "means",
                        (0.5, 0.5 - DELTA, 0.25, 0.25), pull_balance),
    "correlated": Case(Family.BEST_ARM, "CorrelatedBestArm-v0", {"budget": 5, "kernel": equicorrelated(8, 0.5), **CRN},
                       "means", (1.0, 1.0 - DELTA, 0.5, 0.5, 0.0, 0.0, -0.5, -0.5), answer_balance(DELTA)),
}
"""The instances. ``thresholding_short``: arms above the threshold first, below it last, and a budget 9 < 2K:
after the first round every arm has one sample, every index ties, and the tie rule alone decides which arms get
a second one (which helps an arm above the threshold and hurts one below, as ``mean >= theta`` answers 1), so a
rule that prefers positions changes the error when the order changes; ``thresholding``: hard and easy arms
mixed, over a longer budget. ``correlated`` (budget 5 < K = 8: most arms are never pulled, and their posteriors
tie) is where the Bayesian agents of hoffman2014 and the shipped ``correlated`` policy play, with the agents'
default model (independent arms); its kernel is exchangeable, so the env's model (``info["model"]``) is the
same for every order of the arms too."""

BAYESIAN = ("BayesGap", "ThompsonSampling", "BayesUCB", "GPUCB", "EI", "PI")
"""The agents of hoffman2014, which also play the correlated case."""


def orders(k: int) -> dict[str, np.ndarray]:
    """The instance as written, reversed, and permuted by a permutation drawn with a fixed seed."""
    return {"identity": np.arange(k), "reversed": np.arange(k)[::-1].copy(),
            "shuffled": np.random.default_rng(36).permutation(k)}


# ---------------------------------------------------------------------------------------------------- agents
def players(case: str) -> list[tuple[str, str, dict[str, Any]]]:
    """``(label, name, parameters)`` of the agents that play ``case``: the agents of its family with their default
    parameters, and the shipped ``ArmwisePPO`` policies of that family."""
    family = CASES[case].family
    if case == "correlated":
        return [(name, name, {}) for name in BAYESIAN] + [("ArmwisePPO[correlated]", "ArmwisePPO",
                                                           {"problem": "correlated"})]
    rules = [name for name, cls in AGENTS.items() if family in cls.families and name not in ("SB3Agent", "ArmwisePPO")]
    learned = [problem for problem, of in SHIPPED_PROBLEMS.items() if of is family and problem != "correlated"]
    return [(name, name, {}) for name in rules] + [(f"ArmwisePPO[{problem}]", "ArmwisePPO", {"problem": problem})
                                                   for problem in learned]


def paths(name: str, family: Family) -> list[str]:
    """The paths an agent is played through on ``family``, the experiment engine's first: batched pulls where the
    agent has them, else its compiled rollout (Bernoulli pure-exploration envs), else step by step."""
    cls = AGENTS[name]
    found = ["batched"] if family.pure_exploration and cls.batches_on(family) else []
    if family.pure_exploration and cls.compiled_rollout is not Agent.compiled_rollout:
        found.append("compiled")
    return [*found, "vector"]


PLAY: dict[str, Callable[..., Any]] = {"vector": play_vector, "batched": play_batched, "compiled": play_compiled}


def make_env(case: Case, order: np.ndarray, copies: int) -> Any:
    instance = np.asarray(case.instance)[order]
    with warnings.catch_warnings():  # equal arms: "no unique best arm" (abernethy2016), "the m best not unique"
        warnings.simplefilter("ignore")
        return gym.make_vec(case.env_id, num_envs=copies, vectorization_mode="vector_entry_point", copy=False,
                            **{case.key: instance}, **case.kwargs)


def build(case: Case, name: str, params: dict[str, Any]) -> Agent:
    """The agent with ``params`` and, for the agents that take them, the oracle parameters of the instance (the
    same for every order of its arms)."""
    cls = AGENTS[name]
    if cls.oracle_parameters:
        engine: Any = engine_of(make_env(case, np.arange(case.num_arms), 1))
        truth = engine.oracle_values(np.asarray(case.instance))
        params = {**{key: truth[key] for key in cls.oracle_parameters}, **params}
    return cls(**params)


# ---------------------------------------------------------------------------------------------------- statistics
def z_mean(d: np.ndarray) -> float:
    """``mean(d) / se(d)``; 0 when every d is 0, infinite when they are all one other value."""
    se = d.std(ddof=1) / np.sqrt(d.size)
    return 0.0 if not d.any() else float(d.mean() / se) if se > 0 else float(np.sign(d.mean()) * np.inf)


def z_two(x: np.ndarray, y: np.ndarray) -> float:
    """Welch's z of ``mean(x) - mean(y)`` for independent samples; 0 when both are one and the same value,
    infinite when they are two different constants."""
    se = np.sqrt(x.var(ddof=1) / x.size + y.var(ddof=1) / y.size)
    gap = x.mean() - y.mean()
    return float(gap / se) if se > 0 else 0.0 if gap == 0 else float(np.sign(gap) * np.inf)


def play_orders(case: Case, name: str, params: dict[str, Any], path: str,
                scale: int = 1) -> dict[str, dict[str, np.ndarray]]:
    """The rollout's result in each order of the arms (seeds 1000, 1001, 1002: independent samples), on ``scale``
    times the case's copies."""
    copies = scale * (min(case.copies, LEARNED_COPIES) if name == "ArmwisePPO" else case.copies)
    results = {}
    for seed, (label, order) in enumerate(orders(case.num_arms).items(), start=1000):
        result = PLAY[path](make_env(case, order, copies), build(case, name, params), seed=seed)
        assert result is not None, f"{name} has no {path} path on this env"
        results[label] = result
    return results


def statistics(case_name: str, name: str, params: dict[str, Any], path: str, scale: int = 1) -> dict[str, float]:
    """The z of (a) in every order and of (b) for every metric and permuted order."""
    case = CASES[case_name]
    results = play_orders(case, name, params, path, scale)
    found: dict[str, float] = {}
    if case.decode is not None:
        found = {f"balance A - B ({label})": z_mean(case.decode(result)) for label, result in results.items()}
    for metric in ("regret", "error"):
        for label in ("reversed", "shuffled") if metric in results["identity"] else ():
            found[f"{metric} ({label} - identity)"] = z_two(results[label][metric], results["identity"][metric])
    return found


def shown(stats: dict[str, float]) -> str:
    return ", ".join(f"{key}: z = {value:+.1f}" for key, value in stats.items())


# ---------------------------------------------------------------------------------------------------- tests
HEAVY = {("top_k", "TrackAndStop"): "its interior-point w* at every pull of 10,000 copies in 4 orders: 35 s",
         ("top_k", "FWSampling"): "its matrix game at every pull of 10,000 copies in 4 orders: 14 s"}
"""The (case, agent) pairs whose engine path takes more than ten seconds (CPU, on the 2-core machine), and why."""


def invariance_params() -> list[Any]:
    """Every (case, agent, path): the engine's path in the default selection; other paths, learned agents and the
    ``HEAVY`` pairs slow."""
    found = []
    for case in CASES:
        for label, name, params in players(case):
            for rank, path in enumerate(paths(name, CASES[case].family)):
                marks = [pytest.mark.slow] if rank or name == "ArmwisePPO" or (case, name) in HEAVY else []
                found.append(pytest.param(case, name, params, path, marks=marks, id=f"{case}-{label}-{path}"))
    return found


@pytest.mark.parametrize(("case", "name", "params", "path"), invariance_params())
def test_permuting_the_arms_leaves_the_results_unchanged(case: str, name: str, params: dict[str, Any],
                                                         path: str) -> None:
    """(a) and (b) of the module's docstring: every |z| <= Z."""
    stats = statistics(case, name, params, path)
    failed = {key: value for key, value in stats.items() if not abs(value) <= Z}
    assert not failed, f"{name}{params or ''} on {case}, {path}: |z| > {Z} for {shown(failed)} (all: {shown(stats)})"


NO_TIES_THAT_MATTER = {
    "Thompson": "its indices are draws from continuous posteriors (Beta), which tie with probability 0",
    "EpsilonGreedy": "with its default schedule it explores uniformly at random for the first c K / d^2 = 60 "
                     "rounds on K = 4 arms: a tie rule acts from round 61 on, where ties barely change the regret",
}
"""Agents whose smallest-index rule no instance of this file can reveal, and why."""


def index_params() -> list[Any]:
    """Every agent whose constructor takes ``tie_break``, with the cases it plays. An agent with batched pulls
    plays them, any other agent steps (``index_path``); the check of an agent whose first case the default
    selection plays through its compiled rollout compiles its step kernel for this check alone (seconds), and is
    therefore slow."""
    found = []
    for name, cls in AGENTS.items():
        if "tie_break" in inspect.signature(cls).parameters and name not in NO_TIES_THAT_MATTER:
            cases = [case for case in CASES if any(name == other for _, other, _ in players(case))]
            compiled = paths(name, CASES[cases[0]].family)[0] == "compiled"
            found.append(pytest.param(name, cases, marks=[pytest.mark.slow] if compiled else [], id=name))
    return found


def index_path(name: str, case: str) -> str:
    """Batched pulls where the agent has them on ``case`` (their kernels are compiled by the default selection),
    else step by step."""
    first = paths(name, CASES[case].family)[0]
    return first if first == "batched" else "vector"


@pytest.mark.parametrize(("name", "cases"), index_params())
def test_the_smallest_index_rule_is_detected(name: str, cases: list[str]) -> None:
    """The power of the test above: with ties to the smallest index, some statistic on some case is beyond Z."""
    seen = {}
    for case in cases:
        seen[case] = statistics(case, name, {"tie_break": "index"}, index_path(name, case), POWER_SCALE)
        if max(abs(value) for value in seen[case].values()) > Z:
            return
    pytest.fail(f"{name}(tie_break='index') is not detected: " + "; ".join(f"{case}: {shown(stats)}"
                                                                            for case, stats in seen.items()))
