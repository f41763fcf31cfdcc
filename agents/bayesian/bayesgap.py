"""BayesGap (hoffman2014 §5, Algorithm 1): gap-based Bayesian best-arm identification under a fixed budget."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from bandit_gym import _validation as check
from bandit_gym.agents.base import Obs
from bandit_gym.agents.bayesian._base import BayesianAgent, one_hot

H_FLOOR = 1e-12
r"""The floor of a hardness term \(H_k\) when \(\epsilon = 0\) and the estimated gap is \(\le 0\) (a guard of ours, see
``exploration``).
"""


def others_max(values: np.ndarray) -> np.ndarray:
    r"""\(\max_{i \ne k} \mathrm{values}_i\) for every \(k\), (N, K): the largest value, and the second largest for its
    arm."""
    top2 = -np.partition(-values, 1, axis=1)[:, :2]
    top1 = values.argmax(axis=1)
    out = np.repeat(top2[:, :1], values.shape[1], axis=1)
    out[np.arange(values.shape[0]), top1] = top2[:, 1]
    return out


def exploration(mean: np.ndarray, std: np.ndarray, epsilon: np.ndarray, budget: np.ndarray, kappa: float,
                sigma: float, eta: float) -> np.ndarray:
    r"""\(\beta\) per copy (N,) from the adaptive estimate of \(H_\epsilon\) (hoffman2014 eq. 9 and §5's end):

    $$
    \begin{aligned}
    \Delta_k &= \max_{j \ne k} (\mu_j + 3 s_j) - (\mu_k - 3 s_k), \qquad
    H_k = \max\big((\Delta_k + \epsilon) / 2, \epsilon\big), \\
    H &= \sum_k H_k^{-2}, \qquad \beta^2 = \frac{(T - K) / \sigma^2 + \kappa / \eta^2}{4 H}
    \end{aligned}
    $$

    as printed, also when \(T < K\) (the paper runs it at \(T = 10\) and 40 with \(K = 160\), §6.2). Guards of
    ours, for cases the paper does not discuss: \(H_k \le 0\) (\(\epsilon = 0\) and \(\Delta_k \le 0\), when one
    arm's lower \(3\sigma\) bound is above every other arm's upper one) becomes
    \(\max(\lvert \Delta_k \rvert / 2, 10^{-12})\); where the numerator \((T - K) / \sigma^2 + \kappa / \eta^2\) is
    not positive (\(T\) far below \(K\), where eq. 9 gives no \(\beta\)), it is \(\kappa / \eta^2\), the value of
    eq. 9 at \(T = K\); \(\beta = 1\) if \(\beta^2\) is still not positive."""
    delta = others_max(mean + 3.0 * std) - (mean - 3.0 * std)
    h = np.maximum((delta + epsilon) / 2.0, epsilon)
    h = np.where(h > 0, h, np.maximum(np.abs(delta) / 2.0, H_FLOOR))
    hardness = np.sum(h**-2.0, axis=1)
    k = mean.shape[1]
    printed = (np.asarray(budget) - k) / sigma**2 + kappa / eta**2
    beta2 = np.where(printed > 0, printed, kappa / eta**2) / (4.0 * hardness)
    return np.where(beta2 > 0, np.sqrt(np.where(beta2 > 0, beta2, 1.0)), 1.0)


class BayesGap(BayesianAgent):
    r"""BayesGap: UGapEb for \(m = 1\) with posterior widths.

    Paper: hoffman2014 §5, Algorithm 1, eq. 6-9.

    At round \(t\), from the posterior after \(t - 1\) observations (\(\mu_k\), \(s_k\)) and \(\beta\) (below):

    $$
    \begin{aligned}
    U_k &= \mu_k + \beta s_k, \qquad L_k = \mu_k - \beta s_k, \qquad B_k = \max_{i \ne k} U_i - L_k
      && \text{(eq. 6)} \\
    J(t) &= \operatorname*{arg\,min}_k B_k, \qquad j(t) = \operatorname*{arg\,max}_{k \ne J(t)} U_k, \\
    a_t &= \operatorname*{arg\,max}_{k \in \{j(t), J(t)\}} (U_k - L_k) && \text{(eq. 7)}
    \end{aligned}
    $$

    recording \((J(t), B_{J(t)})\); the recommendation is
    \(\Omega_T = J\big(\operatorname*{arg\,min}_{t \le T} B_{J(t)}\big)\) (eq. 8): the answer submitted at every
    step is the record of smallest \(B\) so far. \(\beta\) is recomputed every round from the adaptive estimate of
    \(H_\epsilon\) (``exploration``, eq. 9 and the end of §5) with \(\kappa = \sum_k 1 / G_{kk}\), \(T\) the budget
    read from the first observation and \(\epsilon\) from the observation. No initialisation pulls (the paper:
    correlation makes them unnecessary in practice), so \(T < K\) is allowed.

    Parameters: the model ``kernel``, ``eta``, ``sigma`` (see ``BayesianAgent``); ``beta_scale`` (ours, not
    the paper's; default 1, the paper's \(\beta\)) multiplies \(\beta\). Horizon-aware (\(\beta\) reads \(T\)).

    When \(T < K\), eq. 9 is used as printed wherever its \(\beta^2\) is positive (``ModelSelection-v0``,
    \(K = 160\), at \(T = 10\) and 40, as the paper's §6.2). Where it is not (``CorrelatedBestArm-v0``:
    \((30 - 50) / 0.2^2 + 50 < 0\); the traffic presets at \(T = 100\) and 200 with \(K = 357\)), the paper gives
    no \(\beta\) and we drop the negative \(T - K\) term (ours; see ``exploration``).

    Readings where the paper is silent or inconsistent:

    - \(j(t)\): Algorithm 1 prints \(\operatorname*{arg\,min}_{k \ne J(t)} U_k\), but the text (the definition
      before eq. 7 and the best "runner up" arm after it) and the proofs (\(j(t)\) "has the highest upper bound
      other than \(J(t)\)") use the \(\operatorname{arg\,max}\); we use the \(\operatorname{arg\,max}\).
    - ties in \(J(t)\) and \(j(t)\): not specified; a random arm order per copy and episode
      (``tie_break="random"``, the default), or the smallest index with ``"index"``. Ties are frequent at round 1,
      where every arm has the same prior: the smallest-index rule made \(J(1)\) arm 0 whatever the instance.
    - ties in \(a_t\) (\(s_J = s_j\)): not specified; we pull \(J(t)\).
    - ties in the round of eq. 8: the earliest round with the smallest \(B_J\).
    - \(\beta\) at round 1: Algorithm 1 recomputes \(\beta\) after each observation; before the first we compute it
      from the prior. The answer before round 1 is the arm of largest prior mean (ties: the tie rule).
    - \(\kappa = \sum_k \lVert x_k \rVert^{-2} = \sum_k 1 / G_{kk}\) runs over the arms with \(G_{kk} > 0\) (an arm
      of zero prior variance would give 1/0).
    - numerical guards of ``exploration`` (not in the paper): a non-positive hardness term when \(\epsilon = 0\)
      (the paper's \(H_k\) would be 0 and \(\beta\) 0), and a non-positive \(\beta^2\).
    - the recorded rounds are \(t = 1, \dots, T\) (eq. 8's \(t \le T\)); the posterior after the \(T\)-th
      observation is not recorded.

    Examples:
        One seeded episode (correlated arms) and the record of ``RecordEpisodeRegret``
        that ``play_episode`` returns:

        >>> import gymnasium as gym
        >>> from bandit_gym.agents import BayesGap
        >>> from bandit_gym.rollout import play_episode
        >>> env = gym.make("CorrelatedBestArm-v0")
        >>> result = play_episode(env, BayesGap(), seed=0)
        >>> result["pulls"], round(result["regret"], 3)
        (30, 0.103)
    """

    anytime: ClassVar[bool] = False

    def __init__(self, kernel: Any = None, eta: float = 1.0, sigma: float = 1.0, beta_scale: float = 1.0,
                 tie_break: str = "random", prior_mean: float = 0.0) -> None:
        self.beta_scale = check.real("beta_scale", beta_scale, low=0.0, low_open=True)
        super().__init__(kernel, eta, sigma, tie_break=tie_break, prior_mean=prior_mean)

    def params(self) -> dict[str, Any]:
        params = {**super().params(), "beta_scale": self.beta_scale}
        del params["recommendation"]
        return params

    def allocate(self, n: int, k: int) -> None:
        super().allocate(n, k)
        diag = np.diag(self.posterior.kernel)
        self.kappa = float(np.sum(1.0 / diag[diag > 0]))
        self.best_gap = np.full(n, np.inf)   # smallest B_J(t) recorded
        self.best_arm = np.zeros(n, dtype=np.int64)  # its J(t)
        self.beta = np.ones(n)

    def begin(self, obs: Obs, rows: np.ndarray) -> None:
        super().begin(obs, rows)
        self.best_gap[rows] = np.inf
        self.best_arm[rows] = self.best(self.posterior.mean[rows], rows)  # the prior's best arm, before round 1

    def select(self, obs: Obs) -> np.ndarray:
        mean, std = self.posterior.mean, self.posterior.std()
        self.beta = self.beta_scale * exploration(mean, std, obs["epsilon"].astype(np.float64), self.total_budget,
                                                  self.kappa, self.sigma, self.eta)
        width = self.beta[:, None] * std
        upper, lower = mean + width, mean - width
        gap = others_max(upper) - lower
        J = self.best(gap, largest=False)
        rows = self.all_rows
        j = self.best(np.where(np.arange(mean.shape[1]) == J[:, None], -np.inf, upper))
        arms = np.where(std[rows, J] >= std[rows, j], J, j)
        # record (J(t), B_J(t)) for the rounds still to play (budget left), the earliest smallest B
        gap_J = gap[rows, J]
        better = (gap_J < self.best_gap) & (obs["budget_left"][:, 0] > 0)
        self.best_gap[better], self.best_arm[better] = gap_J[better], J[better]
        self.J, self.j = J, j
        return arms

    def answer(self, obs: Obs) -> np.ndarray:
        r"""\(\Omega_t\): the recorded \(J\) of smallest \(B_J\) so far (eq. 8), as answer bits."""
        return one_hot(self.best_arm, self.num_arms)
