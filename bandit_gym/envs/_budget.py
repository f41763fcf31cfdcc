"""The budget of an episode, a part every engine holds: its pulls (or rounds), fixed or drawn per episode."""

from __future__ import annotations

from typing import Any

import numpy as np

from bandit_gym import _validation as check
from bandit_gym._validation import MAX_BUDGET
from bandit_gym.instances import BudgetRange


class Budget:
    """The pulls (or rounds) of an episode: a fixed number, or a ``BudgetRange`` that draws one per episode.

    ``name`` is the constructor argument it comes from (``budget``, the threshold bandit's ``horizon``), named in
    its errors; ``ranged`` says whether that argument takes a ``BudgetRange`` (the pure-exploration envs')."""

    def __init__(self, value: Any, name: str = "budget", ranged: bool = True) -> None:
        #: the sampler of each episode's budget (``budget=BudgetRange(...)``), or None for a fixed budget
        self.range: BudgetRange | None = value if ranged and isinstance(value, BudgetRange) else None
        if ranged and self.range is None and (isinstance(value, bool) or not isinstance(value, (int, np.integer))):
            raise TypeError(f"{name} must be an integer or a bandit_gym.instances.BudgetRange, got {value!r} of "
                            f"type {type(value).__name__}")
        #: the budget, or the largest one of a range (the bound of ``budget_left``), 1..``MAX_BUDGET``
        self.maximum = check.integer(name, value if self.range is None else self.range.high, minimum=1,
                                     maximum=MAX_BUDGET)

    def start(self, rng: np.random.Generator, total: np.ndarray, rows: np.ndarray) -> None:
        """Set ``total[rows]`` to the budgets of the episodes that start in ``rows``: drawn from the range with
        ``rng`` (one draw per episode); a fixed budget draws nothing and leaves ``total`` as it is."""
        if self.range is not None:
            total[rows] = self.range(rng, int(rows.sum()))

    def sample_cost(self, value: Any) -> float:
        """The cost charged per pull, ``value`` checked: at least 0, and an episode's cost ``sample_cost x budget``
        a finite float64."""
        cost = check.real("sample_cost", value, low=0.0)
        if not np.isfinite(cost * self.maximum):
            raise ValueError(f"sample_cost={value!r} is too large: an episode's cost sample_cost x budget must be a "
                             "finite float64")
        return cost
