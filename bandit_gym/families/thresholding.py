"""The thresholding bandit (tao2019): classify every arm against a threshold theta, scored by aggregate regret."""

from __future__ import annotations

from bandit_gym.families._contract import Contract, MetricAxes
from bandit_gym.families._family import Family

CONTRACT = Contract(
    family=Family.THRESHOLDING,
    summary="classify every arm as above or below a threshold theta (tao2019), within a budget T of pulls",
    keys=("threshold", "epsilon", "last_value"),
    marker="epsilon",
    action="MultiDiscrete([K + 1] + [2] * K): the arm to pull (K: stop), then one answer bit per arm",
    answer="one bit per arm, 'mu_i >= theta'; empirical: 1{mean_i >= theta} (an arm never pulled: 0 >= theta)",
    metric_names=("aggregate_regret", "error"),
    horizon_argument="budget",
    axes={
        "aggregate_regret": MetricAxes("aggregate regret / K (log scale)", yscale="log", per_arm=True),
        "error": MetricAxes("P(error): some arm misclassified", rate=True),
    },
)
