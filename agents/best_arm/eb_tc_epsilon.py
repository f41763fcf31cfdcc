r"""EB-TC\(_\epsilon\), the Top Two rule with the Empirical Best leader and the \(\epsilon\)-shifted Transportation
Cost challenger, for \(\epsilon\)-best-arm identification (Jourdan, Degenne and Kaufmann 2023)."""

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
from bandit_gym.jit import called, kernel, parallel_kernel

#: the work rows: the empirical means, scratch
MEANS, SCRATCH = range(2)
#: the leader's proportions \(\beta_n(i, j)\): a fixed \(\beta\), or information-directed selection
PROPORTIONS = ("ids", "fixed")
#: ``constants["proportions"]``: the code of each choice (its index in ``PROPORTIONS``)
IDS, FIXED = range(len(PROPORTIONS))


@called
def slack_challenger(counts: np.ndarray, mean: np.ndarray, leader: int, constants: Any) -> int:
    r"""The TC\(_\epsilon\) challenger \(\operatorname*{arg\,min}_{j \ne \text{leader}} W(\text{leader}, j)\) at the
    slack ``constants["slack"]`` (the shifted transportation cost ``_stopping.shifted_cost``, the GLR rule's with
    \(\epsilon\)); the first in the copy's arm order on ties."""
    chosen, least = -1, math.inf
    for j in range(counts.shape[0]):
        if j != leader:
            cost = _stopping.shifted_cost(counts, mean, leader, j, constants["slack"], constants["family"],
                                          constants["sigma"])
            if chosen < 0 or cost < least:
                chosen, least = j, cost
    return chosen


@called
def pair_tracked(counts: np.ndarray, leader: int, other: int, constants: Any, arrays: Any) -> int:
    r"""The challenger ``other`` if its pulls while the pair (``leader``, ``other``) was chosen are at most
    \((1 - \bar\beta) T\) (\(T\) the pair's choices, this one counted; \(\bar\beta\) the mean of its proportions
    \(\beta_n\), this one's included, so \((1 - \bar\beta) T = T - \sum \beta_n\)), else the leader: one tracking
    procedure per pair (``arrays["selected"]``, ``arrays["pulled"]``, ``arrays["shares"]``, entry
    ``leader K + other``)."""
    pair = leader * counts.shape[0] + other
    selected, pulled, shares = arrays["selected"], arrays["pulled"], arrays["shares"]
    selected[pair] += 1.0
    if constants["proportions"] == IDS:  # \(\beta_n(B, C) = N_C / (N_B + N_C)\)
        shares[pair] += np.float64(counts[other]) / (np.float64(counts[leader]) + np.float64(counts[other]))
    else:
        shares[pair] += constants["beta"]
    if pulled[pair] <= selected[pair] - shares[pair]:
        pulled[pair] += 1.0
        return other
    return leader


@called
def eb_tc_epsilon(counts: np.ndarray, sums: np.ndarray, made: int, budget: int, m: int, epsilon: float,
                  constants: Any, state: Any, arrays: Any, work: np.ndarray, answer: np.ndarray, final: bool) -> int:
    r"""Each arm once; then stop (\(K\)) if the stopping rule does at the env's \(\epsilon\), else the leader
    \(B\) (the empirical best) or the challenger \(C = \operatorname*{arg\,min}_{j \ne B} W(B, j)\) at the slack,
    by the pair's tracking."""
    k, mean = counts.shape[0], work[MEANS]
    arm = start(counts, sums, made, m, state, mean, work[SCRATCH], answer)
    if arm >= 0:
        return arm
    if _stop.stopped(counts, mean, answer, made, m, epsilon, constants):
        arm = k
    else:
        leader = np.int64(0)  # not a literal 0: bandit_gym.jit, "Literals"
        for a in range(k):
            if answer[a]:
                leader = a
        arm = pair_tracked(counts, leader, slack_challenger(counts, mean, leader, constants), constants, arrays)
    state["last_made"], state["last_arm"] = np.float64(made), np.float64(arm)
    return arm


@called
def one_copy(n: int, batch: tuple[Any, ...]) -> None:
    r"""One ``act`` of EB-TC\(_\epsilon\) for copy n (``_kernels.copy_step``)."""
    copy_step(eb_tc_epsilon, n, batch)


