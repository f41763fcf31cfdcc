"""The base class of the best-arm agents (and of CLUCB-PAC): a compiled rule per copy, run over the batch, stopped
by a stopping component (``Stopping``) in the fixed-confidence setting."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from bandit_gym.agents.base import Agent, Obs, writes_answer
from bandit_gym.agents.best_arm._kernels import WORK_ROWS, in_arm_order
from bandit_gym.agents.best_arm._stopping import CHOICES, Stopping
from bandit_gym.families import Family


def records(fields: tuple[str, ...], choices: tuple[str, ...] = ()) -> np.dtype:
    """The record type of named ``fields`` (a copy's constants, state or arrays): int64 for the fields named in
    ``choices``, each a choice among named options (the option's index in its tuple, compared with the option's
    named constant: ``constants["threshold"] == _stopping.MIXTURE``), float64 for the others."""
    unknown = set(choices) - set(fields)
    if unknown:
        raise ValueError(f"choices {sorted(unknown)} are not among the fields {list(fields)}")
    return np.dtype([(name, np.int64 if name in choices else np.float64) for name in fields])


class BestArmAgent(Agent):
    """Base of the (epsilon, m)-best-arm agents. Each agent is a compiled *rule* that decides one step of one copy,

        rule(counts, sums, made, budget, m, epsilon, constants, state, arrays, work, answer, final) -> arm

    from the copy's float32 pull counts and sums (read as float64, as the observation gives them), the pulls made
    so far, the budget (the cap in the fixed-confidence setting), m and epsilon (as the float32 observation
    holds them). The copy's own data are typed records with named fields (``records``: float64 numbers, int64
    choices), read and written by name (``constants["delta"]``, ``state["pending"] = ...``), whose names each agent
    declares:

    - ``constants``: the per-copy parameters (``constant_fields``), set at each episode start by ``begin``; a
      choice among named options (``choice_fields``: T&S's ``tracking``) holds the option's index in its tuple and
      is compared with the option's named constant (``constants["tracking"] == D_TRACKING``);
    - ``state``: the per-copy state (``state_fields``);
    - ``arrays``: per-copy arrays (``array_fields``), ``array_length(K)`` floats each (K unless the agent says
      otherwise): ``arrays["alive"]`` is one copy's row.

    ``work`` holds scratch rows (nothing in them survives a step), ``answer`` the answer bits the rule submits
    (kept between steps: UGapEb's recommendation lives there). It returns the arm to pull, or K to stop.
    ``final`` says that the answer will be scored; rules whose answer is a function of the statistics alone may
    skip it otherwise (the per-step driver always passes True).

    Ties: a rule breaks ties between arms by position (the first arm wins), and every copy plays in its own order
    of the arms (``order``, the agent's tie rule): with ``tie_break="random"`` (the default) an order drawn per copy
    and episode from the agent's seeded generator, so every tie goes to each tied arm with equal probability and
    the agent's results are the same in distribution when the instance's arms are permuted; with
    ``tie_break="index"`` the identity, so ties go to the smallest index (the reading of most public code).

    The rule is written in the agent's own file, a module-level function, with its entry points (``kernels``, a
    ``EntryPoints``): the drivers of ``bandit_gym.agents.best_arm._kernels`` run it over the batch in one compiled
    pass (``act``) and play whole episodes with it (``compiled_rollout``), so the two agree bit for bit; numba
    compiles them on first use and caches them on disk (``bandit_gym.jit``).

    The agent decides by ``select`` (the rule's arm, K where it stops), ``stop`` and ``answer``, all read from one
    compiled step per observation (``rule_step``); ``act`` runs that step directly unless a subclass overrides
    ``select`` or ``stop`` (then ``act`` plays the subclass's, which may call ``super()``)."""

    families: ClassVar[tuple[str, ...]] = ("best_arm",)
    #: the names of the rule's per-copy parameters, state and arrays (fields of ``constants``, ``state``, ``arrays``)
    constant_fields: ClassVar[tuple[str, ...]] = ()
    state_fields: ClassVar[tuple[str, ...]] = ()
    array_fields: ClassVar[tuple[str, ...]] = ()
    #: the constants that hold a choice among named options (int64 fields, ``records``), the stopping component's
    #: (``_stopping.CHOICES``) besides
    choice_fields: ClassVar[tuple[str, ...]] = ()
    #: whether the rule identifies the best arm only (m = 1), as its paper defines it: an env with m > 1 is refused
    best_arm_only: ClassVar[bool] = False

    #: the rule's compiled entry points (``bandit_gym._dispatch.EntryPoints``), set in its file
    kernels: ClassVar[Any] = None
    #: the entry points of the rule's any-m form, for a rule whose m = 1 form (``kernels``) is compiled apart from
    #: the top-m work it never reaches (a batch with any m > 1 plays these); None: ``kernels`` play every m
    top_m_kernels: ClassVar[Any] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Refuse a ``rule`` method: the rule is a module-level function compiled with its entry points
        (``kernels``), and a method of that name would never be played."""
        super().__init_subclass__(**kwargs)
        if "rule" in vars(cls):
            raise TypeError(f"{cls.__name__}.rule would not be played: write the rule as a module-level function "
                            "with its entry points and set kernels = EntryPoints(step, parallel_step, rollout) "
                            "(see bandit_gym.agents.best_arm._kernels)")

    def __init__(self, *, stopping: Stopping | None = None, tie_break: str = "random") -> None:
        """``stopping``: the stopping component of a fixed-confidence rule (its fields ``_stopping.FIELDS`` among
        the rule's ``constant_fields``; the copies' constants record also has the field ``stopping.field``, which
        names the component's kind to the compiled rule: ``_stop.kind``), None for a fixed-budget rule. Its
        parameters become the agent's
        attributes ``delta``, ``stopping`` (the rule's name), ``threshold``, ``distribution`` and ``sigma``."""
        self.stopper = stopping
        if stopping is not None:
            self.delta: float | None = stopping.delta  # None: read from the env (CLUCB-PAC's own delta)
            self.stopping, self.threshold = stopping.rule, stopping.threshold
            self.distribution, self.sigma = stopping.distribution, stopping.sigma
        super().__init__(tie_break=tie_break)

    def params(self) -> dict[str, Any]:
        return {**({} if self.stopper is None else self.stopper.params()), **super().params()}

    def constants_type(self) -> np.dtype:
        """The record type of a copy's constants: ``constant_fields``, and the stopping component's kind field
        (``Stopping.field``); its choices (``choice_fields``, ``_stopping.CHOICES``) int64."""
        if self.stopper is None:
            return records(self.constant_fields, self.choice_fields)
        return records((*self.constant_fields, self.stopper.field), (*CHOICES, *self.choice_fields))

    def array_length(self, k: int) -> int:
        """Floats in each of a copy's ``arrays`` fields, for K arms."""
        return k

    def allocate(self, n: int, k: int) -> None:
        self.constants = np.zeros(n, self.constants_type())
        self.state = np.zeros(n, records(self.state_fields))
        self.arrays = np.zeros((n, self.array_length(k)), records(self.array_fields))
        self.work = np.zeros((n, WORK_ROWS, k))
        self.order = self.new_scores()  # each copy's arm order: the tie rule (reshuffled per episode)
        # the statistics and the answer as the rule sees them, by position in the copy's order
        self.seen_counts = np.zeros((n, k), dtype=np.float32)
        self.seen_sums = np.zeros((n, k), dtype=np.float32)
        self.seen_answer = np.zeros((n, k), dtype=np.int64)

    def begin(self, obs: Obs, rows: np.ndarray) -> None:
        """A stopped rule's episode start: the stopping component's constants, and every state field at -1 (the
        pulls made at the last act, -1 before the first: ``_fixed_confidence.start``). Nothing for a rule without
        a stopping component; a subclass sets its own fields after this."""
        if self.stopper is not None:
            self.stopper.begin(self.constants, rows, obs, self.num_arms)
            for name in self.state_fields:
                self.state[name][rows] = -1.0

    def check_env(self, env: Any) -> None:
        """The stopping component's check of the env's arms (``Stopping.check_env``); nothing without one."""
        if self.stopper is not None:
            self.stopper.check_env(type(self).__name__, env)

    def by_arm(self, values: np.ndarray) -> np.ndarray:
        """Per-copy values kept by position in the copy's arm order (``(N, K)``), indexed by arm."""
        return np.take_along_axis(values, self.order.position_of, axis=1)

    def check_m(self, m: int) -> None:
        """Raise if the agent cannot return m arms (m = 1 only, for a ``best_arm_only`` rule)."""
        if self.best_arm_only and m != 1:
            raise ValueError(f"{type(self).__name__} identifies the best arm (m = 1); the env has m = {m}")

    # ----------------------------------------------------------------------------------------------- decisions
    def select(self, obs: Obs) -> np.ndarray:
        """The arm each copy pulls next (``(N,)``), K where the rule stops: the compiled rule's (``rule_step``),
        which a subclass may call as ``super().select(obs)`` and change."""
        return self._compiled_decision(obs, self.rule_step)[:, 0].copy()

    def stop(self, obs: Obs) -> np.ndarray | None:
        """Where the rule stops now (``(N,)`` bools): its stopping component's test, or the end of its own
        schedule; read from the same compiled step as ``select``."""
        return self._compiled_decision(obs, self.rule_step)[:, 0] == self.num_arms

    def answer(self, obs: Obs) -> np.ndarray:
        """The rule's answer bits (``(N, K)``, indexed by arm), from the same compiled step as ``select``."""
        return self._compiled_decision(obs, self.rule_step)[:, 1:].copy()

    def rule_step(self, obs: Obs, action: np.ndarray, follows: bool = True) -> np.ndarray:
        """One step of the compiled rule for every copy of the batch ``obs``, written into ``action`` (``[arm or K,
        answer bits]`` per copy). The rule reads every arm's statistics at each step (``follows`` is not needed)."""
        self.check_m(int(obs["m"][0, 0]))
        if self.stopper is not None:  # a Bernoulli component refuses rewards outside [0, 1]
            self.stopper.check_rewards(obs)
        return self.entry_points(obs["m"]).act((
            obs["m"], obs["epsilon"], obs["budget_left"], self.total_budget, obs["counts"], obs["sums"],
            self.order.arm_at, self.seen_counts, self.seen_sums, self.seen_answer, self.constants, self.state,
            self.arrays, self.work, action))

    @writes_answer
    def _act_batch(self, obs: Obs, last: np.ndarray, family: Family) -> np.ndarray:
        """``select``, ``stop`` and ``answer`` in one compiled pass, into the action buffer."""
        return self._decided_with(self.rule_step(obs, self._action))

    def compiled_rollout(self, obs: Obs) -> tuple[Callable[..., Any], tuple[Any, ...]] | None:
        """Whole episodes of the rule (``kernels.play``). No reward check: ``play_compiled`` plays the package's
        Bernoulli envs only."""
        batch = self._start_all(obs)
        self.check_m(int(batch["m"][0, 0]))
        return self.in_order(self.entry_points(batch["m"]).play), (self.constants, self.state, self.arrays, self.work)

    def entry_points(self, m: np.ndarray) -> Any:
        """The entry points that play a batch whose copies have answer sizes ``m``: ``top_m_kernels`` where the rule
        has them and some m differs from 1, else ``kernels`` (both the same numbers for m = 1)."""
        return self.kernels if self.top_m_kernels is None or bool(np.all(m == 1)) else self.top_m_kernels

    def in_order(self, play: Callable[..., Any]) -> Callable[..., Any]:
        """Whole episodes of ``play`` in each copy's arm order (``in_arm_order``; the identity plays as is)."""
        return play if self.tie_break == "index" else in_arm_order(play, self.order.arm_at)
