r"""The thresholding bandit problem of tao2019: classify every arm as above or below a threshold \(\theta\) after a
fixed budget of pulls or, stopping when confident, within a cap, scored by the number of misclassified arms (aggregate
regret)."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces

from bandit_gym import _validation as check
from bandit_gym import metrics
from bandit_gym._validation import MAX_BUDGET as MAX_BUDGET
from bandit_gym.envs import _render
from bandit_gym.envs._arms import ARM_DISTRIBUTIONS as ARM_DISTRIBUTIONS
from bandit_gym.envs._arms import Arms
from bandit_gym.envs._base import Engine, Info, flag
from bandit_gym.envs._budget import Budget
from bandit_gym.envs._pulls import PulledArms, Pulls, box
from bandit_gym.envs._shell import PureExplorationEnv, PureExplorationVectorEnv
from bandit_gym.envs.best_arm import SETTINGS as SETTINGS
from bandit_gym.families import Family
from bandit_gym.instances import BudgetRange, oracle_values

DEFAULT_MEANS = (0.2, 0.25, 0.3, 0.35, 0.45, 0.55, 0.65, 0.7, 0.75, 0.8)
LOSSES = ("aggregate", "simple")


class ThresholdingEngine(PulledArms, Engine):
    """Batched state of the thresholding bandit (see ``ThresholdingBanditEnv`` for the arguments).

    Composed of its arms (``Arms``: law, support, instance), its budget (``Budget``) and the pulls of its copies
    (``Pulls``: means, counts, sums, the step and the batched allocation); it adds the threshold and epsilon of
    the answer, its loss, the setting (a fixed-confidence episode that reaches its cap is truncated, as the
    best-arm engine's) and the renders. The attributes below read the parts'."""

    family = Family.THRESHOLDING
    reset_options = ("means",)
    exposed: ClassVar[frozenset[str]] = frozenset(
        {"means", "threshold", "epsilon", "budget", "num_arms", "loss", "arm_distribution", "sigma", "sample_cost",
         "distributions", "setting"}
    )
    #: the instance when ``means`` is not given
    default_means: ClassVar[tuple[float, ...]] = DEFAULT_MEANS

    def __init__(
        self,
        num: int,
        means: Any = None,
        threshold: float | None = 0.5,
        epsilon: float = 0.0,
        budget: int | BudgetRange = 1000,
        arm_distribution: str | None = None,
        sigma: float = 1.0,
        loss: str = "aggregate",
        sample_cost: float = 0.0,
        common_random_numbers: bool = False,
        distributions: Any = None,
        setting: str = "fixed_budget",
    ) -> None:
        num = check.integer("num_envs", num, minimum=1)
        self.arms = Arms(means, arm_distribution, sigma, distributions, default_means=self.default_means)
        self.threshold = self._check_threshold(threshold)
        self.epsilon = check.real("epsilon", epsilon, low=0.0)
        self.episode_budget = Budget(budget)
        self.loss = check.choice("loss", loss, LOSSES)
        #: ``"fixed_budget"`` (the budget's last pull leads to the answer step) or ``"fixed_confidence"`` (the agent
        #: stops; the budget is a cap, and reaching it truncates the episode)
        self.setting = check.choice("setting", setting, SETTINGS)
        cost = self.episode_budget.sample_cost(sample_cost)
        crn = flag("common_random_numbers", common_random_numbers)
        self.num_arms = k = self.arms.num_arms
        super().__init__(num, arms=k)  # the memory of num copies of K arms, checked before they are allocated
        self.pulls = Pulls(self.num, self.arms, self.episode_budget, self.finished, cost, crn)
        self._none = np.zeros(self.num, dtype=bool)  # "no copy": the truncations of a step that caps none
        self._none.flags.writeable = False
        self.obs = {"threshold": np.full((self.num, 1), self.threshold, dtype=np.float32),
                    "epsilon": np.full((self.num, 1), self.epsilon, dtype=np.float32), **self.pulls.obs}

    def _check_threshold(self, threshold: Any) -> float:
        """theta, strictly inside the arms' support where it is bounded; None: the middle of the support."""
        support = self.arms.support
        if threshold is None:
            threshold = float(np.mean(support)) if self.arms.bounded else 0.0
        if self.arms.bounded:
            low, high = support
            return check.real("threshold", threshold, low=low, high=high, low_open=True, high_open=True)
        return check.real("threshold", threshold)

    @property
    def answer_step(self) -> int:
        """``budget + 1``: the answer is scored on the step after the last pull (see ``Engine.answer_step``)."""
        return self.budget + 1

    def answer_metrics(self, answer: np.ndarray, means: np.ndarray) -> dict[str, np.ndarray]:
        r"""``regret`` (the aggregate regret, tao2019 eq. 3) and ``error``
        (\(\mathbb{1}\{\text{some arm misclassified}\}\)) of answers from the env's threshold and epsilon."""
        return {"regret": metrics.aggregate_regret(answer, means, self.threshold, self.epsilon).astype(np.float64),
                "error": metrics.error_indicator(answer, means, self.threshold, self.epsilon).astype(np.float64)}

    def episode_loss(self, answer: np.ndarray, means: np.ndarray) -> np.ndarray:
        """The loss chosen by ``loss=`` for final answers ``answer`` on instances ``means``."""
        fn = metrics.aggregate_regret if self.loss == "aggregate" else metrics.error_indicator
        return fn(answer, means, self.threshold, self.epsilon).astype(np.float64)

    def oracle_values(self, means: np.ndarray | None = None) -> dict[str, float]:
        r"""Constructor arguments some agents take from the true instance (``oracle_parameters``): ``H``, the
        complexity \(\sum_i 1 / \Delta_i^2\) of the fixed instance (UCBE's oracle)."""
        means = self.fixed_means if means is None else means  # or those of one episode, passed in
        if means is None:
            raise ValueError("oracle parameters need a fixed instance, but this env draws its instance per episode")
        return oracle_values(means, self.threshold)

    # ----------------------------------------------------------------------------------------------- spaces
    def observation_space(self) -> spaces.Dict:
        big = float(np.finfo(np.float32).max)  # finite bounds: Gymnasium's checker warns on infinite ones
        lo, hi = self.arms.support if self.arms.bounded else (-big, big)
        return spaces.Dict({"threshold": box(lo, hi), "epsilon": box(0.0, big), **self.pulls.boxes()})

    def action_space(self) -> spaces.MultiDiscrete:
        return self.pulls.action_space()

    # ----------------------------------------------------------------------------------------------- dynamics
    def _pin(self, options: dict[str, Any]) -> None:
        self.arms.pin(options)

    def reset_rows(self, rng: np.random.Generator, rows: np.ndarray) -> None:
        self.pulls.reset(rng, rows)

    def check_actions(self, actions: Any) -> np.ndarray:
        return self.pulls.check_actions(actions)

    def step_rows(
        self, rng: np.random.Generator, actions: np.ndarray, rows: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, Info]:
        rewards, stop = self.pulls.step(rng, actions, rows, self.episode_loss)
        self.truncated = self.pulls.truncations(actions, stop, self.setting, self._none)
        return rewards, stop if self.truncated is self._none else stop & ~self.truncated, {}

    def allocate(self, rng: np.random.Generator, allocation: Any) -> None:
        """Batched pulls of every copy (``Pulls.allocate``)."""
        self.pulls.allocate(rng, allocation)

    # ----------------------------------------------------------------------------------------------- render
    def render_text(self, row: int) -> str:
        counts, est, half = self.pulls.estimates(row)
        side = np.where(counts == 0, "?", np.where(est >= self.threshold, "above", "below"))
        total, left = self.total[row], self.left[row]
        if self.setting == "fixed_budget":
            title = f"ThresholdingBandit: K={self.num_arms}, budget {total}, {total - left} pulls used"
        else:
            title = f"ThresholdingBandit: K={self.num_arms}, cap {total}, {total - left} pulls used (fixed_confidence)"
        footer = f"threshold theta={self.threshold:g}, epsilon={self.epsilon:g}, budget left {left}"
        return _render.text_table(
            title,
            {"arm": np.arange(self.num_arms), "pulls": counts.astype(np.int64), "mean": est, "+-95%": half,
             "answer": side},
            footer,
        )

    def render_rgb(self, row: int) -> np.ndarray:
        counts, est, half = self.pulls.estimates(row)
        ylim = self.arms.support if self.arms.bounded else None
        answer = _render.submitted_answer(self, self.num_arms)  # the last action's answer bits
        total = self.total[row]
        title = f"{total - self.left[row]} of {total} pulls"
        if answer is not None and self.show_truth:
            wrong = int(metrics.misclassified(answer, self.means[row], self.threshold, self.epsilon).sum())
            title += f"; answer: {wrong} misclassified"
        return _render.bar_chart(
            est, half, self.threshold, title, "empirical mean", ylim, counts,
            truth=self.means[row] if self.show_truth else None, answer=answer,
            answer_label="answer: above", other_label="answer: below",
        )


class ThresholdingBanditEnv(PureExplorationEnv):
    r"""Thresholding bandit (tao2019): classify \(K\) arms against a threshold within a budget of pulls, fixed budget or
    fixed confidence.

    ## Description
    The thresholding bandit problem (TBP) of Tao et al. (2019, §2): \(K\) arms with unknown means \(\theta_i\), a known
    threshold \(\theta\) and a budget of \(T\) pulls (the paper assumes \(T \ge K\) and arms on \([0, 1]\)). After the
    budget is spent the agent's answer \(d \in \{0,1\}^K\) says which arms it believes satisfy \(\theta_i \ge \theta\).
    The loss is the number of misclassified arms (aggregate regret, eq. 3, before the expectation), or optionally the
    indicator that any arm is misclassified (its expectation is the simple regret, tao2019 §1). Arms inside the
    indifference zone \(\lvert \theta_i - \theta \rvert < \epsilon\) (ours) count for nothing: either answer is right
    for them (``bandit_gym.metrics.counted_arms``; an arm at \(\theta \pm \epsilon\) counts).

    ``setting="fixed_confidence"`` is the same problem in the fixed-confidence setting (as for
    ``BestArmIdentification-v0``): the agent stops when it is confident (the stop action), its answer is scored then,
    and ``budget`` is only a cap, reaching which truncates the episode (its answer still scored). The fixed-confidence
    lower bound is ``bandit_gym.lower_bounds.thresholding_allocation``.

    ## Action Space
    ``MultiDiscrete([K + 1] + [2] * K)``. ``action[0]`` is the arm to pull (``0..K-1``) or ``K`` to stop; ``action[1:]``
    is the agent's current answer, one bit per arm (1 = "above the threshold"). The answer given at step \(t\) is the
    one formed from the \(t - 1\) samples seen so far. When no pulls are left the next step is the answer step: it pulls
    nothing, its answer is final and the episode terminates. A budget of \(T\) means at most \(T\) pulls and \(T + 1\)
    steps. ``bandit_gym.wrappers.EmpiricalAnswer`` exposes ``Discrete(K)`` instead. ``env.action_space.sample()`` draws
    the stop action ``K`` with probability \(1 / (K + 1)\), so a random policy ends its episode after about \(K + 1\)
    steps (one step in eleven at \(K = 10\)) and its answer bits are random;
    ``bandit_gym.wrappers.EmpiricalAnswer(env)`` (``Discrete(K)``, no stop, the empirical answer) is the space to sample
    from.

    ## Observation Space
    A ``Dict`` of 1-D float32 ``Box`` spaces:

    | key | shape | meaning |
    |---|---|---|
    | ``threshold`` | (1,) | \(\theta\) |
    | ``epsilon`` | (1,) | precision \(\epsilon\) |
    | ``budget_left`` | (1,) | pulls left before the answer step |
    | ``last_arm`` | (1,) | arm pulled at the previous step; -1 at the start, -2 after an ``allocate`` |
    | ``last_value`` | (1,) | sample observed at the previous step (0 at the start and after ``allocate``) |
    | ``counts`` | (K,) | pulls of each arm \(T_i\) |
    | ``sums`` | (K,) | sum of each arm's samples |
    | ``means`` | (K,) | empirical means (0 for an arm never pulled) |

    The true means never appear in an observation or an ``info``.

    ## Batched allocation
    ``env.unwrapped.allocate(c)`` pulls arm \(i\) ``c[i]`` times in one call, drawing each arm's sum exactly (binomial
    for Bernoulli arms, normal for Gaussian arms), statistically identical to ``c[i]`` single pulls and charged to the
    budget the same way; it returns the new observation. Phase-based algorithms use it; the single-pull ``step`` stays
    the reference. The vector env takes an ``(N, K)`` allocation.

    ## Rewards
    ``-sample_cost`` (default 0) per pull; minus the loss of the final answer on the step that ends the episode (the
    answer step, the stop, or the cap).

    ## Episode End
    Terminates when the agent stops (the stop action) or, fixed budget (the default), on the answer step after
    ``budget`` pulls; no truncation then. In the fixed-confidence setting reaching the cap truncates instead
    (``truncated=True``, ``terminated=False``): the step after the last pull is scored as the answer step is, and a
    vector env resets the copy on its next step. A time limit shorter than the episode
    (``gym.make(id, max_episode_steps=n)``, ``TimeLimit``, \(n <\) ``budget + 1``) would end it unscored and is refused
    at ``reset``: pass ``budget=n - 1``.

    ## Information
    ``info`` is empty. ``bandit_gym.wrappers.RecordEpisodeRegret`` adds the episode's regret at the end.

    ## Arguments

    | argument | default | meaning |
    |---|---|---|
    | ``means`` | tao2019 Setup 1 | \(K\) means (\(2\le K\le\) ``MAX_ARMS`` = 65,536), or a sampler ``(rng, n)->(n, K)``
    | ``threshold`` | 0.5 | \(\theta\); in \((0, 1)\) for Bernoulli arms |
    | ``epsilon`` | 0.0 | indifference zone half-width, \(\ge 0\) |
    | ``budget`` | 1000 | \(T\) (a cap if fixed confidence), \(1\le T\le 2^{24}\) (``MAX_BUDGET``), or ``BudgetRange``
    | ``setting`` | ``"fixed_budget"`` | or ``"fixed_confidence"`` (the agent stops; reaching ``budget`` truncates) |
    | ``arm_distribution`` | ``"bernoulli"`` | ``"gaussian"`` (``sigma``), ``"custom"`` (``distributions``) |
    | ``sigma`` | 1.0 | Gaussian standard deviation |
    | ``distributions`` | None | bounded arm laws (frozen ``scipy.stats``); set the means |
    | ``loss`` | ``"aggregate"`` | or ``"simple"`` (1 if any counted arm is misclassified) |
    | ``sample_cost`` | 0.0 | cost charged per pull |
    | ``common_random_numbers`` | False | pull \(s\) of arm \(i\) returns draw \(s\) of the arm's own stream (below) |

    The limits (``MAX_ARMS``, ``MAX_BUDGET``, and the memory of ``num_envs`` copies of K arms, at most
    ``memory_limit()``) are those of ``bandit_gym._validation``, checked before anything is allocated.

    With ``common_random_numbers=True`` each copy draws a stream key from ``np_random`` at reset, and the \(s\)-th pull
    of arm \(i\) returns the \(s\)-th draw of the stream of \((\text{key}, i)\) (``bandit_gym.streams``), whatever the
    order of pulls: agents run from the same seed see the same samples of every arm, which pairs their runs.

    ```python
    import gymnasium as gym
    env = gym.make("bandit_gym:ThresholdingBandit-Tao2019Setup1-v0", budget=500)
    ```
    ``reset(options={"means": [...]})`` pins that instance until the next explicit ``reset``.

    ## References
    C. Tao, S. A. Blanco, J. Peng, Y. Zhou. Thresholding Bandit with Optimal Aggregate Regret. NeurIPS 2019.

    ## Version History
    * v0: initial version; ``setting="fixed_confidence"`` added later within v0 (the default, ``"fixed_budget"``, plays
      exactly as before).

    Examples:
        >>> import gymnasium as gym
        >>> import numpy as np
        >>> import bandit_gym
        >>> env = gym.make("ThresholdingBandit-v0")
        >>> obs, info = env.reset(seed=0)
        >>> sorted(obs)
        ['budget_left', 'counts', 'epsilon', 'last_arm', 'last_value', 'means', 'sums', 'threshold']
        >>> env.action_space.shape, int(env.action_space.nvec[0])  # the arm (K: stop), then K answer bits
        ((11,), 11)
        >>> K = env.unwrapped.num_arms
        >>> obs, reward, terminated, truncated, info = env.step(np.zeros(K + 1, dtype=np.int64))  # pull arm 0
        >>> int(obs["counts"][0]), float(obs["budget_left"][0])
        (1, 499.0)

        Fixed confidence: the stop action (K) ends and scores the episode; reaching the cap truncates it.

        >>> env = gym.make("ThresholdingBandit-v0", means=[0.2, 0.8], setting="fixed_confidence", budget=1)
        >>> obs, info = env.reset(seed=0)
        >>> obs, reward, terminated, truncated, info = env.step(np.array([0, 0, 1]))  # pull arm 0: the last pull
        >>> obs, reward, terminated, truncated, info = env.step(np.array([0, 0, 1]))  # no pull left: the cap
        >>> terminated, truncated, reward  # the answer [0, 1] is right
        (False, True, 0.0)
    """

    engine_class = ThresholdingEngine


class ThresholdingBanditVectorEnv(PureExplorationVectorEnv):
    """``num_envs`` copies of ``ThresholdingBanditEnv`` advanced with array operations (one generator,
    bulk draws). Takes the same keyword arguments, plus ``num_envs``, ``copy`` (True, the default and
    Gymnasium's convention: fresh observation arrays at every step; False: read-only views of the env's buffers,
    updated in place by the next step, the fast path), ``autoreset_mode`` (``"NextStep"``, the default, or
    ``"SameStep"``) and ``max_episode_steps`` (refused below ``budget + 1``: pass ``budget``); see
    ``BanditVectorEnv``.

    Examples:
        >>> import gymnasium as gym
        >>> import bandit_gym
        >>> envs = gym.make_vec("ThresholdingBandit-v0", num_envs=4, vectorization_mode="vector_entry_point")
        >>> obs, info = envs.reset(seed=0)
        >>> obs["counts"].shape
        (4, 10)
    """

    engine_class = ThresholdingEngine
