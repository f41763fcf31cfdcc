"""Answers that rank arms by empirical means rank an arm never pulled below every pulled arm, as the env's own
empirical rule does: with a budget below K or with negative rewards, an arm never pulled (whose observed mean
reads 0) is not recommended over the arms that were pulled. Only the answers change, never the pulls."""

from __future__ import annotations

import inspect
import warnings
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import bandit_gym  # noqa: F401
from bandit_gym.agents import Uniform
from bandit_gym.agents.base import Agent
from bandit_gym.envs._base import engine_of
from bandit_gym.envs.best_arm import top_m_answer
from bandit_gym.experiments import AgentSpec, build_agent
from bandit_gym.rollout import play_compiled, play_vector
from tests.conftest import AGENTS

#: agents whose answer ranks arms by empirical means (SB3Agent submits the env's rule; the Bayesian agents
#: recommend from their posterior, their own rule)
RANKING_AGENTS = sorted(
    name for name, cls in AGENTS.items()
    if {"best_arm", "top_k"} & set(cls.families) and not issubclass(cls, AGENTS["SB3Agent"])
    and not cls.__module__.startswith("bandit_gym.agents.bayesian")
)
K = 9
NEGATIVE = -0.1 - 0.1 * np.arange(K)  # every mean below 0: an arm never pulled reads better than any pulled one


