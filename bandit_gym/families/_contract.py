"""The record every family module fills in (``Contract``) and the plot axes of a metric (``MetricAxes``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from bandit_gym.families._family import Family

COMMON_SCALAR_KEYS = ("budget_left", "last_arm")
"""The observation keys of every family that hold one value per copy: the pulls left, the arm pulled last."""
COMMON_ARM_KEYS = ("counts", "sums", "means")
"""The observation keys of every family that hold one value per arm: pulls, sums of the values seen, means."""


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
    #: the answer an episode is scored on, and the empirical one filled in when an agent gives none
    answer: str
    #: the per-run metrics an experiment records, the main one (the default) first
    metric_names: tuple[str, ...]
    #: the constructor argument that sets the pulls of an episode (its budget, or its horizon T)
    horizon_argument: str
    #: metric -> how it is plotted
    axes: Mapping[str, MetricAxes] = field(default_factory=dict)
    #: further observation keys, read only by the agents that need them (the threshold bandit's level counts)
    more_keys: tuple[str, ...] = ()

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
