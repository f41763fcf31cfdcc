r"""\(\epsilon\)-top-\(K\) identification of chen2017: return \(K\) arms whose mean sum is within \(K \epsilon\) of the
best \(K\) arms' (aggregate regret), after a fixed budget of pulls or, stopping when confident, within a cap. The same
core as ``bandit_gym.envs.best_arm`` (the same problem with another loss), with the arm order shuffled per episode."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces

from bandit_gym import _validation as check
from bandit_gym import metrics
from bandit_gym.envs._pulls import box
from bandit_gym.envs.best_arm import BestArmEngine, BestArmIdentificationEnv, BestArmIdentificationVectorEnv
from bandit_gym.families import Family
from bandit_gym.instances import chen2017_means
from bandit_gym.metrics import top_k_hardness

TOP_K_LOSSES = ("aggregate_regret", "error")


class TopKEngine(BestArmEngine):
    r"""Batched state of \(\epsilon\)-top-\(K\) identification (see ``TopKIdentificationEnv``).

    A specialisation of ``BestArmEngine``, not a reuse of its code: \(\epsilon\)-top-\(K\) identification is
    \((\epsilon, m)\)-best arm identification with \(m = K\), the same problem (the same answer of \(K\) arms, pulls,
    settings, invalid answers and arms) scored by another loss, chen2017's aggregate regret. It changes only that: its
    family and losses, the confidence \(\delta\) in the observation, and its defaults (shuffled arms, chen2017's
    instance)."""

    family = Family.TOP_K
    exposed: ClassVar[frozenset[str]] = BestArmEngine.exposed | {"k", "delta"}
    default_means: ClassVar[tuple[float, ...]] = tuple(chen2017_means("Uniform", 100, 10))
    set_size_name: ClassVar[str] = "k"

    #: the base's argument this engine sets itself (m = k): not an argument of the top-K envs
    derived_arguments: ClassVar[tuple[str, ...]] = ("m",)

    def __init__(
        self,
        num: int,
        means: Any = None,
        k: int = 10,
        epsilon: float = 0.01,
        delta: float = 0.01,
        budget: int = 20000,
        setting: str = "fixed_budget",
        loss: str = "aggregate_regret",
        shuffle: bool = True,
        **kwargs: Any,
    ) -> None:
        self.delta = check.real("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)
        self.top_loss = check.choice("loss", loss, TOP_K_LOSSES)
        super().__init__(num, means=means, m=k, epsilon=epsilon, budget=budget, setting=setting, shuffle=shuffle,
                         **kwargs)
        self.k = self.m
        self.loss = self.top_loss
        self.obs["delta"] = np.full((self.num, 1), self.delta, dtype=np.float32)

    def _warn_if_not_unique(self) -> None:
        """Top-K with epsilon > 0 needs no unique top set; chen2017's experiments use epsilon = 0.01."""

    def observation_space(self) -> spaces.Dict:
        return spaces.Dict({**super().observation_space().spaces, "delta": box(0.0, 1.0)})

    def episode_loss(self, answer: np.ndarray, means: np.ndarray) -> np.ndarray:
        r"""Aggregate regret (default) or the failure indicator \(\mathbb{1}\{R > \epsilon\}\) of final answers."""
        if self.top_loss == "aggregate_regret":
            return metrics.top_k_regret(answer, means, self.k)
        return metrics.top_k_error(answer, means, self.k, self.epsilon).astype(np.float64)

    def answer_metrics(self, answer: np.ndarray, means: np.ndarray) -> dict[str, np.ndarray]:
        r"""``regret`` (aggregate regret \(R\)), ``error`` (\(\mathbb{1}\{R > \epsilon\}\)) and ``invalid`` (not
        \(K\) arms)."""
        return {"regret": metrics.top_k_regret(answer, means, self.k),
                "error": metrics.top_k_error(answer, means, self.k, self.epsilon).astype(np.float64),
                "invalid": (np.asarray(answer).sum(axis=-1) != self.k).astype(np.float64)}

    def oracle_values(self, means: np.ndarray | None = None) -> dict[str, float]:
        r"""``H``: the hardness \(H^{(t, \epsilon)}\) of chen2017 (eq. 6) of the fixed instance; ``t``:
        \(t(\epsilon, K)\)."""
        means = self.fixed_means if means is None else means  # or those of one episode, passed in
        if means is None:
            raise ValueError("oracle parameters need a fixed instance, but this env draws its instance per episode")
        t, hardness = top_k_hardness(means, self.k, self.epsilon)
        return {"H": hardness, "t": float(t)}


