"""Pulls per second of the JAX fixed-confidence rules played through ``decide`` (one call per step, the rollout's
pending decision) beside the same rules played through the protocol's default (``stop`` in the loop's condition,
``select`` in its step), side by side in one run: EB-TCI and Track-and-Stop (D- and C-tracking) on Bernoulli means
[0.5, 0.45, 0.43, 0.4] at delta = 0.01, 200 copies. The two give the same episodes bit for bit (tested in
tests/bandit_gym_jax/test_fixed_confidence_agents.py); each is compiled and run once before it is timed, and each rate
is the median of three runs, alternated.

    python -m benchmarks.bench_jax_decide
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import numpy as np

from bandit_gym.jax import agents as jax_agents
from bandit_gym.jax.agents._base import JaxAgent
from bandit_gym.jax.envs import BestArmFunctional
from bandit_gym.jax.rollout import play

COPIES = 200


def two_calls(agent: Any) -> Any:
    """``agent`` with the protocol's default ``decide``, which sends ``play`` down the path of two calls."""
    cls = dataclasses.make_dataclass(f"TwoCalls{type(agent).__name__}", [], bases=(type(agent),), frozen=True,
                                     namespace={"decide": JaxAgent.decide})
    return cls(**{field.name: getattr(agent, field.name) for field in dataclasses.fields(agent)})


def main() -> int:
    env = BestArmFunctional(means=[0.5, 0.45, 0.43, 0.4], budget=200_000, setting="fixed_confidence")
    print(f"{'agent':<8} {'two calls':>10} {'decide':>10} {'ratio':>6}")
    for label, agent in [("EB-TCI", jax_agents.EBTCI(delta=0.01)),
                         ("TaS-D", jax_agents.TrackAndStop(delta=0.01, tracking="D")),
                         ("TaS-C", jax_agents.TrackAndStop(delta=0.01, tracking="C"))]:
        paths = {"two calls": two_calls(agent), "decide": agent}
        for played in paths.values():
            play(env, played, 0, COPIES)["pulls"].block_until_ready()
        rates: dict[str, list[float]] = {name: [] for name in paths}
        for rep in range(3):
            for name, played in paths.items():
                start = time.perf_counter()
                pulls = int(play(env, played, 1 + rep, COPIES)["pulls"].sum())
                rates[name].append(pulls / (time.perf_counter() - start))
        two, fused = (float(np.median(rates[name])) for name in paths)
        print(f"{label:<8} {two:>10.2g} {fused:>10.2g} {fused / two:>6.2f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
