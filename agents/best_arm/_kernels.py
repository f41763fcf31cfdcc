"""Compiled kernels of the best-arm agents (numba): one pass over the copies per ``act``, and whole episodes.

Imported on the first ``act``, not with ``bandit_gym.agents`` (numba takes about a second to load).

Each agent is a *rule*: a compiled function that decides one step of one copy,

    rule(counts, sums, made, budget, m, epsilon, constants, state, work, answer, final) -> arm

from the copy's float32 pull counts and sums (read as float64, as the observation gives them), the pulls made
so far, the budget (the cap in the fixed-confidence setting), m and epsilon (as the float32 observation holds
them); ``constants`` are the agent's per-copy parameters, ``state`` its per-copy state, ``work`` scratch rows,
``answer`` the answer bits it submits (kept between steps: UGapEb's recommendation lives there). It returns the
arm to pull, or K to stop. ``final`` says that the answer will be scored; rules whose answer is a function of
the statistics alone may skip it otherwise (the per-step kernel always passes True).

An answer that ranks arms by empirical mean ranks an arm never pulled below every pulled arm (among such arms
the smaller index first), as the env's empirical rule does (:func:`answer_means`), so that with a budget below
K or with negative rewards the answer keeps to the arms pulled; the indices that choose the arm to pull read
such an arm's mean as 0, as they always did, so the pulls do not depend on the answer rule.

:func:`decide_step` compiles a rule into one ``act`` over a batch; :func:`decide_rollout` into whole episodes on
the Bernoulli best-arm env with common random numbers. Both call the same rule, so they agree bit for bit.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numba
import numpy as np

from bandit_gym.agents._kernels import parallel_pair
from bandit_gym.envs._kernels import stream_uniform

#: scratch rows per copy: means, beta, U, L, B, J bits
WORK_ROWS = 6


def _jit(function: Callable[..., Any]) -> Any:
    return numba.njit(inline="always", error_model="numpy")(function)


# ----------------------------------------------------------------------------------------------- helpers
@_jit
def empirical_means(counts: np.ndarray, sums: np.ndarray, out: np.ndarray) -> None:
    """``out_i = sums_i / max(counts_i, 1)`` in float64."""
    for i in range(counts.shape[0]):
        out[i] = np.float64(sums[i]) / max(np.float64(counts[i]), 1.0)


@_jit
def answer_means(counts: np.ndarray, sums: np.ndarray, out: np.ndarray) -> None:
    """The values an answer ranks arms by: ``out_i = sums_i / T_i`` in float64 (as :func:`empirical_means`) for a
    pulled arm, -inf for an arm never pulled, which therefore ranks last (ties, among such arms too: the smaller
    index first), whatever the sign of the pulled arms' means."""
    for i in range(counts.shape[0]):
        c = np.float64(counts[i])
        out[i] = np.float64(sums[i]) / max(c, 1.0) if c > 0.0 else -np.inf


@_jit
def top_m(values: np.ndarray, m: int, bits: np.ndarray) -> None:
    """``bits`` = the m largest ``values`` (ties: the smaller index first), by m scans."""
    k = values.shape[0]
    for i in range(k):
        bits[i] = 0
    for _ in range(m):
        best, arg = 0.0, -1
        for i in range(k):
            if bits[i] == 0 and (arg < 0 or values[i] > best):
                best, arg = values[i], i
        bits[arg] = 1


@_jit
def top_m_pulled(counts: np.ndarray, sums: np.ndarray, m: int, values: np.ndarray, bits: np.ndarray) -> None:
    """``bits`` = the m arms of largest empirical mean, an arm never pulled ranking last (ties: the smaller index
    first); ``values`` is a scratch row of K floats (left holding :func:`answer_means`)."""
    answer_means(counts, sums, values)
    top_m(values, m, bits)


@_jit
def pulled_first(counts: np.ndarray, sums: np.ndarray, m: int, values: np.ndarray, bits: np.ndarray) -> None:
    """Make ``bits``, the m largest empirical means of a rule that also uses them in its indices, an answer in
    which an arm never pulled ranks last: :func:`top_m_pulled` if an arm was never pulled; otherwise the bits
    are that answer already and stay as they are."""
    for i in range(counts.shape[0]):
        if counts[i] == 0:
            top_m_pulled(counts, sums, m, values, bits)
            return


