"""Train every recipe of ``bandit_gym.rl`` (PPO and DQN, one env per family) and score the policies next to the
papers' agents with the experiment engine; writes ``OUT/results.csv``, ``OUT/results.md``, ``OUT/figure.png``
and the policies (``OUT/policies``).

    python scripts/rl_recipes.py --out docs/rl-recipes            # about 25 minutes on 2 cores
    python scripts/rl_recipes.py --out /tmp/rl --steps 0.05 --runs 20   # a smoke run (5% of the steps)
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from bandit_gym.experiments import AgentSpec, ExperimentSpec, run_experiment
from bandit_gym.plotting import save_figure
from bandit_gym.rl import recipe_for, train


@dataclass(frozen=True)
class Case:
    """One family: the id to train on (with its budget), the id and budget to score on, the paper agents."""

    family: str
    train_id: str
    score_id: str
    budget: int
    agents: tuple[AgentSpec, ...]
    train_kwargs: tuple[tuple[str, int], ...] = ()


CASES = (
    Case("threshold", "ThresholdBandit-v0", "ThresholdBandit-v0", 1000,
         (AgentSpec("DKWUCB"), AgentSpec("UCB"), AgentSpec("Uniform"))),
    # trained on random instances (10 means uniform on [0, 1] per episode), scored on tao2019 Setup 1
    Case("thresholding", "ThresholdingBandit-v0", "ThresholdingBandit-Tao2019Setup1-v0", 100,
         (AgentSpec("LSA"), AgentSpec("APT", {"epsilon": 0.05}, "APT(.05)"), AgentSpec("Uniform")),
         (("budget", 100),)),
    # a new instance from the GP prior each episode; K = 50 arms, T = 30 pulls
    Case("best_arm", "CorrelatedBestArm-v0", "CorrelatedBestArm-v0", 30,
         (AgentSpec("BayesGap", {"kernel": "se50"}), AgentSpec("ThompsonSampling", {"kernel": "se50"}),
          AgentSpec("Uniform"))),
    # the arms are shuffled every episode; n = 100, K = 10, 5 pulls per arm
    Case("top_k", "TopKIdentification-v0", "TopKIdentification-v0", 500,
         (AgentSpec("AdaptiveTopK", {"form": "fixed_budget"}), AgentSpec("Uniform")), (("budget", 500),)),
)

#: the algorithms trained for each family (the recipes of ``bandit_gym.rl``); PPO is scored both greedy (the
#: most likely action, SB3's ``deterministic=True``) and sampled, as it was trained
ALGOS = ("PPO", "DQN")


def bayesian_model(agent: AgentSpec) -> AgentSpec:
    """The Bayesian agents take the env's generating model (its reset info), as in the hoffman2014 reproduction."""
    if agent.params.get("kernel") != "se50":
        return agent
    import gymnasium as gym

    model = gym.make("CorrelatedBestArm-v0").reset(seed=0)[1]["model"]
    model["kernel"] = model["kernel"].tolist()  # spec parameters are plain data
    params = {**{key: value for key, value in agent.params.items() if key != "kernel"}, **model}
    return AgentSpec(agent.name, params, agent.label or agent.name)


def results_markdown(table: pd.DataFrame) -> str:
    """One row per family and agent: what it was scored on, its training, its loss and error (mean +- SE)."""
    lines = ["| family | scored on | agent | training | loss | error |", "|---|---|---|---|---|---|"]
    score_ids = {case.family: f"`{case.score_id}`, T = {case.budget}" for case in CASES}
    for (family, agent), rows in table.groupby(["family", "agent"], sort=False):
        value = dict(zip(rows["metric"], zip(rows["mean"], rows["se"], strict=True), strict=True))
        steps, seconds = value.get("training steps"), value.get("training seconds")
        training = f"{steps[0]:,.0f} steps, {seconds[0]:.0f} s" if steps else ""
        loss = next((f"{name.split(' at ')[0]}: {m:.3g} +- {se:.2g}" for name, (m, se) in value.items()
                     if name.startswith(("regret", "aggregate_regret"))), "")
        error = next((f"{m:.3g} +- {se:.2g}" for name, (m, se) in value.items() if name.startswith("error")), "")
        lines.append(f"| {family} | {score_ids[family]} | {agent} | {training} | {loss} | {error} |")
    return "\n".join(lines) + "\n"