@kernel
def step(batch: tuple[Any, ...]) -> np.ndarray:
    r"""One ``act`` of EB-TC\(_\epsilon\) over a batch (``_kernels.each_copy``)."""
    return each_copy(eb_tc_epsilon, batch)


@parallel_kernel
def parallel_step(batch: tuple[Any, ...]) -> np.ndarray:
    """``step`` with the copies on all cores."""
    return over_copies(one_copy, batch)


@kernel
def rollout(episodes: tuple[Any, ...]) -> None:
    r"""Whole episodes of EB-TC\(_\epsilon\) (``_kernels.play``)."""
    play(eb_tc_epsilon, episodes)


class EBTCEpsilon(BestArmAgent):
    r"""EB-TC\(_\epsilon\): a Top Two rule for \(\epsilon\)-best-arm identification, the empirical best arm as
    leader and the challenger of least transportation cost shifted by a slack \(\epsilon_0\).

    Paper: M. Jourdan, R. Degenne, E. Kaufmann, An \(\epsilon\)-Best-Arm Identification Algorithm for
    Fixed-Confidence and Beyond, NeurIPS 2023 (arXiv:2305.16041; EB-TC\(_{\epsilon_0}\)). Not one of the five
    papers: EB-TCI's (``EBTCI``) sibling for \(\epsilon > 0\), and the first Top Two rule analysed for
    \(\epsilon\)-good answers.

    What was read: the authors' NeurIPS 2023 poster and talk slides (``posterttebai.pdf`` and
    ``ttebaislides.pdf`` on the first author's site, marcjourdan.github.io) and the abstract; they state the
    sampling rule, the stopping rule, \(T_\epsilon\) and the theorems below. The paper's body (its numbered
    equations, proofs and the settings of each experiment) was not read: "eq. (1)" is the poster's numbering, and
    no other equation number is given here.

    The problem: return an arm \(i\) with \(\mu_i \ge \max_a \mu_a - \epsilon\), \(\epsilon\) the env's (the
    observation's). At time \(n\), with \(N_{n,i}\), \(\mu_{n,i}\) the pull count and empirical mean of arm \(i\)
    before time \(n\):

    - leader \(B_n = \operatorname*{arg\,max}_i \mu_{n,i}\) (EB), which is also the answer;
    - challenger
      \(C_n \in \operatorname*{arg\,min}_{i \ne B_n} (\mu_{n,B_n} - \mu_{n,i} + \epsilon_0)
      / \sqrt{1 / N_{n,B_n} + 1 / N_{n,i}}\)
      (TC\(_{\epsilon_0}\)), computed as \(\operatorname*{arg\,min}_j W_n(B_n, j)\) with the shifted
      transportation cost
      \(W_n(i, j) = \inf_{\lambda_j \ge \lambda_i + \epsilon_0} N_{n,i} d(\mu_{n,i}, \lambda_i) +
      N_{n,j} d(\mu_{n,j}, \lambda_j)\):
      on Gaussian arms \(W = (\mu_i - \mu_j + \epsilon_0)^2 / (2 \sigma^2 (1 / N_i + 1 / N_j))\), the square of
      the poster's ratio over \(2 \sigma^2\) (the ratio is positive, as \(B_n\) is the empirical best and the
      slack is positive), so the same \(\arg\min\);
    - proportions \(\beta_n(i, j) = \beta\) (fixed) or \(N_{n,j} / (N_{n,i} + N_{n,j})\) (IDS,
      information-directed selection), and \(\bar\beta_n(i, j)\) their mean over the times the pair \((i, j)\) was
      chosen;
    - tracking: \(I_n = C_n\) if
      \(N^{B_n}_{n,C_n} \le (1 - \bar\beta_{n+1}(B_n, C_n)) T_{n+1}(B_n, C_n)\), else \(I_n = B_n\), with
      \(T_n(i, j)\) the times the pair \((i, j)\) was chosen before time \(n\) and \(N^i_{n,j}\) the pulls of arm
      \(j\) at those times: \(K (K - 1)\) tracking procedures, one per leader/challenger pair, as the poster and
      slides state it (not EB-TCI's \(K\) procedures, one per leader: with IDS \(\beta\) depends on the pair).

    Stopping: by default the GLR rule (``stopping="glr"``), which the paper pairs with the rule (its
    GLR\(_\epsilon\), eq. (1): the empirical best arm answered, and
    \(\min_{i \ne \hat\imath} (\mu_{\hat\imath} - \mu_i + \epsilon) / \sqrt{1 / N_{\hat\imath} + 1 / N_i}
    \ge \sqrt{2 c(n - 1, \delta)}\),
    with the Gaussian threshold
    \(c(n, \delta) \approx \ln(1/\delta) + 2 \ln\ln(1/\delta) + 4 \ln(4 + \ln(n / 2))\), which the poster gives
    to first order only and the package does not have). The GLR component must read the env's \(\epsilon\), with
    the shifted statistic
    \(\min_{j \ne \hat\imath} \inf_{\lambda_j \ge \lambda_{\hat\imath} + \epsilon}
    N_{\hat\imath} d(\mu_{\hat\imath}, \lambda_{\hat\imath}) + N_j d(\mu_j, \lambda_j)\),
    to stop at an \(\epsilon\)-good answer; a component that refuses \(\epsilon > 0\) leaves ``stopping="lucb"``
    or ``"kllucb"`` (which read \(\epsilon\)) for such an env. Any of the package's stopping components and
    thresholds (``stopping``, ``threshold``). The poster's theorems, with GLR\(_\epsilon\) (Gaussian arms, a
    unique best arm):
    \(\limsup_{\delta \to 0} \mathbb{E}[\tau] / \ln(1/\delta) \le T_{\epsilon_0}(\mu) D_{\epsilon,\epsilon_0}(\mu)\)
    with IDS (Theorem 1; \(T_{\epsilon_0,\beta}(\mu) D\) with a fixed \(\beta\)),
    \(D = \big(1 + \max_{i \ne i^*} (\epsilon_0 - \epsilon) / (\mu^* - \mu_i + \epsilon)\big)^2\), so at
    \(\epsilon_0 = \epsilon\) the rule is asymptotically optimal with IDS and \(\beta\)-optimal with a fixed
    \(\beta\) (Corollary 1); with a fixed \(\beta = 1/2\), a bound on \(\mathbb{E}[\tau]\) at every \(\delta\)
    (Theorem 2, stopping at \(\epsilon = \epsilon_0\)) and anytime bounds on the probability of
    \(\epsilon\)-error and on the simple regret (Theorem 3). \(T_\epsilon\) and \(T_{\epsilon,\beta}\) are
    ``bandit_gym.lower_bounds.epsilon_best_arm_allocation``.

    Parameters: ``delta`` in \((0, 1)\); ``epsilon_0`` > 0, the sampling rule's slack (default 0.1: the slack of
    the slides' simple-regret experiment, and the \(\epsilon\) of their stopping-time experiment's
    GLR\(_\epsilon\) stopping; None: the env's \(\epsilon\), Corollary 1's choice, which must then be positive);
    ``proportions``: ``"ids"`` (default: Corollary 1's asymptotic optimality) or ``"fixed"`` with ``beta`` in
    \((0, 1)\) (default 1/2, the value of Theorems 2 and 3); ``distribution``, ``sigma``; ``stopping``,
    ``threshold``. Best-arm identification (\(m = 1\)) only, as the paper.

    Readings where the paper is silent (or where it could not be checked):

    - Bernoulli arms: the poster's analysis is for (1-)sub-Gaussian arms, whose rule reads the Gaussian ratio
      above. On Bernoulli arms (``distribution="bernoulli"``, the default) the challenger minimises the
      Bernoulli shifted transportation cost \(W\) (the constraint binds, \(\lambda_j = \lambda_i + \epsilon_0\);
      convex in \(\lambda_i\); 60 bisections), the exponential-family form of the same cost, as the package's
      other Top Two rules use the arms' divergence; \(\epsilon_0 < 1\) there. The poster's own rule on Bernoulli
      arms (as 1/2-sub-Gaussian arms) is ``distribution="gaussian", sigma=0.5``, whose stopping then reads them
      as Gaussian.
    - the first decision of a pair: \(N^B_C = 0 \le (1 - \beta) \cdot 1\), so the challenger is pulled first
      (then, at \(\beta = 1/2\), C C B C B ...).
    - initialisation: each arm once, in the copy's arm order, with no stopping test (the ratio needs
      \(N \ge 1\)).
    - ties (leader, challenger): the first in the copy's arm order (random per copy and episode; the smallest
      index with ``tie_break="index"``, see ``BestArmAgent``).
    - the budget: on a fixed-confidence env the env's budget truncates the episode, with the empirical best arm as
      the answer. Memory: three \(K \times K\) arrays per copy (the pairs' counts).

    Examples:
        One seeded episode with two 0.1-good arms (0.7 and 0.65), stopped by the LUCB rule at the env's
        \(\epsilon\):

        >>> import gymnasium as gym
        >>> from bandit_gym.agents import EBTCEpsilon
        >>> from bandit_gym.rollout import play_episode
        >>> env = gym.make("BestArmIdentification-v0", means=[0.7, 0.65, 0.4, 0.3], epsilon=0.1, budget=100_000,
        ...                setting="fixed_confidence")
        >>> result = play_episode(env, EBTCEpsilon(delta=0.01, epsilon_0=0.1, stopping="lucb"), seed=0)
        >>> result["pulls"] < 100_000, result["error"]
        (True, 0.0)
    """

    constant_fields: ClassVar[tuple[str, ...]] = (*_stopping.FIELDS, "beta", "proportions", "slack")
    choice_fields: ClassVar[tuple[str, ...]] = ("proportions",)
    best_arm_only = True
    state_fields: ClassVar[tuple[str, ...]] = STATE_FIELDS
    anytime = True  # never reads the horizon: the env's budget is only a cap
    #: per leader/challenger pair (entry \(i K + j\)): \(T(i, j)\), \(N^i_j\) and the sum of the proportions
    #: \(\beta_n(i, j)\)
    array_fields: ClassVar[tuple[str, ...]] = ("selected", "pulled", "shares")

    def __init__(self, delta: float = 0.05, epsilon_0: float | None = 0.1, *, proportions: str = "ids",
                 beta: float = 0.5, stopping: str = "glr", threshold: str | None = None,
                 distribution: str = "bernoulli", sigma: float = 1.0, tie_break: str = "random") -> None:
        stopper = Stopping.component(type(self).__name__, delta, stopping, threshold, distribution, sigma)
        self.proportions = check.choice("proportions", proportions, PROPORTIONS)
        self.beta = check.real("beta", beta, low=0.0, high=1.0, low_open=True, high_open=True)
        bernoulli = stopper.distribution == "bernoulli"
        self.epsilon_0 = None if epsilon_0 is None else check.real(
            "epsilon_0", epsilon_0, low=0.0, low_open=True, high=1.0 if bernoulli else None, high_open=bernoulli)
        super().__init__(stopping=stopper, tie_break=tie_break)

    def params(self) -> dict[str, Any]:
        return {"epsilon_0": self.epsilon_0, "proportions": self.proportions, "beta": self.beta, **super().params()}

    kernels = EntryPoints(step, parallel_step, rollout)

    def array_length(self, k: int) -> int:
        r"""\(K \times K\) entries per field: one per leader/challenger pair."""
        return k * k

    def begin(self, obs: Obs, rows: np.ndarray) -> None:
        super().begin(obs, rows)
        slack = (np.asarray(obs["epsilon"])[rows, 0].astype(np.float64) if self.epsilon_0 is None
                 else np.full(rows.shape[0], self.epsilon_0))
        top = 1.0 if self.distribution == "bernoulli" else math.inf
        bad = slack[(slack <= 0.0) | (slack >= top)]
        if bad.shape[0]:
            raise ValueError(f"EBTCEpsilon(epsilon_0=None) samples with the env's epsilon as its slack, which must lie "
                             f"in (0, {top}); the env has epsilon = {float(bad[0])!s}: give epsilon_0 in (0, {top})")
        self.constants["beta"][rows], self.constants["slack"][rows] = self.beta, slack
        self.constants["proportions"][rows] = PROPORTIONS.index(self.proportions)
        for name in self.array_fields:
            self.arrays[name][rows] = 0.0
