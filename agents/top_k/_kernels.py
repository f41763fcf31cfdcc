"""CLUCB-PAC's whole-episode kernel ``clucb_rollout`` (numba, compiled once and cached on disk: it takes
about 7 s to compile), and the decision it shares with CLUCB-PAC's rule (in
``bandit_gym.agents.top_k.clucb_pac``). Imported on first use. Here k (K) is the number of arms, n in chen2017,
and m the set size, K in chen2017."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from bandit_gym.agents.ranking import answer_means, key_before, select_key, top_m_select
from bandit_gym.envs._kernels import stream_uniform
from bandit_gym.jit import called, kernel


@called
def clucb_radius(made: int, k: int, delta: float, r: float) -> float:
    r"""\(R \sqrt{2 \log(4 K t^3 / \delta)}\): CLUCB-PAC's radius of an arm pulled once, at \(t\) pulls."""
    return r * math.sqrt(2.0 * math.log(4.0 * k * np.float64(made) ** 3 / delta))


@called
def clucb_decide(k: int, m: int, epsilon: float, inside: Any, tilde_inside: Any, tilde: np.ndarray, radius: float,
                 inv: np.ndarray) -> int:
    r"""CLUCB-PAC's decision from \(M\) (``inside``), \(\tilde M\) (``tilde_inside``) and
    \(\mathrm{rad}_i = \mathrm{radius} \cdot \mathrm{inv}_i\) (\(\mathrm{inv}_i = 1 / \sqrt{T_i}\)): \(K\) (stop)
    when \(\tilde w(\tilde M) - \tilde w(M) \le m \epsilon\), summed over the symmetric difference in index order,
    else its arm of largest rad (ties: the smallest index)."""
    gain, arm, widest = 0.0, -1, 0.0
    for i in range(k):
        if (tilde_inside[i] == 1) != (inside[i] == 1):
            gain += tilde[i] if tilde_inside[i] == 1 else -tilde[i]
            rad = radius * inv[i]
            if arm < 0 or rad > widest:
                arm, widest = i, rad
    return k if gain <= m * epsilon else arm


