"""The zero-sum matrix games of Frank-Wolfe Sampling's steps on top-m identification (``fw_sampling``), compiled:
``max_{z in simplex} min_p (payoff z)_p``, its value by a dense simplex method (Bland's rule), and of its optimal
strategies the one nearest the uniform z (an active-set method), a choice that depends on neither the order of the
arms nor that of the rows."""

from __future__ import annotations

import math

import numpy as np

from bandit_gym.jit import called

#: the cap on the simplex method's pivots and on the active-set method's steps, per column and per constraint
PIVOTS = 50
#: the tolerance of the linear program, and the relaxation of the optimal set, on the game scaled to entries in
#: [1, 2]; and the active-set method's (steps, multipliers, angles)
TINY, LOOSE = 1e-12, 1e-9


@called
def pivot(tableau: np.ndarray, basis: np.ndarray, row: int, col: int) -> None:
    """One pivot of the dense tableau on (row, col): column col enters the basis at ``row``."""
    tableau[row] /= tableau[row, col]
    for r in range(tableau.shape[0]):
        factor = tableau[r, col]
        if r != row and factor != 0.0:
            for c in range(tableau.shape[1]):
                tableau[r, c] -= factor * tableau[row, c]
    basis[row] = col


@called
def bland(tableau: np.ndarray, basis: np.ndarray) -> None:
    """The simplex method on a tableau in canonical form (the last row the reduced costs of a maximisation, the last
    column the right-hand side) by Bland's rule: the first column of negative reduced cost enters, the row of least
    ratio leaves, on ties the one whose basic variable comes first (no cycling)."""
    rows, cols = tableau.shape
    for _ in range(PIVOTS * cols):
        col = -1
        for c in range(cols - 1):
            if tableau[rows - 1, c] < -TINY:
                col = c
                break
        if col < 0:
            return
        row, least = np.int64(-1), math.inf  # not a literal -1: bandit_gym.jit, "Literals"
        for r in range(rows - 1):
            if tableau[r, col] > TINY:
                ratio = tableau[r, cols - 1] / tableau[r, col]
                if ratio < least - TINY or (ratio <= least + TINY and basis[r] < basis[row]):
                    row, least = r, ratio
        if row < 0:
            return
        pivot(tableau, basis, row, col)


@called
def game_vertex(payoff: np.ndarray, z: np.ndarray) -> None:
    """z = a maximiser of ``min_p (payoff z)_p`` over the simplex, payoff's entries in [1, 2]: the matrix game's
    linear program ``max sum_p y_p, payoff^T y <= 1, y >= 0`` (its dual: ``u = z / value``, ``min sum_a u_a,
    payoff u >= 1``) from the slack basis by ``bland``; u = the reduced costs of the slacks."""
    n, k = payoff.shape
    tableau = np.zeros((k + 1, n + k + 1))
    basis = np.arange(n, n + k)
    for a in range(k):
        tableau[a, :n] = payoff[:, a]
        tableau[a, n + a], tableau[a, -1] = 1.0, 1.0
    tableau[k, :n] = -1.0
    bland(tableau, basis)
    for a in range(k):
        z[a] = max(tableau[k, n + a], 0.0)
    z /= z.sum()


@called
def project(c: np.ndarray, working: np.ndarray, z: np.ndarray, lam: np.ndarray, step: np.ndarray) -> None:
    """``step`` = y - z, y the point nearest the origin of ``{y : c_q y = c_q z, q working}``; ``lam`` = the
    multipliers, ``y = sum_q lam_q c_q`` (Gram-Schmidt, twice, of the working rows: A^T = Q R, y = Q Q^T z,
    R lam = Q^T z)."""
    rows = np.flatnonzero(working)
    r = rows.shape[0]
    q, upper, coef = np.zeros((r, z.shape[0])), np.zeros((r, r)), np.zeros(r)
    step[:] = -z
    for i in range(r):
        q[i] = c[rows[i]]
        for _ in range(2):
            for j in range(i):
                s = np.sum(q[j] * q[i])
                upper[j, i] += s
                q[i] -= s * q[j]
        upper[i, i] = np.sqrt(np.sum(q[i] * q[i]))
        q[i] /= upper[i, i]
        coef[i] = np.sum(q[i] * z)
        step += coef[i] * q[i]
    lam[:] = 0.0
    for i in range(r - 1, -1, -1):
        coef[i] = (coef[i] - np.sum(upper[i, i + 1:] * coef[i + 1:])) / upper[i, i]
        lam[rows[i]] = coef[i]


@called
def nearest_optimal(payoff: np.ndarray, bound: float, z: np.ndarray) -> None:
    """z <- the point of ``{z in the simplex : payoff z >= bound}`` nearest the origin (the uniform z), from a
    feasible z: the primal active-set method (Nocedal and Wright 2006, Algorithm 16.3) on ``|z|^2 / 2``, the
    working set started from the constraints tight at z, linearly independent (Gram-Schmidt)."""
    n, k = payoff.shape
    rows = n + k + 1
    c, d = np.zeros((rows, k)), np.zeros(rows)
    c[:n], c[n:n + k], c[rows - 1] = payoff, np.eye(k), 1.0
    d[:n], d[rows - 1] = bound, 1.0
    working, basis, rank = np.zeros(rows, np.bool_), np.zeros((k, k)), 0
    for q in range(rows - 1, -1, -1):  # the equality first
        if rank < k and np.sum(c[q] * z) - d[q] <= 10.0 * TINY:
            rest = c[q].copy()
            for b in range(rank):
                rest -= np.sum(basis[b] * c[q]) * basis[b]
            if np.sqrt(np.sum(rest * rest)) > LOOSE * np.sqrt(np.sum(c[q] * c[q])):
                basis[rank] = rest / np.sqrt(np.sum(rest * rest))
                working[q], rank = True, rank + 1
    lam, step = np.zeros(rows), np.zeros(k)
    for _ in range(PIVOTS * rows):
        project(c, working, z, lam, step)
        length = np.sqrt(np.sum(step * step))
        if length <= 0.1 * LOOSE:
            drop = np.argmin(lam[:rows - 1])
            if lam[drop] >= -LOOSE:
                break
            working[drop] = False
            continue
        alpha, block = 1.0, -1
        for q in range(rows - 1):
            slope = np.sum(c[q] * step)
            if not working[q] and slope < -LOOSE * length * np.sqrt(np.sum(c[q] * c[q])):
                ratio = max(np.sum(c[q] * z) - d[q], 0.0) / -slope
                if ratio < alpha:
                    alpha, block = ratio, q
        z += alpha * step
        if block >= 0:
            working[block] = True
    z[:] = np.maximum(z, 0.0) / np.sum(np.maximum(z, 0.0))


@called
def solve_game(payoff: np.ndarray, z: np.ndarray) -> float:
    """z = the optimal strategy nearest the uniform one of ``max_{z in simplex} min_p (payoff z)_p``; returns
    the value. The game is scaled to entries in [1, 2] (the same optimal z, as sum_a z_a = 1), its value found by
    the simplex method (``game_vertex``), then z moved to the point of the optimal set (relaxed by ``TINY``) nearest
    the uniform one (``nearest_optimal``), a point that does not depend on the order of the arms or the rows."""
    low, high = payoff.min(), payoff.max()
    if high <= low:
        z[:] = 1.0 / z.shape[0]
    else:
        scaled = (payoff - low) / (high - low) + 1.0
        game_vertex(scaled, z)
        nearest_optimal(scaled, np.sum(scaled * z, axis=1).min() - TINY, z)
    return np.sum(payoff * z, axis=1).min()
