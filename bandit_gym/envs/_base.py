"""One batched engine per problem, and the two thin shells around it: a single ``gymnasium.Env`` and a native
``gymnasium.vector.VectorEnv``.

An engine holds the state of ``num`` independent copies of a problem as arrays with a leading copy axis and
advances them with array operations. The single env is the engine with ``num=1`` driven by ``self.np_random``;
the vector env is the same engine with ``num=N`` driven by one generator. Both therefore share every line of
problem logic, and a single env's trajectory equals a one-copy vector env's, bit for bit.
"""

from __future__ import annotations

import difflib
import inspect
import sys
from abc import ABC, abstractmethod
from collections.abc import Mapping
from types import FrameType
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space
from gymnasium.wrappers import TimeLimit

from bandit_gym import _validation as check
from bandit_gym.families import CONTRACTS, Family

Info = dict[str, np.ndarray]


def engine_arguments(engine_class: type) -> list[str]:
    """The keyword arguments an engine class takes (its ``__init__``'s and, where it passes ``**kwargs`` on, its
    bases'), ``num`` and the class's ``derived_arguments`` (those it sets itself for its base) excluded: the
    arguments of the env built on it."""
    names: list[str] = list(getattr(engine_class, "derived_arguments", ()))
    derived = len(names)
    for cls in engine_class.__mro__:
        if "__init__" not in vars(cls) or cls is object:
            continue
        parameters = inspect.signature(vars(cls)["__init__"]).parameters.values()
        names += [p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
                  and p.name not in ("self", "num") and p.name not in names]
        if not any(p.kind is p.VAR_KEYWORD for p in parameters):
            break
    return names[derived:]


