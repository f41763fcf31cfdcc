"""Successive Accepts and Rejects (Bubeck, Wang, Viswanathan 2013), fixed-budget m-best identification."""

from __future__ import annotations

from typing import Any

import numpy as np

from bandit_gym._dispatch import EntryPoints
from bandit_gym.agents.best_arm._kernels import copy_step, each_copy, over_copies, play
from bandit_gym.agents.best_arm.successive_rejects import SuccessiveRejects, successive
from bandit_gym.jit import called, kernel, parallel_kernel


@called
def successive_accepts_rejects(counts: np.ndarray, sums: np.ndarray, made: int, budget: int, m: int,
                               epsilon: float, constants: Any, state: Any, arrays: np.ndarray, work: np.ndarray,
                               answer: np.ndarray, final: bool) -> int:
    """SAR's step (the rule of ``BestArmAgent``): SR's with SAR's removal (``accept_or_reject``)."""
    return successive(counts, sums, made, budget, m, epsilon, constants, state, arrays, work, answer, final, True)



@called
def one_copy(n: int, batch: tuple[Any, ...]) -> None:
    """One ``act`` of SAR for copy n (``_kernels.copy_step``)."""
    copy_step(successive_accepts_rejects, n, batch)


@kernel
def step(batch: tuple[Any, ...]) -> np.ndarray:
    """One ``act`` of SAR over a batch (``_kernels.each_copy``)."""
    return each_copy(successive_accepts_rejects, batch)


@parallel_kernel
def parallel_step(batch: tuple[Any, ...]) -> np.ndarray:
    """``step`` with the copies on all cores."""
    return over_copies(one_copy, batch)


@kernel
def rollout(episodes: tuple[Any, ...]) -> None:
    """Whole episodes of SAR (``_kernels.play``)."""
    play(successive_accepts_rejects, episodes)


class SAR(SuccessiveRejects):
    r"""Successive Accepts and Rejects: SR's phases, but each phase removes the active arm of largest empirical
    gap, accepting it if it is among the active top ones, rejecting it otherwise.

    Paper: S. Bubeck, T. Wang, N. Viswanathan, Multiple Identifications in Multi-Armed Bandits, ICML 2013
    (gabillon2012 §1 cites its 2012 arXiv version: "a new version of the Successive Rejects algorithm (with
    accept and reject)" for the m best arms). Not one of the five papers; the fixed-budget baseline for \(m > 1\)
    next to UGapEb.

    Phase lengths as ``SuccessiveRejects``. At the end of phase \(k\), with the active arms sorted by empirical
    mean, \(\hat\mu_{\sigma_1} \ge \hat\mu_{\sigma_2} \ge \dots\), and \(l\) arms still to accept:

    $$
    \hat\Delta_r = \begin{cases} \hat\mu_{\sigma_r} - \hat\mu_{\sigma_{l+1}} & (r \le l), \\
    \hat\mu_{\sigma_l} - \hat\mu_{\sigma_r} & (r > l), \end{cases}
    $$

    the arm of largest \(\hat\Delta\) leaves: accepted if \(r \le l\) (then \(l \leftarrow l - 1\)), rejected
    otherwise. Output: the accepted arms and, after the last phase, the active arm if one is still to accept.
    \(m = 1\) gives SR's answers with SAR's removal rule. Deviations: none.

    Readings where the paper is silent:

    - ties (ranking, largest gap, answer): as ``SuccessiveRejects``, the copy's arm order (random per copy and
      episode; the smallest index with ``tie_break="index"``), written below as "first".
    - ranking: equal means rank by the first arm first.
    - ties in the largest gap: the higher-ranked arm leaves (the best active arm before the worst; among arms of
      equal lowest mean, the first).
    - once \(l = 0\) (nothing left to accept) the remaining phases still run and each rejects the last-ranked
      active arm (lowest mean; the largest index among equal means); once every active arm must be accepted
      (\(l\) = the number of active arms) each phase accepts the best one. Neither changes the answer.
    - answer before the end: the accepted arms that were pulled, then the best of the other candidates (the
      active arms, and accepted arms never pulled) up to \(m\), by empirical mean with an arm never pulled
      ranking last (ties: the first).
    - pull order within a phase, leftover budget: as ``SuccessiveRejects``.
    - \(n \le K\): every phase has length 0, so all removals happen before any pull, on empirical means of 0:
      the arms at positions \(0, \dots, m-1\) (0-based) of the copy's order are accepted (a tie between the top
      and the bottom goes to the top), positions \(K-1\) down to \(m+1\) are rejected, and position \(m\), left
      alone, takes the budget; the answer is then that arm and positions \(0, \dots, m-2\) (with
      ``tie_break="index"``, positions are indices).

    Examples:
        One seeded episode (Audibert et al.'s problem 1) and the record of
        ``RecordEpisodeRegret`` that ``play_episode`` returns:

        >>> import gymnasium as gym
        >>> from bandit_gym.agents import SAR
        >>> from bandit_gym.rollout import play_episode
        >>> env = gym.make("BestArmIdentification-Audibert2010Problem1-v0", budget=400)
        >>> result = play_episode(env, SAR(), seed=0)
        >>> result["pulls"], round(result["regret"], 3)
        (400, 0.1)
    """

    kernels = EntryPoints(step, parallel_step, rollout)

    def check_m(self, m: int) -> None:
        r"""Any \(m\)."""
