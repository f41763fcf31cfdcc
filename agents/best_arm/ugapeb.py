"""UGapEb, the fixed-budget version of UGapE (gabillon2012 §3, Fig. 1 left; §4.2)."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from bandit_gym import _validation as check
from bandit_gym._dispatch import EntryPoints
from bandit_gym.agents.base import Obs
from bandit_gym.agents.best_arm._base import BestArmAgent
from bandit_gym.agents.best_arm._kernels import copy_step, each_copy, over_copies, play
from bandit_gym.agents.best_arm.ugape import CHOSEN, UPPER, gap_select, gap_widths
from bandit_gym.agents.ranking import top_m_pulled
from bandit_gym.jit import called, kernel, parallel_kernel

RECOMMENDATIONS = ("smallest_B", "last")
r"""``"smallest_B"``: the paper's \(J(t^*)\) at the smallest set index over time; ``"last"``: \(J(n + 1)\)."""
#: ``constants["recommendation"]``: the recommendation's code (its index in ``RECOMMENDATIONS``)
SMALLEST_B, LAST = range(len(RECOMMENDATIONS))



@called
def ugapeb(counts: np.ndarray, sums: np.ndarray, made: int, budget: int, m: int, epsilon: float,
           constants: Any, state: Any, arrays: np.ndarray, work: np.ndarray, answer: np.ndarray,
           final: bool) -> int:
    r"""Each arm once; then SELECT-ARM with \(\beta_k = b\sqrt{a / T_k}\), and \(J(t)\) becomes the answer when
    its set index \(B_{J(t)}\) is the smallest so far (always with the recommendation ``LAST``). During the initial
    round the answer is the \(m\) best empirical means, an arm never pulled ranking last."""
    k = counts.shape[0]
    gap_widths(counts, sums, constants["a"], constants["b"], work)
    if made < k:
        top_m_pulled(counts, sums, m, work[UPPER], answer)  # a scratch row here
        return made
    set_index, pull = gap_select(m, work)
    if set_index < state["smallest_B"] or constants["recommendation"] == LAST:
        state["smallest_B"] = min(set_index, state["smallest_B"])
        for i in range(k):
            answer[i] = work[CHOSEN, i] == 1.0
    return pull



@called
def one_copy(n: int, batch: tuple[Any, ...]) -> None:
    """One ``act`` of UGapEb for copy n (``_kernels.copy_step``)."""
    copy_step(ugapeb, n, batch)


@kernel
def step(batch: tuple[Any, ...]) -> np.ndarray:
    """One ``act`` of UGapEb over a batch (``_kernels.each_copy``)."""
    return each_copy(ugapeb, batch)


@parallel_kernel
def parallel_step(batch: tuple[Any, ...]) -> np.ndarray:
    """``step`` with the copies on all cores."""
    return over_copies(one_copy, batch)


@kernel
def rollout(episodes: tuple[Any, ...]) -> None:
    """Whole episodes of UGapEb (``_kernels.play``)."""
    play(ugapeb, episodes)