def build_engine(engine_class: type[Engine], num: int, env: type, kwargs: Mapping[str, Any]) -> Engine:
    """``engine_class(num, **kwargs)`` for the env class ``env``, after a check of the argument names: a name the
    env does not take raises a TypeError that names the env, the argument, the closest allowed name and all of
    them (not the engine's internal ``__init__``)."""
    allowed = engine_arguments(engine_class)
    for name in kwargs:
        if name not in allowed:
            close = difflib.get_close_matches(name, allowed, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise TypeError(f"{env.__name__} got an unexpected keyword argument {name!r}{hint}; its arguments: "
                            f"{', '.join(allowed)}")
    return engine_class(num, **kwargs)


class Engine(ABC):
    """Arrays for ``num`` copies of one problem; subclasses implement the problem."""

    #: the problem family (``Family``); a subclass sets it, and reads the two below from its contract
    family: ClassVar[Family]
    #: the constructor argument that sets the pulls of an episode: its budget (the cap of a fixed-confidence env)
    #: or its horizon T (``Contract.horizon_argument``)
    horizon_argument: ClassVar[str]
    #: the per-run metrics the experiment engine records for this env, the main one first
    #: (``Contract.metric_names``)
    metric_names: ClassVar[tuple[str, ...]]
    #: the constructor takes ``common_random_numbers``
    takes_common_random_numbers: ClassVar[bool] = True
    #: how results of this env are plotted: its family's axes (None), or a variant of them that
    #: ``bandit_gym.plotting.METRIC_AXES`` names (``"correlated"``)
    plot_axes: ClassVar[str | None] = None
    #: instance attributes that the env shells expose (``env.unwrapped.means``, ...)
    exposed: ClassVar[frozenset[str]] = frozenset()

    num_arms: int
    #: the ``rgb_array`` rendering draws the true instance (a teaching aid; ``BanditEnv.show_truth``)
    show_truth: bool = True
    #: the single env's last action, whose answer the ``rgb_array`` rendering draws (None after a reset)
    last_action: np.ndarray | None = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "family" in vars(cls):
            contract = CONTRACTS[cls.family]
            cls.horizon_argument, cls.metric_names = contract.horizon_argument, contract.metric_names

    def __init__(self, num: int, arms: int = 2, levels: int = 0, shared: int = 0) -> None:
        """``num`` copies of a problem with ``arms`` arms (and ``levels`` threshold levels, ``shared`` bytes held
        once for all copies): refused, before anything is allocated, if their arrays would take more memory than
        ``bandit_gym._validation.memory_limit()`` (``check_env_memory``). Subclasses call it once they know K,
        before they allocate their own per-copy arrays."""
        self.num = check.integer("num_envs", num, minimum=1)
        check.check_env_memory(self.num, arms, levels, shared)
        #: the sizes the memory was checked with (arms, levels, shared bytes): an experiment checks its cells' too
        self.memory = (arms, levels, shared)
        self.finished = np.zeros(num, dtype=bool)
        #: copies whose last step ended their episode by truncation (set by engines that truncate)
        self.truncated = np.zeros(num, dtype=bool)
        self.obs: dict[str, np.ndarray] = {}

    @abstractmethod
    def observation_space(self) -> spaces.Dict:
        """The observation space of one copy: a flat Dict of 1-D float32 Boxes."""

    @abstractmethod
    def action_space(self) -> spaces.Space:
        """The action space of one copy."""

    @property
    def pure_exploration(self) -> bool:
        """Episodes end with an answer, scored once by ``answer_metrics``; else online: a reward per pull,
        and the step infos carry the expected rewards that the cumulative pseudo-regret sums."""
        return self.family.pure_exploration

    def answer_metrics(self, answer: np.ndarray, means: np.ndarray) -> dict[str, np.ndarray]:
        """The losses of answers ``(rows, K)`` (bits) on instances ``means`` ``(rows, K)``, at least ``regret``
        and ``error``, one value per row (pure-exploration engines)."""
        raise TypeError(f"a {self.family} env scores no answer: its regret is summed over the rounds")

    @property
    def answer_step(self) -> int | None:
        """The step on which an episode's answer is scored, at the latest (pure exploration: ``budget + 1``, the
        step after the last pull); a time limit shorter than that ends episodes unscored. None (the default) when
        rewards are paid at every step and a time limit only shortens the episode (the threshold bandit)."""
        return None

    #: keys accepted in ``reset(options=...)``
    reset_options: ClassVar[tuple[str, ...]] = ()

    def pin(self, options: dict[str, Any] | None) -> None:
        """Apply the options of an explicit ``reset``: an instance given there is used by every episode until
        the next explicit ``reset`` (a vector env's autoresets included); without one, the default returns.
        Validates everything before it stores anything: a rejected ``options`` leaves the engine as it was."""
        if options is None:
            options = {}
        if not isinstance(options, Mapping):
            raise TypeError(f"options={options!r}: reset options must be a dict (or None); allowed keys: "
                            f"{self.reset_options}")
        unknown = set(options) - set(self.reset_options)
        if unknown:
            raise ValueError(f"reset options {sorted(unknown)} are not supported; allowed keys: {self.reset_options}")
        self._pin(options)

    @abstractmethod
    def _pin(self, options: dict[str, Any]) -> None:
        """Validate and store the instance given in reset options (empty dict: the default instance)."""

    @abstractmethod
    def reset_rows(self, rng: np.random.Generator, rows: np.ndarray) -> None:
        """Start a new episode in the copies selected by the boolean mask ``rows``."""

    @abstractmethod
    def check_actions(self, actions: Any) -> np.ndarray:
        """Return the batch of actions as an integer array, or raise ValueError/TypeError naming the action."""

    @abstractmethod
    def step_rows(
        self, rng: np.random.Generator, actions: np.ndarray, rows: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, Info]:
        """Advance the copies in ``rows`` by one step; return rewards, terminations and per-copy info arrays."""

    def reset_info(self) -> dict[str, Any]:
        """The ``info`` of a ``reset`` (the generating model of a correlated instance; else empty); a vector env
        returns it as it is, shared by all its copies."""
        return {}

    def render_text(self, row: int) -> str:  # pragma: no cover - overridden
        raise NotImplementedError

    def render_rgb(self, row: int) -> np.ndarray:  # pragma: no cover - overridden
        raise NotImplementedError


class BanditEnv(gym.Env):
    """A single copy of an engine as a Gymnasium env (the reference, one pull per ``step``)."""

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}  # noqa: RUF012 (Gymnasium's convention)

    def __init__(self, engine: Engine, render_mode: str | None = None) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode={render_mode!r} is not supported; use None or one of {self.metadata['render_modes']}"
            )
        self.engine = engine
        self.family = engine.family
        self.render_mode = render_mode
        self.observation_space = engine.observation_space()
        self.action_space = engine.action_space()
        self._all = np.ones(1, dtype=bool)
        self._started = False

    def _observation(self) -> dict[str, np.ndarray]:
        return {key: value[0].copy() for key, value in self.engine.obs.items()}

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        if self.engine.answer_step is not None:  # a pure-exploration env refuses a time limit that cuts its answer
            for limit in _calling_time_limits(self):
                refuse_time_limit(self.engine, limit, "a TimeLimit around this env (gym.make(id, max_episode_steps=n) "
                                  "or TimeLimit(env, n)): ")
        self.engine.pin(options)  # validated before the generator is reseeded: a rejected reset changes nothing
        super().reset(seed=seed)
        self.engine.reset_rows(self.np_random, self._all)
        self.engine.last_action = None
        self._started = True
        return self._observation(), self.engine.reset_info()

    def _check_running(self) -> None:
        if not self._started:
            raise RuntimeError("step() was called before reset(); call reset() first")
        if self.engine.finished[0]:
            raise ValueError("step() was called after the episode terminated; call reset() before stepping again")

    def step(self, action: Any) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        self._check_running()
        actions = self.engine.check_actions(np.asarray(action)[None])
        rewards, terminated, info = self.engine.step_rows(self.np_random, actions, self._all)
        self.engine.last_action = actions[0].copy()
        info_out = {key: value[0].item() if value.ndim == 1 else value[0].copy() for key, value in info.items()}
        return self._observation(), float(rewards[0]), bool(terminated[0]), bool(self.engine.truncated[0]), info_out

    @property
    def show_truth(self) -> bool:
        """Whether ``render()`` in ``rgb_array`` mode draws the true means (default True, for teaching); set it to
        False to show only what the agent sees."""
        return self.engine.show_truth

    @show_truth.setter
    def show_truth(self, value: bool) -> None:
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError(f"show_truth must be True or False, got {value!r}")
        self.engine.show_truth = bool(value)

    def render(self) -> str | np.ndarray | None:
        if self.render_mode == "ansi":
            return self.engine.render_text(0)
        if self.render_mode == "rgb_array":
            return self.engine.render_rgb(0)
        return None

    def __getattr__(self, name: str) -> Any:
        # Expose the instance (``means``, ``threshold``, ...) of the single copy; wrappers read it at episode end.
        if name.startswith("_") or name == "engine":
            raise AttributeError(name)
        engine = self.__dict__.get("engine")
        if engine is not None and name in type(engine).exposed:
            value = getattr(engine, name)
            return value[0] if isinstance(value, np.ndarray) and value.ndim >= 1 and len(value) == 1 else value
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")


