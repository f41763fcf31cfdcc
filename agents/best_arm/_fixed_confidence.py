"""The base of the fixed-confidence sampling rules that stop by a stopping-rule component
(``bandit_gym.agents.best_arm._stopping``): a rule samples, the component decides when to stop."""

from __future__ import annotations

import functools
from typing import Any, ClassVar

import numpy as np

from bandit_gym import _validation as check
from bandit_gym.agents.base import Obs
from bandit_gym.agents.best_arm import _stopping
from bandit_gym.agents.best_arm._base import BestArmAgent
from bandit_gym.families import Family


@functools.cache
def opening() -> Any:
    """``opening(counts, sums, made, m, state, mean, scratch, answer) -> arm``, compiled: the start of every
    fixed-confidence rule's step. Each arm once first (its arm, with the m largest empirical means as the answer,
    an arm never pulled ranking last); then ``mean`` = the empirical means, ``answer`` = their m largest, and a
    repeated act on one observation (``state["last_made"]`` = the pulls made) returns its arm
    (``state["last_arm"]``); otherwise -1: the rule decides."""
    from bandit_gym.agents.ranking import empirical_means, jit, top_m, top_m_pulled

    @jit
    def start(counts: np.ndarray, sums: np.ndarray, made: int, m: int, state: Any, mean: np.ndarray,
              scratch: np.ndarray, answer: np.ndarray) -> int:
        if made < counts.shape[0]:
            top_m_pulled(counts, sums, m, scratch, answer)
            return made
        empirical_means(counts, sums, mean)
        top_m(mean, m, answer)
        if made == state["last_made"]:
            return np.int64(state["last_arm"])
        return -1

    return start


class FixedConfidenceAgent(BestArmAgent):
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

    def check_env(self, env: Any) -> None:
        engine = getattr(env.unwrapped, "engine", None)
        arms = getattr(engine, "arm_distribution", None)
        if engine is None or arms is None:
            return
        name = type(self).__name__
        if self.distribution == "bernoulli" and arms != "bernoulli":
            raise ValueError(f"{name}(distribution='bernoulli') plays Bernoulli arms; the env's arms are {arms!r}: "
                             f"use distribution='gaussian' and sigma")
        if arms == "gaussian" and self.distribution == "gaussian" and self.sigma != float(engine.sigma):
            raise ValueError(f"{name}(sigma={self.sigma}) is not the env's sigma={float(engine.sigma)}")

    def _act_batch(self, obs: Obs, last: np.ndarray, family: Family) -> np.ndarray:
        if self.distribution == "bernoulli":
            counts, sums = obs["counts"], obs["sums"]
            if np.any(sums < 0.0) or np.any(sums > counts):
                raise ValueError("an empirical mean lies outside [0, 1]: the rewards are not Bernoulli; build the "
                                 "agent with distribution='gaussian' (and sigma) for Gaussian arms")
        return super()._act_batch(obs, last, family)
