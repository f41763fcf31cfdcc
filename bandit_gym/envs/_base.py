"""One batched engine per problem, and the two thin shells around it: a single ``gymnasium.Env`` and a native
``gymnasium.vector.VectorEnv``.

An engine holds the state of ``num`` independent copies of a problem as arrays with a leading copy axis and
advances them with array operations. The single env is the engine with ``num=1`` driven by ``self.np_random``;
the vector env is the same engine with ``num=N`` driven by one generator. Both therefore share every line of
problem logic, and a single env's trajectory equals a one-copy vector env's, bit for bit.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

Info = dict[str, np.ndarray]


class Engine(ABC):
    """Arrays for ``num`` copies of one problem; subclasses implement the problem."""

    #: ``"thresholding"`` (pure exploration) or ``"threshold"`` (online regret); agents and wrappers dispatch on it.
    family: ClassVar[str]
    #: instance attributes that the env shells expose (``env.unwrapped.means``, ...)
    exposed: ClassVar[frozenset[str]] = frozenset()

    num_arms: int

    def __init__(self, num: int) -> None:
        self.num = num
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

    #: keys accepted in ``reset(options=...)``
    reset_options: ClassVar[tuple[str, ...]] = ()

    def pin(self, options: dict[str, Any] | None) -> None:
        """Apply the options of an explicit ``reset``: an instance given there is used by every episode until
        the next explicit ``reset`` (a vector env's autoresets included); without one, the default returns."""
        options = options or {}
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
        """The ``info`` of a single env's ``reset`` (the generating model of a correlated instance; else empty)."""
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
        super().reset(seed=seed)
        self.engine.pin(options)
        self.engine.reset_rows(self.np_random, self._all)
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
        info_out = {key: value[0].item() if value.ndim == 1 else value[0].copy() for key, value in info.items()}
        return self._observation(), float(rewards[0]), bool(terminated[0]), bool(self.engine.truncated[0]), info_out

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

    Observations are the engine's own float32 buffers with a leading axis of size ``num_envs``; they are updated
    in place by the next ``step`` (only the pulled arm's entries change), handed out as read-only views, so a
    caller that keeps an observation past the next step must copy it, or create the env with ``copy=True``.
    Copies that terminate are reset on the following ``step`` (Gymnasium's ``AutoresetMode.NEXT_STEP``, the
    default): that step ignores their action and returns their first observation with reward 0. With
    ``autoreset_mode="SameStep"`` (``AutoresetMode.SAME_STEP``, what stable-baselines3 expects) they are reset
    within the step that ends them: it returns their next episode's first observation, and their last one in
    ``info["final_obs"]`` (an object array, None for copies that go on; mask ``info["_final_obs"]``). The
    bandit_gym wrappers and rollouts need ``NEXT_STEP``.
    """

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}  # noqa: RUF012

    def __init__(self, engine: Engine, copy: bool = False,
                 autoreset_mode: str | AutoresetMode = AutoresetMode.NEXT_STEP) -> None:
        modes = (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP)
        if autoreset_mode not in modes and autoreset_mode not in [mode.value for mode in modes]:
            raise ValueError(f"autoreset_mode={autoreset_mode!r} is not supported; use one of "
                             f"{[mode.value for mode in modes]} (or AutoresetMode.NEXT_STEP / SAME_STEP)")
        self.autoreset_mode = AutoresetMode(autoreset_mode)
        self.metadata = {**self.metadata, "autoreset_mode": self.autoreset_mode}
        self.engine = engine
        self.family = engine.family
        self.num_envs = engine.num
        self.copy = bool(copy)
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
        super().reset(seed=seed)
        self.engine.pin(options)
        self.engine.reset_rows(self.np_random, self._all)
        self._autoreset[:] = False
        self._started = True
        return self._observation(), {}

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
        self._autoreset = terminated | truncated
        infos: dict[str, Any] = {}
        for key, value in info.items():
            infos[key] = value
            infos["_" + key] = stepping
        if self.autoreset_mode == AutoresetMode.SAME_STEP and self._autoreset.any():
            self._reset_now(infos)
        return self._observation(), rewards, terminated, truncated, infos

    def _reset_now(self, infos: dict[str, Any]) -> None:
        """``SAME_STEP``: keep the last observation of the copies that ended in ``infos["final_obs"]`` and start
        their next episode now."""
        ended = self._autoreset
        final = np.full(self.num_envs, None, dtype=object)
        for row in np.flatnonzero(ended):
            final[row] = {key: value[row].copy() for key, value in self.engine.obs.items()}
        infos["final_obs"], infos["_final_obs"] = final, ended.copy()
        self.engine.reset_rows(self.np_random, ended)
        self._autoreset = np.zeros(self.num_envs, dtype=bool)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name == "engine":
            raise AttributeError(name)
        engine = self.__dict__.get("engine")
        if engine is not None and name in type(engine).exposed:
            return getattr(engine, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