class TopKIdentificationEnv(BestArmIdentificationEnv):
    r"""\(\epsilon\)-top-\(K\) identification with aggregate regret (chen2017).

    ## Description
    \(\epsilon\)-top-\(K\) identification with aggregate regret (Chen, Chen, Zhang, Zhou 2017): \(n\) arms with
    unknown means; the agent returns \(K\) arms, and its aggregate regret is
    \(R = \frac{1}{K} \big(\text{sum of the } K \text{ best means} - \text{sum of the answer's means}\big)\)
    (eq. 1); it fails when \(R > \epsilon\) (the failure of the experiments, §3). Arm
    indices are shuffled at every reset, so an index carries no information. Fixed budget (``budget`` pulls; the
    experiments' setting, §3) or fixed confidence (the PAC setting of the theory, §1: stop action; ``budget`` is a
    cap, reaching which truncates the episode). The paper's rewards lie in \([0, 1]\) and its experiments do not name
    their law: Bernoulli by default. The same core as ``BestArmIdentification-v0`` with this loss.

    ## Action Space
    ``MultiDiscrete([n + 1] + [2] * n)``: ``action[0]`` the arm to pull or ``n`` to stop; ``action[1:]`` the
    current answer, exactly \(K\) ones (any other answer counts as the worst set, the \(K\) smallest means, and is
    flagged in ``info["invalid_answer"]``). Batched pulls: ``env.unwrapped.allocate(c)``.
    ``env.action_space.sample()`` draws the stop action ``n`` with probability \(1 / (n + 1)\), so a random policy
    ends its episode after about \(n + 1\) steps and its answer bits are random;
    ``bandit_gym.wrappers.EmpiricalAnswer(env)`` (``Discrete(n)``, no stop, the empirical answer) is the space
    to sample from.

    ## Observation Space
    A ``Dict`` of 1-D float32 ``Box`` spaces: ``m`` (\(= K\), the number of arms to return), ``epsilon``,
    ``delta`` (the confidence a PAC agent is asked for), ``budget_left``, ``last_arm`` (-1 at the start, -2
    after ``allocate``), ``last_value``, ``counts``, ``sums``, ``means`` (\(n\) each). The true means never appear.

    ## Rewards
    ``-sample_cost`` per pull; minus the loss of the final answer on the answer step: the aggregate regret \(R\)
    (default) or \(\mathbb{1}\{R > \epsilon\}\).

    ## Episode End
    As ``BestArmIdentification-v0``.

    ## Information
    ``info["invalid_answer"]``; ``bandit_gym.wrappers.RecordEpisodeRegret`` adds regret, error, pulls at the end.

    ## Arguments

    | argument | default | meaning |
    |---|---|---|
    | ``means`` | UNIFORM, \(n=100\) | \(n\le\) ``MAX_ARMS`` = 65,536 means (shuffled) or a sampler ``(rng, N)->(N, n)``
    | ``k`` | 10 | \(K\), arms to return, \(1 \le K < n\) |
    | ``epsilon`` | 0.01 | tolerance on \(R\) |
    | ``delta`` | 0.01 | confidence asked of PAC agents (in the observation) |
    | ``budget`` | 20000 | pulls \(Q\) (fixed budget) or cap (fixed confidence), ≤ ``MAX_BUDGET``; or ``BudgetRange``
    | ``setting`` | ``"fixed_budget"`` | or ``"fixed_confidence"`` |
    | ``loss`` | ``"aggregate_regret"`` | or ``"error"`` |
    | ``shuffle`` | True | shuffle the arm order per episode |
    | ``arm_distribution``, ``sigma``, ``distributions`` | | as ``BestArmIdentification-v0`` |
    | ``sample_cost``, ``common_random_numbers`` | | as ``BestArmIdentification-v0`` |

    ```python
    import gymnasium as gym
    env = gym.make("bandit_gym:TopKIdentification-Chen2017TwoGroupK100-v0", budget=100000)
    ```

    ## References
    J. Chen, X. Chen, Q. Zhang, Y. Zhou. Adaptive Multiple-Arm Identification. ICML 2017.

    ## Version History
    * v0: initial version.

    Examples:
        >>> import gymnasium as gym
        >>> import numpy as np
        >>> import bandit_gym
        >>> env = gym.make("TopKIdentification-v0")
        >>> obs, info = env.reset(seed=0)
        >>> sorted(obs)
        ['budget_left', 'counts', 'delta', 'epsilon', 'last_arm', 'last_value', 'm', 'means', 'sums']
        >>> env.action_space.shape, int(env.action_space.nvec[0])  # the arm (K: stop), then K answer bits
        ((101,), 101)
        >>> K = env.unwrapped.num_arms
        >>> obs, reward, terminated, truncated, info = env.step(np.zeros(K + 1, dtype=np.int64))  # pull arm 0
        >>> int(obs["counts"][0]), float(obs["budget_left"][0])
        (1, 19999.0)
    """

    engine_class = TopKEngine


class TopKIdentificationVectorEnv(BestArmIdentificationVectorEnv):
    """``num_envs`` copies of ``TopKIdentificationEnv`` advanced with array operations.

    Examples:
        >>> import gymnasium as gym
        >>> import bandit_gym
        >>> envs = gym.make_vec("TopKIdentification-v0", num_envs=4, vectorization_mode="vector_entry_point")
        >>> obs, info = envs.reset(seed=0)
        >>> obs["counts"].shape
        (4, 100)
    """

    engine_class = TopKEngine
