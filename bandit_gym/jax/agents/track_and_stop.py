r"""Track-and-Stop (Garivier and Kaufmann 2016) as pure functions of one copy: track the optimal allocation
\(w^*(\hat\mu)\) of best-arm identification, stop by a stopping component (the GLR rule by default)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, NamedTuple

import jax
import jax.numpy as jnp

from bandit_gym import _validation as check
from bandit_gym.jax.agents._base import ArmOrder, Array, Obs, arm_at, first_maximum, first_minimum
from bandit_gym.jax.agents._fixed_confidence import FixedConfidenceAgent, pulls_made
from bandit_gym.jax.agents._oracle import clamped_means, optimal_weights

TRACKING = ("D", "C")
PROJECTION_STEPS = 40
"""Bisections of C-tracking's projection (numpy: 60 in float64; float32's bracket stops shrinking before 40)."""


class TrackAndStopState(NamedTuple):
    """The state of Track-and-Stop in one copy: the arm order and C-tracking's cumulated allocations."""

    order: ArmOrder
    #: ``sum_{s <= t} w^{eps_s}(mu_hat(s))`` per arm (float32), 1 per arm after the opening (C-tracking only;
    #: D-tracking leaves it at 1)
    cumulated: Array


def project(weights: Array, floor: Array) -> Array:
    r"""The \(L^\infty\) projection of ``weights`` (on the simplex) onto \(\{w : w_a \ge \text{floor}\}\):
    \(w_a \leftarrow \max(w_a - \eta, \text{floor})\), \(\eta \ge 0\) the shift that keeps the sum 1, by bisection on
    \([0, 1]\) keeping the side whose sum is at most 1 (the numpy agent's ``project``)."""

    def bisect(_: int, bracket: tuple[Array, Array]) -> tuple[Array, Array]:
        low, high = bracket
        eta = 0.5 * (low + high)
        over = jnp.sum(jnp.maximum(weights - eta, floor)) > 1.0
        return jnp.where(over, eta, low), jnp.where(over, high, eta)

    _, high = jax.lax.fori_loop(0, PROJECTION_STEPS, bisect, (jnp.float32(0.0), jnp.float32(1.0)))
    return jnp.maximum(weights - high, floor)


