"""The functional JAX envs behind gymnax's ``Environment`` interface, for the JAX RL code built on gymnax
(PureJaxRL and its ``LogWrapper``, gymnax's wrappers, jit / vmap / scan training loops).

Needs the ``gymnax`` extra (``pip install "pure-exploration-gym[gymnax]"``): gymnax 1.0.1 declares
``gymnasium < 1.4``, so pip installs Gymnasium 1.3 beside it, the oldest Gymnasium the package supports.

``make(env_id, **kwargs)`` returns ``(env, params)`` as ``gymnax.make`` does, for every id that ``gym.make``
builds under ``jax/`` (``make("ThresholdingBandit-Tao2019Setup1-v0", budget=500)``), with the same arguments::

    env, params = make("BestArmIdentification-v0", means=[0.5, 0.45, 0.4], budget=1000)
    obs, state = env.reset(key, params)
    obs, state, reward, terminated, truncated, info = env.step(key, state, action, params)

The dynamics are the functional env's (``bandit_gym.jax.envs``), the ones ``gym.make("jax/<id>")`` steps; this
class maps gymnax's methods onto Gymnasium's ``FuncEnv`` functions:

- ``reset_env``: ``initial``, then ``observation`` (the same dict of float32 arrays, the threshold side
  information included);
- ``step_env``: ``transition``, ``reward``, ``terminal`` (the episode's end: the answer step, or the horizon of
  the threshold and multi-armed bandits), ``observation``; ``info`` holds the episode's metrics
  (``episode_metrics``: the regret, and the error where the family has one, the pulls made, as the numpy env's
  ``RecordEpisodeRegret`` records them), whose values mean something where ``terminated`` is True, and
  ``action_outside_space``;
- ``is_truncated``: the budget ended a fixed-confidence episode (``capped``); the episode is then both terminated
  and truncated, as in the Gymnasium shells.

gymnax's ``step`` resets an ended episode within the same call (the next episode's first observation is
returned, the ended one's is ``info["final_observation"]``), where the Gymnasium vector shells reset on the next
step.

Actions are checked inside the compiled step, which cannot raise: an action outside ``action_space(params)``
(an arm outside 0..K, an answer bit other than 0 or 1) leaves the state as it was, with reward 0, and sets
``info["action_outside_space"]``; nothing is clipped.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import jax
import jax.numpy as jnp
import numpy as np
from gymnasium import spaces as gym_spaces
from gymnasium.envs.registration import load_env_creator

from bandit_gym.jax.envs._base import BanditFunctional

try:
    from gymnax.environments import environment
    from gymnax.environments import spaces as gymnax_spaces
except ImportError as error:  # pragma: no cover - the gymnax extra is missing
    raise ImportError('bandit_gym.jax.gymnax_env needs gymnax: pip install "pure-exploration-gym[gymnax]"') from error

Array = jax.Array


class MultiDiscrete(gymnax_spaces.Space):
    """gymnax has no multi-discrete space: the pure-exploration action ``[arm, answer bits]``, entry i in
    ``0..nvec[i] - 1``, each uniform in ``sample``."""

    def __init__(self, nvec: Any) -> None:
        self.nvec = jnp.asarray(nvec, dtype=jnp.int32)
        self.shape = tuple(self.nvec.shape)
        self.dtype = jnp.int32

    def __repr__(self) -> str:
        return f"MultiDiscrete({np.asarray(self.nvec).tolist()})"

    def sample(self, key: Array) -> Array:
        return jax.random.randint(key, self.shape, 0, self.nvec, dtype=self.dtype)

    def contains(self, x: Array) -> Array:
        x = jnp.asarray(x)
        return jnp.all((x >= 0) & (x < self.nvec))


def gymnax_space(space: gym_spaces.Space) -> gymnax_spaces.Space:
    """The gymnax space of one of the bandit envs' Gymnasium spaces (``Discrete`` from 0, ``MultiDiscrete`` from
    0, ``Box``, ``Dict`` of those)."""
    if isinstance(space, gym_spaces.Discrete) and int(space.start) == 0:
        return gymnax_spaces.Discrete(int(space.n))
    if isinstance(space, gym_spaces.MultiDiscrete) and not np.any(space.start):
        return MultiDiscrete(space.nvec)
    if isinstance(space, gym_spaces.Box):
        return gymnax_spaces.Box(jnp.asarray(space.low), jnp.asarray(space.high), space.shape, jnp.dtype(space.dtype))
    if isinstance(space, gym_spaces.Dict):
        return gymnax_spaces.Dict({key: gymnax_space(sub) for key, sub in space.spaces.items()})
    raise TypeError(f"no gymnax space for {space}")  # pragma: no cover - every bandit env's spaces are above


class GymnaxBandit(environment.Environment):
    """A functional bandit env (``bandit_gym.jax.envs``) as a gymnax ``Environment``; see the module's
    docstring. ``func_env`` is the functional env, ``env_id`` its name."""

    def __init__(self, func_env: BanditFunctional, env_id: str) -> None:
        super().__init__()
        self.func_env, self.env_id = func_env, env_id
        self._action_space = gymnax_space(func_env.action_space)
        self._observation_space = gymnax_space(func_env.observation_space)

    @property
    def default_params(self) -> Any:
        return self.func_env.default_params

    def reset_env(self, key: Array, params: Any) -> tuple[dict[str, Array], Any]:
        state = self.func_env.initial(key, params)
        return self.func_env.observation(state, key, params), state

    def step_env(self, key: Array, state: Any, action: Any, params: Any
                 ) -> tuple[dict[str, Array], Any, Array, Array, dict[str, Any]]:
        valid = jnp.asarray(self._action_space.contains(action))
        action = jnp.asarray(action).astype(jnp.int32)
        moved = self.func_env.transition(state, action, key, params)
        next_state = jax.tree.map(lambda new, old: jnp.where(valid, new, old), moved, state)
        reward = jnp.where(valid, self.func_env.reward(state, action, next_state, key, params), 0.0)
        terminated = self.func_env.terminal(next_state, key, params) & ~self.func_env.terminal(state, key, params)
        info = {**self.func_env.episode_metrics(next_state, params), "action_outside_space": ~valid}
        return self.func_env.observation(next_state, key, params), next_state, reward, terminated, info

    def observe(self, key: Array, state: Any, action: Any, params: Any) -> dict[str, Array]:
        return self.func_env.observation(state, key, params)

    def is_terminated(self, state: Any, params: Any) -> Array:
        return self.func_env.terminal(state, None, params)

    def is_truncated(self, state: Any, params: Any) -> Array:
        return state.capped

    @property
    def name(self) -> str:
        return self.env_id

    @property
    def num_actions(self) -> int:
        if isinstance(self._action_space, gymnax_spaces.Discrete):
            return int(self._action_space.n)
        raise NotImplementedError(f"{self.env_id}: an action is an array {self._action_space} (the arm, then the "
                                  "answer bits), not one of num_actions choices; see action_space(params)")

    def action_space(self, params: Any = None) -> gymnax_spaces.Space:
        return self._action_space

    def observation_space(self, params: Any = None) -> gymnax_spaces.Space:
        return self._observation_space


def make(env_id: str, **kwargs: Any) -> tuple[GymnaxBandit, Any]:
    """``(env, params)`` for ``env_id``, one of the ids ``gym.make`` builds under ``jax/`` (with or without the
    prefix), with the arguments of that id (its registered ones, updated by ``kwargs``)."""
    import bandit_gym  # noqa: F401 - registers the ids

    name = env_id.removeprefix("jax/")
    known = sorted(key.removeprefix("jax/") for key in gym.registry if key.startswith("jax/"))
    if name not in known:
        raise ValueError(f"env_id={env_id!r} has no JAX env; allowed: {', '.join(known)}")
    spec = gym.spec(f"jax/{name}")
    shell: Any = load_env_creator(str(spec.entry_point))  # a BanditJaxEnv class, which holds its functional env
    func_env = shell.functional(**{**spec.kwargs, **kwargs})
    return GymnaxBandit(func_env, name), func_env.default_params
