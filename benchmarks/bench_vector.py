"""Pulls per second: the native vector env against a plain per-step loop over a single env, side by side.

For each agent (default: Uniform and LSA) on ThresholdingBandit-Tao2019Setup1-v0 with T = 1000: 5000 copies
through the public vector API (``gym.make_vec(..., vectorization_mode="vector_entry_point")`` and
``agent.act``), and a few episodes of the same work through a plain per-step loop over a single ``gym.make``
env (its rate does not depend on the number of episodes). Prints both rates and their ratio, measured in one run,
and the rate of the compiled rollout that the experiment engine uses (``bandit_gym.rollout.play_compiled``, with
common random numbers; the same numbers as the vector env, bit for bit). Compilation is done before timing.

    python benchmarks/bench_vector.py [--agents Uniform LSA] [--copies 5000] [--budget 1000] [--single-episodes 10]
                                      [--common-random-numbers]
"""

from __future__ import annotations

import argparse
import time

import gymnasium as gym

import bandit_gym  # noqa: F401
from bandit_gym.agents import AGENTS
from bandit_gym.rollout import play_compiled

ENV_ID = "ThresholdingBandit-Tao2019Setup1-v0"


def make_vec(copies: int, budget: int, crn: bool) -> gym.vector.VectorEnv:
    return gym.make_vec(ENV_ID, num_envs=copies, vectorization_mode="vector_entry_point", budget=budget,
                        common_random_numbers=crn)


def vector_rate(agent_name: str, copies: int, budget: int, crn: bool) -> float:
    warm = make_vec(copies, 20, crn)  # compile the kernels first (serial or parallel, by the batch size)
    obs, _ = warm.reset(seed=0)
    agent = AGENTS[agent_name]()
    for _ in range(21):
        obs, *_ = warm.step(agent.act(obs))
    venv = make_vec(copies, budget, crn)
    agent.reset(seed=0)
    obs, _ = venv.reset(seed=0)
    start = time.perf_counter()
    for _ in range(budget + 1):  # T pulls and the answer step
        obs, *_ = venv.step(agent.act(obs))
    return copies * budget / (time.perf_counter() - start)


def compiled_rate(agent_name: str, copies: int, budget: int) -> float:
    play_compiled(make_vec(8, 20, True), AGENTS[agent_name](), seed=0)  # compile first
    venv = make_vec(copies, budget, True)
    start = time.perf_counter()
    play_compiled(venv, AGENTS[agent_name](), seed=0, budgets=range(100, budget + 1, 100))
    return copies * budget / (time.perf_counter() - start)


def loop_rate(agent_name: str, episodes: int, budget: int, crn: bool) -> float:
    env = gym.make(ENV_ID, budget=budget, common_random_numbers=crn)
    agent = AGENTS[agent_name]()

    def episode(seed: int) -> None:
        agent.reset(seed=seed)
        obs, _ = env.reset(seed=seed)
        terminated = False
        while not terminated:
            obs, _, terminated, _, _ = env.step(agent.act(obs))

    episode(0)  # compiles the kernels
    start = time.perf_counter()
    for seed in range(1, episodes + 1):
        episode(seed)
    return episodes * budget / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", nargs="+", default=["Uniform", "LSA"], choices=["Uniform", "LSA", "APT", "OptKG"])
    parser.add_argument("--copies", type=int, default=5000)
    parser.add_argument("--budget", type=int, default=1000)
    parser.add_argument("--single-episodes", type=int, default=10)
    parser.add_argument("--common-random-numbers", action="store_true")
    args = parser.parse_args()
    print(f"{ENV_ID}, T = {args.budget}, common random numbers: {args.common_random_numbers}")
    vector_title = f"vector, {args.copies} copies (pulls/s)"
    print(f"{'agent':8s} {'per-step loop (pulls/s)':>24s} {vector_title:>30s} {'ratio':>8s} "
          f"{'compiled rollout (pulls/s)':>27s} {'ratio':>8s}")
    for name in args.agents:
        loop = loop_rate(name, args.single_episodes, args.budget, args.common_random_numbers)
        vector = vector_rate(name, args.copies, args.budget, args.common_random_numbers)
        compiled = compiled_rate(name, args.copies, args.budget)
        print(f"{name:8s} {loop:24,.0f} {vector:30,.0f} {vector / loop:7,.0f}x {compiled:27,.0f} "
              f"{compiled / loop:7,.0f}x")


if __name__ == "__main__":
    main()
