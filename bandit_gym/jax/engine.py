"""The experiment engine's cells played with JAX (``ExperimentSpec(backend="jax")``, ``bandit-gym run SPEC --backend
jax``): the same cells, seeds, files and tables as the numba backend, each cell one compiled call of
``bandit_gym.jax.rollout.play`` on the JAX twin of the spec's env with the JAX twins of its agents.

What is the same as with numba: the cells (an anytime agent's answer scored at every budget from one episode
per run on the thresholding bandit, a horizon-aware one per budget), the chunks of runs, the env seed of a chunk
and the agent's own seed (``bandit_gym.experiments``), the metrics and the stored arrays. What differs: the
random streams (JAX's), so the numbers are equal in distribution, not bit for bit; with
``common_random_numbers`` every agent of a chunk reads the same per-arm sample streams, as with numba. A cell
records the fingerprint of the JAX agent's code. Every family: the pure-exploration ones (thresholding, best arm,
top K) and the online ones (multi-armed, threshold bandit), whose cells are one per budget as with numba.
"""

from __future__ import annotations

import functools
import json
from typing import TYPE_CHECKING, Any

import gymnasium as gym
import jax.numpy as jnp
import numpy as np

from bandit_gym.families import Family
from bandit_gym.jax.agents import JAX_AGENTS, JaxAgent
from bandit_gym.jax.envs._base import BanditFunctional
from bandit_gym.jax.rollout import play
from bandit_gym.registration import JAX_ENV_IDS, JAX_NAMESPACE

if TYPE_CHECKING:
    from bandit_gym.experiments.cells import Cell
    from bandit_gym.experiments.spec import AgentSpec, ExperimentSpec

def jax_agent_class(name: str) -> type[JaxAgent]:
    """The JAX twin of the numpy agent ``name``, or a ValueError that names the agents that have one."""
    if name not in JAX_AGENTS:
        raise ValueError(f"agent {name!r} has no JAX twin, so backend='jax' cannot play it; agents with one: "
                         f"{', '.join(sorted(JAX_AGENTS))} (use backend='numba' for the others)")
    return JAX_AGENTS[name]


def functional_env(env_id: str, kwargs: dict[str, Any]) -> BanditFunctional:
    """The functional JAX env of ``env_id``'s twin ``jax/<env_id>``, made with ``kwargs``."""
    jax_id = f"{JAX_NAMESPACE}/{env_id}"
    if jax_id not in JAX_ENV_IDS:
        raise ValueError(f"env={env_id!r} has no JAX twin, so backend='jax' cannot play it; the {len(JAX_ENV_IDS)} "
                         "ids with one are those of `bandit-gym list`'s JAX line (use backend='numba')")
    spec = gym.spec(jax_id)
    module, _, stem = str(spec.entry_point).partition(":")
    shell = getattr(__import__(module, fromlist=[stem]), stem)
    return shell.functional(**{**spec.kwargs, **kwargs})


@functools.lru_cache(maxsize=32)
def _cached_env(env_id: str, kwargs_json: str) -> BanditFunctional:
    return functional_env(env_id, json.loads(kwargs_json))


def cell_env(spec: ExperimentSpec) -> BanditFunctional:
    """The functional env of a spec's cells, made once per process at the largest budget (a cell plays its own
    budget through the env's params, so every cell of the spec runs one compiled function per agent)."""
    kwargs = {**spec.env_kwargs, spec.facts.horizon_argument: spec.budgets[-1]}
    try:
        text = json.dumps(kwargs, sort_keys=True)
    except TypeError:  # values from Python (a means sampler): made afresh
        return functional_env(spec.env, kwargs)
    return _cached_env(spec.env, text)


def build_agent(agent: AgentSpec, env: BanditFunctional) -> JaxAgent:
    """The JAX twin of ``agent`` with its parameters, the oracle ones it was not given filled from the env's fixed
    instance (as ``bandit_gym.experiments.build_agent`` does)."""
    params = dict(agent.params)
    missing = agent.oracle_filled
    if missing:
        if env.engine.fixed_means is None:
            raise ValueError(f"{agent.display} needs oracle parameters {missing} of a fixed instance, but this env "
                             "draws its instance per episode; pass them in the agent's params")
        truth = env.engine.oracle_values()
        params = {**{key: truth[key] for key in missing}, **params}
    return jax_agent_class(agent.name)(**params)


def check_spec(spec: ExperimentSpec) -> None:
    """Everything a JAX run of ``spec`` needs, checked before any cell runs: the env's JAX twin made with the
    spec's arguments, and a JAX twin of every agent built with its parameters."""
    env = functional_env(spec.env, {**spec.env_kwargs, spec.facts.horizon_argument: spec.budgets[0]})
    for index, agent in enumerate(spec.agents):
        try:
            build_agent(agent, env)
        except (ValueError, TypeError) as error:
            raise type(error)(f"agents[{index}] ({agent.display}) with backend='jax': {error}") from error


def play_cell(spec: ExperimentSpec, cell: Cell, env_seed: int,
              agent_seed: int) -> tuple[dict[str, np.ndarray], JaxAgent]:
    """Play one cell with JAX: the result arrays of ``bandit_gym.experiments.play_cell`` (one value per run, and
    ``anytime_regret`` / ``anytime_error`` per run and budget where answers are scored at several budgets) and
    the JAX agent. The seeds are the cell's, as the experiment engine draws them for both backends: the env's
    (its chunk's) and the agent's own."""
    runs = cell.runs(spec)
    facts = spec.facts
    horizon = spec.budgets[-1] if cell.budget is None else cell.budget
    budgets = list(spec.budgets) if cell.budget is None else [cell.budget]
    env = cell_env(spec)
    params = env._params(None)._replace(**{facts.horizon_argument: jnp.int32(horizon)})
    agent_spec = spec.agents[cell.agent]
    agent = build_agent(agent_spec, env)
    scored = budgets if facts.family is Family.THRESHOLDING or cell.budget is None else []
    result = play(env, agent, env_seed, len(runs), params, agent_key=agent_seed,
                  checkpoints=tuple(scored),
                  common_random_numbers=spec.common_random_numbers and facts.takes_common_random_numbers)
    return {key: np.asarray(value, dtype=np.float64) for key, value in result.items()}, agent
