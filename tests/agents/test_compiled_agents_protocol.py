"""The built-ins with a step of their own (``ThresholdingAgent``: LSA, APT, UCBE, Opt-KG and the rules stopped by
the per-arm GLR stop; ``BestArmAgent``: the best-arm and fixed-confidence rules, CLUCB-PAC; the round agents OptMAI
and AdaptiveTopK; the trained policies of ``SB3Agent`` and ``ArmwisePPO``) decide by ``select``, ``stop`` and
``answer`` like every agent: a subclass that calls ``super()`` in them is the parent, bit for bit, on the plain step
that plays a subclass; the parent's answer and stopping rule stand where a subclass replaces only ``select``; the
index of every arm is recomputed when the compiled step did not see the previous observation."""

from __future__ import annotations

import copy
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from scipy import special

import bandit_gym  # noqa: F401  (registers the ids)
from bandit_gym.agents import LSA, OptKG, TrackAndStop
from bandit_gym.agents.base import Agent, fast_paths
from bandit_gym.agents.best_arm._base import BestArmAgent
from bandit_gym.agents.thresholding._base import ThresholdingAgent
from tests.conftest import AGENT_ENV_PAIRS, AGENTS, make_agent, small_kwargs

COMPILED = [*sorted(name for name, cls in AGENTS.items() if issubclass(cls, (ThresholdingAgent, BestArmAgent))),
            "AdaptiveTopK", "OptMAI", "SB3Agent", "ArmwisePPO"]
#: each agent's first env of the test registry
FIRST_ENV = {name: next(env_id for agent, env_id in AGENT_ENV_PAIRS if agent == name) for name in COMPILED}


def episode_actions(env_id: str, agent: Agent, copies: int = 4, **kwargs: Any) -> np.ndarray:
    """Every action of one seeded episode per copy of a vector env (the steps until the last copy ends; a copy
    that ended first goes on with its next episode)."""
    env = gym.make_vec(env_id, num_envs=copies, vectorization_mode="vector_entry_point", **kwargs)
    obs, _ = env.reset(seed=0)
    agent.reset(seed=1)
    actions, done = [], np.zeros(copies, dtype=bool)
    while not done.all():
        action = agent.act(obs).copy()
        actions.append(action)
        obs, _, terminated, truncated, _ = env.step(action)
        done |= terminated | truncated
    env.close()
    return np.array(actions)


def through_super(cls: type[Agent], hooks: tuple[str, ...]) -> type[Agent]:
    """A subclass of ``cls`` whose ``hooks`` only call the parent's."""
    class Child(cls):  # type: ignore[misc,valid-type]
        pass

    def select(self: Agent, obs: dict) -> Any:
        return super(Child, self).select(obs)

    def stop(self: Agent, obs: dict) -> Any:
        return super(Child, self).stop(obs)

    def answer(self: Agent, obs: dict) -> Any:
        return super(Child, self).answer(obs)

    methods = {"select": select, "stop": stop, "answer": answer}
    for name in hooks:
        setattr(Child, name, methods[name])
    return Child


def test_every_agent_with_a_compiled_rule_is_covered() -> None:
    assert {"LSA", "APT", "UCBE", "OptKG", "TrackAndStop", "SuccessiveRejects", "CLUCBPAC", "FWSampling"} <= set(
        COMPILED)


@pytest.mark.parametrize("hooks", [("select",), ("answer",), ("select", "stop", "answer")],
                         ids=["select", "answer", "all"])
@pytest.mark.parametrize("name", COMPILED)
def test_a_subclass_calling_super_plays_the_parents_episodes_bit_for_bit(name: str, hooks: tuple[str, ...]) -> None:
    env_id = FIRST_ENV[name]
    parent = make_agent(name, env_id)
    child = copy.deepcopy(parent)  # the same parameters (an SB3 policy's weights too), of the subclass
    child.__class__ = through_super(type(parent), hooks)
    # the plain step plays a child with its own select; one with only its own answer keeps the fast step, and
    # its answer reads that step's (Opt-KG's state was updated twice, SB3's policy sampled twice)
    assert fast_paths(type(parent)).step and fast_paths(type(child)).step == ("select" not in hooks)
    budget = small_kwargs(env_id)  # the budget (horizon) an untrained SB3 policy is made for
    np.testing.assert_array_equal(episode_actions(env_id, child, **budget), episode_actions(env_id, parent, **budget))


