"""Pulls per second: the native vector env against a plain per-step loop over a single env, side by side.

Runs ThresholdingBandit-Tao2019Setup1-v0 with Uniform, T = 1000: 5000 copies through the vector env, and as
many single-env episodes as fit in the per-step loop's time budget (its rate does not depend on the number of
episodes). Prints both rates and their ratio.

    python benchmarks/bench_vector.py [--copies 5000] [--budget 1000] [--single-episodes 20]
"""

from __future__ import annotations

import argparse
import time

import gymnasium as gym

import bandit_gym  # noqa: F401
from bandit_gym.agents import Uniform

ENV_ID = "ThresholdingBandit-Tao2019Setup1-v0"


def vector_rate(copies: int, budget: int) -> float:
    venv = gym.make_vec(ENV_ID, num_envs=copies, vectorization_mode="vector_entry_point", budget=budget)
    agent = Uniform()
    agent.reset(seed=0)
    obs, _ = venv.reset(seed=0)
    start = time.perf_counter()
    for _ in range(budget + 1):  # T pulls and the answer step
        obs, *_ = venv.step(agent.act(obs))
    return copies * budget / (time.perf_counter() - start)


def loop_rate(episodes: int, budget: int) -> float:
    env = gym.make(ENV_ID, budget=budget)
    agent = Uniform()
    start = time.perf_counter()
    for episode in range(episodes):
        agent.reset(seed=episode)
        obs, _ = env.reset(seed=episode)
        terminated = False
        while not terminated:
            obs, _, terminated, _, _ = env.step(agent.act(obs))
    return episodes * budget / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=5000)
    parser.add_argument("--budget", type=int, default=1000)
    parser.add_argument("--single-episodes", type=int, default=20)
    args = parser.parse_args()
    loop = loop_rate(args.single_episodes, args.budget)
    vector = vector_rate(args.copies, args.budget)
    print(f"{ENV_ID}, Uniform, T = {args.budget}")
    print(f"  per-step loop over a single env ({args.single_episodes} episodes): {loop:12,.0f} pulls/s")
    print(f"  native vector env ({args.copies} copies):                {vector:12,.0f} pulls/s")
    print(f"  ratio vector / loop: {vector / loop:,.0f}x")


if __name__ == "__main__":
    main()