@kernel
def clucb_rollout(means: np.ndarray, seeds: np.ndarray, m: int, epsilon: float, budget: int,
                  checkpoints: np.ndarray, answers: np.ndarray, pulls: np.ndarray, constants: np.ndarray) -> None:
    r"""Whole CLUCB-PAC episodes (the rule of ``bandit_gym.agents.top_k.clucb_pac``, same arguments and
    numbers as its ``decide_rollout``), with the work per pull cut to two passes over the arms:

    - during the initial round (arm \(t\) at pull \(t\)) the answer ranks an arm never pulled last, as the rule's does;
      an episode whose budget ends within it ends with that answer;
    - \(M\) (the empirical top \(m\)) is kept by at most one swap per pull (only the pulled arm's mean changed), against
      the best outsider and the worst insider, which are cached and rescanned only when they move inwards;
    - \(\tilde M\) (the top \(m\) of \(\tilde w\), ties: the smaller index) is the set of arms whose key
      (\(\tilde w\), index) ranks before a split key. The split moves little from pull to pull, so the pass that
      computes \(\tilde w\) counts the arms above a
      window around the last split, sums their part of the decision and gathers the few arms inside it; a
      selection among those gives the new split (the window is widened and the pass redone when the split left
      it). The gain is then summed in another order than the rule's; when it comes near the stop level the
      rule's own pass (index order) decides.

    ``constants[n]["delta"]`` and ``constants[n]["R"]`` as the rule's."""
    num, k = means.shape
    counts, sums, mean, inv = np.zeros(k), np.zeros(k), np.zeros(k), np.zeros(k)
    tilde, sign, scratch = np.zeros(k), np.zeros(k), np.zeros(k)
    inside, tilde_inside = np.zeros(k, np.int64), np.zeros(k, np.int64)
    gathered, window = np.zeros(k, np.int64), np.zeros(k, np.int64)
    extremes = np.zeros(2, np.int64)  # the best outsider, the worst insider (-1: to rescan)
    first = np.zeros(k, np.int64)  # an answer of the initial round
    for n in range(num):
        counts[:], sums[:], mean[:], inv[:] = 0.0, 0.0, 0.0, 0.0
        made, c = 0, 0
        while made < k and made < budget:  # the initial round: arm t at pull t
            while c < checkpoints.shape[0] and checkpoints[c] == made:
                answer_means(counts, sums, scratch)
                top_m_select(scratch, m, first)
                answers[n, c] = first
                c += 1
            _pull(made, n, means, seeds, counts, sums, mean, inv)
            made += 1
        if made < k:  # the budget ran out within the initial round
            answer_means(counts, sums, scratch)
            top_m_select(scratch, m, first)
            while c < checkpoints.shape[0]:
                answers[n, c] = first
                c += 1
            pulls[n] = made
            continue
        top_m_select(mean, m, inside)
        for i in range(k):
            sign[i] = -1.0 if inside[i] else 1.0
        extremes[:] = -1
        tau, width = np.nan, 0.01  # the last split's w~ and the window's half width
        while True:
            while c < checkpoints.shape[0] and checkpoints[c] == made:
                answers[n, c] = inside
                c += 1
            if made == budget:
                break
            radius = clucb_radius(made, k, constants[n]["delta"], constants[n]["R"])
            split, split_index, width, arm, gain, tol = _fused(mean, sign, inv, radius, m, tau, width, tilde,
                                                               gathered, window)
            if split_index == -2:  # no window yet: select
                for i in range(k):
                    tilde[i] = mean[i] + sign[i] * (radius * inv[i])  # = mean - rad inside M, mean + rad outside
                top_m_select(tilde, m, tilde_inside)
                split, split_index = _separator(tilde, tilde_inside)
                arm = clucb_decide(k, m, epsilon, inside, tilde_inside, tilde, radius, inv)
            elif gain <= m * epsilon + tol:  # a stop is near: the gain summed in the rule's order decides
                for i in range(k):
                    tilde_inside[i] = key_before(tilde[i], i, split, split_index)
                arm = clucb_decide(k, m, epsilon, inside, tilde_inside, tilde, radius, inv)
            tau = split
            if arm == k:
                break
            _pull(arm, n, means, seeds, counts, sums, mean, inv)
            made += 1
            _keep_top(arm, mean, inside, sign, extremes)
        while c < checkpoints.shape[0]:
            answers[n, c] = inside
            c += 1
        pulls[n] = made


@called
def _pull(arm: int, n: int, means: np.ndarray, seeds: np.ndarray, counts: np.ndarray, sums: np.ndarray,
          mean: np.ndarray, inv: np.ndarray) -> None:
    """One Bernoulli pull from arm's stream (draw number = its pulls so far), as the env's step makes it."""
    one = stream_uniform(seeds[n, arm], np.uint64(counts[arm])) < means[n, arm]
    counts[arm] += 1.0
    sums[arm] += 1.0 if one else 0.0
    mean[arm] = sums[arm] / counts[arm]
    inv[arm] = 1.0 / math.sqrt(counts[arm])


@called
def _ahead(mean: np.ndarray, i: int, j: int) -> bool:
    """Arm i ranks before arm j in the empirical order (larger mean; ties: the smaller index)."""
    return mean[i] > mean[j] or (mean[i] == mean[j] and i < j)


@called
def _keep_top(arm: int, mean: np.ndarray, inside: np.ndarray, sign: np.ndarray, extremes: np.ndarray) -> None:
    """Restore ``inside`` = the top m of ``mean`` (and ``sign`` = -1 inside, +1 outside) after arm's mean
    changed: arm swaps with the best outsider or the worst insider if it crossed them. ``extremes`` caches those
    two (rescanned when -1)."""
    best_out, worst_in = extremes[0], extremes[1]
    if best_out == arm or worst_in == arm:  # the cached extreme moved: rescan on demand
        best_out, worst_in = (-1, worst_in) if best_out == arm else (best_out, -1)
    if inside[arm]:
        if best_out < 0:
            best_out = _scan(mean, inside, 0)
        if best_out >= 0 and _ahead(mean, best_out, arm):
            inside[arm], inside[best_out], sign[arm], sign[best_out] = 0, 1, 1.0, -1.0
            best_out, worst_in = -1, -1
        elif worst_in >= 0 and _ahead(mean, worst_in, arm):
            worst_in = arm
    else:
        if worst_in < 0:
            worst_in = _scan(mean, inside, 1)
        if worst_in >= 0 and _ahead(mean, arm, worst_in):
            inside[arm], inside[worst_in], sign[arm], sign[worst_in] = 1, 0, -1.0, 1.0
            best_out, worst_in = -1, -1
        elif best_out >= 0 and _ahead(mean, arm, best_out):
            best_out = arm
    extremes[0], extremes[1] = best_out, worst_in


