r"""Fixed-budget best-arm identification with correlated Gaussian arms (hoffman2014): the arm means are drawn per
episode from a Gaussian-process prior \(\mathcal{N}(0, \eta^2 G)\) over the arms, from data (synthetic traffic speed
profiles), or fixed; the budget may be smaller than the number of arms, and the answer is one arm."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from bandit_gym import _validation as check
from bandit_gym.covariances import (
    KERNEL_COPIES,
    GaussianProcessMeans,
    resolve_kernel,
    resolve_means,
    squared_exponential,
)
from bandit_gym.envs.best_arm import BestArmEngine, BestArmIdentificationEnv, BestArmIdentificationVectorEnv

#: the default instance: 50 arms evenly spaced on [0, 1], squared-exponential kernel of length 0.1
DEFAULT_ARMS, DEFAULT_LENGTH = 50, 0.1


class CorrelatedBestArmEngine(BestArmEngine):
    """Batched state of correlated best-arm identification (see ``CorrelatedBestArmEnv``).

    A specialisation of ``BestArmEngine``: the problem is best-arm identification (m = 1, the same family and
    contract) on Gaussian arms whose means come from a Gaussian-process prior over them (its arms' sampler,
    ``GaussianProcessMeans``), from data or fixed. It adds only the kernel and its checks, and the model in the
    reset's info."""

    plot_axes = "correlated"  # hoffman2014's figures: a linear budget axis, simple regret first

    exposed: ClassVar[frozenset[str]] = BestArmEngine.exposed | {"kernel", "eta"}
    title: ClassVar[str] = "CorrelatedBestArm"

    def __init__(
        self,
        num: int,
        means: Any = None,
        kernel: Any = None,
        locations: Any = None,
        length_scale: float = DEFAULT_LENGTH,
        eta: float = 1.0,
        sigma: float = 0.2,
        epsilon: float = 0.0,
        budget: int = 30,
        loss: str = "simple_regret",
        sample_cost: float = 0.0,
        common_random_numbers: bool = False,
    ) -> None:
        if kernel is not None and locations is not None:
            raise ValueError("pass kernel= (a K x K matrix or a name) or locations= (for the squared-exponential "
                             "kernel), not both")
        if kernel is None:
            where = np.linspace(0.0, 1.0, DEFAULT_ARMS) if locations is None else locations
            kernel = squared_exponential(where, check.real("length_scale", length_scale, low=0.0, low_open=True))
        self.kernel = resolve_kernel(kernel)
        self.eta = check.real("eta", eta, low=0.0, low_open=True)
        k = check.arm_count("kernel", self.kernel.shape[0])
        # num copies of K arms and the K x K arrays of the prior (its factor is computed next), before allocating
        check.check_env_memory(check.integer("num_envs", num, minimum=1), k, shared=KERNEL_COPIES * 8 * k * k)
        if isinstance(means, str):
            means = resolve_means(means)
        super().__init__(num, means=GaussianProcessMeans(self.kernel, self.eta) if means is None else means, m=1,
                         epsilon=epsilon, budget=budget, arm_distribution="gaussian",
                         sigma=check.real("sigma", sigma, low=0.0, low_open=True), loss=loss,  # one: the GP's noise
                         sample_cost=sample_cost, common_random_numbers=common_random_numbers)
        if self.num_arms != self.kernel.shape[0]:
            raise ValueError(f"means has {self.num_arms} arms but the kernel is {self.kernel.shape[0]} x "
                             f"{self.kernel.shape[0]}")
        self.memory = (k, 0, KERNEL_COPIES * 8 * k * k)

    def reset_info(self) -> dict[str, Any]:
        """The model ``(kernel, eta, sigma)``, from which a Bayesian agent can be built: ``Agent(**info["model"])``
        (a fresh copy of the kernel at every reset, as Gymnasium asks of returned data). It is the generating
        model when the means are drawn from the prior (the default); with means from data or fixed it is only the
        agents' model."""
        return {"model": {"kernel": self.kernel.copy(), "eta": self.eta, "sigma": self.sigma}}


