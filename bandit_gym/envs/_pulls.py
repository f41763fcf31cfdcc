"""The pulls of a pure-exploration problem, a part of the thresholding and best-arm engines: each copy's true
means, counts and sums, the pulls left in its episode, the step that pulls an arm or ends the episode, and the
batched allocation."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
import scipy
from gymnasium import spaces

from bandit_gym.envs._arms import Arms
from bandit_gym.envs._base import Forward
from bandit_gym.envs._budget import Budget
from bandit_gym.instances import BudgetRange
from bandit_gym.streams import stream_seeds, stream_uniforms

_KERNELS: list[ModuleType] = []

#: the observation keys ``Pulls`` holds, in the order of an observation (after the problem's own keys)
KEYS = ("budget_left", "last_arm", "last_value", "counts", "sums", "means")


def _kernels() -> ModuleType:
    """The compiled step kernels, imported on first use (numba is slow to load)."""
    if not _KERNELS:
        from bandit_gym.envs import _kernels as kernels

        _KERNELS.append(kernels)
    return _KERNELS[0]


def box(low: float, high: float, size: int = 1) -> spaces.Box:
    """A 1-D float32 ``Box`` of ``size`` entries, the shape of every observation entry."""
    return spaces.Box(low, high, shape=(size,), dtype=np.float32)


class Pulls:
    """The pulls of ``num`` copies of a pure-exploration problem on ``arms`` within ``budget``.

    It holds each copy's true means ``(N, K)``, its pulls left and budget, its per-arm stream seeds (common random
    numbers) and the observation buffers of ``KEYS``, which serve as the state itself: Bernoulli sums and all
    counts are integers, exact in float32 (budget <= 2^24); Gaussian and custom sums accumulate in float64.
    ``finished`` is the engine's array of ended copies, which ``step`` sets and ``allocate`` reads. A pull costs
    ``sample_cost``; with ``common_random_numbers`` the s-th pull of arm i returns draw s of the arm's own stream.
    """

    def __init__(self, num: int, arms: Arms, budget: Budget, finished: np.ndarray, sample_cost: float,
                 common_random_numbers: bool, squares: bool = False) -> None:
        n, k = num, arms.num_arms
        self.num, self.arms, self.budget, self.finished = num, arms, budget, finished
        self.sample_cost, self.common_random_numbers = sample_cost, common_random_numbers
        #: each copy's true means in its current episode, ``(N, K)``
        self.means = np.zeros((n, k))
        self.sums64 = None if arms.bernoulli else np.zeros((n, k))
        #: the pulls left in each copy's episode
        self.left = np.zeros(n, dtype=np.int64)
        #: each copy's budget T for its current episode (the fixed budget, or drawn from the budget's range)
        self.total = np.full(n, budget.maximum, dtype=np.int64)
        self.row_offsets = np.arange(n) * k
        #: per-copy, per-arm stream seeds (common random numbers), ``(N, K)`` uint64
        self.seeds = np.zeros((n, k), dtype=np.uint64)
        self.no_noise, self.no_sums64 = np.zeros(n), np.zeros((1, 1))  # placeholders for the step kernel
        #: the observation buffers of ``KEYS``
        self.obs = {
            "budget_left": np.zeros((n, 1), dtype=np.float32),
            "last_arm": np.full((n, 1), -1.0, dtype=np.float32),
            "last_value": np.zeros((n, 1), dtype=np.float32),
            "counts": np.zeros((n, k), dtype=np.float32),
            "sums": np.zeros((n, k), dtype=np.float32),
            "means": np.zeros((n, k), dtype=np.float32),
        }
        #: each arm's sum of squared deviations from its empirical mean (float64), observed as ``squares`` when
        #: asked (``squares=True``): with counts and sums, the sufficient statistic of Gaussian arms of unknown
        #: variance; None otherwise
        self.squares64 = np.zeros((n, k)) if squares else None
        if squares:
            self.obs["squares"] = np.zeros((n, k), dtype=np.float32)

    @property
    def counts(self) -> np.ndarray:
        """Pulls of each arm, ``(N, K)``."""
        return self.obs["counts"]

    @property
    def sums(self) -> np.ndarray:
        """Sums of each arm's samples, ``(N, K)``."""
        return self.obs["sums"] if self.sums64 is None else self.sums64

    @property
    def stream_seeds(self) -> np.ndarray:
        """The per-copy, per-arm seeds of the counter-based sample streams (common random numbers), ``(N, K)``
        uint64, read-only: a compiled rollout draws the same samples from them."""
        view = self.seeds.view()
        view.flags.writeable = False
        return view

    # ----------------------------------------------------------------------------------------------- spaces
    def boxes(self) -> dict[str, spaces.Box]:
        """The observation space's boxes of ``KEYS``, bounded by the arms' support and the (largest) budget."""
        k, T = self.arms.num_arms, float(self.budget.maximum)
        big = float(np.finfo(np.float32).max)  # finite bounds: Gymnasium's checker warns on infinite ones
        lo, hi = self.arms.support if self.arms.bounded else (-big, big)
        sum_lo, sum_hi = (min(lo * T, 0.0), max(hi * T, 0.0)) if self.arms.bounded else (-big, big)
        return {
            "budget_left": box(0.0, T),
            "last_arm": box(-2.0, k - 1.0),
            "last_value": box(min(lo, 0.0), max(hi, 0.0)),  # 0 before the first pull
            "counts": box(0.0, T, k),
            "sums": box(sum_lo, sum_hi, k),
            "means": box(min(lo, 0.0), max(hi, 0.0), k),  # 0 for an arm never pulled
        } | ({} if self.squares64 is None else {"squares": box(0.0, big, k)})

    def action_space(self) -> spaces.MultiDiscrete:
        """``[arm in 0..K - 1 or K to stop] + K answer bits``."""
        return spaces.MultiDiscrete([self.arms.num_arms + 1] + [2] * self.arms.num_arms)

    # ----------------------------------------------------------------------------------------------- dynamics
    def reset(self, rng: np.random.Generator, rows: np.ndarray) -> None:
        """Start a new episode in the copies of ``rows``: its means (drawn first), stream keys, then budget."""
        self.means[rows] = self.arms.episode_means(rng, int(rows.sum()))
        if self.sums64 is not None:
            self.sums64[rows] = 0.0
        if self.squares64 is not None:
            self.squares64[rows] = 0.0
            self.obs["squares"][rows] = 0.0
        if self.common_random_numbers:
            keys = rng.integers(0, 2**64 - 1, size=int(rows.sum()), dtype=np.uint64, endpoint=True)
            self.seeds[rows] = stream_seeds(keys, self.arms.num_arms)
        self.budget.start(rng, self.total, rows)
        self.left[rows] = self.total[rows]
        self.finished[rows] = False
        obs = self.obs
        obs["budget_left"][rows, 0] = self.total[rows]
        obs["last_arm"][rows] = -1.0
        for key in ("last_value", "counts", "sums", "means"):
            obs[key][rows] = 0.0

    def check_actions(self, actions: Any) -> np.ndarray:
        """The ``(N, K + 1)`` actions as int64, or a ValueError/TypeError that names the fault."""
        k, num = self.arms.num_arms, self.num
        actions = np.asarray(actions)
        if actions.shape != (num, k + 1):
            got = actions.shape[1:] if num == 1 and actions.ndim == 2 else actions.shape
            batch = "" if num == 1 else f" per copy, a batch of shape (N, K + 1) = ({num}, {k + 1})"
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

    def _noise(self, rng: np.random.Generator, arms: np.ndarray) -> tuple[int, np.ndarray]:
        """The kernel's mode and each copy's draw for pulling ``arms``: a uniform, a standard normal, or (custom
        arms) the sample itself; with common random numbers, the pulled arm's next stream draw."""
        kernels, k = _kernels(), self.arms.num_arms
        if self.common_random_numbers and self.arms.bernoulli:
            return kernels.BERNOULLI_STREAMS, self.no_noise
        if self.arms.custom:  # the pulled arm's next uniform (stream or generator), through its quantile function
            flat = self.row_offsets + np.minimum(arms, k - 1)
            if self.common_random_numbers:
                draws = self.obs["counts"].reshape(-1).take(flat).astype(np.uint64)
                u = stream_uniforms(self.seeds.reshape(-1).take(flat), draws)
            else:
                u = rng.random(self.num)
            return kernels.SAMPLES, self.arms.quantiles(np.minimum(arms, k - 1), u)
        if self.common_random_numbers:  # Gaussian streams: the pulled arm's next uniform, through ndtri
            flat = self.row_offsets + np.minimum(arms, k - 1)
            draws = self.obs["counts"].reshape(-1).take(flat).astype(np.uint64)
            return kernels.GAUSSIAN, scipy.special.ndtri(stream_uniforms(self.seeds.reshape(-1).take(flat), draws))
        if self.arms.bernoulli:
            return kernels.BERNOULLI, rng.random(self.num)
        return kernels.GAUSSIAN, rng.standard_normal(self.num)

    def step(self, rng: np.random.Generator, actions: np.ndarray, rows: np.ndarray,
             loss: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """Pull ``actions[:, 0]`` in the copies of ``rows``, or end their episode (the stop action, or no pull
        left): an ending copy is paid minus ``loss(answer, means)`` of its answer ``actions[:, 1:]`` and marked
        finished. Returns the rewards and the ending copies."""
        arms = actions[:, 0]
        mode, noise = self._noise(rng, arms)
        sigma = float(self.arms.scales[0])  # every arm's sigma; per arm, the draws are scaled and sigma is 1
        if self.arms.per_arm_sigma and mode == _kernels().GAUSSIAN:  # each draw scaled by its arm's sigma
            noise, sigma = noise * self.arms.scales[np.minimum(arms, self.arms.num_arms - 1)], 1.0
        before = None if self.squares64 is None else self._before_pull(arms, rows)
        obs = self.obs
        rewards, stop = np.empty(self.num), np.empty(self.num, dtype=bool)
        stopping = _kernels().pull(
            mode, arms, rows, noise, self.seeds, self.means, sigma, self.sample_cost, self.left,
            obs["counts"], obs["sums"], self.no_sums64 if self.sums64 is None else self.sums64, obs["means"],
            obs["budget_left"], obs["last_arm"], obs["last_value"], rewards, stop,
        )
        if before is not None:
            self._add_square(before, stop, mode, noise, sigma)
        if stopping:
            s = np.flatnonzero(stop)
            rewards[s] = 0.0 - loss(actions[s, 1:], self.means[s])
            self.finished[s] = True
        return rewards, stop

    def truncations(self, actions: np.ndarray, stop: np.ndarray, setting: str, none: np.ndarray) -> np.ndarray:
        """The copies truncated by this step: in fixed confidence, those that ended out of pulls without a stop
        action (the budget is a cap); ``none`` (no copy) in a fixed budget, whose answer step terminates, and on a
        step that ends no copy."""
        if setting == "fixed_budget" or not stop.any():
            return none
        return stop & (actions[:, 0] != self.arms.num_arms)

    def _before_pull(self, arms: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The copies that may pull (``rows``, an arm < K), their arm, and its float64 sum before the pull."""
        pulling = np.flatnonzero(rows & (arms < self.arms.num_arms))
        arm = arms[pulling]
        return pulling, arm, self.sums[pulling, arm].astype(np.float64)

    def _add_square(self, before: tuple[np.ndarray, np.ndarray, np.ndarray], stop: np.ndarray, mode: int,
                    noise: np.ndarray, sigma: float) -> None:
        """Welford's update of the squared deviations of the arm each copy pulled: ``M2 += (x - m_old)(x -
        m_new)``, x the sample as the step kernel drew it."""
        pulling, arm, old_sum = before
        pulled = ~stop[pulling]
        pulling, arm, old_sum = pulling[pulled], arm[pulled], old_sum[pulled]
        kernels = _kernels()
        if mode == kernels.SAMPLES:
            x = noise[pulling]
        elif mode == kernels.GAUSSIAN:
            x = self.means[pulling, arm] + sigma * noise[pulling]
        else:
            x = self.obs["last_value"][pulling, 0].astype(np.float64)
        count = self.obs["counts"][pulling, arm].astype(np.float64)
        old_mean = np.divide(old_sum, count - 1.0, out=x.copy(), where=count > 1.0)
        self.squares64[pulling, arm] += (x - old_mean) * (x - (old_sum + x) / count)  # type: ignore[index]
        self.obs["squares"][pulling, arm] = self.squares64[pulling, arm]  # type: ignore[index]

    def _check_allocation(self, allocation: Any) -> np.ndarray:
        n, k = self.num, self.arms.num_arms
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
        return c

    def allocate(self, rng: np.random.Generator, allocation: Any) -> None:
        """Pull arm i of copy n ``allocation[n, i]`` times at once, drawing each sum exactly: binomial for
        Bernoulli arms, normal with mean ``c mu`` and variance ``c sigma^2`` for Gaussian arms. The pulls are
        charged to the budget like single pulls; ``last_arm`` becomes -2 in the copies that pulled."""
        c = self._check_allocation(allocation)
        n, k = self.num, self.arms.num_arms
        obs = self.obs
        squares = None  # the new samples' squared deviations from their own mean, when observed
        if self.common_random_numbers:
            added, squares = self._stream_sums(c)
        elif self.arms.bernoulli:  # draws only where pulls are made (phases pull a shrinking set of arms)
            cells = np.flatnonzero(c)
            added = np.zeros((n, k))
            added.flat[cells] = rng.binomial(c.flat[cells], self.means.flat[cells])
        elif self.arms.custom:
            cells = np.repeat(np.arange(c.size), c.reshape(-1))
            x = self.arms.quantiles(cells % k, rng.random(cells.size))
            added = np.bincount(cells, weights=x, minlength=c.size).reshape(c.shape)
            squares = _squares(cells, x, c)
        else:  # the sum is normal, and apart from it the squares are sigma^2 chi-square with c - 1 degrees
            added = c * self.means + self.arms.scales * np.sqrt(c) * rng.standard_normal((n, k))
            if self.squares64 is not None:
                squares = self.arms.scales**2 * rng.chisquare(np.maximum(c - 1, 1)) * (c > 1)
        if self.squares64 is not None:
            self._merge_squares(c, added, added - added**2 / np.maximum(c, 1) if squares is None else squares)
        if self.sums64 is None:
            obs["sums"] += added
        else:
            self.sums64 += added
            obs["sums"][...] = self.sums64
        obs["counts"] += c
        np.divide(obs["sums"], obs["counts"], out=obs["means"], where=obs["counts"] > 0)
        total = c.sum(axis=1)
        pulled = total > 0
        self.left -= total
        obs["budget_left"][:, 0] = self.left
        obs["last_arm"][pulled] = -2.0
        obs["last_value"][pulled] = 0.0

    def _merge_squares(self, c: np.ndarray, added: np.ndarray, squares: np.ndarray) -> None:
        """Merge c new samples of sum ``added`` and squared deviations ``squares`` into each arm's (before the
        counts and sums are updated): ``M2 = M2_a + M2_b + (m_b - m_a)^2 n_a n_b / (n_a + n_b)`` (Chan et al.)."""
        n_old = self.obs["counts"].astype(np.float64)
        total = np.maximum(n_old + c, 1.0)
        old_mean = np.divide(self.sums, n_old, out=np.zeros_like(n_old), where=n_old > 0)
        new_mean = np.divide(added, c, out=np.zeros_like(n_old), where=c > 0)
        self.squares64 += squares + (new_mean - old_mean) ** 2 * n_old * c / total  # type: ignore[operator]
        self.obs["squares"][...] = self.squares64

    def _stream_sums(self, c: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """Sums of the next ``c[n, i]`` draws of each arm's stream: the same samples single pulls would get; and
        their squared deviations from their own mean when they are observed (else None)."""
        cells = np.flatnonzero(c)
        reps = c.reshape(-1)[cells]
        cell_of_draw = np.repeat(cells, reps)
        first = np.repeat(self.obs["counts"].reshape(-1)[cells].astype(np.int64), reps)
        within = np.arange(reps.sum()) - np.repeat(np.cumsum(reps) - reps, reps)
        u = stream_uniforms(self.seeds.reshape(-1)[cell_of_draw], first + within)
        mu = self.means.reshape(-1)[cell_of_draw]
        if self.arms.custom:
            x = self.arms.quantiles(cell_of_draw % self.arms.num_arms, u)
        else:
            scale = self.arms.scales[cell_of_draw % self.arms.num_arms]
            x = (u < mu).astype(np.float64) if self.arms.bernoulli else mu + scale * scipy.special.ndtri(u)
        sums = np.bincount(cell_of_draw, weights=x, minlength=c.size).reshape(c.shape)
        return sums, None if self.squares64 is None else _squares(cell_of_draw, x, c)

    # ----------------------------------------------------------------------------------------------- render
    def estimates(self, row: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Copy ``row``'s pulls, empirical means (0 for an arm never pulled) and their 95% half-widths."""
        counts = self.counts[row]
        est = np.divide(self.sums[row], counts, out=np.zeros(self.arms.num_arms), where=counts > 0)
        return counts, est, self.arms.halfwidths(counts.astype(np.float64))


