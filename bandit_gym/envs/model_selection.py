"""Model selection under a budget of training runs (hoffman2014 §6.2): 160 scikit-learn regressors are the arms,
a pull trains one on a random 10% of the data and scores it on another 10%, the reward is minus the test RMSE,
and the answer is one model. Pulls sample a table of pre-computed rewards by default, or train for real."""

from __future__ import annotations

import functools
from typing import Any, ClassVar

import numpy as np

from bandit_gym import model_selection
from bandit_gym.envs._arms import Arms
from bandit_gym.envs._base import flag
from bandit_gym.envs.best_arm import BestArmEngine, BestArmIdentificationEnv, BestArmIdentificationVectorEnv


def split_index(u: Any, splits: int) -> np.ndarray:
    """The split a uniform u draws: ``floor(u S)`` (each of the S splits with probability 1/S)."""
    return np.minimum((np.asarray(u) * splits).astype(np.int64), splits - 1)


class TableArm:
    """One arm's rewards on the table's splits, as a distribution: a pull is one split drawn uniformly
    (``ppf(u)`` is the ``floor(u S)``-th smallest of the S rewards)."""

    def __init__(self, rewards: np.ndarray, support: tuple[float, float]) -> None:
        self.rewards = np.sort(rewards)
        self._mean = float(np.mean(rewards))  # in the table's order: the same float as table.mean(axis=1)
        self._support = support

    def ppf(self, u: Any) -> np.ndarray:
        return self.rewards[split_index(u, self.rewards.size)]

    def mean(self) -> float:
        return self._mean

    def support(self) -> tuple[float, float]:
        return self._support


@functools.lru_cache(maxsize=1)
def empirical_bayes_model() -> dict[str, Any]:
    """An ORACLE prior: the Gaussian model fitted to the reward table (the paper gives none), whose arm means are
    the very truth the runs are scored against: ``prior_mean`` the mean of the arm means, ``eta`` their standard
    deviation, ``sigma`` the root mean within-arm variance, and the §6.2 kernel. A learner would have to estimate
    these from its own pulls; agents built with it know the spread and level of the true means."""
    table = model_selection.load_table()
    means = table.mean(axis=1)
    return {"kernel": model_selection.model_kernel(), "eta": float(means.std()),
            "sigma": float(np.sqrt(table.var(axis=1, ddof=1).mean())), "prior_mean": float(means.mean())}


class TableArms(Arms):
    """The 160 models as custom arms (``TableArm``s): a pull draws one split of the reward table, for all pulls
    at once, or, ``live``, trains the model on a random split for real. Their ``sigma`` is the noise of the
    fitted model (``empirical_bayes_model``; no Gaussian draws here), for agents and renders."""

    def __init__(self, live: bool) -> None:
        table = model_selection.load_table()
        if live:  # predictions stay near the targets' range: RMSE <= 10 x range(y) in practice (checked)
            _, y = model_selection.load_data()
            support = (-10.0 * float(np.ptp(y)), 0.0)
        else:
            support = (float(table.min()), float(table.max()))
        arms = [TableArm(row, support) for row in table]
        super().__init__(None, distributions=arms, sigma=empirical_bayes_model()["sigma"])
        self.live = live
        self.sorted = np.stack([arm.rewards for arm in arms])

    def quantiles(self, arms: np.ndarray, u: np.ndarray) -> np.ndarray:
        """One split per pull: a table entry (vectorised), or a model trained for real (``live=True``)."""
        if not self.live:
            return self.sorted[arms, split_index(u, self.sorted.shape[1])]
        data = model_selection.load_data()
        out = np.array([model_selection.pull(int(a), np.random.default_rng(int(x * 2**53)), data)
                        for a, x in zip(np.ravel(arms), np.ravel(u), strict=True)])
        if np.any(out < self.support[0]):
            raise RuntimeError(f"a live pull scored RMSE {-out.min():.1f}, beyond the observation space's bound "
                               f"{-self.support[0]:.1f}")
        return out.reshape(np.shape(u))


class ModelSelectionEngine(BestArmEngine):
    """Batched state of the model-selection bandit (see ``ModelSelectionEnv``).

    A specialisation of ``BestArmEngine``: the problem is best-arm identification (m = 1, the same family and
    contract) on the table's arms (``TableArms``). It adds only those arms and the fitted model of the reset's
    info."""

    exposed: ClassVar[frozenset[str]] = BestArmEngine.exposed | {"kernel", "eta", "prior_mean", "live", "labels"}
    title: ClassVar[str] = "ModelSelection"

    def __init__(self, num: int, budget: int = 10, live: bool = False, epsilon: float = 0.0,
                 loss: str = "simple_regret", sample_cost: float = 0.0, common_random_numbers: bool = False) -> None:
        self.live = flag("live", live)
        super().__init__(num, m=1, epsilon=epsilon, budget=budget, loss=loss, sample_cost=sample_cost,
                         common_random_numbers=common_random_numbers)
        model = empirical_bayes_model()
        self.kernel, self.eta, self.prior_mean = model["kernel"], model["eta"], model["prior_mean"]
        self.labels = tuple(arm.label for arm in model_selection.MODELS)

    def _arms(self, means: Any, arm_distribution: str | None, sigma: float, distributions: Any) -> Arms:
        """The table's arms (the constructor passes none of these arguments)."""
        return TableArms(self.live)

    def reset_info(self) -> dict[str, Any]:
        """The ORACLE Gaussian model fitted to the table (its means are the truth), from which a Bayesian agent
        can be built (a fresh copy)."""
        return {"model": {"kernel": self.kernel.copy(), "eta": self.eta, "sigma": self.sigma,
                          "prior_mean": self.prior_mean}}


