"""The threshold bandit (abernethy2016): a threshold c_t each round, reward 1{X >= c_t}, censored or not."""

from __future__ import annotations

from bandit_gym.families._contract import Contract, MetricAxes
from bandit_gym.families._family import Family

LEVEL_KEYS = ("level_exceed", "level_trials")
"""The per-arm, per-threshold-level event counts, ``(K * m,)`` per copy, read by the agents that estimate the arms'
distributions (DKWUCB, KMUCB, OPTIM)."""

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
)
