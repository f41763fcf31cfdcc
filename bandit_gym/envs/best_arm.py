r"""\((\epsilon, m)\)-best arm identification of gabillon2012: return \(m\) arms whose means are within \(\epsilon\)
of the \(m\)-th best, after a fixed budget of pulls or, stopping when confident, within a cap."""

from __future__ import annotations

import warnings
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces

from bandit_gym import _validation as check
from bandit_gym import metrics
from bandit_gym.envs import _render
from bandit_gym.envs._arms import Arms
from bandit_gym.envs._base import Engine, Info, flag
from bandit_gym.envs._budget import Budget
from bandit_gym.envs._pulls import PulledArms, Pulls, box
from bandit_gym.envs._shell import PureExplorationEnv, PureExplorationVectorEnv
from bandit_gym.families import Family
from bandit_gym.families.best_arm import top_m_answer as top_m_answer
from bandit_gym.instances import AUDIBERT2010_PROBLEMS, BudgetRange, best_arm_complexity, gap_complexity

SETTINGS = ("fixed_budget", "fixed_confidence")
BEST_ARM_LOSSES = ("simple_regret", "error")


class BestArmEngine(PulledArms, Engine):
    r"""Batched state of \((\epsilon, m)\)-best arm identification (see ``BestArmIdentificationEnv``).

    Composed of its arms (``Arms``), its budget (``Budget``) and the pulls of its copies (``Pulls``), as the
    thresholding engine is; it adds the answer of \(m\) arms (checked when final: ``invalid_answer``), the setting
    (a fixed-confidence episode that reaches its cap is truncated), the shuffle of the arm order and the losses.
    The attributes below read the parts'. The top-K, correlated and model-selection engines are best-arm
    identification problems and specialise it (their docstrings say how)."""

    family = Family.BEST_ARM
    reset_options = ("means",)
    exposed: ClassVar[frozenset[str]] = frozenset(
        {"means", "m", "epsilon", "budget", "num_arms", "loss", "arm_distribution", "sigma", "sample_cost",
         "setting", "distributions", "shuffle", "squares"}
    )
    #: the instance when ``means`` is not given
    default_means: ClassVar[tuple[float, ...]] = AUDIBERT2010_PROBLEMS[1]
    #: the constructor argument that sets m, the size of the set to find (named in its errors)
    set_size_name: ClassVar[str] = "m"
    #: the problem's name in the text rendering
    title: ClassVar[str] = "BestArmIdentification"

    def __init__(
        self,
        num: int,
        means: Any = None,
        m: int = 1,
        epsilon: float = 0.0,
        budget: int | BudgetRange = 2000,
        setting: str = "fixed_budget",
        arm_distribution: str | None = None,
        sigma: float = 1.0,
        loss: str = "simple_regret",
        sample_cost: float = 0.0,
        common_random_numbers: bool = False,
        distributions: Any = None,
        shuffle: bool = False,
        squares: bool = False,
    ) -> None:
        #: whether the arm order is shuffled per episode (an arm's index then carries no information)
        self.shuffle = flag("shuffle", shuffle)
        #: whether the observation carries each arm's squared deviations (``squares``)
        self.squares = flag("squares", squares)
        num = check.integer("num_envs", num, minimum=1)
        self.arms = self._arms(means, arm_distribution, sigma, distributions)
        self.epsilon = check.real("epsilon", epsilon, low=0.0)
        self.episode_budget = Budget(budget)
        cost = self.episode_budget.sample_cost(sample_cost)
        crn = flag("common_random_numbers", common_random_numbers)
        self.num_arms = k = self.arms.num_arms
        super().__init__(num, arms=k)  # the memory of num copies of K arms, checked before they are allocated
        self.pulls = Pulls(self.num, self.arms, self.episode_budget, self.finished, cost, crn, self.squares)
        self.m = self._check_set_size(m)
        self.setting = check.choice("setting", setting, SETTINGS)
        self.loss = check.choice("loss", loss, BEST_ARM_LOSSES)
        self._warn_if_not_unique()
        self._none = np.zeros(self.num, dtype=bool)  # "no copy": truncated and invalid_answer of a step that ends none
        self._none.flags.writeable = False
        self.obs = {"m": np.full((self.num, 1), self.m, dtype=np.float32),
                    "epsilon": np.full((self.num, 1), self.epsilon, dtype=np.float32), **self.pulls.obs}

    def _arms(self, means: Any, arm_distribution: str | None, sigma: float, distributions: Any) -> Arms:
        """The arms of the constructor's arguments (``default_means`` when none are given)."""
        return Arms(means, arm_distribution, sigma, distributions, default_means=self.default_means)

    def _check_set_size(self, m: Any) -> int:
        """m (k of top K) as an int in 1..K - 1, or an error that says which of m and the instance is at fault."""
        name, k = self.set_size_name, self.num_arms
        m = check.integer(name, m, minimum=1)
        if m >= k:
            raise ValueError(
                f"{name}={m} is too large; it must be <= {k - 1}: {self.arms.source} (K={k}), and {name} arms to "
                f"return need K > {name} arms. {name}={m} is the id's preset value unless you passed it: with this "
                f"instance pass {name} from 1 to K - 1 = {k - 1}, or give more than {m} arms"
            )
        return m

    def _warn_if_not_unique(self) -> None:
        """Warn when epsilon = 0 and the set of the m best arms of the fixed instance is not unique."""
        fixed = self.arms.instance.fixed
        if fixed is not None and self.epsilon == 0.0:
            ranked = np.sort(fixed)[::-1]
            if ranked[self.m - 1] == ranked[self.m]:
                warnings.warn(f"the set of the m = {self.m} best arms is not unique (mu_(m) = mu_(m+1) = "
                              f"{ranked[self.m]:g}), which gabillon2012 assumes; with epsilon = 0 an answer errs "
                              "whenever it holds an arm below mu_(m)", stacklevel=4)

    @property
    def answer_step(self) -> int:
        """``budget + 1``: the answer is scored on the step after the last pull (see ``Engine.answer_step``)."""
        return self.budget + 1

    # ----------------------------------------------------------------------------------------------- spaces
    def observation_space(self) -> spaces.Dict:
        big = float(np.finfo(np.float32).max)  # finite bounds: Gymnasium's checker warns on infinite ones
        return spaces.Dict({"m": box(1.0, self.num_arms - 1.0), "epsilon": box(0.0, big), **self.pulls.boxes()})

    def action_space(self) -> spaces.MultiDiscrete:
        return self.pulls.action_space()

    # ----------------------------------------------------------------------------------------------- dynamics
    def _pin(self, options: dict[str, Any]) -> None:
        self.arms.pin(options)

    def reset_rows(self, rng: np.random.Generator, rows: np.ndarray) -> None:
        self.pulls.reset(rng, rows)
        if self.shuffle:  # a random order of the arms per episode, from the env's generator
            order = np.argsort(rng.random((int(rows.sum()), self.num_arms)), axis=1)
            self.means[rows] = np.take_along_axis(self.means[rows], order, axis=1)

    def check_actions(self, actions: Any) -> np.ndarray:
        return self.pulls.check_actions(actions)

    def step_rows(
        self, rng: np.random.Generator, actions: np.ndarray, rows: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, Info]:
        rewards, stop = self.pulls.step(rng, actions, rows, self.episode_loss)
        self.truncated = self.pulls.truncations(actions, stop, self.setting, self._none)
        if not stop.any():  # the usual step: nothing ends, no array to make
            return rewards, stop, {"invalid_answer": self._none}
        invalid = np.zeros(self.num, dtype=bool)
        ending = np.flatnonzero(stop)  # only final answers are checked: O(K) per finishing copy, nothing per pull
        invalid[ending] = actions[ending, 1:].sum(axis=1) != self.m
        return rewards, stop & ~self.truncated, {"invalid_answer": invalid}

    def allocate(self, rng: np.random.Generator, allocation: Any) -> None:
        """Batched pulls of every copy (``Pulls.allocate``)."""
        self.pulls.allocate(rng, allocation)

    # ----------------------------------------------------------------------------------------------- losses
    def episode_loss(self, answer: np.ndarray, means: np.ndarray) -> np.ndarray:
        r"""Set simple regret (default) or the error indicator \(\mathbb{1}\{r > \epsilon\}\) of final answers."""
        if self.loss == "simple_regret":
            return metrics.set_simple_regret(answer, means, self.m)
        return metrics.set_error(answer, means, self.m, self.epsilon).astype(np.float64)

    def answer_metrics(self, answer: np.ndarray, means: np.ndarray) -> dict[str, np.ndarray]:
        r"""``regret`` (set simple regret), ``error`` (\(\mathbb{1}\{r > \epsilon\}\)) and ``invalid`` (not \(m\)
        arms)."""
        return {"regret": metrics.set_simple_regret(answer, means, self.m),
                "error": metrics.set_error(answer, means, self.m, self.epsilon).astype(np.float64),
                "invalid": (np.asarray(answer).sum(axis=-1) != self.m).astype(np.float64)}

    def oracle_values(self, means: np.ndarray | None = None) -> dict[str, float]:
        r"""``H``: the complexity \(H_\epsilon\) of the fixed instance (gabillon2012 eq. 6, \(b = 1\)), UGapEb's
        oracle; ``H1``: Audibert et al.'s \(\sum_i 1 / \Delta_i^2\), UCB-E's."""
        means = self.fixed_means if means is None else means  # or those of one episode, passed in
        if means is None:
            raise ValueError("oracle parameters need a fixed instance, but this env draws its instance per episode")
        return {"H": gap_complexity(means, self.m, self.epsilon), "H1": best_arm_complexity(means)}

    # ----------------------------------------------------------------------------------------------- render
    def render_text(self, row: int) -> str:
        counts, est, half = self.pulls.estimates(row)
        total = self.total[row]
        return _render.text_table(
            f"{self.title}: K={self.num_arms}, m={self.m}, epsilon={self.epsilon:g}, {total - self.left[row]} of "
            f"{total} pulls used ({self.setting})",
            {"arm": np.arange(self.num_arms), "pulls": counts.astype(np.int64), "mean": est, "+-95%": half,
             "top m": top_m_answer({"means": est, "counts": counts, "m": np.array([self.m])})},
            "top m: the m largest empirical means among pulled arms; loss: " + self.loss,
        )

    def render_rgb(self, row: int) -> np.ndarray:
        counts, est, half = self.pulls.estimates(row)
        answer = _render.submitted_answer(self, self.num_arms)  # the last action's answer bits
        total = self.total[row]
        title = f"{total - self.left[row]} of {total} pulls, m = {self.m}"
        if answer is not None and self.show_truth:
            regret = float(self.answer_metrics(answer, self.means[row])["regret"])
            title += f"; answer's {'aggregate' if self.family is Family.TOP_K else 'simple'} regret {regret:.3g}"
        return _render.bar_chart(est, half, None, title, "empirical mean",
                                 self.arms.support if self.arms.bounded else None, counts,
                                 truth=self.means[row] if self.show_truth else None, answer=answer,
                                 answer_label="recommended arm" if self.m == 1 else f"answer ({self.m} arms)")


