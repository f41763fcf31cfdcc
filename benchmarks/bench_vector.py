"""Pulls per second: the native vector env against a plain per-step loop over a single env, side by side.

For each agent (default: Uniform and LSA) on ThresholdingBandit-Tao2019Setup1-v0 with T = 1000: 5000 copies
through the public vector API (``gym.make_vec(..., vectorization_mode="vector_entry_point")`` and
``agent.act``), and some episodes of the same work through a plain per-step loop over a single ``gym.make``
env (its rate does not depend on the number of episodes). Prints both rates and their ratio, measured in one run,
and the rate of the compiled rollout that the experiment engine uses (``bandit_gym.rollout.play_compiled``, with
common random numbers; the same numbers as the vector env, bit for bit). Compilation is done before timing. The
measurements are those of the benchmark suite (:mod:`benchmarks.suite`, its W1 with other agents).

    python -m benchmarks.bench_vector [--agents Uniform LSA] [--copies 5000] [--budget 1000] [--single-episodes 10]
                                      [--common-random-numbers]
"""

from __future__ import annotations

import argparse

from bandit_gym.agents import AGENTS
from benchmarks.suite import Workload, loop_rate, rollout_row, vector_row

ENV_ID = "ThresholdingBandit-Tao2019Setup1-v0"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", nargs="+", default=["Uniform", "LSA"], choices=["Uniform", "LSA", "APT", "OptKG"])
    parser.add_argument("--copies", type=int, default=5000)
    parser.add_argument("--budget", type=int, default=1000)
    parser.add_argument("--single-episodes", type=int, default=10)
    parser.add_argument("--common-random-numbers", action="store_true")
    args = parser.parse_args()
    workload = Workload("tao2019 Setup 1", ENV_ID,
                        {"budget": args.budget, "common_random_numbers": args.common_random_numbers}, args.copies,
                        args.budget, {name: AGENTS[name] for name in args.agents})
    print(f"{ENV_ID}, T = {args.budget}, common random numbers: {args.common_random_numbers}")
    vector_title = f"vector, {args.copies} copies (pulls/s)"
    print(f"{'agent':8s} {'per-step loop (pulls/s)':>24s} {vector_title:>30s} {'ratio':>8s} "
          f"{'compiled rollout (pulls/s)':>27s} {'ratio':>8s}")
    for name in args.agents:
        loop = loop_rate(workload, name, pulls=args.single_episodes * args.budget)
        vector = vector_row(workload, name).rate
        compiled = rollout_row(workload, name, "compiled").rate
        print(f"{name:8s} {loop:24,.0f} {vector:30,.0f} {vector / loop:7,.0f}x {compiled:27,.0f} "
              f"{compiled / loop:7,.0f}x")


if __name__ == "__main__":
    main()
