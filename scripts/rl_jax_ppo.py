"""Train the arm-wise policy end to end in JAX (``bandit_gym.rl.jax_ppo``) and write what the scoring scripts read.

``train`` trains one problem of ``bandit_gym.rl.jax_ppo.JAX_RECIPES`` with several seeds side by side and writes, under
``OUT/policies``, each seed's weights (``PROBLEM-seedS.npz``, the format of ``bandit_gym.rl.armwise.save_weights``, read
by ``scripts/rl_armwise.py --evaluate-only`` as it reads any policy's weights) and its training curve
(``PROBLEM-seedS.csv``: per update, the steps, the episodes ended and their mean final loss, PPO's losses).

    python scripts/rl_jax_ppo.py train thresholding --seeds 0 1 2 --steps 3000000 --out results/jax-ppo
    python scripts/rl_jax_ppo.py train thresholding --seeds 0 1 2 --accelerator --steps 2000000000 \\
        --max-seconds 150 --out results/jax-ppo            # on a GPU: ACCELERATOR_CONFIG, stopped after 150 s

``--max-seconds`` stops after the first compiled call that ends past that time; the weights' header records the
steps made (``total_timesteps``), and training that many steps from the same seeds remakes the policies.

``score`` plays the weights under ``POLICIES`` (``PROBLEM-seedS.npz``) through the experiment engine, beside the
stable-baselines3 policies the package ships for the same problem (``ArmwisePPO``), the papers' agents and Uniform,
on the same runs:

- ``--set first``: the problem's held-out settings of ``scripts/rl_armwise.py`` (``HELD_OUT``: tao2019's setups,
  Audibert et al.'s problems, chen2017's instances), env seed 2019, with that script's tables and paired tests;
- ``--set heldout2``: the second held-out set (``docs/rl-armwise/heldout2/instances.json``), by its protocol
  (``scripts/rl_heldout2_score.py``: its cells, tests and goals), the JAX-trained policies' rows reported apart, as
  the set's rule asks of a policy trained after the set was fixed. The goals are decided for them alone.

    python scripts/rl_jax_ppo.py score thresholding --set first --policies results/jax-ppo/policies \
        --out results/jax-ppo/first
    python scripts/rl_jax_ppo.py score all --set heldout2 --policies results/jax-ppo/policies \
        --out results/jax-ppo/heldout2

``figure`` draws the training curves of the policies' logs:

    python scripts/rl_jax_ppo.py figure --policies docs/rl-armwise/jax/policies --out docs/rl-armwise/jax/training.png

The engine stores its cells under ``OUT`` as they finish (an interrupted scoring resumes); the policies are the
weights files' bytes (their SHA-256 is in each cell's provenance), so a policy trained again is played again.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path
from typing import Any

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
PROBLEMS = ("thresholding", "best_arm", "top_k")
JAX_LABEL = "JAX PPO {problem} seed {seed}"
SHIPPED_LABEL = "SB3 PPO {problem} seed {seed}"


def train(args: argparse.Namespace) -> int:
    import jax

    from bandit_gym.rl import jax_ppo as ppo

    recipe = ppo.JAX_RECIPES[args.problem]
    if args.accelerator:
        recipe = dataclasses.replace(recipe, config=ppo.ACCELERATOR_CONFIG)
    out = args.out / "policies"
    out.mkdir(parents=True, exist_ok=True)
    print(f"{args.problem}: seeds {args.seeds} on {jax.devices()[0].device_kind}, {recipe.config}", flush=True)
    start = time.perf_counter()

    def progress(steps: int, log: dict[str, float]) -> None:
        print(f"  {steps:>13,} steps  {time.perf_counter() - start:7.1f} s  final loss {log['final_loss']:.4f}  "
              f"entropy {log['entropy']:.3f}", flush=True)

    results = ppo.train(recipe, args.seeds, args.steps, updates_per_call=args.updates_per_call,
                        max_seconds=args.max_seconds, progress=progress)
    for result in results:
        result.save(out / f"{args.problem}-seed{result.seed}.npz", problem=args.problem)
        pd.DataFrame(result.log).to_csv(out / f"{args.problem}-seed{result.seed}.csv", index=False)
    first = results[0]
    rate = first.total_timesteps * len(results) / first.seconds
    print(f"{args.problem}: {first.total_timesteps:,} steps per seed, {len(results)} seeds in {first.seconds:.1f} s "
          f"(compilation included): {rate:,.0f} steps/s on {first.device}; wrote {out}", flush=True)
    return 0


def policy_entries(policies: Path, problem: str, seeds: list[int], shipped: bool = True) -> dict[str, dict[str, Any]]:
    """The JAX-trained policies of ``problem`` as agents (label -> name and params), then (``shipped``) the SB3
    ones the package ships."""
    from bandit_gym.rl.armwise_ppo import SHIPPED_SEEDS

    found: dict[str, dict[str, Any]] = {}
    for seed in seeds:
        path = policies / f"{problem}-seed{seed}.npz"
        if not path.is_file():
            raise SystemExit(f"error: no policy {path} (train it with: python scripts/rl_jax_ppo.py train {problem})")
        found[JAX_LABEL.format(problem=problem, seed=seed)] = {"name": "rl_armwise:WeightsPolicy",
                                                               "params": {"weights": str(path.resolve())}}
    for seed in SHIPPED_SEEDS if shipped else ():
        found[SHIPPED_LABEL.format(problem=problem, seed=seed)] = {"name": "ArmwisePPO",
                                                                   "params": {"problem": problem, "seed": seed}}
    return found


def score_first(problem: str, entries: dict[str, dict[str, Any]], out: Path, jobs: int) -> None:
    """The problem's first held-out settings (``rl_armwise.HELD_OUT``) through the engine."""
    import rl_armwise
    from rl_armwise import HELD_OUT, score, setting_spec, tests_of

    from bandit_gym.experiments import AgentSpec

    settings, paper = HELD_OUT[problem]
    policies = {label: AgentSpec(e["name"], e["params"], label) for label, e in entries.items()}
    compared = {s.label: s.agents if s.agents is not None else paper for s in settings}
    specs = [setting_spec(s, compared[s.label], policies, 2019) for s in settings]
    results = score(specs, out / "cells" / problem, jobs)
    rows, tests = [], []
    for setting, result in zip(settings, results, strict=True):
        more_rows, more_tests = tests_of(result, setting.label, policies, compared[setting.label])
        rows += [{"problem": problem, **row} for row in more_rows]
        tests += [{"problem": problem, **test} for test in more_tests]
    pd.DataFrame(rows).to_csv(out / f"{problem}.csv", index=False)
    pd.DataFrame(tests).to_csv(out / f"{problem}_tests.csv", index=False)
    print(f"wrote {out / (problem + '.csv')} and {problem}_tests.csv ({rl_armwise.__name__}'s settings)")


