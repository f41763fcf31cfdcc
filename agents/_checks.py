"""The compiled per-call check of an observation's changing values (numba): one pass over the copies.

Imported on the first ``act``, with the other kernels. See ``Agent._check_values`` for what is checked and why.
"""

from __future__ import annotations

import math

import numpy as np
from numba import literal_unroll

from bandit_gym.jit import called, inline, kernel

MAX_PULLS = 2.0**53
"""The largest budget and count accepted: 2**53, the largest integer every float64 holds exactly, so that the
agents' int64 and float64 budget arithmetic (pulls made, phase lengths, log T) neither overflows nor rounds.
"""

#: what failed, by the code ``first_bad_copy`` returns
LAST_ARM, BUDGET, ABOVE_START, COUNTS, SUMS = range(5)


@kernel
def _whole(value: float) -> bool:
    return 0.0 <= value <= MAX_PULLS and value == math.floor(value)  # NaN fails every comparison


@called
def _whole_fast(value: float) -> bool:
    inside = (value >= 0) & (value <= MAX_PULLS)
    return inside & (value == (int(value) if inside else -1))


@inline
def _within(value: float, low: float, high: float, whole: bool) -> bool:
    """``value`` within a row ``(low, high, whole)`` of a contract's table, branch-free (NaN fails every comparison).
    Inlined: a call per value would cost more than the comparisons, and keep the loops from being vectorised."""
    return (value >= low) & (value <= high) & (~whole | (value == np.floor(value)))


@kernel
def needs_a_closer_look(last: np.ndarray, budget: np.ndarray, counts: np.ndarray, sums: np.ndarray,
                        start: np.ndarray, going: bool, constants: tuple[np.ndarray, ...], table: np.ndarray) -> bool:
    """True if some copy may fail a check of ``first_bad_copy`` or begins an episode (``last_arm < 0``, whose
    every arm is checked there), or holds a constant of its family outside its row of ``table`` (``constants``:
    the family's ``(N, 1)`` float32 arrays in the order of ``Contract.constants``; ``table``: its
    ``constant_table``): the fast pass of every call, branch-free so that the processor vectorises it. It reads the
    counts and sums of arm 0 in the copies whose ``last_arm`` is not an arm."""
    n, k = counts.shape
    look = False
    for i in range(n):
        arm, left = last[i, 0], budget[i, 0]
        pulled = (arm >= 0) & (arm < k)
        a = int(arm) if pulled else 0  # converted only when in range: no undefined float -> int conversion
        count, total = counts[i, a], sums[i, a]
        ok = pulled & (arm == a) & _whole_fast(left) & _whole_fast(count) & (total - total == 0)
        look |= ~(ok & (~going | (left <= start[i] if going else True)))
    allowed, row = True, 0
    for values in literal_unroll(constants):  # a loop per key: the arrays of a tuple may differ in layout
        low, high, whole = table[row, 0], table[row, 1], table[row, 2] != 0
        for i in range(n):
            allowed &= _within(values[i, 0], low, high, whole)
        row += 1  # noqa: SIM113  (numba's literal_unroll takes no enumerate)
    return look or not allowed


@kernel
def levels_need_a_look(blocks: tuple[np.ndarray, ...], table: np.ndarray, last: np.ndarray, k: int,
                       every: bool) -> bool:
    """True if some screened entry of some array of ``blocks`` lies outside its row of ``table``: the threshold
    bandit's level counts (``(N, K * m)`` float32 arrays, arm ``a``'s levels at ``a * m .. a * m + m - 1``, in the
    order of ``Contract.level_bounds``; ``table``: its ``level_table``). Every entry of every copy when ``every``
    (a copy begins an episode, is seen for the first time, or was screened out: ``needs_a_closer_look``); else the
    m entries of the arm each copy pulled last (``last``: its ``last_arm``, an arm index in every copy, as
    ``needs_a_closer_look`` found), the only ones an env changes between two steps."""
    allowed, row = True, 0
    for values in literal_unroll(blocks):
        low, high, whole = table[row, 0], table[row, 1], table[row, 2] != 0
        n, width = values.shape
        m = width // k
        for i in range(n):
            first = 0 if every else int(last[i, 0]) * m
            for j in range(first, width if every else first + m):
                allowed &= _within(values[i, j], low, high, whole)
        row += 1  # noqa: SIM113  (numba's literal_unroll takes no enumerate)
    return not allowed


@kernel
def first_bad_copy(last: np.ndarray, budget: np.ndarray, counts: np.ndarray, sums: np.ndarray,
                   start: np.ndarray, going: bool) -> tuple[int, int, int]:
    """``(copy, code, arm)`` of the first copy whose observation fails a check, ``(-1, -1, -1)`` if none.

    Per copy: ``last_arm`` is an arm index, -1 or -2; ``budget_left`` a whole number in ``[0, 2**53]`` and, when
    ``going`` and the copy is within an episode (``last_arm >= 0``), at most ``start`` (the budget its episode
    began with); the counts (whole, ``>= 0``) and sums (finite) of the arm pulled last, or of every arm at an
    episode's start (``last_arm < 0``). The arm index is read only after it is checked."""
    n, k = counts.shape
    for i in range(n):
        arm = float(last[i, 0])
        if not (-2.0 <= arm < k and arm == math.floor(arm)):
            return i, LAST_ARM, -1
        left = float(budget[i, 0])
        if not _whole(left):
            return i, BUDGET, -1
        if arm >= 0.0:
            if going and left > start[i]:
                return i, ABOVE_START, -1
            a = int(arm)
            if not _whole(float(counts[i, a])):
                return i, COUNTS, a
            if not math.isfinite(float(sums[i, a])):
                return i, SUMS, a
        else:
            for a in range(k):
                if not _whole(float(counts[i, a])):
                    return i, COUNTS, a
                if not math.isfinite(float(sums[i, a])):
                    return i, SUMS, a
    return -1, -1, -1
