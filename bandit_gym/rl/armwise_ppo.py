"""The arm-wise PPO policies trained by ``bandit_gym.rl.train_armwise`` and shipped with the package."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any, ClassVar

import numpy as np

from bandit_gym import _validation as check
from bandit_gym.agents.base import Obs
from bandit_gym.families import Family
from bandit_gym.rl.sb3_agent import SB3Agent

SHIPPED_PROBLEMS: dict[str, Family] = {"thresholding": Family.THRESHOLDING, "threshold": Family.THRESHOLD,
                                       "best_arm": Family.BEST_ARM, "best_arm_dev_select": Family.BEST_ARM,
                                       "top_k": Family.TOP_K, "correlated": Family.BEST_ARM}
"""The problems (keys of ``bandit_gym.rl.ARMWISE_RECIPES``) with shipped policies, and the family each plays."""
SHIPPED_SEEDS = (0, 1, 2)
"""The training seeds shipped for every problem."""


@dataclass(frozen=True)
class Regime:
    """Where the shipped policies of one problem were trained and tested: K (the number of arms) and the budget T
    (the horizon on the threshold bandit) from ``arms[0]`` to ``arms[1]`` and from ``budgets[0]`` to
    ``budgets[1]`` (the training distribution's and the held-out settings' together), the thresholding bandit's
    threshold from ``thresholds[0]`` to ``thresholds[1]`` where it applies; ``trained``, ``tested`` and
    ``outcome`` in words. The law of the means is not in an observation, so only ``trained`` states it."""

    arms: tuple[int, int]
    budgets: tuple[int, int]
    trained: str
    tested: str
    outcome: str
    thresholds: tuple[float, float] | None = None

    def outside(self, num_arms: int, budgets: np.ndarray, threshold: float | None) -> list[str]:
        """What of an episode lies outside the regime: K, the budgets, the threshold (empty when inside)."""
        found = []
        if not self.arms[0] <= num_arms <= self.arms[1]:
            found.append(f"K = {num_arms}")
        low, high = int(np.min(budgets)), int(np.max(budgets))
        if low < self.budgets[0] or high > self.budgets[1]:
            found.append(f"T = {low}" if low == high else f"T from {low} to {high}")
        if self.thresholds is not None and threshold is not None and \
                not self.thresholds[0] - 1e-6 <= threshold <= self.thresholds[1] + 1e-6:
            found.append(f"threshold {threshold:g}")
        return found

    def line(self) -> str:
        """The regime in one line (``bandit-gym list``, the docs)."""
        threshold = "" if self.thresholds is None else f", threshold {self.thresholds[0]:g} to {self.thresholds[1]:g}"
        return (f"K {self.arms[0]} to {self.arms[1]}, T {self.budgets[0]} to {self.budgets[1]}{threshold}. "
                f"Trained on {self.trained}; tested on {self.tested}: {self.outcome}")


REGIMES: dict[str, Regime] = {
    "thresholding": Regime((6, 15), (50, 2400), "K = 10, means U(0, 1), threshold 0.5, T log-uniform in 50..400",
                           "K 6 to 15, threshold 0.35 to 0.6, T 600 to 2400", "worse than Uniform",
                           thresholds=(0.35, 0.6)),
    "threshold": Regime((3, 8), (500, 2000), "K = 4 arms on 6 levels, random survival functions, horizon 500",
                        "K 3 to 8 on 3 to 8 levels, horizon 1200 to 2000", "better than Uniform, behind DKWUCB"),
    "best_arm": Regime((7, 18), (100, 2700), "K = 15, means U(0.1, 0.6), m = 1, T log-uniform in 100..1000",
                       "K 7 and 18, T 1400 and 2700", "no better than Uniform"),
    "best_arm_dev_select": Regime((7, 18), (100, 2700), "K = 15, means U(0.1, 0.6), m = 1, T log-uniform in "
                                  "100..1000, the candidate chosen on near-tied means U(0.35, 0.5), T 600..2000",
                                  "K 7 and 18, T 1400 and 2700", "no better than Uniform"),
    "top_k": Regime((16, 64), (200, 3000), "30 arms, means U(0, 1), top 3, T log-uniform in 300..3000",
                    "16 to 64 arms, top 4 to 8, T 200 to 1800", "tied with Uniform, behind OptMAI"),
    "correlated": Regime((30, 80), (20, 300), "the GP prior's 50 arms, T log-uniform in 20..120",
                         "30 to 80 arms on a line or a grid, T 150 to 300", "better than Uniform, behind BayesGap"),
}
"""The regime of each shipped problem (``ArmwisePPO`` warns once when played outside it). The held-out settings
are the second held-out set's (``docs/rl-armwise/heldout2/instances.json``, fixed before any scoring)."""


def shipped_path(problem: str, seed: int) -> Any:
    """The package-data file of the shipped policy of ``problem`` trained with ``seed``."""
    return resources.files("bandit_gym") / "data" / "armwise" / f"{problem}-seed{seed}.npz"