def engine_of(env: Any) -> Engine:
    """The engine behind a bandit_gym env or native vector env (through any wrappers), or a TypeError."""
    engine = getattr(env.unwrapped, "engine", None)
    if not isinstance(engine, Engine):
        raise TypeError(
            f"{type(env.unwrapped).__name__} is not a bandit_gym env; the bandit_gym wrappers need gym.make(id) or "
            "gym.make_vec(id, vectorization_mode='vector_entry_point') of a bandit_gym id"
        )
    return engine


def refuse_time_limit(engine: Engine, limit: int | None, where: str = "") -> None:
    """Raise a ValueError if a time limit of ``limit`` steps would end the episodes of ``engine`` before their
    answer is scored (pure exploration: the loss is paid on the answer step, so a cut episode pays nothing and
    its rewards are all 0). A limit at least as long as the episode, and any limit on an env that pays at every
    step (the threshold bandit), is accepted."""
    steps = engine.answer_step
    if limit is None or steps is None or limit >= steps:
        return
    raise ValueError(
        f"{where}max_episode_steps={limit} would end every episode before its answer is scored: an episode of this "
        f"{engine.family} env is {steps - 1} pulls, then the answer step ({steps} steps), and the loss of the answer "
        f"is paid on that step only, so the answers would never be scored (every reward 0 without a sample cost). "
        f"Pass budget={max(limit - 1, 1)} to the env instead (an episode of {max(limit, 2)} steps, its answer scored "
        "on the last) and no time limit."
    )


