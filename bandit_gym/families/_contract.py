"""The record every family module fills in (``Contract``) and the plot axes of a metric (``MetricAxes``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from bandit_gym.families import _checks
from bandit_gym.families._checks import Bounds
from bandit_gym.families._family import Family

COMMON_SCALAR_KEYS = ("budget_left", "last_arm")
"""The observation keys of every family that hold one value per copy: the pulls left, the arm pulled last."""
COMMON_ARM_KEYS = ("counts", "sums", "means")
"""The observation keys of every family that hold one value per arm: pulls, sums of the values seen, means."""


def pure_exploration_action(arms: Any, answer: Any = None, stop: Any = None) -> np.ndarray:
    """The action of a pure-exploration env, ``[arm or K (stop), answer bits]``, from the arms (one per copy, or
    one number), the answer bits (``(K,)`` or ``(N, K)``; required) and where to stop (bools, or None: nowhere).
    Single: ``(K + 1,)``; batched: ``(N, K + 1)``; int64."""
    if answer is None:
        raise ValueError("a pure-exploration action needs the answer bits (answer=...)")
    bits = np.asarray(answer, dtype=np.int64)
    arm = np.asarray(arms, dtype=np.int64)
    if stop is not None:
        arm = np.where(np.asarray(stop, dtype=bool), bits.shape[-1], arm)
    return np.concatenate([arm[..., None], bits], axis=-1)


def online_action(arms: Any, answer: Any = None, stop: Any = None) -> np.ndarray:
    """The action of an online env (the threshold bandit, the multi-armed bandit): the arm, as it is. An online
    env takes no answer and has no stop."""
    if answer is not None or (stop is not None and np.any(stop)):
        raise ValueError("an online env's action is the arm alone: it takes no answer and has no stop")
    return np.asarray(arms, dtype=np.int64)


def no_check(batch: Mapping[str, np.ndarray], single: bool, k: int) -> None:
    """The check of a family with nothing to check."""


@dataclass(frozen=True)
class MetricAxes:
    """How ``plot_results`` draws one metric of one family: the y label, the scales (``"log"``, ``"log2"`` or
    None for linear), whether values are divided by K, and whether the metric is a rate (0/1 per run)."""

    ylabel: str
    xlabel: str = "budget T (pulls)"
    xscale: str | None = None
    yscale: str | None = None
    per_arm: bool = False
    rate: bool = False


@dataclass(frozen=True)
class Contract:
    """What one problem family means, stated once: every layer (agents, envs, experiments, plotting, ``rl``,
    ``armwise``) reads it here."""

    family: Family
    #: one line: the problem and its paper
    summary: str
    #: the observation keys of this family beside ``COMMON_SCALAR_KEYS`` and ``COMMON_ARM_KEYS`` (one value each),
    #: which every agent of the family may read (an agent's observation is checked for them)
    keys: tuple[str, ...]
    #: the key whose presence in an observation marks this family (checked in ``ORDER``); None: the fallback
    marker: str | None
    #: what an action is: the arm to pull, or (arm or stop, answer bits)
    action: str
    #: the answer an episode is scored on, and the empirical one filled in when an agent gives none (in words;
    #: the code is ``empirical_answer``)
    answer: str
    #: the per-run metrics an experiment records, the main one (the default) first
    metric_names: tuple[str, ...]
    #: the constructor argument that sets the pulls of an episode (its budget, or its horizon T)
    horizon_argument: str
    #: ``compose_action(arms, answer=None, stop=None)``: the env's action from the arms, the answer bits and where
    #: to stop (``pure_exploration_action`` or ``online_action``)
    compose_action: Callable[..., np.ndarray] = online_action
    #: ``empirical_answer(obs, rng=None)``: the answer bits the family fills in for an agent that gives none (the
    #: ``EmpiricalAnswer`` wrapper submits it), single or batched; None for an online family
    empirical_answer: Callable[..., np.ndarray] | None = None
    #: metric -> how it is plotted
    axes: Mapping[str, MetricAxes] = field(default_factory=dict)
    #: further observation keys, read only by the agents that need them (the threshold bandit's level counts)
    more_keys: tuple[str, ...] = ()
    #: the keys of ``keys`` that hold one constant per copy (theta, epsilon, delta, the last reward) -> the values
    #: each may take (``bandit_gym.families._checks``: ``FINITE``, ``NON_NEGATIVE``, ``OPEN_UNIT``). The agents'
    #: compiled pass over the copies screens them at every call (``constant_table``); where some copy begins an
    #: episode or some value is screened out, ``check_constants`` names the first bad value
    constants: Mapping[str, Bounds] = field(default_factory=dict)
    #: the keys of ``more_keys`` with m values per arm, ``(K * m,)`` per copy, arm i's level j at ``i * m + j - 1``
    #: (the threshold bandit's level counts) -> the values each may take, checked for the agents that read them:
    #: every entry screened at every call by a compiled pass (``level_table``), named by ``check_levels``
    level_bounds: Mapping[str, Bounds] = field(default_factory=dict)
    #: ``check_start(batch, single, k)``: the checks beside ``constants`` that depend on K or on other keys (m, the
    #: threshold bandit's level c_t), run by the agents, before ``check_constants``, whenever some copy begins an
    #: episode or the compiled pass screens some value out (``bandit_gym.families._checks``)
    check_start: Callable[[Mapping[str, np.ndarray], bool, int], None] = no_check
    #: ``check_step(batch, single, k)``: those of them at every other call (the values the agents index with: ``m``,
    #: the threshold bandit's level c_t)
    check_step: Callable[[Mapping[str, np.ndarray], bool, int], None] = no_check

    def check_constants(self, batch: Mapping[str, np.ndarray], single: bool) -> None:
        """Raise a ValueError naming the first value of ``constants`` outside its bounds (key by key, copy by copy)."""
        _checks.within(batch, single, self.constants)

    def check_levels(self, batch: Mapping[str, np.ndarray], single: bool, k: int) -> None:
        """Raise a ValueError naming the first entry of ``level_bounds``' keys outside its bounds, with its arm and
        level (every entry of every copy)."""
        _checks.per_level(batch, single, k, self.level_bounds)

    @cached_property
    def constant_table(self) -> np.ndarray:
        """``constants`` as the agents' compiled pass reads them: ``(C, 3)`` float32 rows ``(low, high, whole)`` in
        the order of ``constants``, for float32 values (``Bounds.row``)."""
        return np.array([bounds.row() for bounds in self.constants.values()], dtype=np.float32).reshape(-1, 3)

    @cached_property
    def level_table(self) -> np.ndarray:
        """``level_bounds`` as ``constant_table`` gives ``constants``."""
        return np.array([bounds.row() for bounds in self.level_bounds.values()], dtype=np.float32).reshape(-1, 3)

    def answer_rule(self) -> Callable[..., np.ndarray]:
        """``empirical_answer``, or a ValueError for an online family, which takes no answer."""
        if self.empirical_answer is None:
            raise ValueError(f"a {self.family.value!r} env takes no answer (it is online)")
        return self.empirical_answer

    @property
    def default_metric(self) -> str:
        """The metric tables and plots show when none is asked for."""
        return self.metric_names[0]

    @property
    def agent_keys(self) -> tuple[str, ...]:
        """The keys every agent of the family may read: the common ones and ``keys``."""
        return (*COMMON_SCALAR_KEYS, *COMMON_ARM_KEYS, *self.keys)

    @property
    def observation_keys(self) -> tuple[str, ...]:
        """Every key of an env's observation of this family."""
        return (*self.agent_keys, *self.more_keys)
