"""The env shell written once: ``BanditEnv`` (``gym.make``) and ``BanditVectorEnv`` (``gym.make_vec``) over
the engine their class names (``engine_class``), and their pure-exploration forms with the batched allocation
(``PureExplorationEnv``, ``PureExplorationVectorEnv``). Each family's module declares its two env classes as an
engine class and a docstring."""


from __future__ import annotations

import difflib
import inspect
import sys
from collections.abc import Mapping
from types import FrameType
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space
from gymnasium.wrappers import TimeLimit

from bandit_gym.envs._base import Engine, refuse_time_limit
from bandit_gym.families import CONTRACTS


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


class BanditEnv(gym.Env):
    """A single copy of an engine as a Gymnasium env (the reference, one pull per ``step``).

    An env class names its engine (``engine_class``) and documents its arguments; its keyword arguments are the
    engine's (``engine_arguments``)."""

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}  # noqa: RUF012 (Gymnasium's convention)
    #: the engine class of the env, set by each env class
    engine_class: ClassVar[type[Engine]]

    def __init__(self, render_mode: str | None = None, **kwargs: Any) -> None:
        engine = build_engine(self.engine_class, 1, type(self), kwargs)
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


def _autoreset_mode(mode: str | AutoresetMode) -> AutoresetMode:
    """``autoreset_mode`` of a vector env: ``NEXT_STEP`` or ``SAME_STEP`` (or their values), else a ValueError."""
    modes = (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP)
    if mode not in modes and mode not in [one.value for one in modes]:
        raise ValueError(f"autoreset_mode={mode!r} is not supported; use one of "
                         f"{[one.value for one in modes]} (or AutoresetMode.NEXT_STEP / SAME_STEP)")
    return AutoresetMode(mode)


def _vector_time_limit(engine: Engine, max_episode_steps: int | None) -> int | None:
    """The time limit of a vector env of ``engine``: ``max_episode_steps`` checked (a positive integer or None,
    and not shorter than a pure-exploration episode, ``refuse_time_limit``); None where the episodes end before
    it (pure exploration), or with no limit."""
    if max_episode_steps is not None and (not isinstance(max_episode_steps, (int, np.integer))
                                          or isinstance(max_episode_steps, bool) or max_episode_steps < 1):
        raise ValueError(f"max_episode_steps must be a positive integer or None, got {max_episode_steps!r}")
    refuse_time_limit(engine, max_episode_steps, "gym.make_vec(..., max_episode_steps=...): ")
    return max_episode_steps if engine.answer_step is None else None


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
    #: the engine class of the env, set by each env class
    engine_class: ClassVar[type[Engine]]

    def __init__(self, num_envs: int = 1, copy: bool = True, render_mode: str | None = None,
                 autoreset_mode: str | AutoresetMode = AutoresetMode.NEXT_STEP, max_episode_steps: int | None = None,
                 **kwargs: Any) -> None:
        if render_mode is not None:
            raise ValueError(f"render_mode={render_mode!r}: the vector env does not render; use a single env")
        engine = build_engine(self.engine_class, num_envs, type(self), kwargs)
        self.autoreset_mode = _autoreset_mode(autoreset_mode)
        self.metadata = {**self.metadata, "autoreset_mode": self.autoreset_mode}
        self.engine = engine
        self.family = engine.family
        self.num_envs = engine.num
        if not isinstance(copy, (bool, np.bool_)):
            raise TypeError(f"copy must be True or False, got {copy!r}")
        self.copy = bool(copy)
        #: the time limit that truncates episodes (None: none, or one the episodes never reach)
        self.max_episode_steps = _vector_time_limit(engine, max_episode_steps)
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


def _set_empirical_answer(cls: type[PureExplorationEnv] | type[PureExplorationVectorEnv]) -> None:
    """Give a pure-exploration env class that names its engine the answer rule of the engine's family."""
    if "engine_class" in vars(cls):
        cls.empirical_answer = staticmethod(CONTRACTS[cls.engine_class.family].answer_rule())


class PureExplorationEnv(BanditEnv):
    """The single env of a pure-exploration engine (thresholding, best arm, top K): a ``BanditEnv`` with batched
    pulls (``allocate``) and its family's ``empirical_answer``."""

    engine: Any  # an engine with ``allocate`` (its ``Pulls``)
    #: ``empirical_answer(obs, rng=None)``: the answer bits of the empirical means (the family's rule)
    empirical_answer: ClassVar[Any]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _set_empirical_answer(cls)

    def allocate(self, allocation: Any) -> dict[str, np.ndarray]:
        """Batched allocation: pull arm i ``allocation[i]`` times in one call (sums drawn exactly, charged to
        the budget like single pulls) and return the new observation. Not a Gymnasium step: no reward, no
        termination; the answer is still given by the next ``step``."""
        self._check_running()
        self.engine.allocate(self.np_random, np.asarray(allocation)[None])
        return self._observation()


class PureExplorationVectorEnv(BanditVectorEnv):
    """The native vector env of a pure-exploration engine: a ``BanditVectorEnv`` with batched pulls
    (``allocate``) and its family's ``empirical_answer``."""

    engine: Any  # an engine with ``allocate`` (its ``Pulls``)
    #: ``empirical_answer(obs, rng=None)``: the answer bits of the empirical means (the family's rule)
    empirical_answer: ClassVar[Any]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _set_empirical_answer(cls)

    def allocate(self, allocation: Any) -> dict[str, np.ndarray]:
        """Batched allocation for all copies at once, ``allocation`` of shape ``(N, K)`` (zeros for copies
        waiting for their autoreset); see ``PureExplorationEnv.allocate``."""
        self._check_running()
        self.engine.allocate(self.np_random, allocation)
        return self._observation()
