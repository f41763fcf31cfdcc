"""Compiled kernels of the agents (numba): one pass over the copies per ``act``, and whole-episode rollouts.

An *arm rule* is a pair of scalar functions, module-level in its agent's file, that the drivers here take as their
first arguments (in the agent's entry points, ``bandit_gym.jit``: ``step``, ``parallel_step`` and ``rollout``, which
numba caches on disk):

- ``fresh(index, count, total, theta, p0, p1, q) -> (value, bit, s1, s2)``: an arm's state from its statistics
  (count of pulls, sum of samples) at an episode start or after a batched allocation;
- ``pulled(index, count, total, one, s1, s2, theta, p0, p1, q) -> (value, bit, s1, s2)``: the state after one
  more pull (``one``: the sample was 1) from the previous state ``(s1, s2)``,

where ``index`` is the policy's index function, which the drivers hand on (an index policy's rule is
``index_fresh`` / ``index_pulled`` with its index; Opt-KG's ignores it), ``value`` the arm's score (the smallest
is pulled), ``bit`` its answer bit, ``(s1, s2)`` two floats of
state the rule keeps per arm (Opt-KG's posterior), ``p0, p1`` the agent's constants and ``q`` a constant per copy
(UCBE's exploration parameter). The per-step kernel and the rollout compile the same rule, so they agree bit for
bit, and the per-step kernel reads exactly the float32 statistics of the observation (as float64).
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

from bandit_gym.envs._kernels import stream_uniform
from bandit_gym.jit import called, driver, inline, kernel

GROUP = 8
"""Copies played in lockstep by a rollout: their pulls are independent, so the processor overlaps them."""


def round_robin_arm(pulls: Any, k: int) -> Any:
    """The position (in the copy's arm order) that round robin pulls after ``pulls`` pulls, ``pulls mod K`` (the
    first position first): the one definition of the cycle, called on numpy arrays and from compiled code alike
    (Uniform's ``act``, its batched allocation, its compiled rules, and the initial round of the thresholding
    index policies)."""
    return pulls % k


cycle = called(round_robin_arm)
"""Round robin (Uniform's, also the index policies' initial round), compiled."""


@inline
def copy_into(source: np.ndarray, out: np.ndarray) -> None:
    """``out[:] = source`` for two 1-D arrays of one length, element by element: numba compiles an array-to-array
    slice assignment with the message of its shape check (integers formatted into a string), which cost about 4
    CPU-seconds of a best-arm rollout's first compilation (measured: Track-and-Stop's, against this loop).
    Inlined where it is called."""
    for i in range(source.shape[0]):
        out[i] = source[i]


# Helpers take scalars only: a compiled call that passes arrays pays reference counting on every call.


@kernel
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


@kernel
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


@driver
def index_fresh(index: Any, count: float, total: float, theta: float, p0: float, p1: float, q: float) -> tuple:
    """The ``fresh`` of an index policy, ``index(count, total, theta, p0, q)`` (smaller is pulled first): the index,
    the empirical answer ``total / max(count, 1) >= theta``, no state."""
    return index(count, total, theta, p0, q), total / max(count, 1.0) >= theta, 0.0, 0.0


@driver
def index_pulled(index: Any, count: float, total: float, one: bool, s1: float, s2: float, theta: float, p0: float,
                 p1: float, q: float) -> tuple:
    """The ``pulled`` of an index policy: ``index_fresh``, the index depending on the statistics alone."""
    return index_fresh(index, count, total, theta, p0, p1, q)


@driver
def arm_step(fresh: Any, pulled: Any, index: Any, stateful: bool, args: tuple[Any, ...]) -> np.ndarray:
    """One ``act`` of the arm rule ``(fresh, pulled)`` over a batch: per copy, update the arm pulled last (every
    arm at an episode start, ``last = -1``, or after a batched allocation, ``last = -2``), then pull each arm once
    in the copy's arm order while ``init_pulls`` and fewer than K pulls were made, else the arm of smallest index
    value at the first position of the copy's arm order. A rule without state (``stateful`` False: an index rule)
    neither reads nor writes it. ``args`` holds ``(init_pulls, p0, p1, per_copy, last, last_value, counts, sums,
    theta, budget_left, total_budget, s1, s2, values, arm_at, position_of, action)``. Inlined in an entry point
    compiled with ``parallel=True`` the ``prange`` runs the copies on all cores."""
    (init_pulls, p0, p1, per_copy, last, last_value, counts, sums, theta, budget_left, total_budget, s1, s2, values,
     arm_at, position_of, action) = args
    k = counts.shape[1]
    for n in numba.prange(counts.shape[0]):
        th, q, a = np.float64(theta[n, 0]), per_copy[n], np.int64(last[n, 0])
        for i in range(k) if a < 0 else range(a, a + 1):
            c, s = np.float64(counts[n, i]), np.float64(sums[n, i])
            if a < 0:
                v, bit, r1, r2 = fresh(index, c, s, th, p0, p1, q)
            elif stateful:
                v, bit, r1, r2 = pulled(index, c, s, last_value[n, 0] > 0.5, s1[n, i], s2[n, i], th, p0, p1, q)
            else:
                v, bit, r1, r2 = pulled(index, c, s, last_value[n, 0] > 0.5, 0.0, 0.0, th, p0, p1, q)
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


@driver
def arm_play(fresh: Any, pulled: Any, index: Any, episodes: tuple[Any, ...]) -> None:
    """Whole episodes of the arm rule ``(fresh, pulled)`` on the Bernoulli thresholding bandit with common random
    numbers: the s-th pull of arm i in copy n returns ``1{u < mu_{n,i}}`` for draw s of the stream ``seeds[n, i]``,
    as the env's step does, and the rule's state evolves as under ``arm_step``; the answer formed from t samples is
    scored at every checkpoint t (regret: misclassified counted arms; error: any). ``round_robin`` pulls the arm at
    position ``t mod K`` of the copy's arm order instead of the smallest index (Uniform). ``episodes`` holds
    ``(means, seeds, theta, truth, counted, checkpoints, budget, regret, error, round_robin, init_pulls, p0, p1,
    per_copy, arm_at, position_of)``."""
    (means, seeds, theta, truth, counted, checkpoints, budget, regret, error, round_robin, init_pulls, p0, p1,
     per_copy, arm_at, position_of) = episodes
    num, k = means.shape
    counts, sums = np.zeros((GROUP, k), np.float32), np.zeros((GROUP, k), np.float32)
    s1, s2 = np.zeros((GROUP, k)), np.zeros((GROUP, k))
    values, answer = np.zeros((GROUP, k)), np.zeros((GROUP, k), np.bool_)
    for first in range(0, num, GROUP):
        size = min(GROUP, num - first)
        for j in range(size):
            for i in range(k):
                counts[j, i], sums[j, i] = 0.0, 0.0
                v, answer[j, i], s1[j, i], s2[j, i] = fresh(index, 0.0, 0.0, theta, p0, p1, per_copy[first + j])
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
                v, answer[j, a], s1[j, a], s2[j, a] = pulled(index, np.float64(c), np.float64(s), one,
                                                             s1[j, a], s2[j, a], theta, p0, p1, per_copy[n])
                values[j, position_of[n, a]] = v


def no_index(count: float, total: float, theta: float, p0: float, q: float) -> float:
    """The index of a policy that does not use one (round robin)."""
    return 0.0


no_index_compiled = called(no_index)
