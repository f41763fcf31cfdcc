r"""CLUCB-PAC (Chen, Lin, King, Lyu, Chen 2014) for \(\epsilon\)-top-K, a baseline of chen2017."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from bandit_gym import _validation as check
from bandit_gym._dispatch import EntryPoints
from bandit_gym.agents.base import Obs
from bandit_gym.agents.best_arm._base import BestArmAgent
from bandit_gym.agents.best_arm._kernels import copy_step, each_copy, over_copies, play
from bandit_gym.agents.ranking import answer_means, empirical_means, pulled_first, top_m_select
from bandit_gym.agents.top_k._kernels import clucb_decide, clucb_radius
from bandit_gym.jit import called, kernel, parallel_kernel

EPSILON_SUMS = ("k_epsilon", "epsilon")
r"""Readings of CLUCB-PAC's stopping level: \(K \epsilon\) or \(\epsilon\)."""

#: the scratch rows: the empirical means, w~, 1 / sqrt(T), a row for the answer (the bits of M~ are the answer's type)
MEANS, TILDE, INVERSE, SCRATCH = range(4)


@called
def clucb_pac(counts: np.ndarray, sums: np.ndarray, made: int, budget: int, m: int, epsilon: float,
              constants: Any, state: Any, arrays: np.ndarray, work: np.ndarray, answer: np.ndarray,
              final: bool) -> int:
    r"""After one pull of each arm, at \(t\) pulls (here \(K\) is the number of arms, \(n\) in chen2017, and \(m\)
    the set size): \(M\) = the empirical top \(m\) (the answer);
    \(\mathrm{rad}_e = R \sqrt{2 \log(4 K t^3 / \delta) / T_e}\); \(\tilde w = \mu - \mathrm{rad}\) inside \(M\),
    \(\mu + \mathrm{rad}\) outside; \(\tilde M\) = the top \(m\) of \(\tilde w\); stop when
    \(\tilde w(\tilde M) - \tilde w(M) \le m \epsilon\), else pull the arm of largest rad in the symmetric
    difference of \(M\) and \(\tilde M\) (ties: the smallest index).
    During the initial round the answer ranks an arm never pulled last."""
    k = counts.shape[0]
    mean, tilde, inv = work[MEANS], work[TILDE], work[INVERSE]
    other = np.empty(k, np.int64)  # the answer's type: top_m_select compiled once
    if made < k:
        answer_means(counts, sums, mean)
        top_m_select(mean, m, answer)
        return made
    empirical_means(counts, sums, mean)
    top_m_select(mean, m, answer)
    radius = clucb_radius(made, k, constants["delta"], constants["R"])
    for i in range(k):
        inv[i] = 1.0 / math.sqrt(np.float64(counts[i]))
        rad = radius * inv[i]
        tilde[i] = mean[i] - rad if answer[i] else mean[i] + rad
    top_m_select(tilde, m, other)
    arm = clucb_decide(k, m, epsilon, answer, other, tilde, radius, inv)
    if final:
        pulled_first(counts, sums, m, work[SCRATCH], answer)  # as top_m_select: the smaller index on ties
    return arm



@called
def one_copy(n: int, batch: tuple[Any, ...]) -> None:
    """One ``act`` of CLUCB-PAC for copy ``n`` (``_kernels.copy_step``)."""
    copy_step(clucb_pac, n, batch)


@kernel
def step(batch: tuple[Any, ...]) -> np.ndarray:
    """One ``act`` of CLUCB-PAC over a batch (``_kernels.each_copy``)."""
    return each_copy(clucb_pac, batch)


@parallel_kernel
def parallel_step(batch: tuple[Any, ...]) -> np.ndarray:
    """``step`` with the copies on all cores."""
    return over_copies(one_copy, batch)


@kernel
def rollout(episodes: tuple[Any, ...]) -> None:
    """Whole episodes of CLUCB-PAC (``_kernels.play``)."""
    play(clucb_pac, episodes)


