r"""Shared machinery of the thresholding agents that pull \(\operatorname*{arg\,min}_i \mathrm{index}_i\), where an
arm's index depends only on its own statistics (count, sum), on state of its own and on per-copy constants. Only the arm
pulled at the previous step changes its index, so each step recomputes one entry per copy (\(O(N)\)) and takes one
\(\operatorname{arg\,min}\) over the arms, in one compiled pass (``bandit_gym.agents._kernels``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, NamedTuple

import numpy as np

from bandit_gym.agents.base import Agent, Obs, writes_answer
from bandit_gym.families import Family


class ArmRuleState(NamedTuple):
    r"""The arm rule's own state, two numbers per copy and arm (``(N, K)`` each; an index rule keeps none): what
    ``fresh`` and ``pulled`` return beside the index and the answer bit (Opt-KG: \(I(a, b)\) and \(\log c(a, b)\))."""

    s1: np.ndarray
    s2: np.ndarray


class IndexAgent(Agent):
    """Base class. A subclass gives its index as ``index``, a function of one arm's statistics (smaller is
    pulled first) with the empirical answer, or a whole arm rule (Opt-KG), and its compiled entry points as
    ``kernels`` (``bandit_gym.agents._kernels``). The agent decides by ``select`` and ``answer``, both read from
    one compiled step per observation (``rule_step``); ``act`` runs that step directly, unless a subclass
    overrides ``select`` (then ``act`` plays the subclass's ``select``, which may call ``super().select``)."""

    families: ClassVar[tuple[str, ...]] = ("thresholding",)
    #: pull each arm once, in the copy's arm order, before following the index (rounds \(1, \dots, K\))
    init_pulls: ClassVar[bool] = True

    #: ``index(count, sum, theta, param, per_copy) -> float``, plain Python on floats (``math``), compiled by the
    #: kernels; ``param`` is ``index_param``, ``per_copy`` the copy's entry of ``self.per_copy``
    index: ClassVar[Callable[..., float]]
    #: the arm rule's compiled entry points (``bandit_gym._dispatch.EntryPoints``), made in the agent's file
    kernels: ClassVar[Any] = None

    def rule_constants(self) -> tuple[float, float]:
        """The arm rule's constants ``(p0, p1)``: ``(index_param(), 0.0)`` for an index rule."""
        return self.index_param(), 0.0

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Refuse a subclass that changes ``index`` without entry points of its own: the compiled entry points
        of the class it extends would play that class's index, not the new one."""
        super().__init_subclass__(**kwargs)
        if "index" in vars(cls) and "kernels" not in vars(cls):
            raise TypeError(f"{cls.__name__}.index would not be played: the compiled entry points of "
                            f"{cls.__mro__[1].__name__} play its own index. Write the index as a module-level "
                            "function with its entry points, as bandit_gym/agents/thresholding/lsa.py does, or "
                            "subclass Agent and write select")

    def index_param(self) -> float:
        """The agent's constant passed to ``index`` as ``param``."""
        return 0.0

    def allocate(self, n: int, k: int) -> None:
        self.scores = self.new_scores()
        self.per_copy = np.zeros(n)
        self.state = ArmRuleState(np.zeros((n, k)), np.zeros((n, k)))

    def begin(self, obs: Obs, rows: np.ndarray) -> None:
        self.prepare(obs, rows)

    def prepare(self, obs: Obs, rows: np.ndarray) -> None:
        """Set per-copy constants at the start of an episode (e.g. UCBE's exploration parameter)."""

    # ----------------------------------------------------------------------------------------------- decisions
    def select(self, obs: Obs) -> np.ndarray:
        """The arm of smallest index in every copy (``N,``), after the initial round (each arm once, in the copy's
        arm order, while ``init_pulls``): the compiled rule's (``rule_step``), which a subclass may call as
        ``super().select(obs)`` and change."""
        return self._compiled_decision(obs, self.rule_step)[:, 0].copy()

    def answer(self, obs: Obs) -> np.ndarray:
        r"""The rule's answer bits (``(N, K)``): the empirical \(\mathbb{1}\{\hat\theta_i \ge \theta\}\) for an index
        policy, Opt-KG's Bayes decision, from the same compiled step as ``select``."""
        return self._compiled_decision(obs, self.rule_step)[:, 1:].copy()

    def rule_step(self, obs: Obs, action: np.ndarray, follows: bool = True) -> np.ndarray:
        """One step of the compiled rule over the batch ``obs``, written into ``action`` (``[arm, answer bits]`` per
        copy; the bits of the arms whose index did not change are those ``action`` holds). The index and the bit of
        the arm each copy pulled last are updated (every arm at an episode start); where the step did not run on
        the previous observation (``follows`` False) every arm's are recomputed from the statistics."""
        p0, p1 = self.rule_constants()
        scores = self.scores
        last = obs["last_arm"] if follows else np.full_like(obs["last_arm"], -1.0)
        return self.kernels.act((
            self.init_pulls, p0, p1, self.per_copy, last, obs["last_value"], obs["counts"], obs["sums"],
            obs["threshold"], obs["budget_left"], self.total_budget, *self.state, scores.values, scores.arm_at,
            scores.position_of, action,
        ))

    @writes_answer
    def _act_batch(self, obs: Obs, last: np.ndarray, family: Family) -> np.ndarray:
        """``select`` and ``answer`` in one compiled pass, into the action buffer."""
        return self._decided_with(self.rule_step(obs, self._action))

    def compiled_rollout(self, obs: Obs) -> tuple[Callable[..., Any], tuple[Any, ...]] | None:
        self._start_all(obs)
        p0, p1 = self.rule_constants()
        args = (False, self.init_pulls, p0, p1, self.per_copy, self.scores.arm_at, self.scores.position_of)
        return self.kernels.play, args
