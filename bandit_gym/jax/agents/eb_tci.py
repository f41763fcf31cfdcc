"""EB-TCI (Jourdan, Degenne, Baudry, de Heide, Kaufmann 2022), the Top Two rule with the Empirical Best leader and
the Transportation Cost Improved challenger, stopped by a stopping component, as pure functions of one copy."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, NamedTuple

import jax.numpy as jnp

from bandit_gym import _validation as check
from bandit_gym.jax.agents import _stopping
from bandit_gym.jax.agents._base import ArmOrder, Array, Obs, arm_at, first_minimum
from bandit_gym.jax.agents._fixed_confidence import FixedConfidenceAgent, pulls_made


class TopTwoState(NamedTuple):
    r"""The state of a Top Two rule in one copy: the arm order and the \(K\) tracking procedures, one per leader."""

    order: ArmOrder
    #: ``L_i``: the steps at which arm i was the leader (int32, per arm)
    led: Array
    #: ``N^i_i``: the pulls of arm i while it was the leader (int32, per arm)
    pulled_leading: Array




def track(state: TopTwoState, leader: Array, challenger: Array, beta: float) -> tuple[Array, TopTwoState]:
    r"""The tracking of Jourdan et al. (2023): count this step as led by ``leader``; pull the leader if its pulls
    while it led are at most \(\beta\) times the steps it led (this one included), else ``challenger`` (the numpy
    ``top_two`` tracked)."""
    hit = jnp.arange(state.led.shape[-1]) == leader
    led = state.led + hit.astype(jnp.int32)
    lead_led = jnp.sum(jnp.where(hit, led, 0))
    lead_pulled = jnp.sum(jnp.where(hit, state.pulled_leading, 0))
    take_leader = lead_pulled.astype(jnp.float32) <= jnp.float32(beta) * lead_led.astype(jnp.float32)
    pulled = state.pulled_leading + (hit & take_leader).astype(jnp.int32)
    arm = jnp.where(take_leader, leader, challenger)
    return arm, state._replace(led=led, pulled_leading=pulled)


@dataclass(frozen=True)
class EBTCI(FixedConfidenceAgent):
    r"""EB-TCI: a Top Two sampling rule, the empirical best arm as leader and a transportation-cost challenger.

    Paper: M. Jourdan, R. Degenne, D. Baudry, R. de Heide, E. Kaufmann, Top Two Algorithms Revisited, NeurIPS 2022
    (EB leader, TCI challenger); the leader's share tracked as in Jourdan, Degenne, Kaufmann, NeurIPS 2023.

    Each arm once first, in the copy's arm order, with no stopping test; then, with \(\mu\) the empirical means and
    \(N\) the pull counts, stop if the stopping rule does (``stopping``, ``threshold``: by default the GLR rule with
    GK 2016 Theorem 10's threshold on Bernoulli arms, Lattimore and Szepesvari's on Gaussian ones), else:

    - leader \(B = \operatorname*{arg\,max}_a \mu_a\) (EB);
    - challenger \(C = \operatorname*{arg\,min}_{j \ne B} W(B, j) + \ln N_j\) (TCI), \(W\) the transportation cost
      (``bandit_gym.jax.agents._stopping.transportation_cost``);
    - pull \(B\) if \(N^B_B \le \beta L_B\) (\(L_B\) the steps \(B\) led, this one included; \(N^B_B\) the pulls of
      \(B\) while it led), else \(C\).

    Every tie (leader, challenger, answer) goes to the arm first in the copy's arm order (random per copy and
    episode; the identity with ``tie_break="index"``). The answer is the empirical best arm. Parameters as the
    numpy agent's: ``delta`` in \((0, 1)\), ``beta`` in \((0, 1)\) (default 1/2), ``stopping`` (``"glr"``,
    ``"lucb"``, ``"kllucb"``), ``threshold`` (``"gk2016"``, ``"ls2020"``, ``"heuristic"``; None: the distribution's
    default), ``distribution`` (``"bernoulli"``, ``"gaussian"``), ``sigma``; pass them by keyword (the dataclass
    puts ``tie_break`` first). Best-arm identification (\(m = 1\)) only.

    Equal in distribution to ``bandit_gym.agents.EBTCI``. Differences: the statistics, the costs and the tracking
    test are float32 (numpy: float64 of the same float32 statistics), which can only change a decision whose
    compared values lie within a float32 rounding of each other (\(\beta = 1/2\) makes the tracking test exact);
    and the numpy agent's run-time refusals (an env whose \(m\) is not 1 or whose \(\epsilon\) is not 0 under the
    GLR rule, arms of another family, Bernoulli means outside \([0, 1]\)) are not made here: the observation is
    traced.
    """

    numpy_agent: ClassVar[str] = "EBTCI"
    beta: float = 0.5

    def __post_init__(self) -> None:
        super().__post_init__()  # the stopping component's checks (FixedConfidenceAgent)
        beta = check.real("beta", self.beta, low=0.0, high=1.0, low_open=True, high_open=True)
        object.__setattr__(self, "beta", beta)

    def init(self, key: Array, obs: Obs) -> TopTwoState:
        order = super().init(key, obs)
        zeros = jnp.zeros(obs["counts"].shape[-1], jnp.int32)
        return TopTwoState(order=order, led=zeros, pulled_leading=zeros)

    def challenger(self, state: TopTwoState, obs: Obs, leader: Array) -> Array:
        r"""\(\operatorname*{arg\,min}_{j \ne \text{leader}} W(\text{leader}, j) + \ln N_j\) (ties: the first in the
        copy's order)."""
        counts = obs["counts"]
        means = obs["sums"] / jnp.maximum(counts, 1.0)
        costs = _stopping.costs_from(counts, means, leader, self.gaussian, self.sigma)
        costs = costs + jnp.log(jnp.maximum(counts, 1.0))
        return first_minimum(jnp.where(jnp.arange(counts.shape[-1]) == leader, jnp.inf, costs), state.order)

    def select(self, state: TopTwoState, obs: Obs, key: Array) -> tuple[Array, TopTwoState]:
        made = pulls_made(state, obs)
        opening = made < obs["counts"].shape[-1]
        leader = self.leader(state, obs)
        arm, tracked = track(state, leader, self.challenger(state, obs, leader), self.beta)
        arm = jnp.where(opening, arm_at(state.order, made), arm)
        led = jnp.where(opening, state.led, tracked.led)
        pulled = jnp.where(opening, state.pulled_leading, tracked.pulled_leading)
        return arm.astype(jnp.int32), state._replace(led=led, pulled_leading=pulled)
