"""(epsilon, m)-best arm identification (gabillon2012; hoffman2014's correlated arms): a set of m arms."""

from __future__ import annotations

from bandit_gym.families._contract import Contract, MetricAxes
from bandit_gym.families._family import Family

_BUDGET_LOG2 = "budget n (pulls, log2 scale)"

CONTRACT = Contract(
    family=Family.BEST_ARM,
    summary="find m arms among the epsilon-best (gabillon2012), at a fixed budget or a fixed confidence",
    keys=("m", "epsilon", "last_value"),
    marker="m",
    action="MultiDiscrete([K + 1] + [2] * K): the arm to pull (K: stop), then one bit per arm of the answer set",
    answer="a set of exactly m arms; empirical: the m largest means (ties at random)",
    metric_names=("error", "regret", "pulls"),
    horizon_argument="budget",
    axes={
        "error": MetricAxes("P(error): simple regret > epsilon", xlabel=_BUDGET_LOG2, xscale="log2", rate=True),
        "regret": MetricAxes("simple regret mu_(m) - min of the answer's means", xlabel=_BUDGET_LOG2,
                             xscale="log2"),
        "pulls": MetricAxes("pulls until the stop", xlabel=_BUDGET_LOG2, xscale="log2"),
    },
)

#: the axes of best-arm identification with correlated arms (hoffman2014's figures: linear budget, simple regret
#: the main metric), for its envs (``bandit_gym.registration.ENV_SPECS`` of paper ``hoffman2014``)
CORRELATED_AXES = {
    "regret": MetricAxes("simple regret max_k mu_k - mu_J"),
    "error": MetricAxes("P(error): recommendation not the best arm", rate=True),
    "pulls": MetricAxes("pulls until the stop"),
}
CORRELATED_DEFAULT_METRIC = "regret"