def score_heldout2(problems: list[str], entries: dict[str, dict[str, dict[str, Any]]], out: Path, jobs: int) -> None:
    """The second held-out set's families of ``problems``, by its protocol, the JAX-trained policies apart."""
    import rl_heldout2_score as protocol

    data = json.loads(protocol.SET.read_text())
    families = [family for family in data["families"] if family["family"] in problems]
    for family in families:
        problem = family["family"]
        shipped = {e["params"]["seed"]: e for e in family["learned"] if e["params"]["problem"] == problem}
        # (the shipped entries keep the SHA-256 the set fixed for their weights)
        family["learned"] = [{**e, "label": label, **({"weights_sha256": shipped[e["params"]["seed"]]["weights_sha256"]}
                                                       if e["name"] == "ArmwisePPO" else {})}
                             for label, e in entries[problem].items()]
        family["problems"] = [JAX_LABEL.format(problem=problem, seed=0).rsplit(" seed ", 1)[0]]
    data["families"] = families
    protocol.check_weights({"families": [{"learned": [e for e in f["learned"] if e["name"] == "ArmwisePPO"]}
                                         for f in families]})  # the shipped weights are those the set fixed
    cells = protocol.score_all(data, out, jobs, 10**9)
    table = protocol.instance_table(data, cells)
    means, tests, best = protocol.test_table(table)
    goals = protocol.decide_goals(tests, families)
    table.to_csv(out / "instance_means.csv", index=False)
    means.to_csv(out / "means.csv", index=False)
    tests.to_csv(out / "tests.csv", index=False)
    goals.to_csv(out / "goals.csv", index=False)
    failed = [f"{r.family} / {r.setting} / {r.agent}: {r.failed}" for r in table[table["failed"] != ""].itertuples()]
    shipped = any(e["name"] == "ArmwisePPO" for family in families for e in family["learned"])
    note = ("> Scored by `python scripts/rl_jax_ppo.py score ... --set heldout2` with the protocol's own functions "
            "(`scripts/rl_heldout2_score.py`): the policies trained in JAX after the set was fixed, reported apart "
            "from the set's own scorings, as its rule asks. The goals below are decided for the JAX-trained policies "
            "alone. " + ("The shipped SB3 policies play the same runs (rows `SB3 PPO ...`)." if shipped else
                         "The shipped SB3 policies are not rescored here: their rows in the set's second scoring "
                         "(`scores-engine`) sit on the same runs (the engine's env seeds come from the instance's "
                         "seed, an agent's from its label).") + "\n\n")
    text = protocol.summary(data, means, tests, goals, best, failed, protocol.commit())
    text = text.replace("Made by `python scripts/rl_heldout2_score.py` at commit", "Made with its functions at commit")
    text = text.replace("## Headline: each shipped policy", "## Headline: each JAX-trained policy")
    (out / "summary.md").write_text(note + text + "\n")
    print((out / "summary.md").read_text())