class LeastPulledOptKG(OptKG):
    def select(self, obs: dict) -> np.ndarray:
        return self.argmin(obs["counts"])


def test_a_subclass_that_replaces_select_submits_opt_kgs_bayes_decision() -> None:
    """Opt-KG answers ``1{I(a, b) >= 1/2}`` with ``I = P(vartheta >= theta | Beta(a, b))``, not the empirical rule
    (an arm never pulled, theta = 1/2, uniform prior: I = 1/2, answered 1; the empirical rule answers 0)."""
    env = gym.make_vec("ThresholdingBandit-v0", num_envs=3, vectorization_mode="vector_entry_point", budget=40)
    obs, _ = env.reset(seed=0)
    agent = LeastPulledOptKG()
    agent.reset(seed=1)
    for step in range(40):
        action = agent.act(obs)
        counts, sums = obs["counts"].astype(np.float64), obs["sums"].astype(np.float64)
        posterior = special.betaincc(1.0 + sums, 1.0 + counts - sums, obs["threshold"].astype(np.float64))
        np.testing.assert_array_equal(action[:, 1:], posterior >= 0.5, err_msg=f"step {step}")
        if step == 0:
            assert (action[:, 1:] == 1).all()
        obs, *_ = env.step(action)
    env.close()


class SometimesLSA(LSA):
    """LSA's arm on even steps only, the least pulled arm otherwise; the empirical answer of its own: the compiled
    step runs on every other observation, so each of its runs must recompute every arm's index."""

    def select(self, obs: dict) -> np.ndarray:
        steps = int(obs["counts"][0].sum())
        return super().select(obs) if steps % 2 == 0 else self.argmin(obs["counts"])

    def answer(self, obs: dict) -> np.ndarray:
        return (obs["sums"] / np.maximum(obs["counts"], 1) >= obs["threshold"]).astype(np.int64)


def lsa_arm(obs: dict, alpha: float = 1.35) -> np.ndarray:
    """LSA's arm by numpy (``tie_break="index"``): each arm once in index order, then the smallest
    ``alpha T_i Delta_i^2 + 0.5 ln T_i``, ties to the smallest index."""
    counts, sums = obs["counts"].astype(np.float64), obs["sums"].astype(np.float64)
    gap = np.abs(sums / np.maximum(counts, 1.0) - obs["threshold"].astype(np.float64))
    index = alpha * counts * gap ** 2 + 0.5 * np.log(np.maximum(counts, 1.0))
    made = counts.sum(axis=1).astype(np.int64)
    return np.where(made < counts.shape[1], made, np.argmin(index, axis=1))


def test_the_compiled_step_recomputes_every_index_when_it_missed_an_observation() -> None:
    env = gym.make_vec("ThresholdingBandit-v0", num_envs=4, vectorization_mode="vector_entry_point", budget=120)
    obs, _ = env.reset(seed=0)
    agent = SometimesLSA(tie_break="index")
    agent.reset(seed=1)
    checked = 0
    for step in range(120):
        action = agent.act(obs)
        if step % 2 == 0:
            np.testing.assert_array_equal(action[:, 0], lsa_arm(obs), err_msg=f"step {step}")
            checked += step >= obs["counts"].shape[1]
        obs, *_ = env.step(action)
    env.close()
    assert checked > 40


class UniformTrackAndStop(TrackAndStop):
    """Round robin in place of D-tracking: Track-and-Stop's GLR stopping rule and answer stand."""

    def select(self, obs: dict) -> np.ndarray:
        return self.argmin(obs["counts"])


def test_a_subclass_that_replaces_select_keeps_the_parents_stopping_rule_and_answer() -> None:
    means = [0.7, 0.5, 0.4]
    child = UniformTrackAndStop()
    actions = episode_actions("BestArmIdentification-v0", child, means=means, setting="fixed_confidence",
                              budget=20_000)
    arms, bits = actions[..., 0], actions[..., 1:]
    stops = arms == len(means)
    assert stops.any(axis=0).all()  # the GLR test stops every copy before the cap
    first = stops.argmax(axis=0)  # the step of each copy's first stop: its pulls before it
    assert (first < 20_000).all() and (first > 3 * len(means)).all()
    answers = bits[first, np.arange(arms.shape[1])]
    np.testing.assert_array_equal(answers.sum(axis=1), 1)  # one recommended arm
    assert (answers[:, 0] == 1).mean() >= 0.75  # delta = 0.1 by default: the best arm, but for bad luck
