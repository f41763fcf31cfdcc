"""The agent protocol: ``reset(seed)``, then ``act(obs)`` on one observation or a batch of them.

An agent reads everything from the observation (K, the threshold, the budget left, the statistics) and is
configured only with its own parameters. The same code path serves a single env (unbatched observation) and a
vector env (every array with a leading axis N): the base class adds the axis, keeps per-copy state as arrays of
N rows, and notices new episodes per copy (``last_arm == -1``), so a vector env's autoresets need no care.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import numpy as np

from bandit_gym import _validation as check
from bandit_gym.agents._fast_paths import FastPaths, resolve_fast_paths
from bandit_gym.agents._fast_paths import plays as plays
from bandit_gym.agents._fast_paths import plays_select as plays_select
from bandit_gym.agents._fast_paths import writes_answer as writes_answer
from bandit_gym.agents._observations import Obs as Obs
from bandit_gym.agents._observations import as_batch, check_values
from bandit_gym.agents._observations import family_names as family_names
from bandit_gym.agents._returns import checked_answer, checked_arms, checked_stops
from bandit_gym.agents.scores import ArmScores
from bandit_gym.families import Family, family_of

TIE_BREAKS = ("random", "index")
AGENT_STREAM = 0xA6E47
"""The spawn key of an agent's generator under its seed (``reset(seed)``): an env seeded with the same integer
draws from ``SeedSequence(seed)`` itself, so the agent's draws (its tie order, its samples) are independent of the
env's samples even when the two get the same seed, as ``play_episode`` and most user code give them."""


