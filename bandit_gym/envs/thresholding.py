"""The thresholding bandit problem of tao2019: classify every arm as above or below a threshold theta after a
fixed budget of pulls, scored by the number of misclassified arms (aggregate regret)."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode
from scipy import special

from bandit_gym import _validation as check
from bandit_gym import metrics
from bandit_gym._validation import MAX_BUDGET
from bandit_gym.envs import _render
from bandit_gym.envs._base import BanditEnv, BanditVectorEnv, Engine, Info, build_engine, draw_means
from bandit_gym.families import Family
from bandit_gym.families.thresholding import empirical_answer
from bandit_gym.instances import BudgetRange, Preset, oracle_values
from bandit_gym.streams import stream_seeds, stream_uniforms

_KERNELS: list[ModuleType] = []


def _kernels() -> ModuleType:
    """The compiled step kernels, imported on first use (numba is slow to load)."""
    if not _KERNELS:
        from bandit_gym.envs import _kernels as kernels

        _KERNELS.append(kernels)
    return _KERNELS[0]


MeansSampler = Callable[[np.random.Generator, int], np.ndarray]
ARM_DISTRIBUTIONS = ("bernoulli", "gaussian", "custom")
DEFAULT_MEANS = (0.2, 0.25, 0.3, 0.35, 0.45, 0.55, 0.65, 0.7, 0.75, 0.8)
LOSSES = ("aggregate", "simple")


def _check_distributions(distributions: Any, means: Any, arm_distribution: str | None) -> list[Any]:
    """The arms' distributions passed by the user: frozen ``scipy.stats`` distributions (or anything with
    ``ppf``, ``mean`` and ``support``) of bounded support; an empty list when none are passed."""
    if distributions is None:
        if arm_distribution == "custom":
            raise ValueError("arm_distribution='custom' needs distributions=[...], one bounded distribution per arm")
        return []
    if means is not None:
        raise ValueError("pass either means= or distributions= (the means of custom arms are their distributions' "
                         "means), not both")
    if arm_distribution not in (None, "custom"):
        raise ValueError(f"distributions= makes the arms custom, but arm_distribution={arm_distribution!r}")
    try:
        arms = list(distributions)
    except TypeError:
        raise TypeError(f"distributions must be a list of frozen scipy.stats distributions, one per arm (K >= 2), "
                        f"e.g. [scipy.stats.beta(2, 5), scipy.stats.uniform(0, 1)]; got {distributions!r} of type "
                        f"{type(distributions).__name__}") from None
    check.arm_count("distributions", len(arms))
    for i, arm in enumerate(arms):
        if not all(callable(getattr(arm, name, None)) for name in ("ppf", "mean", "support")):
            raise TypeError(f"distributions[{i}] must be a frozen scipy.stats distribution (with ppf, mean and "
                            f"support), got {arm!r}")
        low, high = (float(v) for v in arm.support())
        if not (np.isfinite(low) and np.isfinite(high)):
            raise ValueError(f"distributions[{i}] has support [{low}, {high}]; arms must be bounded (e.g. "
                             "scipy.stats.beta(2, 5), scipy.stats.uniform(0, 1))")
    return arms


class ThresholdingEngine(Engine):
    """Batched state of the thresholding bandit (see ``ThresholdingBanditEnv`` for the arguments)."""

    family = Family.THRESHOLDING
    reset_options = ("means",)
    exposed: ClassVar[frozenset[str]] = frozenset(
        {"means", "threshold", "epsilon", "budget", "num_arms", "loss", "arm_distribution", "sigma", "sample_cost",
         "distributions"}
    )

    def __init__(
        self,
        num: int,
        means: Any = None,
        threshold: float | None = 0.5,
        epsilon: float = 0.0,
        budget: int | BudgetRange = 1000,
        arm_distribution: str | None = None,
        sigma: float = 1.0,
        loss: str = "aggregate",
        sample_cost: float = 0.0,
        common_random_numbers: bool = False,
        distributions: Any = None,
    ) -> None:
        num = check.integer("num_envs", num, minimum=1)
        means = Preset.resolve(means, replaced=distributions is not None)
        self.distributions = _check_distributions(distributions, means, arm_distribution)
        self.arm_distribution = check.choice(
            "arm_distribution",
            arm_distribution if arm_distribution is not None else ("custom" if self.distributions else "bernoulli"),
            ARM_DISTRIBUTIONS,
        )
        self.bernoulli = self.arm_distribution == "bernoulli"
        self.custom = self.arm_distribution == "custom"
        if self.custom:
            means = np.array([float(d.mean()) for d in self.distributions])
        elif means is None:
            means = self.default_means
        self.sigma = check.real("sigma", sigma, low=0.0, low_open=True)
        self.support = (0.0, 1.0) if self.bernoulli else (-np.inf, np.inf)
        if self.custom:
            supports = np.array([d.support() for d in self.distributions], dtype=np.float64)
            self.support = (float(supports[:, 0].min()), float(supports[:, 1].max()))
        if threshold is None:  # a problem without a threshold (best arm, top K): the middle of the support
            threshold = float(np.mean(self.support)) if np.isfinite(self.support).all() else 0.0
        if np.isfinite(self.support).all():
            low, high = self.support
            self.threshold = check.real("threshold", threshold, low=low, high=high, low_open=True, high_open=True)
        else:
            self.threshold = check.real("threshold", threshold)
        self.epsilon = check.real("epsilon", epsilon, low=0.0)
        #: the sampler of each episode's budget (``budget=BudgetRange(...)``), or None for a fixed budget
        self.budget_range = budget if isinstance(budget, BudgetRange) else None
        if self.budget_range is None and (isinstance(budget, bool) or not isinstance(budget, (int, np.integer))):
            raise TypeError(f"budget must be an integer or a bandit_gym.instances.BudgetRange, got {budget!r} of "
                            f"type {type(budget).__name__}")
        #: the budget, or the largest one of a ``BudgetRange`` (the bound of ``budget_left``)
        self.budget = check.integer("budget", budget if self.budget_range is None else self.budget_range.high,
                                    minimum=1, maximum=MAX_BUDGET)
        self.loss = check.choice("loss", loss, LOSSES)
        self.sample_cost = check.real("sample_cost", sample_cost, low=0.0)
        if not np.isfinite(self.sample_cost * self.budget):
            raise ValueError(f"sample_cost={sample_cost!r} is too large: an episode's cost sample_cost x budget "
                             "must be a finite float64")
        if not isinstance(common_random_numbers, (bool, np.bool_)):
            raise TypeError(f"common_random_numbers must be True or False, got {common_random_numbers!r}")
        self.common_random_numbers = bool(common_random_numbers)
        self._sampler: MeansSampler | None = None
        self._fixed: np.ndarray | None = None
        self._pinned: np.ndarray | None = None
        if callable(means):
            self._sampler = means
            k = self._draw_means(np.random.default_rng(0), 1).shape[1]
        else:
            self._fixed = self._check_means("means", means)
            k = self._fixed.shape[0]
        self.num_arms = k
        super().__init__(num, arms=k)  # the memory of num copies of K arms, checked before they are allocated
        n = self.num
        self.means = np.zeros((n, k))
        # Gaussian sums accumulate in float64; Bernoulli sums and all counts are integers, exact in the float32
        # observation buffers (budget <= 2^24), which then serve as the state itself.
        self._sums64 = None if self.bernoulli else np.zeros((n, k))
        self.left = np.zeros(n, dtype=np.int64)
        #: each copy's budget T for its current episode (the fixed budget, or drawn from ``budget_range``)
        self.total = np.full(n, self.budget, dtype=np.int64)
        self._row_offsets = np.arange(n) * k
        self._seeds = np.zeros((n, k), dtype=np.uint64)  # per-copy, per-arm stream seeds (common random numbers)
        self._no_noise, self._no_sums64 = np.zeros(n), np.zeros((1, 1))  # placeholders for the step kernel
        self.obs = {
            "threshold": np.full((n, 1), self.threshold, dtype=np.float32),
            "epsilon": np.full((n, 1), self.epsilon, dtype=np.float32),
            "budget_left": np.zeros((n, 1), dtype=np.float32),
            "last_arm": np.full((n, 1), -1.0, dtype=np.float32),
            "last_value": np.zeros((n, 1), dtype=np.float32),
            "counts": np.zeros((n, k), dtype=np.float32),
            "sums": np.zeros((n, k), dtype=np.float32),
            "means": np.zeros((n, k), dtype=np.float32),
        }

    #: the instance when ``means`` is not given
    default_means: ClassVar[tuple[float, ...]] = DEFAULT_MEANS

    # ----------------------------------------------------------------------------------------------- instance
    def _check_means(self, name: str, value: Any) -> np.ndarray:
        if self.bernoulli:
            means = check.real_array(name, value, ndim=1, low=0.0, high=1.0)
        elif self.custom and name != "means":
            raise ValueError(f"{name}: the means of custom arms come from their distributions and cannot be set")
        else:
            means = check.real_array(name, value, ndim=1)
        check.arm_count(name, means.shape[0])
        if getattr(self, "num_arms", means.shape[0]) != means.shape[0]:
            raise ValueError(f"{name} has {means.shape[0]} arms but this env has K={self.num_arms}")
        return means

    def _draw_means(self, rng: np.random.Generator, n: int) -> np.ndarray:
        assert self._sampler is not None
        return draw_means(self._sampler, rng, n, self._check_means)

    @property
    def answer_step(self) -> int:
        """``budget + 1``: the answer is scored on the step after the last pull (see ``Engine.answer_step``)."""
        return self.budget + 1

    def answer_metrics(self, answer: np.ndarray, means: np.ndarray) -> dict[str, np.ndarray]:
        """``regret`` (the aggregate regret, tao2019 eq. 3) and ``error`` (``1{some arm misclassified}``) of
        answers from the env's threshold and epsilon."""
        return {"regret": metrics.aggregate_regret(answer, means, self.threshold, self.epsilon).astype(np.float64),
                "error": metrics.error_indicator(answer, means, self.threshold, self.epsilon).astype(np.float64)}

    # ----------------------------------------------------------------------------------------------- spaces
    def observation_space(self) -> spaces.Dict:
        k, T = self.num_arms, float(self.budget)
        big = float(np.finfo(np.float32).max)  # finite bounds: Gymnasium's checker warns on infinite ones
        lo, hi = (-big, big) if not np.isfinite(self.support).all() else self.support
        sum_lo, sum_hi = (min(lo * T, 0.0), max(hi * T, 0.0)) if np.isfinite(self.support).all() else (-big, big)

        def box(low: float, high: float, size: int = 1) -> spaces.Box:
            return spaces.Box(low, high, shape=(size,), dtype=np.float32)

        return spaces.Dict(
            {
                "threshold": box(lo, hi),
                "epsilon": box(0.0, big),
                "budget_left": box(0.0, T),
                "last_arm": box(-2.0, k - 1.0),
                "last_value": box(min(lo, 0.0), max(hi, 0.0)),  # 0 before the first pull
                "counts": box(0.0, T, k),
                "sums": box(sum_lo, sum_hi, k),
                "means": box(min(lo, 0.0), max(hi, 0.0), k),  # 0 for an arm never pulled
            }
        )

    def action_space(self) -> spaces.MultiDiscrete:
        return spaces.MultiDiscrete([self.num_arms + 1] + [2] * self.num_arms)

    # ----------------------------------------------------------------------------------------------- dynamics
    def _pin(self, options: dict[str, Any]) -> None:
        self._pinned = self._check_means("options['means']", options["means"]) if "means" in options else None

    def reset_rows(self, rng: np.random.Generator, rows: np.ndarray) -> None:
        if self._pinned is not None:
            self.means[rows] = self._pinned
        elif self._sampler is not None:
            self.means[rows] = self._draw_means(rng, int(rows.sum()))
        else:
            self.means[rows] = self._fixed
        if self._sums64 is not None:
            self._sums64[rows] = 0.0
        if self.common_random_numbers:
            keys = rng.integers(0, 2**64 - 1, size=int(rows.sum()), dtype=np.uint64, endpoint=True)
            self._seeds[rows] = stream_seeds(keys, self.num_arms)
        if self.budget_range is not None:
            self.total[rows] = self.budget_range(rng, int(rows.sum()))
        self.left[rows] = self.total[rows]
        self.finished[rows] = False
        obs = self.obs
        obs["budget_left"][rows, 0] = self.total[rows]
        obs["last_arm"][rows] = -1.0
        for key in ("last_value", "counts", "sums", "means"):
            obs[key][rows] = 0.0

    @property
    def stream_seeds(self) -> np.ndarray:
        """The per-copy, per-arm seeds of the counter-based sample streams (common random numbers), ``(N, K)``
        uint64, read-only: a compiled rollout draws the same samples from them."""
        view = self._seeds.view()
        view.flags.writeable = False
        return view

    def check_actions(self, actions: Any) -> np.ndarray:
        k = self.num_arms
        actions = np.asarray(actions)
        if actions.shape != (self.num, k + 1):
            got = actions.shape[1:] if self.num == 1 and actions.ndim == 2 else actions.shape
            batch = "" if self.num == 1 else f" per copy, a batch of shape (N, K + 1) = ({self.num}, {k + 1})"
            raise ValueError(
                f"action must have shape (K + 1,) = ({k + 1},){batch}: [arm in 0..{k - 1} or {k} to stop, then one "
                f"answer bit per arm]; got shape {got}"
            )
        if actions.dtype != np.int64:
            if not np.issubdtype(actions.dtype, np.integer):
                raise TypeError(f"action must hold integers, got dtype {actions.dtype}")
            cast = actions.astype(np.int64)
            if not np.array_equal(cast, actions):  # an unsigned value above 2**63 - 1: report it as given
                raise ValueError(f"action holds {actions[cast != actions][0]}, not an arm in 0..{k - 1} or {k} (stop) "
                                 "nor an answer bit")
            actions = cast
        if not _kernels().actions_valid(actions, k):
            arms, answer = actions[:, 0], actions[:, 1:]
            if arms.min() < 0 or arms.max() > k:
                bad = arms[(arms < 0) | (arms > k)][0]
                raise ValueError(f"action[0]={bad} is not an arm in 0..{k - 1} or {k} (stop)")
            bad = answer[(answer < 0) | (answer > 1)][0]
            raise ValueError(f"action[1:] is the answer and must hold bits 0 or 1, got the value {bad}")
        return actions

    def step_rows(
        self, rng: np.random.Generator, actions: np.ndarray, rows: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, Info]:
        kernels = _kernels()
        arms = actions[:, 0]
        if self.common_random_numbers and self.bernoulli:
            mode, noise = kernels.BERNOULLI_STREAMS, self._no_noise
        elif self.custom:  # the pulled arm's next uniform (stream or generator), through its quantile function
            flat = self._row_offsets + np.minimum(arms, self.num_arms - 1)
            if self.common_random_numbers:
                draws = self.obs["counts"].reshape(-1).take(flat).astype(np.uint64)
                u = stream_uniforms(self._seeds.reshape(-1).take(flat), draws)
            else:
                u = rng.random(self.num)
            mode, noise = kernels.SAMPLES, self._quantiles(np.minimum(arms, self.num_arms - 1), u)
        elif self.common_random_numbers:  # Gaussian streams: the pulled arm's next uniform, through ndtri
            flat = self._row_offsets + np.minimum(arms, self.num_arms - 1)
            draws = self.obs["counts"].reshape(-1).take(flat).astype(np.uint64)
            mode, noise = kernels.GAUSSIAN, special.ndtri(stream_uniforms(self._seeds.reshape(-1).take(flat), draws))
        elif self.bernoulli:
            mode, noise = kernels.BERNOULLI, rng.random(self.num)
        else:
            mode, noise = kernels.GAUSSIAN, rng.standard_normal(self.num)
        obs = self.obs
        rewards, stop = np.empty(self.num), np.empty(self.num, dtype=bool)
        stopping = kernels.pull(
            mode, arms, rows, noise, self._seeds, self.means, self.sigma, self.sample_cost, self.left,
            obs["counts"], obs["sums"], self._no_sums64 if self._sums64 is None else self._sums64, obs["means"],
            obs["budget_left"], obs["last_arm"], obs["last_value"], rewards, stop,
        )
        if stopping:
            s = np.flatnonzero(stop)
            rewards[s] = 0.0 - self.episode_loss(actions[s, 1:], self.means[s])
            self.finished[s] = True
        return rewards, stop, {}

    def allocate(self, rng: np.random.Generator, allocation: Any) -> None:
        """Pull arm i of copy n ``allocation[n, i]`` times at once, drawing each sum exactly: binomial for
        Bernoulli arms, normal with mean ``c mu`` and variance ``c sigma^2`` for Gaussian arms. The pulls are
        charged to the budget like single pulls; ``last_arm`` becomes -2 in the copies that pulled."""
        n, k = self.num, self.num_arms
        c = np.asarray(allocation)
        if c.shape != (n, k):
            raise ValueError(f"allocation must hold one pull count per arm, shape (K,) = ({k},); got {c.shape[1:]}")
        if not np.issubdtype(c.dtype, np.integer):
            raise TypeError(f"allocation must hold integers, got dtype {c.dtype}")
        if c.min() < 0:
            raise ValueError(f"allocation must be >= 0, got {c[c < 0][0]}")
        total = c.sum(axis=1)
        over = total > np.where(self.finished, 0, self.left)
        if over.any():
            row = int(np.flatnonzero(over)[0])
            left = 0 if self.finished[row] else self.left[row]
            raise ValueError(f"allocation asks for {total[row]} pulls but only {left} are left in the episode")
        obs = self.obs
        if self.common_random_numbers:
            added = self._stream_sums(c)
        elif self.bernoulli:  # draws only where pulls are made (phases pull a shrinking set of arms)
            cells = np.flatnonzero(c)
            added = np.zeros((n, k))
            added.flat[cells] = rng.binomial(c.flat[cells], self.means.flat[cells])
        elif self.custom:
            cells = np.repeat(np.arange(c.size), c.reshape(-1))
            x = self._quantiles(cells % k, rng.random(cells.size))
            added = np.bincount(cells, weights=x, minlength=c.size).reshape(c.shape)
        else:
            added = c * self.means + self.sigma * np.sqrt(c) * rng.standard_normal((n, k))
        if self._sums64 is None:
            obs["sums"] += added
        else:
            self._sums64 += added
            obs["sums"][...] = self._sums64
        obs["counts"] += c
        np.divide(obs["sums"], obs["counts"], out=obs["means"], where=obs["counts"] > 0)
        pulled = total > 0
        self.left -= total
        obs["budget_left"][:, 0] = self.left
        obs["last_arm"][pulled] = -2.0
        obs["last_value"][pulled] = 0.0

    def _stream_sums(self, c: np.ndarray) -> np.ndarray:
        """Sums of the next ``c[n, i]`` draws of each arm's stream: the same samples single pulls would get."""
        cells = np.flatnonzero(c)
        reps = c.reshape(-1)[cells]
        cell_of_draw = np.repeat(cells, reps)
        first = np.repeat(self.obs["counts"].reshape(-1)[cells].astype(np.int64), reps)
        within = np.arange(reps.sum()) - np.repeat(np.cumsum(reps) - reps, reps)
        u = stream_uniforms(self._seeds.reshape(-1)[cell_of_draw], first + within)
        mu = self.means.reshape(-1)[cell_of_draw]
        if self.custom:
            x = self._quantiles(cell_of_draw % self.num_arms, u)
        else:
            x = (u < mu).astype(np.float64) if self.bernoulli else mu + self.sigma * special.ndtri(u)
        return np.bincount(cell_of_draw, weights=x, minlength=c.size).reshape(c.shape)

    def _quantiles(self, arms: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Samples of custom arms: ``F_a^{-1}(u)`` for the arm ``a`` of each uniform (one quantile call per arm)."""
        x = np.empty(u.shape)
        for a in np.unique(arms):
            chosen = arms == a
            x[chosen] = self.distributions[a].ppf(u[chosen])
        return x

    def episode_loss(self, answer: np.ndarray, means: np.ndarray) -> np.ndarray:
        """The loss chosen by ``loss=`` for final answers ``answer`` on instances ``means``."""
        fn = metrics.aggregate_regret if self.loss == "aggregate" else metrics.error_indicator
        return fn(answer, means, self.threshold, self.epsilon).astype(np.float64)

    @property
    def fixed_means(self) -> np.ndarray | None:
        """The instance every episode plays (pinned by ``reset(options=...)``, else ``means=``), or None when
        a sampler draws one per episode."""
        return self._pinned if self._pinned is not None else self._fixed

    def oracle_values(self, means: np.ndarray | None = None) -> dict[str, float]:
        """Constructor arguments some agents take from the true instance (``oracle_parameters``): ``H``, the
        complexity ``sum_i 1 / Delta_i^2`` of the fixed instance (UCBE's oracle)."""
        means = self.fixed_means if means is None else means  # or those of one episode, passed in
        if means is None:
            raise ValueError("oracle parameters need a fixed instance, but this env draws its instance per episode")
        return oracle_values(means, self.threshold)

    @property
    def counts(self) -> np.ndarray:
        """Pulls of each arm, ``(N, K)``."""
        return self.obs["counts"]

    @property
    def sums(self) -> np.ndarray:
        """Sums of each arm's samples, ``(N, K)``."""
        return self.obs["sums"] if self._sums64 is None else self._sums64

    # ----------------------------------------------------------------------------------------------- render
    def _halfwidths(self, row: int) -> np.ndarray:
        counts = self.counts[row].astype(np.float64)
        if np.isfinite(self.support).all():
            return _render.hoeffding_halfwidth(counts) * (self.support[1] - self.support[0])
        with np.errstate(divide="ignore"):
            return 1.959964 * self.sigma / np.sqrt(counts)

    def render_text(self, row: int) -> str:
        counts = self.counts[row]
        est = np.divide(self.sums[row], counts, out=np.zeros(self.num_arms), where=counts > 0)
        half = self._halfwidths(row)
        side = np.where(counts == 0, "?", np.where(est >= self.threshold, "above", "below"))
        used = self.total[row] - self.left[row]
        title = f"ThresholdingBandit: K={self.num_arms}, budget {self.total[row]}, {used} pulls used"
        footer = f"threshold theta={self.threshold:g}, epsilon={self.epsilon:g}, budget left {self.left[row]}"
        return _render.text_table(
            title,
            {"arm": np.arange(self.num_arms), "pulls": counts.astype(np.int64), "mean": est, "+-95%": half,
             "answer": side},
            footer,
        )

    def render_rgb(self, row: int) -> np.ndarray:
        counts = self.counts[row]
        est = np.divide(self.sums[row], counts, out=np.zeros(self.num_arms), where=counts > 0)
        ylim = self.support if np.isfinite(self.support).all() else None
        answer = _render.submitted_answer(self, self.num_arms)  # the last action's answer bits
        title = f"{self.total[row] - self.left[row]} of {self.total[row]} pulls"
        if answer is not None and self.show_truth:
            wrong = int(metrics.misclassified(answer, self.means[row], self.threshold, self.epsilon).sum())
            title += f"; answer: {wrong} misclassified"
        return _render.bar_chart(
            est, self._halfwidths(row), self.threshold, title, "empirical mean", ylim, counts,
            truth=self.means[row] if self.show_truth else None, answer=answer,
            answer_label="answer: above", other_label="answer: below",
        )


class ThresholdingBanditEnv(BanditEnv):
    """Thresholding bandit (tao2019): classify K arms against a threshold within a budget of pulls.

    ## Description
    The thresholding bandit problem (TBP) of Tao et al. (2019, §2): K arms with unknown means theta_i, a known
    threshold theta and a budget of T pulls (the paper assumes T >= K and arms on [0, 1]). After the budget is
    spent the agent's answer ``d in {0,1}^K`` says which arms it believes satisfy ``theta_i >= theta``. The loss
    is the number of misclassified arms (aggregate regret, eq. 3, before the expectation), or optionally the
    indicator that any arm is misclassified (its expectation is the simple regret, tao2019 §1). Arms inside the
    indifference zone ``|theta_i - theta| < epsilon`` (ours) count for nothing.

    ## Action Space
    ``MultiDiscrete([K + 1] + [2] * K)``. ``action[0]`` is the arm to pull (``0..K-1``) or ``K`` to stop;
    ``action[1:]`` is the agent's current answer, one bit per arm (1 = "above the threshold"). The answer given
    at step t is the one formed from the t - 1 samples seen so far. When no pulls are left the next step is the
    answer step: it pulls nothing, its answer is final and the episode terminates. A budget of T means at most
    T pulls and T + 1 steps. ``bandit_gym.wrappers.EmpiricalAnswer`` exposes ``Discrete(K)`` instead.
    ``env.action_space.sample()`` draws the stop action ``K`` with probability 1 / (K + 1), so a random policy
    ends its episode after about K + 1 steps (one step in eleven at K = 10) and its answer bits are random;
    ``bandit_gym.wrappers.EmpiricalAnswer(env)`` (``Discrete(K)``, no stop, the empirical answer) is the space
    to sample from.

    ## Observation Space
    A ``Dict`` of 1-D float32 ``Box`` spaces:

    | key | shape | meaning |
    |---|---|---|
    | ``threshold`` | (1,) | theta |
    | ``epsilon`` | (1,) | precision epsilon |
    | ``budget_left`` | (1,) | pulls left before the answer step |
    | ``last_arm`` | (1,) | arm pulled at the previous step; -1 at the start, -2 after an ``allocate`` |
    | ``last_value`` | (1,) | sample observed at the previous step (0 at the start and after ``allocate``) |
    | ``counts`` | (K,) | pulls of each arm T_i |
    | ``sums`` | (K,) | sum of each arm's samples |
    | ``means`` | (K,) | empirical means (0 for an arm never pulled) |

    The true means never appear in an observation or an ``info``.

    ## Batched allocation
    ``env.unwrapped.allocate(c)`` pulls arm i ``c[i]`` times in one call, drawing each arm's sum exactly
    (binomial for Bernoulli arms, normal for Gaussian arms), statistically identical to ``c[i]`` single pulls and
    charged to the budget the same way; it returns the new observation. Phase-based algorithms use it; the
    single-pull ``step`` stays the reference. The vector env takes an ``(N, K)`` allocation.

    ## Rewards
    ``-sample_cost`` (default 0) per pull; minus the loss of the final answer on the answer step.

    ## Episode End
    Terminates on the answer step (after ``budget`` pulls) or when the agent stops. No truncation. A time limit
    shorter than the episode (``gym.make(id, max_episode_steps=n)``, ``TimeLimit``, n < budget + 1) would end it
    unscored and is refused at ``reset``: pass ``budget=n - 1``.

    ## Information
    ``info`` is empty. ``bandit_gym.wrappers.RecordEpisodeRegret`` adds the episode's regret at the end.

    ## Arguments

    | argument | default | meaning |
    |---|---|---|
    | ``means`` | tao2019 Setup 1 | K means (2 <= K <= ``MAX_ARMS`` = 65,536), or a sampler ``(rng, n) -> (n, K)`` |
    | ``threshold`` | 0.5 | theta; in (0, 1) for Bernoulli arms |
    | ``epsilon`` | 0.0 | indifference zone half-width, >= 0 |
    | ``budget`` | 1000 | 1 <= T <= ``MAX_BUDGET`` = 2^24, or a ``bandit_gym.instances.BudgetRange`` (T per episode) |
    | ``arm_distribution`` | ``"bernoulli"`` | ``"gaussian"`` (``sigma``), ``"custom"`` (``distributions``) |
    | ``sigma`` | 1.0 | Gaussian standard deviation |
    | ``distributions`` | None | bounded arm laws (frozen ``scipy.stats``); set the means |
    | ``loss`` | ``"aggregate"`` | or ``"simple"`` (1 if any counted arm is misclassified) |
    | ``sample_cost`` | 0.0 | cost charged per pull |
    | ``common_random_numbers`` | False | the s-th pull of arm i returns draw s of the arm's own stream (below) |

    The limits (``MAX_ARMS``, ``MAX_BUDGET``, and the memory of ``num_envs`` copies of K arms, at most
    ``memory_limit()``) are those of ``bandit_gym._validation``, checked before anything is allocated.

    With ``common_random_numbers=True`` each copy draws a stream key from ``np_random`` at reset, and the s-th
    pull of arm i returns the s-th draw of the stream of (key, i) (``bandit_gym.streams``), whatever the order
    of pulls: agents run from the same seed see the same samples of every arm, which pairs their runs.

    ```python
    import gymnasium as gym
    env = gym.make("bandit_gym:ThresholdingBandit-Tao2019Setup1-v0", budget=500)
    ```
    ``reset(options={"means": [...]})`` pins that instance until the next explicit ``reset``.

    ## References
    C. Tao, S. A. Blanco, J. Peng, Y. Zhou. Thresholding Bandit with Optimal Aggregate Regret. NeurIPS 2019.

    ## Version History
    * v0: initial version.

    Examples:
        >>> import gymnasium as gym
        >>> import numpy as np
        >>> import bandit_gym
        >>> env = gym.make("ThresholdingBandit-v0")
        >>> obs, info = env.reset(seed=0)
        >>> sorted(obs)
        ['budget_left', 'counts', 'epsilon', 'last_arm', 'last_value', 'means', 'sums', 'threshold']
        >>> env.action_space.shape, int(env.action_space.nvec[0])  # the arm (K: stop), then K answer bits
        ((11,), 11)
        >>> K = env.unwrapped.num_arms
        >>> obs, reward, terminated, truncated, info = env.step(np.zeros(K + 1, dtype=np.int64))  # pull arm 0
        >>> int(obs["counts"][0]), float(obs["budget_left"][0])
        (1, 499.0)
    """

    engine: ThresholdingEngine
    empirical_answer = staticmethod(empirical_answer)

    def allocate(self, allocation: Any) -> dict[str, np.ndarray]:
        """Batched allocation: pull arm i ``allocation[i]`` times in one call (sums drawn exactly, charged to
        the budget like single pulls) and return the new observation. Not a Gymnasium step: no reward, no
        termination; the answer is still given by the next ``step``."""
        self._check_running()
        self.engine.allocate(self.np_random, np.asarray(allocation)[None])
        return self._observation()

    def __init__(self, render_mode: str | None = None, **kwargs: Any) -> None:
        super().__init__(build_engine(ThresholdingEngine, 1, type(self), kwargs), render_mode)


class ThresholdingBanditVectorEnv(BanditVectorEnv):
    """``num_envs`` copies of ``ThresholdingBanditEnv`` advanced with array operations (one generator,
    bulk draws). Takes the same keyword arguments, plus ``num_envs``, ``copy`` (True, the default and
    Gymnasium's convention: fresh observation arrays at every step; False: read-only views of the env's buffers,
    updated in place by the next step, the fast path), ``autoreset_mode`` (``"NextStep"``, the default, or
    ``"SameStep"``) and ``max_episode_steps`` (refused below ``budget + 1``: pass ``budget``); see
    ``BanditVectorEnv``.

    Examples:
        >>> import gymnasium as gym
        >>> import bandit_gym
        >>> envs = gym.make_vec("ThresholdingBandit-v0", num_envs=4, vectorization_mode="vector_entry_point")
        >>> obs, info = envs.reset(seed=0)
        >>> obs["counts"].shape
        (4, 10)
    """

    engine: ThresholdingEngine
    empirical_answer = staticmethod(empirical_answer)

    def allocate(self, allocation: Any) -> dict[str, np.ndarray]:
        """Batched allocation for all copies at once, ``allocation`` of shape ``(N, K)`` (zeros for copies
        waiting for their autoreset); see ``ThresholdingBanditEnv.allocate``."""
        self._check_running()
        self.engine.allocate(self.np_random, allocation)
        return self._observation()

    def __init__(self, num_envs: int = 1, copy: bool = True, render_mode: str | None = None,
                 autoreset_mode: str | AutoresetMode = AutoresetMode.NEXT_STEP, max_episode_steps: int | None = None,
                 **kwargs: Any):
        if render_mode is not None:
            raise ValueError(f"render_mode={render_mode!r}: the vector env does not render; use a single env")
        super().__init__(build_engine(ThresholdingEngine, num_envs, type(self), kwargs), copy=copy,
                         autoreset_mode=autoreset_mode, max_episode_steps=max_episode_steps)