class ModelSelectionEnv(BestArmIdentificationEnv):
    r"""Model selection among 160 scikit-learn regressors under a budget of training runs (hoffman2014).

    ## Description
    Automatic model selection as a bandit (Hoffman, Shahriari, de Freitas 2014, §6.2), on **scikit-learn's diabetes
    data** (\(442 \times 10\), real, bundled): the paper's Wine Quality data is not available offline. The 160 arms are
    the paper's grid of regressors (``bandit_gym.model_selection.MODELS``: 8 Lasso, 64 random forests, 16 linear SVR, 64
    RBF SVR, 8 k-NN; ``min_samples_split=1`` is built as 2, which modern scikit-learn requires). A pull trains the model
    on a random 10% of the rows and scores it on another 10%; the observed value (``obs["last_value"]``) is minus the
    test RMSE. By default a pull draws one of the \(S \ge 100\) splits of a pre-computed table
    (``scripts/make_model_selection_table.py``, package data); ``live=True`` trains for real (scikit-learn needed;
    slow). The arms' true means are the table's means (minus the mean RMSE of each model), the same in both modes.

    ## Action Space
    ``MultiDiscrete([161] + [2] * 160)``: the model to train (160 stops), then the recommended model as one bit.
    ``env.action_space.sample()`` draws the stop action 160 with probability \(1 / 161\), so a random policy ends its
    episode after about 161 steps and its answer bits are random; ``bandit_gym.wrappers.EmpiricalAnswer(env)``
    (``Discrete(160)``, no stop, the empirical answer) is the space to sample from.

    ## Observation Space
    As ``BestArmIdentification-v0`` with \(K = 160\) and \(m = 1\).

    ## Rewards
    0 per pull (the pull's value, minus the test RMSE, is observed in ``obs["last_value"]``, as in every
    pure-exploration env); on the answer step minus the simple regret
    \(\mathrm{RMSE}(\text{answer}) - \mathrm{RMSE}(\text{best})\) (default) or the error indicator (``loss="error"``).

    ## Episode End
    Terminates on the answer step after ``budget`` pulls, or on the stop action.

    ## Information
    ``reset`` returns ``info["model"] = {"kernel", "eta", "sigma", "prior_mean"}``: the paper's kernel (squared
    exponential of unit length within a family, zero across families; its inputs, normalised grid coordinates, are our
    reading) with a Gaussian model fitted to the table (prior mean and \(\eta\): the mean and spread of the 160 mean
    rewards; \(\sigma\): the root mean within-arm variance; the paper gives none). It is an ORACLE prior: fitted to the
    true means the runs are scored against. ``BayesGap(**info["model"])`` uses it. ``env.unwrapped.labels`` names the
    models.

    ## Arguments

    | argument | default | meaning |
    |---|---|---|
    | ``budget`` | 10 | training runs \(T\) (the paper: 10 and 40), \(1 \le T \le\) ``MAX_BUDGET`` \(= 2^{24}\) |
    | ``live`` | False | train for real instead of sampling the table |
    | ``epsilon`` | 0.0 | tolerance of the error loss (RMSE units) |
    | ``loss`` | ``"simple_regret"`` | or ``"error"`` |
    | ``sample_cost``, ``common_random_numbers`` | 0.0, False | as ``BestArmIdentification-v0`` |

    ```python
    import gymnasium as gym
    env = gym.make("bandit_gym:ModelSelection-v0", budget=40)
    obs, info = env.reset(seed=0)
    from bandit_gym.agents import BayesGap
    agent = BayesGap(**info["model"])
    ```

    ## References
    M. W. Hoffman, B. Shahriari, N. de Freitas. On correlation and budget constraints in model-based bandit optimization
    with application to automatic machine learning. AISTATS 2014. B. Efron et al. Least angle regression. Annals of
    Statistics 2004 (the diabetes data).

    ## Version History
    * v0: initial version.

    Examples:
        >>> import gymnasium as gym
        >>> import numpy as np
        >>> import bandit_gym
        >>> env = gym.make("ModelSelection-v0")
        >>> obs, info = env.reset(seed=0)
        >>> sorted(obs)
        ['budget_left', 'counts', 'epsilon', 'last_arm', 'last_value', 'm', 'means', 'sums']
        >>> env.action_space.shape, int(env.action_space.nvec[0])  # the arm (K: stop), then K answer bits
        ((161,), 161)
        >>> K = env.unwrapped.num_arms
        >>> obs, reward, terminated, truncated, info = env.step(np.zeros(K + 1, dtype=np.int64))  # pull arm 0
        >>> int(obs["counts"][0]), float(obs["budget_left"][0])
        (1, 9.0)
    """

    engine_class = ModelSelectionEngine


class ModelSelectionVectorEnv(BestArmIdentificationVectorEnv):
    """``num_envs`` copies of ``ModelSelectionEnv`` advanced with array operations (table sampling).

    Examples:
        >>> import gymnasium as gym
        >>> import bandit_gym
        >>> envs = gym.make_vec("ModelSelection-v0", num_envs=4, vectorization_mode="vector_entry_point")
        >>> obs, info = envs.reset(seed=0)
        >>> obs["counts"].shape
        (4, 160)
    """

    engine_class = ModelSelectionEngine