class Agent:
    """Base class of every agent.

    Subclasses set ``families`` and implement ``select`` (one arm per copy); on the thresholding bandit the
    answer is filled in with the empirical rule. Agents with another answer or a compiled step override
    ``_act_batch``.

    Your own agent: a subclass with ``families`` and ``select``, which reads the batched observation (arrays
    of N rows) and returns N arms; ``stop`` (optional, pure-exploration families) returns N bools, True where a
    copy stops now and is scored on its answer; per-copy state goes in ``allocate`` and ``begin``. Break ties with
    ``argmax`` / ``argmin``, which honour ``tie_break``. Experiment specs name it by import path
    (``"my_module:MyRule"``) or by a name given to ``bandit_gym.agents.register``:

        class GreedyCount(Agent):
            families = ("thresholding",)
            anytime = True  # never reads budget_left: scored at every budget from one episode

            def select(self, obs):
                return self.argmin(obs["counts"])  # the least pulled arm, ties at random

    A subclass of a built-in agent that overrides ``select`` (or ``act``) is played through its override on
    every path: the parent's compiled rollout, compiled step and batched pulls, which stand for the parent's own
    rule, are switched off for it (``fast_paths``). What ``select`` returns is checked: one whole arm
    index per copy (K, stop, on pure-exploration envs), never rounded or padded; ``stop`` and ``answer`` alike.

    Anytime. The experiment engine plays an agent whose class sets ``anytime = True`` once per run to the
    largest budget and scores its answers at every smaller budget on the way (one episode serves every budget).
    That is right only if the agent never reads the horizon: not ``budget_left``, not ``total_budget``. The
    default, ``anytime = False``, is the safe one: the engine plays one episode per budget. An agent whose
    parameters decide (UCB's fixed ``delta``) overrides the classmethod ``is_anytime``.
    """

    #: env families this agent plays (``Family`` values or their names)
    families: ClassVar[tuple[str, ...]] = ()
    #: constructor arguments computed from the true instance (see ``bandit_gym.instances.oracle_values``)
    oracle_parameters: ClassVar[tuple[str, ...]] = ()
    #: parameters that replace the oracle ones when given (UGapEb's and UCB-E's exploration ``a``)
    oracle_alternatives: ClassVar[tuple[str, ...]] = ()
    #: True if the agent (with its default parameters) never reads the horizon T, so one run to the largest
    #: budget serves every budget; False (the default) plays one episode per budget
    anytime: ClassVar[bool] = False

    @classmethod
    def is_anytime(cls, params: Mapping[str, Any]) -> bool:
        """Whether an agent built with ``params`` is anytime (parameters may fix what T would otherwise set);
        ``cls.anytime`` unless overridden."""
        return cls.anytime

    @classmethod
    def families_of(cls, params: Mapping[str, Any]) -> tuple[Family, ...]:
        """The families an agent built with ``params`` plays (a parameter may choose one, as ``ArmwisePPO``'s
        ``problem``); ``cls.families`` unless overridden."""
        return tuple(Family(name) for name in cls.families)

    @classmethod
    def data_files(cls, params: Mapping[str, Any]) -> tuple[Any, ...]:
        """The files an agent built with ``params`` reads its decisions from (a trained policy's weights), as
        paths or package resources: their bytes join its code in the fingerprint of the cells it plays
        (``bandit_gym.provenance``), so a policy saved again under the same name recomputes its cells. No files
        by default."""
        return ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A subclass's ``families`` become ``Family`` members; a misspelt family is
        refused when the class is defined."""
        super().__init_subclass__(**kwargs)
        given = cls.__dict__.get("families")
        if given is None:
            return
        allowed = [family.value for family in Family]
        if isinstance(given, str) or not all(isinstance(name, str) and name in allowed for name in given):
            raise ValueError(f"{cls.__name__}.families = {given!r}: must be a tuple of families from {allowed}")
        cls.families = tuple(Family(name) for name in given)

    def __init__(self, *, tie_break: str = "random") -> None:
        self.tie_break = check.choice("tie_break", tie_break, TIE_BREAKS)
        self.reset()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self.params().items())})"

    def params(self) -> dict[str, Any]:
        """The agent's parameters, as passed to its constructor."""
        return {"tie_break": self.tie_break}

    # ----------------------------------------------------------------------------------------------- protocol
    def reset(self, seed: int | None = None) -> None:
        """Forget all state and seed the agent's own generator (tie-breaking and any randomness)."""
        self.rng = np.random.default_rng(None if seed is None else np.random.SeedSequence(
            seed, spawn_key=(AGENT_STREAM,)))
        self._fresh = np.zeros(0, dtype=bool)  # copies whose last observation was an episode's first
        self._checked: dict[str, np.ndarray] = {}  # the batched observation's arrays, once validated
        self._checked_family = Family.THRESHOLDING  # read only when ``_checked`` holds arrays
        self._trusted = False  # the checked arrays are an env's read-only buffers
        self.num = 0
        self.num_arms = 0
        self.total_budget = np.zeros(0, dtype=np.int64)
        self._tie_order: ArmScores | None = None
        self._answered = np.zeros((0, 0), dtype=np.int64)  # actions with the class's own answer
        self._acts = 0  # calls of act: the compiled decision runs once per call (``_compiled_decision``)
        self._decided = -1  # the call of act whose observation ``_decision`` answers
        self._decision = np.zeros((0, 0), dtype=np.int64)
        self._decided_into = self._decision  # the buffer the step wrote at act ``_decided``

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_checked": {}}  # not the env's arrays

    def act(self, obs: Obs) -> np.ndarray:
        """Return the action for one observation, or an array of N actions for a batch of N observations.

        A batch of pure-exploration actions is the agent's own buffer, rewritten by the next call (only the
        changed entries are touched): copy it to keep it. A single action is a fresh array."""
        batch, single, family, last = self._prepare(obs)
        self._acts += 1
        paths = fast_paths(type(self))
        action = (self._act_batch if paths.step else self._plain_step)(batch, last, family)
        if paths.own_answer and family.pure_exploration:
            action = self._with_own_answer(batch, action)
        return action[0].copy() if single else action

    def _with_own_answer(self, batch: Obs, action: np.ndarray) -> np.ndarray:
        """The step's arms (or stops) with the answer of the class's own ``answer``, in a buffer of its own (the
        step's buffer is the parent's, which a compiled step may read back)."""
        if self._answered.shape != action.shape:
            self._answered = np.zeros_like(action)
        self._answered[:, 0] = action[:, 0]
        self._answered[:, 1:] = self._checked_answer(self.answer(batch))
        return self._answered

    def batch_pulls(self, obs: Obs) -> np.ndarray | None:
        """The pulls each copy makes next in one batched call (``env.unwrapped.allocate``): ``(N, K)`` counts,
        ``(K,)`` for one observation; a row of zeros means that copy acts through ``act`` next (to answer,
        stop or pull one arm). None for an agent without a batched form (the default).

        Phase-based agents (Uniform and Successive Rejects on pure-exploration envs, AdaptiveTopK, OptMAI)
        return each phase's pulls at once; their decisions read only counts and sums, so playing the batches
        and playing ``act`` pull by pull give the same results (the same samples with common random
        numbers; tested)."""
        if not (self.batched and fast_paths(type(self)).batches):
            return None
        batch, single, family, _ = self._prepare(obs)
        pulls = self._batch_pulls(batch, family)
        if pulls is None:
            return None
        return pulls[0].copy() if single else pulls

    #: True if the agent reads every value of the observation at every call (a policy network): the family's
    #: constants are then checked at every call too, not only when an episode begins
    reads_every_value: ClassVar[bool] = False
    #: True if the agent reads the threshold bandit's per-level counts (``level_exceed``, ``level_trials``)
    level_keys: ClassVar[bool] = False
    #: True if the agent has a batched form (``batch_pulls``)
    batched: ClassVar[bool] = False

    @classmethod
    def batches_on(cls, family: Family) -> bool:
        """Whether the agent pulls in batches (``batch_pulls``) on envs of ``family``: its class has a batched form
        (``batched``) for that family (``batched_family``) that plays its decisions (``fast_paths``)."""
        return cls.batched and fast_paths(cls).batches and cls.batched_family(family)

    @classmethod
    def batched_family(cls, family: Family) -> bool:
        """Whether the class's batched form serves envs of ``family``: every family it plays, unless a subclass
        has its batched form on some families only."""
        return True

    def _batch_pulls(self, obs: Obs, family: Family) -> np.ndarray | None:
        """See ``batch_pulls``: the batch's pulls, after new episodes have begun."""
        return None

    def _prepare(self, obs: Obs) -> tuple[Obs, bool, Family, np.ndarray]:
        """Validate and batch ``obs``, begin the episodes that start with it; return ``(batch, single, family,
        last_arm)``."""
        if self._checked and isinstance(obs, dict) and obs.keys() == self._checked.keys() and all(
                obs[key] is value for key, value in self._checked.items()):
            batch, single, family = obs, False, self._checked_family  # the arrays validated last time
            if not self._trusted:
                self._check_values(batch, family, single)
        else:
            batch, single = self._as_batch(obs)
            family = family_of(batch)  # one of self.families: _as_batch checked it
            # a vector env hands out the same arrays at every step: validated once (their shapes cannot change)
            self._checked = dict(batch) if batch is obs else {}
            self._checked_family = family
            self._check_values(batch, family, single)
            # The no-copy fast path (copy=False) hands out read-only views of the env's own buffers, the same
            # arrays at every step, which only the env writes: their values are checked at this first sight only.
            self._trusted = bool(self._checked) and not any(value.flags.writeable for value in batch.values())
        last = batch["last_arm"][:, 0]
        first = last == -1
        if first.any() or batch["counts"].shape != (self.num, self.num_arms):
            # An episode begins at its first observation, once: acting on it again (the same copy still at -1)
            # must not draw a new tie order.
            self._start(batch, first & ~self._fresh if self._fresh.shape == first.shape else first.copy())
        self._fresh = first
        return batch, single, family, last

    def _check_values(self, batch: Obs, family: Family, single: bool) -> None:
        """Check the values the compiled code indexes or counts with, at every call, before any of it runs (what and
        why: ``_observations.check_values``)."""
        going = batch["counts"].shape == (self.num, self.num_arms)  # copies seen before: their starting budgets known
        check_values(batch, family, single, self.total_budget if going else None, self.reads_every_value,
                     self._reads_levels())

    def _reads_levels(self) -> bool:
        """Whether this agent reads the threshold bandit's per-level counts (``level_keys`` by default; a policy
        network knows it only once loaded)."""
        return self.level_keys

    def check_env(self, env: Any) -> None:
        """Raise a ValueError if this agent cannot play ``env`` (a single env of the spec, at its first budget),
        saying why; the experiment engine calls it when it checks a spec, so that the mistake is one line
        before any cell runs. The default checks nothing: the observation is checked at every ``act``."""

    def rollout_plan(self, obs: Obs) -> tuple[Callable[..., Any], tuple[Any, ...]] | None:
        """``compiled_rollout``, or None where it does not play this agent's decisions (``fast_paths``)."""
        return self.compiled_rollout(obs) if fast_paths(type(self)).rollout else None

    def compiled_rollout(self, obs: Obs) -> tuple[Callable[..., Any], tuple[Any, ...]] | None:
        """Begin the episodes of every copy of ``obs`` (a first observation) as ``act`` would, and return
        the compiled whole-episode play of this agent with its arguments, or None if it has none.

        Used by ``bandit_gym.rollout.play_compiled``, which plays the Bernoulli thresholding and best-arm envs
        with common random numbers in compiled code; the result equals playing ``act`` step by step, bit for bit
        (tested)."""
        return None

    def _start(self, batch: Obs, starts: np.ndarray) -> None:
        """Begin new episodes in the copies ``starts`` (all of them at the first sight of a batch)."""
        n, k = batch["counts"].shape
        if (n, k) != (self.num, self.num_arms):
            self._allocate(n, k)
            starts[:] = True  # first sight of these copies: (re)initialise their whole state
        if starts.any():
            self._begin(batch, np.flatnonzero(starts))

    def _start_all(self, obs: Obs) -> Obs:
        """Begin the episodes of every copy of a batched first observation; return it validated."""
        batch, single = self._as_batch(obs)
        family = family_of(batch)  # one of self.families: _as_batch checked it
        if single or not family.pure_exploration:
            raise ValueError("a compiled rollout needs the batched observation of a pure-exploration vector env")
        self._check_values(batch, family, single)
        self._start(batch, np.ones(batch["counts"].shape[0], dtype=bool))
        return batch

    def _act_batch(self, obs: Obs, last: np.ndarray, family: Family) -> np.ndarray:
        """The actions of a batch whose new episodes have begun (``act``): the plain step ``_plain_step`` unless a
        class gives a faster one, standing for its ``select``, ``stop`` and ``answer`` (a compiled step)."""
        return self._plain_step(obs, last, family)

    def _plain_step(self, obs: Obs, last: np.ndarray, family: Family) -> np.ndarray:
        """The actions of a batch whose new episodes have begun: ``select`` after ``_gather_last``, ``stop``, and
        on pure-exploration envs ``answer``: the agent's own if its class overrides it, else the family's
        empirical answer (thresholding: ``1{theta_hat_i >= theta}``; best arm and top K: the m largest empirical
        means, an arm never pulled last), of which only the bits that can have changed are recomputed."""
        self._gather_last(obs, last)
        arms = self._checked_arms(self.select(obs), family)
        stops = self.stop(obs)
        if stops is not None:
            arms = np.where(self._checked_stops(stops, family), self.num_arms, arms)
        if family.pure_exploration and fast_paths(type(self)).own_answer:  # ``act`` adds the agent's own answer
            self._action[:, 0] = arms
            return self._action
        if family is Family.THRESHOLDING:
            return self._answer_action(obs, arms)
        if family.answers_a_set:
            from bandit_gym.agents.ranking import top_m_answers

            top_m_answers(obs["m"], obs["counts"], obs["sums"], self._arm_order().arm_at, self._action)
            self._action[:, 0] = arms
            return self._action
        return arms

    def _checked_arms(self, arms: Any, family: Family) -> np.ndarray:
        """What ``select`` returned, refused unless it is one whole arm index per copy (``_returns.checked_arms``)."""
        return checked_arms(arms, family, type(self).__name__, self.num, self.num_arms)

    def _checked_answer(self, bits: Any) -> np.ndarray:
        """What ``answer`` returned, refused unless it is one bit per arm and copy (``_returns.checked_answer``)."""
        return checked_answer(bits, type(self).__name__, self.num, self.num_arms)

    def _checked_stops(self, stops: Any, family: Family) -> np.ndarray:
        """What ``stop`` returned, refused unless it is one bool per copy on a pure-exploration env
        (``_returns.checked_stops``)."""
        return checked_stops(stops, family, type(self).__name__, self.num)

    def _gather_last(self, obs: Obs, last: np.ndarray) -> None:
        """Statistics of the arm each copy pulled at the previous step, the only arm whose statistics changed.

        Sets ``moved`` (the copies that pulled: all, as a slice, or an index array), ``last_arms``,
        ``last_counts`` and ``last_sums`` (float64), and ``whole`` (copies whose every arm must be recomputed:
        episode start, ``last_arm == -1``, or a batched allocation, ``last_arm == -2``)."""
        negative = last < 0
        self.whole = np.flatnonzero(negative)
        self.moved = slice(None) if not self.whole.size else np.flatnonzero(~negative)
        self.last_arms = last[self.moved].astype(np.int64)
        flat = self._offsets[self.moved] + self.last_arms
        self.last_counts = np.ravel(obs["counts"]).take(flat).astype(np.float64)
        self.last_sums = np.ravel(obs["sums"]).take(flat).astype(np.float64)

    def _compiled_decision(self, obs: Obs, step: Callable[[Obs, np.ndarray, bool], np.ndarray]) -> np.ndarray:
        """The action ``[arm (K: stop), answer bits]`` of a class's compiled step on the batched observation ``obs``
        of the current ``act``: how a built-in with a compiled rule implements ``select``, ``stop`` and ``answer``,
        which all read it. ``step(obs, action, follows)`` runs once per ``act`` (the rule's state advances once per
        observation, whichever of the three is called first, or the class's fast step, ``_decided_with``), into a
        buffer of its own (a subclass's ``select`` writes the arms of ``act``'s buffer); ``follows`` says that it
        also ran on the previous ``act`` into that buffer, so a step that updates only the arm pulled last may."""
        if self._decided != self._acts:
            if self._decision.shape != self._action.shape:
                self._decision = np.zeros_like(self._action)
            follows = self._decided == self._acts - 1 and self._decided_into is self._decision
            self._decided_with(step(obs, self._decision, follows))
        return self._decided_into

    def _decided_with(self, action: np.ndarray) -> np.ndarray:
        """Record ``action`` as the class's step on the current ``act``'s observation (a fast step calls it, so that
        ``select``, ``stop`` and ``answer`` read that step instead of running the rule again); return it."""
        self._decided, self._decided_into = self._acts, action
        return action

    # ----------------------------------------------------------------------------------------------- hooks
    def select(self, obs: Obs) -> np.ndarray:
        """Return the arm to pull in every copy, shape ``(N,)``."""
        raise NotImplementedError

    def stop(self, obs: Obs) -> np.ndarray | None:
        """Whether each copy stops now and is scored on its answer (the fixed-confidence setting): ``(N,)`` bools,
        or None (the default) for never. Called after ``select`` on the same observation; where it is True the
        copy plays ``K`` (stop) instead of ``select``'s arm. Pure-exploration envs only (an online env has no
        stop)."""
        return None

    def answer(self, obs: Obs) -> np.ndarray:
        """The answer bits of every copy, ``(N, K)`` 0/1 integers indexed by arm, that the action submits with
        ``select``'s arm (pure-exploration envs; the answer of the last step, or of the stop, is the one scored).
        The default is the family's empirical answer: thresholding ``1{theta_hat_i >= theta}`` (an arm never
        pulled: ``0 >= theta``); best arm and top K the m arms of largest empirical mean, an arm never pulled
        ranking last, ties by the agent's tie rule. Called after ``select`` and ``stop`` on the same
        observation; override it to answer otherwise (``top`` ranks with the tie rule)."""
        family = family_of(obs)
        if family is Family.THRESHOLDING:
            means = obs["sums"].astype(np.float64) / np.maximum(obs["counts"].astype(np.float64), 1.0)
            return (means >= obs["threshold"].astype(np.float64)).astype(np.int64)
        if not family.answers_a_set:
            raise ValueError(f"a {family.value!r} env takes no answer (only pure-exploration envs do)")
        from bandit_gym.agents.ranking import top_m_answers

        action = np.zeros((self.num, self.num_arms + 1), dtype=np.int64)
        return top_m_answers(obs["m"], obs["counts"], obs["sums"], self._arm_order().arm_at, action)[:, 1:]

    def begin(self, obs: Obs, rows: np.ndarray) -> None:
        """Reset the per-copy state of the copies ``rows`` that start a new episode."""

    def allocate(self, n: int, k: int) -> None:
        """Create the per-copy state arrays for ``n`` copies of a K-armed problem."""

    def argmax(self, values: np.ndarray) -> np.ndarray:
        """The arm of largest ``values`` in every copy: ``values`` of shape ``(N, K)`` (N copies, K arms, as in
        ``select``), result ``(N,)``. Ties follow ``tie_break``: ``"index"`` takes the smallest index;
        ``"random"`` takes each tied arm with equal probability, by a random order of the arms drawn from the
        agent's seeded generator per copy and episode (the built-in agents' rule, so repeated calls on one
        observation agree). ``values`` should hold no NaN (NaN counts as the largest, as in ``np.argmax``)."""
        return self._best_of(values, True)

    def argmin(self, values: np.ndarray) -> np.ndarray:
        """The arm of smallest ``values`` in every copy, ties as in ``argmax``."""
        return self._best_of(values, False)

    def top(self, values: np.ndarray, count: Any, among: np.ndarray | None = None) -> np.ndarray:
        """Bits ``(N, K)`` of the ``count`` largest ``values`` in every copy (``count`` one number, or one per
        copy), among the arms where ``among`` (an ``(N, K)`` bool mask; default every arm) is True: exactly
        ``min(count, arms among)`` ones per copy, as bools. Ties follow ``tie_break``, as in ``argmax``: with
        ``"random"`` every tied arm is kept with equal probability. -inf ranks below every finite value, still
        above the arms outside ``among``; ``values`` should hold no NaN."""
        values = np.asarray(values, dtype=np.float64)
        shape = (self.num, self.num_arms)
        if values.shape != shape or not self.num:
            raise ValueError(f"values must have shape (N, K) = {shape} (copies, arms of the observation being acted "
                             f"on: call top from select, stop or answer), got {values.shape}")
        eligible = np.ones(shape, dtype=bool) if among is None else np.asarray(among, dtype=bool)
        if eligible.shape != shape:
            raise ValueError(f"among must be a bool mask of shape (N, K) = {shape}, got {eligible.shape}")
        wanted = np.broadcast_to(np.asarray(count), (self.num,)).astype(np.int64)
        # by position in the copy's arm order (the tie rule), then by value, the eligible first
        position = self._arm_order().position_of
        order = np.lexsort((position, np.where(eligible, -values, 0.0), ~eligible), axis=1)
        rank = np.empty_like(order)
        np.put_along_axis(rank, order, np.broadcast_to(np.arange(self.num_arms), shape), axis=1)
        return eligible & (rank < wanted[:, None])

    def _best_of(self, values: np.ndarray, largest: bool) -> np.ndarray:
        values = np.asarray(values)
        if values.shape != (self.num, self.num_arms) or not self.num:
            raise ValueError(f"values must have shape (N, K) = {(self.num, self.num_arms)} (copies, arms of the "
                             f"observation being acted on: call argmax/argmin from select), got {values.shape}")
        if self.tie_break == "index":
            return values.argmax(axis=1) if largest else values.argmin(axis=1)
        return self._arm_order().best_of(np.arange(self.num), values, largest)

    def _arm_order(self) -> ArmScores:
        """Each copy's order of the arms that breaks ties (``argmax``, ``argmin``, the empirical answer): random per
        copy and episode with ``tie_break="random"``, the identity with ``"index"``."""
        if self._tie_order is None:  # drawn at first use: agents that never call this draw nothing
            self._tie_order = ArmScores(self.num, self.num_arms)
            if self.tie_break == "random":
                self._tie_order.shuffle(self.rng, np.arange(self.num))
            self._scores.append(self._tie_order)  # reshuffled per copy at each new episode
        return self._tie_order

    def new_scores(self) -> ArmScores:
        """Per-copy arm scores carrying this agent's tie rule (see ``ArmScores``)."""
        return ArmScores(self.num, self.num_arms)

    def _allocate(self, n: int, k: int) -> None:
        self.num, self.num_arms = n, k
        self.total_budget = np.zeros(n, dtype=np.int64)
        self._offsets = np.arange(n) * k
        self._action = np.zeros((n, k + 1), dtype=np.int64)
        self._tie_order = None
        self.allocate(n, k)
        self._scores = [value for value in vars(self).values() if isinstance(value, ArmScores)]

    def _begin(self, obs: Obs, rows: np.ndarray) -> None:
        if self.tie_break == "random":
            for scores in self._scores:
                scores.shuffle(self.rng, rows)
        self.total_budget[rows] = obs["budget_left"][rows, 0]
        self.begin(obs, rows)

    def _answer_action(self, obs: Obs, arms: np.ndarray) -> np.ndarray:
        """Fill the action buffer ``[arm, answer bits]`` with the empirical answer ``1{theta_hat_i >= theta}``
        (an arm never pulled answers ``0 >= theta``): only the previously pulled arm's bit is recomputed, every
        bit at an episode start or after a batched allocation. The buffer is reused by the next call."""
        from bandit_gym.agents._kernels import empirical_answers

        return empirical_answers(obs["last_arm"], obs["counts"], obs["sums"], obs["threshold"], arms, self._action)

    def _as_batch(self, obs: Obs) -> tuple[Obs, bool]:
        """Validate the observation's keys and shapes; add a leading axis to an unbatched observation
        (``_observations.as_batch``)."""
        return as_batch(obs, self.families, type(self).__name__, self._reads_levels)


def fast_paths(cls: type[Agent]) -> FastPaths:
    """The fast paths that play the decisions of agents of class ``cls`` (``resolve_fast_paths``), resolved once
    per class."""
    paths = _FAST_PATHS.get(cls)
    if paths is None:
        paths = _FAST_PATHS[cls] = resolve_fast_paths(cls, Agent)
    return paths


_FAST_PATHS: dict[type, FastPaths] = {}