def _squares(cells: np.ndarray, x: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Each cell's squared deviations of its samples ``x`` (cell ``cells[i]`` for sample i) from their mean, in
    two passes."""
    sums = np.bincount(cells, weights=x, minlength=c.size)
    mean = sums / np.maximum(c.reshape(-1), 1)
    return np.bincount(cells, weights=(x - mean[cells]) ** 2, minlength=c.size).reshape(c.shape)


class PulledArms:
    """The attributes of an engine made of ``Arms`` (``arms``), a ``Budget`` (``episode_budget``) and ``Pulls``
    (``pulls``) that read its parts (``Forward``): the thresholding and best-arm engines inherit them."""

    budget: Forward[int] = Forward("episode_budget", "maximum")
    budget_range: Forward[BudgetRange | None] = Forward("episode_budget", "range")
    arm_distribution: Forward[str] = Forward("arms", "distribution")
    sigma: Forward[float | np.ndarray] = Forward("arms", "sigma")
    bernoulli: Forward[bool] = Forward("arms", "bernoulli")
    distributions: Forward[list[Any]] = Forward("arms", "distributions")
    fixed_means: Forward[np.ndarray | None] = Forward("arms", "fixed_means")
    _sampler: Forward[Any] = Forward("arms", "sampler")
    means: Forward[np.ndarray] = Forward("pulls", "means")
    left: Forward[np.ndarray] = Forward("pulls", "left")
    total: Forward[np.ndarray] = Forward("pulls", "total")
    counts: Forward[np.ndarray] = Forward("pulls", "counts")
    sums: Forward[np.ndarray] = Forward("pulls", "sums")
    stream_seeds: Forward[np.ndarray] = Forward("pulls", "stream_seeds")
    _seeds: Forward[np.ndarray] = Forward("pulls", "seeds")
    sample_cost: Forward[float] = Forward("pulls", "sample_cost")
    common_random_numbers: Forward[bool] = Forward("pulls", "common_random_numbers")
