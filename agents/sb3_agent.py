"""A trained stable-baselines3 policy as an agent, so that it plays in the experiment engine like LSA or DKWUCB."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from bandit_gym import _validation as check
from bandit_gym.agents.base import Agent, Obs

#: SB3 classes a saved model may be loaded with
ALGORITHMS = ("PPO", "DQN", "A2C")


class SB3Agent(Agent):
    """A trained stable-baselines3 model (``model.predict``) behind the agent protocol.

    Not from the papers: the adapter that puts an RL policy next to the papers' agents, as a row of the same
    results tables and figures (``{name = "SB3Agent", params = {policy = "runs/ppo"}, label = "PPO"}`` in a spec).

    ``policy`` is a folder written by :meth:`bandit_gym.rl.TrainedPolicy.save` (``model.zip`` and, if the model
    was trained on normalised observations, ``vecnormalize.pkl``), a :class:`~bandit_gym.rl.TrainedPolicy`, or
    an SB3 model (then ``normalize`` may give its ``VecNormalize``). ``algo`` names the SB3 class of a saved
    model. A folder is read at the first ``act`` (so a spec holding a path pickles cheaply to workers).

    Each step: normalise the observation with the training statistics (SB3's ``VecNormalize.normalize_obs``, not
    updated), then ``model.predict(obs, deterministic)`` on the whole batch at once. A policy trained through
    ``EmpiricalAnswer`` (``Discrete`` action on a pure-exploration env) chooses only the arm (or K, stop); the
    answer bits are the env's empirical rule (thresholding: ``1{theta_hat_i >= theta}``; best arm and top K:
    the m largest empirical means among pulled arms). With ``deterministic=False`` the actions are sampled with
    torch's global generator, which :meth:`reset` seeds (``torch.manual_seed``). Not anytime: a policy reads the
    budget left.

    Readings: none to list, since no paper defines this agent; every choice above (the empirical answer bits,
    frozen normalisation statistics, ``deterministic=True`` by default) is ours.
    """

    families: ClassVar[tuple[str, ...]] = ("thresholding", "threshold", "best_arm", "top_k")
    anytime: ClassVar[bool] = False

    def __init__(self, policy: Any, algo: str = "PPO", normalize: Any = None, deterministic: bool = True) -> None:
        if isinstance(policy, (str, Path)):
            if not (Path(policy) / "model.zip").is_file():
                raise ValueError(f"policy={str(policy)!r} must be a folder holding model.zip (written by "
                                 "bandit_gym.rl.TrainedPolicy.save), a TrainedPolicy, or a stable-baselines3 model")
        elif not hasattr(policy, "predict") and not hasattr(policy, "model"):
            raise TypeError(f"policy must be a folder, a TrainedPolicy or a stable-baselines3 model, got "
                            f"{type(policy).__name__}")
        if not isinstance(deterministic, bool):
            raise TypeError(f"deterministic must be True or False, got {deterministic!r}")
        self.policy = policy
        self.algo = check.choice("algo", algo, ALGORITHMS)
        self.normalize = normalize
        self.deterministic = deterministic
        self._model: Any = None
        self._stats: Any = None
        super().__init__(tie_break="index")

    def params(self) -> dict[str, Any]:
        policy = str(self.policy) if isinstance(self.policy, (str, Path)) else f"<{type(self.policy).__name__}>"
        return {"policy": policy, "algo": self.algo, "deterministic": self.deterministic}

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        if seed is not None and not self.deterministic:
            import torch

            torch.manual_seed(seed)

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        if isinstance(self.policy, (str, Path)):
            state["_model"] = state["_stats"] = None  # re-read from the folder in the worker
        return state

    def _load(self) -> None:
        if self._model is not None:
            return
        if isinstance(self.policy, (str, Path)):
            from bandit_gym.rl import load

            trained = load(self.policy, self.algo)
            self._model, self._stats = trained.model, trained.normalize
        elif hasattr(self.policy, "predict"):
            self._model, self._stats = self.policy, self.normalize
        else:  # a TrainedPolicy
            self._model, self._stats = self.policy.model, self.policy.normalize
        self._check_spaces()

    def _check_spaces(self) -> None:
        from gymnasium import spaces

        space = self._model.observation_space
        if not isinstance(space, spaces.Dict):
            raise ValueError(f"the model was trained on {space}, not on a bandit_gym env's Dict observation")
        self._shapes = {key: box.shape for key, box in space.spaces.items()}
        action = self._model.action_space
        self._choose_only = isinstance(action, spaces.Discrete)
        self._choices = int(action.n) if self._choose_only else int(action.nvec[0])

    def _act_batch(self, obs: Obs, last: np.ndarray, family: str) -> np.ndarray:
        self._load()
        k = obs["counts"].shape[1]
        wanted = {key: obs[key].shape[1:] for key in self._shapes if key in obs}
        if wanted != self._shapes:
            raise ValueError(f"the model was trained on observations {self._shapes}, but this env gives "
                             f"{ {key: value.shape[1:] for key, value in obs.items()} }: train it on this env id "
                             "and K")
        batch = {key: np.asarray(obs[key], dtype=np.float32) for key in self._shapes}
        if self._stats is not None:
            batch = self._stats.normalize_obs(batch)
        actions, _ = self._model.predict(batch, deterministic=self.deterministic)
        actions = np.asarray(actions, dtype=np.int64)
        if family == "threshold" or not self._choose_only:
            return actions
        if self._choices not in (k, k + 1):
            raise ValueError(f"the model chooses among {self._choices} actions; this env has K = {k} arms")
        return np.concatenate([actions.reshape(-1, 1), self._answer(obs, family)], axis=1)

    @staticmethod
    def _answer(obs: Obs, family: str) -> np.ndarray:
        """The env's empirical answer bits, ``(N, K)``."""
        if family == "thresholding":
            from bandit_gym.envs.thresholding import empirical_answer

            return empirical_answer(obs)
        from bandit_gym.envs.best_arm import top_m_answer

        return top_m_answer(obs)
