"""Whole episodes of a functional env and a JAX agent, compiled into one function: ``play``.

One episode is a ``lax.while_loop`` over the steps of one copy (observe, act, transition) until the env's
``terminal`` (a pure-exploration episode: until the last pull or the agent's stop, then its answer step);
``jax.vmap`` runs ``episodes`` copies in lockstep and ``jax.jit`` compiles the whole of it once per
(env, agent, episodes). Nothing leaves the device until the per-episode metrics come back.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from bandit_gym.jax.agents._base import JaxAgent, act
from bandit_gym.jax.envs._base import BanditFunctional
from bandit_gym.jax.envs._shells import seed_key

MAX_EPISODES = 2**31 - 1
"""The most episodes one ``play`` call takes (a JAX key split)."""


@dataclasses.dataclass(frozen=True)
class _Loop:
    """What one episode's loop reads that does not change along it (fixed at trace time), and the loop itself.

    The loop's carry is ``(state, agent_state, t)``, with the agent's pending decision appended when ``fused``.
    The observation is recomputed from the state where it is read rather than carried, and step t's keys are
    folded from the episode's (``fold_in(keys, t)``) rather than split from a carried key: a batched while loop
    selects every changing leaf of its carry at every step, and an agent that draws nothing leaves its key unused
    (compiled away).

    ``lockstep``: a fixed-budget episode of an agent that never stops pulls on every step until the budget; its
    loop runs on the step count alone, which is the same for every copy, so that under ``vmap`` the loop's
    condition is not batched and the copies' states are not re-selected at every step (the general condition is
    per copy). ``fused``: an agent whose ``decide`` computes the stop and the arm at once (CLUCB-PAC, EB-TCI,
    Track-and-Stop) is asked once per step: the carry holds its pending decision for the current state (stop, arm,
    next agent state), made at the end of the previous step, and the loop's condition reads it. The same
    decisions, from the same keys, as asking ``stop`` in the condition and ``select`` in the step."""

    env: BanditFunctional
    agent: JaxAgent
    params: Any
    act_keys: jax.Array
    pull_keys: jax.Array
    common_random_numbers: bool
    exploring: bool
    lockstep: bool
    fused: bool

    def pull_key(self, t: jax.Array, arm: jax.Array, counts: jax.Array) -> jax.Array:
        """Step t's key of the env's draw: from t alone, or with common random numbers from (arm, its pulls)."""
        if not self.common_random_numbers:
            return jax.random.fold_in(self.pull_keys, t)
        draws = counts[jnp.clip(arm, 0, self.env.num_arms - 1)].astype(jnp.int32)  # the arm's pulls so far
        return jax.random.fold_in(jax.random.fold_in(self.pull_keys, arm), draws)

    def observe(self, state: Any) -> Any:
        return self.env.observation(state, None, self.params)

    def decision(self, state: Any, agent_state: Any, t: jax.Array) -> tuple[Any, ...]:
        return self.agent.decide(agent_state, self.observe(state), jax.random.fold_in(self.act_keys, t))

    def start(self, state: Any, agent_state: Any) -> tuple[Any, ...]:
        carry: tuple[Any, ...] = (state, agent_state, jnp.int32(0))
        return (*carry, *self.decision(state, agent_state, jnp.int32(0))) if self.fused else carry

    def running(self, carry: tuple[Any, ...], until: int | None) -> jax.Array:
        """Whether the next step is played (before the pull count ``until``, if given)."""
        state, agent_state, t, *pending = carry
        if self.lockstep:  # t pulls made so far
            return t < (self.params.budget if until is None else jnp.minimum(self.params.budget, until))
        if self.exploring:  # pulls remain (before ``until``) and the agent goes on: the next step is a pull
            more = state.budget_left > 0
            if until is not None:
                more &= self.params.budget - state.budget_left < until
            stop = pending[0] if self.fused else self.agent.stop(agent_state, self.observe(state))
            return more & ~stop
        return ~self.env.terminal(state, None, self.params)

    def step(self, carry: tuple[Any, ...]) -> tuple[Any, ...]:
        state, agent_state, t, *pending = carry
        act_key = jax.random.fold_in(self.act_keys, t)
        obs = self.observe(state)
        if self.exploring:  # a pull: the env's transition without the answer it would ignore
            if self.fused:
                _, arm, agent_state = pending
            else:
                arm, agent_state = self.agent.select(agent_state, obs, act_key)
            state = self.env.pull_step(state, arm, self.pull_key(t, arm, state.counts), self.params)
        else:  # an online step: the action is the arm (a wrapper's one-entry action too)
            action, agent_state = act(self.agent, self.env.family, agent_state, obs, act_key)
            arm = jnp.reshape(jnp.asarray(action), (-1,))[0]
            state = self.env.transition(state, action, self.pull_key(t, arm, state.counts), self.params)
        if self.fused:
            return state, agent_state, t + 1, *self.decision(state, agent_state, t + 1)
        return state, agent_state, t + 1

    def run(self, carry: tuple[Any, ...], until: int | None) -> tuple[Any, ...]:
        return jax.lax.while_loop(functools.partial(self.running, until=until), self.step, carry)

    def answer_losses(self, carry: tuple[Any, ...]) -> dict[str, jax.Array]:
        """The losses of the agent's answer now (an anytime checkpoint)."""
        state, agent_state, t = carry[:3]
        bits = self.agent.answer(agent_state, self.observe(state), jax.random.fold_in(self.act_keys, t))
        return self.env.answer_losses(bits, state.means, self.params)


