r"""Compiled ranking helpers (numba) shared by the best-arm and top-K agents and by Uniform: empirical means with
an arm never pulled ranked last, the \(m\) largest values, order statistics and tournament trees.

Every function here is compiled with ``jit`` (``bandit_gym.jit.called``: compiled once and called by the rules)
except ``top_m_answers``, an entry point called from Python (``bandit_gym.jit.kernel``, cached on disk).

Ties: these helpers break ties by position (the smaller index first). The agents run them on their statistics
laid out in each copy's arm order (``BestArmAgent``, ``top_m_answers``), so a position is that order's, random
per copy and episode unless the agent was made with ``tie_break="index"``.

An answer that ranks arms by empirical mean ranks an arm never pulled below every pulled arm (among such arms
the smaller index first), as the envs' empirical rule does (``answer_means``), so that with a budget below
\(K\) or with negative rewards the answer keeps to the arms pulled; the indices that choose the arm to pull read
such an arm's mean as 0 (``empirical_means``), so the pulls do not depend on the answer rule.
"""

from __future__ import annotations

import numpy as np

from bandit_gym.jit import called, kernel

jit = called
"""Compile a helper (``bandit_gym.jit.called``)."""


@jit
def empirical_means(counts: np.ndarray, sums: np.ndarray, out: np.ndarray) -> None:
    r"""\(\mathrm{out}_i = \mathrm{sums}_i / \max(\mathrm{counts}_i, 1)\) in float64."""
    for i in range(counts.shape[0]):
        out[i] = np.float64(sums[i]) / max(np.float64(counts[i]), 1.0)


@jit
def answer_means(counts: np.ndarray, sums: np.ndarray, out: np.ndarray) -> None:
    r"""The values an answer ranks arms by: \(\mathrm{out}_i = \mathrm{sums}_i / T_i\) in float64 (as
    ``empirical_means``) for a pulled arm, \(-\infty\) for an arm never pulled, which therefore ranks last (ties, among
    such arms too: the smaller index first), whatever the sign of the pulled arms' means."""
    for i in range(counts.shape[0]):
        c = np.float64(counts[i])
        out[i] = np.float64(sums[i]) / max(c, 1.0) if c > 0.0 else -np.inf


@jit
def top_m(values: np.ndarray, m: int, bits: np.ndarray) -> None:
    r"""``bits`` = the \(m\) largest ``values`` (ties: the smaller index first), by \(m\) scans."""
    k = values.shape[0]
    for i in range(k):
        bits[i] = 0
    for _ in range(m):
        best, arg = 0.0, -1
        for i in range(k):
            if bits[i] == 0 and (arg < 0 or values[i] > best):
                best, arg = values[i], i
        bits[arg] = 1


@jit
def top_m_pulled(counts: np.ndarray, sums: np.ndarray, m: int, values: np.ndarray, bits: np.ndarray) -> None:
    r"""``bits`` = the \(m\) arms of largest empirical mean, an arm never pulled ranking last (ties: the smaller
    index first); ``values`` is a scratch row of \(K\) floats (left holding ``answer_means``)."""
    answer_means(counts, sums, values)
    top_m(values, m, bits)


@jit
def pulled_first(counts: np.ndarray, sums: np.ndarray, m: int, values: np.ndarray, bits: np.ndarray) -> None:
    r"""Make ``bits``, the \(m\) largest empirical means of a rule that also uses them in its indices, an answer in
    which an arm never pulled ranks last: ``top_m_pulled`` if an arm was never pulled; otherwise the bits
    are that answer already and stay as they are."""
    for i in range(counts.shape[0]):
        if counts[i] == 0:
            top_m_pulled(counts, sums, m, values, bits)
            return


@jit
def _better(values: np.ndarray, a: float, b: float) -> float:
    """The arm of the larger value among arms ``a`` and ``b`` (floats; -1 for an empty leaf); ties: ``a``."""
    if b < 0.0:
        return a
    if a < 0.0:
        return b
    return a if values[np.int64(a)] >= values[np.int64(b)] else b


