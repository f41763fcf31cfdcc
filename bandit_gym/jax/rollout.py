"""Whole episodes of a functional env and a JAX agent, compiled into one function: ``play``.

One episode is a ``lax.while_loop`` over the steps of one copy (observe, act, transition) until the env's
``terminal`` (a pure-exploration episode: until the last pull or the agent's stop, then its answer step);
``jax.vmap`` runs ``episodes`` copies in lockstep and ``jax.jit`` compiles the whole of it once per
(env, agent, episodes). Nothing leaves the device until the per-episode metrics come back.
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp

from bandit_gym.jax.agents._base import JaxAgent, act
from bandit_gym.jax.envs._base import BanditFunctional

MAX_EPISODES = 2**31 - 1
"""The most episodes one ``play`` call takes (a JAX key split)."""


def episode(env: BanditFunctional, agent: JaxAgent, key: jax.Array, params: Any = None) -> dict[str, jax.Array]:
    """Play one episode of ``env`` with ``agent`` from ``key``; return ``env.episode_metrics`` of its last
    state (pure; ``jax.vmap`` it for a batch).

    In a pure-exploration family only the answer of the last step is scored, so the loop asks the agent for arms
    (and whether to stop) only, and for its answer once, on the answer step: the same episode as acting with
    ``act`` at every step, without K answer bits per step that the env would ignore."""
    params = env.default_params if params is None else params
    env_key, agent_key, act_keys, pull_keys = jax.random.split(key, 4)
    state = env.initial(env_key, params)
    carry = (state, agent.init(agent_key, env.observation(state, env_key, params)), jnp.int32(0))
    exploring = env.family.pure_exploration

    # The observation is recomputed from the state where it is read rather than carried, and step t's keys are
    # folded from the episode's (``fold_in(keys, t)``) rather than split from a carried key: a batched while loop
    # selects every changing leaf of its carry at every step, and an agent that draws nothing leaves its key unused
    # (compiled away).
    def running(carry: tuple[Any, ...]) -> jax.Array:
        state, agent_state, _ = carry
        if exploring:  # pulls remain and the agent goes on: the next step is a pull
            obs = env.observation(state, None, params)
            return (state.budget_left > 0) & ~agent.stop(agent_state, obs)
        return ~env.terminal(state, None, params)

    def step(carry: tuple[Any, ...]) -> tuple[Any, ...]:
        state, agent_state, t = carry
        act_key, pull_key = jax.random.fold_in(act_keys, t), jax.random.fold_in(pull_keys, t)
        obs = env.observation(state, None, params)
        if exploring:  # a pull: the env's transition without the answer it would ignore
            arm, agent_state = agent.select(agent_state, obs, act_key)
            state = env.pull_step(state, arm, pull_key, params)
        else:
            action, agent_state = act(agent, env.family, agent_state, obs, act_key)
            state = env.transition(state, action, pull_key, params)
        return state, agent_state, t + 1

    state, agent_state, t = jax.lax.while_loop(running, step, carry)
    if exploring:  # the answer step: a stop, or the step after the last pull
        action, _ = act(agent, env.family, agent_state, env.observation(state, None, params),
                        jax.random.fold_in(act_keys, t))
        state = env.transition(state, action, jax.random.fold_in(pull_keys, t), params)
    return env.episode_metrics(state, params)


@functools.partial(jax.jit, static_argnames=("env", "agent", "episodes"))
def _play(env: BanditFunctional, agent: JaxAgent, key: jax.Array, episodes: int, params: Any) -> dict[str, Any]:
    return jax.vmap(lambda k: episode(env, agent, k, params))(jax.random.split(key, episodes))


def play(env: BanditFunctional, agent: JaxAgent, key: jax.Array | int, episodes: int,
         params: Any = None) -> dict[str, jax.Array]:
    """Play ``episodes`` independent episodes of ``env`` with ``agent`` (one per key split from ``key``, an int
    seed or a ``jax.random`` key) and return one array of ``episodes`` values per metric (pure exploration:
    ``regret``, ``error``, ``pulls``, ...; online: ``regret``, ``pulls``). ``params`` (default
    ``env.default_params``) may change between calls without recompiling."""
    if isinstance(episodes, bool) or not isinstance(episodes, int) or not 1 <= episodes <= MAX_EPISODES:
        raise ValueError(f"episodes={episodes!r} must be an integer in 1..{MAX_EPISODES}")
    if env.family.value not in agent.families:
        raise ValueError(f"{type(agent).__name__} plays {agent.families}, not the {env.family.value} env "
                         f"{type(env).__name__}")
    if isinstance(key, int) and not isinstance(key, bool):
        key = jax.random.key(key)
    params = env.default_params if params is None else params
    return _play(env, agent, jnp.asarray(key), episodes, params)
