"""SELECT-ARM, the arm selection that UGapEb and UGapEc share (gabillon2012 §3, Fig. 2, eq. 3-4)."""

from __future__ import annotations

import math

import numpy as np

from bandit_gym.agents.best_arm._kernels import WORK_ROWS
from bandit_gym.agents.ranking import empirical_means
from bandit_gym.jit import called, kernel

#: the rows of a copy's scratch ``work`` that SELECT-ARM reads (MEAN, BETA) and fills (the others; CHOSEN holds
#: the bits of \(J\))
MEAN, BETA, UPPER, LOWER, INDEX, CHOSEN = range(6)


@called
def gap_select(m: int, work: np.ndarray) -> tuple[float, int]:
    r"""SELECT-ARM(t) (see ``select_arm``) from ``work[MEAN]`` and ``work[BETA]``; fills \(U\), \(L\), \(B\) and
    the bits of \(J\) into the rows ``UPPER, LOWER, INDEX, CHOSEN``. Returns \((B_J, I)\)."""
    mean, beta, upper, lower = work[MEAN], work[BETA], work[UPPER], work[LOWER]
    index, chosen = work[INDEX], work[CHOSEN]
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


@called
def gap_widths(counts: np.ndarray, sums: np.ndarray, x: float, b: float, work: np.ndarray) -> None:
    r"""``work[MEAN]`` = empirical means, ``work[BETA]`` = \(\beta_k = b\sqrt{x / T_k}\) (\(T_k\) at least 1)."""
    empirical_means(counts, sums, work[MEAN])
    for i in range(counts.shape[0]):
        work[BETA, i] = b * math.sqrt(x / max(np.float64(counts[i]), 1.0))


@kernel
def select_arm_rows(means: np.ndarray, beta: np.ndarray, m: int, bits: np.ndarray, set_index: np.ndarray,
                    pull: np.ndarray) -> None:
    """``gap_select`` on given means and widths, row by row."""
    work = np.zeros((WORK_ROWS, means.shape[1]))
    for n in range(means.shape[0]):
        work[MEAN], work[BETA] = means[n], beta[n]
        set_index[n], pull[n] = gap_select(m, work)
        for i in range(means.shape[1]):
            bits[n, i] = work[CHOSEN, i] == 1.0


def select_arm(means: np.ndarray, beta: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""SELECT-ARM(t) from given empirical means and widths ``(N, K)``, for every row:

    $$
    \begin{aligned}
    U_k &= \hat\mu_k + \beta_k, \quad L_k = \hat\mu_k - \beta_k, \quad B_k = \max^m_{i \ne k} U_i - L_k, \\
    J &= \text{the } m \text{ arms of smallest } B \text{ (ties: smallest index)}, \quad B_J = \max_{k \in J} B_k, \\
    u &= \operatorname*{arg\,max}_{j \notin J} U_j, \quad l = \operatorname*{arg\,min}_{i \in J} L_i
      \quad \text{(ties: largest } \beta \text{, then smallest index)}, \\
    I &= \operatorname*{arg\,max}_{k \in \{l, u\}} \beta_k \quad \text{(a tie pulls } l \text{)}.
    \end{aligned}
    $$

    The compiled step UGapEb and UGapEc run (``gap_select``). Returns (\(J\) as bits ``(N, K)``, \(B_J\)
    ``(N,)``, \(I\) ``(N,)``).

    Readings where gabillon2012 (Fig. 2, §3) is silent: the paper breaks ties in \(u\) and \(l\) in favour of the
    largest \(\beta\) and says no more; the further tie on \(\beta\) goes to the smallest index. For \(J\) it
    writes \(J(t) \in \operatorname*{arg\,min}^{1..m} B_k(t)\) and only says, of its \(m\)-\(\max\) and
    \(m\)-\(\arg\max\) operators, that ties are broken "in an arbitrary but consistent manner" (§2, footnote 2):
    \(J\) takes the smallest indices among equal \(B\), one such rule. It gives no tie rule for \(I\) when
    \(\beta_l = \beta_u\): \(I\) pulls \(l\). \(\max^m_{i \ne k} U_i\) is computed as the \((m+1)\)-th largest
    \(U\) when \(k\) is among the \(m\) largest, the \(m\)-th otherwise; its value does not depend on how ties
    in \(U\) are ranked."""
    means, beta = np.atleast_2d(np.asarray(means, np.float64)), np.atleast_2d(np.asarray(beta, np.float64))
    n = means.shape[0]
    bits, set_index, pull = np.zeros(means.shape, dtype=bool), np.zeros(n), np.zeros(n, dtype=np.int64)
    select_arm_rows(means, beta, int(m), bits, set_index, pull)
    return bits, set_index, pull