def _calling_time_limits(env: gym.Env) -> list[int]:
    """The ``max_episode_steps`` of the ``TimeLimit`` wrappers around ``env`` whose ``reset`` is calling it now.

    Gymnasium keeps a time limit in its ``TimeLimit`` wrapper only (``gym.make(id, max_episode_steps=n)`` leaves
    the env's own ``spec.max_episode_steps`` None) and gives an env no link to its wrappers: the frames of the
    ``reset`` calls that lead to this one are where they show. Only frames of functions named ``reset`` are
    looked into.

    This reads CPython's frames (``sys._getframe``, an implementation detail of CPython, also in PyPy) and the
    wrapper's ``_max_episode_steps``, the attribute Gymnasium's ``TimeLimit`` has kept since 0.26. It is a
    courtesy check: on an interpreter without ``sys._getframe`` it finds no limit and the env runs as it
    would (the anytime and record wrappers still refuse a truncated episode when it happens)."""
    limits: list[int] = []
    getframe = getattr(sys, "_getframe", None)
    if getframe is None:
        return limits
    frame: FrameType | None = getframe(2)
    while frame is not None:
        if frame.f_code.co_name == "reset":
            owner = frame.f_locals.get("self")
            if isinstance(owner, TimeLimit) and owner.unwrapped is env:
                limits.append(int(owner._max_episode_steps))
        frame = frame.f_back
    return limits


def check_arm_actions(actions: Any, num: int, num_arms: int) -> np.ndarray:
    """The ``num`` actions of a ``Discrete(K)`` env (one arm index per copy) as int64, or a clear error."""
    actions = np.asarray(actions)
    if actions.shape != (num,):
        if num == 1:
            raise ValueError(f"action must be one arm index (shape ()), got an array of shape {actions.shape[1:]}")
        raise ValueError(f"actions must be one arm index per copy, shape ({num},), got shape {actions.shape}")
    if not np.issubdtype(actions.dtype, np.integer):
        raise TypeError(f"action must be an integer arm index, got dtype {actions.dtype}")
    if actions.min() < 0 or actions.max() >= num_arms:
        bad = actions[(actions < 0) | (actions >= num_arms)][0]
        raise ValueError(f"action={bad} is not an arm; allowed arms are 0..{num_arms - 1}")
    return actions.astype(np.int64, copy=False)


def draw_means(sampler: Any, rng: np.random.Generator, n: int, check_row: Any) -> np.ndarray:
    """``n`` instances drawn by ``sampler(rng, n)`` (shape ``(n, K)``), each row checked by ``check_row(name,
    row)``."""
    drawn = np.asarray(sampler(rng, n), dtype=np.float64)
    if drawn.ndim != 2 or drawn.shape[0] != n:
        raise ValueError(f"the means sampler must return an array of shape ({n}, K), got {drawn.shape}")
    for row in drawn:
        check_row("means (drawn by the sampler)", row)
    return drawn


def require_next_step(env: Any, user: str) -> None:
    """Raise a ValueError unless the vector env ``env`` resets its copies on the next step (``NEXT_STEP``): the
    wrappers and rollouts read an ended copy's instance after the step that ended it."""
    mode = env.metadata.get("autoreset_mode", AutoresetMode.NEXT_STEP)
    if mode != AutoresetMode.NEXT_STEP:
        raise ValueError(f"{user} needs a vector env with autoreset_mode=NEXT_STEP (the default), got {mode}; "
                         "make it without autoreset_mode='SameStep'")


