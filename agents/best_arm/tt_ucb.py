"""TTUCB, the Top Two rule with the UCB leader and the Transportation Cost challenger (Jourdan and Degenne 2023)."""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from bandit_gym import _validation as check
from bandit_gym._dispatch import EntryPoints
from bandit_gym.agents.base import Obs
from bandit_gym.agents.best_arm import _stop, _stopping
from bandit_gym.agents.best_arm._base import BestArmAgent
from bandit_gym.agents.best_arm._fixed_confidence import STATE_FIELDS, challenger, start, tracked
from bandit_gym.agents.best_arm._kernels import copy_step, each_copy, over_copies, play
from bandit_gym.agents.best_arm._stopping import Stopping
from bandit_gym.jit import called, kernel, parallel_kernel

#: the work rows: the empirical means, scratch
MEANS, SCRATCH = range(2)


@called
def tt_ucb(counts: np.ndarray, sums: np.ndarray, made: int, budget: int, m: int, epsilon: float,
           constants: Any, state: Any, arrays: Any, work: np.ndarray, answer: np.ndarray, final: bool) -> int:
    r"""Each arm once; then stop (\(K\)) if the stopping rule does, else the leader \(B\) (the largest UCB
    index \(\mu_a + \sqrt{\text{rate} \ln n / N_a}\), \(n\) = ``made + 1``) or the challenger
    \(C = \operatorname*{arg\,min}_{j \ne B} W(B, j)\), \(B\) when its share of the pulls it led is at most
    \(\beta\)."""
    k, mean = counts.shape[0], work[MEANS]
    arm = start(counts, sums, made, m, state, mean, work[SCRATCH], answer)
    if arm >= 0:
        return arm
    if _stop.stopped(counts, mean, answer, made, m, epsilon, constants):
        arm = k
    else:
        exploration = constants["rate"] * math.log(np.float64(made) + 1.0)
        leader, largest = np.int64(0), -math.inf  # not a literal 0: bandit_gym.jit, "Literals"
        for a in range(k):
            index = mean[a] + math.sqrt(exploration / np.float64(counts[a]))
            if index > largest:
                leader, largest = a, index
        arm = tracked(leader, challenger(counts, mean, leader, constants, False), constants, arrays)
    state["last_made"], state["last_arm"] = np.float64(made), np.float64(arm)
    return arm



@called
def one_copy(n: int, batch: tuple[Any, ...]) -> None:
    """One ``act`` of TTUCB for copy n (``_kernels.copy_step``)."""
    copy_step(tt_ucb, n, batch)


@kernel
def step(batch: tuple[Any, ...]) -> np.ndarray:
    """One ``act`` of TTUCB over a batch (``_kernels.each_copy``)."""
    return each_copy(tt_ucb, batch)


@parallel_kernel
def parallel_step(batch: tuple[Any, ...]) -> np.ndarray:
    """``step`` with the copies on all cores."""
    return over_copies(one_copy, batch)


@kernel
def rollout(episodes: tuple[Any, ...]) -> None:
    """Whole episodes of TTUCB (``_kernels.play``)."""
    play(tt_ucb, episodes)


