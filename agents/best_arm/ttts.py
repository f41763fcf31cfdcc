"""TTTS, Top-Two Thompson Sampling (Russo 2016): the leader and the challenger drawn from the posterior."""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from bandit_gym import _validation as check
from bandit_gym._dispatch import EntryPoints
from bandit_gym.agents._variates import gamma_constants, standard_gamma, standard_normal, sub_stream, unit
from bandit_gym.agents.base import Obs
from bandit_gym.agents.best_arm import _stop, _stopping
from bandit_gym.agents.best_arm._base import BestArmAgent
from bandit_gym.agents.best_arm._fixed_confidence import STATE_FIELDS, start
from bandit_gym.agents.best_arm._kernels import copy_step, each_copy, over_copies, play
from bandit_gym.agents.best_arm._stopping import Stopping
from bandit_gym.jit import called, kernel, parallel_kernel

#: the work rows: the empirical means, scratch (the posterior means when the challenger's draws run out), weights;
#: each arm's Gamma constants \((d, c)\) of its Beta posterior's two shapes (Bernoulli arms), or its posterior's
#: standard deviation (Gaussian arms, in ``SCALE_WINS``), computed once per step for all of its draws
MEANS, SCRATCH, WEIGHTS, SHAPE_WINS, SCALE_WINS, SHAPE_LOSSES, SCALE_LOSSES = range(7)
#: the per-copy keys of the posterior draws are integers below \(2^{52}\), exact in the float64 constants
KEY_BOUND = 2**52


@called
def event(state: Any, k: int) -> np.uint64:
    """The first sub-stream of the copy's next event."""
    e = state["draws"]
    state["draws"] = e + 1.0
    return np.uint64(e) * np.uint64(2 * k)


@called
def uniform(constants: Any, state: Any, k: int) -> float:
    return unit(sub_stream(np.uint64(constants["key"]), event(state, k)))


@called
def prepare(counts: np.ndarray, sums: np.ndarray, constants: Any, work: np.ndarray) -> None:
    for a in range(counts.shape[0]):
        n = np.float64(counts[a])
        if constants["family"] == _stopping.BERNOULLI:
            s = np.float64(sums[a])
            work[SHAPE_WINS, a], work[SCALE_WINS, a] = gamma_constants(1.0 + s)
            work[SHAPE_LOSSES, a], work[SCALE_LOSSES, a] = gamma_constants(1.0 + n - s)
        else:
            work[SCALE_WINS, a] = constants["sigma"] / math.sqrt(n)


@called
def posterior_draw(mean: np.ndarray, constants: Any, state: Any, work: np.ndarray, theta: np.ndarray) -> None:
    """``theta`` = one draw of every arm's posterior (one event of the copy's streams), from the constants that
    ``prepare`` wrote."""
    k = mean.shape[0]
    key, first = np.uint64(constants["key"]), event(state, k)
    for a in range(k):
        x = first + np.uint64(2 * a)
        if constants["family"] == _stopping.BERNOULLI:  # Bernoulli arms: the Beta posterior of the uniform prior
            wins = standard_gamma(work[SHAPE_WINS, a], work[SCALE_WINS, a], sub_stream(key, x))
            losses = standard_gamma(work[SHAPE_LOSSES, a], work[SCALE_LOSSES, a],
                                    sub_stream(key, x + np.uint64(1)))
            theta[a] = wins / (wins + losses)
        else:  # Gaussian arms of known sigma: the posterior of the flat prior
            theta[a] = mean[a] + work[SCALE_WINS, a] * standard_normal(sub_stream(key, x), np.uint64(0))[0]


@called
def sample_best(mean: np.ndarray, constants: Any, state: Any, work: np.ndarray) -> int:
    """The best arm of one posterior draw (``posterior_draw``, into the ``WEIGHTS`` row; ties: the first)."""
    theta = work[WEIGHTS]
    posterior_draw(mean, constants, state, work, theta)
    best, largest = 0, -math.inf
    for a in range(mean.shape[0]):
        if theta[a] > largest:
            best, largest = a, theta[a]
    return best


