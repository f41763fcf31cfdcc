"""Pulls per second of the native vector env with ``copy=True`` (the default: fresh observation arrays at every
step, Gymnasium's convention) against ``copy=False`` (the no-copy fast path of the experiment engine and the
benchmark suite: the env's own buffers, updated in place), side by side in one run.

Two workloads, each through the public vector API (``gym.make_vec`` + ``agent.act`` + ``step``, one episode per
copy): tao2019 Setup 1 (K = 10, T = 1000) with LSA on 5000 copies, and K = 1000 arms (means i / 1000, T = 1000)
with Uniform on 200 copies, where a copy moves 3 arrays of N x K floats per step. With ``copy=True`` an agent
also re-validates the observation at every step (it validates a buffer it has seen once), part of the cost.

    python -m benchmarks.bench_copy [--quick]
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from typing import Any

import numpy as np

from bandit_gym.agents import AGENTS
from benchmarks.suite import Workload, make_vec, median_time, play_steps

#: (workload, agent): the workloads measured
WORKLOADS = (
    (Workload("tao2019 Setup 1, K = 10", "ThresholdingBandit-Tao2019Setup1-v0", {"budget": 1000}, 5000, 1000,
              {"LSA": AGENTS["LSA"]}), "LSA"),
    (Workload("K = 1000, means i / 1000", "ThresholdingBandit-v0",
              {"means": tuple(np.arange(1, 1001) / 1000), "budget": 1000}, 200, 1000,
              {"Uniform": AGENTS["Uniform"]}), "Uniform"),
)


def copy_rates(workload: Workload, label: str) -> dict[bool, float]:
    """Pulls per second with ``copy=True`` and ``copy=False``, each the median of repeated episodes."""
    rates = {}
    for copy in (True, False):
        env = make_vec(workload, workload.runs, copy=copy)
        agent = workload.agents[label]()
        play_steps(env, agent, 30)  # compile first

        def once(env: Any = env, agent: Any = agent) -> tuple[int, float]:
            start = time.perf_counter()
            pulls = play_steps(env, agent, workload.horizon + 1)  # T pulls and the answer step
            return pulls, time.perf_counter() - start

        pulls, seconds = median_time(once)
        rates[copy] = pulls / seconds
    return rates


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a tenth of the copies, to check that it works")
    args = parser.parse_args(argv)
    print(f"{'workload':28s} {'agent':8s} {'copies':>7s} {'copy=True (pulls/s)':>20s} "
          f"{'copy=False (pulls/s)':>21s} {'False / True':>13s}")
    for workload, label in WORKLOADS:
        if args.quick:
            workload = dataclasses.replace(workload, runs=max(workload.runs // 10, 2))
        rates = copy_rates(workload, label)
        print(f"{workload.name:28s} {label:8s} {workload.runs:7d} {rates[True]:20,.0f} {rates[False]:21,.0f} "
              f"{rates[False] / rates[True]:12.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
