r"""The classic stochastic \(K\)-armed bandit: online, cumulative pseudo-regret."""

from __future__ import annotations

from bandit_gym.families import _checks
from bandit_gym.families._contract import Contract, MetricAxes
from bandit_gym.families._family import Family

CONTRACT = Contract(
    family=Family.MULTI_ARMED,
    summary="online: the classic stochastic K-armed bandit, cumulative pseudo-regret",
    keys=("last_reward",),
    marker=None,
    action="Discrete(K): the arm to pull",
    answer="none: the cumulative pseudo-regret is summed over the rounds",
    metric_names=("regret",),
    horizon_argument="budget",
    axes={"regret": MetricAxes("cumulative pseudo-regret", xlabel="horizon T")},
    constants={"last_reward": _checks.FINITE},
)
