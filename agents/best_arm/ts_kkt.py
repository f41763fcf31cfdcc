"""TS-KKT with information-directed selection (You, Qin, Wang and Yang 2023): a Top Two rule for top-m
identification, the leader set drawn from the posterior, the challenger pair of least transportation cost."""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from bandit_gym import _validation as check
from bandit_gym._dispatch import EntryPoints
from bandit_gym.agents.base import Obs
from bandit_gym.agents.best_arm import _stop, _stopping
from bandit_gym.agents.best_arm._base import BestArmAgent
from bandit_gym.agents.best_arm._fixed_confidence import STATE_FIELDS, start
from bandit_gym.agents.best_arm._kernels import copy_step, each_copy, over_copies, play
from bandit_gym.agents.best_arm._stopping import Stopping
from bandit_gym.agents.best_arm.ttts import KEY_BOUND, posterior_draw, prepare, uniform
from bandit_gym.agents.ranking import top_m
from bandit_gym.jit import called, kernel, parallel_kernel

#: the work rows: the empirical means, scratch, the posterior draw, then the posterior's constants as
#: ``ttts.prepare`` writes them (rows 3 to 6)
MEANS, SCRATCH, DRAW = range(3)
PROPORTIONS = ("ids", "fixed")
#: ``constants["proportions"]``: information-directed selection, or the fixed leader probability ``constants["beta"]``
IDS, FIXED = range(len(PROPORTIONS))


@called
def pair_cost(counts: np.ndarray, mean: np.ndarray, i: int, j: int, constants: Any) -> tuple[float, float]:
    r"""\((N_i d(\mu_i, m_{ij}), N_j d(\mu_j, m_{ij}))\), \(m_{ij} = (N_i \mu_i + N_j \mu_j) / (N_i + N_j)\): the two
    terms of the transportation cost \(t C_{ij}(\psi)\) of the pair \((i, j)\) at the empirical means,
    \(\psi = N / t\)."""
    ni, nj = np.float64(counts[i]), np.float64(counts[j])
    mid = (ni * mean[i] + nj * mean[j]) / (ni + nj)
    family, sigma = constants["family"], constants["sigma"]
    return ni * _stopping.divergence(mean[i], mid, family, sigma), nj * _stopping.divergence(mean[j], mid, family,
                                                                                                sigma)


@called
def challenger_pair(counts: np.ndarray, mean: np.ndarray, leaders: np.ndarray, constants: Any) -> tuple[int, int,
                                                                                                       float]:
    r"""The pair \((i, j) = \operatorname*{arg\,min}_{i \in \text{leaders}, j \notin \text{leaders}} C_{ij}\) (ties:
    the first in the arms' order, \(i\) then \(j\)) and IDS's probability of pulling \(i\),
    \(h_{ij} = N_i d(\mu_i, m_{ij}) / (t C_{ij})\) (1/2 where \(C_{ij} = 0\): equal means)."""
    k = counts.shape[0]
    lowest, best_i, best_j, leader_part = math.inf, -1, -1, 0.0
    for i in range(k):
        if leaders[i]:
            for j in range(k):
                if not leaders[j]:
                    g, h = pair_cost(counts, mean, i, j, constants)
                    if g + h < lowest:
                        lowest, best_i, best_j, leader_part = g + h, i, j, g
    return best_i, best_j, leader_part / lowest if lowest > 0.0 else 0.5


