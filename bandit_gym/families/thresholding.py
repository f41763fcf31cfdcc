r"""The thresholding bandit (tao2019): classify every arm against a threshold \(\theta\), scored by aggregate
regret."""

from __future__ import annotations

import numpy as np

from bandit_gym.families import _checks
from bandit_gym.families._contract import Contract, MetricAxes, pure_exploration_action
from bandit_gym.families._family import Family


def empirical_answer(obs: dict[str, np.ndarray], rng: np.random.Generator | None = None) -> np.ndarray:
    r"""The empirical rule \(d_i = \mathbb{1}\{\hat\theta_i \ge \theta\}\) from an observation (single or batched). Each
    arm is answered on its own, so there are no ties between arms (``rng`` is accepted for the signature of the best-arm
    rule and unused).

    An arm never pulled has empirical mean 0 in the observation and is therefore answered by comparing 0 with
    \(\theta\)."""
    means = np.asarray(obs["means"], dtype=np.float64)
    threshold = np.asarray(obs["threshold"], dtype=np.float64)
    return (means >= threshold).astype(np.int64)


CONTRACT = Contract(
    family=Family.THRESHOLDING,
    summary="classify every arm as above or below a threshold theta (tao2019), within a budget T of pulls",
    keys=("threshold", "epsilon", "last_value"),
    marker="epsilon",
    action="MultiDiscrete([K + 1] + [2] * K): the arm to pull (K: stop), then one answer bit per arm",
    answer="one bit per arm, 'mu_i >= theta'; empirical: 1{mean_i >= theta} (an arm never pulled: 0 >= theta)",
    metric_names=("aggregate_regret", "error"),
    horizon_argument="budget",
    empirical_answer=empirical_answer,
    compose_action=pure_exploration_action,
    axes={
        "aggregate_regret": MetricAxes("aggregate regret / K (log scale)", yscale="log", per_arm=True),
        "error": MetricAxes("P(error): some arm misclassified", rate=True),
    },
    constants={"threshold": _checks.FINITE, "epsilon": _checks.NON_NEGATIVE},
)