class CLUCBPAC(BestArmAgent):
    r"""Combinatorial LUCB, PAC variant, with the top-K oracle.

    Paper: S. Chen, T. Lin, I. King, M. R. Lyu, W. Chen, Combinatorial Pure Exploration of Multi-Armed Bandits,
    NIPS 2014 (the PAC variant of their appendix, Section B.2 of which chen2017 §1.2 cites); a baseline of
    chen2017. What chen2017 itself says: for \(\epsilon\)-top-\(K\), CLUCB-PAC needs
    \(O\big((\log(1 / \delta) + \log H^{(0, \epsilon)})\, H^{(0, \epsilon)}\big)\) pulls (§1, §1.2); its
    experiments set \(\delta = 0.01\) (§3) and nothing else. The rule below and the constants \(R\) and
    \(\epsilon_{\text{sum}}\) rest on Chen et al. 2014.

    Pull each arm once; then at \(t\) pulls, with \(M_t\) the \(K\) arms of largest empirical mean (the answer),
    \(\mathrm{rad}_e = R \sqrt{2 \ln(4 n t^3 / \delta) / T_e}\), \(\tilde w_e = \mu_e - \mathrm{rad}_e\) for
    \(e \in M_t\) and \(\mu_e + \mathrm{rad}_e\) otherwise, and \(\tilde M_t\) the \(K\) arms of largest
    \(\tilde w\): stop when \(\tilde w(\tilde M_t) - \tilde w(M_t) \le \epsilon_{\text{sum}}\), else pull the arm
    of largest rad in the symmetric difference of \(M_t\) and \(\tilde M_t\) (ties, here and in \(M_t\) and
    \(\tilde M_t\): the first in the copy's arm order, random per copy and episode, or the smallest index with
    ``tie_break="index"``; see ``BestArmAgent``). \(t\) counts every pull, the \(n\) initial ones included
    (\(t = n\) at the first decision).

    ``epsilon_sum="k_epsilon"`` (default): \(\epsilon_{\text{sum}} = K \epsilon\) (\(\epsilon\) from the
    observation), since \(R_T \le \epsilon\) is
    \(\sum_{\text{top } K} \theta - \sum_{T} \theta \le K \epsilon\); ``"epsilon"``:
    \(\epsilon_{\text{sum}} = \epsilon\) (chen2017 does not say which it used). Parameters: ``delta`` (None: the
    observation's \(\delta\)), ``R=1/2`` (sub-Gaussian constant of rewards in \([0, 1]\); 1 is also common),
    ``epsilon_sum``. Fixed budget (chen2017 does not describe the conversion; ours): it runs until the stop fires
    or the budget is spent; the answer is \(M_t\). Anytime (it never reads the budget): the experiment engine
    scores one episode at every budget. A compiled rule (\(O(n)\) per pull, two top-K selections by partition) for
    ``act``; whole episodes run a kernel with the same numbers and fewer passes (\(M\) kept by swaps, \(\tilde M\)
    by a split key found in a window). ``epsilon_sum="epsilon"`` hands both the \(\epsilon\) of the observation
    divided by \(K\) (the rules stop at \(K\) times the \(\epsilon\) they are given).

    Examples:
        One seeded episode (top 10 of 100 arms) and the record of ``RecordEpisodeRegret``
        that ``play_episode`` returns:

        >>> import gymnasium as gym
        >>> from bandit_gym.agents import CLUCBPAC
        >>> from bandit_gym.rollout import play_episode
        >>> env = gym.make("TopKIdentification-v0", budget=5000)
        >>> result = play_episode(env, CLUCBPAC(), seed=0)
        >>> result["pulls"], round(result["regret"], 3)
        (5000, 0.0)
    """

    families: ClassVar[tuple[str, ...]] = ("top_k",)
    #: the confidence delta, the sub-Gaussian constant R
    constant_fields = ("delta", "R")
    anytime = True  # never reads the horizon T

    def __init__(self, delta: float | None = None, R: float = 0.5, epsilon_sum: str = "k_epsilon", *,
                 tie_break: str = "random") -> None:
        self.delta = None if delta is None else check.real("delta", delta, low=0.0, high=1.0, low_open=True,
                                                           high_open=True)
        self.R = check.real("R", R, low=0.0, low_open=True)
        self.epsilon_sum = check.choice("epsilon_sum", epsilon_sum, EPSILON_SUMS)
        super().__init__(tie_break=tie_break)

    def params(self) -> dict[str, object]:
        return {"delta": self.delta, "R": self.R, "epsilon_sum": self.epsilon_sum, **super().params()}

    def rule_step(self, obs: Obs, action: np.ndarray, follows: bool = True) -> np.ndarray:
        r"""The rule's step, handed \(\epsilon / m\) where the sum of the gaps is to stay below \(\epsilon\)."""
        if self.epsilon_sum == "k_epsilon":
            return super().rule_step(obs, action, follows)
        return super().rule_step({**obs, "epsilon": obs["epsilon"].astype(np.float64) / obs["m"]}, action, follows)

    def compiled_rollout(self, obs: Obs) -> tuple[Callable[..., Any], tuple[Any, ...]] | None:
        """Whole episodes by ``bandit_gym.agents.top_k._kernels.clucb_rollout``: the rule's numbers, fewer
        passes per pull."""
        from bandit_gym.agents.top_k._kernels import clucb_rollout

        batch = self._start_all(obs)
        self.check_m(int(batch["m"][0, 0]))
        if self.epsilon_sum == "k_epsilon":
            return self.in_order(clucb_rollout), (self.constants,)
        return self.in_order(_per_k(clucb_rollout)), (self.constants,)

    kernels = EntryPoints(step, parallel_step, rollout)

    def begin(self, obs: Obs, rows: np.ndarray) -> None:
        self.constants["delta"][rows] = obs["delta"][rows, 0] if self.delta is None else self.delta
        self.constants["R"][rows] = self.R


def _per_k(kernel: Callable[..., Any]) -> Callable[..., Any]:
    r"""``kernel`` (whole episodes, ``kernel(means, seeds, m, epsilon, ...)``) stopping at \(\epsilon\) instead of
    \(m \epsilon\): it is handed \(\epsilon / m\), as ``CLUCBPAC.rule_step`` hands the rule."""

    def play(means: np.ndarray, seeds: np.ndarray, m: int, epsilon: float, *rest: Any) -> None:
        kernel(means, seeds, m, np.float64(epsilon) / m, *rest)

    return play