@called
def ts_kkt(counts: np.ndarray, sums: np.ndarray, made: int, budget: int, m: int, epsilon: float,
           constants: Any, state: Any, arrays: Any, work: np.ndarray, answer: np.ndarray, final: bool) -> int:
    r"""Each arm once; then stop (\(K\)) if the stopping rule does, else: the leader set \(I\) = the \(m\) largest
    arms of one posterior draw; the pair \((i, j)\), \(i \in I\), \(j \notin I\), of least \(C_{ij}\); pull \(i\)
    with probability \(h_{ij}\) (IDS) or \(\beta\), else \(j\)."""
    k, mean = counts.shape[0], work[MEANS]
    arm = start(counts, sums, made, m, state, mean, work[SCRATCH], answer)
    if arm >= 0:
        return arm
    if _stop.stopped(counts, mean, answer, made, m, epsilon, constants):
        arm = k
    else:
        prepare(counts, sums, constants, work)
        theta = work[DRAW]
        posterior_draw(mean, constants, state, work, theta)
        leaders = np.empty(k, np.int64)
        top_m(theta, m, leaders)  # ties: the first in the copy's order
        i, j, share = challenger_pair(counts, mean, leaders, constants)
        beta = share if constants["proportions"] == IDS else constants["beta"]
        arm = i if uniform(constants, state, k) < beta else j
    state["last_made"], state["last_arm"] = np.float64(made), np.float64(arm)
    return arm


@called
def one_copy(n: int, batch: tuple[Any, ...]) -> None:
    """One ``act`` of TS-KKT for copy n (``_kernels.copy_step``)."""
    copy_step(ts_kkt, n, batch)


@kernel
def step(batch: tuple[Any, ...]) -> np.ndarray:
    """One ``act`` of TS-KKT over a batch (``_kernels.each_copy``)."""
    return each_copy(ts_kkt, batch)


@parallel_kernel
def parallel_step(batch: tuple[Any, ...]) -> np.ndarray:
    """``step`` with the copies on all cores."""
    return over_copies(one_copy, batch)


@kernel
def rollout(episodes: tuple[Any, ...]) -> None:
    """Whole episodes of TS-KKT (``_kernels.play``)."""
    play(ts_kkt, episodes)


