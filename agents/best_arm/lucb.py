"""LUCB1 (Kalyanakrishnan, Tewari, Auer, Stone 2012), the fixed-confidence baseline next to UGapEc."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from bandit_gym import _validation as check
from bandit_gym._dispatch import EntryPoints
from bandit_gym.agents.base import Obs
from bandit_gym.agents.best_arm import _stop, _stopping
from bandit_gym.agents.best_arm._base import BestArmAgent
from bandit_gym.agents.best_arm._kernels import copy_step, each_copy, over_copies, play
from bandit_gym.agents.best_arm._stopping import Stopping
from bandit_gym.agents.ranking import empirical_means, pulled_first, top_m
from bandit_gym.jit import called, kernel, parallel_kernel

#: the scratch rows: the means, the widths \(\beta\), and a row for the answer
MEANS, BETAS, SCRATCH = range(3)


@called
def lucb(counts: np.ndarray, sums: np.ndarray, made: int, budget: int, m: int, epsilon: float,
         constants: Any, state: Any, arrays: np.ndarray, work: np.ndarray, answer: np.ndarray,
         final: bool) -> int:
    r"""The answer is \(\mathit{High}\) (the \(m\) largest empirical means), but with an arm never pulled
    ranking last; \(h_t\) and \(l_t\) come from \(\mathit{High}\) as the means rank it (a mean of 0 for an arm
    never pulled). At the start of each round, stop (\(K\)) by LUCB1's own rule
    (\(\mathrm{UCB}_l - \mathrm{LCB}_h < \epsilon\)) or by the stopping component of ``constants``, with
    \(\mathit{High}\) as its answer."""
    k = counts.shape[0]
    mean, beta = work[MEANS], work[BETAS]
    empirical_means(counts, sums, mean)
    round_t = 1.0 + max(np.float64(made - k), 0.0) // 2
    log_term = math.log(1.25 * k * round_t**4 / constants["delta"])
    for i in range(k):
        beta[i] = constants["b"] * math.sqrt(log_term / (2.0 * max(np.float64(counts[i]), 1.0)))
    top_m(mean, m, answer)  # High
    h, low = -1, -1
    for i in range(k):
        if answer[i]:
            if h < 0 or mean[i] - beta[i] < mean[h] - beta[h]:
                h = i
        elif low < 0 or mean[i] + beta[i] > mean[low] + beta[low]:
            low = i
    pulled_first(counts, sums, m, work[SCRATCH], answer)
    if made == state["last_made"]:  # a repeated act on one observation repeats its action
        return np.int64(state["last_arm"])
    if made < k:
        arm = made
    elif state["pending"] >= 0:
        arm, state["pending"] = np.int64(state["pending"]), -1.0
    else:
        if _stop.kind(constants) == _stop.OWN:  # LUCB1's own rule
            stop = (mean[low] + beta[low]) - (mean[h] - beta[h]) < epsilon
        else:
            stop = _stop.stopped(counts, mean, answer, made, m, epsilon, constants)
        if stop:
            arm = k
        else:
            arm, state["pending"] = h, np.float64(low)
    state["last_made"], state["last_arm"] = np.float64(made), np.float64(arm)
    return arm



@called
def one_copy(n: int, batch: tuple[Any, ...]) -> None:
    """One ``act`` of LUCB1 for copy n (``_kernels.copy_step``)."""
    copy_step(lucb, n, batch)


@kernel
def step(batch: tuple[Any, ...]) -> np.ndarray:
    """One ``act`` of LUCB1 over a batch (``_kernels.each_copy``)."""
    return each_copy(lucb, batch)


@parallel_kernel
def parallel_step(batch: tuple[Any, ...]) -> np.ndarray:
    """``step`` with the copies on all cores."""
    return over_copies(one_copy, batch)


@kernel
def rollout(episodes: tuple[Any, ...]) -> None:
    """Whole episodes of LUCB1 (``_kernels.play``)."""
    play(lucb, episodes)


class LUCB(BestArmAgent):
    r"""LUCB1: sample the two arms whose confidence intervals are most in doubt, stop when they separate.

    Paper: S. Kalyanakrishnan, A. Tewari, P. Auer, P. Stone, PAC Subset Selection in Stochastic Multi-armed
    Bandits, ICML 2012 (LUCB1; gabillon2012 §1 cites this paper for m-best arm identification with fixed
    confidence). Not one of the five papers; the fixed-confidence baseline users expect next to UGapEc.

    After one pull of each arm, round \(t\): \(\mathit{High}\) = the \(m\) arms of largest empirical mean,
    \(h_t = \operatorname*{arg\,min}_{j \in \mathit{High}} \mathrm{LCB}_j\),
    \(l_t = \operatorname*{arg\,max}_{j \notin \mathit{High}} \mathrm{UCB}_j\) with
    \(\mathrm{UCB}, \mathrm{LCB} = \hat\mu \pm \beta\), \(\beta(u, t) = \sqrt{\log(k_1 K t^4 / \delta) / (2 u)}\),
    \(k_1 = 5/4\); stop with \(\mathit{High}\) when \(\mathrm{UCB}_{l_t} - \mathrm{LCB}_{h_t} < \epsilon\), else
    sample \(h_t\) and \(l_t\). Anytime.

    Stopping: by default LUCB1's own rule above (``stopping="own"``); any of the package's stopping components
    instead (``stopping="glr"`` with a ``threshold``, ``"lucb"``, ``"kllucb"``; see
    ``bandit_gym.agents.best_arm._stopping``), checked at the start of each round with \(\mathit{High}\) as its
    answer; the sampling is LUCB1's either way. The GLR statistic and the KL bounds read the divergence of the
    arms' family ``distribution`` (``"bernoulli"``, or ``"gaussian"`` of standard deviation ``sigma``), which the
    experiment engine checks against the env's arms (``check_env``); the own rule reads neither.

    Parameters: ``delta`` in \((0, 1)\); ``b`` > 0; ``stopping``, ``threshold``, ``distribution``, ``sigma``.

    Deviations: a round samples two arms, an env step one: \(h_t\) is pulled at the step that computes the round
    and \(l_t\) at the next, without recomputing.

    Readings where the paper is silent:

    - the round counter: \(t = 1\) after the \(K\) initial pulls and grows by one every two pulls,
      \(t = 1 + \lfloor (\text{pulls} - K) / 2 \rfloor\).
    - ties (\(\mathit{High}\), \(h_t\), \(l_t\)): the first in the copy's arm order (random per copy and
      episode; the smallest index with ``tie_break="index"``, see ``BestArmAgent``). Initial pulls in that order.
    - rewards in \([0, b]\): the paper's \(\beta\) is for \([0, 1]\); ``b`` scales it (default 1).
    - the budget: the paper has no cap; on a fixed-confidence env the env's budget truncates the episode, with
      \(\mathit{High}\) of the current statistics as the answer (also the answer submitted before the end).
    - arms never pulled (only during the initial round): the submitted \(\mathit{High}\) ranks them last;
      \(h_t\) and \(l_t\) read their mean as 0 (they are not used before every arm is pulled).
    - log: natural.

    Examples:
        One seeded episode (Audibert et al.'s problem 1) and the record of
        ``RecordEpisodeRegret`` that ``play_episode`` returns:

        >>> import gymnasium as gym
        >>> from bandit_gym.agents import LUCB
        >>> from bandit_gym.rollout import play_episode
        >>> env = gym.make("BestArmIdentification-Audibert2010Problem1-v0", budget=400)
        >>> result = play_episode(env, LUCB(), seed=0)
        >>> result["pulls"], round(result["regret"], 3)
        (400, 0.1)
    """

    #: the stopping rule's fields (``delta`` among them; the kind ``OWN`` for LUCB1's own), the range \(b\)
    constant_fields = (*_stopping.FIELDS, "b")
    #: \(l_t\) still to pull (-1: none), the pulls made at the last act (-1 before the first), its arm
    state_fields = ("pending", "last_made", "last_arm")
    anytime = True  # never reads the horizon T

    def __init__(self, delta: float = 0.05, b: float = 1.0, *, stopping: str = "own", threshold: str | None = None,
                 distribution: str = "bernoulli", sigma: float = 1.0, tie_break: str = "random") -> None:
        stopper = Stopping.paper("LUCB", delta, stopping, threshold, distribution, sigma)
        self.b = check.real("b", b, low=0.0, low_open=True)
        super().__init__(stopping=stopper, tie_break=tie_break)

    def params(self) -> dict[str, object]:
        return {"delta": self.delta, "b": self.b, **super().params()}

    kernels = EntryPoints(step, parallel_step, rollout)

    def begin(self, obs: Obs, rows: np.ndarray) -> None:
        super().begin(obs, rows)  # the stopping rule's constants, every state field at -1
        self.constants["b"][rows] = self.b