@_jit
def gap_select(m: int, work: np.ndarray) -> tuple[float, int]:
    """SELECT-ARM(t) of gabillon2012 (Fig. 2, eq. 3-4; the J ties, the second u / l tie rule and the I tie are
    ours, the paper is silent) from ``work[0]`` = empirical means and ``work[1]`` =
    beta; fills ``work[2], work[3], work[4]`` with U, L and B and ``work[5]`` with the bits of J::

        U_k = mu_k + beta_k,   L_k = mu_k - beta_k,   B_k = max^m_{i != k} U_i - L_k
        J = the m arms of smallest B (ties: smallest index),   B_J = max_{k in J} B_k
        u = argmax_{j not in J} U_j,   l = argmin_{i in J} L_i   (ties: largest beta, then smallest index)
        I = argmax_{k in {l, u}} beta_k   (a tie pulls l)

    ``max^m_{i != k} U_i`` is the (m+1)-th largest U when k is among the m largest (ties: smaller index first),
    the m-th otherwise. Returns ``(B_J, I)``."""
    mean, beta, upper, lower, index, chosen = work[0], work[1], work[2], work[3], work[4], work[5]
    k = mean.shape[0]
    for i in range(k):
        upper[i], lower[i] = mean[i] + beta[i], mean[i] - beta[i]
        chosen[i] = 0.0  # first marks the m largest U
    mth, after = 0.0, 0.0
    for r in range(m + 1):
        best, arg = 0.0, -1
        for i in range(k):
            if chosen[i] == 0.0 and (arg < 0 or upper[i] > best):
                best, arg = upper[i], i
        if r < m:
            chosen[arg] = 1.0
            mth = best
        else:
            after = best
    for i in range(k):
        index[i] = (after if chosen[i] == 1.0 else mth) - lower[i]
        chosen[i] = 0.0  # now the bits of J
    set_index = -np.inf
    for _ in range(m):
        best, arg = 0.0, -1
        for i in range(k):
            if chosen[i] == 0.0 and (arg < 0 or index[i] < best):
                best, arg = index[i], i
        chosen[arg] = 1.0
        set_index = max(set_index, best)
    u, l_t = -1, -1
    for i in range(k):
        if chosen[i] == 0.0:
            if u < 0 or upper[i] > upper[u] or (upper[i] == upper[u] and beta[i] > beta[u]):
                u = i
        elif l_t < 0 or lower[i] < lower[l_t] or (lower[i] == lower[l_t] and beta[i] > beta[l_t]):
            l_t = i
    return set_index, l_t if beta[l_t] >= beta[u] else u


@_jit
def gap_widths(counts: np.ndarray, sums: np.ndarray, x: float, b: float, work: np.ndarray) -> None:
    """``work[0]`` = empirical means, ``work[1]`` = ``beta_k = b sqrt(x / T_k)`` (T_k at least 1)."""
    empirical_means(counts, sums, work[0])
    for i in range(counts.shape[0]):
        work[1, i] = b * math.sqrt(x / max(np.float64(counts[i]), 1.0))


# ----------------------------------------------------------------------------------------------- rules
@_jit
def ugapeb(counts: np.ndarray, sums: np.ndarray, made: int, budget: int, m: int, epsilon: float,
           constants: np.ndarray, state: np.ndarray, work: np.ndarray, answer: np.ndarray, final: bool) -> int:
    """UGapEb: constants ``(a, b, last)``; state ``(smallest B_J so far,)``, +inf at the start. The answer is the
    J of the smallest B_J recorded after the initial round (before it, the m best empirical means, an arm never
    pulled ranking last), or with ``last = 1`` the current J."""
    k = counts.shape[0]
    gap_widths(counts, sums, constants[0], constants[1], work)
    if made < k:
        top_m_pulled(counts, sums, m, work[2], answer)
        return made
    set_index, pull = gap_select(m, work)
    if set_index < state[0] or constants[2] == 1.0:
        state[0] = min(set_index, state[0])
        for i in range(k):
            answer[i] = work[5, i] == 1.0
    return pull


