"""Successive Rejects (Audibert, Bubeck, Munos 2010), the parameter-free fixed-budget baseline."""

from __future__ import annotations

from typing import Any

import numpy as np

from bandit_gym._dispatch import EntryPoints
from bandit_gym.agents._batch import most_owed_first
from bandit_gym.agents.base import Obs
from bandit_gym.agents.best_arm._base import BestArmAgent
from bandit_gym.agents.best_arm._kernels import copy_step, each_copy, over_copies, play
from bandit_gym.agents.ranking import accept_or_reject, answer_means, empirical_means
from bandit_gym.families import Family
from bandit_gym.jit import called, inline, kernel, parallel_kernel

#: the scratch rows: the empirical means (0 for an arm never pulled) and the answer's ranking values
MEANS, RANKS = range(2)


@inline
def end_phases(counts: np.ndarray, m: int, state: Any, arrays: np.ndarray, mean: np.ndarray,
               work: np.ndarray, accepts: bool) -> None:
    """End every phase whose surviving arms all reached its length (phases of length 0 end together):
    SR rejects the surviving arm of smallest mean (ties: the smallest index), SAR removes by
    ``accept_or_reject``."""
    k = counts.shape[0]
    alive, schedule, accepted = arrays["alive"], arrays["schedule"], arrays["accepted"]
    for _ in range(k - 1):
        phase = np.int64(state["phase"])
        if phase >= k:
            return
        target = schedule[phase - 1]
        for i in range(k):
            if alive[i] == 1.0 and counts[i] < target:
                return
        if accepts:
            accept_or_reject(m, alive, accepted, mean, work)
        else:
            worst = -1
            for i in range(k):
                if alive[i] == 1.0 and (worst < 0 or mean[i] < mean[worst]):
                    worst = i
            alive[worst] = 0.0
        state["phase"] = phase + 1


@inline
def successive(counts: np.ndarray, sums: np.ndarray, made: int, budget: int, m: int, epsilon: float,
               constants: Any, state: Any, arrays: np.ndarray, work: np.ndarray, answer: np.ndarray,
               final: bool, accepts: bool) -> int:
    r"""The step of SR (``accepts`` False) or of SAR (True).

    The phases end on the empirical means (0 for an arm never pulled: with \(n \le K\) every phase has length 0
    and they all end before the first pull). The pull: the surviving arm with the fewest pulls. The answer: the
    accepted arms that were pulled, then the best of the other candidates (the active arms, and accepted arms
    never pulled) up to \(m\) (SR: one arm), an arm never pulled ranking last (among such arms the smaller index
    first)."""
    k = counts.shape[0]
    mean = work[MEANS]
    empirical_means(counts, sums, mean)
    end_phases(counts, m, state, arrays, mean, work, accepts)
    alive, accepted = arrays["alive"], arrays["accepted"]
    arm = -1
    for i in range(k):  # the surviving arm with the fewest pulls
        if alive[i] == 1.0 and (arm < 0 or counts[i] < counts[arm]):
            arm = i
    if final:
        rank = work[RANKS]
        answer_means(counts, sums, rank)
        taken = 0
        for i in range(k):
            answer[i] = accepts and accepted[i] == 1.0 and counts[i] > 0
            taken += answer[i]
        for _ in range(m - taken if accepts else 1):  # fill with the best candidates not yet in
            best = -1
            for i in range(k):
                if ((alive[i] == 1.0 or (accepts and accepted[i] == 1.0)) and answer[i] == 0
                        and (best < 0 or rank[i] > rank[best])):
                    best = i
            if best >= 0:
                answer[best] = 1
    return arm



@called
def successive_rejects(counts: np.ndarray, sums: np.ndarray, made: int, budget: int, m: int, epsilon: float,
                       constants: Any, state: Any, arrays: np.ndarray, work: np.ndarray, answer: np.ndarray,
                       final: bool) -> int:
    """SR's step (the rule of ``BestArmAgent``): ``successive`` rejecting only."""
    return successive(counts, sums, made, budget, m, epsilon, constants, state, arrays, work, answer, final, False)



@called
def one_copy(n: int, batch: tuple[Any, ...]) -> None:
    """One ``act`` of SR for copy n (``_kernels.copy_step``)."""
    copy_step(successive_rejects, n, batch)


@kernel
def step(batch: tuple[Any, ...]) -> np.ndarray:
    """One ``act`` of SR over a batch (``_kernels.each_copy``)."""
    return each_copy(successive_rejects, batch)


@parallel_kernel
def parallel_step(batch: tuple[Any, ...]) -> np.ndarray:
    """``step`` with the copies on all cores."""
    return over_copies(one_copy, batch)


@kernel
def rollout(episodes: tuple[Any, ...]) -> None:
    """Whole episodes of SR (``_kernels.play``)."""
    play(successive_rejects, episodes)


def phase_lengths(budget: int, k: int) -> np.ndarray:
    r"""\(n_1, \dots, n_{K-1}\) with \(n_k = \big\lceil (n - K) / (\overline{\log}(K) (K + 1 - k)) \big\rceil\),
    \(\overline{\log}(K) = 1/2 + \sum_{i=2}^K 1/i\): the number of pulls every arm surviving phase \(k\) has at its
    end (\(n_0 = 0\))."""
    logbar = 0.5 + np.sum(1.0 / np.arange(2, k + 1))
    phases = np.arange(1, k)
    return np.ceil(max(budget - k, 0) / (logbar * (k + 1 - phases)) - 1e-9).astype(np.int64)


