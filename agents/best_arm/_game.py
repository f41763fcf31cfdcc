"""The zero-sum matrix games of Frank-Wolfe Sampling's steps on top-m identification (``fw_sampling``), compiled:
``max_{z in simplex} min_p (payoff z)_p``, its value by a dense simplex method (Bland's rule), and of its optimal
strategies the one nearest the uniform z (an active-set method), a choice that depends on neither the order of the
arms nor that of the rows.

Written with loops, not array expressions: each array expression is a kernel numba compiles of its own, with the
error paths of its shape checks (which format the shapes into a message), and they made the matrix game most of
Frank-Wolfe Sampling's top-m compilation. Every sum adds its terms in index order from 0, as ``np.sum`` does, so
the numbers are those of the array form."""

from __future__ import annotations

import math

import numpy as np

from bandit_gym.jit import called, inline

#: the cap on the simplex method's pivots and on the active-set method's steps, per column and per constraint
PIVOTS = 50
#: the tolerance of the linear program, and the relaxation of the optimal set, on the game scaled to entries in
#: [1, 2]; and the active-set method's (steps, multipliers, angles)
TINY, LOOSE = 1e-12, 1e-9


@inline
def dot(x: np.ndarray, y: np.ndarray) -> float:
    """``np.sum(x * y)``: the products added in index order from 0."""
    total = 0.0
    for a in range(x.shape[0]):
        total += x[a] * y[a]
    return total


@called
def pivot(tableau: np.ndarray, basis: np.ndarray, row: int, col: int) -> None:
    """One pivot of the dense tableau on (row, col): column col enters the basis at ``row``."""
    scale = tableau[row, col]
    for c in range(tableau.shape[1]):
        tableau[row, c] /= scale
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
        for p in range(n):
            tableau[a, p] = payoff[p, a]
        tableau[a, n + a], tableau[a, n + k] = 1.0, 1.0
    for p in range(n):
        tableau[k, p] = -1.0
    bland(tableau, basis)
    total = 0.0
    for a in range(k):
        z[a] = max(tableau[k, n + a], 0.0)
        total += z[a]
    for a in range(k):
        z[a] /= total


@called
def project(c: np.ndarray, working: np.ndarray, z: np.ndarray, lam: np.ndarray, step: np.ndarray) -> None:
    """``step`` = y - z, y the point nearest the origin of ``{y : c_q y = c_q z, q working}``; ``lam`` = the
    multipliers, ``y = sum_q lam_q c_q`` (Gram-Schmidt, twice, of the working rows: A^T = Q R, y = Q Q^T z,
    R lam = Q^T z)."""
    rows = np.flatnonzero(working)
    r, k = rows.shape[0], z.shape[0]
    q, upper, coef = np.zeros((r, k)), np.zeros((r, r)), np.zeros(r)
    for a in range(k):
        step[a] = -z[a]
    for i in range(r):
        for a in range(k):
            q[i, a] = c[rows[i], a]
        for _ in range(2):
            for j in range(i):
                s = dot(q[j], q[i])
                upper[j, i] += s
                for a in range(k):
                    q[i, a] -= s * q[j, a]
        upper[i, i] = np.sqrt(dot(q[i], q[i]))
        for a in range(k):
            q[i, a] /= upper[i, i]
        coef[i] = dot(q[i], z)
        for a in range(k):
            step[a] += coef[i] * q[i, a]
    for p in range(lam.shape[0]):
        lam[p] = 0.0
    for i in range(r - 1, -1, -1):
        later = 0.0
        for j in range(i + 1, r):
            later += upper[i, j] * coef[j]
        coef[i] = (coef[i] - later) / upper[i, i]
        lam[rows[i]] = coef[i]


@called
def nearest_optimal(payoff: np.ndarray, bound: float, z: np.ndarray) -> None:
    """z <- the point of ``{z in the simplex : payoff z >= bound}`` nearest the origin (the uniform z), from a
    feasible z: the primal active-set method (Nocedal and Wright 2006, Algorithm 16.3) on ``|z|^2 / 2``, the
    working set started from the constraints tight at z, linearly independent (Gram-Schmidt)."""
    n, k = payoff.shape
    rows = n + k + 1
    c, d = np.zeros((rows, k)), np.zeros(rows)
    for p in range(n):
        d[p] = bound
        for a in range(k):
            c[p, a] = payoff[p, a]
    for a in range(k):
        c[n + a, a] = 1.0
        c[rows - 1, a] = 1.0
    d[rows - 1] = 1.0
    working, basis, rank = np.zeros(rows, np.bool_), np.zeros((k, k)), 0
    rest = np.zeros(k)
    for q in range(rows - 1, -1, -1):  # the equality first
        if rank < k and dot(c[q], z) - d[q] <= 10.0 * TINY:
            for a in range(k):
                rest[a] = c[q, a]
            for b in range(rank):
                along = dot(basis[b], c[q])
                for a in range(k):
                    rest[a] -= along * basis[b, a]
            if np.sqrt(dot(rest, rest)) > LOOSE * np.sqrt(dot(c[q], c[q])):
                length = np.sqrt(dot(rest, rest))
                for a in range(k):
                    basis[rank, a] = rest[a] / length
                working[q], rank = True, rank + 1
    lam, step = np.zeros(rows), np.zeros(k)
    for _ in range(PIVOTS * rows):
        project(c, working, z, lam, step)
        length = np.sqrt(dot(step, step))
        if length <= 0.1 * LOOSE:
            drop = np.argmin(lam[:rows - 1])
            if lam[drop] >= -LOOSE:
                break
            working[drop] = False
            continue
        alpha, block = 1.0, -1
        for q in range(rows - 1):
            slope = dot(c[q], step)
            if not working[q] and slope < -LOOSE * length * np.sqrt(dot(c[q], c[q])):
                ratio = max(dot(c[q], z) - d[q], 0.0) / -slope
                if ratio < alpha:
                    alpha, block = ratio, q
        for a in range(k):
            z[a] += alpha * step[a]
        if block >= 0:
            working[block] = True
    total = 0.0
    for a in range(k):
        total += np.maximum(z[a], 0.0)
    for a in range(k):
        z[a] = np.maximum(z[a], 0.0) / total


@called
def least_row(payoff: np.ndarray, z: np.ndarray) -> float:
    """``np.sum(payoff * z, axis=1).min()``: the least over the rows p of ``sum_a payoff[p, a] z_a``."""
    least = math.inf
    for p in range(payoff.shape[0]):
        least = min(least, dot(payoff[p], z))
    return least


@called
def solve_game(payoff: np.ndarray, z: np.ndarray) -> float:
    """z = the optimal strategy nearest the uniform one of ``max_{z in simplex} min_p (payoff z)_p``; returns
    the value. The game is scaled to entries in [1, 2] (the same optimal z, as sum_a z_a = 1), its value found by
    the simplex method (``game_vertex``), then z moved to the point of the optimal set (relaxed by ``TINY``) nearest
    the uniform one (``nearest_optimal``), a point that does not depend on the order of the arms or the rows."""
    n, k = payoff.shape
    low, high = math.inf, -math.inf
    for p in range(n):
        for a in range(k):
            low, high = min(low, payoff[p, a]), max(high, payoff[p, a])
    if high <= low:
        for a in range(k):
            z[a] = 1.0 / k
    else:
        scaled = np.empty((n, k))
        for p in range(n):
            for a in range(k):
                scaled[p, a] = (payoff[p, a] - low) / (high - low) + 1.0
        game_vertex(scaled, z)
        nearest_optimal(scaled, least_row(scaled, z) - TINY, z)
    return least_row(payoff, z)
