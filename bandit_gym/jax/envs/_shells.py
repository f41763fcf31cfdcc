"""Gymnasium's shells around a functional env: ``FunctionalJaxEnv`` for one copy, and a ``FunctionalJaxVectorEnv``
whose step is one compiled function over the whole batch.

Gymnasium's ``FunctionalJaxVectorEnv.step`` autoresets with ``state.at[rows].set(...)``, which needs the state to
be one array; the bandit envs keep a pytree (``ArmState``), so ``BanditJaxVectorEnv`` replaces the step with one
``jax.jit`` function that autoresets every leaf with ``jnp.where``, keeping Gymnasium's ``NEXT_STEP`` convention:
the step after a copy's episode ends ignores its action, returns its new episode's first observation with reward 0,
``terminated`` and ``truncated`` False.

Both check every action as the numpy envs do, with their messages (the pure functions clip an arm out of range
instead, as compiled code must): a batch given as a numpy array (or a list) is checked on the host before it is
sent; a JAX array is checked inside the compiled step, which returns a flag, and a batch that fails it leaves the
state as it was.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import gymnasium as gym
import jax
import jax.numpy as jnp
import numpy as np
from gymnasium import spaces
from gymnasium.envs.functional_jax_env import FunctionalJaxEnv, FunctionalJaxVectorEnv
from gymnasium.utils import EzPickle
from gymnasium.vector import AutoresetMode, VectorEnv

from bandit_gym import _validation as check
from bandit_gym.jax.envs._base import BanditFunctional


class BanditJaxEnv(FunctionalJaxEnv, EzPickle):
    """One copy of a functional bandit env as a ``gymnasium.Env`` (observations are JAX arrays)."""

    functional: ClassVar[type[BanditFunctional]]
    metadata = {"render_modes": [], "jax": True}  # noqa: RUF012 (Gymnasium's convention)

    def __init__(self, render_mode: str | None = None, **kwargs: Any) -> None:
        if render_mode is not None:
            raise ValueError(f"render_mode={render_mode!r}: the JAX envs do not render; use the numpy env "
                             f"{self.functional.numpy_id}")
        EzPickle.__init__(self, render_mode=render_mode, **kwargs)
        env = self.functional(**kwargs)
        self._checks = env.engine  # the numpy engine of one copy: its action checks and messages
        env.transform(jax.jit)
        FunctionalJaxEnv.__init__(self, env, metadata=self.metadata, render_mode=render_mode)

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if not hasattr(self, "state"):
            raise RuntimeError("step() was called before reset(); call reset() first")
        if bool(self.state.done):
            raise ValueError("step() was called after the episode terminated; call reset() before stepping again")
        checked = self._checks.check_actions(np.asarray(action)[None])[0]
        obs, reward, terminated, _, info = super().step(jnp.asarray(checked))
        return obs, reward, terminated, bool(self.state.capped), info

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[Any, dict[str, Any]]:
        _refuse_options(options)
        if seed is not None:  # Gymnasium's check of the seed and np_random, then the seed's key (``seed_key``)
            gym.Env.reset(self, seed=seed)
            self.rng = seed_key(seed)
        return super().reset(seed=None)


class BanditJaxVectorEnv(FunctionalJaxVectorEnv, EzPickle):
    """``num_envs`` copies of a functional bandit env, stepped by one compiled function (``jax.vmap`` inside
    ``jax.jit``); Gymnasium's ``NEXT_STEP`` autoreset."""

    functional: ClassVar[type[BanditFunctional]]
    metadata = {"render_modes": [], "jax": True, "autoreset_mode": AutoresetMode.NEXT_STEP}  # noqa: RUF012

    def __init__(self, num_envs: int = 1, render_mode: str | None = None, **kwargs: Any) -> None:
        if render_mode is not None:
            raise ValueError(f"render_mode={render_mode!r}: the JAX envs do not render")
        num_envs = check.integer("num_envs", num_envs, minimum=1)  # as the numpy envs check it, with its message
        EzPickle.__init__(self, num_envs=num_envs, render_mode=render_mode, **kwargs)
        env = self.functional(**kwargs)
        check.check_env_memory(num_envs, *env.engine.memory)  # the numpy twin's limit, before anything is made
        self._checks = env.engine  # the numpy engine of one copy: its action checks and messages
        FunctionalJaxVectorEnv.__init__(self, env, num_envs=num_envs, metadata=self.metadata,
                                        render_mode=render_mode)
        self._upper = _upper_bounds(env.action_space)
        self._step = jax.jit(self._pure_step)

    def _pure_step(self, state: Any, prev_done: jax.Array, action: jax.Array, key: jax.Array) -> tuple[Any, ...]:
        env, n = self.func_env, self.num_envs
        valid = jnp.all((action >= 0) & (action < jnp.asarray(self._upper)))
        step_key, reset_key = jax.random.split(key)
        keys = jax.random.split(step_key, n)
        next_state = env.transition(state, action, keys)
        reward = env.reward(state, action, next_state, keys)
        terminated = env.terminal(next_state, keys)
        truncated = next_state.capped & ~state.capped
        fresh = env.initial(jax.random.split(reset_key, n))
        next_state = jax.tree.map(
            lambda new, old: jnp.where(prev_done.reshape((n,) + (1,) * (old.ndim - 1)), new, old), fresh, next_state)
        reward = jnp.where(prev_done, 0.0, reward)
        terminated, truncated = terminated & ~prev_done, truncated & ~prev_done
        obs = env.observation(next_state, keys)
        return next_state, obs, reward, terminated, truncated, valid

    def step(self, action: Any) -> tuple[Any, jax.Array, jax.Array, jax.Array, dict[str, Any]]:
        if not hasattr(self, "state"):
            raise RuntimeError("step() was called before reset(); call reset() first")
        on_device = isinstance(action, jax.Array)
        actions = self._static_checks(action if on_device else np.asarray(action))
        if not on_device and not np.all((actions >= 0) & (actions < self._upper)):
            self._refuse(actions)
        key, rng = jax.random.split(self.rng)
        state, obs, reward, terminated, truncated, valid = self._step(self.state, self.prev_done,
                                                                      jnp.asarray(actions), key)
        if on_device and not bool(valid):
            self._refuse(np.asarray(actions))
        self.state, self.rng, self.prev_done = state, rng, terminated | truncated
        return obs, reward, terminated, truncated, {}

    def _static_checks(self, actions: Any) -> Any:
        """The batch's shape and integer type, read without looking at its values."""
        shape = (self.num_envs, *(self.single_action_space.shape or ()))
        if tuple(actions.shape) != shape:
            raise ValueError(f"actions must have shape {shape}, one action of {self.single_action_space} per copy; "
                             f"got shape {tuple(actions.shape)}")
        if not np.issubdtype(actions.dtype, np.integer):
            raise TypeError(f"actions must hold integers, got dtype {actions.dtype}")
        return actions

    def _refuse(self, actions: np.ndarray) -> None:
        """Raise the numpy env's error for the first copy whose action is out of the space."""
        outside = (actions < 0) | (actions >= self._upper)
        row = int(np.flatnonzero(outside.reshape(self.num_envs, -1).any(axis=1))[0])
        try:
            self._checks.check_actions(actions[row:row + 1])
        except (ValueError, TypeError) as error:
            raise type(error)(f"copy {row}: {error}") from None
        raise ValueError(f"copy {row}: action {actions[row]} is not in {self.single_action_space}")

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[Any, dict[str, Any]]:
        _refuse_options(options)
        if seed is not None:  # as ``BanditJaxEnv.reset``
            VectorEnv.reset(self, seed=seed)
            self.rng = seed_key(seed)
        obs, info = super().reset(seed=None)
        self.prev_done = jnp.zeros(self.num_envs, dtype=bool)
        return obs, info