def plot_results(table: pd.DataFrame, path: Path) -> Path:
    """One panel per family: each agent's loss (mean and 95% interval), the trained policies in orange."""
    from matplotlib.figure import Figure

    losses = table[table["metric"].str.startswith(("regret", "aggregate_regret"))]
    families = losses["family"].nunique()
    fig = Figure(figsize=(7.8, 2.2 * families + 0.6))  # one panel a row, 7.8 inches: 9-pt titles 13 px at 748 px
    for index, (family, rows) in enumerate(losses.groupby("family", sort=False)):
        ax = fig.add_subplot(families, 1, index + 1)
        rows = rows.iloc[::-1]
        colours = ["tab:orange" if agent.startswith(ALGOS) else "tab:blue" for agent in rows["agent"]]
        ax.barh(rows["agent"], rows["mean"], xerr=1.96 * rows["se"], color=colours, capsize=3)
        case = next(case for case in CASES if case.family == family)
        ax.set_title(f"{family}: {case.score_id}\nT = {case.budget}", fontsize=9)
        ax.set_xlabel(rows["metric"].iloc[0].replace("_", " "))
    fig.suptitle("Trained policies (orange) next to the papers' agents (blue); 95% intervals")
    fig.set_layout_engine("constrained")
    return save_figure(fig, path, dpi=90)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path("results/rl-recipes"))
    parser.add_argument("--steps", type=float, default=1.0, help="fraction of each recipe's total_timesteps")
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--families", nargs="*", default=[case.family for case in CASES])
    parser.add_argument("--reuse", action="store_true", help="score the policies already in OUT/policies")
    parser.add_argument("--plot-only", action="store_true", help="redraw OUT/figure.png from OUT/results.csv")
    args = parser.parse_args(argv)
    if args.plot_only:
        print(plot_results(pd.read_csv(args.out / "results.csv"), args.out / "figure.png"))
        return 0
    rows = []
    for case in (case for case in CASES if case.family in args.families):
        policies = {}
        for algo in ALGOS:
            folder = args.out / "policies" / f"{case.family}-{algo.lower()}"
            if not (args.reuse and (folder / "training.json").is_file()):
                recipe = recipe_for(case.train_id, algo)
                steps = max(int(recipe.total_timesteps * args.steps), 256)
                start = time.perf_counter()
                trained = train(case.train_id, algo, total_timesteps=steps, seed=0,
                                env_kwargs=dict(case.train_kwargs))
                trained.save(folder)
                record = {"steps": steps, "seconds": round(time.perf_counter() - start, 1)}
                (folder / "training.json").write_text(json.dumps(record))
            record = json.loads((folder / "training.json").read_text())
            policies[algo] = str(folder)
            print(f"{case.family}: {algo} trained for {record['steps']} steps in {record['seconds']:.0f} s",
                  flush=True)
            rows.append({"family": case.family, "agent": algo, "metric": "training steps", "mean": record["steps"],
                         "se": 0.0, "runs": 1})
            rows.append({"family": case.family, "agent": algo, "metric": "training seconds",
                         "mean": record["seconds"], "se": 0.0, "runs": 1})
        agents = (AgentSpec("SB3Agent", {"policy": policies["PPO"], "deterministic": True}, "PPO"),
                  AgentSpec("SB3Agent", {"policy": policies["PPO"], "deterministic": False}, "PPO (sampled)"),
                  AgentSpec("SB3Agent", {"policy": policies["DQN"], "algo": "DQN", "deterministic": True}, "DQN"))
        spec = ExperimentSpec(env=case.score_id, budgets=(case.budget,), runs=args.runs, seed=1,
                              agents=agents + tuple(bayesian_model(agent) for agent in case.agents))
        summary = run_experiment(spec, progress=False).summary()
        for _, row in summary.iterrows():
            rows.append({"family": case.family, "agent": row.agent, "metric": f"{row.metric} at T = {row.budget}",
                         "mean": row["mean"], "se": row["se"], "runs": row["runs"]})
        print(summary[["agent", "metric", "mean", "se"]].to_string(index=False), flush=True)
    table = pd.DataFrame(rows)
    args.out.mkdir(parents=True, exist_ok=True)
    table.to_csv(args.out / "results.csv", index=False)
    (args.out / "results.md").write_text(results_markdown(table))
    plot_results(table, args.out / "figure.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