class TSKKT(BestArmAgent):
    r"""TS-KKT with IDS: a Top Two rule for top-m (and best-arm) identification, the leader set drawn from the
    posterior, the challenger the pair of least transportation cost, the one to pull chosen by the information each
    brings.

    Paper: W. You, C. Qin, Z. Wang, S. Yang, Information-Directed Selection for Top-Two Algorithms, COLT 2023
    (arXiv:2205.12086), as the authors' code implements it (github.com/zihaophys/topk_colt23, ``algorithm.jl``:
    "TS-KKT with IDS" is the pair rule of ``TSKKT_0_const`` with the IDS coin of ``TSKKT_point5_ids``). Not one of
    the five papers: the Top Two family's rule for top-m, built on the optimality (KKT) conditions of the lower
    bound \(T^*(\mu)^{-1} = \max_\psi \min_{i \in S, j \notin S} C_{ij}(\psi)\),
    \(C_{ij}(\psi) = \psi_i d(\mu_i, m_{ij}) + \psi_j d(\mu_j, m_{ij})\),
    \(m_{ij} = (\psi_i \mu_i + \psi_j \mu_j) / (\psi_i + \psi_j)\)
    (``bandit_gym.lower_bounds.top_m_allocation``).

    After \(t\) pulls (each arm once first), with \(\psi = N / t\) the allocation so far, \(\mu\) the empirical
    means and \(\Pi_t\) the posterior (Bernoulli arms: \(\mathrm{Beta}(1 + S_a, 1 + N_a - S_a)\); Gaussian arms of
    known \(\sigma\): \(\mathcal{N}(\mu_a, \sigma^2 / N_a)\), as ``TTTS``):

    - draw \(\theta \sim \Pi_t\); the leader set \(I\) is the \(m\) arms of largest \(\theta\) (Thompson
      sampling's answer);
    - the challenger pair is \((i, j) = \operatorname*{arg\,min}_{i \in I, j \notin I} C_{ij}(\psi)\) at the
      empirical means (the KKT conditions: at the optimum every pair of least cost is balanced);
    - pull \(i\) with probability \(h_{ij} = \psi_i d(\mu_i, m_{ij}) / C_{ij}(\psi)\) (IDS: the share of the
      pair's cost that \(i\)'s pulls carry; by the envelope theorem \(\psi_i \, \partial C_{ij} / \partial \psi_i\)),
      else \(j\); on Gaussian arms this is \(h_{ij} = \psi_j / (\psi_i + \psi_j)\). With ``beta`` set, a fixed
      probability instead (the paper's "tuned" baseline, \(\beta = 1/2\)).

    Stopping: by default the GLR (Chernoff) rule over the \(m (K - m)\) pairs, GK 2016 Theorem 10's threshold on
    Bernoulli arms, Lattimore and Szepesvári's on Gaussian ones; any of the package's stopping components
    (``stopping``, ``threshold``; the authors' experiments stop when
    \(t \min C_{ij}(\psi) \ge \ln((\ln t + 1) / \delta)\), a heuristic threshold). The answer is the \(m\) largest
    empirical means. The paper's stated results: top-two Thompson sampling with IDS is asymptotically optimal for
    Gaussian best-arm identification, and for \(m > 1\) no top-two rule with a fixed \(\beta\) is optimal, even
    with the best \(\beta\); IDS is its answer, shown by experiment.

    Parameters: ``delta`` in \((0, 1)\); ``beta`` None (IDS, the default) or in \((0, 1)\); ``distribution``,
    ``sigma``; ``stopping``, ``threshold``. Any \(m\) (the observation's).

    Readings where the paper is silent (the authors' code decides most):

    - initialisation: each arm once, in the copy's arm order, with no stopping test (as the code);
    - a pair of equal empirical means (\(C_{ij} = 0\), \(h\) undefined): \(h = 1/2\);
    - the authors' variants with an optimism bonus in \(C_{ij}\) (``TSKKT_point5_ids``) are not offered;
    - ties in the draw and in the least cost: the first in the copy's arm order (random per copy and episode; the
      smallest index with ``tie_break="index"``); the draws and the coin come from per-copy streams as ``TTTS``'s.

    Examples:
        Top-2 of five Bernoulli arms at \(\delta = 0.1\):

        >>> import gymnasium as gym
        >>> from bandit_gym.agents import TSKKT
        >>> from bandit_gym.rollout import play_episode
        >>> env = gym.make("BestArmIdentification-v0", means=[0.6, 0.5, 0.4, 0.3, 0.2], m=2,
        ...                setting="fixed_confidence", budget=10**6)
        >>> play_episode(env, TSKKT(delta=0.1), seed=0)["answer"].tolist()
        [1, 1, 0, 0, 0]
    """

    families: ClassVar[tuple[str, ...]] = ("best_arm", "top_k")  # top-m: the \(m\) (= K) largest means
    constant_fields: ClassVar[tuple[str, ...]] = (*_stopping.FIELDS, "proportions", "beta", "key")
    choice_fields: ClassVar[tuple[str, ...]] = ("proportions",)
    #: the pulls made at the last act and its arm (``opening``); the random events of the episode
    state_fields: ClassVar[tuple[str, ...]] = (*STATE_FIELDS, "draws")
    anytime = True  # never reads the horizon: the env's budget is only a cap

    def __init__(self, delta: float = 0.05, beta: float | None = None, *, stopping: str = "glr",
                 threshold: str | None = None, distribution: str = "bernoulli", sigma: float = 1.0,
                 tie_break: str = "random") -> None:
        self.beta = None if beta is None else check.real("beta", beta, low=0.0, high=1.0, low_open=True,
                                                         high_open=True)
        stopper = Stopping.component(type(self).__name__, delta, stopping, threshold, distribution, sigma)
        super().__init__(stopping=stopper, tie_break=tie_break)

    def params(self) -> dict[str, Any]:
        return {"beta": self.beta, **super().params()}

    kernels = EntryPoints(step, parallel_step, rollout)

    def begin(self, obs: Obs, rows: np.ndarray) -> None:
        super().begin(obs, rows)
        self.constants["proportions"][rows] = IDS if self.beta is None else FIXED
        self.constants["beta"][rows] = math.nan if self.beta is None else self.beta
        self.constants["key"][rows] = self.rng.integers(0, KEY_BOUND, size=rows.size)
        self.state["draws"][rows] = 0.0
