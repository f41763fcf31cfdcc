r"""The base class of the compiled thresholding rules, in two forms: a rule that pulls
\(\operatorname*{arg\,min}_i \mathrm{index}_i\) to the env's budget, where an arm's index depends only on its own
statistics (count, sum), on state of its own and on per-copy constants (APT, LSA, UCBE, Opt-KG), and a sampling rule
stopped arm by arm by the per-arm GLR stop at fixed confidence (``_glr.ArmStop``, a component the agent owns:
ThresholdingTaS, ThresholdingUniform, ThresholdingAPT, ThresholdingRacing). Only the arm pulled at the previous step
changes its statistics, so each step recomputes one entry per copy (\(O(N)\)) and takes one pass over the arms, in
one compiled pass (``bandit_gym.agents._kernels``, ``_glr.glr_step``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, NamedTuple

import numpy as np

from bandit_gym.agents.base import Agent, Obs, writes_answer
from bandit_gym.agents.thresholding._glr import ArmStop, Certificates
from bandit_gym.families import Family


class ArmRuleState(NamedTuple):
    r"""The arm rule's own state, two numbers per copy and arm (``(N, K)`` each; an index rule keeps none): what
    ``fresh`` and ``pulled`` return beside the index and the answer bit (Opt-KG: \(I(a, b)\) and \(\log c(a, b)\))."""

    s1: np.ndarray
    s2: np.ndarray


class ThresholdingAgent(Agent):
    """Base class of the compiled thresholding rules. A subclass gives its compiled entry points as ``kernels``
    (``bandit_gym._dispatch.EntryPoints``, made in its file) and its rule in one of two forms:

    - an index rule: ``index``, a function of one arm's statistics (smaller is pulled first) with the empirical
      answer, or a whole arm rule (Opt-KG), played to the env's budget;
    - a sampling rule stopped arm by arm: its constructor sets ``stopper``, the per-arm GLR stop
      (``_glr.ArmStop.component``), whose compiled step (``_glr.glr_step``) calls the rule between its tests (no
      whole-episode play: such a class sets ``compiled_rollout = Agent.compiled_rollout``).

    The agent decides by ``select``, ``stop`` and ``answer``, all read from one compiled step per observation
    (``rule_step``); ``act`` runs that step directly unless a subclass overrides ``select`` or ``stop`` (then
    ``act`` plays the subclass's, which may call ``super()``)."""

    families: ClassVar[tuple[str, ...]] = ("thresholding",)
    #: pull each arm once, in the copy's arm order, before following the index (rounds \(1, \dots, K\))
    init_pulls: ClassVar[bool] = True

    #: ``index(count, sum, theta, param, per_copy) -> float``, plain Python on floats (``math``), compiled by the
    #: kernels; ``param`` is ``index_param``, ``per_copy`` the copy's entry of ``self.per_copy``
    index: ClassVar[Callable[..., float]]
    #: the rule's compiled entry points (``bandit_gym._dispatch.EntryPoints``), made in the agent's file
    kernels: ClassVar[Any] = None
    def __init__(self, *, stopper: ArmStop | None = None, tie_break: str = "random") -> None:
        """``stopper``: the per-arm GLR stop of a rule stopped at fixed confidence (``ArmStop.component``), None for
        an index rule."""
        self.stopper = stopper
        super().__init__(tie_break=tie_break)

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
        """The agent's constant passed to the rule as ``param`` (to ``index``, or to a stopped rule's sampling
        rule): 0 unless the rule reads one."""
        return 0.0

    def params(self) -> dict[str, Any]:
        return {**({} if self.stopper is None else self.stopper.params()), **super().params()}

    def check_env(self, env: Any) -> None:
        """The stop's check of the env's arms (``ArmStop.check_env``); nothing for an index rule."""
        if self.stopper is not None:
            self.stopper.check_env(type(self).__name__, env)

    def allocate(self, n: int, k: int) -> None:
        """Each copy's arm scores (the index, with the tie rule), constant and rule state; a stopped rule's
        certificates (``_glr.Certificates``)."""
        self.scores = self.new_scores()
        self.per_copy = np.zeros(n)
        self.state = ArmRuleState(np.zeros((n, k)), np.zeros((n, k)))
        if self.stopper is not None:
            self.certificates = Certificates.allocate(n, k)

    def begin(self, obs: Obs, rows: np.ndarray) -> None:
        if self.stopper is not None:
            self.certificates.stale[rows] = True
        self.prepare(obs, rows)

    def prepare(self, obs: Obs, rows: np.ndarray) -> None:
        """Set per-copy constants at the start of an episode (e.g. UCBE's exploration parameter)."""

    # ----------------------------------------------------------------------------------------------- decisions
    def select(self, obs: Obs) -> np.ndarray:
        """The arm each copy pulls next (``N,``), K where a stopped rule stops: an index rule's arm of smallest index
        after the initial round (each arm once, in the copy's arm order, while ``init_pulls``); the compiled rule's
        (``rule_step``), which a subclass may call as ``super().select(obs)`` and change."""
        return self._compiled_decision(obs, self.rule_step)[:, 0].copy()

    def stop(self, obs: Obs) -> np.ndarray | None:
        """Where a stopped rule certifies every arm (``(N,)`` bools), from the same compiled step; None for an index
        rule (it never stops)."""
        if self.stopper is None:
            return None
        return self._compiled_decision(obs, self.rule_step)[:, 0] == self.num_arms

    def answer(self, obs: Obs) -> np.ndarray:
        r"""The rule's answer bits (``(N, K)``): the empirical \(\mathbb{1}\{\hat\theta_i \ge \theta\}\) for an index
        policy, Opt-KG's Bayes decision, each arm's certified side for a stopped rule, from the same compiled step as
        ``select``."""
        return self._compiled_decision(obs, self.rule_step)[:, 1:].copy()

    def rule_step(self, obs: Obs, action: np.ndarray, follows: bool = True) -> np.ndarray:
        """One step of the compiled rule over the batch ``obs``, written into ``action`` (``[arm, answer bits]`` per
        copy; the bits of the arms whose statistics did not change are those ``action`` holds). The arm each copy
        pulled last is updated (every arm at an episode start); where the step did not run on the previous
        observation (``follows`` False) every arm's are recomputed from the statistics."""
        scores = self.scores
        if self.stopper is not None:
            return self.kernels.act(self.stopper.arguments(
                type(self).__name__, obs, self.certificates, follows, self.index_param(), scores, action))
        p0, p1 = self.rule_constants()
        last = obs["last_arm"] if follows else np.full_like(obs["last_arm"], -1.0)
        return self.kernels.act((
            self.init_pulls, p0, p1, self.per_copy, last, obs["last_value"], obs["counts"], obs["sums"],
            obs["threshold"], obs["budget_left"], self.total_budget, *self.state, scores.values, scores.arm_at,
            scores.position_of, action,
        ))

    @writes_answer
    def _act_batch(self, obs: Obs, last: np.ndarray, family: Family) -> np.ndarray:
        """``select``, ``stop`` and ``answer`` in one compiled pass, into the action buffer."""
        return self._decided_with(self.rule_step(obs, self._action))

    def compiled_rollout(self, obs: Obs) -> tuple[Callable[..., Any], tuple[Any, ...]] | None:
        """Whole episodes of the rule (``kernels.play``); a stopped rule, which has none, sets ``Agent``'s."""
        self._start_all(obs)
        p0, p1 = self.rule_constants()
        args = (False, self.init_pulls, p0, p1, self.per_copy, self.scores.arm_at, self.scores.position_of)
        return self.kernels.play, args