def episode(env: BanditFunctional, agent: JaxAgent, key: jax.Array, params: Any = None,
            agent_key: jax.Array | None = None, checkpoints: tuple[int, ...] = (),
            common_random_numbers: bool = False) -> dict[str, jax.Array]:
    """Play one episode of ``env`` with ``agent`` from ``key``; return ``env.episode_metrics`` of its last
    state (pure; ``jax.vmap`` it for a batch).

    In a pure-exploration family only the answer of the last step is scored, so the loop asks the agent for arms
    (and whether to stop) only, and for its answer once, on the answer step: the same episode as acting with
    ``act`` at every step, without K answer bits per step that the env would ignore.

    ``agent_key`` (default: drawn from ``key``) seeds the agent alone, so that two agents given the same ``key``
    play the same instance. ``checkpoints`` (pure exploration; increasing pull counts) also scores the agent's
    answer after each of them, as ``anytime_regret`` and ``anytime_error`` (one value per checkpoint), the way the
    numpy anytime wrapper scores an anytime agent at several budgets from one episode. With
    ``common_random_numbers`` the s-th pull of arm i draws from a key of (episode, i, s) alone, so that every agent
    given the same ``key`` sees the same samples of each arm in the same order (the numpy envs' streams)."""
    params = env.default_params if params is None else params
    env_key, own_agent_key, act_keys, pull_keys = jax.random.split(key, 4)
    if agent_key is None:
        init_key = own_agent_key
    else:  # the agent's randomness from its own key alone
        init_key, act_keys = jax.random.split(agent_key)
    state = env.initial(env_key, params)
    agent_state = agent.init(init_key, env.observation(state, env_key, params))
    exploring = env.family.pure_exploration
    if checkpoints and not exploring:
        raise ValueError(f"checkpoints score answers: the {env.family.value} env is online and has none")
    lockstep = exploring and not getattr(env, "fixed_confidence", False) and type(agent).stop is JaxAgent.stop
    loop = _Loop(env, agent, params, act_keys, pull_keys, common_random_numbers, exploring, lockstep,
                 fused=exploring and not lockstep and type(agent).decide is not JaxAgent.decide)
    carry = loop.start(state, agent_state)
    anytime: list[dict[str, jax.Array]] = []
    for budget in checkpoints:
        carry = loop.run(carry, budget)
        anytime.append(loop.answer_losses(carry))
    state, agent_state, t = loop.run(carry, None)[:3]
    if exploring:  # the answer step: a stop, or the step after the last pull
        action, _ = act(agent, env.family, agent_state, loop.observe(state), jax.random.fold_in(act_keys, t))
        state = env.transition(state, action, jax.random.fold_in(pull_keys, t), params)
    metrics = env.episode_metrics(state, params)
    if anytime:
        metrics["anytime_regret"] = jnp.stack([losses["regret"] for losses in anytime]).astype(jnp.float32)
        metrics["anytime_error"] = jnp.stack([losses["error"] for losses in anytime]).astype(jnp.float32)
    return metrics


