"""The problem families: one contract per family, and the one lookup of a family.

Each family has a module here (``thresholding``, ``threshold``, ``multi_armed``, ``best_arm``, ``top_k``) whose
``CONTRACT`` (a ``Contract``) states what the family means: its observation keys, what an action and an answer
are, its metrics (the default first), the constructor argument of its horizon and how each metric is plotted.
Envs, agents, the experiment engine, plotting, ``rl`` and ``armwise`` read it from ``CONTRACTS``.

The family of an observation (or its keys, or an observation space) is ``family_of(obs)``; that of a registered id
is ``bandit_gym.registration.family_of_env(env_id)``, above this package: the contracts import neither the
registration nor the envs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from bandit_gym.families import best_arm, multi_armed, threshold, thresholding, top_k
from bandit_gym.families._contract import COMMON_ARM_KEYS, COMMON_SCALAR_KEYS, Contract, MetricAxes
from bandit_gym.families._family import Family

CONTRACTS: dict[Family, Contract] = {module.CONTRACT.family: module.CONTRACT
                                     for module in (thresholding, threshold, multi_armed, best_arm, top_k)}
"""Family -> its contract."""
ORDER = (Family.TOP_K, Family.BEST_ARM, Family.THRESHOLDING, Family.THRESHOLD, Family.MULTI_ARMED)
"""The order in which ``family_of`` tries the families' marker keys (top K's observation also carries m)."""

__all__ = ["COMMON_ARM_KEYS", "COMMON_SCALAR_KEYS", "CONTRACTS", "ORDER", "Contract", "Family", "MetricAxes",
           "contract", "family_of"]


def contract(family: Family | str) -> Contract:
    """The contract of ``family`` (a ``Family`` or its name)."""
    try:
        return CONTRACTS[Family(family)]
    except ValueError:
        raise ValueError(f"family={family!r} is not a family; allowed: {[f.value for f in Family]}") from None


def family_of(obs: Mapping[str, Any] | Iterable[str]) -> Family:
    """The family of an observation (a dict of arrays, a ``spaces.Dict``'s ``spaces``, or just the keys): the
    first family of ``ORDER`` whose marker key it holds (top K: ``delta``; best arm: ``m``; thresholding:
    ``epsilon``; the threshold bandit: ``threshold``), else the multi-armed bandit."""
    keys = set(obs.keys() if isinstance(obs, Mapping) else obs)
    for family in ORDER:
        marker = CONTRACTS[family].marker
        if marker is None or marker in keys:
            return family
    raise AssertionError("ORDER ends with the family without a marker")  # pragma: no cover