class ArmwisePPO(SB3Agent):
    """A learned agent: the arm-wise policy (``bandit_gym.rl.armwise.ArmwisePolicy``) that
    ``bandit_gym.rl.train_armwise(problem, seed)`` trained with PPO on random instances and budgets, shipped as
    package data (weights only, about 90 kB each), played through ``SB3Agent`` on any K and budget of its family.

    Not from the papers. ``problem`` is one of ``SHIPPED_PROBLEMS`` (``"thresholding"``, ``"threshold"``,
    ``"best_arm"``, ``"best_arm_dev_select"``, ``"top_k"``, ``"correlated"``) and ``seed`` one of
    ``SHIPPED_SEEDS``; ``deterministic`` as ``SB3Agent`` (None: sample on pure-exploration envs, the most likely
    arm on the threshold bandit). The
    held-out scores of every shipped policy against the papers' agents, and how they were trained, are in
    ``docs/rl-learned.md`` (the regimes below: ``docs/rl.md``). On the second held-out set (settings no recipe saw,
    fixed before any scoring) every family's best paper agent beats every seed but one (top K's seed 0 ties
    OptMAI); the policies beat Uniform on the threshold bandit and on correlated arms, tie with it on top K, do no
    better than it on best arm (3 of 6 seeds worse) and lose to it on the thresholding bandit: use them as a
    learned baseline, not in place of the papers' agents. Where the problem's recipe chooses among candidates
    (``bandit_gym.rl.ArmwiseRecipe.candidates``: ``best_arm``, ``best_arm_dev_select`` and ``top_k``), seed s
    ships the candidate it chose on its validation episodes; the weights' header names it (``candidate_seed``).

    Where each problem's policies were trained and tested (``REGIMES``; outside it, the first episode that
    leaves it gives one ``UserWarning`` per agent, naming what is outside):

    - ``thresholding``: K 6 to 15, T 50 to 2400, threshold 0.35 to 0.6. Trained on K = 10, means U(0, 1),
      threshold 0.5, T log-uniform in 50..400; tested on K 6 to 15, threshold 0.35 to 0.6, T 600 to 2400: worse
      than Uniform.
    - ``threshold``: K 3 to 8, T 500 to 2000. Trained on K = 4 arms on 6 levels, random survival functions,
      horizon 500; tested on K 3 to 8 on 3 to 8 levels, horizon 1200 to 2000: better than Uniform, behind DKWUCB.
    - ``best_arm`` and ``best_arm_dev_select``: K 7 to 18, T 100 to 2700. Trained on K = 15, means U(0.1, 0.6),
      m = 1, T log-uniform in 100..1000 (``best_arm_dev_select``'s candidate chosen on near-tied means
      U(0.35, 0.5), T 600..2000); tested on K 7 and 18, T 1400 and 2700: no better than Uniform.
    - ``top_k``: K 16 to 64, T 200 to 3000. Trained on 30 arms, means U(0, 1), top 3, T log-uniform in
      300..3000; tested on 16 to 64 arms, top 4 to 8, T 200 to 1800: tied with Uniform, behind OptMAI.
    - ``correlated``: K 30 to 80, T 20 to 300. Trained on the GP prior's 50 arms, T log-uniform in 20..120;
      tested on 30 to 80 arms on a line or a grid, T 150 to 300: better than Uniform, behind BayesGap.

    Inside its regime a policy is no more than that; the law of the means is not in an observation and is not
    checked. In a spec: ``{name = "ArmwisePPO", params = {problem = "thresholding", seed = 0}}``. Refusals
    (ValueError): an unknown problem or seed; at the first ``act``, an env of another family than the
    policy's.

    Examples:
        >>> import gymnasium as gym
        >>> from bandit_gym.rl import ArmwisePPO
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
        self._warned = False  # outside the regime: one warning per agent

    def begin(self, obs: Obs, rows: np.ndarray) -> None:
        """Warn once if the episodes beginning in ``rows`` lie outside the problem's regime (``REGIMES``)."""
        super().begin(obs, rows)
        if self._warned or not len(rows):
            return
        threshold = float(obs["threshold"][rows[0], 0]) if self.problem == "thresholding" and "threshold" in obs \
            else None  # (an env of another family is refused at the step, with its own message)
        outside = REGIMES[self.problem].outside(self.num_arms, self.total_budget[rows], threshold)
        if outside:
            self._warned = True
            warnings.warn(f"{self._subject()} is played outside the regime it was trained and tested on "
                          f"({', '.join(outside)}; its regime: {REGIMES[self.problem].line()}); nothing is known "
                          "of its play there", UserWarning, stacklevel=2)

    @staticmethod
    def _check_policy(policy: Any) -> None:
        pass  # a package-data path, read by ``_load``

    def params(self) -> dict[str, Any]:
        return {"problem": self.problem, "seed": self.seed, "deterministic": self.deterministic}

    @classmethod
    def regime_lines(cls) -> list[str]:
        """One line per shipped problem: its regime (``bandit-gym list``)."""
        return [f"{problem}: {regime.line()}" for problem, regime in REGIMES.items()]

    @classmethod
    def data_files(cls, params: Mapping[str, Any]) -> tuple[Any, ...]:
        """The shipped weights (package data) of ``problem`` and ``seed``."""
        return (shipped_path(params.get("problem", "thresholding"), params.get("seed", 0)),)

    def _subject(self) -> str:
        return f"ArmwisePPO(problem={self.problem!r}, seed={self.seed})"

    def _load(self) -> None:
        if self._model is not None:
            return
        from bandit_gym.rl.armwise import load_weights

        with resources.as_file(shipped_path(self.problem, self.seed)) as path:
            policy, _ = load_weights(path)
        self._model: Any = policy
        self._stats = None
        self._check_spaces()

    def policy_action(self, obs: Obs, family: Family) -> np.ndarray:
        (trained,) = self.families_of(self.params())
        if family is not trained:
            allowed = sorted(name for name, f in SHIPPED_PROBLEMS.items() if f is family)
            raise ValueError(f"ArmwisePPO(problem={self.problem!r}) plays {trained} envs, not this {family} env; "
                             f"for it choose problem= one of {allowed}")
        return super().policy_action(obs, family)