class SuccessiveRejects(BestArmAgent):
    r"""Successive Rejects: \(K - 1\) phases; in phase \(k\) every surviving arm is pulled up to \(n_k\) pulls,
    then the arm of smallest empirical mean is rejected.

    Paper: Audibert, Bubeck, Munos, COLT 2010, cited by gabillon2012 (§1: "divides the budget n in phases and
    discards one arm per phase"); the phase lengths below rest on Audibert et al.'s paper.

    \(n_k = \big\lceil (n - K) / (\overline{\log}(K) (K + 1 - k)) \big\rceil\),
    \(\overline{\log}(K) = 1/2 + \sum_{i=2}^K 1/i\), \(n\) read from the observation at the episode start
    (horizon-aware); at most \(n\) pulls in all. Output: the last surviving arm. Defined for \(m = 1\) (SAR handles
    \(m > 1\)). Deviations: none.

    Readings where the paper is silent:

    - ties, everywhere below: the first arm in the copy's arm order, an order drawn per copy and episode from the
      agent's seeded generator (``tie_break="random"``, the default), so that a tie never depends on the arms'
      positions; ``tie_break="index"`` takes the smallest index (the public banditpylib code's ``np.argmin``).
      With the smallest-index rule and the best arm first (as the best-arm presets list their arms) SR
      rejects the best arm whenever it ties for last.
    - order of pulls within a phase: the surviving arm with the fewest pulls, the first in the order first.
    - ties for the smallest mean: the first tied arm in the order is rejected.
    - leftover budget: the phases use at most \(n\) pulls; the pulls left after the last phase go to the survivor
      (the public banditpylib code gives them to the last two arms; the answer does not change).
    - answer before the end: the surviving arm of largest empirical mean, an arm never pulled ranking last
      (ties: the first in the order).
    - \(n \le K\): every \(n_k\) is 0, so all \(K - 1\) rejections happen before any pull, on empirical means of
      0 (the first arms of the order leave first), and the last arm of the order takes the whole budget.
      \(n_k\) is rounded up with a tolerance of \(10^{-9}\), so that a quotient that is an integer up to
      rounding is not rounded up once more.

    Examples:
        One seeded episode (Audibert et al.'s problem 1) and the record of
        ``RecordEpisodeRegret`` that ``play_episode`` returns:

        >>> import gymnasium as gym
        >>> from bandit_gym.agents import SuccessiveRejects
        >>> from bandit_gym.rollout import play_episode
        >>> env = gym.make("BestArmIdentification-Audibert2010Problem1-v0", budget=400)
        >>> result = play_episode(env, SuccessiveRejects(), seed=0)
        >>> result["pulls"], round(result["regret"], 3)
        (400, 0.1)
    """

    anytime = False
    batched = True
    #: the phase (\(1, \dots, K-1\); \(K\) once one arm is left)
    state_fields = ("phase",)
    #: the bits of the arms still in play; the phase lengths \(n_1, \dots, n_{K-1}\), then \(n\); the accepted bits
    #: (SAR)
    array_fields = ("alive", "schedule", "accepted")

    def __init__(self, *, tie_break: str = "random") -> None:
        super().__init__(tie_break=tie_break)

    def params(self) -> dict[str, object]:
        return {**super().params()}

    @property
    def phase(self) -> np.ndarray:
        r"""Per copy, the current phase (\(1, \dots, K-1\); \(K\) once one arm is left)."""
        return self.state["phase"].astype(np.int64)

    @property
    def alive(self) -> np.ndarray:
        """Per copy, the bits of the arms still in play (indexed by arm)."""
        return self.by_arm(self.arrays["alive"] == 1.0)

    kernels = EntryPoints(step, parallel_step, rollout)

    def begin(self, obs: Obs, rows: np.ndarray) -> None:
        k = self.num_arms
        self.state[rows], self.arrays[rows] = 0, 0
        self.state["phase"][rows] = 1.0
        self.arrays["alive"][rows] = 1.0
        schedule = self.arrays["schedule"]
        for budget in np.unique(self.total_budget[rows]):  # one schedule per distinct budget (usually one)
            chosen = rows[self.total_budget[rows] == budget]
            schedule[chosen, :k - 1], schedule[chosen, k - 1] = phase_lengths(int(budget), k), budget

    def _batch_pulls(self, obs: Obs, family: Family) -> np.ndarray | None:
        r"""The rest of the current phase at once: every surviving arm up to \(n_k\) pulls (the single survivor: the
        rest of the budget). Phases end, and arms leave, at the compiled rule's next call, as pull by pull."""
        self.rule_step(obs, self._action)  # ends the phases whose pulls are all made
        phase = self.phase
        # \(n_k\) (\(n_K = n\): the survivor takes what is left)
        target = self.arrays["schedule"][np.arange(self.num), phase - 1]
        owed = np.where(self.alive, np.maximum(target[:, None] - obs["counts"], 0), 0).astype(np.int64)
        return most_owed_first(owed, obs["budget_left"][:, 0].astype(np.int64))

    def check_m(self, m: int) -> None:
        if m != 1:
            raise ValueError(f"SuccessiveRejects returns one arm (m = 1); this env asks for m = {m}: use SAR")