def final_answers(venv: Any, agent: Agent, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Play the first episode of every copy step by step; return each copy's final answer bits and the pull
    counts it was computed from, ``(N, K)`` each."""
    n = venv.num_envs
    agent.reset(seed=seed)
    obs, _ = venv.reset(seed=seed)
    answers, counts = np.zeros((n, K), dtype=np.int64), np.zeros((n, K))
    pending = np.ones(n, dtype=bool)
    while pending.any():
        action = agent.act(obs).copy()
        before = obs["counts"].copy()  # the env updates its buffers in place
        obs, _, terminated, truncated, _ = venv.step(action)
        done = (terminated | truncated) & pending
        answers[done], counts[done] = action[done, 1:], before[done]
        pending &= ~done
    return answers, counts


def assert_pulled_arms_first(answers: np.ndarray, counts: np.ndarray, m: int, label: str) -> None:
    """Every answer holds m arms, and min(m, arms pulled) of them were pulled: no arm never pulled stands in the
    answer while a pulled arm is left out of it for lack of room."""
    pulled = counts > 0
    assert (answers.sum(axis=1) == m).all(), f"{label}: answers {answers}"
    want = np.minimum(m, pulled.sum(axis=1))
    got = (answers.astype(bool) & pulled).sum(axis=1)
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, (f"{label}: copy {bad[0]} answers {np.flatnonzero(answers[bad[0]]).tolist()}, "
                           f"pulled {np.flatnonzero(pulled[bad[0]]).tolist()}")


def negative_env(name: str, m: int, budget: int, setting: str, copies: int) -> Any:
    cls = AGENTS[name]
    kwargs: dict[str, Any] = {"means": NEGATIVE, "arm_distribution": "gaussian", "sigma": 0.3, "budget": budget,
                              "setting": setting}
    if "best_arm" in cls.families:
        return gym.make_vec("BestArmIdentification-v0", num_envs=copies, vectorization_mode="vector_entry_point",
                            m=m, **kwargs)
    return gym.make_vec("TopKIdentification-v0", num_envs=copies, vectorization_mode="vector_entry_point", k=m,
                        epsilon=0.05, **kwargs)


def agent_for(name: str, env: Any) -> Agent:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # oracle complexities of a small instance
        params: dict[str, Any] = {"eta": 16.0} if name == "UGapEb" else {}
        if "distribution" in inspect.signature(AGENTS[name]).parameters:  # the env's Gaussian arms
            params.update(distribution="gaussian", sigma=0.3)
        return build_agent(AgentSpec(name, params), env)


def test_ranking_agents_cover_the_best_arm_and_top_k_registry() -> None:
    assert {"Uniform", "UGapEb", "UGapEc", "UCBEBestArm", "LUCB", "SuccessiveRejects", "SAR", "CLUCBPAC",
            "OptMAI", "AdaptiveTopK"} <= set(RANKING_AGENTS)


def test_uniform_recommends_a_trained_model_on_model_selection() -> None:
    # T = 10 trainings among K = 160 models; a pull's value is minus a test RMSE, so every trained model reads
    # below an untrained one's 0
    env = gym.make("ModelSelection-v0", budget=10)
    agent = Uniform()
    for seed in range(3):
        agent.reset(seed=seed)
        obs, _ = env.reset(seed=seed)
        terminated = False
        while not terminated:
            action = agent.act(obs)
            counts = obs["counts"].copy()
            obs, _, terminated, _, _ = env.step(action)
        answer = int(np.flatnonzero(action[1:])[0])
        assert counts[answer] > 0, f"seed {seed}: Uniform recommends model {answer}, never trained"
        np.testing.assert_array_equal(action[1:], top_m_answer({"means": obs["means"], "counts": counts,
                                                                "m": np.array([1.0])}))
    venv = gym.make_vec("ModelSelection-v0", num_envs=16, vectorization_mode="vector_entry_point",
                        common_random_numbers=True)
    agent.reset(seed=0)
    obs, _ = venv.reset(seed=0)
    for _ in range(11):  # ten pulls, then the answer step
        action = agent.act(obs).copy()
        counts = obs["counts"].copy()
        obs, *_ = venv.step(action)
    answer = action[:, 1:].argmax(axis=1)
    assert (action[:, 1:].sum(axis=1) == 1).all()
    assert (counts[np.arange(16), answer] > 0).all(), answer
    trained = agent.order.arm_at[:, :10]  # round robin in each copy's arm order: its first 10 models were trained
    assert (trained == answer[:, None]).any(axis=1).all()


def one_arm_only(name: str) -> bool:
    """Whether the agent returns one arm only (its ``check_m`` refuses m = 3: Successive Rejects,
    Track-and-Stop)."""
    cls = AGENTS[name]
    check_m = getattr(cls, "check_m", None)
    if check_m is None:
        return False
    try:
        check_m(object.__new__(cls), 3)
    except ValueError:
        return True
    return False


CASES = [(name, m, budget) for name in RANKING_AGENTS for m in (1, 3) for budget in (1, 2, 4, 7, 12)
         if not (one_arm_only(name) and m != 1)]


@pytest.mark.parametrize(("name", "m", "budget"), CASES)
def test_final_answers_rank_unpulled_arms_last_with_negative_means(name: str, m: int, budget: int) -> None:
    # K = 9 Gaussian arms of negative means; budgets below K (and 12: each arm once, then three more), both settings
    # (a fixed-confidence episode is cut at the cap and its answer scored)
    for setting in ("fixed_budget", "fixed_confidence"):
        venv = negative_env(name, m, budget, setting, copies=6)
        answers, counts = final_answers(venv, agent_for(name, venv), seed=budget)
        assert_pulled_arms_first(answers, counts, m, f"{name}, m = {m}, T = {budget}, {setting}")


@pytest.mark.parametrize("name", RANKING_AGENTS)
def test_answers_at_every_step_rank_unpulled_arms_last(name: str) -> None:
    # the answer submitted at every step (those the anytime wrappers score), budget 2K
    for m in (1,) if one_arm_only(name) else (1, 3):
        venv = negative_env(name, m, 2 * K, "fixed_budget", copies=4)
        agent = agent_for(name, venv)
        agent.reset(seed=1)
        obs, _ = venv.reset(seed=1)
        pending = np.ones(4, dtype=bool)
        while pending.any():
            action = agent.act(obs).copy()
            assert_pulled_arms_first(action[pending, 1:], obs["counts"][pending], m,
                                     f"{name}, m = {m}, after {obs['counts'][pending].sum(axis=1)} pulls")
            obs, _, terminated, truncated, _ = venv.step(action)
            pending &= ~(terminated | truncated)


def test_the_initial_round_still_pulls_arm_t_at_pull_t() -> None:
    # only the answers changed: Uniform keeps round robin; UCB-E, LUCB and UGapEb pull each arm once first, all
    # in the copy's arm order (random per copy: the agent's tie rule)
    for name in ("Uniform", "UCBEBestArm", "LUCB", "UGapEb"):
        venv = negative_env(name, 1, 30, "fixed_budget", copies=3)
        agent = agent_for(name, venv)
        agent.reset(seed=0)
        obs, _ = venv.reset(seed=0)
        for t in range(K):
            action = agent.act(obs)
            order = agent.order.arm_at  # type: ignore[attr-defined]
            assert (action[:, 0] == order[:, t]).all(), (name, t, action[:, 0], order[:, t])
            obs, *_ = venv.step(action.copy())


#: agents with a compiled whole-episode rollout: Uniform; SAR, whose answer with Bernoulli arms rested on an arm
#: never pulled; CLUCB-PAC, whose rollout has its own kernel (the other rules are those the steps run)
COMPILED = ["Uniform", "SAR", "CLUCBPAC"]


@pytest.mark.parametrize("name", COMPILED)
@pytest.mark.parametrize("budget", [3, 6])
def test_compiled_rollouts_answer_as_the_steps_do(name: str, budget: int) -> None:
    # Bernoulli arms, budget below K: the rollout kernel's answers (at every checkpoint) equal the step-by-step
    # answers, which keep to the pulled arms; play_compiled scores them as play_vector does
    m = 2
    means = np.array([0.05, 0.9, 0.6, 0.5, 0.4, 0.3, 0.2, 0.15, 0.1])  # arm 1 best, arm 0 worst
    env_id, kwargs = (("TopKIdentification-v0", {"k": m, "epsilon": 0.05, "shuffle": False}) if name == "CLUCBPAC"
                      else ("BestArmIdentification-v0", {"m": m}))
    venv = gym.make_vec(env_id, num_envs=8, vectorization_mode="vector_entry_point", means=means, budget=budget,
                        common_random_numbers=True, **kwargs)
    stepped, counts = final_answers(venv, agent_for(name, venv), seed=2)
    assert_pulled_arms_first(stepped, counts, m, f"{name}, T = {budget}, step by step")

    agent = agent_for(name, venv)
    agent.reset(seed=2)
    obs, _ = venv.reset(seed=2)
    plan = agent.compiled_rollout(obs)
    assert plan is not None
    kernel, args = plan
    engine = engine_of(venv)
    checkpoints = np.arange(budget + 1)
    answers = np.zeros((8, checkpoints.size, K), dtype=np.int8)
    pulls = np.zeros(8, dtype=np.int64)
    kernel(engine.means, engine._seeds, engine.m, float(np.float32(engine.epsilon)), engine.budget, checkpoints,
           answers, pulls, *args)
    np.testing.assert_array_equal(answers[:, -1], stepped)
    assert (pulls == budget).all()
    if name != "SAR":  # the arm at position t of the copy's order at pull t: after t pulls, those of 0..t-1
        order = agent.order.arm_at  # type: ignore[attr-defined]
        for t in checkpoints:
            pulled = np.zeros((8, K))
            pulled[np.arange(8)[:, None], order[:, :t]] = 1
            assert_pulled_arms_first(answers[:, t], pulled, m, f"{name}, rollout after {t} pulls")

    compiled = play_compiled(venv, agent_for(name, venv), seed=2)
    vector = play_vector(venv, agent_for(name, venv), seed=2)
    assert compiled is not None
    for key in ("regret", "error", "invalid", "pulls"):
        np.testing.assert_array_equal(compiled[key], vector[key], err_msg=key)


def test_sar_answers_its_pulled_survivor_when_the_budget_is_below_k() -> None:
    # T <= K: every phase has length 0 and ends at once on no samples (arm 0 accepted, the others rejected from
    # the last index down, arm 1 surviving); the survivor takes every pull and is the only arm the answer can
    # rest on. Through the compiled rollout of play_compiled, as the experiment engine plays it.
    means = np.array([0.05, 0.9, 0.6, 0.5, 0.4, 0.3, 0.2, 0.15, 0.1])
    venv = gym.make_vec("BestArmIdentification-v0", num_envs=16, vectorization_mode="vector_entry_point",
                        means=means, budget=5, common_random_numbers=True)
    compiled = play_compiled(venv, AGENTS["SAR"](tie_break="index"), seed=0)  # the ties of the comment above
    assert compiled is not None
    np.testing.assert_array_equal(compiled["regret"], np.zeros(16))


def test_kth_smallest_is_numpys_partition() -> None:
    """The selection behind ``top_m_select`` against ``np.partition`` at every rank: normal draws, few distinct
    values (ties), -inf (arms never pulled), sorted and reversed input (a naive pivot's worst cases), one value."""
    from bandit_gym.agents.ranking import kth_smallest

    rng = np.random.default_rng(7)
    cases = [np.array([3.0]), np.arange(30.0), np.arange(30.0)[::-1].copy(), np.zeros(17)]
    for size in rng.integers(2, 40, size=300):
        cases += [rng.normal(size=size), rng.integers(0, 3, size=size).astype(float),
                  np.where(rng.random(size) < 0.3, -np.inf, rng.integers(0, 3, size=size).astype(float))]
    for values in cases:
        before = values.copy()
        found = [kth_smallest(values, kth) for kth in range(values.size)]
        assert found == [np.partition(values, kth)[kth] for kth in range(values.size)], values
        np.testing.assert_array_equal(values, before)  # on a copy


def test_stable_order_is_numpys_stable_argsort() -> None:
    """The merge sort that the optimal-allocation oracle, FWS's water filling and AdaptiveTopK rank by, against
    ``np.argsort(kind="stable")``: sizes 0 to 70 (powers of two and their neighbours: the last run's edges), few
    distinct values (ties, which go to the earlier position), -inf and -0.0 beside 0.0, sorted and reversed input."""
    from bandit_gym.agents.ranking import stable_order

    rng = np.random.default_rng(11)
    cases = [np.empty(0), np.array([3.0]), np.arange(33.0), np.arange(33.0)[::-1].copy(), np.zeros(17),
             np.array([0.0, -0.0, 0.0, -0.0])]
    for size in list(range(2, 70)) * 4:
        cases += [rng.normal(size=size), rng.integers(0, 3, size=size).astype(float),
                  np.where(rng.random(size) < 0.3, -np.inf, rng.integers(0, 3, size=size).astype(float))]
    for values in cases:
        before = values.copy()
        np.testing.assert_array_equal(stable_order(values), np.argsort(values, kind="stable"), str(values))
        np.testing.assert_array_equal(values, before)
