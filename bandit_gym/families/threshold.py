r"""The threshold bandit (abernethy2016): a threshold \(c_t\) each round, reward \(\mathbb{1}\{X \ge c_t\}\), censored
or not."""

from __future__ import annotations

import numpy as np

from bandit_gym.families import _checks
from bandit_gym.families._contract import Contract, MetricAxes
from bandit_gym.families._family import Family

LEVEL_KEYS = ("level_exceed", "level_trials")
"""The per-arm, per-threshold-level event counts, ``(K * m,)`` per copy, read by the agents that estimate the arms'
distributions (DKWUCB, KMUCB, OPTIM)."""


def check_level(batch: _checks.Obs, single: bool, k: int) -> None:
    r"""The threshold level \(c_t\) a whole number \(1..m\) (0 after the last round) where the observation carries
    the level counts (the agents that read them index them with \(c_t\)); at an episode's start and at every step
    (\(c_t\) and the last reward finite: ``CONTRACT.constants``)."""
    if "level_exceed" in batch and np.ndim(batch["level_exceed"]) == 2:
        c = batch["threshold"][:, 0]
        levels = batch["level_exceed"].shape[1] // k
        _checks.require(batch, "threshold", single, c, (c >= 0) & (c <= levels) & (c == np.floor(c)),
                        f"a threshold level 1..m = 1..{levels} (0 after the last round)")


CONTRACT = Contract(
    family=Family.THRESHOLD,
    summary="online: each round a threshold c_t, reward 1{X >= c_t} (abernethy2016), censored or uncensored feedback",
    keys=("threshold", "last_reward"),
    marker="threshold",
    action="Discrete(K): the arm to pull",
    answer="none: the cumulative pseudo-regret is summed over the rounds",
    metric_names=("regret",),
    horizon_argument="horizon",
    more_keys=("last_value", "last_censored", "level_exceed", "level_trials"),
    axes={"regret": MetricAxes("cumulative pseudo-regret (log scale)", xlabel="horizon T (log scale)",
                               xscale="log", yscale="log")},
    constants={"threshold": _checks.FINITE, "last_reward": _checks.FINITE},
    level_bounds={"level_exceed": _checks.PULLS, "level_trials": _checks.PULLS},
    check_start=check_level,
    check_step=check_level,
)
