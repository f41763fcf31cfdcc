"""Compiled per-step kernels of the envs (numba), one pass over the copies per step: the pure-exploration step
(thresholding and best-arm envs) and the threshold bandit's round.

Imported on the first ``step``, not by ``import bandit_gym`` (numba takes about a second to load). Each kernel
does exactly what the array code it replaced did, in the same floating-point types, so trajectories are the
same bit for bit: Bernoulli samples ``1{u < mu}`` from the same uniforms, float32 counts and sums, float32
means ``sum / count``; Gaussian sums in float64; the threshold bandit's ``X = #{j: u < F(j)}``.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

from bandit_gym._dispatch import Kernel
from bandit_gym.jit import called, kernel, parallel_called

#: how ``pull`` gets its samples
BERNOULLI, GAUSSIAN, BERNOULLI_STREAMS, SAMPLES = 0, 1, 2, 3

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


@called
def stream_uniform(seed: np.uint64, draw: np.uint64) -> float:
    """Draw ``draw`` (0-based) of the SplitMix64 stream seeded ``seed``: ``bandit_gym.streams.stream_uniforms``
    for one element."""
    z = seed + (draw + np.uint64(1)) * _GOLDEN
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    z = z ^ (z >> np.uint64(31))
    return (float(z >> np.uint64(11)) + 0.5) * 2.0**-53


def _invalid_actions(actions: np.ndarray, k: int) -> int:
    """The number of rows of an ``(N, K + 1)`` integer array that are not ``[arm in 0..K, K answer bits]``: the
    bits' OR must be 0 or 1 (a negative entry sets the sign bit)."""
    bad = 0
    for n in numba.prange(actions.shape[0]):
        bits = np.int64(0)
        for j in range(1, k + 1):
            bits |= actions[n, j]
        arm = actions[n, 0]
        bad += ((bits >> 1) != 0) | (arm < 0) | (arm > k)
    return bad


def _pull(
    mode: int, arms: np.ndarray, rows: np.ndarray, noise: np.ndarray, seeds: np.ndarray, means: np.ndarray,
    sigma: float, cost: float, left: np.ndarray, counts: np.ndarray, sums: np.ndarray, sums64: np.ndarray,
    mean_obs: np.ndarray, budget_left: np.ndarray, last_arm: np.ndarray, last_value: np.ndarray,
    rewards: np.ndarray, stop: np.ndarray,
) -> int:
    """One step of every copy in ``rows``: pull ``arms[n]``, or mark the copy in ``stop`` when it asks to stop
    (arm K) or has no pull left. Returns the number of stopping copies. ``noise`` holds copy n's uniform
    (``BERNOULLI``), standard normal (``GAUSSIAN``) or sample (``SAMPLES``, custom arms: summed in float64 like
    Gaussian ones); ``BERNOULLI_STREAMS`` draws from the arm's stream."""
    k = counts.shape[1]
    stopping = 0
    for n in numba.prange(arms.shape[0]):
        rewards[n] = 0.0
        stop[n] = False
        if not rows[n]:
            continue
        a = arms[n]
        if a == k or left[n] == 0:
            stop[n] = True
            stopping += 1
            continue
        c = counts[n, a] + np.float32(1.0)
        if mode == GAUSSIAN or mode == SAMPLES:  # noqa: SIM109 (a tuple test compiles worse in numba)
            x = noise[n] if mode == SAMPLES else means[n, a] + sigma * noise[n]
            s64 = sums64[n, a] + x
            sums64[n, a] = s64
            sums[n, a] = np.float32(s64)
            mean_obs[n, a] = np.float32(s64 / np.float64(c))
        else:
            u = noise[n] if mode == BERNOULLI else stream_uniform(seeds[n, a], np.uint64(counts[n, a]))
            x = 1.0 if u < means[n, a] else 0.0
            s = sums[n, a] + np.float32(x)
            sums[n, a] = s
            mean_obs[n, a] = s / c
        counts[n, a] = c
        left[n] -= 1
        budget_left[n, 0] = left[n]
        last_arm[n, 0] = a
        last_value[n, 0] = x
        rewards[n] = 0.0 - cost
    return stopping


def _threshold_pull(
    arms: np.ndarray, rows: np.ndarray, draws: np.ndarray, c: np.ndarray, survival: np.ndarray,
    best_survival: np.ndarray, censored: bool, exceed: np.ndarray, trials: np.ndarray, level_exceed: np.ndarray,
    level_trials: np.ndarray, counts: np.ndarray, sums: np.ndarray, count_obs: np.ndarray, sum_obs: np.ndarray,
    mean_obs: np.ndarray, last_arm: np.ndarray, last_value: np.ndarray, last_censored: np.ndarray,
    last_reward: np.ndarray, rewards: np.ndarray, expected: np.ndarray, best: np.ndarray,
) -> None:
    """One round of the threshold bandit in every copy of ``rows``: the value ``X = #{j: u < F_a(j)}`` of the
    pulled arm from copy n's uniform and instance ``survival[n]`` (``(N, K, m)``; ``best_survival`` ``(N, m)``),
    the reward ``1{X >= c}``, the level counts (DKW, or Kaplan-Meier with ``A = min(X, c)`` when censored) of the
    pulled arm only (O(m)), and the observation's entries."""
    m = survival.shape[2]
    for n in numba.prange(arms.shape[0]):
        rewards[n], expected[n], best[n] = 0.0, 0.0, 0.0
        if not rows[n]:
            continue
        a, level = arms[n], c[n]
        x = 0
        for j in range(m):
            x += draws[n] < survival[n, a, j]
        won = x >= level
        rewards[n], expected[n], best[n] = won, survival[n, a, level - 1], best_survival[n, level - 1]
        known, counted = (min(x, level), level) if censored else (x, m)
        for j in range(m):
            exceed[n, a, j] += j < known
            trials[n, a, j] += j < counted
            level_exceed[n, a * m + j] = exceed[n, a, j]
            level_trials[n, a * m + j] = trials[n, a, j]
        counts[n, a] += 1
        sums[n, a] += won
        count_obs[n, a], sum_obs[n, a] = counts[n, a], sums[n, a]
        mean_obs[n, a] = sums[n, a] / counts[n, a]
        last_arm[n, 0] = a
        last_value[n, 0] = -1 if censored and won else x
        last_censored[n, 0] = censored and won
        last_reward[n, 0] = won


# Each kernel serial (cached on disk) and parallel (compiled per process: numba's cache would file both
# compilations of one function under one name). The parallel variant runs only on batches of at least
# ``bandit_gym._dispatch.PARALLEL_COPIES`` copies.
_invalid = Kernel(kernel(_invalid_actions), parallel_called(_invalid_actions))
_pulls = Kernel(kernel(_pull), parallel_called(_pull))
_threshold_pulls = Kernel(kernel(_threshold_pull), parallel_called(_threshold_pull))


def actions_valid(actions: np.ndarray, k: int) -> bool:
    """Whether every row of an ``(N, K + 1)`` integer array is ``[arm in 0..K, K answer bits]``."""
    return _invalid(len(actions), actions, k) == 0


def pull(mode: int, arms: np.ndarray, *args: Any) -> int:
    """See ``_pull``; serial or on all cores (``bandit_gym._dispatch``)."""
    return _pulls(len(arms), mode, arms, *args)


def threshold_pull(arms: np.ndarray, *args: Any) -> None:
    """See ``_threshold_pull``; serial or on all cores (``bandit_gym._dispatch``)."""
    _threshold_pulls(len(arms), arms, *args)
