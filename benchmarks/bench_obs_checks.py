"""The cost of the agents' observation checks: W1 of the benchmark suite (tao2019 Setup 1, K = 10, T = 1000, 5000
copies, ``gym.make_vec`` + ``agent.act``) with the per-call value checks (``last_arm``, ``budget_left``, the
pulled arm's counts and sums in one compiled pass, then the family's constants) against the same loop with them
switched off, in one run, A B A B; on the suite's no-copy fast path (``copy=False``: the env's read-only
buffers, whose values are checked at an agent's first sight of them) and on the default ``copy=True`` (fresh
arrays, checked at every call).

    python -m benchmarks.bench_obs_checks [--quick] [--rounds 3]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from bandit_gym.agents import AGENTS
from bandit_gym.agents.base import Agent
from benchmarks.suite import Workload, make_vec, play_steps

W1 = Workload("W1", "ThresholdingBandit-Tao2019Setup1-v0", {"budget": 1000}, 5000, 1000,
              {"LSA": AGENTS["LSA"], "APT": AGENTS["APT"]})


@contextmanager
def checks_off() -> Iterator[None]:
    """The agents without their per-call value checks (dtypes, keys and shapes are still checked)."""
    saved = Agent._check_values
    Agent._check_values = lambda self, *args: None  # type: ignore[method-assign]
    try:
        yield
    finally:
        Agent._check_values = saved  # type: ignore[method-assign]


def rate(env: Any, agent: Agent, horizon: int) -> float:
    start = time.perf_counter()
    pulls = play_steps(env, agent, horizon + 1)  # T pulls and the answer step
    return pulls / (time.perf_counter() - start)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a tenth of the copies, to check that it works")
    parser.add_argument("--rounds", type=int, default=3, help="A B rounds per agent (default 3)")
    args = parser.parse_args(argv)
    runs = W1.runs // (10 if args.quick else 1)
    print(f"{'W1 agent':9s} {'copy':>5s} {'copies':>7s} {'checked (pulls/s)':>18s} {'unchecked (pulls/s)':>20s} "
          f"{'checked / unchecked':>20s}")
    for copy in (False, True):
        for label, cls in W1.agents.items():
            env, agent = make_vec(W1, runs, copy=copy), cls()
            play_steps(env, agent, 30)  # compile first
            checked, unchecked = [], []
            for _ in range(args.rounds):
                checked.append(rate(env, agent, W1.horizon))
                with checks_off():
                    unchecked.append(rate(env, agent, W1.horizon))
            on, off = statistics.median(checked), statistics.median(unchecked)
            print(f"{label:9s} {copy!s:>5s} {runs:7d} {on:18.3g} {off:20.3g} {on / off:20.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
