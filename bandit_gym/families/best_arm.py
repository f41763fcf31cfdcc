r"""\((\epsilon, m)\)-best arm identification (gabillon2012; hoffman2014's correlated arms): a set of \(m\) arms."""

from __future__ import annotations

import numpy as np

from bandit_gym.families import _checks
from bandit_gym.families._contract import Contract, MetricAxes, pure_exploration_action
from bandit_gym.families._family import Family


def top_m_answer(obs: dict[str, np.ndarray], rng: np.random.Generator | None = None) -> np.ndarray:
    r"""The \(m\) arms of largest empirical mean as answer bits (single or batched observation). Arms never pulled
    (``counts`` 0, where the observation's mean reads 0) rank below every pulled arm, so that with negative
    rewards an untried arm is not preferred; the agents' own answers follow the same rule. Ties: at random from
    ``rng`` (each tied arm equally likely, so the rule does not depend on the arms' positions), or the smaller
    index first without one."""
    means = np.atleast_2d(np.asarray(obs["means"], dtype=np.float64))
    if "counts" in obs:
        means = np.where(np.atleast_2d(np.asarray(obs["counts"])) > 0, means, -np.inf)
    m = np.atleast_2d(np.asarray(obs["m"]))[:, 0].astype(np.int64)
    if rng is None:
        order = np.argsort(-means, axis=1, kind="stable")
    else:
        order = np.lexsort((rng.random(means.shape), -means), axis=1)
    rank = np.argsort(order, axis=1)
    bits = (rank < m[:, None]).astype(np.int64)
    return bits[0] if np.ndim(obs["means"]) == 1 else bits


_BUDGET_LOG2 = "budget n (pulls, log2 scale)"


def check_m(batch: _checks.Obs, single: bool, k: int) -> None:
    r"""\(m\) a whole number from 1 to \(K - 1\), the same in every copy (the agents index with it: checked at every
    call)."""
    _checks.m(batch, single, k)


CONTRACT = Contract(
    family=Family.BEST_ARM,
    summary="find m arms among the epsilon-best (gabillon2012), at a fixed budget or a fixed confidence",
    keys=("m", "epsilon", "last_value"),
    marker="m",
    action="MultiDiscrete([K + 1] + [2] * K): the arm to pull (K: stop), then one bit per arm of the answer set",
    answer="a set of exactly m arms; empirical: the m largest means (ties at random)",
    metric_names=("error", "regret", "pulls"),
    horizon_argument="budget",
    empirical_answer=top_m_answer,
    compose_action=pure_exploration_action,
    axes={
        "error": MetricAxes("P(error): simple regret > epsilon", xlabel=_BUDGET_LOG2, xscale="log2", rate=True),
        "regret": MetricAxes("simple regret mu_(m) - min of the answer's means", xlabel=_BUDGET_LOG2,
                             xscale="log2"),
        "pulls": MetricAxes("pulls until the stop", xlabel=_BUDGET_LOG2, xscale="log2"),
    },
    constants={"epsilon": _checks.NON_NEGATIVE},
    check_start=check_m,
    check_step=check_m,
)

#: the axes of best-arm identification with correlated arms (hoffman2014's figures: linear budget, simple regret
#: the main metric), for its envs (``bandit_gym.registration.ENV_SPECS`` of paper ``hoffman2014``)
CORRELATED_AXES = {
    "regret": MetricAxes("simple regret max_k mu_k - mu_J"),
    "error": MetricAxes("P(error): recommendation not the best arm", rate=True),
    "pulls": MetricAxes("pulls until the stop"),
}
CORRELATED_DEFAULT_METRIC = "regret"
