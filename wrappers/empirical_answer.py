"""Adapter for agents that only choose arms: the answer is filled in with the empirical rule."""

from __future__ import annotations

from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector import VectorEnv, VectorWrapper
from gymnasium.vector.utils import batch_space

from bandit_gym.envs._base import engine_of
from bandit_gym.families import Contract, contract
from bandit_gym.wrappers._trackers import pure_exploration_engine, refuse_time_limits_below


def _family_contract(env: Any) -> Contract:
    """The contract of a pure-exploration env's family (a ValueError for an online env)."""
    return contract(pure_exploration_engine(env, "EmpiricalAnswer").family)


TIE_STREAM = 0x71E5
"""The spawn key of the tie-breaking generator under the reset seed (the env draws from ``SeedSequence(seed)``
itself, an agent from its own key)."""


def tie_generator(seed: Any, current: np.random.Generator) -> np.random.Generator:
    """The tie-breaking generator after ``reset(seed=seed)``: a fresh one from ``seed`` (a stream of its own,
    distinct from the env's stream and an agent's from the same seed), or ``current`` when no seed is given."""
    if seed is None:
        return current
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(TIE_STREAM,)))


class EmpiricalAnswer(gym.Wrapper, gym.utils.RecordConstructorArgs):
    r"""Expose ``Discrete(K)`` (``Discrete(K + 1)`` with ``allow_stop=True``, \(K\) meaning stop) on a
    pure-exploration env, and submit its family's empirical answer (the family contract's ``empirical_answer``:
    thresholding \(\mathbb{1}\{\hat\theta_i \ge \theta\}\); best arm and top \(K\) the \(m\) largest empirical
    means among pulled
    arms) computed from the latest observation, composed into the env's action by the contract.
    For DQN, and for students who only choose arms.

    Ties between arms in the answer are broken at random by the wrapper's own generator (``ties``), seeded at
    ``reset(seed=...)`` from a stream of its own (never the env's, so the env's samples are those it draws
    unwrapped).

    ``last_action`` is the full action submitted at the last step (the arm, then the answer bits), which
    ``RecordEpisodeRegret`` scores when it wraps this wrapper; either order of the two
    works. A ``TimeLimit`` under it shorter than the episode is refused (pass ``budget``)."""

    def __init__(self, env: gym.Env, allow_stop: bool = False) -> None:
        gym.utils.RecordConstructorArgs.__init__(self, allow_stop=allow_stop)
        gym.Wrapper.__init__(self, env)
        self._contract = _family_contract(env)
        self._rule = self._contract.answer_rule()
        refuse_time_limits_below(env, engine_of(env), "EmpiricalAnswer")
        #: the full action submitted at the last step (None before the first)
        self.last_action: np.ndarray | None = None
        k = engine_of(env).num_arms
        self.allow_stop = bool(allow_stop)
        self.action_space = spaces.Discrete(k + 1 if self.allow_stop else k)
        self._obs: dict[str, np.ndarray] | None = None
        #: the generator that breaks ties in the answer
        self.ties = np.random.default_rng()

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        self._obs, info = self.env.reset(**kwargs)
        self.ties = tie_generator(kwargs.get("seed"), self.ties)
        return self._obs, info

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        if not self.action_space.contains(action):
            raise ValueError(f"action={action!r} is not in {self.action_space}")
        if self._obs is None:
            raise RuntimeError("step() was called before reset(); call reset() first")
        full = self._contract.compose_action(int(action), self._rule(self._obs, self.ties))
        self.last_action = full
        self._obs, reward, terminated, truncated, info = self.env.step(full)
        return self._obs, reward, terminated, truncated, info


class EmpiricalAnswerVector(VectorWrapper):
    """Vector twin of ``EmpiricalAnswer``: actions of shape ``(N,)``; ``last_action`` ``(N, K + 1)``; ties in the
    answers as ``EmpiricalAnswer``, drawn for all copies at once."""

    def __init__(self, env: VectorEnv, allow_stop: bool = False) -> None:
        super().__init__(env)
        self._contract = _family_contract(env)
        self._rule = self._contract.answer_rule()
        #: the full actions submitted at the last step (None before the first)
        self.last_action: np.ndarray | None = None
        k = engine_of(env).num_arms
        self.allow_stop = bool(allow_stop)
        self.num_choices = k + 1 if self.allow_stop else k
        self.single_action_space = spaces.Discrete(self.num_choices)
        self.action_space = batch_space(self.single_action_space, env.num_envs)
        self._obs: dict[str, np.ndarray] | None = None
        #: the generator that breaks ties in the answers
        self.ties = np.random.default_rng()

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        self._obs, info = self.env.reset(**kwargs)
        self.ties = tie_generator(kwargs.get("seed"), self.ties)
        return self._obs, info

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        arms = np.asarray(actions)
        if arms.shape != (self.num_envs,) or not np.issubdtype(arms.dtype, np.integer):
            raise ValueError(f"actions must be {self.num_envs} integer arms, got {arms!r}")
        if arms.min() < 0 or arms.max() >= self.num_choices:
            raise ValueError(f"actions must lie in 0..{self.num_choices - 1}, got {arms}")
        if self._obs is None:
            raise RuntimeError("step() was called before reset(); call reset() first")
        full = self._contract.compose_action(arms, self._rule(self._obs, self.ties))
        self.last_action = full
        self._obs, rewards, terminated, truncated, info = self.env.step(full)
        return self._obs, rewards, terminated, truncated, info