class TTUCB(BestArmAgent):
    r"""TTUCB: a Top Two sampling rule, the arm of largest UCB index as leader and a transportation-cost challenger.

    Paper: M. Jourdan, R. Degenne, Non-Asymptotic Analysis of a UCB-based Top Two Algorithm, NeurIPS 2023
    (arXiv:2210.05431; TTUCB, §2). Not one of the five papers: the first Top Two rule with a sample-complexity
    bound at every \(\delta\), not only as \(\delta \to 0\); EB-TCI's sibling (``EBTCI``).

    What was read: the authors' NeurIPS 2023 poster and talk slides (``posterttucb.pdf`` and ``slidesttucb.pdf``,
    the paper's page on the first author's site, marcjourdan.github.io), which state the sampling rule, the
    exploration function, the stopping rule and the two theorems; the formulas below are checked against them.
    The paper's body (its proofs and numbered equations) was not read: "eq. (1)" is the poster's numbering. No
    public code of the authors was found (OpenReview's supplementary zip was out of reach).

    At time \(n\), with \(N_{n,i}\) and \(\mu_{n,i}\) the pull count and empirical mean of arm \(i\) before time
    \(n\) (\(t = n - 1\) pulls made):

    - leader \(B_n = \operatorname*{arg\,max}_i \mu_{n,i} + \sqrt{g(n) / N_{n,i}}\) (UCB), with
      \(g_u(n) = 2 \alpha (1 + s) \ln n\), \(\alpha, s > 1\), the poster's choice for Gaussian arms of unit
      variance: \(g\) is taken small such that \(P(E_n) \ge 1 - K n^{-s}\), \(E_n\) the event that every arm's
      mean lies in its UCB interval at the times of a window that ends at \(n\) (\(\alpha\) sets its start); for
      arms of sub-Gaussian scale \(\sigma\) the agent uses \(\sigma^2 g_u(n)\), that is
      \(\mu_i + \sqrt{2 \sigma^2 \alpha (1 + s) \ln n / N_i}\);
    - challenger
      \(C_n \in \operatorname*{arg\,min}_{i \ne B_n} (\mu_{n,B_n} - \mu_{n,i})_+ / \sqrt{1 / N_{n,B_n} + 1 / N_{n,i}}\)
      (TC, unit variance), computed as \(\operatorname*{arg\,min}_{j \ne B_n} W_n(B_n, j)\) with EB-TCI's
      transportation cost \(W_n(i, j) = N_i d(\mu_i, \mu_{ij}) + N_j d(\mu_j, \mu_{ij})\) if \(\mu_i > \mu_j\)
      (else 0), \(\mu_{ij} = (N_i \mu_i + N_j \mu_j) / (N_i + N_j)\), \(d\) the arms' divergence: on Gaussian arms
      \(W = (\mu_i - \mu_j)_+^2 / (2 \sigma^2 (1 / N_i + 1 / N_j))\), an increasing function of the ratio above,
      so the same \(\arg\min\); unlike EB-TCI's TCI challenger, no \(+ \ln N_j\);
    - tracking: \(I_n = B_n\) if \(N^{B_n}_{n,B_n} \le \beta L_{n+1,B_n}\), else \(I_n = C_n\), where
      \(L_{n,i}\) counts the times arm \(i\) was the leader before time \(n\) and \(N^i_{n,j}\) the pulls of arm
      \(j\) while arm \(i\) led: \(K\) tracking procedures, one per leader, exactly as ``EBTCI``. The poster's
      Lemma 1, \(-1/2 \le N^i_{n,i} - \beta L_{n,i} \le 1\) for all \(n > K\), holds here in the tighter form
      \(0 \le N^i_{n,i} - \beta L_{n,i} \le 1\) (tests/agents/best_arm/test_tt_ucb.py).

    Stopping: by default the GLR (Chernoff) rule, GK 2016 Theorem 10's threshold on Bernoulli arms, Lattimore
    and Szepesvári's on Gaussian arms; any of the package's stopping components (``stopping``, ``threshold``).
    The poster's rule (its eq. (1)) is the same GLR statistic on Gaussian arms, the answer the empirical best arm
    and
    \(\tau = \inf\{n > K : \min_{i \ne \hat\imath} (\mu_{n,\hat\imath} - \mu_{n,i})
    / \sqrt{1 / N_{n,\hat\imath} + 1 / N_{n,i}} \ge \sqrt{2 c(n - 1, \delta)}\}\)
    with \(c(n, \delta) \approx \ln(1/\delta) + 2 \ln\ln(1/\delta) + 4 \ln(4 + \ln(n / 2))\) (the Gaussian
    threshold of Kaufmann and Koolen 2021; the poster gives it only to first order, so it is not one of the
    package's components; ours are also \(\delta\)-correct whatever the sampling rule, but grow as \(\ln t\)
    (``"gk2016"``) or \(4 \ln t\) (``"ls2020"``) where it grows as \(4 \ln\ln t\)).
    Combined with it, TTUCB is \(\delta\)-correct and asymptotically \(\beta\)-optimal on instances of distinct
    means (Theorem 1: \(\limsup_{\delta \to 0} \mathbb{E}[\tau_\delta] / \ln(1/\delta) \le T^*_\beta(\mu)\), at
    most \(2 T^*(\mu)\) at \(\beta = 1/2\)), and with \(\beta = 1/2\) and \(g_u\) at \(\alpha = s = 1.2\) its
    expected sample complexity is bounded at every \(\delta\) on instances with a unique best arm (Theorem 2).
    The answer is the empirical best arm (not the leader). The poster's experiments: Gaussian arms of unit
    variance, \(\delta = 0.1\), random instances with \(\mu_1 = 0.6\) and \(\mu_i \sim U([0.2, 0.5])\)
    (\(K = 10\)), and "1-sparse" instances.

    Parameters: ``delta`` in \((0, 1)\); ``beta`` in \((0, 1)\) (default 1/2, the paper's); ``alpha`` > 0 and
    ``s`` > 0 (default 1.2 each, Theorem 2's values; the theory asks \(\alpha, s > 1\)), so that by default
    \(g_u(n) = 5.28 \ln n\); ``distribution``, ``sigma``; ``stopping``, ``threshold``. Best-arm identification
    (\(m = 1\)) only, as the paper.

    Readings where the paper is silent (or where it could not be checked):

    - Bernoulli arms (the paper's analysis is for Gaussian arms): the UCB bonus with the sub-Gaussian scale
      \(\sigma = 1/2\) of variables in \([0, 1]\) (Hoeffding), \(\sqrt{\alpha (1 + s) \ln n / (2 N_a)}\), not a
      KL-UCB index; the challenger minimises the Bernoulli transportation cost \(W\) (TC with the arms'
      divergence, as the Top Two rules of Jourdan et al. 2022 for other families). On Gaussian arms,
      \(\sigma\) = the agent's ``sigma``.
    - time: \(n = t + 1\) when \(t\) pulls are made, the poster's convention (\(N_{n,i}\) counts the pulls before
      time \(n\), and its stopping rule reads \(c(n - 1, \delta)\)), so \(\ln n > 0\) from the first decision
      after the initial pulls.
    - initialisation: each arm once, in the copy's arm order, with no stopping test (the index needs
      \(N_a \ge 1\)).
    - ties (leader, challenger): the first in the copy's arm order (random per copy and episode; the smallest
      index with ``tie_break="index"``, see ``BestArmAgent``). A UCB leader need not be the empirical best: every
      arm of larger empirical mean than the leader then costs \(W = 0\), and the first of them is the challenger.
    - the budget: on a fixed-confidence env the env's budget truncates the episode, with the empirical best arm as
      the answer.

    Examples:
        One seeded episode on GK 2016's second instance, at \(\delta = 0.01\), stopped by the heuristic
        threshold:

        >>> import gymnasium as gym
        >>> from bandit_gym.agents import TTUCB
        >>> from bandit_gym.rollout import play_episode
        >>> env = gym.make("BestArmIdentification-v0", means=[0.3, 0.21, 0.2, 0.19, 0.18], budget=100_000,
        ...                setting="fixed_confidence")
        >>> result = play_episode(env, TTUCB(delta=0.01, threshold="heuristic"), seed=0)
        >>> result["pulls"] < 100_000, result["error"]
        (True, 0.0)
    """

    constant_fields: ClassVar[tuple[str, ...]] = (*_stopping.FIELDS, "beta", "rate")
    best_arm_only = True
    state_fields: ClassVar[tuple[str, ...]] = STATE_FIELDS
    anytime = True  # never reads the horizon: the env's budget is only a cap
    #: \(L_i\) (steps at which arm \(i\) led) and \(N^i_i\) (pulls of arm \(i\) while it led)
    array_fields: ClassVar[tuple[str, ...]] = ("led", "pulled_leading")

    def __init__(self, delta: float = 0.05, beta: float = 0.5, *, alpha: float = 1.2, s: float = 1.2,
                 stopping: str = "glr", threshold: str | None = None, distribution: str = "bernoulli",
                 sigma: float = 1.0, tie_break: str = "random") -> None:
        self.beta = check.real("beta", beta, low=0.0, high=1.0, low_open=True, high_open=True)
        self.alpha = check.real("alpha", alpha, low=0.0, low_open=True)
        self.s = check.real("s", s, low=0.0, low_open=True)
        stopper = Stopping.component(type(self).__name__, delta, stopping, threshold, distribution, sigma)
        self.rate = 2.0 * stopper.scale * stopper.scale * self.alpha * (1.0 + self.s)  # \(\sigma^2 g_u(n) / \ln n\)
        super().__init__(stopping=stopper, tie_break=tie_break)

    def params(self) -> dict[str, Any]:
        return {"beta": self.beta, "alpha": self.alpha, "s": self.s, **super().params()}

    kernels = EntryPoints(step, parallel_step, rollout)

    def begin(self, obs: Obs, rows: np.ndarray) -> None:
        super().begin(obs, rows)
        self.constants["beta"][rows], self.constants["rate"][rows] = self.beta, self.rate
        self.arrays["led"][rows] = 0.0
        self.arrays["pulled_leading"][rows] = 0.0