@called
def variance(counts: np.ndarray, sums: np.ndarray, a: int, constants: Any) -> float:
    r"""The variance of arm \(a\)'s posterior."""
    n = np.float64(counts[a])
    if constants["family"] == _stopping.BERNOULLI:
        wins, losses = 1.0 + np.float64(sums[a]), 1.0 + n - np.float64(sums[a])
        return wins * losses / ((wins + losses) ** 2 * (wins + losses + 1.0))
    return constants["sigma"] ** 2 / n


@called
def log_tail(z: float) -> float:
    r"""\(\ln P(Z > z)\) for a standard normal \(Z\), without underflow (Mills' ratio's series beyond
    \(z = 5\))."""
    if z < 5.0:
        return math.log(0.5 * math.erfc(z / math.sqrt(2.0)))
    inverse = 1.0 / (z * z)
    series = 1.0 - inverse + 3.0 * inverse * inverse
    return -0.5 * z * z - math.log(z) - 0.5 * math.log(2.0 * math.pi) + math.log(series)


@called
def pairwise_challenger(counts: np.ndarray, sums: np.ndarray, mean: np.ndarray, leader: int, constants: Any,
                        state: Any, centre: np.ndarray, weights: np.ndarray) -> int:
    r"""An arm \(j \ne \text{leader}\) drawn with probability proportional to
    \(P(\theta_j > \theta_{\text{leader}})\) under the normal approximation of the posteriors (their means \(m\)
    and variances \(v\): \(\Phi(-(m_I - m_j) / \sqrt{v_I + v_j})\))."""
    k = counts.shape[0]
    for a in range(k):  # the posterior means
        if constants["family"] == _stopping.BERNOULLI:
            wins = 1.0 + np.float64(sums[a])
            centre[a] = wins / (2.0 + np.float64(counts[a]))
        else:
            centre[a] = mean[a]
    largest = -math.inf
    for j in range(k):
        if j != leader:
            spread = math.sqrt(variance(counts, sums, leader, constants) + variance(counts, sums, j, constants))
            weights[j] = log_tail((centre[leader] - centre[j]) / spread)
            largest = max(largest, weights[j])
    total = 0.0
    for j in range(k):
        if j != leader:
            total += math.exp(weights[j] - largest)
    target, arm = uniform(constants, state, k) * total, -1
    for j in range(k):
        if j != leader:
            arm = j
            target -= math.exp(weights[j] - largest)
            if target < 0.0:
                break
    return arm


@called
def ttts(counts: np.ndarray, sums: np.ndarray, made: int, budget: int, m: int, epsilon: float,
         constants: Any, state: Any, arrays: Any, work: np.ndarray, answer: np.ndarray, final: bool) -> int:
    r"""Each arm once; then stop (\(K\)) if the stopping rule does, else the leader \(I\) (the best arm of one
    posterior draw) with probability \(\beta\), or the challenger \(J\) (the best arm of the first further draw
    whose best arm is not \(I\); after ``max_resamples`` draws without one, ``pairwise_challenger``'s arm)."""
    k, mean = counts.shape[0], work[MEANS]
    arm = start(counts, sums, made, m, state, mean, work[SCRATCH], answer)
    if arm >= 0:
        return arm
    if _stop.stopped(counts, mean, answer, made, m, epsilon, constants):
        arm = k
    else:
        prepare(counts, sums, constants, work)
        arm = sample_best(mean, constants, state, work)
        if uniform(constants, state, k) >= constants["beta"]:  # the challenger, with probability \(1 - \beta\)
            leader, draws = arm, 0
            while arm == leader and draws < constants["max_resamples"]:
                arm = sample_best(mean, constants, state, work)
                draws += 1
            if arm == leader:  # no draw in ``max_resamples`` left \(I\): the pairwise approximation
                arm = pairwise_challenger(counts, sums, mean, leader, constants, state, work[SCRATCH],
                                          work[WEIGHTS])
    state["last_made"], state["last_arm"] = np.float64(made), np.float64(arm)
    return arm



@called
def one_copy(n: int, batch: tuple[Any, ...]) -> None:
    """One ``act`` of TTTS for copy n (``_kernels.copy_step``)."""
    copy_step(ttts, n, batch)