@_jit
def ugapec(counts: np.ndarray, sums: np.ndarray, made: int, budget: int, m: int, epsilon: float,
           constants: np.ndarray, state: np.ndarray, work: np.ndarray, answer: np.ndarray, final: bool) -> int:
    """UGapEc: constants ``(delta, c, b)``; the answer is J(t); stop once ``B_J(t) < epsilon``. During the
    initial round (arm t at pull t, no stop) the answer is the m best empirical means, an arm never pulled
    ranking last (J(t) would rank such an arm by a mean of 0)."""
    k = counts.shape[0]
    if made < k:
        top_m_pulled(counts, sums, m, work[0], answer)
        return made
    delta, c, b = constants[0], constants[1], constants[2]
    x = c * math.log(4.0 * k * max(np.float64(made), 1.0) ** 3 / delta)
    gap_widths(counts, sums, x, b, work)
    set_index, pull = gap_select(m, work)
    for i in range(k):
        answer[i] = work[5, i] == 1.0
    return k if set_index < epsilon else pull


@_jit
def _better(values: np.ndarray, a: float, b: float) -> float:
    """The arm of the larger value among arms ``a`` and ``b`` (floats; -1 for an empty leaf); ties: ``a``."""
    if b < 0.0:
        return a
    if a < 0.0:
        return b
    return a if values[np.int64(a)] >= values[np.int64(b)] else b


@_jit
def max_tree_build(values: np.ndarray, tree: np.ndarray) -> None:
    """A tournament tree over ``values`` (K arms) in ``tree`` (2 P floats, P >= K a power of two): node 1 holds
    the arm of the largest value, the smallest index among equal ones (left children hold smaller indices and
    win ties); leaves P + i hold arm i. O(K)."""
    size, k = tree.shape[0] // 2, values.shape[0]
    for i in range(size):
        tree[size + i] = i if i < k else -1.0
    for node in range(size - 1, 0, -1):
        tree[node] = _better(values, tree[2 * node], tree[2 * node + 1])