def _upper_bounds(space: spaces.Space) -> np.ndarray:
    """One copy's action space as the exclusive upper bound of each entry (every entry starts at 0)."""
    if isinstance(space, spaces.MultiDiscrete) and not np.any(space.start):
        return np.asarray(space.nvec, dtype=np.int64)
    if isinstance(space, spaces.Discrete) and int(space.start) == 0:
        return np.asarray(int(space.n), dtype=np.int64)
    raise TypeError(f"the JAX vector env takes actions from 0, not {space}")  # pragma: no cover


def seed_key(seed: int) -> jax.Array:
    """The ``jax.random`` key of a ``reset`` seed (a whole number from 0, checked by Gymnasium first): the key
    ``jax.random.PRNGKey(seed)`` gives with 64-bit integers enabled, the seed's high and low 32 bits, for seeds below
    2**64 (Gymnasium's shells call ``PRNGKey`` itself, which without 64-bit integers keeps only the low 32 bits, so
    that seeds 0 and 2**32 played the same episodes, and which overflows from 2**63); above 2**64, two 32-bit words of
    numpy's ``SeedSequence`` of the seed, which reads every bit of it, as a numpy env's ``reset(seed=...)`` does.
    Below 2**32 the key is ``PRNGKey(seed)``'s: the streams of those seeds are unchanged."""
    if seed < 2**64:
        return jnp.asarray(np.array([seed >> 32, seed & 0xFFFFFFFF], dtype=np.uint32))
    return jnp.asarray(np.random.SeedSequence(seed).generate_state(2, dtype=np.uint32))


def _refuse_options(options: Any) -> None:
    """Reset options: None or an empty dict (the JAX envs take none), refused with the numpy envs' messages."""
    if options is not None and not isinstance(options, Mapping):
        raise TypeError(f"options={options!r}: reset options must be a dict (or None); allowed keys: none in the JAX "
                        "envs (pass the instance as means= when making the env)")
    if options:
        raise ValueError(f"reset options {sorted(options)} are not supported by the JAX envs; pass the instance as "
                         "means= when making the env, or in the params of the pure functions")
