"""The base class of the best-arm agents (and of CLUCB-PAC): a compiled rule per copy, run over the batch."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from bandit_gym.agents.base import Agent, Obs
from bandit_gym.families import Family


class BestArmAgent(Agent):
    """Base of the (epsilon, m)-best-arm agents. Each agent is a compiled *rule* that decides one step of one copy,

        rule(counts, sums, made, budget, m, epsilon, constants, state, work, answer, final) -> arm

    from the copy's float32 pull counts and sums (read as float64, as the observation gives them), the pulls made
    so far, the budget (the cap in the fixed-confidence setting), m and epsilon (as the float32 observation
    holds them); ``constants`` are the agent's per-copy parameters and ``state`` its per-copy state (each agent's
    file names their entries), ``work`` scratch rows, ``answer`` the answer bits it submits (kept between steps:
    UGapEb's recommendation lives there). It returns the arm to pull, or K to stop. ``final`` says that the
    answer will be scored; rules whose answer is a function of the statistics alone may skip it otherwise (the
    per-step driver always passes True).

    Ties: a rule breaks ties between arms by position (the first arm wins), and every copy plays in its own order
    of the arms (``order``, the agent's tie rule): with ``tie_break="random"`` (the default) an order drawn per copy
    and episode from the agent's seeded generator, so every tie goes to each tied arm with equal probability and
    the agent's results are the same in distribution when the instance's arms are permuted; with
    ``tie_break="index"`` the identity, so ties go to the smallest index (the reading of most public code).

    The rule is written in the agent's own file and compiled on the first ``act`` (``rule``); the drivers of
    ``bandit_gym.agents.best_arm._kernels`` run it over the batch in one compiled pass (``act``) and play
    whole episodes with it (``compiled_rollout``), so the two agree bit for bit."""

    families: ClassVar[tuple[str, ...]] = ("best_arm",)
    #: per-copy constants of the rule
    num_constants: ClassVar[int] = 0

    @classmethod
    def rule(cls) -> Any:
        """The compiled rule (numba loads on the first call)."""
        raise NotImplementedError

    def state_size(self, k: int) -> int:
        """Floats of per-copy state the rule keeps for K arms."""
        return 0

    def allocate(self, n: int, k: int) -> None:
        from bandit_gym.agents.best_arm._kernels import WORK_ROWS

        self.constants = np.zeros((n, max(self.num_constants, 1)))
        self.state = np.zeros((n, max(self.state_size(k), 1)))
        self.work = np.zeros((n, WORK_ROWS, k))
        self.order = self.new_scores()  # each copy's arm order: the tie rule (reshuffled per episode)
        # the statistics and the answer as the rule sees them, by position in the copy's order
        self.seen_counts = np.zeros((n, k), dtype=np.float32)
        self.seen_sums = np.zeros((n, k), dtype=np.float32)
        self.seen_answer = np.zeros((n, k), dtype=np.int64)

    def by_arm(self, values: np.ndarray) -> np.ndarray:
        """Per-copy values kept by position in the copy's arm order (``(N, K)``), indexed by arm."""
        return np.take_along_axis(values, self.order.position_of, axis=1)

    def check_m(self, m: int) -> None:
        """Raise if the agent cannot return m arms."""

    def _act_batch(self, obs: Obs, last: np.ndarray, family: Family) -> np.ndarray:
        from bandit_gym.agents.best_arm._kernels import decide_step

        self.check_m(int(obs["m"][0, 0]))
        step = decide_step(self.rule())
        return step(obs["m"], obs["epsilon"], obs["budget_left"], self.total_budget, obs["counts"], obs["sums"],
                    self.order.arm_at, self.seen_counts, self.seen_sums, self.seen_answer, self.constants,
                    self.state, self.work, self._action)

    def compiled_rollout(self, obs: Obs) -> tuple[Callable[..., Any], tuple[Any, ...]] | None:
        from bandit_gym.agents.best_arm._kernels import decide_rollout

        batch = self._start_all(obs)
        self.check_m(int(batch["m"][0, 0]))
        return self.in_order(decide_rollout(self.rule())), (self.constants, self.state, self.work)

    def in_order(self, play: Callable[..., Any]) -> Callable[..., Any]:
        """Whole episodes of ``play`` in each copy's arm order (``in_arm_order``; the identity plays as is)."""
        from bandit_gym.agents.best_arm._kernels import in_arm_order

        return play if self.tie_break == "index" else in_arm_order(play, self.order.arm_at)
