"""A dense reward for the pure-exploration envs that keeps their optimal policies: potential-based shaping with
the loss of the current empirical answer."""

from __future__ import annotations

from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv, VectorWrapper

from bandit_gym.families import contract
from bandit_gym.wrappers._trackers import pure_exploration_engine, refuse_time_limits_below

UNSHAPED = "unshaped_reward"
"""The ``info`` key of the env's own reward of the step."""


class ShapedLoss(gym.Wrapper, gym.utils.RecordConstructorArgs):
    r"""Pay, at every pull, the decrease of the loss of the current empirical answer.

    With \(L_t\) the env's loss (its ``loss=``: aggregate regret, simple regret or error) of the empirical answer after
    \(t\) pulls (the family contract's ``empirical_answer``, the rule ``EmpiricalAnswer`` submits), scored on the true
    instance, the reward of a pull step is \(r_t + L_{t-1} - L_t\) and that of the step that ends the episode (the
    answer step, a stop, or the cap of a fixed-confidence env) \(r_t + L_{t-1}\), where \(r_t\) is the env's own reward
    (0 or minus the sample cost on a pull, minus the loss of the submitted answer at the end). This is potential-based
    shaping (Ng, Harada, Russell 1999) with the potential \(-L_t\), zero at the end of the episode: an episode's shaped
    rewards sum to its unshaped return plus \(L_0\), a constant of the instance, so the optimal policies are the same
    (undiscounted; with a discount \(\gamma < 1\) the shaped and unshaped objectives differ by \(\gamma\)-weighted
    terms). A policy that answers with the empirical rule gets everything at the pulls and 0 on the answer step.

    The potential reads the true means, so the reward carries information about the instance the observation does not:
    the shaping is a training signal; evaluate with the unshaped loss (``RecordEpisodeRegret`` reports it whatever the
    reward). ``info["unshaped_reward"]`` holds the env's own reward of each step. A ``TimeLimit`` under it shorter than
    the episode is refused (a cut episode has no answer to end the sum).
    """

    def __init__(self, env: gym.Env) -> None:
        gym.utils.RecordConstructorArgs.__init__(self)
        gym.Wrapper.__init__(self, env)
        self._engine = pure_exploration_engine(env, "ShapedLoss")
        refuse_time_limits_below(env, self._engine, "ShapedLoss")
        self._rule = contract(self._engine.family).answer_rule()
        #: the loss of the current empirical answer, ``L_t`` (None before a reset and after an episode ends)
        self.potential_loss: float | None = None

    def _loss(self, obs: dict[str, np.ndarray]) -> float:
        answer = np.asarray(self._rule(obs))[None]
        return float(self._engine.episode_loss(answer, self._engine.means)[0])

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        self.potential_loss = self._loss(obs)
        return obs, info

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        if self.potential_loss is None:
            raise RuntimeError("step() was called before reset() or after the episode ended; call reset() first")
        obs, reward, terminated, truncated, info = self.env.step(action)
        info = {**info, UNSHAPED: reward}
        if terminated or truncated:
            shaped = float(reward) + self.potential_loss
            self.potential_loss = None
        else:
            loss = self._loss(obs)
            shaped = float(reward) + self.potential_loss - loss
            self.potential_loss = loss
        return obs, shaped, terminated, truncated, info


class ShapedLossVector(VectorWrapper):
    r"""Vector twin of ``ShapedLoss``: the same reward per copy, for both autoreset modes (``NEXT_STEP``: the
    reset step of a copy pays the env's 0; ``SAME_STEP``, what stable-baselines3 needs: the step that ends an
    episode pays \(r_t + L_{t-1}\) and the next episode's potential is read from the first observation returned
    with it). ``info["unshaped_reward"]`` holds the env's rewards, ``(N,)``. One empirical answer and one loss
    per copy and step: \(O(N K)\) per step, as the observation."""

    def __init__(self, env: VectorEnv) -> None:
        super().__init__(env)
        self._engine = pure_exploration_engine(env, "ShapedLossVector")
        self._rule = contract(self._engine.family).answer_rule()
        self._same_step = env.metadata.get("autoreset_mode") == AutoresetMode.SAME_STEP
        self._autoreset = np.zeros(env.num_envs, dtype=bool)
        #: the loss of each copy's current empirical answer, ``L_t``, ``(N,)``
        self.potential_loss = np.zeros(env.num_envs)

    def _losses(self, obs: dict[str, np.ndarray]) -> np.ndarray:
        return np.asarray(self._engine.episode_loss(self._rule(obs), self._engine.means), dtype=np.float64)

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        self.potential_loss = self._losses(obs)
        self._autoreset[:] = False
        return obs, info

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        obs, rewards, terminated, truncated, info = self.env.step(actions)
        unshaped = np.asarray(rewards, dtype=np.float64)
        info = {**info, UNSHAPED: unshaped}
        loss = self._losses(obs)  # ended copies (SAME_STEP) and restarted ones (NEXT_STEP): their new episode's L_0
        done = terminated | truncated
        restarted = self._autoreset  # NEXT_STEP only: this step reset them and paid 0
        ended = done & ~restarted
        live = ~done & ~restarted
        shaped = unshaped.copy()
        shaped[ended] += self.potential_loss[ended]
        shaped[live] += self.potential_loss[live] - loss[live]
        # the next potential: the new loss for live and restarted copies; SAME_STEP ended copies start their
        # next episode now; NEXT_STEP ended copies restart on the next step (the value is replaced then)
        self.potential_loss = loss
        self._autoreset = done & (not self._same_step)
        return obs, shaped, terminated, truncated, info