def score_command(args: argparse.Namespace) -> int:
    problems = list(PROBLEMS) if args.problem == "all" else [args.problem]
    entries = {problem: policy_entries(args.policies, problem, args.seeds, not args.without_shipped)
               for problem in problems}
    args.out.mkdir(parents=True, exist_ok=True)
    if args.set == "first":
        for problem in problems:
            score_first(problem, entries[problem], args.out, args.jobs)
    else:
        score_heldout2(problems, entries, args.out, args.jobs)
    return 0


def figure_command(args: argparse.Namespace) -> int:
    """The training curves: each update's mean final loss (the episodes that ended in it), smoothed over 25 updates,
    against the env steps, one panel per problem, one line per seed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from bandit_gym.plotting import save_figure

    rows = -(-len(PROBLEMS) // 2)  # two panels a row, 7.8 inches wide: 8-pt legends 10.7 px at a 748-px column
    fig, grid = plt.subplots(rows, 2, figsize=(7.8, 3.2 * rows), squeeze=False)
    axes = grid.ravel()
    for ax in axes[len(PROBLEMS):]:
        ax.set_visible(False)
    for ax, problem in zip(axes[:len(PROBLEMS)], PROBLEMS, strict=True):
        for path in sorted(args.policies.glob(f"{problem}-seed*.csv")):
            log = pd.read_csv(path)
            smooth = log["final_loss"].rolling(25, min_periods=1).mean()
            ax.plot(log["steps"] / 1e6, smooth, lw=1.2, label=path.stem.rsplit("-", 1)[1])
        ax.set_title(problem)
        ax.set_xlabel("env steps per seed (millions)")
        ax.set_ylabel("final loss of an episode")
        ax.legend(fontsize=8)
    fig.suptitle("PPO trained in JAX on one GPU: the loss of the episodes ended during training")
    fig.tight_layout()
    print(f"wrote {save_figure(fig, args.out)}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    trainer = commands.add_parser("train", help="train one problem's policies")
    trainer.add_argument("problem", choices=["thresholding", "best_arm", "top_k"])
    trainer.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    trainer.add_argument("--steps", type=int, default=3_000_000, help="env steps per seed (default 3,000,000)")
    trainer.add_argument("--max-seconds", type=float, default=None, help="stop after this much training time")
    trainer.add_argument("--accelerator", action="store_true", help="PPO's settings for one GPU (ACCELERATOR_CONFIG)")
    trainer.add_argument("--updates-per-call", type=int, default=10, help="PPO updates per compiled call")
    trainer.add_argument("--out", type=Path, default=Path("results/jax-ppo"))
    scorer = commands.add_parser("score", help="score trained policies through the experiment engine")
    scorer.add_argument("problem", choices=[*PROBLEMS, "all"])
    scorer.add_argument("--set", choices=["first", "heldout2"], required=True)
    scorer.add_argument("--policies", type=Path, default=Path("results/jax-ppo/policies"))
    scorer.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    scorer.add_argument("--jobs", type=int, default=1, help="cells played at once (default 1)")
    scorer.add_argument("--without-shipped", action="store_true",
                        help="leave out the shipped SB3 policies (their scores on the same runs are on record)")
    scorer.add_argument("--out", type=Path, required=True)
    drawer = commands.add_parser("figure", help="draw the training curves of the policies' CSV logs")
    drawer.add_argument("--policies", type=Path, default=Path("results/jax-ppo/policies"))
    drawer.add_argument("--out", type=Path, required=True, help="the PNG to write")
    args = parser.parse_args(argv)
    if args.command == "figure":
        return figure_command(args)
    if args.command == "score":
        if args.jobs < 1:
            parser.error("--jobs must be at least 1")
        return score_command(args)
    if args.steps < 1 or (args.max_seconds is not None and args.max_seconds <= 0) or args.updates_per_call < 1:
        parser.error("--steps and --updates-per-call must be at least 1, --max-seconds positive")
    return train(args)


if __name__ == "__main__":
    sys.exit(main())
