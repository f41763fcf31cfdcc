r"""UCB1 (Auer, Cesa-Bianchi and Fischer 2002) as a pure function, and the upper-confidence-index agents of the
\(K\)-armed bandit it shares with KL-UCB: pull the arm of largest index, an arm never pulled first."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import jax.numpy as jnp

from bandit_gym.jax.agents._base import Array, JaxAgent, Obs, first_maximum


def pulls_made(state: Any, obs: Obs) -> Array:
    """The pulls made so far in the episode (0 at its start), float32: the budget read at ``init`` less the
    budget left (the numpy agents' ``pulls``)."""
    return (state.total - obs["budget_left"][0].astype(jnp.int32)).astype(jnp.float32)


@dataclass(frozen=True)
class UpperIndexAgent(JaxAgent):
    r"""A \(K\)-armed bandit agent that pulls \(\operatorname*{arg\,max}_i \text{index}_i\) (ties: the arm first in the
    copy's arm order, a random permutation per copy and episode or the identity with ``tie_break="index"``). An arm
    never pulled has index \(+\infty\), so the first \(K\) rounds pull every arm once in the copy's arm order, as the
    numpy agents do."""

    families: ClassVar[tuple[str, ...]] = ("multi_armed",)

    def index(self, state: Any, obs: Obs) -> Array:
        r"""The index of every arm, ``(K,)`` (larger is pulled first; \(+\infty\) for an arm never pulled)."""
        raise NotImplementedError

    def select(self, state: Any, obs: Obs, key: Array) -> tuple[Array, Any]:
        return first_maximum(self.index(state, obs), self.order(state)), state


@dataclass(frozen=True)
class UCB1(UpperIndexAgent):
    r"""UCB1: play each arm once, then the arm of largest upper confidence bound.

    Paper: P. Auer, N. Cesa-Bianchi, P. Fischer. Finite-time analysis of the multiarmed bandit problem. Machine
    Learning 47, 2002, Figure 1 (UCB1) and Theorem 1.

    Rule, with \(n\) the number of pulls made so far and \(T_i\) the pulls of arm \(i\):

    $$
    I_t = \operatorname*{arg\,max}_i \hat\mu_i + \sqrt{2 \ln \max(n, 2) / T_i}
    \qquad (+\infty \text{ for an arm never pulled})
    $$

    Parameters: none (defaults: ``tie_break="random"``). Anytime (\(T\) is never read). Equal in distribution to
    ``bandit_gym.agents.UCB1`` (the same index, ``max(n, 2)`` included, and the same tie rule); the index is
    computed in float32 from the observation."""

    numpy_agent: ClassVar[str] = "UCB1"

    def index(self, state: Any, obs: Obs) -> Array:
        counts = obs["counts"]
        scale = jnp.sqrt(2.0 * jnp.log(jnp.maximum(pulls_made(state, obs), 2.0)))
        bonus = scale * jnp.sqrt(1.0 / jnp.maximum(counts, 1.0))
        return jnp.where(counts > 0, obs["means"] + bonus, jnp.inf)
