"""End-of-episode regret, in the shape of Gymnasium's ``RecordEpisodeStatistics``."""

from __future__ import annotations

from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv, VectorWrapper

from bandit_gym.envs._base import engine_of
from bandit_gym.wrappers._trackers import (
    EpisodeTracker,
    below,
    check_info_key,
    refuse_time_limits_below,
    refuse_unscored_ends,
    write_info,
)
from bandit_gym.wrappers.empirical_answer import EmpiricalAnswer, EmpiricalAnswerVector

KEY = "bandit"
"""The default info key."""


def _answering(env: Any, cls: type) -> Any:
    """The ``EmpiricalAnswer(Vector)`` under ``env``, whose ``last_action`` holds the full action it submitted
    (None without one: the actions given to the wrapper are full)."""
    return next((wrapper for wrapper in below(env) if isinstance(wrapper, cls)), None)


class RecordEpisodeRegret(gym.Wrapper, gym.utils.RecordConstructorArgs):
    r"""Write the episode's regret into ``info["bandit"]`` on its last step.

    ``info["bandit"]`` holds ``regret`` (thresholding: aggregate regret, the number of misclassified counted
    arms of the final answer; best arm: simple regret; top \(K\): aggregate regret; threshold and multi-armed
    bandits: cumulative pseudo-regret, \(\sum_t \max_i F_i(c_t) - F_{I_t}(c_t)\) on the threshold bandit),
    ``error`` (pure exploration: 1 if the answer is wrong), ``invalid`` (best arm, top \(K\): not \(m\) arms),
    ``answer`` (pure exploration: the final answer scored, one bit per arm, int8), ``pulls`` (samples drawn),
    ``length`` (steps, the answer step included) and ``return`` (sum of rewards). The metrics are computed
    with ``bandit_gym.metrics`` from the final answer and the env's instance, independently of the reward.

    ``info_key`` names the entry (``"bandit"``); a key the env or another wrapper already wrote is refused with
    a ValueError, as Gymnasium's ``RecordEpisodeStatistics`` does with its ``stats_key``.

    Either order with ``EmpiricalAnswer`` works: over it
    (``RecordEpisodeRegret(EmpiricalAnswer(env))``, actions are arms) the answer scored is the one
    ``EmpiricalAnswer`` submitted. On a pure-exploration env a ``TimeLimit`` shorter than the episode is refused
    (a ValueError that says to pass ``budget``): the answer of a cut episode is never scored.
    """

    def __init__(self, env: gym.Env, info_key: str = KEY) -> None:
        gym.utils.RecordConstructorArgs.__init__(self, info_key=info_key)
        gym.Wrapper.__init__(self, env)
        self._key = check_info_key(info_key)
        self._engine: Any = engine_of(env)
        refuse_time_limits_below(env, self._engine, "RecordEpisodeRegret")
        self._tracker = EpisodeTracker(self._engine, 1)
        self._answering = _answering(env, EmpiricalAnswer)
        self._one = np.zeros(1, dtype=np.int64)

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        self._tracker.start(slice(None))
        return obs, info

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        batched_info = {key: np.asarray([value]) for key, value in info.items()}
        self._tracker.add(self._one, np.asarray([reward]), batched_info)
        if terminated or truncated:
            refuse_unscored_ends(self._engine, self._one, "RecordEpisodeRegret")
            full = action if self._answering is None else self._answering.last_action
            actions = np.asarray(full)[None] if np.ndim(full) else np.asarray([[full]])
            batched_obs = {key: value[None] for key, value in obs.items()}
            out = self._tracker.finish(self._one, actions, batched_obs)
            write_info(info, self._key, {key: value[0].item() if value.ndim == 1 else value[0]
                                         for key, value in out.items()})
        return obs, reward, terminated, truncated, info


class RecordEpisodeRegretVector(VectorWrapper):
    """Vector twin of ``RecordEpisodeRegret`` for the native vector envs.

    ``info["bandit"]`` holds one array of N entries per metric (``answer``: ``(N, K)``) and ``info["_bandit"]``
    marks the copies whose episode ended at this step (Gymnasium's vector info convention); ``info_key`` renames
    both, and a key already in ``info`` is refused. Copies reset by the following step
    (``AutoresetMode.NEXT_STEP``) start a fresh record. With ``autoreset_mode="SameStep"`` (the env resets the
    copies within the step that ends them, what stable-baselines3 needs) the answers are scored on the ended
    episodes' instance, which the env keeps before the reset, and their last observations
    (``info["final_obs"]``). Either order with ``EmpiricalAnswerVector`` works.
    """

    def __init__(self, env: VectorEnv, info_key: str = KEY) -> None:
        super().__init__(env)
        self._key = check_info_key(info_key)
        self._engine: Any = engine_of(env)
        self._same_step = env.metadata.get("autoreset_mode") == AutoresetMode.SAME_STEP
        self._tracker = EpisodeTracker(self._engine, env.num_envs)
        self._answering = _answering(env, EmpiricalAnswerVector)
        self._autoreset = np.zeros(env.num_envs, dtype=bool)

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        self._tracker.start(slice(None))
        self._autoreset[:] = False
        return obs, info

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        obs, rewards, terminated, truncated, info = self.env.step(actions)
        restarted = np.flatnonzero(self._autoreset)
        if restarted.size:
            self._tracker.start(restarted)
        stepped = np.flatnonzero(~self._autoreset)
        self._tracker.add(stepped, rewards, info)
        done = terminated | truncated
        self._autoreset = done & (not self._same_step)
        if done.any():
            rows = np.flatnonzero(done)
            full = np.asarray(actions if self._answering is None else self._answering.last_action)
            info = dict(info)
            if self._same_step:
                out = self._finish_reset(rows, full, info)
                self._tracker.start(rows)
            else:
                refuse_unscored_ends(self._engine, rows, "RecordEpisodeRegretVector")
                out = self._tracker.finish(rows, full, obs)
            write_info(info, self._key, out, done.copy())
        return obs, rewards, terminated, truncated, info

    def _finish_reset(self, rows: np.ndarray, actions: np.ndarray, info: dict[str, Any]) -> dict[str, np.ndarray]:
        """``SAME_STEP``: score the episodes of ``rows``, already reset, on their final observations and the
        instance the env kept for them."""
        counts = np.zeros((self.num_envs, 1))
        counts[rows, 0] = [info["final_obs"][row]["counts"].sum() for row in rows]
        kept = getattr(self.env.unwrapped, "final_means", None)
        means = None if not self._engine.pure_exploration or kept is None else kept[rows]
        return self._tracker.finish(rows, actions, {"counts": counts}, means)