class UGapEb(BestArmAgent):
    r"""Unified gap-based exploration, fixed budget.

    Paper: gabillon2012, Fig. 1 (left), Fig. 2, eq. 3-4, Theorem 1.

    Pull each arm once, then at every round SELECT-ARM (see ``select_arm``)
    with \(\beta_k = b\sqrt{a / T_k}\), recording \(J(t)\) and its set index \(B_{J(t)}\). The recommendation
    is \(\Omega(n) = J(t^*)\), \(t^* = \operatorname*{arg\,min}_t B_{J(t)}\): the submitted answer at every step is
    the recorded set of smallest index so far.

    Parameters: ``a`` (exploration), or the oracle complexity ``H`` (\(H_\epsilon\) of eq. 6, from the true
    means), from which \(a = \eta (n - K) / (4 H)\) is set at each episode start with \(n\) read from the
    observation (\(\eta = 1\): Theorem 1 holds for \(0 < a \le (n - K) / (4 H)\) and its bound
    \(2 K n \exp(-2a)\) is smallest at the top of that range); ``b`` the upper end of the rewards' range
    \([0, b]\) (1 for Bernoulli arms). Horizon-aware when built from ``H``. The paper states no default \(a\) (the
    NIPS paper has no experiments).

    ``eta`` is ours, after the constant \(c\) of Audibert et al.'s UCB-E experiments (with \(m = 1\),
    \(\epsilon = 0\), ``eta = 16`` gives UCB-E's \(a = (n - K) / H_1\), \(c = 1\), since \(H_0 = 4 H_1\));
    \(\eta > 1\) leaves Theorem 1's range. At \(n = H_1\) the theoretical \(a\) is small (0.062 on Audibert
    et al.'s problem 1), the widths are narrow, the good event of Theorem 1 fails often, and an arm on a lucky
    early streak gets a set index lower than any later, well-estimated one: the recommendation locks on it (the
    median \(t^*\) is about 95 of 2000 rounds on problem 1), and the error is 0.76 against Uniform's 0.41 there
    (``bandit-gym reproduce gabillon2012``, 1000 runs), 0.18 with ``eta = 16``.

    ``recommendation="last"`` (ours, not the paper's) answers \(J(n + 1)\), the set of the final statistics,
    instead of \(J(t^*)\).

    Readings where the paper is silent:

    - the range of \(t\) in \(t^*\): the paper writes \(t \in \{1, \dots, n\}\), but \(B\) is defined only
      once every arm has been pulled; we record the sets of \(t = K+1, \dots, n+1\), the last one computed after
      the \(n\)-th observation (the proof of Theorem 1 states Lemma 1's bound up to \(t = n+1\), so it covers
      this range). Ties in \(t^*\): the earliest round.
    - tie rules of SELECT-ARM: see ``select_arm`` (\(J\): the first arm; \(u_t\), \(l_t\): the largest
      \(\beta\), as the paper says, then the first arm; \(I(t)\): \(l_t\) when the widths are equal), "first"
      in the copy's arm order: random per copy and episode, or the smallest index with ``tie_break="index"``
      (see ``BestArmAgent``).
    - initialisation: each arm once, in the copy's arm order.
    - answer before the end: during the initial round (no \(B\) defined yet) the \(m\) arms of largest
      empirical mean, an arm never pulled ranking last (ties: the first in the copy's order); after it, the
      recorded \(J(t^*)\) so far.
    - \(n \le K\) with ``H`` given: \(a = \eta \max(n - K, 0) / (4 H)\), so \(a = 0\) and the widths vanish.
    - log: not used (the widths have no log).

    Examples:
        One seeded episode (Audibert et al.'s problem 1) and the record of
        ``RecordEpisodeRegret`` that ``play_episode`` returns:

        >>> import gymnasium as gym
        >>> from bandit_gym.agents import UGapEb
        >>> from bandit_gym.rollout import play_episode
        >>> env = gym.make("BestArmIdentification-Audibert2010Problem1-v0", budget=400)
        >>> result = play_episode(env, UGapEb(a=1.0), seed=0)
        >>> result["pulls"], round(result["regret"], 3)
        (400, 0.1)
    """

    oracle_parameters: ClassVar[tuple[str, ...]] = ("H",)
    oracle_alternatives: ClassVar[tuple[str, ...]] = ("a",)
    #: the exploration \(a\), the range \(b\), the recommendation's code (``SMALLEST_B`` or ``LAST``)
    constant_fields = ("a", "b", "recommendation")
    choice_fields: ClassVar[tuple[str, ...]] = ("recommendation",)
    #: the smallest set index \(B_{J(t)}\) recorded so far (+inf at the start)
    state_fields = ("smallest_B",)

    def __init__(self, a: float | None = None, H: float | None = None, b: float = 1.0, eta: float = 1.0,
                 recommendation: str = "smallest_B", *, tie_break: str = "random") -> None:
        if (a is None) == (H is None):
            raise ValueError("pass exactly one of a (exploration, > 0) and H (oracle complexity H_epsilon, > 0); "
                             "a = (n - K) / (4 H) is the value Theorem 1 prefers")
        self.a = None if a is None else check.real("a", a, low=0.0, low_open=True)
        self.H = None if H is None else check.real("H", H, low=0.0, low_open=True)
        self.b = check.real("b", b, low=0.0, low_open=True)
        self.eta = check.real("eta", eta, low=0.0, low_open=True)
        self.recommendation = check.choice("recommendation", recommendation, RECOMMENDATIONS)
        super().__init__(tie_break=tie_break)

    def params(self) -> dict[str, object]:
        return {"a": self.a, "H": self.H, "b": self.b, "eta": self.eta, "recommendation": self.recommendation,
                **super().params()}

    @classmethod
    def is_anytime(cls, params: dict) -> bool:  # type: ignore[override]
        return params.get("a") is not None  # built from H (the oracle fills it), a reads the budget

    @property
    def exploration(self) -> np.ndarray:
        r"""Per copy, the exploration parameter \(a\) of the current episode."""
        return self.constants["a"]

    @property
    def best_index(self) -> np.ndarray:
        r"""Per copy, the smallest set index \(B_{J(t)}\) recorded so far (+inf before the first)."""
        return self.state["smallest_B"]

    kernels = EntryPoints(step, parallel_step, rollout)

    def begin(self, obs: Obs, rows: np.ndarray) -> None:
        if self.H is not None:
            a = self.eta * np.maximum(self.total_budget[rows] - self.num_arms, 0) / (4.0 * self.H)
        else:
            a = self.a
        self.constants["a"][rows], self.constants["b"][rows] = a, self.b
        self.constants["recommendation"][rows] = RECOMMENDATIONS.index(self.recommendation)
        self.state["smallest_B"][rows] = np.inf
