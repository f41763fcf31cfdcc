"""One batched engine per problem (``Engine``), which the two thin shells of ``bandit_gym.envs._shell`` drive: a
single ``gymnasium.Env`` and a native ``gymnasium.vector.VectorEnv``; and the checks every env and wrapper shares.

An engine holds the state of ``num`` independent copies of a problem as arrays with a leading copy axis and
advances them with array operations. The single env is the engine with ``num=1`` driven by ``self.np_random``;
the vector env is the same engine with ``num=N`` driven by one generator. Both therefore share every line of
problem logic, and a single env's trajectory equals a one-copy vector env's, bit for bit.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, ClassVar, Generic, TypeVar, overload

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode

from bandit_gym import _validation as check
from bandit_gym.families import CONTRACTS, Family

Info = dict[str, np.ndarray]
T = TypeVar("T")


class Forward(Generic[T]):
    """A read-only attribute of an engine that is one of its parts': ``sigma: Forward[float] = Forward("arms",
    "sigma")`` makes ``engine.sigma`` read ``engine.arms.sigma``. Engines are composed of parts (``Arms``,
    ``Budget``, ``Pulls``); the names that wrappers, agents and users read on an engine stay its own."""

    def __init__(self, part: str, name: str) -> None:
        self.part, self.name = part, name

    def __set_name__(self, owner: type, name: str) -> None:
        self.__doc__ = f"``{self.part}.{self.name}`` (read-only)"

    @overload
    def __get__(self, engine: None, owner: type | None = None) -> Forward[T]: ...

    @overload
    def __get__(self, engine: object, owner: type | None = None) -> T: ...

    def __get__(self, engine: object | None, owner: type | None = None) -> Forward[T] | T:
        if engine is None:
            return self
        value: T = getattr(getattr(engine, self.part), self.name)
        return value

    def __set__(self, engine: object, value: Any) -> None:
        raise AttributeError(f"{self.name} is read-only: it is {self.part}.{self.name}")


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


def flag(name: str, value: Any) -> bool:
    """``value`` of the boolean argument ``name`` as a bool (a numpy bool too), or a TypeError."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)


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


def require_next_step(env: Any, user: str) -> None:
    """Raise a ValueError unless the vector env ``env`` resets its copies on the next step (``NEXT_STEP``): the
    wrappers and rollouts read an ended copy's instance after the step that ended it."""
    mode = env.metadata.get("autoreset_mode", AutoresetMode.NEXT_STEP)
    if mode != AutoresetMode.NEXT_STEP:
        raise ValueError(f"{user} needs a vector env with autoreset_mode=NEXT_STEP (the default), got {mode}; "
                         "make it without autoreset_mode='SameStep'")
