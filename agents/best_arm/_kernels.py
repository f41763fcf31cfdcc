"""The drivers of the best-arm agents' compiled rules (numba): one ``act`` over a batch of copies, and whole
episodes. Each rule is written in its agent's file (``BestArmAgent`` describes its arguments) with its entry points
(``bandit_gym.jit``), which hand it to these drivers as their first argument:

    @kernel
    def step(batch):               # one act over a batch, serial
        return each_copy(track_and_stop, batch)

    @called
    def one_copy(n, batch):        # one act of copy n
        copy_step(track_and_stop, n, batch)

    @parallel_kernel
    def parallel_step(batch):      # the same, the copies on all cores
        return over_copies(one_copy, batch)

    @kernel
    def rollout(episodes):         # whole episodes on the Bernoulli best-arm env
        play(track_and_stop, episodes)

The entry points name the rule as a global and take no function as an argument, so numba caches them on disk
(``bandit_gym.jit``); the step and the rollout call the same rule, so they agree bit for bit. A compiled function
is handed to the drivers only where they are inlined (``bandit_gym.jit.driver``): passed to a function compiled on
its own, it becomes an address known only to this process, and numba cannot cache what calls it.

The serial step runs ``copy_step`` inlined in its loop over copies (``each_copy``): one function to compile, link
and optimise less than a call per copy, about 0.6 CPU-s of a rule's first compilation. In the parallel step the
per-copy step (``one_copy``) is a function of its own, called from the loop over copies, not inlined in it:
numba (0.68) compiles a parallel loop body through its parfor passes, whose dead-code elimination decides which
stores through a view may be dropped (``pulled = arrays["pulled_leading"]; pulled[i] += 1`` with ``pulled`` not
read again) from an alias analysis that depends on the order of the body's blocks, and that order on the labels
numba numbers globally, so on what was compiled before. It dropped EB-TCI's tracking store after four other rules
had been compiled in the process, and EB-TCI then never stopped (``tests/agents/test_dispatch_isolation.py``). A
call keeps the store: the per-copy step is compiled by the serial pipeline, as the serial step is.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

from bandit_gym.agents._kernels import copy_into
from bandit_gym.envs._kernels import stream_uniform
from bandit_gym.jit import driver

WORK_ROWS = 7
"""Scratch rows per copy (SELECT-ARM uses six: means, beta, U, L, B, J bits; TTTS seven)."""


@driver
def copy_step(rule: Any, n: int, batch: tuple[Any, ...]) -> None:
    """One ``act`` of ``rule`` for copy n of ``batch`` (``over_copies``): writes ``action[n] = [arm, answer bits]``.

    The rule plays in the copy's arm order (``arm_at[n, p]`` = the arm at position p, the agent's tie rule): it is
    handed the statistics by position (``seen_counts``, ``seen_sums``, rewritten here) and keeps its answer by
    position in ``seen_answer``; its arm and answer are mapped back to arms. O(K)."""
    (m, epsilon, budget_left, total_budget, counts, sums, arm_at, seen_counts, seen_sums, seen_answer, constants,
     state, arrays, work, action) = batch
    k = counts.shape[1]
    for p in range(k):
        seen_counts[n, p] = counts[n, arm_at[n, p]]
        seen_sums[n, p] = sums[n, arm_at[n, p]]
    made = total_budget[n] - np.int64(budget_left[n, 0])
    position = rule(seen_counts[n], seen_sums[n], made, total_budget[n], np.int64(m[n, 0]), np.float64(epsilon[n, 0]),
                    constants[n], state[n], arrays[n], work[n], seen_answer[n], True)
    action[n, 0] = k if position >= k else arm_at[n, position]
    for p in range(k):
        action[n, 1 + arm_at[n, p]] = seen_answer[n, p]


@driver
def over_copies(one_copy: Any, batch: tuple[Any, ...]) -> np.ndarray:
    """One ``act`` over a batch: ``one_copy(n, batch)`` for every copy n, the rule's ``copy_step`` compiled as a
    function of its own. ``batch`` holds ``(m, epsilon, budget_left, total_budget, counts, sums, arm_at,
    seen_counts, seen_sums, seen_answer, constants, state, arrays, work, action)``. The parallel step's driver
    (``parallel_step``, an entry point compiled with ``parallel=True``): the ``prange`` runs the copies on all
    cores; the serial step uses ``each_copy``."""
    action = batch[-1]
    for n in numba.prange(action.shape[0]):
        one_copy(n, batch)
    return action


@driver
def each_copy(rule: Any, batch: tuple[Any, ...]) -> np.ndarray:
    """One ``act`` of ``rule`` over a batch, serially: ``copy_step`` for every copy, inlined in the loop (the serial
    entry point's driver; the serial pipeline keeps every store, so it needs no per-copy function, which would be
    one more function to compile and link). The same numbers as ``over_copies``."""
    action = batch[-1]
    for n in range(action.shape[0]):
        copy_step(rule, n, batch)
    return action


@driver
def play(rule: Any, episodes: tuple[Any, ...]) -> None:
    """Whole episodes of ``rule`` on the Bernoulli best-arm env. ``episodes`` holds ``(means, seeds, m, epsilon,
    budget, checkpoints, answers, pulls, constants, state, arrays, work)``: the s-th pull of arm i in copy n
    returns ``1{u < mu_{n,i}}`` for draw s of the stream ``seeds[n, i]``, as the env's step does with common random
    numbers. An episode ends when the rule stops (arm K) or at the answer step after ``budget`` pulls; the answer
    submitted when exactly ``checkpoints[c]`` pulls are made goes to ``answers[n, c]`` (an episode that stopped
    before keeps its final answer), the pulls made to ``pulls[n]``."""
    means, seeds, m, epsilon, budget, checkpoints, answers, pulls, constants, state, arrays, work = episodes
    num, k = means.shape
    counts, sums = np.zeros(k, np.float32), np.zeros(k, np.float32)
    answer = np.zeros(k, np.int64)
    for n in range(num):
        counts[:], sums[:], answer[:] = 0.0, 0.0, 0
        made, c = 0, 0
        while True:
            scored = made == budget or (c < checkpoints.shape[0] and checkpoints[c] == made)
            arm = rule(counts, sums, made, budget, m, epsilon, constants[n], state[n], arrays[n], work[n], answer,
                       scored)
            while c < checkpoints.shape[0] and checkpoints[c] == made:
                copy_into(answer, answers[n, c])
                c += 1
            if arm == k or made == budget:
                break
            one = stream_uniform(seeds[n, arm], np.uint64(counts[arm])) < means[n, arm]
            counts[arm] += np.float32(1.0)
            sums[arm] += np.float32(one)
            made += 1
        while c < checkpoints.shape[0]:
            copy_into(answer, answers[n, c])
            c += 1
        pulls[n] = made


def in_arm_order(play: Any, arm_at: np.ndarray) -> Any:
    """Whole episodes of ``play`` (``play(means, seeds, m, epsilon, budget, checkpoints, answers, pulls, *rest)``,
    ``EntryPoints.play``) in each copy's arm order ``arm_at`` (position -> arm): position p plays arm
    ``arm_at[n, p]``, its mean and its sample stream, so the samples are those of the arms; the answers are
    mapped back to arms. Equal to the per-step kernel with the same order, bit for bit."""

    def relabelled(means: np.ndarray, seeds: np.ndarray, m: int, epsilon: float, budget: int,
                   checkpoints: np.ndarray, answers: np.ndarray, pulls: np.ndarray, *rest: Any) -> None:
        seen = np.zeros_like(answers)
        play(np.take_along_axis(means, arm_at, axis=1), np.take_along_axis(seeds, arm_at, axis=1), m, epsilon,
             budget, checkpoints, seen, pulls, *rest)
        np.put_along_axis(answers, np.broadcast_to(arm_at[:, None, :], seen.shape), seen, axis=2)

    return relabelled
