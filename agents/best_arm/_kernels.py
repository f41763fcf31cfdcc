"""The drivers of the best-arm agents' compiled rules (numba): one pass over the copies per ``act``, and whole
episodes. Each rule is written in its agent's file (``BestArmAgent``
describes its arguments); ``decide_step`` compiles a rule into one ``act`` over a batch, ``decide_rollout``
into whole episodes on the Bernoulli best-arm env with common random numbers. Both call the same rule, so they
agree bit for bit.

Imported on the first ``act``, not with ``bandit_gym.agents`` (numba takes about a second to load).
"""

from __future__ import annotations

import functools
from typing import Any

import numba
import numpy as np

from bandit_gym.agents._kernels import parallel_pair
from bandit_gym.envs._kernels import stream_uniform

WORK_ROWS = 6
"""Scratch rows per copy (SELECT-ARM uses all six: means, beta, U, L, B, J bits)."""


@functools.cache
def decide_step(rule: Any) -> Any:
    """One ``act`` of ``rule`` over a batch: writes ``action[n] = [arm, answer bits]`` for every copy."""

    def step(m: np.ndarray, epsilon: np.ndarray, budget_left: np.ndarray, total_budget: np.ndarray,
             counts: np.ndarray, sums: np.ndarray, constants: np.ndarray, state: np.ndarray, work: np.ndarray,
             action: np.ndarray) -> np.ndarray:
        for n in numba.prange(counts.shape[0]):
            made = total_budget[n] - np.int64(budget_left[n, 0])
            action[n, 0] = rule(counts[n], sums[n], made, total_budget[n], np.int64(m[n, 0]),
                                np.float64(epsilon[n, 0]), constants[n], state[n], work[n], action[n, 1:], True)
        return action

    return parallel_pair(step)


@functools.cache
def decide_rollout(rule: Any) -> Any:
    """Whole episodes of ``rule`` on the Bernoulli best-arm env: the s-th pull of arm i in copy n returns
    ``1{u < mu_{n,i}}`` for draw s of the stream ``seeds[n, i]``, as the env's step does with common random
    numbers. An episode ends when the rule stops (arm K) or at the answer step after ``budget`` pulls; the answer
    submitted when exactly ``checkpoints[c]`` pulls are made goes to ``answers[n, c]`` (an episode that stopped
    before keeps its final answer), the pulls made to ``pulls[n]``."""

    @numba.njit(nogil=True, error_model="numpy")
    def play(means: np.ndarray, seeds: np.ndarray, m: int, epsilon: float, budget: int, checkpoints: np.ndarray,
             answers: np.ndarray, pulls: np.ndarray, constants: np.ndarray, state: np.ndarray,
             work: np.ndarray) -> None:
        num, k = means.shape
        counts, sums = np.zeros(k, np.float32), np.zeros(k, np.float32)
        answer = np.zeros(k, np.int64)
        for n in range(num):
            counts[:], sums[:], answer[:] = 0.0, 0.0, 0
            made, c = 0, 0
            while True:
                scored = made == budget or (c < checkpoints.shape[0] and checkpoints[c] == made)
                arm = rule(counts, sums, made, budget, m, epsilon, constants[n], state[n], work[n], answer, scored)
                while c < checkpoints.shape[0] and checkpoints[c] == made:
                    answers[n, c] = answer
                    c += 1
                if arm == k or made == budget:
                    break
                one = stream_uniform(seeds[n, arm], np.uint64(counts[arm])) < means[n, arm]
                counts[arm] += np.float32(1.0)
                sums[arm] += np.float32(one)
                made += 1
            while c < checkpoints.shape[0]:
                answers[n, c] = answer
                c += 1
            pulls[n] = made

    return play