@jit
def max_tree_build(values: np.ndarray, tree: np.ndarray) -> None:
    r"""A tournament tree over ``values`` (\(K\) arms) in ``tree`` (\(2P\) floats, \(P \ge K\) a power of two):
    node 1 holds the arm of the largest value, the smallest index among equal ones (left children hold smaller
    indices and win ties); leaves \(P + i\) hold arm \(i\). \(O(K)\)."""
    size, k = tree.shape[0] // 2, values.shape[0]
    for i in range(size):
        tree[size + i] = i if i < k else -1.0
    for node in range(size - 1, 0, -1):
        tree[node] = _better(values, tree[2 * node], tree[2 * node + 1])


@jit
def max_tree_update(values: np.ndarray, tree: np.ndarray, arm: int) -> None:
    r"""Replay the matches on the path of ``arm``, whose value changed. \(O(\log K)\)."""
    node = (tree.shape[0] // 2 + arm) // 2
    while node >= 1:
        tree[node] = _better(values, tree[2 * node], tree[2 * node + 1])
        node //= 2


@jit
def key_before(value: float, index: int, other: float, other_index: int) -> bool:
    """Key (value, index) ranks before key (other, other_index): a larger value, on ties the smaller index. Keys
    of distinct arms never tie."""
    return value > other or (value == other and index < other_index)


@jit
def select_key(values: np.ndarray, arms: np.ndarray, size: int, r: int) -> float:
    r"""Reorder ``arms[:size]`` so that ``arms[r]`` is the arm of rank \(r\) (0-based) by key (value, index) and the
    arms before it rank before it (quickselect, \(O(\text{size})\) expected); returns its value."""
    lo, hi = 0, size - 1
    while lo < hi:
        pivot = arms[(lo + hi) // 2]
        value = values[pivot]
        i, j = lo, hi
        while i <= j:
            while key_before(values[arms[i]], arms[i], value, pivot):
                i += 1
            while key_before(value, pivot, values[arms[j]], arms[j]):
                j -= 1
            if i <= j:
                arms[i], arms[j] = arms[j], arms[i]
                i += 1
                j -= 1
        if r <= j:
            hi = j
        elif r >= i:
            lo = i
        else:
            break
    return values[arms[r]]


@jit
def accept_or_reject(m: int, alive: np.ndarray, accepted: np.ndarray, mean: np.ndarray, work: np.ndarray) -> None:
    r"""SAR's removal (Bubeck, Wang, Viswanathan 2013), also OptMAI's accept-reject phases: with the active arms
    ranked by empirical mean (ties: smaller index first) and \(l\) arms still to accept, the active arm of largest
    empirical gap leaves, accepted if it ranks in the top \(l\): gap \(\mu - \mu_{(l+1)}\) in the top \(l\),
    \(\mu_{(l)} - \mu\) below. The largest gap is at the first or the last rank, so the removal needs two order
    statistics and one pass: \(O(K)\). Ties: the first rank of largest gap leaves. ``alive`` and ``accepted`` are
    bits (floats) of the \(K\) arms; ``work`` is unused."""
    k = alive.shape[0]
    arms = np.empty(k, np.int64)
    active, left = np.int64(0), m  # not a literal 0: bandit_gym.jit, "Literals"
    top_arm, low = -1, np.inf
    for i in range(k):
        left -= accepted[i] == 1.0
        if alive[i] == 1.0:
            arms[active] = i
            active += 1
            if top_arm < 0 or mean[i] > mean[top_arm]:
                top_arm = i
            low = min(low, mean[i])
    if active == 0:
        return
    lows = 0  # the arms of the lowest mean hold the last ``lows`` ranks, by increasing index
    for i in range(k):
        lows += alive[i] == 1.0 and mean[i] == low
    if left <= 0:
        rank = active - 1
    elif left >= active:
        rank = 0
    else:
        kth = select_key(mean, arms, active, left - 1)
        after = mean[arms[left]]
        for i in range(left + 1, active):
            after = max(after, mean[arms[i]])
        first_low = max(active - lows, left)  # the first rank >= l of the lowest mean
        rank = 0 if mean[top_arm] - after >= kth - low else first_low
    if rank == 0:
        arm = top_arm
    else:
        skip, arm = rank - (active - lows), -1
        for i in range(k):
            if alive[i] == 1.0 and mean[i] == low:
                if skip == 0:
                    arm = i
                    break
                skip -= 1
    alive[arm] = 0.0
    if rank < left:
        accepted[arm] = 1.0
    survivors, taken = 0, 0
    for i in range(k):
        survivors += alive[i] == 1.0
        taken += accepted[i] == 1.0
    if survivors == 1 and taken < m:  # the last active arm joins the answer if one is still missing
        for i in range(k):
            if alive[i] == 1.0:
                accepted[i] = 1.0


@jit
def kth_smallest(values: np.ndarray, kth: int) -> float:
    """The value of rank ``kth`` (0-based) in increasing order, ``np.partition(values, kth)[kth]``, for values
    without NaN: ``select_key``'s quickselect over the arms' positions, at the rank ``K - 1 - kth`` in decreasing
    order (a value, not a position, so ties do not matter). Not ``np.partition``, which takes numba about 5
    CPU-seconds to compile (its argument checks and their messages)."""
    k = values.shape[0]
    return select_key(values, np.arange(k), k, k - 1 - kth)


@jit
def stable_order(values: np.ndarray) -> np.ndarray:
    r"""The positions that sort ``values`` increasingly, ties in position order: ``np.argsort(values,
    kind="stable")`` for values without NaN, by a bottom-up merge sort in \(O(K \log K)\) (runs of width 1, 2, 4,
    ... merged, the left run first among equal values). Not ``np.argsort``, whose generic sorts take numba 1 to 2
    CPU-seconds to compile into every rule that calls them."""
    k = values.shape[0]
    order, spare = np.arange(k), np.empty(k, np.int64)
    width = 1
    while width < k:
        for low in range(0, k, 2 * width):
            middle, high = min(low + width, k), min(low + 2 * width, k)
            i, j = low, middle
            for out in range(low, high):
                if i < middle and (j == high or values[order[i]] <= values[order[j]]):
                    spare[out] = order[i]
                    i += 1
                else:
                    spare[out] = order[j]
                    j += 1
        order, spare = spare, order
        width *= 2
    return order


@jit
def top_m_select(values: np.ndarray, m: int, bits: np.ndarray) -> float:
    r"""``bits`` = the \(m\) largest ``values`` (ties: the smaller index first) in \(O(K)\) (a selection finds the
    \(m\)-th largest value); returns their sum."""
    k = values.shape[0]
    kth = kth_smallest(values, k - m)
    above = 0
    for i in range(k):
        above += values[i] > kth
    ties, total = m - above, 0.0
    for i in range(k):
        take = values[i] > kth or (values[i] == kth and ties > 0)
        if values[i] == kth and take:
            ties -= 1
        bits[i] = take
        if take:
            total += values[i]
    return total


@kernel
def top_m_answers(m: np.ndarray, counts: np.ndarray, sums: np.ndarray, arm_at: np.ndarray,
                  action: np.ndarray) -> np.ndarray:
    r"""``action[n, 1:]`` = the \(m\) largest empirical means of copy ``n``, an arm never pulled ranking last; ties
    go to the arm first in the copy's arm order ``arm_at[n]`` (position -> arm: the agent's tie rule), \(O(K)\)
    each."""
    k = counts.shape[1]
    mean, bits = np.zeros(k), np.zeros(k, np.int64)
    for n in range(counts.shape[0]):
        for p in range(k):
            arm = arm_at[n, p]
            c = np.float64(counts[n, arm])
            mean[p] = np.float64(sums[n, arm]) / max(c, 1.0) if c > 0.0 else -np.inf
        top_m_select(mean, np.int64(m[n, 0]), bits)
        for p in range(k):
            action[n, 1 + arm_at[n, p]] = bits[p]
    return action
