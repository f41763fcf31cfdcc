"""The problem families of the envs, as a type (``Family``).

The members are strings, so an agent's ``families = ("thresholding",)`` and a family written in a spec or a
results file compare equal to them.
"""

from __future__ import annotations

from enum import Enum


class Family(str, Enum):
    """A problem family: the loss an episode is scored by and what an agent submits."""

    #: classify every arm against a threshold theta (tao2019); the answer is one bit per arm
    THRESHOLDING = "thresholding"
    #: the threshold bandit with a per-round threshold c_t (abernethy2016); online, reward ``1{X >= c_t}``
    THRESHOLD = "threshold"
    #: the classic stochastic K-armed bandit; online, cumulative regret
    MULTI_ARMED = "multi_armed"
    #: (epsilon, m)-best arm identification (gabillon2012, hoffman2014); the answer is a set of m arms
    BEST_ARM = "best_arm"
    #: epsilon-top-K identification with aggregate regret (chen2017); the answer is a set of K arms
    TOP_K = "top_k"

    def __str__(self) -> str:  # the value, not "Family.THRESHOLDING" (as enum.StrEnum, Python 3.11, does)
        return str.__str__(self)

    def __format__(self, format_spec: str) -> str:  # the value in f-strings on every Python version
        return str.__format__(self, format_spec)

    @property
    def pure_exploration(self) -> bool:
        """Episodes end with an answer, scored once (the action carries it); else online, a reward per pull."""
        return self in (Family.THRESHOLDING, Family.BEST_ARM, Family.TOP_K)

    @property
    def answers_a_set(self) -> bool:
        """The answer is a set of m arms (best arm, top K), ranked by empirical mean when filled in."""
        return self in (Family.BEST_ARM, Family.TOP_K)
