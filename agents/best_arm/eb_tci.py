"""EB-TCI, the Top Two rule with the Empirical Best leader and the Transportation Cost Improved challenger
(Jourdan, Degenne, Baudry, de Heide, Kaufmann 2022)."""

from __future__ import annotations

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
def eb_tci(counts: np.ndarray, sums: np.ndarray, made: int, budget: int, m: int, epsilon: float,
           constants: Any, state: Any, arrays: Any, work: np.ndarray, answer: np.ndarray, final: bool) -> int:
    r"""Each arm once; then stop (\(K\)) if the stopping rule does, else the leader \(B\) (the empirical best) or
    the challenger \(C = \operatorname*{arg\,min}_{j \ne B} W(B, j) + \ln N_j\), \(B\) when its share of the pulls
    it led is at most \(\beta\)."""
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
        arm = tracked(leader, challenger(counts, mean, leader, constants, True), constants, arrays)
    state["last_made"], state["last_arm"] = np.float64(made), np.float64(arm)
    return arm



@called
def one_copy(n: int, batch: tuple[Any, ...]) -> None:
    """One ``act`` of EB-TCI for copy n (``_kernels.copy_step``)."""
    copy_step(eb_tci, n, batch)


@kernel
def step(batch: tuple[Any, ...]) -> np.ndarray:
    """One ``act`` of EB-TCI over a batch (``_kernels.each_copy``)."""
    return each_copy(eb_tci, batch)


@parallel_kernel
def parallel_step(batch: tuple[Any, ...]) -> np.ndarray:
    """``step`` with the copies on all cores."""
    return over_copies(one_copy, batch)


@kernel
def rollout(episodes: tuple[Any, ...]) -> None:
    """Whole episodes of EB-TCI (``_kernels.play``)."""
    play(eb_tci, episodes)


class EBTCI(BestArmAgent):
    r"""EB-TCI: a Top Two sampling rule, the empirical best arm as leader and a transportation-cost challenger.

    Paper: M. Jourdan, R. Degenne, D. Baudry, R. de Heide, E. Kaufmann, Top Two Algorithms Revisited, NeurIPS 2022
    (the EB leader and the TCI challenger, §2); the leader's share tracked as in M. Jourdan, R. Degenne,
    E. Kaufmann, An epsilon-Best-Arm Identification Algorithm for Fixed-Confidence and Beyond, NeurIPS 2023
    (EB-TC\(_\epsilon\), whose \(\epsilon = 0\) case this is, with the TCI challenger). Not one of the five
    papers: the Top Two rules are the field's reference next to Track-and-Stop (Russo 2016 introduced them).

    After \(t\) pulls, with \(\mu\) the empirical means and \(N\) the pull counts:

    - leader \(B_t = \operatorname*{arg\,max}_a \mu_a\) (EB);
    - challenger \(C_t = \operatorname*{arg\,min}_{j \ne B_t} W_t(B_t, j) + \ln N_j\) (TCI), with the
      transportation cost \(W_t(i, j) = N_i d(\mu_i, \mu_{ij}) + N_j d(\mu_j, \mu_{ij})\) if \(\mu_i > \mu_j\)
      (else 0), \(\mu_{ij} = (N_i \mu_i + N_j \mu_j) / (N_i + N_j)\), \(d\) the arms' divergence;
    - pull \(B_t\) if \(N^B_B(t) \le \beta L_B(t + 1)\), else \(C_t\), where \(L_i(t + 1)\) counts the steps at
      which arm \(i\) was the leader (this one included) and \(N^i_i(t)\) the pulls of arm \(i\) while it led:
      \(K\) tracking procedures, one per leader (Jourdan et al. 2023), so that each leader is pulled a fraction
      \(\beta\) of the steps it leads, deterministically.

    Stopping: by default the GLR (Chernoff) rule, GK 2016 Theorem 10's threshold on Bernoulli arms, Lattimore
    and Szepesvári's on Gaussian arms; any of the package's stopping components (``stopping``, ``threshold``).
    With \(\beta = 1/2\) and the GLR rule the pair is asymptotically \(\beta\)-optimal (Jourdan et al. 2022,
    Theorem 2: \(\limsup_{\delta \to 0} \mathbb{E}[\tau] / \ln(1 / \delta) \le T^*_\beta(\mu)\), at most
    \(2 T^*(\mu)\)). The answer is the empirical best arm.

    Parameters: ``delta`` in \((0, 1)\); ``beta`` in \((0, 1)\) (default 1/2, the papers'); ``distribution``,
    ``sigma``; ``stopping``, ``threshold``. Best-arm identification (\(m = 1\)) only.

    Readings where the paper is silent:

    - the randomised choice of Jourdan et al. 2022 (leader with probability \(\beta\)) is replaced by the
      tracking of Jourdan et al. 2023 above (the rule makes no random draw of its own, so its compiled and
      stepwise plays agree bit for bit); both have the same asymptotic allocation.
    - initialisation: each arm once, in the copy's arm order, with no stopping test (\(\ln N_j\) needs
      \(N_j \ge 1\)).
    - ties (leader, challenger): the first in the copy's arm order (random per copy and episode; the smallest
      index with ``tie_break="index"``, see ``BestArmAgent``).
    - the budget: on a fixed-confidence env the env's budget truncates the episode, with the empirical best arm as
      the answer.

    Examples:
        One seeded episode on GK 2016's second instance, at \(\delta = 0.01\), stopped by the heuristic
        threshold:

        >>> import gymnasium as gym
        >>> from bandit_gym.agents import EBTCI
        >>> from bandit_gym.rollout import play_episode
        >>> env = gym.make("BestArmIdentification-v0", means=[0.3, 0.21, 0.2, 0.19, 0.18], budget=100_000,
        ...                setting="fixed_confidence")
        >>> result = play_episode(env, EBTCI(delta=0.01, threshold="heuristic"), seed=0)
        >>> result["pulls"] < 100_000, result["error"]
        (True, 0.0)
    """

    constant_fields: ClassVar[tuple[str, ...]] = (*_stopping.FIELDS, "beta")
    best_arm_only = True
    state_fields: ClassVar[tuple[str, ...]] = STATE_FIELDS
    anytime = True  # never reads the horizon: the env's budget is only a cap
    #: \(L_i\) (steps at which arm \(i\) led) and \(N^i_i\) (pulls of arm \(i\) while it led)
    array_fields: ClassVar[tuple[str, ...]] = ("led", "pulled_leading")

    def __init__(self, delta: float = 0.05, beta: float = 0.5, *, stopping: str = "glr", threshold: str | None = None,
                 distribution: str = "bernoulli", sigma: float = 1.0, tie_break: str = "random") -> None:
        self.beta = check.real("beta", beta, low=0.0, high=1.0, low_open=True, high_open=True)
        stopper = Stopping.component(type(self).__name__, delta, stopping, threshold, distribution, sigma)
        super().__init__(stopping=stopper, tie_break=tie_break)

    def params(self) -> dict[str, Any]:
        return {"beta": self.beta, **super().params()}

    kernels = EntryPoints(step, parallel_step, rollout)

    def begin(self, obs: Obs, rows: np.ndarray) -> None:
        super().begin(obs, rows)
        self.constants["beta"][rows] = self.beta
        self.arrays["led"][rows] = 0.0
        self.arrays["pulled_leading"][rows] = 0.0
