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

WORK_ROWS = 7
"""Scratch rows per copy (SELECT-ARM uses six: means, beta, U, L, B, J bits; TTTS seven)."""


@functools.cache
def called_rule(rule: Any) -> Any:
    """``rule`` (compiled with ``inline="always"``, as every helper) compiled as a function of its own, for
    ``decide_step`` to call: numba inlines a function by running its untyped pipeline again at each call site, its
    helpers' too, and the serial step inlines the rule in ``one_copy`` and ``one_copy`` in the batch loop. Called,
    the rule's first ``act`` in a fresh process takes TTTS 10.5 s instead of 22.1, Track-and-Stop 6.7 s instead of
    14.5, EB-TCI 6.2 s instead of 8.5 (GK 2016's second instance, one env); its helpers are still inlined in it.
    An ``act`` is one call per copy, next to a vector env's step in Python. (With ``NUMBA_DISABLE_JIT=1`` the rule
    is its Python function, which has no ``py_func``.)"""
    return numba.njit(nogil=True, error_model="numpy")(getattr(rule, "py_func", rule))


@functools.cache
def decide_step(rule: Any) -> Any:
    """One ``act`` of ``rule`` over a batch: writes ``action[n] = [arm, answer bits]`` for every copy.

    The rule plays in the copy's arm order (``arm_at[n, p]`` = the arm at position p, the agent's tie rule): it is
    handed the statistics by position (``seen_counts``, ``seen_sums``, rewritten here) and keeps its answer by
    position in ``seen_answer``; its arm and answer are mapped back to arms. O(K) per copy.

    The parallel variant calls a copy's step as a compiled function of its own (``called``) instead of inlining it
    in the ``prange`` loop: numba (0.68) compiles a parallel loop body through its parfor passes, whose dead-code
    elimination decides which stores through a view may be dropped (``pulled = arrays["pulled_leading"];
    pulled[i] += 1`` with ``pulled`` not read again) from an alias analysis that depends on the order of the body's
    blocks, and that order on the labels numba numbers globally, so on what was compiled before. It dropped
    EB-TCI's tracking store after four other rules had been compiled in the process, and EB-TCI then never
    stopped (``tests/agents/test_dispatch_isolation.py``). A call keeps the store: the step is compiled by the
    serial pipeline, as the serial variant's inlined one is."""
    rule = called_rule(rule)

    def one_copy(n: int, m: np.ndarray, epsilon: np.ndarray, budget_left: np.ndarray, total_budget: np.ndarray,
                 counts: np.ndarray, sums: np.ndarray, arm_at: np.ndarray, seen_counts: np.ndarray,
                 seen_sums: np.ndarray, seen_answer: np.ndarray, constants: np.ndarray, state: np.ndarray,
                 arrays: np.ndarray, work: np.ndarray, action: np.ndarray) -> None:
        k = counts.shape[1]
        for p in range(k):
            seen_counts[n, p] = counts[n, arm_at[n, p]]
            seen_sums[n, p] = sums[n, arm_at[n, p]]
        made = total_budget[n] - np.int64(budget_left[n, 0])
        position = rule(seen_counts[n], seen_sums[n], made, total_budget[n], np.int64(m[n, 0]),
                        np.float64(epsilon[n, 0]), constants[n], state[n], arrays[n], work[n], seen_answer[n], True)
        action[n, 0] = k if position >= k else arm_at[n, position]
        for p in range(k):
            action[n, 1 + arm_at[n, p]] = seen_answer[n, p]

    inlined = numba.njit(inline="always", error_model="numpy")(one_copy)
    called = numba.njit(nogil=True, error_model="numpy")(one_copy)

    def over_copies(step: Any) -> Any:
        """The batch: ``step`` for every copy. Compiled without ``parallel=True`` the ``prange`` is a ``range``."""

        def batch(m: np.ndarray, epsilon: np.ndarray, budget_left: np.ndarray, total_budget: np.ndarray,
                  counts: np.ndarray, sums: np.ndarray, arm_at: np.ndarray, seen_counts: np.ndarray,
                  seen_sums: np.ndarray, seen_answer: np.ndarray, constants: np.ndarray, state: np.ndarray,
                  arrays: np.ndarray, work: np.ndarray, action: np.ndarray) -> np.ndarray:
            for n in numba.prange(counts.shape[0]):
                step(n, m, epsilon, budget_left, total_budget, counts, sums, arm_at, seen_counts, seen_sums,
                     seen_answer, constants, state, arrays, work, action)
            return action

        return batch

    return parallel_pair(over_copies(inlined), over_copies(called))


def in_arm_order(play: Any, arm_at: np.ndarray) -> Any:
    """Whole episodes of ``play`` (``play(means, seeds, m, epsilon, budget, checkpoints, answers, pulls, *rest)``,
    as ``decide_rollout`` makes them) in each copy's arm order ``arm_at`` (position -> arm): position p plays arm
    ``arm_at[n, p]``, its mean and its sample stream, so the samples are those of the arms; the answers are
    mapped back to arms. Equal to ``decide_step`` with the same order, bit for bit."""

    def relabelled(means: np.ndarray, seeds: np.ndarray, m: int, epsilon: float, budget: int,
                   checkpoints: np.ndarray, answers: np.ndarray, pulls: np.ndarray, *rest: Any) -> None:
        seen = np.zeros_like(answers)
        play(np.take_along_axis(means, arm_at, axis=1), np.take_along_axis(seeds, arm_at, axis=1), m, epsilon,
             budget, checkpoints, seen, pulls, *rest)
        np.put_along_axis(answers, np.broadcast_to(arm_at[:, None, :], seen.shape), seen, axis=2)

    return relabelled


@functools.cache
def decide_rollout(rule: Any) -> Any:
    """Whole episodes of ``rule`` on the Bernoulli best-arm env: the s-th pull of arm i in copy n returns
    ``1{u < mu_{n,i}}`` for draw s of the stream ``seeds[n, i]``, as the env's step does with common random
    numbers. An episode ends when the rule stops (arm K) or at the answer step after ``budget`` pulls; the answer
    submitted when exactly ``checkpoints[c]`` pulls are made goes to ``answers[n, c]`` (an episode that stopped
    before keeps its final answer), the pulls made to ``pulls[n]``. The rule is inlined here: called
    (``called_rule``), its first rollout in a fresh process was no faster for TTTS (22 s against 21 s inlined)
    and slower for EB-TCI (12 s against 9) and Track-and-Stop (19 s against 15)."""

    @numba.njit(nogil=True, error_model="numpy")
    def play(means: np.ndarray, seeds: np.ndarray, m: int, epsilon: float, budget: int, checkpoints: np.ndarray,
             answers: np.ndarray, pulls: np.ndarray, constants: np.ndarray, state: np.ndarray,
             arrays: np.ndarray, work: np.ndarray) -> None:
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
