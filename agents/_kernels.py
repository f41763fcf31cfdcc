"""Compiled kernels of the agents (numba): one pass over the copies per ``act``, and whole-episode rollouts.

Imported on the first ``act``, not with ``bandit_gym.agents`` (numba takes about a second to load).

An *arm rule* is a pair of scalar functions that the kernels compile in:

- ``fresh(count, total, theta, p0, p1, q) -> (index, bit, s1, s2)``: an arm's state from its statistics (count
  of pulls, sum of samples) at an episode start or after a batched allocation;
- ``pulled(count, total, one, s1, s2, theta, p0, p1, q) -> (index, bit, s1, s2)``: the state after one more
  pull (``one``: the sample was 1) from the previous state ``(s1, s2)``,

where ``index`` is the arm's score (the smallest is pulled), ``bit`` its answer bit, ``(s1, s2)`` two floats of
state the rule keeps per arm (Opt-KG's posterior), ``p0, p1`` the agent's constants and ``q`` a constant per copy
(UCBE's exploration parameter). The per-step kernel and the rollout compile the same rule, so they agree bit for
bit, and the per-step kernel reads exactly the float32 statistics of the observation (as float64).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numba
import numpy as np

from bandit_gym._dispatch import compile_pair
from bandit_gym.agents.uniform import cycle
from bandit_gym.envs._kernels import stream_uniform

GROUP = 8
"""Copies played in lockstep by a rollout: their pulls are independent, so the processor overlaps them."""

# Helpers take scalars only: a compiled call that passes arrays pays reference counting on every call.


def _jit(function: Callable[..., Any]) -> Any:
    return numba.njit(inline="always", error_model="numpy")(function)


@numba.njit(cache=True, nogil=True)
def best_arms(values: np.ndarray, arm_at: np.ndarray, largest: bool, out: np.ndarray) -> np.ndarray:
    """Per copy n, the arm ``arm_at[n, p]`` at the first position p of the smallest (or largest) ``values[n, p]``."""
    for n in range(values.shape[0]):
        best, position = values[n, 0], 0
        for p in range(1, values.shape[1]):
            v = values[n, p]
            if (v > best) if largest else (v < best):
                best, position = v, p
        out[n] = arm_at[n, position]
    return out


@numba.njit(cache=True, nogil=True)
def empirical_answers(last: np.ndarray, counts: np.ndarray, sums: np.ndarray, theta: np.ndarray,
                      arms: np.ndarray, action: np.ndarray) -> np.ndarray:
    """Fill ``action[n] = [arms[n], answer bits]`` with the empirical answer ``1{theta_hat_i >= theta}``
    (float64), rewriting only the bit of the arm pulled last where ``last[n] >= 0``, every bit at an episode
    start or after a batched allocation."""
    for n in range(arms.shape[0]):
        a, th = np.int64(last[n, 0]), np.float64(theta[n, 0])
        for i in range(counts.shape[1]) if a < 0 else range(a, a + 1):
            action[n, 1 + i] = np.float64(sums[n, i]) / max(np.float64(counts[n, i]), 1.0) >= th
        action[n, 0] = arms[n]
    return action


def parallel_pair(function: Callable[..., Any], parallel: Callable[..., Any] | None = None,
                  **options: Any) -> Callable[..., Any]:
    """Compile ``function`` (whose loop over copies is a ``numba.prange``) twice, serial and parallel (or
    ``parallel`` for the parallel variant, ``compile_pair``), and return a caller that runs one of them
    (``bandit_gym._dispatch.Kernel``; the copies are counted by the last argument's length)."""
    kernel = compile_pair(function, parallel=parallel, **options)

    def call(*args: Any) -> Any:
        return kernel(len(args[-1]), *args)

    return call


@functools.cache
def index_rule(index: Callable[..., float]) -> tuple[Any, Any]:
    """The arm rule of an index policy with ``index(count, total, theta, p0, q)`` (plain Python on floats)
    and the empirical answer ``total / max(count, 1) >= theta``."""
    arm_index = _jit(index)

    def fresh(count: float, total: float, theta: float, p0: float, p1: float, q: float) -> tuple:
        return arm_index(count, total, theta, p0, q), total / max(count, 1.0) >= theta, 0.0, 0.0

    jitted = _jit(fresh)

    def pulled(count: float, total: float, one: bool, s1: float, s2: float, theta: float, p0: float, p1: float,
               q: float) -> tuple:
        return jitted(count, total, theta, p0, p1, q)

    STATELESS.add(jitted)
    return jitted, _jit(pulled)


STATELESS: set[Any] = set()
"""The ``fresh`` functions of arm rules without state of their own (index rules): their steps skip the state."""


@functools.cache
def policy_step(fresh: Any, pulled: Any) -> Any:
    """Compile one ``act`` of an arm rule over a batch: per copy, update the arm pulled last (every arm at an
    episode start, ``last = -1``, or after a batched allocation, ``last = -2``), then pull each arm once in
    the copy's arm order while ``init_pulls`` and fewer than K pulls were made, else the arm of smallest index
    value at the first position of the copy's arm order. Rules without state (``STATELESS``) neither read nor
    write it."""
    stateful = fresh not in STATELESS

    def step(init_pulls: bool, p0: float, p1: float, per_copy: np.ndarray, last: np.ndarray, last_value: np.ndarray,
             counts: np.ndarray, sums: np.ndarray, theta: np.ndarray, budget_left: np.ndarray,
             total_budget: np.ndarray, s1: np.ndarray, s2: np.ndarray, values: np.ndarray, arm_at: np.ndarray,
             position_of: np.ndarray, action: np.ndarray) -> np.ndarray:
        k = counts.shape[1]
        for n in numba.prange(counts.shape[0]):
            th, q, a = np.float64(theta[n, 0]), per_copy[n], np.int64(last[n, 0])
            for i in range(k) if a < 0 else range(a, a + 1):
                c, s = np.float64(counts[n, i]), np.float64(sums[n, i])
                if a < 0:
                    v, bit, r1, r2 = fresh(c, s, th, p0, p1, q)
                elif stateful:
                    v, bit, r1, r2 = pulled(c, s, last_value[n, 0] > 0.5, s1[n, i], s2[n, i], th, p0, p1, q)
                else:
                    v, bit, r1, r2 = pulled(c, s, last_value[n, 0] > 0.5, 0.0, 0.0, th, p0, p1, q)
                if stateful:
                    s1[n, i], s2[n, i] = r1, r2
                values[n, position_of[n, i]] = v
                action[n, 1 + i] = bit
            pulls = total_budget[n] - np.int64(budget_left[n, 0])
            if init_pulls and pulls < k:
                action[n, 0] = arm_at[n, pulls]
                continue
            best, position = values[n, 0], 0
            for p in range(1, k):
                if values[n, p] < best:
                    best, position = values[n, p], p
            action[n, 0] = arm_at[n, position]
        return action

    return parallel_pair(step)


@functools.cache
def policy_rollout(fresh: Any, pulled: Any) -> Any:
    """Compile whole episodes of an arm rule on the Bernoulli thresholding bandit with common random numbers:
    the s-th pull of arm i in copy n returns ``1{u < mu_{n,i}}`` for draw s of the stream ``seeds[n, i]``, as
    the env's step does, and the rule's state evolves as under ``policy_step``; the answer formed from t
    samples is scored at every checkpoint t (regret: misclassified counted arms; error: any). ``round_robin``
    pulls the arm at position ``t mod K`` of the copy's arm order instead of the smallest index (Uniform)."""

    @numba.njit(nogil=True, error_model="numpy")
    def play(means: np.ndarray, seeds: np.ndarray, theta: float, truth: np.ndarray, counted: np.ndarray,
             checkpoints: np.ndarray, budget: int, regret: np.ndarray, error: np.ndarray, round_robin: bool,
             init_pulls: bool, p0: float, p1: float, per_copy: np.ndarray, arm_at: np.ndarray,
             position_of: np.ndarray) -> None:
        num, k = means.shape
        counts, sums = np.zeros((GROUP, k), np.float32), np.zeros((GROUP, k), np.float32)
        s1, s2 = np.zeros((GROUP, k)), np.zeros((GROUP, k))
        values, answer = np.zeros((GROUP, k)), np.zeros((GROUP, k), np.bool_)
        for first in range(0, num, GROUP):
            size = min(GROUP, num - first)
            for j in range(size):
                for i in range(k):
                    counts[j, i], sums[j, i] = 0.0, 0.0
                    v, answer[j, i], s1[j, i], s2[j, i] = fresh(0.0, 0.0, theta, p0, p1, per_copy[first + j])
                    values[j, position_of[first + j, i]] = v
            checkpoint = 0
            for t in range(budget + 1):
                if checkpoint < checkpoints.size and checkpoints[checkpoint] == t:  # answers from t samples
                    for j in range(size):
                        wrong = 0
                        for i in range(k):
                            wrong += counted[first + j, i] and answer[j, i] != truth[first + j, i]
                        regret[first + j, checkpoint], error[first + j, checkpoint] = wrong, wrong > 0
                    checkpoint += 1
                if t == budget:
                    break
                for j in range(size):
                    n = first + j
                    if round_robin or (init_pulls and t < k):
                        a = arm_at[n, cycle(t, k)]
                    else:
                        best, position = values[j, 0], 0
                        for p in range(1, k):
                            if values[j, p] < best:
                                best, position = values[j, p], p
                        a = arm_at[n, position]
                    one = stream_uniform(seeds[n, a], np.uint64(counts[j, a])) < means[n, a]
                    c, s = counts[j, a] + np.float32(1.0), sums[j, a] + np.float32(one)
                    counts[j, a], sums[j, a] = c, s
                    v, answer[j, a], s1[j, a], s2[j, a] = pulled(np.float64(c), np.float64(s), one, s1[j, a],
                                                                 s2[j, a], theta, p0, p1, per_copy[n])
                    values[j, position_of[n, a]] = v

    return play


def no_index(count: float, total: float, theta: float, p0: float, q: float) -> float:
    """The index of a policy that does not use one (round robin)."""
    return 0.0