class CorrelatedBestArmEnv(BestArmIdentificationEnv):
    r"""Fixed-budget best-arm identification with Gaussian-process correlated arms (hoffman2014).

    ## Description
    Fixed-budget best-arm identification with correlated arms (Hoffman, Shahriari, de Freitas 2014): \(K\) arms with
    Gaussian rewards \(\mathcal{N}(\mu_k, \sigma^2)\) whose means are correlated through a kernel \(G\) over the arms.
    By default each episode draws the means from the Gaussian-process prior \(\mathcal{N}(0, \eta^2 G)\) with the env's
    generator; ``means`` may instead be fixed, a sampler, or a named data set (the synthetic traffic speeds of
    ``bandit_gym.covariances.traffic_speeds``: one speed profile per episode, as hoffman2014 §6.1 evaluates). After
    ``budget`` pulls, which may be fewer than \(K\), the agent recommends one arm. Nothing is revealed about the arms
    but the pulls' rewards.

    The traffic presets (\(K = 357\) sensors, \(T = 400\), \(\eta = 20\), \(\epsilon = 0\); the paper's sensor data is
    not available offline, so both are **synthetic**):

    - ``CorrelatedBestArm-TrafficSynthetic-v1``, the paper's recipe: the arms' means are the 840 held-out profiles of
      simulated speeds (mph; 21 working days, 6:00-11:00, every 2.5 minutes; the last 7 days), one drawn uniformly per
      episode (``means="traffic-held-out"``). The agents' model is built from the 1680 historical profiles (the first 14
      days) only: \(G\) (``kernel="traffic-speeds"``) is their empirical covariance, not rescaled (mean diagonal 92.4
      \(\text{mph}^2\)), \(\sigma^2\) = 5% of its mean diagonal (4.62; the paper's was 4.78), \(\eta = 20\),
      prior mean 0. The means are data, not draws from that prior (they sit near 58 mph, and spread about
      \(\eta^2 = 400\) times less than it says): the model is misspecified, as in the paper.
    - ``CorrelatedBestArm-TrafficSynthetic-v0``, the well-specified setting: \(G\) is the unit-mean-diagonal covariance
      of another simulation (``kernel="traffic-synthetic"``), and each episode's means are a draw from the agents' own
      prior \(\mathcal{N}(0, 20^2 G)\), \(\sigma^2\) = 5% of the prior variance (20). Kept unchanged.

    ## Action Space
    ``MultiDiscrete([K + 1] + [2] * K)``: ``action[0]`` is the arm to pull (``K``, stop, ends the episode early);
    ``action[1:]`` the current recommendation, one bit per arm, exactly one set (anything else is the worst answer and
    is flagged in ``info["invalid_answer"]``). After the last pull the next step is the answer step.
    ``env.action_space.sample()`` draws the stop action ``K`` with probability \(1 / (K + 1)\), so a random policy ends
    its episode after about \(K + 1\) steps (one step in eleven at \(K = 10\)) and its answer bits are random;
    ``bandit_gym.wrappers.EmpiricalAnswer(env)`` (``Discrete(K)``, no stop, the empirical answer) is the space to sample
    from.

    ## Observation Space
    As ``BestArmIdentification-v0`` (``m`` = 1, ``epsilon``, ``budget_left``, ``last_arm``, ``last_value``, ``counts``,
    ``sums``, ``means``): a Bayesian agent updates its posterior from ``last_arm`` and ``last_value``, or rebuilds it
    from ``counts`` and ``sums`` (they are sufficient for Gaussian rewards).

    ## Rewards
    ``-sample_cost`` per pull; on the answer step minus the simple regret \(\mu^* - \mu_{\text{answer}}\) (default) or
    the error indicator \(\mathbb{1}\{\mu^* - \mu_{\text{answer}} > \epsilon\}\) (``loss="error"``).

    ## Episode End
    Terminates on the answer step after ``budget`` pulls, or on the stop action.

    ## Information
    ``reset`` returns ``info["model"] = {"kernel": G, "eta": eta, "sigma": sigma}`` (also the attributes
    ``env.unwrapped.kernel``, ``.eta``, ``.sigma``), from which ``BayesGap(**info["model"])`` builds an agent. With
    means from the prior it is the generating model (a well-specified agent); with means from data (v1) or fixed it is
    the agents' model only, the paper's, and not how the means are made. An agent may be given another model.
    ``info["invalid_answer"]`` on every step.

    ## Arguments

    | argument | default | meaning |
    |---|---|---|
    | ``kernel`` | squared exponential | \(K{\times}K\) positive semi-definite matrix or a ``covariances.KERNELS`` name
    | ``locations`` | 50 points on \([0, 1]\) | arm locations ``(K,)`` or ``(K, d)`` for the squared-exponential kernel
    | ``length_scale`` | 0.1 | its length \(\ell\): \(G_{ij} = \exp(-\lVert x_i - x_j \rVert^2 / \ell^2)\) |
    | ``eta`` | 1.0 | prior scale: \(\mu \sim \mathcal{N}(0, \eta^2 G)\) |
    | ``sigma`` | 0.2 | reward noise standard deviation |
    | ``means`` | None | fixed means (\(K\)), a sampler ``(rng, n) -> (n, K)`` or a name (below); None: prior draws |
    | ``epsilon`` | 0.0 | tolerance of the error loss |
    | ``budget`` | 30 | \(1\le T\le 2^{24}\) (``MAX_BUDGET``), may be below \(K\); ``BudgetRange`` draws it per episode
    | ``loss`` | ``"simple_regret"`` | or ``"error"`` |
    | ``sample_cost``, ``common_random_numbers`` | 0.0, False | as ``BestArmIdentification-v0`` |

    Sizes (``bandit_gym._validation``): \(2 \le K \le\) ``MAX_ARMS`` = 65,536 arms, and the memory of ``num_envs``
    copies of \(K\) arms plus the \(K \times K\) arrays of the kernel and its factor (``covariances.KERNEL_COPIES`` of
    them) at most ``memory_limit()``, checked before the kernel is built or factored and before anything per copy is
    allocated.

    Named means (``bandit_gym.covariances.resolve_means``; \(K = 357\), with ``kernel="traffic-speeds"``):
    ``"traffic-held-out"`` draws one of the 840 held-out speed profiles uniformly per episode with the env's generator,
    ``"traffic-historical"`` one of the 1680 historical ones (a tuning set), and ``"NAME@s"`` deals them out one each
    instead: the \(n\) copies of a reset play runs \(s, \dots, s + n - 1\) of a fixed shuffled order
    (``bandit_gym.covariances.traffic_run_order``), so that 840 runs in blocks play every held-out profile once.

    ```python
    import gymnasium as gym
    env = gym.make("bandit_gym:CorrelatedBestArm-v0")
    obs, info = env.reset(seed=0)
    from bandit_gym.agents import BayesGap
    agent = BayesGap(**info["model"])
    env = gym.make("bandit_gym:CorrelatedBestArm-TrafficSynthetic-v1")  # K = 357, T = 400, SYNTHETIC data
    obs, info = env.reset(seed=0)  # the means: one held-out speed profile; info["model"]: the agents' model
    ```

    ## References
    M. W. Hoffman, B. Shahriari, N. de Freitas. On correlation and budget constraints in model-based bandit optimization
    with application to automatic machine learning. AISTATS 2014.

    ## Version History
    * ``CorrelatedBestArm-v0``: initial version.
    * ``CorrelatedBestArm-TrafficSynthetic-v0``: the means are drawn each episode from the agents' own prior
      \(\mathcal{N}(0, 20^2 G)\) (\(G\): ``"traffic-synthetic"``, unit mean diagonal; \(\sigma^2 = 20\)): the
      well-specified setting, which makes the prior exactly right. Kept unchanged; Gymnasium reports it as out of date.
    * ``CorrelatedBestArm-TrafficSynthetic-v1``: the paper's recipe on synthetic speed data: the means are held-out
      speed profiles (data, not prior draws), G the covariance of the historical profiles (not rescaled), \(\sigma^2\) =
      5% of its mean diagonal.

    Examples:
        >>> import gymnasium as gym
        >>> import numpy as np
        >>> import bandit_gym
        >>> env = gym.make("CorrelatedBestArm-v0")
        >>> obs, info = env.reset(seed=0)
        >>> sorted(obs)
        ['budget_left', 'counts', 'epsilon', 'last_arm', 'last_value', 'm', 'means', 'sums']
        >>> env.action_space.shape, int(env.action_space.nvec[0])  # the arm (K: stop), then K answer bits
        ((51,), 51)
        >>> K = env.unwrapped.num_arms
        >>> obs, reward, terminated, truncated, info = env.step(np.zeros(K + 1, dtype=np.int64))  # pull arm 0
        >>> int(obs["counts"][0]), float(obs["budget_left"][0])
        (1, 29.0)
    """

    engine_class = CorrelatedBestArmEngine


class CorrelatedBestArmVectorEnv(BestArmIdentificationVectorEnv):
    """``num_envs`` copies of ``CorrelatedBestArmEnv`` advanced with array operations.

    Examples:
        >>> import gymnasium as gym
        >>> import bandit_gym
        >>> envs = gym.make_vec("CorrelatedBestArm-v0", num_envs=4, vectorization_mode="vector_entry_point")
        >>> obs, info = envs.reset(seed=0)
        >>> obs["counts"].shape
        (4, 50)
    """

    engine_class = CorrelatedBestArmEngine