@functools.partial(jax.jit, static_argnames=("env", "agent", "episodes", "checkpoints", "common_random_numbers"))
def _play(env: BanditFunctional, agent: JaxAgent, key: jax.Array, episodes: int, params: Any,
          agent_key: jax.Array | None, checkpoints: tuple[int, ...], common_random_numbers: bool) -> dict[str, Any]:
    keys = jax.random.split(key, episodes)
    if agent_key is None:
        return jax.vmap(lambda k: episode(env, agent, k, params, None, checkpoints, common_random_numbers))(keys)
    return jax.vmap(lambda k, a: episode(env, agent, k, params, a, checkpoints, common_random_numbers))(
        keys, jax.random.split(agent_key, episodes))


def _key(value: jax.Array | int, name: str) -> jax.Array:
    """The key of an int seed (any whole number from 0, every bit of it read, as the envs' ``reset(seed=...)``:
    ``seed_key``; below 2**32, ``jax.random.key(seed)``), or ``value`` itself, a ``jax.random`` key."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        if value < 0:
            raise ValueError(f"{name}={value!r} must be a seed (a whole number from 0) or a jax.random key")
        if value < 2**32:
            return jax.random.key(int(value))
        return jax.random.wrap_key_data(seed_key(int(value)), impl="threefry2x32")
    return jnp.asarray(value)


def play(env: BanditFunctional, agent: JaxAgent, key: jax.Array | int, episodes: int, params: Any = None, *,
         agent_key: jax.Array | int | None = None, checkpoints: Sequence[int] = (),
         common_random_numbers: bool = False) -> dict[str, jax.Array]:
    """Play ``episodes`` independent episodes of ``env`` with ``agent`` (one per key split from ``key``, an int
    seed or a ``jax.random`` key) and return one array of ``episodes`` values per metric (pure exploration:
    ``regret``, ``error``, ``pulls``, ...; online: ``regret``, ``pulls``). ``params`` (default
    ``env.default_params``) may change between calls without recompiling.

    ``agent_key`` seeds the agents apart from the instances and samples (two agents played with the same ``key``
    then face the same instances); ``checkpoints`` adds ``(episodes, len(checkpoints))`` arrays
    ``anytime_regret`` and ``anytime_error``, the answer's losses after each checkpoint's pulls; and
    ``common_random_numbers`` draws each arm's samples from streams of their own (see ``episode``)."""
    if isinstance(episodes, bool) or not isinstance(episodes, int) or not 1 <= episodes <= MAX_EPISODES:
        raise ValueError(f"episodes={episodes!r} must be an integer in 1..{MAX_EPISODES}")
    if env.family.value not in agent.families:
        raise ValueError(f"{type(agent).__name__} plays {agent.families}, not the {env.family.value} env "
                         f"{type(env).__name__}")
    marks = tuple(int(b) for b in checkpoints)
    if list(marks) != sorted(set(marks)) or (marks and marks[0] < 1):
        raise ValueError(f"checkpoints={list(checkpoints)!r} must be increasing pull counts >= 1")
    if not isinstance(common_random_numbers, bool):
        raise TypeError(f"common_random_numbers must be True or False, got {common_random_numbers!r}")
    if common_random_numbers and not env.engine_class.takes_common_random_numbers:
        raise ValueError(f"common_random_numbers=True: the {env.family.value} env {type(env).__name__} draws no "
                         "per-arm sample streams (its numpy env takes no common_random_numbers either)")
    params = env.default_params if params is None else params
    agent.check_env(env, params)
    return _play(env, agent, _key(key, "key"), episodes, params,
                 None if agent_key is None else _key(agent_key, "agent_key"), marks, common_random_numbers)
