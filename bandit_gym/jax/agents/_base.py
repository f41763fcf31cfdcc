"""The protocol of the JAX agents: pure functions of one copy, the package's agent protocol without hidden state.

An agent is a frozen dataclass of its parameters (hashable, so a compiled rollout is cached per agent). Its
methods take and return its state explicitly:

- ``init(key, obs) -> state``: the state of a new episode from its first observation; by default the copy's
  arm order (``ArmOrder``), a random permutation of the arms from ``key`` (``tie_break="random"``) or the
  identity (``tie_break="index"``), and the episode's budget T;
- ``select(state, obs, key) -> (arm, state)``: the arm to pull, required;
- ``answer(state, obs, key) -> bits``: the family's empirical answer by default (ties: the arm first in the arm
  order);
- ``stop(state, obs) -> bool``: False by default (the fixed-confidence setting reads it);
- ``decide(state, obs, key) -> (stop, arm, state)``: ``stop`` and ``select`` of the same step at once, what the
  compiled rollout asks a fixed-confidence agent at every step; by default it calls both, and an agent whose two
  compute the same thing overrides it (CLUCB-PAC's selections; the best-arm fixed-confidence rules, whose
  ``FixedConfidenceAgent.decide`` calls both in one function, so that the compiler shares their work);
- ``check_env(env, params)``: raise where the numpy twin refuses the env (its arms, its m or epsilon), called by
  ``play`` on the concrete params before anything is compiled; nothing by default.

``act(agent, family, state, obs, key)`` composes the env's action from them, as the numpy agents do. Everything is
written for one copy; ``jax.vmap`` plays a batch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple

import jax
import jax.numpy as jnp

from bandit_gym.families import Family

Array = jax.Array
Obs = dict[str, Array]
TIE_BREAKS = ("random", "index")


class ArmOrder(NamedTuple):
    """The state every agent starts from: the copy's arm order and the episode's budget."""

    #: ``arm_at[p]``: the arm at position p of the copy's order (ties go to the earlier position)
    arm_at: Array
    #: ``position_of[i]``: the position of arm i in the order
    position_of: Array
    #: the episode's budget T (pulls), read from the first observation
    total: Array


def thresholding_answer(obs: Obs) -> Array:
    """``d_i = 1{mean_i >= theta}`` (``bandit_gym.families.thresholding.empirical_answer``)."""
    return (obs["means"] >= obs["threshold"][0]).astype(jnp.int32)


def top_m_answer(obs: Obs, position_of: Array) -> Array:
    """The m arms of largest empirical mean, an arm never pulled ranking last, ties to the arm first in the arm
    order (``bandit_gym.families.best_arm.top_m_answer`` and the numpy agents' ``top_m_answers``)."""
    key = jnp.where(obs["counts"] > 0, obs["sums"] / jnp.maximum(obs["counts"], 1.0), -jnp.inf)
    ranked = jnp.lexsort((position_of, -key))  # by mean, then by position in the order
    rank = jnp.argsort(ranked)
    return (rank < obs["m"][0].astype(jnp.int32)).astype(jnp.int32)


def first_minimum(values: Array, order: ArmOrder) -> Array:
    """The arm of smallest value, ties to the arm first in the copy's order (the numpy agents' argmin; the values
    are not NaN).

    One pass over the K arms: a reduction of the (value, position, arm) triples by their lexicographic order on
    (value, position), rather than a minimum and then an argmin among the tied arms (two passes, the second waiting
    for the first). The same arm; ``benchmarks/bench_jax_step.py`` times the two."""
    k = values.shape[-1]

    def earlier(a: tuple[Array, Array, Array], b: tuple[Array, Array, Array]) -> tuple[Array, Array, Array]:
        take = (a[0] < b[0]) | ((a[0] == b[0]) & (a[1] < b[1]))
        return jnp.where(take, a[0], b[0]), jnp.where(take, a[1], b[1]), jnp.where(take, a[2], b[2])

    largest = jnp.inf if jnp.issubdtype(values.dtype, jnp.floating) else jnp.iinfo(values.dtype).max
    start = (jnp.array(largest, dtype=values.dtype), jnp.int32(k), jnp.int32(0))
    triples = (values, order.position_of.astype(jnp.int32), jnp.arange(k, dtype=jnp.int32))
    return jax.lax.reduce(triples, start, earlier, (values.ndim - 1,))[2]


def first_maximum(values: Array, order: ArmOrder) -> Array:
    """The arm of largest value, ties to the arm first in the copy's order."""
    return first_minimum(-values, order)


def arm_at(order: ArmOrder, position: Array) -> Array:
    """The arm at ``position`` of the copy's order."""
    return order.arm_at[position]


@dataclass(frozen=True)
class JaxAgent:
    """Base class of the JAX agents (see the module's docstring for the protocol)."""

    #: the families the agent plays
    families: ClassVar[tuple[str, ...]] = ()
    #: the numpy agent of ``bandit_gym.agents`` that this one equals in distribution
    numpy_agent: ClassVar[str] = ""

    tie_break: str = "random"

    def __post_init__(self) -> None:
        if self.tie_break not in TIE_BREAKS:
            raise ValueError(f"tie_break={self.tie_break!r} is not a tie rule; allowed: {TIE_BREAKS}")

    def init(self, key: Array, obs: Obs) -> Any:
        k = obs["counts"].shape[-1]
        arm_at = jax.random.permutation(key, k) if self.tie_break == "random" else jnp.arange(k)
        return ArmOrder(arm_at=arm_at.astype(jnp.int32), position_of=jnp.argsort(arm_at).astype(jnp.int32),
                        total=obs["budget_left"][0].astype(jnp.int32))

    def select(self, state: Any, obs: Obs, key: Array) -> tuple[Array, Any]:
        raise NotImplementedError

    def answer(self, state: Any, obs: Obs, key: Array) -> Array:
        if "m" in obs:
            return top_m_answer(obs, self.order(state).position_of)
        return thresholding_answer(obs)

    def stop(self, state: Any, obs: Obs) -> Array:
        return jnp.bool_(False)

    def decide(self, state: Any, obs: Obs, key: Array) -> tuple[Array, Array, Any]:
        """``(stop(state, obs), *select(state, obs, key))``: whether to stop, else the arm to pull and the state
        after it."""
        arm, next_state = self.select(state, obs, key)
        return self.stop(state, obs), arm, next_state

    def check_env(self, env: Any, params: Any) -> None:
        """Raise where the numpy agent refuses ``env`` with ``params``; nothing by default."""

    def order(self, state: Any) -> ArmOrder:
        """The copy's arm order in ``state`` (an ``ArmOrder``, or a state that holds one as ``order``)."""
        return state if isinstance(state, ArmOrder) else state.order


def act(agent: JaxAgent, family: Family, state: Any, obs: Obs, key: Array) -> tuple[Array, Any]:
    """The env's action from ``agent`` (``[arm or K, answer bits]`` in a pure-exploration family, the arm in an
    online one) and the agent's next state."""
    select_key, answer_key = jax.random.split(key)
    arm, state = agent.select(state, obs, select_key)
    arm = jnp.asarray(arm, dtype=jnp.int32)
    if not family.pure_exploration:
        return arm, state
    bits = agent.answer(state, obs, answer_key).astype(jnp.int32)
    k = bits.shape[-1]
    arm = jnp.where(agent.stop(state, obs), k, arm)
    return jnp.concatenate([arm[None], bits]), state
