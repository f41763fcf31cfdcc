"""Play one episode of a single env, or one episode in every copy of a vector env, and return its metrics."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import VectorEnv

from bandit_gym import metrics
from bandit_gym.agents.base import Agent
from bandit_gym.envs._base import engine_of
from bandit_gym.streams import stream_seeds
from bandit_gym.wrappers import (
    RecordAnytimeRegret,
    RecordAnytimeRegretVector,
    RecordEpisodeRegret,
    RecordEpisodeRegretVector,
)
from bandit_gym.wrappers._trackers import checkpoint_budgets


def play_episode(
    env: gym.Env, agent: Agent, seed: int | None = None, budgets: Sequence[int] | None = None,
    options: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Play one episode and return ``info["bandit"]`` of ``RecordEpisodeRegret``
    (plus ``"anytime"`` when ``budgets`` are given). The agent is reset with the same seed; ``options`` go to
    the env's ``reset`` (e.g. ``{"means": [...]}``, the instance to play)."""
    wrapped: gym.Env = RecordEpisodeRegret(env)
    if budgets is not None:
        wrapped = RecordAnytimeRegret(wrapped, budgets)
    agent.reset(seed=seed)
    obs, _ = wrapped.reset(seed=seed, options=options)
    while True:
        obs, _, terminated, truncated, info = wrapped.step(agent.act(obs))
        if terminated or truncated:
            result = dict(info["bandit"])
            if budgets is not None:
                result["anytime"] = info["anytime"]
            return result


def play_vector(
    env: VectorEnv,
    agent: Agent,
    seed: int | None = None,
    budgets: Sequence[int] | None = None,
    agent_seed: int | None = None,
    options: dict[str, Any] | None = None,
) -> dict[str, np.ndarray]:
    """Play one episode in each of the N copies of a native vector env; return one array of N entries per
    metric (and ``(N, B)`` arrays under ``"anytime_regret"`` / ``"anytime_error"`` when ``budgets`` are given).
    Copies that finish early are autoreset by the env; only their first episode is kept. The agent is reset with
    ``agent_seed`` (default: ``seed``); ``options`` go to the env's ``reset`` (the instance every copy plays)."""
    n = env.num_envs
    wrapped: VectorEnv = RecordEpisodeRegretVector(env)
    if budgets is not None:
        wrapped = RecordAnytimeRegretVector(wrapped, budgets)
    agent.reset(seed=seed if agent_seed is None else agent_seed)
    obs, _ = wrapped.reset(seed=seed, options=options)
    result: dict[str, np.ndarray] = {}
    pending = np.ones(n, dtype=bool)
    while pending.any():
        obs, _, _, _, info = wrapped.step(agent.act(obs))
        if "_bandit" not in info:
            continue
        new = info["_bandit"] & pending
        for key, value in info["bandit"].items():
            if key != "answer":  # the metrics (play_episode also returns the final answer)
                result.setdefault(key, np.zeros(n, dtype=value.dtype))[new] = value[new]
        if budgets is not None:
            for key in ("regret", "error"):
                result.setdefault("anytime_" + key, np.zeros((n, len(budgets))))[new] = info["anytime"][key][new]
        pending &= ~new
    return result


def play_batched(
    env: VectorEnv, agent: Agent, seed: int | None = None, agent_seed: int | None = None
) -> dict[str, np.ndarray] | None:
    """``play_vector`` through the agent's batched pulls (``batch_pulls``):
    each batch is drawn by ``env.unwrapped.allocate`` (exact binomial or stream sums, charged to the budget like
    single pulls), and the agent acts through ``step`` only where its batch is empty (to answer or stop). None if
    the env has no ``allocate`` or the agent no batched form. Same metrics as ``play_vector``."""
    core: Any = env.unwrapped
    if not hasattr(core, "allocate"):
        return None
    n = env.num_envs
    wrapped: VectorEnv = RecordEpisodeRegretVector(env)
    agent.reset(seed=seed if agent_seed is None else agent_seed)
    obs, _ = wrapped.reset(seed=seed)
    result: dict[str, np.ndarray] = {}
    pending = np.ones(n, dtype=bool)
    while pending.any():
        pulls = agent.batch_pulls(obs)
        if pulls is None:
            return None
        pulls[~pending] = 0  # copies whose first episode ended wait (their autoreset comes with the next step)
        if pulls.any():
            obs = core.allocate(pulls)
            continue
        obs, _, _, _, info = wrapped.step(agent.act(obs))
        if "_bandit" in info:
            new = info["_bandit"] & pending
            for key, value in info["bandit"].items():
                if key != "answer":
                    result.setdefault(key, np.zeros(n, dtype=value.dtype))[new] = value[new]
            pending &= ~new
    return result


