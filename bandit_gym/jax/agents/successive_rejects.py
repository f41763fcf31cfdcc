"""Successive Rejects (Audibert, Bubeck, Munos 2010), the parameter-free fixed-budget baseline, as a pure function.

SR and SAR (``bandit_gym.jax.agents.sar``) share everything but the removal at the end of a phase, as their numpy
twins do (``bandit_gym.agents.best_arm.successive_rejects.successive``). Like the numpy rule, the state is
kept by *position* in the copy's arm order (``ArmOrder``): the rule reads the statistics by position, every tie
goes to the smaller position, and the arm and answer are mapped back to arms.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from bandit_gym.jax.agents._base import ArmOrder, Array, JaxAgent, Obs

#: the tolerance of ``phase_lengths`` (numpy: ``ceil(x - 1e-9)``), as a 64-bit binary fraction
_TOLERANCE = int(Fraction(1, 10**9) * 2**64)


class PhaseState(NamedTuple):
    """The state of SR and SAR in one copy, kept by position in the copy's arm order."""

    #: the copy's arm order and budget
    order: ArmOrder
    #: the phase, 1..K-1 (K once one arm is left), int32
    phase: Array
    #: ``schedule[k - 1] = n_k``, the pulls every arm surviving phase k has at its end, ``(K-1,)`` int32
    schedule: Array
    #: the positions still in play, ``(K,)`` bool
    alive: Array
    #: the positions accepted (SAR; always False for SR), ``(K,)`` bool
    accepted: Array


def _reciprocal_digits(k: int) -> np.ndarray:
    """Per phase k = 1..K-1, ``floor(2^64 / D_k)`` as four 16-bit digits (most significant first), with
    ``D_k = logbar(K) (K + 1 - k)`` the float64 divisor of ``bandit_gym.agents.best_arm.successive_rejects.
    phase_lengths`` (computed by the same numpy expression, so the same float64 value)."""
    logbar = 0.5 + np.sum(1.0 / np.arange(2, k + 1))
    divisors = logbar * (k + 1 - np.arange(1, k))
    digits = np.zeros((max(k - 1, 0), 4), dtype=np.uint32)
    for phase, divisor in enumerate(divisors):
        r = int(Fraction(2**64) / Fraction(float(divisor)))  # floor(2^64 / D), < 2^63 (D >= 2)
        digits[phase] = [(r >> shift) & 0xFFFF for shift in (48, 32, 16, 0)]
    return digits


