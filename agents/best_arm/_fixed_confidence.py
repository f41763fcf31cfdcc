"""The base of the fixed-confidence sampling rules that stop by a stopping-rule component
(``bandit_gym.agents.best_arm._stopping``): a rule samples, the component decides when to stop."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from bandit_gym import _validation as check
from bandit_gym.agents.base import Obs
from bandit_gym.agents.best_arm import _stopping
from bandit_gym.agents.best_arm._base import BestArmAgent
from bandit_gym.agents.ranking import empirical_means, top_m, top_m_pulled
from bandit_gym.families import Family
from bandit_gym.jit import called


@called
def start(counts: np.ndarray, sums: np.ndarray, made: int, m: int, state: Any, mean: np.ndarray,
          scratch: np.ndarray, answer: np.ndarray) -> int:
    """The start of every fixed-confidence rule's step. Each arm once first (its arm, with the m largest empirical
    means as the answer, an arm never pulled ranking last); then ``mean`` = the empirical means, ``answer`` = their
    m largest, and a repeated act on one observation (``state["last_made"]`` = the pulls made) returns its arm
    (``state["last_arm"]``); otherwise -1: the rule decides."""
    if made < counts.shape[0]:
        top_m_pulled(counts, sums, m, scratch, answer)
        return made
    empirical_means(counts, sums, mean)
    top_m(mean, m, answer)
    if made == state["last_made"]:
        return np.int64(state["last_arm"])
    return -1


# The parts common to the Top Two rules (``EBTCI``, ``TTUCB``).


@called
def challenger(counts: np.ndarray, mean: np.ndarray, leader: int, constants: Any, improved: bool) -> int:
    """``argmin_{j != leader} W(leader, j)``, plus ``ln N_j`` when ``improved`` (TCI; TC without), W the
    transportation cost (``_stopping``); the first in the copy's arm order on ties."""
    chosen, least = -1, math.inf
    for j in range(counts.shape[0]):
        if j != leader:
            cost = _stopping.transportation_cost(counts, mean, leader, j, constants["family"], constants["sigma"])
            if improved:
                cost += math.log(np.float64(counts[j]))
            if cost < least:
                chosen, least = j, cost
    return chosen


@called
def tracked(leader: int, other: int, constants: Any, arrays: Any) -> int:
    """The leader if its pulls while it led are at most beta times the steps it led (this one counted), else the
    challenger ``other``: the K tracking procedures of Jourdan et al. (2023), one per leader (``arrays["led"]``,
    ``arrays["pulled_leading"]``)."""
    led, pulled = arrays["led"], arrays["pulled_leading"]
    led[leader] += 1.0
    if pulled[leader] <= constants["beta"] * led[leader]:
        pulled[leader] += 1.0
        return leader
    return other


class ComponentStopped(BestArmAgent):
    """The checks of an agent that may stop by a stopping component (``stopping``, ``distribution``, ``sigma``;
    ``bandit_gym.agents.best_arm._stopping``): the experiment engine refuses an env whose arms are not the
    component's family (``check_env``), and on a Bernoulli component an empirical mean outside [0, 1] (rewards that
    are not Bernoulli) raises as the agent plays (``_act_batch``). Nothing for an agent's own rule
    (``stopping="own"``). The compiled rollout stays on: ``play_compiled`` plays the package's Bernoulli envs only,
    whose rewards need no check."""

    stopping: str
    distribution: str
    sigma: float

    def check_env(self, env: Any) -> None:
        _stopping.check_env_arms(type(self).__name__, env, self.stopping, self.distribution, self.sigma)

    def compiled_rollout(self, obs: Obs) -> tuple[Callable[..., Any], tuple[Any, ...]] | None:
        """``BestArmAgent``'s compiled whole episodes of the rule, defined here so that the check of
        ``_act_batch`` below keeps it."""
        return super().compiled_rollout(obs)

    def _act_batch(self, obs: Obs, last: np.ndarray, family: Family) -> np.ndarray:
        _stopping.check_rewards(obs, self.stopping, self.distribution)
        return super()._act_batch(obs, last, family)


class FixedConfidenceAgent(ComponentStopped):
    """A fixed-confidence sampling rule with a stopping rule of its choice (``stopping``, ``threshold``; see
    ``bandit_gym.agents.best_arm._stopping``), for arms of the family ``distribution`` (``"bernoulli"``, or
    ``"gaussian"`` of standard deviation ``sigma``): the GLR statistic and the sampling rule's divergences are
    that family's. On a Bernoulli agent an empirical mean outside [0, 1] (rewards that are not Bernoulli)
    raises, and the experiment engine refuses a spec whose env's arms are not the agent's family
    (``check_env``). A Gaussian agent on other arms (Bernoulli, or an env's custom laws) runs, outside the
    theory of its thresholds."""

    #: the stopping rule's fields; a subclass adds its own
    constant_fields: ClassVar[tuple[str, ...]] = _stopping.FIELDS
    #: the pulls made at the last act (-1 before the first) and its arm (``opening``); a subclass adds its own
    state_fields: ClassVar[tuple[str, ...]] = ("last_made", "last_arm")
    #: whether the rule identifies the best arm only (m = 1), as its paper defines it
    best_arm_only: ClassVar[bool] = False
    #: a stopping rule of the agent's own that only its sampling makes meaningful (lil'UCB's ``"lil"``)
    own_stopping: ClassVar[str | None] = None
    anytime = True  # never reads the horizon: the env's budget is only a cap

    def __init__(self, delta: float = 0.05, *, stopping: str = "glr", threshold: str | None = None,
                 distribution: str = "bernoulli", sigma: float = 1.0, tie_break: str = "random") -> None:
        self.delta = check.real("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)
        self.stopping, self.threshold = _stopping.check_stopping(stopping, threshold, distribution, sigma)
        if self.stopping == "lil" and self.own_stopping != "lil":
            raise ValueError(f"stopping='lil' is lil'UCB's own rule (it answers the most pulled arm), not "
                             f"{type(self).__name__}'s; allowed: 'glr', 'lucb', 'kllucb'")
        self.distribution, self.sigma = distribution, float(sigma)
        super().__init__(tie_break=tie_break)

    def params(self) -> dict[str, Any]:
        return {"delta": self.delta, "stopping": self.stopping, "threshold": self.threshold,
                "distribution": self.distribution, "sigma": self.sigma, **super().params()}

    def check_m(self, m: int) -> None:
        if self.best_arm_only and m != 1:
            raise ValueError(f"{type(self).__name__} identifies the best arm (m = 1); the env has m = {m}")

    def begin(self, obs: Obs, rows: np.ndarray) -> None:
        sizes, epsilons = np.asarray(obs["m"])[rows, 0].astype(np.int64), np.asarray(obs["epsilon"])[rows, 0]
        for m in np.unique(sizes):
            same = sizes == m
            _stopping.set_constants(self.constants, rows[same], self.stopping, self.threshold, self.delta,
                                    self.distribution, self.sigma, self.num_arms, int(m),
                                    float(np.max(epsilons[same])))
        for name in self.state_fields:
            self.state[name][rows] = -1.0