@kernel
def step(batch: tuple[Any, ...]) -> np.ndarray:
    """One ``act`` of TTTS over a batch (``_kernels.each_copy``)."""
    return each_copy(ttts, batch)


@parallel_kernel
def parallel_step(batch: tuple[Any, ...]) -> np.ndarray:
    """``step`` with the copies on all cores."""
    return over_copies(one_copy, batch)


@kernel
def rollout(episodes: tuple[Any, ...]) -> None:
    """Whole episodes of TTTS (``_kernels.play``)."""
    play(ttts, episodes)


class TTTS(BestArmAgent):
    r"""TTTS: Top-Two Thompson Sampling, the leader and the challenger the best arms of posterior draws.

    Paper: D. Russo, Simple Bayesian Algorithms for Best Arm Identification, COLT 2016 (Operations Research 68(6),
    2020; TTTS, §3); its fixed-confidence analysis with a GLR stopping rule: X. Shang, R. de Heide, E. Kaufmann,
    P. Ménard, M. Valko, Fixed-Confidence Guarantees for Bayesian Best-Arm Identification, AISTATS 2020 (TTTS,
    Algorithm 1). Not one of the five papers: the first Top Two rule, the ancestor of ``EBTCI`` and ``TTUCB``.

    After \(t\) pulls, with \(\Pi_t\) the posterior of the arms' means (Bernoulli arms: independent
    \(\mathrm{Beta}(1 + S_a, 1 + N_a - S_a)\), the uniform prior, \(S_a\) the sum of arm \(a\)'s rewards and
    \(N_a\) its pulls; Gaussian arms of known \(\sigma\): \(\mathcal{N}(\mu_a, \sigma^2 / N_a)\), the flat prior of
    Shang et al.):

    - draw \(\theta \sim \Pi_t\) and let the leader be \(I = \operatorname*{arg\,max}_a \theta_a\);
    - with probability \(\beta\) pull \(I\);
    - otherwise draw \(\theta' \sim \Pi_t\) again until \(J = \operatorname*{arg\,max}_a \theta'_a \ne I\), and
      pull the challenger \(J\).

    Stopping: by default the GLR (Chernoff) rule, GK 2016 Theorem 10's threshold on Bernoulli arms, Lattimore
    and Szepesvári's on Gaussian arms; any of the package's stopping components (``stopping``, ``threshold``).
    Russo's guarantee is the posterior's convergence at the optimal rate among rules that pull the best arm a
    fraction \(\beta\) of the time; Shang et al. (Theorem 1) show that TTTS with a GLR-type stopping rule is
    asymptotically \(\beta\)-optimal on Gaussian arms
    (\(\limsup_{\delta \to 0} \mathbb{E}[\tau] / \ln(1 / \delta) \le T^*_\beta(\mu)\), at most \(2 T^*(\mu)\) at
    \(\beta = 1/2\)). The answer is the empirical best arm.

    Parameters: ``delta`` in \((0, 1)\); ``beta`` in \((0, 1)\) (default 1/2, the papers'); ``max_resamples``
    \(\ge 1\) (default 100, the cap on the challenger's draws, below); ``distribution``, ``sigma``; ``stopping``,
    ``threshold``. Best-arm identification (\(m = 1\)) only.

    Readings where the papers are silent:

    - the challenger's draws are capped: Russo's loop has no bound, and as the posterior concentrates on \(I\)
      the chance \(p\) that a draw's best arm differs from \(I\) falls towards 0, so the loop needs about
      \(1 / p\) draws of \(K\) posteriors (at a GLR stop \(p\) is of the order of \(\exp(-\beta(t, \delta))\),
      \(10^{-6}\) and less; Shang et al. propose T3C, a transportation-cost challenger, because of this cost).
      After ``max_resamples`` draws whose best arm is \(I\), the challenger is drawn from the loop's limit law
      approximated: \(J = j \ne I\) with probability proportional to
      \(\Phi(-(m_I - m_j) / \sqrt{v_I + v_j})\), \(m\) and \(v\) the posteriors' means and variances (when \(p\)
      is small, \(P(\operatorname*{arg\,max} \theta = j \mid \operatorname*{arg\,max} \theta \ne I)\) is about
      \(P(\theta_j > \theta_I)\) normalised, and the posteriors are close to normal). Measured (GK 2016's
      \(\mu_2\), \(\delta = 0.1\), 40 runs each with common random numbers): mean pulls 4,641 (cap \(10^4\)),
      4,751 (\(10^3\)), 4,758 (100), 4,815 (10), 4,756 (1), standard errors about 230; at \(1.1 \times 10^3\),
      \(7.7 \times 10^3\) and \(5.8 \times 10^4\) pulls per CPU-second for caps \(10^4\), \(10^3\) and 100 (with
      the package's first posterior sampler, about 4 times slower per draw than today's), hence the default.
    - initialisation: each arm once, in the copy's arm order, with no stopping test (the flat Gaussian prior needs
      one sample; Russo's Bernoulli prior does not, but the GLR statistic does).
    - Bernoulli posteriors on rewards in \([0, 1]\) that are not 0 or 1:
      \(\mathrm{Beta}(1 + S_a, 1 + N_a - S_a)\) with the real sum \(S_a\) (no binarisation of the rewards).
    - the random draws come from the agent's seeded generator: each copy and episode gets a key from it, and its
      draws come from SplitMix64 sub-streams of that key (the counter-based streams of ``bandit_gym.streams``), one
      per variate, so a copy's draws do not depend on the batch or on the other copies, and the compiled
      whole-episode play equals the stepwise play bit for bit. The Beta draws are ratios of Marsaglia and Tsang's
      Gamma draws, the normal ones Marsaglia and Tsang's ziggurat: numpy ``Generator``'s algorithms
      (``bandit_gym.agents._variates``).
    - ties between draws (probability 0 on Gaussian arms): the first in the copy's arm order (random per copy and
      episode; the smallest index with ``tie_break="index"``, see ``BestArmAgent``).
    - the budget: on a fixed-confidence env the env's budget truncates the episode, with the empirical best arm as
      the answer.

    Examples:
        One seeded episode on GK 2016's second instance, at \(\delta = 0.01\), stopped by the heuristic
        threshold:

        >>> import gymnasium as gym
        >>> from bandit_gym.agents import TTTS
        >>> from bandit_gym.rollout import play_episode
        >>> env = gym.make("BestArmIdentification-v0", means=[0.3, 0.21, 0.2, 0.19, 0.18], budget=100_000,
        ...                setting="fixed_confidence")
        >>> result = play_episode(env, TTTS(delta=0.01, threshold="heuristic"), seed=0)
        >>> result["pulls"] < 100_000, result["error"]
        (True, 0.0)
    """

    constant_fields: ClassVar[tuple[str, ...]] = (*_stopping.FIELDS, "beta", "max_resamples", "key")
    #: the pulls made at the last act and its arm (``opening``); the random events of the episode (a posterior draw
    #: of every arm, or a uniform)
    state_fields: ClassVar[tuple[str, ...]] = (*STATE_FIELDS, "draws")
    best_arm_only = True
    anytime = True  # never reads the horizon: the env's budget is only a cap

    def __init__(self, delta: float = 0.05, beta: float = 0.5, *, max_resamples: int = 100,
                 stopping: str = "glr", threshold: str | None = None, distribution: str = "bernoulli",
                 sigma: float = 1.0, tie_break: str = "random") -> None:
        self.beta = check.real("beta", beta, low=0.0, high=1.0, low_open=True, high_open=True)
        self.max_resamples = check.integer("max_resamples", max_resamples, minimum=1)
        stopper = Stopping.component(type(self).__name__, delta, stopping, threshold, distribution, sigma)
        super().__init__(stopping=stopper, tie_break=tie_break)

    def params(self) -> dict[str, Any]:
        return {"beta": self.beta, "max_resamples": self.max_resamples, **super().params()}

    kernels = EntryPoints(step, parallel_step, rollout)

    def begin(self, obs: Obs, rows: np.ndarray) -> None:
        super().begin(obs, rows)
        self.constants["beta"][rows] = self.beta
        self.constants["max_resamples"][rows] = self.max_resamples
        self.constants["key"][rows] = self.rng.integers(0, KEY_BOUND, size=rows.size)
        self.state["draws"][rows] = 0.0
