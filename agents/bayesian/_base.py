"""The base class of the Bayesian agents (hoffman2014): a Gaussian posterior over the arms per copy, updated from
each step's observation, an acquisition rule that picks the arm, and the recommendation."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from bandit_gym import _validation as check
from bandit_gym.agents.base import Agent, Obs, plays
from bandit_gym.agents.bayesian._posterior import GaussianPosterior, check_prior_variance, check_scale
from bandit_gym.covariances import resolve_kernel
from bandit_gym.families import Family

RECOMMENDATIONS = ("latent", "incumbent")
"""``"latent"``: the largest posterior mean over all arms (best_latent of the authors' later library pybo);
``"incumbent"``: over the arms pulled so far (pybo's best_incumbent), all arms before the first pull. hoffman2014
does not say how its cumulative-regret baselines recommend; with correlated arms the two differ.
"""


class BayesianAgent(Agent):
    r"""Base of the Bayesian agents of best-arm identification with correlated arms (\(m = 1\)).

    The agent's own model (hoffman2014 §4, eq. 2-5): ``kernel`` (a \(K \times K\) positive semi-definite matrix
    \(G\), a name of ``bandit_gym.covariances.KERNELS``, or None for independent arms, \(G = I\)), prior scale
    \(\eta\) (``eta``), noise \(\sigma\) (``sigma``) and ``prior_mean``: the prior
    \(\mu \sim \mathcal{N}(\text{prior\_mean}, \eta^2 G)\) and rewards \(\mathcal{N}(\mu_a, \sigma^2)\).
    It may differ from the env's generating model (``reset`` info ``"model"`` holds that one:
    ``Agent(**info["model"])``). ``eta`` and ``sigma`` lie in ``SCALE_RANGE`` = \([10^{-75}, 10^{75}]\) and the
    prior variances \(\eta^2 G_{kk}\) below ``PRIOR_VARIANCE_MAX`` = \(10^{154}\)
    (``bandit_gym.agents.bayesian._posterior``): beyond them the posterior's products and ratios of variances
    leave float64 (``eta=1e-300`` made BayesGap divide by zero); the constructor refuses them.

    Every step updates the posterior of each copy with the previous step's observation (``last_arm``,
    ``last_value``) by one rank-one step, or rebuilds it from ``counts`` and ``sums`` after a batched allocation;
    then ``select`` picks the arm from the posterior and ``answer`` gives the recommendation.

    Readings shared by the subclasses, where the papers are silent:

    - prior mean: 0 in the paper; ``prior_mean`` (default 0) is ours, for rewards far from 0 (the paper does not
      mention centring the data).
    - initialisation: no forced pulls; round 1 starts from the prior (BayesGap's paper says correlation makes
      pulling every arm unnecessary; for the baselines the paper is silent). So \(T < K\) is allowed.
    - recommendation of the baselines: hoffman2014 does not say how they recommend; the largest posterior mean
      over all arms (``recommendation="latent"``, default) or over the arms pulled so far (``"incumbent"``; all
      arms before the first pull). Ties: the agent's tie rule.
    - ties in every \(\operatorname{arg\,max}\) / \(\operatorname{arg\,min}\): the agent's tie rule, a random arm
      order per copy and episode (default) or the smallest index (``tie_break="index"``).
    - answer before the end: the current recommendation, submitted at every step; only the one after the
      \(T\)-th pull is scored.
    """

    families: ClassVar[tuple[str, ...]] = ("best_arm",)
    #: the posterior's storage (``"factor"`` where joint samples are needed)
    form: ClassVar[str] = "covariance"

    def __init__(self, kernel: Any = None, eta: float = 1.0, sigma: float = 1.0, recommendation: str = "latent",
                 tie_break: str = "random", prior_mean: float = 0.0) -> None:
        self.kernel = None if kernel is None else resolve_kernel(kernel)
        self.prior_mean = check.real("prior_mean", prior_mean)
        self.kernel_name = kernel if isinstance(kernel, str) else None
        self.eta = check_scale("eta", eta)
        self.sigma = check_scale("sigma", sigma)
        if self.kernel is not None:
            check_prior_variance(self.kernel, self.eta)
        self.recommendation = check.choice("recommendation", recommendation, RECOMMENDATIONS)
        super().__init__(tie_break=tie_break)

    def params(self) -> dict[str, Any]:
        """The parameters; a kernel passed as a matrix shows as ``"<K x K matrix>"``."""
        k = None if self.kernel is None else self.kernel.shape[0]
        kernel = self.kernel_name or (None if k is None else f"<{k} x {k} matrix>")
        return {"kernel": kernel, "eta": self.eta, "sigma": self.sigma, "prior_mean": self.prior_mean,
                "recommendation": self.recommendation, "tie_break": self.tie_break}

    # ----------------------------------------------------------------------------------------------- state
    def allocate(self, n: int, k: int) -> None:
        if self.kernel is not None and self.kernel.shape[0] != k:
            raise ValueError(f"{type(self).__name__}'s kernel is {self.kernel.shape[0]} x {self.kernel.shape[0]} but "
                             f"the env has K={k} arms")
        kernel = np.eye(k) if self.kernel is None else self.kernel
        self.posterior = GaussianPosterior(kernel, self.eta, self.sigma, n, self.form, self.prior_mean)
        self.order = self.new_scores()  # each copy's arm order: the tie rule of every argmax / argmin
        self.all_rows = np.arange(n)

    def begin(self, obs: Obs, rows: np.ndarray) -> None:
        self.posterior.reset(rows)

    def best(self, values: np.ndarray, rows: np.ndarray | None = None, largest: bool = True) -> np.ndarray:
        """The arm of largest (smallest) ``values`` in each copy ``rows`` (all by default), ties by the tie rule."""
        return self.order.best_of(self.all_rows if rows is None else rows, values, largest)

    # ----------------------------------------------------------------------------------------------- step
    @plays("select", "stop")
    def _act_batch(self, obs: Obs, last: np.ndarray, family: Family) -> np.ndarray:
        """Each copy's posterior updated with the previous step's observation (``observe``), then the step of
        every agent: ``select``, ``stop`` and ``answer`` (a subclass's own are played)."""
        m = int(obs["m"][0, 0])
        if m != 1:
            raise ValueError(f"{type(self).__name__} identifies one best arm (m = 1); this env asks for m={m}")
        self.observe(obs, last)
        return self._plain_step(obs, last, family)

    def observe(self, obs: Obs, last: np.ndarray) -> None:
        """Update the posterior with the previous step's observation ``obs["last_value"]`` at ``last`` (the
        previous arm per copy); rebuild it from ``counts`` and ``sums`` after a batched allocation (-2)."""
        pulled = np.flatnonzero(last >= 0)
        if pulled.size:
            self.posterior.update(pulled, last[pulled].astype(np.int64), obs["last_value"][pulled, 0])
        allocated = np.flatnonzero(last == -2)
        if allocated.size:
            self.posterior.rebuild(allocated, obs["counts"][allocated], obs["sums"][allocated])

    def round(self, obs: Obs) -> np.ndarray:
        r"""The round \(t\) of every copy, (N,): 1 before the first pull, \(T + 1\) on the answer step."""
        return self.total_budget - obs["budget_left"][:, 0].astype(np.int64) + 1

    def select(self, obs: Obs) -> np.ndarray:
        """The arm to pull in every copy (N,) from its posterior (``self.posterior``, updated with every
        observation so far); on the answer step it is ignored."""
        raise NotImplementedError

    def answer(self, obs: Obs) -> np.ndarray:
        """The recommendation as answer bits (N, K): the largest posterior mean, over all arms or the pulled ones
        (``recommendation``), ties by the tie rule."""
        return one_hot(self.best(self.pulled_means(obs) if self.recommendation == "incumbent"
                                 else self.posterior.mean), self.num_arms)

    def pulled_means(self, obs: Obs) -> np.ndarray:
        r"""The posterior means of the arms pulled so far, \(-\infty\) elsewhere (all arms before the first pull)."""
        pulled = obs["counts"] > 0
        return np.where(pulled | ~pulled.any(axis=1, keepdims=True), self.posterior.mean, -np.inf)

    def incumbent_value(self, obs: Obs) -> np.ndarray:
        r"""\(\mu^+\): the largest posterior mean among the arms pulled so far (all arms before the first pull),
        (N, 1)."""
        return self.pulled_means(obs).max(axis=1, keepdims=True)


def one_hot(arms: np.ndarray, k: int) -> np.ndarray:
    """Answer bits (N, K): 1 at ``arms[n]`` in row ``n``."""
    bits = np.zeros((arms.size, k), dtype=np.int64)
    bits[np.arange(arms.size), arms] = 1
    return bits


def improvement(posterior: GaussianPosterior, incumbent: np.ndarray,
                xi: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    r"""The improvement of EI and PI over the incumbent \(\mu^+\) (``BayesianAgent.incumbent_value``, (N, 1)) by a
    margin \(\xi\) (``xi``): \(d = \mu - \mu^+ - \xi\), \(z = d / s\) (0 where \(s = 0\)), \(s\), and the mask of arms
    with \(s > 0\), each (N, K); \(\mu\) and \(s\) the ``posterior``'s means and standard deviations."""
    std = posterior.std()
    d = posterior.mean - incumbent - xi
    uncertain = std > 0
    return d, np.divide(d, std, out=np.zeros_like(d), where=uncertain), std, uncertain