class BestArmIdentificationEnv(PureExplorationEnv):
    r"""\((\epsilon, m)\)-best arm identification (gabillon2012), fixed budget or fixed confidence.

    ## Description
    \((\epsilon, m)\)-best arm identification (Gabillon, Ghavamzadeh, Lazaric 2012): \(K\) arms with unknown means;
    the agent must return \(m\) arms whose means are all at least \(\mu_{(m)} - \epsilon\) (\(\mu_{(m)}\) the
    \(m\)-th largest mean). In the fixed-budget setting it has ``budget`` pulls; in the fixed-confidence setting it
    stops when it is confident (the stop action) and ``budget`` is only a cap, reaching which truncates the episode.

    ## Action Space
    ``MultiDiscrete([K + 1] + [2] * K)``: ``action[0]`` is the arm to pull or ``K`` to stop; ``action[1:]`` is
    the current answer, one bit per arm, exactly \(m\) ones (any other answer counts as the worst possible set and
    is flagged in ``info["invalid_answer"]``). The answer given at step \(t\) comes from \(t - 1\) samples; after
    the last pull the next step is the answer step.
    ``env.action_space.sample()`` draws the stop action ``K`` with probability \(1 / (K + 1)\), so a random policy
    ends its episode after about \(K + 1\) steps (one step in eleven at \(K = 10\)) and its answer bits are random;
    ``bandit_gym.wrappers.EmpiricalAnswer(env)`` (``Discrete(K)``, no stop, the empirical answer) is the space
    to sample from.

    ## Observation Space
    A ``Dict`` of 1-D float32 ``Box`` spaces: ``m``, ``epsilon``, ``budget_left``, ``last_arm`` (-1 at the
    start, -2 after ``allocate``), ``last_value``, ``counts`` (K), ``sums`` (K), ``means`` (K, empirical; 0 for
    an arm never pulled); with ``squares=True``, ``squares`` (K): each arm's sum of squared deviations from its
    empirical mean (the sufficient statistic of Gaussian arms of unknown variance, with counts and sums; exact
    under ``allocate`` too). The true means never appear.

    ## Rewards
    ``-sample_cost`` per pull; minus the loss of the final answer on the answer step: the set simple regret
    \(r = \mu_{(m)} - \min_{k \in \text{answer}} \mu_k\) (default; gabillon2012 eq. 2) or the error indicator
    \(\mathbb{1}\{r > \epsilon\}\) (§2 prints \(r \ge \epsilon\); see ``bandit_gym.metrics.set_error``).

    ## Episode End
    Terminates on the stop action or, fixed budget, on the answer step after ``budget`` pulls; in the fixed
    confidence setting reaching the cap truncates (``truncated=True``, the answer is still scored). A time limit
    shorter than ``budget + 1`` steps (``max_episode_steps``, ``TimeLimit``) is refused at ``reset``: pass
    ``budget`` instead.

    ## Information
    ``info["invalid_answer"]`` on every step (True where a final answer did not hold exactly \(m\) arms).
    ``bandit_gym.wrappers.RecordEpisodeRegret`` adds regret, error, pulls at the end.

    ## Arguments

    | argument | default | meaning |
    |---|---|---|
    | ``means`` | Audibert et al. problem 1 | \(K\) means (\(2 \le K \le\) ``MAX_ARMS`` = 65,536), or a sampler |
    | ``m`` | 1 | arms to return, \(1 \le m < K\) |
    | ``epsilon`` | 0.0 | accuracy, \(\ge 0\) |
    | ``budget`` | 2000 | \(n\) (fixed budget) or the cap (fixed confidence), \(\le\) ``MAX_BUDGET``; or ``BudgetRange``
    | ``setting`` | ``"fixed_budget"`` | or ``"fixed_confidence"`` |
    | ``arm_distribution`` | ``"bernoulli"`` | ``"gaussian"`` (``sigma``), ``"custom"`` (``distributions``) |
    | ``sigma`` | 1.0 | the Gaussian arms' standard deviation, or \(K\) of them (arms of different variances) |
    | ``squares`` | False | observe ``squares``, each arm's squared deviations from its mean |
    | ``distributions`` | None | bounded arm laws (frozen ``scipy.stats``, e.g. ``beta(2, 5)``); set the means |
    | ``loss`` | ``"simple_regret"`` | or ``"error"`` |
    | ``sample_cost`` | 0.0 | cost per pull |
    | ``common_random_numbers`` | False | per-arm sample streams (see ``ThresholdingBanditEnv``) |
    | ``shuffle`` | False | shuffle the arm order per episode (from the env's generator) |

    The arms are not shuffled by default: arm \(i\) is the \(i\)-th mean as given, and a preset keeps its paper's order
    (Audibert et al.'s problems list the best arm first). Every shipped agent breaks ties between arms at random,
    so its results do not depend on that order; an agent with a positional tie rule (the smallest index wins)
    is biased by it: ``shuffle=True`` removes the order, as ``TopKIdentification-v0`` does by default.

    The limits (``MAX_ARMS``, ``MAX_BUDGET``, and the memory of ``num_envs`` copies of K arms, at most
    ``memory_limit()``) are those of ``bandit_gym._validation``, checked before anything is allocated.

    ```python
    import gymnasium as gym
    env = gym.make("bandit_gym:BestArmIdentification-v0", m=2, epsilon=0.05)
    from scipy import stats  # arms of any bounded distribution: samples F^{-1}(u), one quantile call per arm
    env = gym.make("bandit_gym:BestArmIdentification-v0", distributions=[stats.beta(5, 5), stats.beta(2, 5),
                   stats.uniform(0, 0.8)])
    ```

    ## References
    V. Gabillon, M. Ghavamzadeh, A. Lazaric. Best Arm Identification: A Unified Approach to Fixed Budget and
    Fixed Confidence. NIPS 2012. J.-Y. Audibert, S. Bubeck, R. Munos. Best Arm Identification in Multi-Armed
    Bandits. COLT 2010 (the benchmark problems).

    ## Version History
    * v0: initial version.

    Examples:
        >>> import gymnasium as gym
        >>> import numpy as np
        >>> import bandit_gym
        >>> env = gym.make("BestArmIdentification-v0")
        >>> obs, info = env.reset(seed=0)
        >>> sorted(obs)
        ['budget_left', 'counts', 'epsilon', 'last_arm', 'last_value', 'm', 'means', 'sums']
        >>> env.action_space.shape, int(env.action_space.nvec[0])  # the arm (K: stop), then K answer bits
        ((21,), 21)
        >>> K = env.unwrapped.num_arms
        >>> obs, reward, terminated, truncated, info = env.step(np.zeros(K + 1, dtype=np.int64))  # pull arm 0
        >>> int(obs["counts"][0]), float(obs["budget_left"][0])
        (1, 1999.0)
    """

    engine_class: ClassVar[type[BestArmEngine]] = BestArmEngine  # the specialised envs name theirs


class BestArmIdentificationVectorEnv(PureExplorationVectorEnv):
    """``num_envs`` copies of ``BestArmIdentificationEnv`` advanced with array operations; ``num_envs``,
    ``copy`` (default True: fresh arrays), ``autoreset_mode`` and ``max_episode_steps`` as
    ``ThresholdingBanditVectorEnv``.

    Examples:
        >>> import gymnasium as gym
        >>> import bandit_gym
        >>> envs = gym.make_vec("BestArmIdentification-v0", num_envs=4, vectorization_mode="vector_entry_point")
        >>> obs, info = envs.reset(seed=0)
        >>> obs["counts"].shape
        (4, 20)
    """

    engine_class: ClassVar[type[BestArmEngine]] = BestArmEngine  # the specialised envs name theirs
