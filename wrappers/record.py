"""End-of-episode regret, in the shape of Gymnasium's ``RecordEpisodeStatistics``."""

from __future__ import annotations

from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np
from gymnasium.vector import VectorEnv, VectorWrapper

from bandit_gym.envs._base import engine_of, require_next_step
from bandit_gym.wrappers._trackers import EpisodeTracker

KEY = "bandit"


class RecordEpisodeRegret(gym.Wrapper):
    """Write the episode's regret into ``info["bandit"]`` on its last step.

    ``info["bandit"]`` holds ``regret`` (thresholding: aggregate regret, the number of misclassified counted
    arms of the final answer; threshold bandit: cumulative pseudo-regret ``sum_t max_i F_i(c_t) - F_{I_t}(c_t)``),
    ``error`` (thresholding only: 1 if any counted arm is misclassified), ``pulls`` (samples drawn),
    ``length`` (steps, the answer step included) and ``return`` (sum of rewards). The metrics are computed
    with :mod:`bandit_gym.metrics` from the final answer and the env's instance, independently of the reward.
    """

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self._tracker = EpisodeTracker(engine_of(env), 1)
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
            actions = np.asarray(action)[None] if np.ndim(action) else np.asarray([[action]])
            batched_obs = {key: value[None] for key, value in obs.items()}
            out = self._tracker.finish(self._one, actions, batched_obs)
            info[KEY] = {key: value[0].item() for key, value in out.items()}
        return obs, reward, terminated, truncated, info


class RecordEpisodeRegretVector(VectorWrapper):
    """Vector twin of :class:`RecordEpisodeRegret` for the native vector envs.

    ``info["bandit"]`` holds one array of N entries per metric and ``info["_bandit"]`` marks the copies whose
    episode ended at this step (Gymnasium's vector info convention). Copies reset by the following step
    (``AutoresetMode.NEXT_STEP``) start a fresh record.
    """

    def __init__(self, env: VectorEnv) -> None:
        super().__init__(env)
        require_next_step(env, "RecordEpisodeRegretVector")
        self._tracker = EpisodeTracker(engine_of(env), env.num_envs)
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
        self._autoreset = done
        if done.any():
            info = dict(info)
            info[KEY] = self._tracker.finish(np.flatnonzero(done), np.asarray(actions), obs)
            info["_" + KEY] = done.copy()
        return obs, rewards, terminated, truncated, info
