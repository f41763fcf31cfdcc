r"""CLUCB-PAC (Chen, Lin, King, Lyu, Chen 2014) for \(\epsilon\)-top-\(K\), a baseline of chen2017, as pure functions of
one copy."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import jax
import jax.numpy as jnp

from bandit_gym import _validation as check
from bandit_gym.jax.agents._base import ArmOrder, Array, JaxAgent, Obs
from bandit_gym.jax.agents._ranking import top_positions

EPSILON_SUMS = ("k_epsilon", "epsilon")


@dataclass(frozen=True)
class CLUCBPAC(JaxAgent):
    r"""Combinatorial LUCB, PAC variant, with the top-\(K\) oracle.

    Paper: S. Chen, T. Lin, I. King, M. R. Lyu, W. Chen, Combinatorial Pure Exploration of Multi-Armed Bandits,
    NIPS 2014 (the PAC variant of their appendix); a baseline of chen2017 (§1.2, §3). Here \(K\) is the set size
    (chen2017's \(K\), the observation's ``m``) and \(n\) the number of arms.

    Pull each arm once (in the copy's arm order); then at \(t\) pulls, with \(M_t\) the \(K\) arms of largest
    empirical mean, \(\mathrm{rad}_e = R \sqrt{2 \ln(4 n t^3 / \delta) / T_e}\),
    \(\tilde w_e = \mu_e - \mathrm{rad}_e\) for \(e \in M_t\) and \(\mu_e + \mathrm{rad}_e\) otherwise, and
    \(\tilde M_t\) the \(K\) arms of largest \(\tilde w\): stop when
    \(\tilde w(\tilde M_t) - \tilde w(M_t) \le \epsilon_{\text{sum}}\), else pull the arm of largest rad in the
    symmetric difference of \(M_t\) and \(\tilde M_t\). The answer is \(M_t\) (an arm never pulled ranking last
    during the first round). \(t\) counts every pull, the \(n\) initial ones included.

    Parameters as the numpy agent's: ``delta`` (None: the observation's \(\delta\)), \(R = 1/2\), ``epsilon_sum``
    (``"k_epsilon"``: \(K \epsilon\), the default; ``"epsilon"``: \(\epsilon\)), ``tie_break``; pass them by
    keyword.

    Equal in distribution to ``bandit_gym.agents.CLUCBPAC``: the statistics are kept by position in the copy's
    arm order, so every tie (in \(M_t\), in \(\tilde M_t\), for the widest arm) goes to the arm first in the order
    (random per copy and episode, the identity with ``tie_break="index"``), as the numpy rule's do. The top-\(K\)
    selections are exact (``bandit_gym.jax.agents._ranking.top_positions``), in about 32 passes over the arms each.

    Differences: the means, radii, \(\tilde w\) and the gain are float32 and the gain is summed in another order
    (numpy: float64 of the same float32 statistics, summed in position order), which can change a decision only
    where two compared values, or the gain and the stop level, lie within a float32 rounding of each other; with
    ``epsilon_sum="epsilon"`` the level is \(\epsilon\) itself (numpy: \(K (\epsilon / K)\) in float64).
    ``decide`` computes the selections once per step for both the stop and the arm (the compiled rollout calls
    it); ``stop`` and ``select`` alone compute them each. The numpy agent's run-time refusal of an env of another
    family is not made here.
    """

    families: ClassVar[tuple[str, ...]] = ("top_k",)
    numpy_agent: ClassVar[str] = "CLUCBPAC"

    delta: float | None = None
    R: float = 0.5
    epsilon_sum: str = "k_epsilon"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.delta is not None:
            object.__setattr__(self, "delta", check.real("delta", self.delta, low=0.0, high=1.0, low_open=True,
                                                         high_open=True))
        object.__setattr__(self, "R", check.real("R", self.R, low=0.0, low_open=True))
        object.__setattr__(self, "epsilon_sum", check.choice("epsilon_sum", self.epsilon_sum, EPSILON_SUMS))

    def selections(self, order: ArmOrder, obs: Obs) -> tuple[Array, Array]:
        r"""``(stop, position)`` after the first round: whether the stop fires, and the position of largest rad in
        the symmetric difference of \(M_t\) and \(\tilde M_t\) (the first on ties)."""
        counts, sums = obs["counts"][order.arm_at], obs["sums"][order.arm_at]
        n, m = counts.shape[-1], obs["m"][0].astype(jnp.int32)
        made = (order.total - obs["budget_left"][0].astype(jnp.int32)).astype(jnp.float32)
        delta = obs["delta"][0] if self.delta is None else jnp.float32(self.delta)
        radius = self.R * jnp.sqrt(2.0 * (jnp.log(4.0 * n) + 3.0 * jnp.log(made) - jnp.log(delta)))
        mean = sums / jnp.maximum(counts, 1.0)
        rad = radius * (1.0 / jnp.sqrt(jnp.maximum(counts, 1.0)))
        inside = top_positions(mean, m)
        tilde = jnp.where(inside, mean - rad, mean + rad)
        differs = top_positions(tilde, m) != inside
        gain = jnp.sum(jnp.where(differs, jnp.where(inside, -tilde, tilde), 0.0))
        epsilon = obs["epsilon"][0]
        level = m.astype(jnp.float32) * epsilon if self.epsilon_sum == "k_epsilon" else epsilon
        return gain <= level, jnp.argmax(jnp.where(differs, rad, -1.0))

    def decide(self, state: ArmOrder, obs: Obs, key: Array) -> tuple[Array, Array, ArmOrder]:
        """The first round (each arm once, in the copy's order, no stop), then ``selections``."""
        made = state.total - obs["budget_left"][0].astype(jnp.int32)
        n = obs["counts"].shape[-1]
        stopped, position = self.selections(state, obs)
        position = jnp.where(made < n, jnp.minimum(made, n - 1), position)
        return (made >= n) & stopped, state.arm_at[position], state

    def select(self, state: ArmOrder, obs: Obs, key: Array) -> tuple[Array, ArmOrder]:
        _, arm, state = self.decide(state, obs, key)
        return arm, state

    def stop(self, state: ArmOrder, obs: Obs) -> Array:
        stopped, _, _ = self.decide(state, obs, jax.random.key(0))  # the key is not read
        return stopped