def phase_lengths(total: Array, k: int) -> Array:
    r"""\(n_1, \dots, n_{K-1}\), \(n_k = \big\lceil (n - K) / (\overline{\log}(K) (K + 1 - k)) \big\rceil\) with the
    float64 divisor and the \(10^{-9}\) tolerance of the numpy ``phase_lengths``, in exact 32-bit integer
    arithmetic (JAX runs without float64): \(x / D\) is \(x \lfloor 2^{64} / D \rfloor / 2^{64}\) in 16-bit limbs
    (error below \(x\, 2^{-64}\)), its integer part is \(\lfloor x / D \rfloor\), and one is added when the
    fraction exceeds \(10^{-9}\). Equal to the numpy schedule for every budget checked (all budgets up to \(10^5\)
    with \(K = 2..40\), and \(2 \cdot 10^5\) random budgets below \(2^{24}\) with \(K\) up to 100;
    ``tests/bandit_gym_jax/test_best_arm_agents.py`` checks a part of it); the two can differ only where \(x / D\)
    has a fraction within float64 rounding (about \(x/D \cdot 2^{-53}\)) of \(10^{-9}\). Budgets of \(2^{31}\) pulls
    or more are out of range (int32)."""
    if k < 2:
        return jnp.zeros((0,), dtype=jnp.int32)
    x = jnp.maximum(total.astype(jnp.int32) - k, 0).astype(jnp.uint32)
    x_limbs = (x & 0xFFFF, x >> 16)  # x = x1 2^16 + x0, x1 < 2^15
    digits = jnp.asarray(_reciprocal_digits(k))  # (K-1, 4): d3 d2 d1 d0
    limbs = [jnp.zeros((k - 1,), dtype=jnp.uint32) for _ in range(6)]  # P = x R in 16-bit limbs, limb j: 2^16j
    for a, xa in enumerate(x_limbs):
        for i in range(4):  # digit d_i has weight 2^(16 i), column 3 - i of ``digits``
            term = xa * digits[:, 3 - i]  # < 2^32: exact in uint32
            limbs[a + i] = limbs[a + i] + (term & 0xFFFF)
            limbs[a + i + 1] = limbs[a + i + 1] + (term >> 16)
    for j in range(5):  # carries (each limb holds at most 4 terms of < 2^16 before them)
        limbs[j + 1] = limbs[j + 1] + (limbs[j] >> 16)
        limbs[j] = limbs[j] & 0xFFFF
    whole = (limbs[4] + (limbs[5] << 16)).astype(jnp.int32)  # floor(x / D) < 2^31
    tol = [(_TOLERANCE >> shift) & 0xFFFF for shift in (48, 32, 16, 0)]
    fraction = [limbs[3], limbs[2], limbs[1], limbs[0]]
    above = jnp.zeros((k - 1,), dtype=bool)  # fraction > tolerance, limb by limb from the most significant
    equal = jnp.ones((k - 1,), dtype=bool)
    for limb, t in zip(fraction, tol, strict=True):
        above = above | (equal & (limb > t))
        equal = equal & (limb == t)
    return whole + above.astype(jnp.int32)


def answer_values(counts: Array, sums: Array) -> Array:
    """The values an answer ranks positions by: the empirical mean, -inf for a position never pulled
    (``bandit_gym.agents.ranking.answer_means``)."""
    return jnp.where(counts > 0, sums / jnp.maximum(counts, 1.0), -jnp.inf)


def best_of(values: Array, candidates: Array, count: Array) -> Array:
    """The bits of the ``count`` candidates of largest ``values`` (ties: the smaller position), ``(K,)`` bool."""
    positions = jnp.arange(values.shape[-1])
    ranked = jnp.lexsort((positions, -values, ~candidates))  # candidates first, by value, then by position
    rank = jnp.argsort(ranked)
    return candidates & (rank < count)


