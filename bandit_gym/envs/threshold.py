r"""The threshold bandit of abernethy2016: a threshold \(c_t\) is revealed before each round, the reward is
\(\mathbb{1}\{X \ge c_t\}\), and the value \(X\) is observed in full (uncensored) or only when it falls below \(c_t\)
(censored)."""

from __future__ import annotations

import warnings
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces

from bandit_gym import _validation as check
from bandit_gym import metrics
from bandit_gym._validation import MAX_BUDGET as MAX_BUDGET
from bandit_gym.envs import _render
from bandit_gym.envs._arms import Instance
from bandit_gym.envs._base import Engine, Forward, Info, check_arm_actions
from bandit_gym.envs._budget import Budget
from bandit_gym.envs._shell import BanditEnv, BanditVectorEnv
from bandit_gym.families import Family
from bandit_gym.instances import Preset, RandomSurvival, threshold_assumption_failures

THRESHOLD_REGIMES = ("iid", "cyclic", "increasing", "decreasing")
FEEDBACKS = ("uncensored", "censored")

DEFAULT_DISTRIBUTIONS = (
    (0.0, 0.0, 0.5, 0.5, 0.0, 0.0),
    (0.1, 0.1, 0.1, 0.1, 0.3, 0.3),
    (0.55, 0.0, 0.0, 0.0, 0.0, 0.45),
)
"""Default instance (K = 3, values in {0..5}): a "safe" arm concentrated on {2, 3}, a "middle" arm and a "risky"
arm on {0, 5}. The best arm changes with the threshold: safe for c in {1, 2}, middle for c in {3, 4}, risky for
c = 5; survival F = [[1, 1, .5, 0, 0], [.9, .8, .7, .6, .3], [.45] * 5].
"""


def check_distributions(name: str, value: Any) -> np.ndarray:
    """Validate per-arm probability vectors over ``{0..m}`` and return the survival matrix ``(K, m)``."""
    p = check.real_array(name, value, ndim=2, low=0.0, high=1.0)
    check.arm_count(name, p.shape[0])
    if p.shape[1] < 2:
        raise ValueError(f"{name} must have m + 1 >= 2 columns (probabilities of the values 0..m), got {p.shape}")
    check.level_count(name, p.shape[1] - 1)
    total = p.sum(axis=1)
    if np.any(np.abs(total - 1.0) > 1e-9):
        raise ValueError(f"each row of {name} must sum to 1 (a probability vector over 0..m); row sums are {total}")
    return metrics.survival_from_distribution(p)


def check_survival(name: str, value: Any) -> np.ndarray:
    r"""Validate a survival matrix \(F_i(j) = P(X_i \ge j)\), \(j = 1..m\): in \([0, 1]\), non-increasing in
    \(j\)."""
    F = check.real_array(name, value, ndim=2, low=0.0, high=1.0)
    check.arm_count(name, F.shape[0])
    if F.shape[1] < 1:
        raise ValueError(f"{name} must have m >= 1 columns (one per threshold level), got {F.shape}")
    check.level_count(name, F.shape[1])
    if np.any(np.diff(F, axis=1) > 1e-12):
        raise ValueError(f"{name} must be non-increasing along each row (F_i(j) = P(X_i >= j)), got {F}")
    return F


def _buffers(n: int, k: int, m: int) -> dict[str, np.ndarray]:
    """The observation buffers of ``n`` copies of K arms and m levels, at their start values."""
    return {
        "threshold": np.zeros((n, 1), dtype=np.float32),
        "budget_left": np.zeros((n, 1), dtype=np.float32),
        "last_arm": np.full((n, 1), -1.0, dtype=np.float32),
        "last_value": np.zeros((n, 1), dtype=np.float32),
        "last_censored": np.zeros((n, 1), dtype=np.float32),
        "last_reward": np.zeros((n, 1), dtype=np.float32),
        "counts": np.zeros((n, k), dtype=np.float32),
        "sums": np.zeros((n, k), dtype=np.float32),
        "means": np.zeros((n, k), dtype=np.float32),
        "level_exceed": np.zeros((n, k * m), dtype=np.float32),
        "level_trials": np.zeros((n, k * m), dtype=np.float32),
    }


