"""The parts common to the fixed-confidence sampling rules, which stop by a stopping component
(``bandit_gym.agents.best_arm._stopping.Stopping``, given to ``BestArmAgent``): a rule samples, the component
decides when to stop. Every such rule opens its step with ``start``."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from bandit_gym.agents.best_arm import _stopping
from bandit_gym.agents.ranking import empirical_means, top_m, top_m_pulled
from bandit_gym.jit import called

#: the state every fixed-confidence rule keeps for ``start``: the pulls made at the last act (-1 before the first)
#: and its arm; a rule adds its own fields after them
STATE_FIELDS = ("last_made", "last_arm")


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
