"""The arm-wise PPO policies trained by ``bandit_gym.rl.train_armwise`` and shipped with the package."""

from __future__ import annotations

from collections.abc import Mapping
from importlib import resources
from typing import Any, ClassVar

import numpy as np

from bandit_gym import _validation as check
from bandit_gym.agents.base import Obs
from bandit_gym.agents.sb3_agent import SB3Agent
from bandit_gym.families import Family

SHIPPED_PROBLEMS: dict[str, Family] = {"thresholding": Family.THRESHOLDING, "threshold": Family.THRESHOLD,
                                       "best_arm": Family.BEST_ARM, "best_arm_dev_select": Family.BEST_ARM,
                                       "top_k": Family.TOP_K, "correlated": Family.BEST_ARM}
"""The problems (keys of ``bandit_gym.rl.ARMWISE_RECIPES``) with shipped policies, and the family each plays."""
SHIPPED_SEEDS = (0, 1, 2)
"""The training seeds shipped for every problem."""


def shipped_path(problem: str, seed: int) -> Any:
    """The package-data file of the shipped policy of ``problem`` trained with ``seed``."""
    return resources.files("bandit_gym") / "data" / "armwise" / f"{problem}-seed{seed}.npz"


class ArmwisePPO(SB3Agent):
    """A learned agent: the arm-wise policy (``bandit_gym.armwise.ArmwisePolicy``) that
    ``bandit_gym.rl.train_armwise(problem, seed)`` trained with PPO on random instances and budgets, shipped as
    package data (weights only, about 90 kB each), played through ``SB3Agent`` on any K and budget of its family.

    Not from the papers. ``problem`` is one of ``SHIPPED_PROBLEMS`` (``"thresholding"``, ``"threshold"``,
    ``"best_arm"``, ``"best_arm_dev_select"``, ``"top_k"``, ``"correlated"``) and ``seed`` one of
    ``SHIPPED_SEEDS``; ``deterministic`` as ``SB3Agent`` (None: sample on pure-exploration envs, the most likely
    arm on the threshold bandit). The
    held-out scores of every shipped policy against the papers' agents, and how they were trained, are in
    ``docs/rl.md#learned-exploration-the-arm-wise-policy``. On the second held-out set (settings no recipe saw,
    fixed before any scoring) every family's best paper agent beats every seed but one (top K's seed 0 ties
    OptMAI); the policies beat Uniform on the threshold bandit and on correlated arms, tie with it on top K, do no
    better than it on best arm (3 of 6 seeds worse) and lose to it on the thresholding bandit: use them as a
    learned baseline, not in place of the papers' agents. Where the problem's recipe chooses among candidates
    (``bandit_gym.rl.ArmwiseRecipe.candidates``: ``best_arm``, ``best_arm_dev_select`` and ``top_k``), seed s
    ships the candidate it chose on its validation episodes; the weights' header names it (``candidate_seed``).

    In a spec: ``{name = "ArmwisePPO", params = {problem = "thresholding", seed = 0}}``. Refusals
    (ValueError): an unknown problem or seed; at the first ``act``, an env of another family than the
    policy's.

    Examples:
        >>> import gymnasium as gym
        >>> from bandit_gym.agents import ArmwisePPO
        >>> from bandit_gym.rollout import play_vector
        >>> env = gym.make_vec("ThresholdingBandit-Tao2019Setup1-v0", num_envs=100,
        ...                    vectorization_mode="vector_entry_point", budget=200)
        >>> float(play_vector(env, ArmwisePPO("thresholding"), seed=0)["regret"].mean()) < 1.0
        True
    """

    families: ClassVar[tuple[str, ...]] = ("thresholding", "threshold", "best_arm", "top_k")

    @classmethod
    def families_of(cls, params: Mapping[str, Any]) -> tuple[Family, ...]:
        """The family of the policy's ``problem`` (all four while the problem is not a shipped one)."""
        family = SHIPPED_PROBLEMS.get(params.get("problem", "thresholding"))
        return tuple(Family(name) for name in cls.families) if family is None else (family,)

    def __init__(self, problem: str = "thresholding", seed: int = 0, deterministic: bool | None = None) -> None:
        self.problem = check.choice("problem", problem, tuple(SHIPPED_PROBLEMS))
        self.seed = check.integer("seed", seed)
        if self.seed not in SHIPPED_SEEDS:
            raise ValueError(f"seed={seed!r} is not shipped; use one of {', '.join(map(str, SHIPPED_SEEDS))}")
        super().__init__(policy=str(shipped_path(self.problem, self.seed)), deterministic=deterministic,
                         any_budget=True)

    @staticmethod
    def _check_policy(policy: Any) -> None:
        pass  # a package-data path, read by ``_load``

    def params(self) -> dict[str, Any]:
        return {"problem": self.problem, "seed": self.seed, "deterministic": self.deterministic}

    @classmethod
    def data_files(cls, params: Mapping[str, Any]) -> tuple[Any, ...]:
        """The shipped weights (package data) of ``problem`` and ``seed``."""
        return (shipped_path(params.get("problem", "thresholding"), params.get("seed", 0)),)

    def _subject(self) -> str:
        return f"ArmwisePPO(problem={self.problem!r}, seed={self.seed})"

    def _load(self) -> None:
        if self._model is not None:
            return
        from bandit_gym.armwise import load_weights

        with resources.as_file(shipped_path(self.problem, self.seed)) as path:
            policy, _ = load_weights(path)
        self._model: Any = policy
        self._stats = None
        self._check_spaces()

    def _act_batch(self, obs: Obs, last: np.ndarray, family: Family) -> np.ndarray:
        (trained,) = self.families_of(self.params())
        if family is not trained:
            allowed = sorted(name for name, f in SHIPPED_PROBLEMS.items() if f is family)
            raise ValueError(f"ArmwisePPO(problem={self.problem!r}) plays {trained} envs, not this {family} env; "
                             f"for it choose problem= one of {allowed}")
        return super()._act_batch(obs, last, family)