class ThresholdEngine(Engine):
    r"""Batched state of the threshold bandit (see ``ThresholdBanditEnv`` for the arguments).

    Composed of its arms (an ``Instance`` of their survival functions \(F_i(j)\), ``(K, m)``: given, drawn per
    episode, or pinned by a reset) and its horizon (``Budget``); it holds each copy's thresholds, level counts and
    rewards. The attributes below read the parts'."""

    family = Family.THRESHOLD
    takes_common_random_numbers = False
    reset_options = ("distributions", "survival")
    exposed: ClassVar[frozenset[str]] = frozenset(
        {"survival", "best_survival", "survivals", "num_arms", "num_levels", "horizon", "feedback", "thresholds",
         "assumption_failures"}
    )

    #: the horizon T, the rounds of every episode
    horizon: Forward[int] = Forward("episode_budget", "maximum")
    #: the sampler of a survival matrix per episode (``survival=RandomSurvival(...)``), or None
    sampler: Forward[Any] = Forward("arms", "sampler")
    #: the given instance ``(K, m)``, or the sampler's first draw from a generator of its own (its shape)
    default_survival: Forward[np.ndarray] = Forward("arms", "default")
    #: the instance of every episode, ``F_i(j)`` (K, m) (None when the sampler draws one per episode)
    survival: Forward[np.ndarray | None] = Forward("arms", "current")

    def __init__(
        self,
        num: int,
        distributions: Any = None,
        survival: Any = None,
        thresholds: Any = "iid",
        feedback: str = "uncensored",
        horizon: int = 1000,
    ) -> None:
        num = check.integer("num_envs", num, minimum=1)
        self.arms = self._arms(num, Preset.resolve(distributions, replaced=survival is not None), survival)
        self.num_arms, self.num_levels = k, m = self.default_survival.shape
        self.episode_budget = Budget(horizon, name="horizon", ranged=False)
        # the memory of num copies of K arms and m levels, checked before they are allocated
        super().__init__(num, arms=k, levels=m)
        #: the levels where the instance has no unique best arm (abernethy2016's assumption; see
        #: ``_check_assumptions``); empty for a sampler, which is responsible for its draws
        self.assumption_failures: list[str] = []
        #: each copy's instance in its current episode, ``(N, K, m)``, and its best arm's survival ``(N, m)``
        self.survivals = np.empty((self.num, k, m))
        self.best_survivals = np.empty((self.num, m))
        self.survivals[:] = self.default_survival
        self.best_survivals[:] = self.default_survival.max(axis=0)
        if self.survival is not None:
            self._check_assumptions()
        self.feedback = check.choice("feedback", feedback, FEEDBACKS)
        self.censored = self.feedback == "censored"
        self.thresholds, self._sequence = self._check_thresholds(thresholds)
        n = self.num
        self.counts = np.zeros((n, k), dtype=np.int64)
        self.sums = np.zeros((n, k))
        self.exceed = np.zeros((n, k, m), dtype=np.int64)
        self.trials = np.zeros((n, k, m), dtype=np.int64)
        self.t = np.zeros(n, dtype=np.int64)
        self.c = np.zeros(n, dtype=np.int64)
        self._perm = np.zeros((n, m), dtype=np.int64)
        self.obs = _buffers(n, k, m)

    @property
    def best_survival(self) -> np.ndarray | None:
        r"""The best arm's survival \(\max_i F_i(j)\) (m,) of the instance of every episode, or None."""
        return None if self.survival is None else self.survival.max(axis=0)

    # ----------------------------------------------------------------------------------------------- instance
    @staticmethod
    def _arms(num: int, distributions: Any, survival: Any) -> Instance:
        """The arms' survival functions: given (``survival``), made from ``distributions`` (the default instance
        without either), or drawn per episode by a sampler ``survival=(rng, n) -> (n, K, m)``."""
        if not callable(survival):
            return Instance(ThresholdEngine._instance(distributions, survival, ""), check_survival, "survival",
                            ("K", "m"))
        if distributions is not None:
            raise ValueError("pass either distributions or survival, not both")
        if isinstance(survival, RandomSurvival):  # its size is known: checked before its (rejection) draws
            check.check_env_memory(num, survival.num_arms, survival.num_levels)
        return Instance(survival, check_survival, "survival", ("K", "m"))

    @staticmethod
    def _instance(distributions: Any, survival: Any, prefix: str) -> np.ndarray:
        if distributions is not None and survival is not None:
            raise ValueError(f"pass either {prefix}distributions or {prefix}survival, not both")
        if survival is not None:
            return check_survival(f"{prefix}survival", survival)
        if distributions is None:
            distributions = DEFAULT_DISTRIBUTIONS
        return check_distributions(f"{prefix}distributions", distributions)

    def _check_thresholds(self, thresholds: Any) -> tuple[str, np.ndarray | None]:
        m, T = self.num_levels, self.horizon
        if isinstance(thresholds, str):
            regime = check.choice("thresholds", thresholds, THRESHOLD_REGIMES)
            if regime in ("increasing", "decreasing") and m > T:
                raise ValueError(
                    f"thresholds={regime!r} splits the horizon into m={m} stages of floor(T/m) rounds; "
                    f"it needs horizon >= m, got horizon={T}"
                )
            return regime, None
        seq = np.asarray(thresholds)
        if seq.ndim != 1 or seq.shape[0] != T or not np.issubdtype(seq.dtype, np.integer):
            raise ValueError(
                f"thresholds must be one of {THRESHOLD_REGIMES} or a sequence of horizon={T} integers in 1..{m}; "
                f"got an array of shape {seq.shape} and dtype {seq.dtype}"
            )
        if seq.min() < 1 or seq.max() > m:
            raise ValueError(f"thresholds must lie in 1..m = 1..{m}, got values from {seq.min()} to {seq.max()}")
        return "sequence", seq.astype(np.int64)

    # ----------------------------------------------------------------------------------------------- spaces
    def observation_space(self) -> spaces.Dict:
        k, m, T = self.num_arms, float(self.num_levels), float(self.horizon)

        def box(low: float, high: float, size: int = 1) -> spaces.Box:
            return spaces.Box(low, high, shape=(size,), dtype=np.float32)

        return spaces.Dict(
            {
                "threshold": box(0.0, m),
                "budget_left": box(0.0, T),
                "last_arm": box(-1.0, k - 1.0),
                "last_value": box(-1.0, m),
                "last_censored": box(0.0, 1.0),
                "last_reward": box(0.0, 1.0),
                "counts": box(0.0, T, k),
                "sums": box(0.0, T, k),
                "means": box(0.0, 1.0, k),
                "level_exceed": box(0.0, T, k * self.num_levels),
                "level_trials": box(0.0, T, k * self.num_levels),
            }
        )

    def action_space(self) -> spaces.Discrete:
        return spaces.Discrete(self.num_arms)

    # ----------------------------------------------------------------------------------------------- dynamics
    def _threshold_at(self, rng: np.random.Generator, rounds: np.ndarray, idx: np.ndarray) -> np.ndarray:
        """Thresholds ``c`` of the rounds with 0-based indices ``rounds`` for the copies ``idx``."""
        m = self.num_levels
        regime = self.thresholds
        if regime == "iid":
            return rng.integers(1, m + 1, size=self.num)[idx]
        if regime == "cyclic":
            return self._perm[idx, rounds % m]
        if regime == "sequence":
            assert self._sequence is not None
            return self._sequence[rounds]
        stage = np.minimum(rounds // (self.horizon // m), m - 1)
        return stage + 1 if regime == "increasing" else m - stage

    def _pin(self, options: dict[str, Any]) -> None:
        F: np.ndarray | None = None
        if options:
            F = self._instance(options.get("distributions"), options.get("survival"), "options:")
            if F.shape != self.default_survival.shape:
                raise ValueError(
                    f"the instance in options has shape (K, m) = {F.shape}; this env has {self.default_survival.shape}"
                )
        before = self.survival
        self.arms.pinned = F
        # warned about once per instance: the constructor checked the default one
        if self.survival is not before and self.survival is not None:
            self._check_assumptions()

    def _check_assumptions(self) -> None:
        """Record (``assumption_failures``) and warn about the levels where the instance has no unique best arm,
        which abernethy2016 assumes; the regret stays defined, the paper's bounds do not apply."""
        assert self.survival is not None
        self.assumption_failures = threshold_assumption_failures(self.survival)
        if self.assumption_failures:
            warnings.warn("this threshold-bandit instance breaks an assumption of abernethy2016: "
                          + "; ".join(self.assumption_failures), stacklevel=3)

    def reset_rows(self, rng: np.random.Generator, rows: np.ndarray) -> None:
        idx = np.flatnonzero(rows)
        self.survivals[idx] = self.arms.episodes(rng, idx.size)  # drawn by a sampler unless one is pinned
        self.best_survivals[idx] = self.survivals[idx].max(axis=1)
        for array in (self.counts, self.sums, self.exceed, self.trials, self.t):
            array[idx] = 0
        self.finished[idx] = False
        if self.thresholds == "cyclic":
            self._perm[idx] = np.argsort(rng.random((idx.size, self.num_levels)), axis=1) + 1
        self.c[idx] = self._threshold_at(rng, self.t[idx], idx)
        obs = self.obs
        obs["threshold"][idx, 0] = self.c[idx]
        obs["budget_left"][idx] = self.horizon
        obs["last_arm"][idx] = -1.0
        for key in ("last_value", "last_censored", "last_reward", "counts", "sums", "means"):
            obs[key][idx] = 0.0
        obs["level_exceed"][idx] = 0.0
        obs["level_trials"][idx] = 0.0

    def check_actions(self, actions: Any) -> np.ndarray:
        return check_arm_actions(actions, self.num, self.num_arms)

    def step_rows(
        self, rng: np.random.Generator, actions: np.ndarray, rows: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, Info]:
        from bandit_gym.envs._kernels import threshold_pull

        n = self.num
        draws = rng.random(n)
        idx = np.flatnonzero(rows)
        rewards, expected, best = np.empty(n), np.empty(n), np.empty(n)
        obs = self.obs
        threshold_pull(
            actions, rows, draws, self.c, self.survivals, self.best_survivals, self.censored, self.exceed,
            self.trials, obs["level_exceed"], obs["level_trials"], self.counts, self.sums, obs["counts"],
            obs["sums"], obs["means"], obs["last_arm"], obs["last_value"], obs["last_censored"],
            obs["last_reward"], rewards, expected, best,
        )
        self.t[idx] += 1
        done = self.t[idx] == self.horizon
        going = idx[~done]
        self.c[idx[done]] = 0
        if going.size:
            self.c[going] = self._threshold_at(rng, self.t[going], going)
        self.obs["threshold"][idx, 0] = self.c[idx]
        self.obs["budget_left"][idx, 0] = self.horizon - self.t[idx]
        terminated = np.zeros(n, dtype=bool)
        terminated[idx[done]] = True
        self.finished |= terminated
        return rewards, terminated, {"expected_reward": expected, "best_expected_reward": best}

    # ----------------------------------------------------------------------------------------------- render
    def _estimates(self, row: int) -> tuple[np.ndarray, np.ndarray, int]:
        c = int(self.c[row]) if self.c[row] > 0 else self.num_levels
        trials = self.trials[row, :, c - 1].astype(np.float64)
        est = np.divide(self.exceed[row, :, c - 1], trials, out=np.zeros(self.num_arms), where=trials > 0)
        return est, _render.hoeffding_halfwidth(trials), c

    def render_text(self, row: int) -> str:
        est, half, c = self._estimates(row)
        counts = self.counts[row]
        mean = np.divide(self.sums[row], counts, out=np.zeros(self.num_arms), where=counts > 0)
        title = (f"ThresholdBandit ({self.feedback}, {self.thresholds} thresholds): round {self.t[row]} of "
                 f"{self.horizon}")
        return _render.text_table(
            title,
            {"arm": np.arange(self.num_arms), "pulls": counts, "mean reward": mean, f"F_hat({c})": est,
             "+-95%": half},
            f"current threshold c_t={self.c[row]} (levels 1..{self.num_levels}; 0 once the episode is over)",
        )

    def render_rgb(self, row: int) -> np.ndarray:
        est, half, c = self._estimates(row)
        tried = self.trials[row, :, c - 1] > 0
        answer = None  # the empirical best arm at c_t among the arms tried there
        if tried.any():
            answer = np.arange(self.num_arms) == np.argmax(np.where(tried, est, -1.0))
        truth = self.survivals[row, :, c - 1]
        title = f"round {self.t[row]}, threshold c_t = {c}"
        if self.show_truth:
            title += f"; best arm at c_t: {', '.join(map(str, np.flatnonzero(truth == truth.max())))}"
        return _render.bar_chart(est, half, None, title, f"estimate of P(X >= {c})", counts=self.counts[row],
                                 truth=truth if self.show_truth else None, truth_label=f"true P(X >= {c})",
                                 answer=answer, answer_label="empirical best at c_t")


class ThresholdBanditEnv(BanditEnv):
    r"""Threshold bandit (abernethy2016): a per-round threshold \(c_t\), reward \(\mathbb{1}\{X \ge c_t\}\).

    ## Description
    The threshold bandit of Abernethy, Amin and Zhu (2016). Before each round \(t\) the environment reveals a threshold
    \(c_t \in \{1..m\}\); the agent pulls an arm \(I_t\), whose value \(X\) (in \(\{0..m\}\)) is drawn from the arm's
    unknown distribution, and receives the reward \(\mathbb{1}\{X \ge c_t\}\). With uncensored feedback \(X\) is
    observed; with censored feedback \(X\) is observed only if \(X < c_t\), otherwise the agent learns only that \(X\)
    was censored (which also means the reward was 1). The thresholds follow the paper's orders of §5: the adversarial
    non-decreasing stages \(1..1, 2..2, \dots, m..m\) of \(\lfloor T/m \rfloor\) rounds (``"increasing"``, §5.1), the
    optimistic non-increasing stages \(m..m, \dots, 1..1\) (``"decreasing"``, §5.1), or a cyclic permutation, every
    block of \(m\) rounds holding each level once (``"cyclic"``, §5.2); or i.i.d. uniform thresholds (``"iid"``, ours:
    the paper analyses no i.i.d. order), or an explicit sequence of \(T\) levels. Readings where the paper is silent:
    its \(m\) stages of \(\lfloor T/m \rfloor\) rounds leave \(T \bmod m\) rounds, which stay in the last stage (level
    \(m\), or level 1 when decreasing); "cyclic" repeats one random permutation of \(1..m\), drawn at each reset (the
    paper's block property allows any permutation per block).

    ## Action Space
    ``Discrete(K)``: the arm to pull.

    ## Observation Space
    A ``Dict`` of 1-D float32 ``Box`` spaces:

    | key | shape | meaning |
    |---|---|---|
    | ``threshold`` | (1,) | \(c_t\) of the round about to be played (0 once the episode is over) |
    | ``budget_left`` | (1,) | rounds left, \(T - t\) |
    | ``last_arm`` | (1,) | arm pulled at the previous round, -1 at the start |
    | ``last_value`` | (1,) | \(X\) observed at the previous round, -1 if it was censored (0 at the start) |
    | ``last_censored`` | (1,) | 1 if the previous observation was censored |
    | ``last_reward`` | (1,) | \(\mathbb{1}\{X \ge c\}\) of the previous round |
    | ``counts`` | (K,) | pulls \(N_i\) of each arm |
    | ``sums`` | (K,) | reward sums of each arm |
    | ``means`` | (K,) | empirical mean rewards (0 for an arm never pulled) |
    | ``level_exceed`` | (K * m,) | ``[i * m + j - 1]``: pulls of arm \(i\) known to have \(X \ge j\) |
    | ``level_trials`` | (K * m,) | ``[i * m + j - 1]``: pulls of arm \(i\) whose outcome at level \(j\) is counted |

    Uncensored: ``level_exceed`` counts \(X \ge j\) and ``level_trials`` is \(N_i\) for every level, so their ratio is
    the empirical survival function of §4 (eq. 5). Censored: ``level_exceed`` is \(D_i(j) = \#\{\min(X, c) \ge j\}\) and
    ``level_trials`` is \(N_i(j) = \#\{c \ge j\}\), the counts of the modified Kaplan-Meier estimator (eq. 8). In both
    cases \(\hat F_i(j)\) = ``level_exceed / level_trials``.

    ## Rewards
    \(\mathbb{1}\{X \ge c_t\}\).

    ## Episode End
    Terminates after ``horizon`` rounds. No truncation.

    ## Information
    Every step: ``expected_reward`` = \(F_{I_t}(c_t)\) of the pulled arm and ``best_expected_reward`` =
    \(\max_i F_i(c_t)\), so the pseudo-regret needs no knowledge of the instance.

    ## Arguments

    | argument | default | meaning |
    |---|---|---|
    | ``distributions`` | ``DEFAULT_DISTRIBUTIONS`` | \((K, m + 1)\) probability vectors over the values \(0..m\) |
    | ``survival`` | None | or the \((K, m)\) matrix \(F_i(j)=P(X_i\ge j)\), or a sampler such as ``RandomSurvival``
    | ``thresholds`` | ``"iid"`` | ``"iid"``, ``"cyclic"``, ``"increasing"``, ``"decreasing"``, or \(T\) levels |
    | ``feedback`` | ``"uncensored"`` | or ``"censored"`` |
    | ``horizon`` | 1000 | \(1 \le T \le\) ``MAX_BUDGET`` \(= 2^{24} = 16{,}777{,}216\) |

    Sizes: \(2 \le K \le\) ``MAX_ARMS`` = 65,536 arms, \(1 \le m \le\) ``MAX_LEVELS`` = 4096 levels, and the memory of
    ``num_envs`` copies of \(K\) arms and \(m\) levels at most ``memory_limit()`` (``bandit_gym._validation``), checked
    before anything is allocated.

    ```python
    import gymnasium as gym
    env = gym.make("bandit_gym:ThresholdBandit-v0", thresholds="cyclic", horizon=5000)
    ```
    The paper assumes a unique best arm at every level; an instance that breaks it is accepted with a warning, and
    ``env.unwrapped.assumption_failures`` lists the levels (empty otherwise). ``reset(options={"distributions": ...})``
    (or ``"survival"``) pins another instance of the same shape until the next explicit ``reset``. A sampler
    ``survival=(rng, n) -> (n, K, m)`` draws each copy's instance at every episode start
    (``bandit_gym.instances.RandomSurvival``: random levels with a unique best arm per level);
    ``env.unwrapped.survivals`` holds each copy's current instance and ``survival`` is then None.

    ## References
    J. Abernethy, K. Amin, R. Zhu. Threshold Bandits, With and Without Censored Feedback. NIPS 2016.

    ## Version History
    * v0: initial version.

    Examples:
        >>> import gymnasium as gym
        >>> import numpy as np
        >>> import bandit_gym
        >>> env = gym.make("ThresholdBandit-v0")
        >>> obs, info = env.reset(seed=0)
        >>> sorted(obs)
        ['budget_left', 'counts', 'last_arm', 'last_censored', 'last_reward', 'last_value', 'level_exceed',
        'level_trials', 'means', 'sums', 'threshold']
        >>> env.action_space
        Discrete(3)
        >>> obs, reward, terminated, truncated, info = env.step(0)  # pull arm 0
        >>> int(obs["counts"][0]), float(obs["budget_left"][0])
        (1, 999.0)
    """

    engine_class = ThresholdEngine


class ThresholdBanditVectorEnv(BanditVectorEnv):
    """``num_envs`` copies of ``ThresholdBanditEnv`` advanced with array operations (one generator, bulk
    draws). Takes the same keyword arguments, plus ``num_envs``, ``copy`` (default True: fresh arrays),
    ``autoreset_mode`` and ``max_episode_steps`` (truncates episodes after that many rounds; see
    ``BanditVectorEnv``).

    Examples:
        >>> import gymnasium as gym
        >>> import bandit_gym
        >>> envs = gym.make_vec("ThresholdBandit-v0", num_envs=4, vectorization_mode="vector_entry_point")
        >>> obs, info = envs.reset(seed=0)
        >>> obs["counts"].shape
        (4, 3)
    """

    engine_class = ThresholdEngine
