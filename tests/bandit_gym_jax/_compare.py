"""Equality in distribution of a JAX agent and its numpy twin: the same metric's mean over many episodes of each,
compared by Welch's two-sample z statistic."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from bandit_gym.rollout import play_vector

Z_LIMIT = 4.0
"""|z| above this fails: with fixed seeds a correct pair stays below it (P(|z| > 4) = 6e-5 under equality), and a
real difference of a few standard errors of the means shows."""


def numpy_metric(env_id: str, agent: Any, metric: str, episodes: int, seed: int, **env_kwargs: Any) -> np.ndarray:
    """``metric`` of ``episodes`` episodes of the numpy vector env ``env_id`` played by the numpy ``agent``."""
    envs = gym.make_vec(env_id, num_envs=episodes, vectorization_mode="vector_entry_point", copy=False, **env_kwargs)
    return np.asarray(play_vector(envs, agent, seed=seed)[metric], dtype=np.float64)


def z_statistic(a: Any, b: Any) -> float:
    """Welch's z of the difference of the means of two samples (0 when both are constant and equal)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    se = np.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)
    diff = a.mean() - b.mean()
    if se == 0:
        return 0.0 if diff == 0 else np.inf
    return float(diff / se)
