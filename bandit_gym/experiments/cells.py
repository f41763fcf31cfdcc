"""The cells of a spec: ``Cell`` (an agent, a budget, a chunk of runs), ``expand``, the per-cell seeds and the agent
of a cell (``build_agent``). Both backends play these cells."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from bandit_gym.agents.base import Agent
from bandit_gym.envs._base import engine_of
from bandit_gym.experiments.spec import AgentSpec, ExperimentSpec, cell_name


@dataclass(frozen=True)
class Cell:
    """One unit of work: an agent, a budget (``None``: anytime, evaluated at every budget), a chunk of runs."""

    agent: int
    budget: int | None
    chunk: int

    def key(self, spec: ExperimentSpec) -> str:
        """The cell's file name (without ``.npz``): ``cell_name(label)__T{budget}__chunk{c}`` (``anytime`` for
        the budget of an anytime cell), distinct for distinct cells of a spec."""
        when = "anytime" if self.budget is None else f"T{self.budget}"
        return f"{cell_name(spec.agents[self.agent].display)}__{when}__chunk{self.chunk}"

    def runs(self, spec: ExperimentSpec) -> range:
        start = self.chunk * spec.chunk
        return range(start, min(start + spec.chunk, spec.runs))


def expand(spec: ExperimentSpec) -> list[Cell]:
    """Every cell of a spec."""
    chunks = range(-(-spec.runs // spec.chunk))
    cells: list[Cell] = []
    for index, layout in enumerate(spec.layout):
        budgets: Iterable[int | None] = [None] if layout.anytime else spec.budgets
        cells.extend(Cell(index, budget, chunk) for budget in budgets for chunk in chunks)
    return cells




def _seed(spec: ExperimentSpec, *key: int) -> int:
    return int(np.random.SeedSequence(spec.seed, spawn_key=key).generate_state(1, np.uint32)[0])


def build_agent(agent: AgentSpec, env: Any) -> Agent:
    """Instantiate an agent, filling the oracle parameters it was not given (e.g. UCBE's H) from the env's fixed
    instance."""
    params = dict(agent.params)
    missing = agent.oracle_filled
    if missing:
        engine: Any = engine_of(env)
        if getattr(engine, "fixed_means", None) is None:
            raise ValueError(f"{agent.display} needs oracle parameters {missing} of a fixed instance, but this env "
                             "draws its instance per episode; pass them in the agent's params")
        truth = engine.oracle_values()
        params = {**{key: truth[key] for key in missing}, **params}
    return agent.cls(**params)