@_jit
def max_tree_update(values: np.ndarray, tree: np.ndarray, arm: int) -> None:
    """Replay the matches on the path of ``arm``, whose value changed. O(log K)."""
    node = (tree.shape[0] // 2 + arm) // 2
    while node >= 1:
        tree[node] = _better(values, tree[2 * node], tree[2 * node + 1])
        node //= 2


def tree_size(k: int) -> int:
    """Floats of a tournament tree over K arms: 2 P, P the smallest power of two >= K."""
    return 2 * (1 << max(k - 1, 0).bit_length())


@_jit
def ucbe_index(counts: np.ndarray, sums: np.ndarray, a: float, i: int) -> float:
    """UCB-E's index of arm i, ``mu_hat_i + sqrt(a / T_i)``; +inf for an arm never pulled."""
    c = np.float64(counts[i])
    return math.inf if c == 0.0 else np.float64(sums[i]) / max(c, 1.0) + math.sqrt(a / c)


@_jit
def ucbe(counts: np.ndarray, sums: np.ndarray, made: int, budget: int, m: int, epsilon: float,
         constants: np.ndarray, state: np.ndarray, work: np.ndarray, answer: np.ndarray, final: bool) -> int:
    """UCB-E: constants ``(a,)``; pull ``argmax mu_i + sqrt(a / T_i)`` (+inf unpulled; ties: smallest index);
    the answer is the m largest empirical means, an arm never pulled ranking last (a mean of -inf in the mean
    tree).

    Only the arm pulled since the previous call changes its statistics, so only its index is recomputed and its
    path in a tournament tree of the indices replayed, O(log K) per pull; for m = 1 the answer's argmax mean is
    kept in a second tree, and only the bits that change are rewritten. The previous call's arm was the only pull
    when ``made`` grew by one and that arm's count by one (``state[0:3]``); anything else (a new episode, a
    batched allocation, another arm pulled, the same observation twice) recomputes all K. State: ``(made + 2 at
    the last call, its arm, the arm's count then, the arm whose answer bit is set or -1, 1 if the mean tree is
    current, index tree, mean tree)``; indices in ``work[1]``, means in ``work[0]``. Same arms and answers as
    recomputing everything at every call, bit for bit (tested)."""
    k = counts.shape[0]
    size = (state.shape[0] - 5) // 2  # tree_size(k)
    mean, value, tree, mean_tree = work[0], work[1], state[5:5 + size], state[5 + size:]
    i = np.int64(state[1])
    one_pull = state[0] == made + 1 and np.float64(counts[i]) == state[2] + 1.0
    if one_pull:
        value[i] = ucbe_index(counts, sums, constants[0], i)
        max_tree_update(value, tree, i)
    else:
        for j in range(k):
            value[j] = ucbe_index(counts, sums, constants[0], j)
        max_tree_build(value, tree)
        state[3] = -1.0  # the answer bits are rewritten in full
    if not final:
        state[4] = 0.0  # the mean tree is not kept between unscored calls
    elif m == 1:
        if one_pull and state[4] == 1.0:
            mean[i] = np.float64(sums[i]) / max(np.float64(counts[i]), 1.0)
            max_tree_update(mean, mean_tree, i)
        else:
            answer_means(counts, sums, mean)
            max_tree_build(mean, mean_tree)
        state[4] = 1.0
        best, old = np.int64(mean_tree[1]), np.int64(state[3])
        if old < 0:
            answer[:] = 0
        elif old != best:
            answer[old] = 0
        answer[best], state[3] = 1, best
    else:
        top_m_pulled(counts, sums, m, mean, answer)
    arm = np.int64(tree[1])
    state[0], state[1], state[2] = made + 2.0, arm, counts[arm]
    return arm


@_jit
def lucb(counts: np.ndarray, sums: np.ndarray, made: int, budget: int, m: int, epsilon: float,
         constants: np.ndarray, state: np.ndarray, work: np.ndarray, answer: np.ndarray, final: bool) -> int:
    """LUCB1: constants ``(delta, b)``; state ``(l_t pending or -1, pulls made at the last act, its arm)``.
    The answer is High (the m largest empirical means), but with an arm never pulled ranking last; h_t and l_t
    come from High as the means rank it (a mean of 0 for an arm never pulled)."""
    k = counts.shape[0]
    mean, beta = work[0], work[1]
    empirical_means(counts, sums, mean)
    round_t = 1.0 + max(np.float64(made - k), 0.0) // 2
    log_term = math.log(1.25 * k * round_t**4 / constants[0])
    for i in range(k):
        beta[i] = constants[1] * math.sqrt(log_term / (2.0 * max(np.float64(counts[i]), 1.0)))
    top_m(mean, m, answer)  # High
    h, low = -1, -1
    for i in range(k):
        if answer[i]:
            if h < 0 or mean[i] - beta[i] < mean[h] - beta[h]:
                h = i
        elif low < 0 or mean[i] + beta[i] > mean[low] + beta[low]:
            low = i
    pulled_first(counts, sums, m, work[2], answer)
    if made == state[1]:  # a repeated act on one observation repeats its action
        return np.int64(state[2])
    if made < k:
        arm = made
    elif state[0] >= 0:
        arm, state[0] = np.int64(state[0]), -1.0
    elif (mean[low] + beta[low]) - (mean[h] - beta[h]) < epsilon:
        arm = k
    else:
        arm, state[0] = h, np.float64(low)
    state[1], state[2] = np.float64(made), np.float64(arm)
    return arm


@_jit
def uniform(counts: np.ndarray, sums: np.ndarray, made: int, budget: int, m: int, epsilon: float,
            constants: np.ndarray, state: np.ndarray, work: np.ndarray, answer: np.ndarray, final: bool) -> int:
    """Round robin (``made mod K``); the answer is the m largest empirical means, an arm never pulled ranking
    last."""
    if final:
        top_m_pulled(counts, sums, m, work[0], answer)
    return made % counts.shape[0]


@_jit
def _phases(counts: np.ndarray, m: int, state: np.ndarray, mean: np.ndarray, work: np.ndarray,
            accepts: bool) -> None:
    """End every phase of SR / SAR whose surviving arms all reached its length (phases of length 0 end
    together). State: ``(phase, alive bits (K), n_1..n_{K-1}, n (K), accepted bits (K))``."""
    k = counts.shape[0]
    alive, schedule, accepted = state[1:1 + k], state[1 + k:1 + 2 * k], state[1 + 2 * k:1 + 3 * k]
    for _ in range(k - 1):
        phase = np.int64(state[0])
        if phase >= k:
            return
        target = schedule[phase - 1]
        for i in range(k):
            if alive[i] == 1.0 and counts[i] < target:
                return
        if accepts:
            _accept_or_reject(m, alive, accepted, mean, work)
        else:
            worst = -1
            for i in range(k):
                if alive[i] == 1.0 and (worst < 0 or mean[i] < mean[worst]):
                    worst = i
            alive[worst] = 0.0
        state[0] = phase + 1


@_jit
def key_before(value: float, index: int, other: float, other_index: int) -> bool:
    """Key (value, index) ranks before key (other, other_index): a larger value, on ties the smaller index. Keys
    of distinct arms never tie."""
    return value > other or (value == other and index < other_index)


@_jit
def select_key(values: np.ndarray, arms: np.ndarray, size: int, r: int) -> float:
    """Reorder ``arms[:size]`` so that ``arms[r]`` is the arm of rank r (0-based) by key (value, index) and the
    arms before it rank before it (quickselect, O(size) expected); returns its value."""
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


@_jit
def _accept_or_reject(m: int, alive: np.ndarray, accepted: np.ndarray, mean: np.ndarray, work: np.ndarray) -> None:
    """SAR's removal: with the active arms ranked by empirical mean (ties: smaller index first) and l arms still
    to accept, the active arm of largest empirical gap leaves, accepted if it ranks in the top l: gap
    ``mu - mu_(l+1)`` in the top l, ``mu_(l) - mu`` below. The largest gap is at the first or the last rank, so
    the removal needs two order statistics and one pass: O(K). Ties: the first rank of largest gap leaves."""
    k = alive.shape[0]
    arms = np.empty(k, np.int64)
    active, left = 0, m
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


def _successive(accepts: bool) -> Any:
    """The rule of SR (``accepts`` False) or SAR. The phases end on the empirical means (0 for an arm never
    pulled: with n <= K every phase has length 0 and they all end before the first pull). The answer: the
    accepted arms that were pulled, then the best of the other candidates (the active arms, and accepted arms
    never pulled) up to m (SR: one arm), an arm never pulled ranking last (among such arms the smaller index
    first)."""

    def rule(counts: np.ndarray, sums: np.ndarray, made: int, budget: int, m: int, epsilon: float,
             constants: np.ndarray, state: np.ndarray, work: np.ndarray, answer: np.ndarray, final: bool) -> int:
        k = counts.shape[0]
        mean = work[0]
        empirical_means(counts, sums, mean)
        _phases(counts, m, state, mean, work, accepts)
        alive, accepted = state[1:1 + k], state[1 + 2 * k:1 + 3 * k]
        arm = -1
        for i in range(k):  # the surviving arm with the fewest pulls
            if alive[i] == 1.0 and (arm < 0 or counts[i] < counts[arm]):
                arm = i
        if final:
            rank = work[1]
            answer_means(counts, sums, rank)
            taken = 0
            for i in range(k):
                answer[i] = accepts and accepted[i] == 1.0 and counts[i] > 0
                taken += answer[i]
            for _ in range(m - taken if accepts else 1):  # fill with the best candidates not yet in
                best = -1
                for i in range(k):
                    if ((alive[i] == 1.0 or (accepts and accepted[i] == 1.0)) and answer[i] == 0
                            and (best < 0 or rank[i] > rank[best])):
                        best = i
                if best >= 0:
                    answer[best] = 1
        return arm

    return _jit(rule)


successive_rejects = _successive(False)
successive_accepts_rejects = _successive(True)


@_jit
def top_m_select(values: np.ndarray, m: int, bits: np.ndarray) -> float:
    """``bits`` = the m largest ``values`` (ties: the smaller index first) in O(K) (a partition finds the m-th
    largest value); returns their sum."""
    k = values.shape[0]
    kth = np.partition(values, k - m)[k - m]
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


@_jit
def clucb_radius(made: int, k: int, delta: float, r: float) -> float:
    """``R sqrt(2 log(4 K t^3 / delta))``: CLUCB-PAC's radius of an arm pulled once, at t pulls."""
    return r * math.sqrt(2.0 * math.log(4.0 * k * np.float64(made) ** 3 / delta))


@_jit
def clucb_decide(k: int, m: int, epsilon: float, inside: Any, tilde_inside: Any, tilde: np.ndarray, radius: float,
                 inv: np.ndarray) -> int:
    """CLUCB-PAC's decision from M (``inside``), M~ (``tilde_inside``) and ``rad_i = radius inv_i``
    (``inv_i = 1 / sqrt(T_i)``): K (stop) when ``w~(M~) - w~(M) <= m epsilon``, summed over the symmetric
    difference in index order, else its arm of largest rad (ties: the smallest index)."""
    gain, arm, widest = 0.0, -1, 0.0
    for i in range(k):
        if (tilde_inside[i] == 1) != (inside[i] == 1):
            gain += tilde[i] if tilde_inside[i] == 1 else -tilde[i]
            rad = radius * inv[i]
            if arm < 0 or rad > widest:
                arm, widest = i, rad
    return k if gain <= m * epsilon else arm


@_jit
def clucb_pac(counts: np.ndarray, sums: np.ndarray, made: int, budget: int, m: int, epsilon: float,
              constants: np.ndarray, state: np.ndarray, work: np.ndarray, answer: np.ndarray, final: bool) -> int:
    """CLUCB-PAC for top-m: constants ``(delta, R)``. After one pull of each arm, at t pulls: M = the empirical
    top m (the answer); ``rad_e = R sqrt(2 log(4 K t^3 / delta) / T_e)``; ``w~ = mu - rad`` inside M, ``mu +
    rad`` outside; M~ = the top m of w~; stop when ``w~(M~) - w~(M) <= m epsilon``, else pull the arm of largest
    rad in the symmetric difference of M and M~ (ties: the smallest index). During the initial round the answer
    ranks an arm never pulled last (:func:`answer_means`)."""
    k = counts.shape[0]
    mean, tilde, other = work[0], work[1], work[2]
    if made < k:
        answer_means(counts, sums, mean)
        top_m_select(mean, m, answer)
        return made
    empirical_means(counts, sums, mean)
    top_m_select(mean, m, answer)
    radius, inv = clucb_radius(made, k, constants[0], constants[1]), work[3]
    for i in range(k):
        inv[i] = 1.0 / math.sqrt(np.float64(counts[i]))
        rad = radius * inv[i]
        tilde[i] = mean[i] - rad if answer[i] else mean[i] + rad
    top_m_select(tilde, m, other)
    arm = clucb_decide(k, m, epsilon, answer, other, tilde, radius, inv)
    if final:
        pulled_first(counts, sums, m, work[4], answer)  # as top_m_select: both take the smaller index on ties
    return arm


# ----------------------------------------------------------------------------------------------- drivers
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


@numba.njit(nogil=True, cache=True)
def top_m_answers(m: np.ndarray, counts: np.ndarray, sums: np.ndarray, action: np.ndarray) -> np.ndarray:
    """``action[n, 1:]`` = the m largest empirical means of copy n (ties: the smaller index first), an arm never
    pulled ranking last, O(K) each."""
    mean = np.zeros(counts.shape[1])
    for n in range(counts.shape[0]):
        answer_means(counts[n], sums[n], mean)
        top_m_select(mean, np.int64(m[n, 0]), action[n, 1:])
    return action


#: rule names of the agents (looked up by name so that agents stay importable without numba)
RULES = {"UGapEb": ugapeb, "UGapEc": ugapec, "UCBEBestArm": ucbe, "LUCB": lucb, "Uniform": uniform,
         "SuccessiveRejects": successive_rejects, "SAR": successive_accepts_rejects, "CLUCBPAC": clucb_pac}


@numba.njit(cache=True)
def select_arm_rows(means: np.ndarray, beta: np.ndarray, m: int, bits: np.ndarray, set_index: np.ndarray,
                    pull: np.ndarray) -> None:
    """:func:`gap_select` on given means and widths, row by row (for tests and teaching)."""
    work = np.zeros((WORK_ROWS, means.shape[1]))
    for n in range(means.shape[0]):
        work[0], work[1] = means[n], beta[n]
        set_index[n], pull[n] = gap_select(m, work)
        for i in range(means.shape[1]):
            bits[n, i] = work[5, i] == 1.0