@dataclass(frozen=True)
class TrackAndStop(FixedConfidenceAgent):
    r"""Track-and-Stop: sample in the proportions \(w^*(\hat\mu(t))\) of the lower bound, stop by the GLR rule.

    Paper: A. Garivier, E. Kaufmann, Optimal Best Arm Identification with Fixed Confidence, COLT 2016 (GK 2016).

    Each arm once first, in the copy's arm order, with no stopping test; then, after \(t\) pulls (\(t\) the pulls made),
    with \(N\) the pull counts and \(w^*(\mu)\) the optimal allocation of GK 2016 Theorem 5 at the empirical means
    (``bandit_gym.jax.agents._oracle.optimal_weights``, recomputed at every pull), stop if the stopping rule does, else
    pull:

    - **D-tracking** (``tracking="D"``, the default): with \(U_t = \{a : N_a < \sqrt{t} - K/2\}\), the least pulled arm
      of \(U_t\) if \(U_t\) is not empty (forced exploration), else \(\operatorname*{arg\,max}_a t w^*_a - N_a\);
    - **C-tracking** (``tracking="C"``): \(\operatorname*{arg\,max}_a \sum_{s \le t} w^{\epsilon_s}_a - N_a\),
      \(w^\epsilon\) the \(L^\infty\) projection of \(w^*\) onto \(\{w : w_a \ge \epsilon\}\) (``project``),
      \(\epsilon_s = (K^2 + s)^{-1/2} / 2\), the sum starting at 1 per arm (the opening's pulls).

    Every tie (\(U_t\)'s least pulled arm, the \(\operatorname*{arg\,max}\), the answer) goes to the arm first in the
    copy's arm order (random per copy and episode; the identity with ``tie_break="index"``); arms sharing the largest
    empirical mean share \(w^*\) evenly; Bernoulli means of 0 or 1 are clamped to \([10^{-9}, 1 - 10^{-9}]\) for
    \(w^*\). The answer is the empirical best arm. Stopping (``stopping``, ``threshold``;
    ``bandit_gym.jax.agents._stopping``): by default the GLR rule with GK 2016 Theorem 10's threshold
    \(\ln(2 t (K - 1) / \delta)\) on Bernoulli arms, Lattimore and Szepesvari's (``"ls2020"``) on Gaussian ones;
    ``"lucb"`` and ``"kllucb"`` also (``"lil"``, lil'UCB's own rule, is refused as numpy refuses it).

    Parameters as the numpy agent's: ``delta`` in \((0, 1)\) (default 0.05), ``tracking`` (``"D"``, ``"C"``),
    ``stopping`` (default ``"glr"``), ``threshold`` (``"gk2016"``, ``"ls2020"``, ``"heuristic"``; None: the
    distribution's default), ``distribution`` (``"bernoulli"``, ``"gaussian"``), ``sigma``; pass them by keyword (the
    dataclass puts ``tie_break`` first). Best-arm identification (\(m = 1\)) only.

    Equal in distribution to ``bandit_gym.agents.TrackAndStop``. Differences: \(w^*\) is computed in float32 with fixed
    iteration counts (numpy: float64 to machine precision; the two agree within about \(10^{-6}\) except near ties of
    the two largest means, where the float32 means themselves move \(w^*\) by up to about \(2 \cdot 10^{-5}\)), and the
    tracking quantities \(t w^*_a - N_a\) and the cumulated sums are float32, which can only change a pull whose
    compared values lie within those roundings of each other; the statistics of the stopping rule are float32 (see
    ``_stopping``); and the numpy agent's run-time refusals (an env whose \(m\) is not 1, or whose \(\epsilon\) is not 0
    under the GLR rule; arms of another family; Bernoulli means outside \([0, 1]\)) are not made here: the observation
    is traced.
    """

    numpy_agent: ClassVar[str] = "TrackAndStop"
    tracking: str = "D"

    def __post_init__(self) -> None:
        super().__post_init__()  # the stopping component's checks (FixedConfidenceAgent)
        object.__setattr__(self, "tracking", check.choice("tracking", self.tracking, TRACKING))

    def init(self, key: Array, obs: Obs) -> TrackAndStopState:
        order = super().init(key, obs)
        return TrackAndStopState(order=order, cumulated=jnp.ones(obs["counts"].shape[-1], jnp.float32))

    def weights(self, obs: Obs) -> Array:
        r"""\(w^*(\hat\mu)\) of the observation's statistics (``(K,)`` float32)."""
        mean, comp = clamped_means(obs["counts"], obs["sums"], self.gaussian)
        return optimal_weights(mean, comp, self.gaussian, self.sigma)

    def select(self, state: TrackAndStopState, obs: Obs, key: Array) -> tuple[Array, TrackAndStopState]:
        counts = obs["counts"]
        k = counts.shape[-1]
        made = pulls_made(state, obs)
        opening = made < k
        t = made.astype(jnp.float32)
        weights = self.weights(obs)
        cumulated = state.cumulated
        if self.tracking == "D":
            under = counts < jnp.sqrt(t) - k / 2.0
            forced = first_minimum(jnp.where(under, counts, jnp.inf), state.order)
            tracked = first_maximum(t * weights - counts, state.order)
            arm = jnp.where(jnp.any(under), forced, tracked)
        else:
            projected = project(weights, 0.5 / jnp.sqrt(jnp.float32(k * k) + t))
            cumulated = jnp.where(opening, cumulated, cumulated + projected)
            arm = first_maximum(cumulated - counts, state.order)
        arm = jnp.where(opening, arm_at(state.order, made), arm)
        return arm.astype(jnp.int32), state._replace(cumulated=cumulated)
