r"""\(\epsilon\)-top-\(K\) identification with aggregate regret (chen2017): a set of \(K\) arms."""

from __future__ import annotations

from bandit_gym.families import _checks, best_arm
from bandit_gym.families._contract import Contract, MetricAxes, pure_exploration_action
from bandit_gym.families._family import Family
from bandit_gym.families.best_arm import top_m_answer

_BUDGET = "total budget Q (log scale)"


CONTRACT = Contract(
    family=Family.TOP_K,
    summary="find K arms whose aggregate regret is at most epsilon (chen2017), at a fixed budget or confidence",
    keys=("m", "epsilon", "delta", "last_value"),
    marker="delta",
    action="MultiDiscrete([K + 1] + [2] * K): the arm to pull (K: stop), then one bit per arm of the answer set",
    answer="a set of exactly K arms; empirical: the K largest means (ties at random)",
    metric_names=("error", "regret", "pulls"),
    horizon_argument="budget",
    empirical_answer=top_m_answer,
    compose_action=pure_exploration_action,
    axes={
        "error": MetricAxes("failure probability P(R > epsilon)", xlabel=_BUDGET, xscale="log", rate=True),
        "regret": MetricAxes("top-K aggregate regret R", xlabel=_BUDGET, xscale="log"),
        "pulls": MetricAxes("pulls until the stop", xlabel=_BUDGET, xscale="log"),
    },
    constants={"epsilon": _checks.NON_NEGATIVE, "delta": _checks.OPEN_UNIT},
    check_start=best_arm.check_m,
    check_step=best_arm.check_m,
)
