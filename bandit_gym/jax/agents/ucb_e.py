"""UCB-E (Audibert, Bubeck, Munos 2010) for best arm identification, as a pure function (the thresholding variant
of tao2019 is ``bandit_gym.jax.agents.ucbe.UCBE``, as in the numpy package)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, NamedTuple

import jax.numpy as jnp

from bandit_gym import _validation as check
from bandit_gym.jax.agents._base import ArmOrder, Array, JaxAgent, Obs, first_maximum


class UCBEState(NamedTuple):
    r"""The state of UCB-E in one copy: the arm order and the episode's exploration parameter \(a\)."""

    order: ArmOrder
    #: the exploration a of the episode (float32)
    a: Array


@dataclass(frozen=True)
class UCBEBestArm(JaxAgent):
    r"""UCB-E, the highly exploring UCB of best arm identification.

    Paper: Audibert, Bubeck, Munos, COLT 2010 (UCB-E in gabillon2012 §1, §4.4; UCBE in hoffman2014).

    $$
    I_t = \operatorname*{arg\,max}_i \hat\mu_i(t-1) + \sqrt{a / T_i(t-1)},
    \qquad +\infty \text{ for an arm never pulled},
    $$

    so each arm is pulled once first, in the copy's arm order. Output: the \(m\) arms of largest empirical mean (an arm
    never pulled ranking last; \(\operatorname*{arg\,max}_i \hat\mu_i\) for \(m = 1\)). Parameters: ``a``, or the oracle
    ``H1`` \(= \sum_i 1 / \Delta_i^2\) with \(a = c \max(n - K, 0) / H_1\) set at each episode start, \(n\) read from
    the first observation; default \(c = 25/36\) (the largest \(a\) of Audibert et al.'s theorem). Pass exactly one of
    ``a`` and ``H1``.

    Equal in distribution to ``bandit_gym.agents.UCBEBestArm`` (the numpy name: ``UCBE`` is the thresholding variant
    there and here): the same rule, every tie (pulls and answer) going to the arm first in the copy's arm order (random
    per copy and episode, the identity with ``tie_break="index"``), \(m > 1\) answered by the \(m\) largest means.
    Difference: the index and \(a\) are computed in float32 (numpy: float64 of the same float32 statistics), which can
    only reorder two arms whose indices are within a float32 rounding of each other and not equal.
    """

    families: ClassVar[tuple[str, ...]] = ("best_arm",)
    numpy_agent: ClassVar[str] = "UCBEBestArm"
    oracle_parameters: ClassVar[tuple[str, ...]] = ("H1",)
    oracle_alternatives: ClassVar[tuple[str, ...]] = ("a",)
    a: float | None = None
    H1: float | None = None
    c: float = 25.0 / 36.0

    def __post_init__(self) -> None:
        super().__post_init__()
        if (self.a is None) == (self.H1 is None):
            raise ValueError("pass exactly one of a (exploration, > 0) and H1 (oracle complexity, > 0)")
        for name in ("a", "H1", "c"):  # the numpy agent's checks and messages
            if getattr(self, name) is not None:
                check.real(name, getattr(self, name), low=0.0, low_open=True)

    def init(self, key: Array, obs: Obs) -> UCBEState:
        order = super().init(key, obs)
        k = obs["counts"].shape[-1]
        if self.H1 is not None:
            a = self.c * jnp.maximum(order.total - k, 0).astype(jnp.float32) / self.H1
        else:
            a = jnp.float32(self.a)
        return UCBEState(order=order, a=jnp.asarray(a, dtype=jnp.float32))

    def select(self, state: UCBEState, obs: Obs, key: Array) -> tuple[Array, UCBEState]:
        counts = obs["counts"]
        mean = obs["sums"] / jnp.maximum(counts, 1.0)
        index = jnp.where(counts > 0, mean + jnp.sqrt(state.a / jnp.maximum(counts, 1.0)), jnp.inf)
        return first_maximum(index, state.order), state
