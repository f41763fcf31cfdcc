r"""The classic stochastic \(K\)-armed bandit (regret minimisation): pull an arm, receive its sample as the reward,
and pay the cumulative pseudo-regret \(\sum_t (\mu^* - \mu_{I_t})\) (Lai and Robbins 1985; Auer et al. 2002)."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import scipy
from gymnasium import spaces
from numpy.typing import ArrayLike

from bandit_gym import _validation as check
from bandit_gym._validation import MAX_BUDGET as MAX_BUDGET
from bandit_gym.divergences import DISTRIBUTIONS, kl_bernoulli, kl_gaussian
from bandit_gym.envs import _render
from bandit_gym.envs._arms import Arms
from bandit_gym.envs._base import Engine, Forward, Info, check_arm_actions, flag
from bandit_gym.envs._budget import Budget
from bandit_gym.envs._shell import BanditEnv, BanditVectorEnv
from bandit_gym.families import Family
from bandit_gym.instances import UniformMeans
from bandit_gym.streams import stream_seeds, stream_uniforms

DEFAULT_NUM_ARMS = 10
"""Arms of an instance drawn per episode when neither ``means`` nor ``num_arms`` is given."""


def lai_robbins_constant(means: ArrayLike, distribution: str = "bernoulli", sigma: float = 1.0) -> float:
    r"""\(C(\mu) = \sum_{i: \mu_i < \mu^*} (\mu^* - \mu_i) / \mathrm{kl}(\mu_i, \mu^*)\), the constant of the
    Lai-Robbins lower bound.

    Lai and Robbins (1985), Theorem 2: every uniformly good policy has
    \(\liminf_T \mathbb{E}[R_T] / \ln T \ge C(\mu)\) on the instance ``mu``, with \(\mathrm{kl}\) the divergence of
    the arms' family (Bernoulli, or Gaussian of known \(\sigma\): then \(C = \sum_i 2 \sigma^2 / \Delta_i\)).
    Optimal arms add nothing."""
    distribution = check.choice("distribution", distribution, DISTRIBUTIONS)
    mu = check.real_array("means", means, ndim=1, **({"low": 0.0, "high": 1.0} if distribution == "bernoulli"
                                                        else {}))
    check.arm_count("means", mu.shape[0])
    sigma = check.real("sigma", sigma, low=0.0, low_open=True)
    best = mu.max()
    worse = mu[mu < best]
    kl = kl_bernoulli(worse, best) if distribution == "bernoulli" else kl_gaussian(worse, best, sigma)
    return float(np.sum((best - worse) / kl))


def _instance(means: Any, num_arms: Any) -> Any:
    """The means to play: ``means`` (K of them, or a sampler), or, without, ``num_arms`` means drawn uniformly on
    [0, 1] per episode (``DEFAULT_NUM_ARMS`` without either)."""
    if num_arms is not None:
        num_arms = check.arm_count("num_arms", check.integer("num_arms", num_arms))
        if means is not None:
            raise ValueError("num_arms sets the size of an instance drawn uniformly per episode (means=None); "
                             "with means=[...] or a sampler the means give K, so pass one of them only")
    return UniformMeans(num_arms=num_arms or DEFAULT_NUM_ARMS) if means is None else means


class MultiArmedEngine(Engine):
    """Batched state of the stochastic K-armed bandit (see ``MultiArmedBanditEnv`` for the arguments).

    Composed of its arms (``Arms``: Bernoulli or Gaussian, fixed means or a sampler) and its horizon
    (``Budget``); it holds each copy's pulls, rewards and pseudo-regret. The attributes below read the parts'."""

    family = Family.MULTI_ARMED
    reset_options = ("means",)
    exposed: ClassVar[frozenset[str]] = frozenset(
        {"means", "best_means", "fixed_means", "budget", "num_arms", "distribution", "sigma",
         "common_random_numbers", "lai_robbins_constant", "counts", "regret"}
    )

    budget: Forward[int] = Forward("episode_budget", "maximum")
    distribution: Forward[str] = Forward("arms", "distribution")
    sigma: Forward[float] = Forward("arms", "sigma")
    bernoulli: Forward[bool] = Forward("arms", "bernoulli")
    fixed_means: Forward[np.ndarray | None] = Forward("arms", "fixed_means")
    _sampler: Forward[Any] = Forward("arms", "sampler")

    def __init__(
        self,
        num: int,
        means: Any = None,
        budget: int = 1000,
        distribution: str = "bernoulli",
        sigma: float = 1.0,
        num_arms: int | None = None,
        common_random_numbers: bool = False,
    ) -> None:
        num = check.integer("num_envs", num, minimum=1)
        self.arms = Arms(_instance(means, num_arms), distribution, sigma, argument="distribution",
                         choices=DISTRIBUTIONS)
        self.episode_budget = Budget(budget, ranged=False)
        self.common_random_numbers = flag("common_random_numbers", common_random_numbers)
        self.num_arms = k = self.arms.num_arms
        super().__init__(num, arms=k)  # the memory of num copies of K arms, checked before they are allocated
        n = self.num
        self.means = np.zeros((n, k))
        self.best_means = np.zeros(n)
        # Gaussian sums accumulate in float64; Bernoulli sums and all counts are integers, exact in the float32
        # observation buffers (budget <= 2^24), which then serve as the state itself.
        self._sums64 = None if self.bernoulli else np.zeros((n, k))
        self.left = np.zeros(n, dtype=np.int64)
        self.regret = np.zeros(n)
        self._seeds = np.zeros((n, k), dtype=np.uint64)  # per-copy, per-arm stream seeds (common random numbers)
        self.obs = {
            "budget_left": np.zeros((n, 1), dtype=np.float32),
            "last_arm": np.full((n, 1), -1.0, dtype=np.float32),
            "last_reward": np.zeros((n, 1), dtype=np.float32),
            "counts": np.zeros((n, k), dtype=np.float32),
            "sums": np.zeros((n, k), dtype=np.float32),
            "means": np.zeros((n, k), dtype=np.float32),
        }

    def lai_robbins_constant(self) -> float:
        r"""``lai_robbins_constant`` of the fixed instance: \(\mathbb{E}[R_T] \ge (C + o(1)) \ln T\) for every
        uniformly good policy."""
        if self.fixed_means is None:
            raise ValueError("the Lai-Robbins constant needs a fixed instance, but this env draws one per episode; "
                             "pass means=[...] or reset(options={'means': [...]})")
        return lai_robbins_constant(self.fixed_means, self.distribution, self.sigma)

    @property
    def counts(self) -> np.ndarray:
        """Pulls of each arm in the current episode, ``(N, K)`` (the observation's ``counts``)."""
        return self.obs["counts"]

    # ----------------------------------------------------------------------------------------------- spaces
    def observation_space(self) -> spaces.Dict:
        k, T = self.num_arms, float(self.budget)
        big = float(np.finfo(np.float32).max)  # finite bounds: Gymnasium's checker warns on infinite ones
        lo, hi, sum_lo, sum_hi = (0.0, 1.0, 0.0, T) if self.bernoulli else (-big, big, -big, big)

        def box(low: float, high: float, size: int = 1) -> spaces.Box:
            return spaces.Box(low, high, shape=(size,), dtype=np.float32)

        return spaces.Dict(
            {
                "budget_left": box(0.0, T),
                "last_arm": box(-1.0, k - 1.0),
                "last_reward": box(lo, hi),  # 0 before the first pull
                "counts": box(0.0, T, k),
                "sums": box(sum_lo, sum_hi, k),
                "means": box(lo, hi, k),  # 0 for an arm never pulled
            }
        )

    def action_space(self) -> spaces.Discrete:
        return spaces.Discrete(self.num_arms)

    # ----------------------------------------------------------------------------------------------- dynamics
    def _pin(self, options: dict[str, Any]) -> None:
        self.arms.pin(options)

    def reset_rows(self, rng: np.random.Generator, rows: np.ndarray) -> None:
        self.means[rows] = self.arms.episode_means(rng, int(rows.sum()))
        self.best_means[rows] = self.means[rows].max(axis=1)
        if self._sums64 is not None:
            self._sums64[rows] = 0.0
        if self.common_random_numbers:
            keys = rng.integers(0, 2**64 - 1, size=int(rows.sum()), dtype=np.uint64, endpoint=True)
            self._seeds[rows] = stream_seeds(keys, self.num_arms)
        self.left[rows] = self.budget
        self.regret[rows] = 0.0
        self.finished[rows] = False
        obs = self.obs
        obs["budget_left"][rows] = self.budget
        obs["last_arm"][rows] = -1.0
        for key in ("last_reward", "counts", "sums", "means"):
            obs[key][rows] = 0.0

    def check_actions(self, actions: Any) -> np.ndarray:
        return check_arm_actions(actions, self.num, self.num_arms)

    def _samples(self, rng: np.random.Generator, flat: np.ndarray, mu: np.ndarray, idx: np.ndarray) -> np.ndarray:
        """The samples of the pulled arms (cells ``flat`` of the ``(N, K)`` arrays, means ``mu``) of copies
        ``idx``: one uniform (Bernoulli, ``1{u < mu}``) or standard normal (Gaussian, ``mu + sigma z``) per copy
        from ``rng``, drawn for every copy so that a single env and a one-copy vector env draw alike; with common
        random numbers, the next draw of the pulled arm's own stream instead."""
        if self.common_random_numbers:
            draws = self.obs["counts"].reshape(-1).take(flat).astype(np.uint64)
            u = stream_uniforms(self._seeds.reshape(-1).take(flat), draws)
            return (u < mu).astype(np.float64) if self.bernoulli else mu + self.sigma * scipy.special.ndtri(u)
        if self.bernoulli:
            return (rng.random(self.num)[idx] < mu).astype(np.float64)
        return mu + self.sigma * rng.standard_normal(self.num)[idx]

    def step_rows(
        self, rng: np.random.Generator, actions: np.ndarray, rows: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, Info]:
        n, k = self.num, self.num_arms
        idx = np.flatnonzero(rows)
        arms = actions[idx]
        flat = idx * k + arms
        mu = self.means.reshape(-1).take(flat)
        x = self._samples(rng, flat, mu, idx)
        obs = self.obs
        counts, sums, means = (obs[key].reshape(-1) for key in ("counts", "sums", "means"))
        c = counts.take(flat) + np.float32(1.0)
        counts[flat] = c
        if self._sums64 is None:  # Bernoulli: integer sums, exact in float32
            s = sums.take(flat) + x.astype(np.float32)
            sums[flat] = s
            means[flat] = s / c
        else:
            sums64 = self._sums64.reshape(-1)
            s64 = sums64.take(flat) + x
            sums64[flat] = s64
            sums[flat] = s64
            means[flat] = s64 / c
        self.left[idx] -= 1
        obs["budget_left"][idx, 0] = self.left[idx]
        obs["last_arm"][idx, 0] = arms
        obs["last_reward"][idx, 0] = x
        rewards, expected, best = np.zeros(n), np.zeros(n), np.zeros(n)
        rewards[idx], expected[idx], best[idx] = x, mu, self.best_means[idx]
        self.regret[idx] += best[idx] - mu
        terminated = np.zeros(n, dtype=bool)
        terminated[idx] = self.left[idx] == 0
        self.finished |= terminated
        return rewards, terminated, {"expected_reward": expected, "best_expected_reward": best,
                                     "pseudo_regret": self.regret.copy()}

    # ----------------------------------------------------------------------------------------------- render
    def _estimates(self, row: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        counts = self.obs["counts"][row].astype(np.float64)
        sums = self.obs["sums"][row] if self._sums64 is None else self._sums64[row]
        est = np.divide(sums, counts, out=np.zeros(self.num_arms), where=counts > 0)
        return counts, est, self.arms.halfwidths(counts)

    def render_text(self, row: int) -> str:
        counts, est, half = self._estimates(row)
        used = self.budget - self.left[row]
        title = f"MultiArmedBandit ({self.distribution}): K={self.num_arms}, {used} of {self.budget} pulls"
        return _render.text_table(
            title,
            {"arm": np.arange(self.num_arms), "pulls": counts.astype(np.int64), "mean": est, "+-95%": half},
            f"last arm {int(self.obs['last_arm'][row, 0])}, cumulative pseudo-regret {self.regret[row]:.3f}",
        )

    def render_rgb(self, row: int) -> np.ndarray:
        counts, est, half = self._estimates(row)
        last = int(self.obs["last_arm"][row, 0])
        title = f"{self.budget - self.left[row]} of {self.budget} pulls"
        if self.show_truth:
            title += f"; pseudo-regret {self.regret[row]:.1f}"
        return _render.bar_chart(
            est, half, None, title, "empirical mean", (0.0, 1.0) if self.bernoulli else None, counts,
            truth=self.means[row] if self.show_truth else None,
            answer=None if last < 0 else np.arange(self.num_arms) == last, answer_label="last pull",
        )


class MultiArmedBanditEnv(BanditEnv):
    r"""Stochastic \(K\)-armed bandit: pull an arm, receive its Bernoulli or Gaussian sample as reward.

    ## Description
    The stochastic \(K\)-armed bandit of Lai and Robbins (1985) and Auer, Cesa-Bianchi and Fischer (2002): \(K\)
    arms with unknown means \(\mu_1, \dots, \mu_K\). At each of \(T\) rounds the agent pulls an arm \(I_t\) and
    receives a sample of it, \(\mathrm{Bernoulli}(\mu_i)\) or Gaussian \(\mathcal{N}(\mu_i, \sigma^2)\), as its
    reward. The goal is to maximise the total reward, i.e. to minimise the cumulative pseudo-regret
    \(R_T = \sum_t (\mu^* - \mu_{I_t}) = \sum_i \Delta_i N_i(T)\), \(\mu^* = \max_i \mu_i\),
    \(\Delta_i = \mu^* - \mu_i\). Every uniformly good policy has \(\mathbb{E}[R_T] \ge (C(\mu) + o(1)) \ln T\) with
    \(C(\mu) = \sum_{i: \Delta_i > 0} \Delta_i / \mathrm{kl}(\mu_i, \mu^*)\)
    (``lai_robbins_constant``, ``env.unwrapped.lai_robbins_constant()`` on a fixed instance).

    ## Action Space
    ``Discrete(K)``: the arm to pull.

    ## Observation Space
    A ``Dict`` of 1-D float32 ``Box`` spaces:

    | key | shape | meaning |
    |---|---|---|
    | ``budget_left`` | (1,) | rounds left, \(T - t\) |
    | ``last_arm`` | (1,) | arm pulled at the previous round, -1 at the start |
    | ``last_reward`` | (1,) | the sample received at the previous round (0 at the start) |
    | ``counts`` | (K,) | pulls \(N_i\) of each arm |
    | ``sums`` | (K,) | sum of each arm's samples |
    | ``means`` | (K,) | empirical means (0 for an arm never pulled) |

    The true means never appear in an observation.

    ## Rewards
    The sample of the pulled arm: 0 or 1 (Bernoulli), a real number (Gaussian).

    ## Episode End
    Terminates after ``budget`` rounds. No truncation (a time limit shortens the episode, which is harmless: the
    reward is paid at every round).

    ## Information
    Every step: ``expected_reward`` = \(\mu_{I_t}\) of the pulled arm, ``best_expected_reward`` = \(\mu^*\) and
    ``pseudo_regret``, the cumulative pseudo-regret of the episode so far. The increments
    ``best_expected_reward - expected_reward`` are what ``bandit_gym.wrappers.RecordEpisodeRegret`` sums into the
    episode's ``regret``, so the pseudo-regret needs no knowledge of the instance.

    ## Arguments

    | argument | default | meaning |
    |---|---|---|
    | ``means`` | None | \(K\) true means (\(2 \le K \le\) ``MAX_ARMS`` = 65,536), or a sampler ``(rng, n) -> (n, K)``
    | ``budget`` | 1000 | the horizon \(T\), \(1 \le T \le\) ``MAX_BUDGET`` \(= 2^{24} = 16{,}777{,}216\) |
    | ``distribution`` | ``"bernoulli"`` | or ``"gaussian"`` (``sigma``); Bernoulli means lie in \([0, 1]\) |
    | ``sigma`` | 1.0 | standard deviation of Gaussian arms |
    | ``num_arms`` | None | with ``means=None``: \(K\) means drawn uniformly on \([0, 1]\) per episode (default 10) |
    | ``common_random_numbers`` | False | pull \(s\) of arm \(i\) returns draw \(s\) of the arm's own stream |

    The limits (``MAX_ARMS``, ``MAX_BUDGET``, and the memory of ``num_envs`` copies of K arms, at most
    ``memory_limit()``) are those of ``bandit_gym._validation``, checked before anything is allocated.

    With ``common_random_numbers=True`` each copy draws a stream key from ``np_random`` at reset, and the s-th
    pull of arm i returns the s-th draw of the stream of (key, i) (``bandit_gym.streams``), whatever the order
    of pulls: agents run from the same seed see the same samples of every arm, which pairs their runs. A sampler
    such as ``bandit_gym.instances.UniformMeans(num_arms=5, low=0.2, high=0.8)`` draws with the env's
    ``np_random``.

    ```python
    import gymnasium as gym
    env = gym.make("bandit_gym:MultiArmedBandit-v0", means=[0.9, 0.8, 0.7], budget=10_000)
    ```
    ``reset(options={"means": [...]})`` pins that instance until the next explicit ``reset``.

    ## References
    T. L. Lai, H. Robbins. Asymptotically efficient adaptive allocation rules. Advances in Applied Mathematics
    6(1), 1985. P. Auer, N. Cesa-Bianchi, P. Fischer. Finite-time analysis of the multiarmed bandit problem.
    Machine Learning 47, 2002.

    ## Version History
    * v0: initial version.

    Examples:
        >>> import gymnasium as gym
        >>> import numpy as np
        >>> import bandit_gym
        >>> env = gym.make("MultiArmedBandit-v0")
        >>> obs, info = env.reset(seed=0)
        >>> sorted(obs)
        ['budget_left', 'counts', 'last_arm', 'last_reward', 'means', 'sums']
        >>> env.action_space
        Discrete(10)
        >>> obs, reward, terminated, truncated, info = env.step(0)  # pull arm 0
        >>> int(obs["counts"][0]), float(obs["budget_left"][0])
        (1, 999.0)
    """

    engine_class = MultiArmedEngine


class MultiArmedBanditVectorEnv(BanditVectorEnv):
    """``num_envs`` copies of ``MultiArmedBanditEnv`` advanced with array operations (one generator, bulk
    draws). Takes the same keyword arguments, plus ``num_envs``, ``copy`` (default True: fresh arrays),
    ``autoreset_mode`` and ``max_episode_steps`` (truncates episodes after that many rounds; see
    ``BanditVectorEnv``).

    Examples:
        >>> import gymnasium as gym
        >>> import bandit_gym
        >>> envs = gym.make_vec("MultiArmedBandit-v0", num_envs=4, vectorization_mode="vector_entry_point")
        >>> obs, info = envs.reset(seed=0)
        >>> obs["counts"].shape
        (4, 10)
    """

    engine_class = MultiArmedEngine