def play_compiled(
    env: VectorEnv,
    agent: Agent,
    seed: int | None = None,
    budgets: Sequence[int] | None = None,
    agent_seed: int | None = None,
) -> dict[str, np.ndarray] | None:
    """``play_vector`` in compiled code, for a Bernoulli thresholding, best-arm or top-K env and an agent that
    has a compiled rollout (``compiled_rollout``) and a fixed budget; None otherwise. Returns the
    same metrics as ``play_vector`` (thresholding: ``regret``, ``error``, ``pulls``; best arm and top K:
    ``regret``, ``error``, ``invalid``, ``pulls``; with ``budgets``, ``anytime_regret`` and ``anytime_error``).

    With common random numbers the numbers are those of ``play_vector`` from the same seeds, bit for bit:
    the samples come from the same streams and the agent's state evolves by the same arithmetic. Without them
    (best arm and top K only; the thresholding env then plays step by step) each copy's samples come from
    fresh streams keyed from the env's generator: the same distribution as the vector env, whose bulk draws a
    per-copy rollout cannot follow, but other numbers. The env is left at its reset state."""
    engine: Any = engine_of(env)
    if not engine.pure_exploration or not engine.bernoulli:
        return None
    if not engine.common_random_numbers and not engine.family.answers_a_set:  # thresholding
        return None
    if engine.budget_range is not None:  # a budget per episode: the kernels play one budget
        return None
    agent.reset(seed=seed if agent_seed is None else agent_seed)
    obs, _ = env.reset(seed=seed)
    plan = agent.rollout_plan(obs)
    if plan is None:
        return None
    kernel, args = plan
    checkpoint_budgets(engine, [engine.budget] if budgets is None else budgets)
    checkpoints = np.union1d(np.asarray([] if budgets is None else budgets, dtype=np.int64), [engine.budget])
    if engine.family.answers_a_set:  # best arm, top K
        result, regret, error = _best_arm_rollout(env, engine, kernel, args, checkpoints)
    else:
        n = env.num_envs
        regret, error = np.zeros((n, checkpoints.size)), np.zeros((n, checkpoints.size))
        theta = float(np.float32(engine.threshold))  # as the agent reads it from the float32 observation
        kernel(engine.means, engine.stream_seeds, theta, metrics.true_classes(engine.means, engine.threshold),
               metrics.counted_arms(engine.means, engine.threshold, engine.epsilon), checkpoints, engine.budget,
               regret, error, *args)
        result = {"regret": regret[:, -1].copy(), "error": error[:, -1].copy(), "pulls": np.full(n, engine.budget)}
    if budgets is not None:
        columns = np.searchsorted(checkpoints, budgets)
        result["anytime_regret"], result["anytime_error"] = regret[:, columns], error[:, columns]
    return result


def _best_arm_rollout(env: VectorEnv, engine: Any, kernel: Any, args: tuple[Any, ...],
                      checkpoints: np.ndarray) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]:
    """Whole best-arm / top-K episodes; the answers at the checkpoints are scored by the env's own metrics.
    Returns the final metrics and the regret and error at every checkpoint, ``(N, C)``."""
    n, k = engine.means.shape
    seeds = engine.stream_seeds
    if not engine.common_random_numbers:  # fresh streams, keyed from the env's generator
        keys = env.np_random.integers(0, 2**64 - 1, size=n, dtype=np.uint64, endpoint=True)
        seeds = stream_seeds(keys, k)
    answers = np.zeros((n, checkpoints.size, k), dtype=np.int8)
    pulls = np.zeros(n, dtype=np.int64)
    epsilon = float(np.float32(engine.epsilon))  # as the agent reads it from the float32 observation
    kernel(engine.means, seeds, engine.m, epsilon, engine.budget, checkpoints, answers, pulls, *args)
    scores = engine.answer_metrics(answers.reshape(n * checkpoints.size, k),
                                   np.repeat(engine.means, checkpoints.size, axis=0))
    at = {key: value.reshape(n, checkpoints.size) for key, value in scores.items()}
    result = {key: value[:, -1].copy() for key, value in at.items()}
    return {**result, "pulls": pulls}, at["regret"], at["error"]
