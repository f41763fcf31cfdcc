"""Score best-arm policies on two development settings: random instances in the regime of the held-out problems
(every arm close to the best, a budget of about 100 pulls per arm), never a held-out instance. Next to Uniform and
SR on the same runs. Writes ``OUT/best_arm_dev.csv`` (one row per setting and agent: mean, standard error).

The settings: K = 20 arms with means i.i.d. U(0.35, 0.5) and T = 2000 (1000 runs, env seed 987); K = 10, the same
means law, T = 1000 (1000 runs, env seed 988); K = 15, T = 1000 (env seed 989), the K of the best-arm recipe's
training and a budget inside its range, so that only the law of the means differs from training. Each run draws
its own instance; every agent plays the same runs. Each setting is an experiment of the engine
(``run_experiment``, in memory: the means sampler is a Python object, which a results folder cannot record), with
the setting's env seed as the experiment's seed.

    python scripts/rl_armwise_dev.py --policies docs/rl-armwise/policies --candidates 0 1001 2 --out docs/rl-armwise
    python scripts/rl_armwise_dev.py --shipped --out docs/rl-armwise    # the policies the package ships
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

import pandas as pd
import torch
from rl_armwise import policy_spec

from bandit_gym.experiments import AgentSpec, ExperimentSpec, run_experiment
from bandit_gym.instances import UniformMeans
from bandit_gym.rl.armwise_ppo import SHIPPED_SEEDS

DEV_SETTINGS = {"K = 20, means U(0.35, 0.5), T = 2000": (20, 2000, 987),
                "K = 10, means U(0.35, 0.5), T = 1000": (10, 1000, 988),
                "K = 15, means U(0.35, 0.5), T = 1000": (15, 1000, 989)}
"""Label: (K, T, env seed)."""


def setting_spec(arms: int, budget: int, seed: int, runs: int, agents: tuple[AgentSpec, ...]) -> ExperimentSpec:
    """A development setting as an experiment: ``agents`` on ``runs`` runs of K = ``arms`` arms with means i.i.d.
    U(0.35, 0.5), each run its own instance, budget ``budget``, drawn from ``seed``."""
    return ExperimentSpec(env="BestArmIdentification-v0", agents=agents, budgets=(budget,), runs=runs, seed=seed,
                          env_kwargs={"means": UniformMeans(arms, 0.35, 0.5), "m": 1}, chunk=runs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--policies", type=Path, help="a rl_armwise.py OUT folder (its policies/ are read)")
    parser.add_argument("--candidates", type=int, nargs="*", default=[], help="candidate seeds to score")
    parser.add_argument("--shipped", action="store_true", help="score the shipped best_arm seeds")
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--label", default="", help="a prefix for the policies' rows (e.g. the recipe's version)")
    parser.add_argument("--problem", default="best_arm", choices=["best_arm", "best_arm_dev_select"],
                        help="the recipe whose policies are read (folders OUT/policies/PROBLEM-seedS)")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    agents = [AgentSpec("Uniform", {}, "Uniform"), AgentSpec("SuccessiveRejects", {}, "SR")]
    if args.shipped:
        agents += [AgentSpec("ArmwisePPO", {"problem": args.problem, "seed": s}, f"{args.label}shipped seed {s}")
                   for s in SHIPPED_SEEDS]
    for c in args.candidates:
        if args.policies is None:
            parser.error("--candidates needs --policies")
        agents.append(replace(policy_spec(args.policies, args.problem, c), label=f"{args.label}candidate {c}"))
    rows = []
    for label, (arms, budget, seed) in DEV_SETTINGS.items():
        result = run_experiment(setting_spec(arms, budget, seed, args.runs, tuple(agents)), progress=False)
        for agent in agents:
            regret = result.runs[(agent.label, "regret")][:, 0]
            rows.append({"setting": label, "agent": agent.label, "runs": regret.size, "mean": regret.mean(),
                         "se": regret.std(ddof=1) / regret.size ** 0.5})
            print(f"{label} | {agent.label}: {regret.mean():.4f} ({rows[-1]['se']:.4f})", flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "best_arm_dev.csv"
    table = pd.DataFrame(rows)
    if path.is_file():  # keep the rows of other policies; replace this run's
        old = pd.read_csv(path)
        table = pd.concat([old[~old.set_index(["setting", "agent"]).index.isin(
            table.set_index(["setting", "agent"]).index)], table], ignore_index=True)
    table.to_csv(path, index=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
