"""Loss of the submitted answer at chosen budgets, so an anytime agent yields a whole regret curve from one
episode."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np
from gymnasium.vector import VectorEnv, VectorWrapper

from bandit_gym.envs._base import engine_of, require_next_step
from bandit_gym.wrappers._trackers import (
    AnytimeTracker,
    check_info_key,
    refuse_time_limits_below,
    refuse_unscored_ends,
    write_info,
)
from bandit_gym.wrappers.empirical_answer import EmpiricalAnswer, EmpiricalAnswerVector
from bandit_gym.wrappers.record import _answering

KEY = "anytime"
"""The default info key."""


class RecordAnytimeRegret(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Record, for each budget b in ``budgets``, the regret and error of the answer submitted when exactly b
    pulls had been made (the answer formed from b samples); write them into ``info["anytime"]`` at the end
    of the episode as ``{"budget": (B,), "regret": (B,), "error": (B,)}``.

    For an anytime agent (one that does not use T) the entry at b has the distribution of a fresh run with
    budget b. An episode stopped before a checkpoint keeps its final answer for the remaining ones. Either
    order with ``EmpiricalAnswer`` works; a ``TimeLimit`` shorter than the episode is
    refused. ``info_key`` names the entry (``"anytime"``); a key already in ``info`` is refused.
    """

    def __init__(self, env: gym.Env, budgets: Sequence[int], info_key: str = KEY) -> None:
        gym.utils.RecordConstructorArgs.__init__(self, budgets=budgets, info_key=info_key)
        gym.Wrapper.__init__(self, env)
        self._key = check_info_key(info_key)
        self._engine: Any = engine_of(env)  # a pure-exploration engine, checked by the tracker
        self._tracker = AnytimeTracker(self._engine, 1, budgets)
        refuse_time_limits_below(env, self._engine, "RecordAnytimeRegret")
        self._answering = _answering(env, EmpiricalAnswer)
        self._one = np.zeros(1, dtype=np.int64)
        self._pulls = np.zeros(1, dtype=np.int64)

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        self._tracker.start(slice(None))
        self._pulls[0] = 0
        return obs, info

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        # the answer submitted with this step comes from the pulls made before it (self._pulls, not yet updated)
        actions = np.asarray(action if self._answering is None else self._answering.last_action)[None]
        self._tracker.observe(self._one, self._pulls, actions)
        self._pulls[0] = self._engine.budget - int(obs["budget_left"][0])
        if terminated or truncated:
            refuse_unscored_ends(self._engine, self._one, "RecordAnytimeRegret")
            out = self._tracker.finish(self._one, actions)
            write_info(info, self._key, {"budget": out["budget"], "regret": out["regret"][0],
                                         "error": out["error"][0]})
        return obs, reward, terminated, truncated, info


class RecordAnytimeRegretVector(VectorWrapper):
    """Vector twin of ``RecordAnytimeRegret``: ``info["anytime"]`` holds ``(N, B)`` arrays and
    ``info["_anytime"]`` marks the copies whose episode ended (``info_key`` renames both). Per step it touches
    only the copies that reach a checkpoint."""

    def __init__(self, env: VectorEnv, budgets: Sequence[int], info_key: str = KEY) -> None:
        super().__init__(env)
        self._key = check_info_key(info_key)
        require_next_step(env, "RecordAnytimeRegretVector")
        self._engine: Any = engine_of(env)  # a pure-exploration engine, checked by the tracker
        self._tracker = AnytimeTracker(self._engine, env.num_envs, budgets)
        self._answering = _answering(env, EmpiricalAnswerVector)
        self._pulls = np.zeros(env.num_envs, dtype=np.int64)
        self._autoreset = np.zeros(env.num_envs, dtype=bool)
        self._rows = np.arange(env.num_envs)

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        self._tracker.start(slice(None))
        self._pulls[:] = 0
        self._autoreset[:] = False
        return obs, info

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        obs, rewards, terminated, truncated, info = self.env.step(actions)
        actions = np.asarray(actions if self._answering is None else self._answering.last_action)
        restarted = np.flatnonzero(self._autoreset)
        if restarted.size:
            self._tracker.start(restarted)
        stepping = self._rows[~self._autoreset] if restarted.size else self._rows
        # the answers submitted with this step come from the pulls made before it (self._pulls, not yet updated)
        self._tracker.observe(stepping, self._pulls, actions)
        self._pulls[:] = self._engine.budget - obs["budget_left"][:, 0].astype(np.int64)
        done = terminated | truncated
        self._autoreset = done
        if done.any():
            refuse_unscored_ends(self._engine, np.flatnonzero(done), "RecordAnytimeRegretVector")
            info = dict(info)
            write_info(info, self._key, self._tracker.finish(np.flatnonzero(done), actions), done.copy())
        return obs, rewards, terminated, truncated, info