@called
def _scan(mean: np.ndarray, inside: np.ndarray, members: int) -> int:
    """The best outsider (``members = 0``) or the worst insider (``members = 1``) in the empirical order."""
    found = -1
    for i in range(mean.shape[0]):
        if inside[i] == members and (found < 0 or (_ahead(mean, found, i) if members else _ahead(mean, i, found))):
            found = i
    return found


@called
def _fused(mean: np.ndarray, sign: np.ndarray, inv: np.ndarray, radius: float, m: int, center: float,
           width: float, tilde: np.ndarray, gathered: np.ndarray,
           window: np.ndarray) -> tuple[float, int, float, int, float, float]:
    r"""One pass: \(\tilde w\) (into ``tilde``), the split key (the \((m+1)\)-th key (\(\tilde w\), index), or a key
    just after the \(m\)-th) found in a window ``[center - width, center + width]`` (widened and the pass redone
    when the split is not in it), and the decision's parts: the gain \(\tilde w(\tilde M) - \tilde w(M)\) and the arm of
    largest rad in the symmetric difference. Arms above / below the window count in the pass, the window's few arms
    (selected by key) after it, so the gain is summed in another order than the rule's: ``tol`` bounds the difference.
    Returns ``(split, split index, next width, arm, gain, tol)``; split index -2 when there is no window (nan
    center)."""
    k = mean.shape[0]
    if not np.isfinite(center):
        return center, -2, width, -1, 0.0, 0.0
    for _ in range(64):
        low, high = center - width, center + width
        above, size, gain, total, arm, widest = 0, 0, 0.0, 0.0, -1, -1.0
        for i in range(k):
            rad = radius * inv[i]
            value = mean[i] + sign[i] * rad  # = mean - rad inside M, mean + rad outside
            tilde[i] = value
            over, under = value > high, value < low
            above += over
            gathered[size] = i
            size += not (over or under)
            # +1: in M~ but not in M; -1: in M but not in M~; 0 otherwise (the window's arms come after)
            differs = (1.0 if over else 0.0) * (sign[i] > 0.0) - (1.0 if under else 0.0) * (sign[i] < 0.0)
            gain += differs * value
            total += abs(differs * value)
            candidate = rad if differs != 0.0 else -1.0
            if candidate > widest:
                arm, widest = i, candidate
        r = m - above  # the window's arms that are in M~
        if not 0 <= r <= size:
            width *= 4.0
            continue
        next_width = width * 0.5 if size > 32 else (width * 2.0 if size < 4 else width)
        for j in range(size):
            window[j] = gathered[j]
        split, split_index = low, k_none()  # r = size: every arm from low up is in M~
        if r < size:
            split = select_key(tilde, gathered, size, r)
            split_index = gathered[r]
        for j in range(size):  # the window's arms, in index order
            a = window[j]
            chosen = key_before(tilde[a], a, split, split_index)
            if chosen != (sign[a] < 0.0):
                gain += tilde[a] if chosen else -tilde[a]
                total += abs(tilde[a])
                rad = radius * inv[a]
                if arm < 0 or rad > widest or (rad == widest and a < arm):
                    arm, widest = a, rad
        return split, split_index, next_width, arm, gain, 1e-12 * k * (1.0 + total)
    return center, -2, width, -1, 0.0, 0.0


@called
def k_none() -> int:
    r"""The index of the empty key (\(-\infty\), ``k_none()``), after every arm: every finite key ranks before it."""
    return 1 << 62


@called
def _separator(tilde: np.ndarray, chosen: np.ndarray) -> tuple[float, int]:
    r"""The first key (\(\tilde w\), index) outside ``chosen`` (the top \(m\)): the split for the next pull."""
    high, high_i = -np.inf, k_none()
    for i in range(tilde.shape[0]):
        if not chosen[i] and (high_i == k_none() or key_before(tilde[i], i, high, high_i)):
            high, high_i = tilde[i], i
    return high, high_i