def _read_only(array: np.ndarray) -> np.ndarray:
    view = array.view()
    view.flags.writeable = False
    return view


class BanditVectorEnv(VectorEnv):
    """``num_envs`` copies of an engine advanced together with array operations.

    ``copy=True`` (the default, Gymnasium's convention for vector envs) returns fresh observation arrays at every
    ``reset`` and ``step``: an observation kept by the caller (logged step by step, stored in a buffer) stays what
    it was. ``copy=False`` is the fast path the experiment engine and the benchmarks take: observations are the
    engine's own float32 buffers (leading axis ``num_envs``), handed out as read-only views and updated in place
    by the next ``step`` (only the pulled arm's entries change), so no ``(N, K)`` array is copied per step and an
    agent validates the arrays once; a caller that keeps an observation past the next step must copy it.

    ``max_episode_steps`` (what ``gym.make_vec(id, max_episode_steps=n)`` passes) truncates an episode after n
    steps where that is harmless, on the threshold bandit (rewards at every round); a pure-exploration env pays
    the loss of its answer on the answer step only, so it refuses a limit shorter than its episode (a
    ValueError that says to pass ``budget=n - 1``) and ignores a longer one.

    Copies that terminate are reset on the following ``step`` (Gymnasium's ``AutoresetMode.NEXT_STEP``, the
    default): that step ignores their action and returns their first observation with reward 0. With
    ``autoreset_mode="SameStep"`` (``AutoresetMode.SAME_STEP``, what stable-baselines3 expects) they are reset
    within the step that ends them: it returns their next episode's first observation, and their last one in
    ``info["final_obs"]`` (an object array, None for copies that go on; mask ``info["_final_obs"]``). The
    bandit_gym wrappers and rollouts need ``NEXT_STEP``.
    """

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}  # noqa: RUF012

    def __init__(self, engine: Engine, copy: bool = True,
                 autoreset_mode: str | AutoresetMode = AutoresetMode.NEXT_STEP,
                 max_episode_steps: int | None = None) -> None:
        modes = (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP)
        if autoreset_mode not in modes and autoreset_mode not in [mode.value for mode in modes]:
            raise ValueError(f"autoreset_mode={autoreset_mode!r} is not supported; use one of "
                             f"{[mode.value for mode in modes]} (or AutoresetMode.NEXT_STEP / SAME_STEP)")
        self.autoreset_mode = AutoresetMode(autoreset_mode)
        self.metadata = {**self.metadata, "autoreset_mode": self.autoreset_mode}
        self.engine = engine
        self.family = engine.family
        self.num_envs = engine.num
        if not isinstance(copy, (bool, np.bool_)):
            raise TypeError(f"copy must be True or False, got {copy!r}")
        self.copy = bool(copy)
        if max_episode_steps is not None and (not isinstance(max_episode_steps, (int, np.integer))
                                              or isinstance(max_episode_steps, bool) or max_episode_steps < 1):
            raise ValueError(f"max_episode_steps must be a positive integer or None, got {max_episode_steps!r}")
        refuse_time_limit(engine, max_episode_steps, "gym.make_vec(..., max_episode_steps=...): ")
        #: the time limit that truncates episodes (None: none, or one the episodes never reach)
        self.max_episode_steps = max_episode_steps if engine.answer_step is None else None
        self._elapsed = np.zeros(engine.num, dtype=np.int64)
        #: SAME_STEP: the means of the copies whose episode ended at the last step, taken before their reset
        self.final_means: np.ndarray | None = None
        self.single_observation_space = engine.observation_space()
        self.single_action_space = engine.action_space()
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.render_mode = None
        self._all = np.ones(self.num_envs, dtype=bool)  # writable, like the masks after autoresets: one kernel type
        self._all_mask = _read_only(self._all)  # the "_key" mask of a step's infos when every copy steps
        self._autoreset = np.zeros(self.num_envs, dtype=bool)
        self._started = False
        self._views: dict[str, np.ndarray] | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_views": None}  # views would unpickle as copies, detached from the buffers

    def _observation(self) -> dict[str, np.ndarray]:
        if self.copy:
            return {key: value.copy() for key, value in self.engine.obs.items()}
        if self._views is None:  # read-only views of the engine's buffers, made once: the buffers never move
            self._views = {key: _read_only(value) for key, value in self.engine.obs.items()}
        return dict(self._views)

    def reset(
        self, *, seed: int | list[int] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        if seed is not None and not isinstance(seed, (int, np.integer)):
            raise TypeError(
                f"seed={seed!r}: the native vector env draws for all copies from one generator, so it takes one "
                "integer seed (or None), not one seed per copy"
            )
        self.engine.pin(options)  # validated before the generator is reseeded: a rejected reset changes nothing
        super().reset(seed=seed)
        self.engine.reset_rows(self.np_random, self._all)
        self._autoreset[:] = False
        self._elapsed[:] = 0
        self._started = True
        # the engine's reset info (the model of a correlated instance) holds for every copy: given once, not
        # batched per copy (a kernel of K x K per copy would cost N times its memory)
        return self._observation(), self.engine.reset_info()

    def _check_running(self) -> None:
        if not self._started:
            raise RuntimeError("step() was called before reset(); call reset() first")

    def step(
        self, actions: Any
    ) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        self._check_running()
        actions = self.engine.check_actions(actions)
        rng = self.np_random
        if self._autoreset.any():
            stepping = ~self._autoreset
            self.engine.reset_rows(rng, self._autoreset)
            rewards, terminated, info = self.engine.step_rows(rng, actions, stepping)
            truncated = self.engine.truncated & stepping
        else:  # every copy steps
            stepping = self._all_mask
            rewards, terminated, info = self.engine.step_rows(rng, actions, self._all)
            truncated = self.engine.truncated.copy()
        if self.max_episode_steps is not None:
            truncated = self._time_limit(stepping, terminated, truncated)
        self._autoreset = terminated | truncated
        infos: dict[str, Any] = {}
        for key, value in info.items():
            infos[key] = value
            infos["_" + key] = stepping
        if self.autoreset_mode == AutoresetMode.SAME_STEP and self._autoreset.any():
            self._reset_now(infos)
        return self._observation(), rewards, terminated, truncated, infos

    def _time_limit(self, stepping: np.ndarray, terminated: np.ndarray, truncated: np.ndarray) -> np.ndarray:
        """Count the steps of every running episode and truncate those that reach ``max_episode_steps``."""
        self._elapsed[self._autoreset] = 0  # reset at this step (NEXT_STEP): not counted
        self._elapsed[stepping] += 1
        return truncated | (stepping & ~terminated & (self._elapsed >= (self.max_episode_steps or 0)))

    def _reset_now(self, infos: dict[str, Any]) -> None:
        """``SAME_STEP``: keep the last observation of the copies that ended in ``infos["final_obs"]`` and start
        their next episode now."""
        ended = self._autoreset
        final = np.full(self.num_envs, None, dtype=object)
        for row in np.flatnonzero(ended):
            final[row] = {key: value[row].copy() for key, value in self.engine.obs.items()}
        infos["final_obs"], infos["_final_obs"] = final, ended.copy()
        means = getattr(self.engine, "means", None)
        if isinstance(means, np.ndarray):  # for RecordEpisodeRegretVector, which scores the ended answers after
            if self.final_means is None:
                self.final_means = np.zeros_like(means)
            self.final_means[ended] = means[ended]
        self._elapsed[ended] = 0
        self.engine.reset_rows(self.np_random, ended)
        self._autoreset = np.zeros(self.num_envs, dtype=bool)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name == "engine":
            raise AttributeError(name)
        engine = self.__dict__.get("engine")
        if engine is not None and name in type(engine).exposed:
            return getattr(engine, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