@dataclass(frozen=True)
class SuccessiveRejects(JaxAgent):
    r"""Successive Rejects: \(K - 1\) phases; in phase \(k\) every surviving arm is pulled up to \(n_k\) pulls, then
    the arm of smallest empirical mean is rejected.

    Paper: Audibert, Bubeck, Munos, COLT 2010 (cited by gabillon2012 §1).

    $$
    n_k = \left\lceil \frac{n - K}{\overline{\log}(K) (K + 1 - k)} \right\rceil, \qquad
    \overline{\log}(K) = \frac{1}{2} + \sum_{i=2}^K \frac{1}{i},
    $$

    \(n\) read from the first observation; within a phase the surviving arm with the fewest pulls is pulled; at the
    end of phase \(k\) the surviving arm of smallest empirical mean leaves. Output: the last surviving arm (before
    the end: the surviving arm of largest empirical mean, an arm never pulled ranking last). Defaults: none (no
    parameter but ``tie_break``). Equal in distribution to ``bandit_gym.agents.SuccessiveRejects``: the same
    phase lengths (``phase_lengths``, exact), the same pulls in the same order and the same answers, every tie
    going to the arm first in the copy's arm order (random per copy and episode, the identity with
    ``tie_break="index"``), and the readings of the numpy docstring (\(n \le K\), leftover budget to the
    survivor).

    Differences: the means are compared in float32 (numpy: float64 of the same float32 statistics), which can
    only differ where two means of different arms are within a float32 rounding of each other and not equal
    (never for Bernoulli arms with fewer than about 4000 pulls each: equal fractions round equally, and unequal
    ones differ by at least \(1 / (T_i T_j)\), more than a float32 rounding). Like the numpy
    agent's ``check_m``, ``check_env`` (called by ``play``) refuses \(m > 1\): use ``SAR``.
    """

    def check_env(self, env: Any, params: Any) -> None:
        m = int(params.m)
        if not self.accepts and m != 1:
            raise ValueError(f"SuccessiveRejects returns one arm (m = 1); this env asks for m = {m}: use SAR")

    families: ClassVar[tuple[str, ...]] = ("best_arm",)
    numpy_agent: ClassVar[str] = "SuccessiveRejects"
    #: SAR's removal (accept or reject) instead of SR's rejection of the worst
    accepts: ClassVar[bool] = False

    def init(self, key: Array, obs: Obs) -> PhaseState:
        order = super().init(key, obs)
        k = obs["counts"].shape[-1]
        return PhaseState(order=order, phase=jnp.int32(1), schedule=phase_lengths(order.total, k),
                          alive=jnp.ones(k, dtype=bool), accepted=jnp.zeros(k, dtype=bool))

    # ------------------------------------------------------------------------------------------- the removal
    def remove(self, state: PhaseState, counts: Array, sums: Array, m: Array) -> PhaseState:
        """End the current phase: reject the surviving position of smallest empirical mean (ties: the smaller
        position). ``counts`` and ``sums`` are by position."""
        mean = sums / jnp.maximum(counts, 1.0)
        worst = jnp.argmin(jnp.where(state.alive, mean, jnp.inf))  # the first minimum
        return state._replace(alive=state.alive.at[worst].set(False))

    def end_phases(self, state: PhaseState, counts: Array, sums: Array, m: Array) -> PhaseState:
        r"""End every phase whose surviving arms all reached its length (phases of length 0 end together, as in
        the numpy rule); at most \(K - 1\) removals in all."""
        k = counts.shape[-1]

        def ending(s: PhaseState) -> Array:
            target = s.schedule[jnp.clip(s.phase - 1, 0, max(k - 2, 0))].astype(jnp.float32)
            return (s.phase < k) & jnp.all(~s.alive | (counts >= target))

        def end(s: PhaseState) -> PhaseState:
            return self.remove(s, counts, sums, m)._replace(phase=s.phase + 1)

        return jax.lax.while_loop(ending, end, state)

    # ------------------------------------------------------------------------------------------- the protocol
    def select(self, state: PhaseState, obs: Obs, key: Array) -> tuple[Array, PhaseState]:
        order = state.order
        counts, sums = obs["counts"][order.arm_at], obs["sums"][order.arm_at]
        m = obs["m"][0].astype(jnp.int32)
        state = self.end_phases(state, counts, sums, m)
        position = jnp.argmin(jnp.where(state.alive, counts, jnp.inf))  # the fewest pulls, the first on ties
        return order.arm_at[position], state

    def answer(self, state: PhaseState, obs: Obs, key: Array) -> Array:
        r"""SR: the surviving position of largest empirical mean (an arm never pulled ranking last). SAR: the
        accepted positions that were pulled, then the best of the other candidates (the active positions and
        the accepted ones never pulled) up to \(m\). Mapped back to arms."""
        order = state.order
        counts, sums = obs["counts"][order.arm_at], obs["sums"][order.arm_at]
        values = answer_values(counts, sums)
        if self.accepts:
            taken = state.accepted & (counts > 0)
            room = jnp.maximum(obs["m"][0].astype(jnp.int32) - jnp.sum(taken), 0)
            bits = taken | best_of(values, (state.alive | state.accepted) & ~taken, room)
        else:
            bits = best_of(values, state.alive, jnp.int32(1))
        return bits[order.position_of].astype(jnp.int32)
