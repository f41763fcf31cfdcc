"""Train the arm-wise policy (``bandit_gym.rl.train_armwise``) with several seeds and score it on held-out
settings next to the papers' agents and Uniform: the same runs for every agent (the same env seed, and common
random numbers where the env has them: the same samples per arm; the threshold bandit draws its thresholds and
the uniforms behind each round's value whatever the arm pulled, so its runs are paired by the seed alone),
paired two-sided t-tests of every policy
against the best paper agent of the setting and against Uniform. Writes ``OUT/PROBLEM.csv`` (one row per
setting, agent and seed: mean, standard error), ``OUT/PROBLEM_tests.csv`` and ``OUT/PROBLEM.md``, and the
policies under ``OUT/policies/PROBLEM-seedS``.

A recipe with ``candidates`` > 1 (``bandit_gym.rl.ArmwiseRecipe``) trains, for seed s, the candidates s, s + 1000,
...; each seed's held-out row is the candidate that ``bandit_gym.rl.select_candidate`` keeps on the training
distribution (``OUT/PROBLEM_validation.csv``: every candidate's validation regret). A candidate already trained
(its ``training.json`` present) is not trained again; a candidate with no folder is read from its weights
(``OUT/policies/PROBLEM-seedS.npz``) or from the package's, when it ships that candidate (``ArmwisePPO``).

Each seed trains in its own process on one torch thread (``--jobs`` processes at once; the small network runs
fastest on one thread, and two seeds then share two cores).

    python scripts/rl_armwise.py threshold --seeds 0 1 2 --out docs/rl-armwise
    python scripts/rl_armwise.py thresholding --seeds 0 --steps 100000 --runs 50 --out /tmp/armwise  # a smoke run
    python scripts/rl_armwise.py best_arm --evaluate-only --out docs/rl-armwise  # score the saved policies again

``--variant NAME`` trains and scores a variant of the problem's recipe (``VARIANTS``: its fields replaced) and
chooses its candidates on the variant's own validation episodes (its training distribution, unless the variant
sets ``validation_env_kwargs``):

    python scripts/rl_armwise.py best_arm --variant spread_means --out results/best_arm_spread_means
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pandas as pd
import torch
from joblib import Parallel, delayed
from scipy import stats

from bandit_gym.agents import AGENTS, ArmwisePPO, SB3Agent
from bandit_gym.agents.armwise_ppo import SHIPPED_PROBLEMS, SHIPPED_SEEDS, shipped_path
from bandit_gym.armwise import load_weights
from bandit_gym.experiments import AgentSpec
from bandit_gym.instances import (
    AUDIBERT2010_PROBLEMS,
    BudgetRange,
    SpreadMeans,
    best_arm_complexity,
    gap_complexity,
    staircase_distributions,
)
from bandit_gym.reproduce.hoffman2014 import (
    TRAFFIC_ENV,
    TRAFFIC_MODEL,
    TRAFFIC_SPEEDS_SIGMA,
    historical_hardness,
    traffic_agents,
)
from bandit_gym.rl import (
    ARMWISE_RECIPES,
    CANDIDATE_STRIDE,
    ArmwiseRecipe,
    armwise_recipe,
    candidate_seeds,
    select_candidate,
    train_armwise,
)
from bandit_gym.rollout import play_vector


@dataclass(frozen=True)
class Setting:
    """A held-out setting: an env id and its arguments, never the training distribution's own instances;
    ``agents`` replaces the problem's paper agents on this setting."""

    label: str
    env_id: str
    kwargs: dict[str, Any] = field(default_factory=dict)
    runs: int = 1000
    agents: tuple[AgentSpec, ...] | None = None


def paper(*names: str, **params: dict[str, Any]) -> tuple[AgentSpec, ...]:
    """Agents by name (label = name), with ``params`` for some of them."""
    return tuple(AgentSpec(name, params.get(name, {}), name) for name in names)


def _audibert(problem: int) -> Setting:
    """Audibert, Bubeck and Munos's problem at its budget (n = H_1 rounded as gabillon2012 does), against SR,
    UCB-E with a = (n - K) / H_1 and UGapEb with a = (n - K) / (4 H_epsilon) (their oracle complexities, as
    gabillon2012's reproduction gives them)."""
    means = AUDIBERT2010_PROBLEMS[problem]
    agents = (AgentSpec("SuccessiveRejects", {}, "SR"),
              AgentSpec("UCBEBestArm", {"c": 1.0, "H1": best_arm_complexity(means)}, "UCB-E"),
              AgentSpec("UGapEb", {"H": gap_complexity(means)}, "UGapEb"))
    return Setting(f"Audibert et al. problem {problem}", f"BestArmIdentification-Audibert2010Problem{problem}-v0",
                   runs=500, agents=agents)


def _traffic(budget: int) -> Setting:
    """The traffic preset on the 210 first held-out profiles (the paper's model for the Bayesian agents; the
    correlation-blind UGap and UCB-E with the historical complexities where T >= K)."""
    bayesian, blind = traffic_agents(TRAFFIC_MODEL, historical_hardness(), TRAFFIC_SPEEDS_SIGMA)
    return Setting(f"traffic, held-out profiles, T = {budget}", TRAFFIC_ENV,
                   {"means": "traffic-held-out@0", "budget": budget}, runs=210,
                   agents=bayesian + (blind if budget >= 357 else ()))


# problem -> (held-out settings, the paper agents compared)
HELD_OUT: dict[str, tuple[tuple[Setting, ...], tuple[AgentSpec, ...]]] = {
    "thresholding": (
        (Setting("tao2019 Setup 1, T = 200", "ThresholdingBandit-Tao2019Setup1-v0", {"budget": 200}),
         Setting("tao2019 Setup 1, T = 1000", "ThresholdingBandit-Tao2019Setup1-v0"),
         Setting("tao2019 Setup 2, T = 40000", "ThresholdingBandit-Tao2019Setup2-v0", runs=200),
         Setting("tao2019 Setup 3, T = 100000", "ThresholdingBandit-Tao2019Setup3-v0", runs=100)),
        paper("LSA", "APT", "OptKG"),
    ),
    "threshold": (
        (Setting("delivery, T = 1000", "ThresholdBandit-Delivery-v0", {"horizon": 1000}, runs=500),
         Setting("staircase K = 4, m = 6, T = 1000", "ThresholdBandit-v0",
                 {"distributions": staircase_distributions(4, 6).tolist(), "horizon": 1000}, runs=500)),
        paper("UCB", "DKWUCB"),
    ),
    "best_arm": (tuple(_audibert(p) for p in range(1, 8)), ()),
    "top_k": (
        tuple(Setting(f"chen2017 {name}, n = 1000, K = 100, T = {budget}", f"TopKIdentification-Chen2017{name}K100-v0",
                      {"budget": budget}, runs=20) for name in ("TwoGroup", "Uniform") for budget in (10_000,)),
        paper("AdaptiveTopK", "OptMAI"),
    ),
    "correlated": ((_traffic(100), _traffic(400)), ()),
}
HELD_OUT["best_arm_dev_select"] = HELD_OUT["best_arm"]


def crn(env_id: str, kwargs: dict[str, Any]) -> dict[str, Any]:
    """Common random numbers where the env takes them."""
    takes = gym.make(env_id, **kwargs).unwrapped.engine.takes_common_random_numbers
    return {**kwargs, "common_random_numbers": True} if takes else kwargs


def play(setting: Setting, agent: Any, seed: int) -> np.ndarray:
    """Per-run regret of ``agent`` on the runs of ``setting`` drawn from ``seed`` (on one torch thread)."""
    torch.set_num_threads(1)
    env = gym.make_vec(setting.env_id, num_envs=setting.runs, vectorization_mode="vector_entry_point",
                       **crn(setting.env_id, setting.kwargs))
    try:
        return play_vector(env, agent, seed=seed)["regret"]
    finally:
        env.close()


def score(setting: Setting, agents: dict[str, Any], seed: int, jobs: int = 1) -> dict[str, np.ndarray]:
    """Per-run regret of every agent on the same runs of ``setting`` (``jobs`` agents at once)."""
    regrets = Parallel(n_jobs=jobs)(delayed(play)(setting, agent, seed) for agent in agents.values())
    return dict(zip(agents, regrets, strict=True))


VARIANTS: dict[str, tuple[str, dict[str, Any]]] = {
    "spread_means": ("best_arm", {"env_kwargs": {"means": SpreadMeans(num_arms=15)}}),
    "long_budgets": ("best_arm", {"env_kwargs": {"budget": BudgetRange(100, 6000, log=True)}}),
}
"""Recipe variants measured and not shipped: name -> (problem, the recipe fields replaced)."""


def recipe_of(problem: str, variant: str | None) -> ArmwiseRecipe:
    """The problem's recipe, or its variant ``variant`` (a key of ``VARIANTS`` for that problem)."""
    if variant is None:
        return ARMWISE_RECIPES[problem]
    of, overrides = VARIANTS[variant]
    if of != problem:
        raise SystemExit(f"error: --variant {variant} is a variant of {of}, not of {problem}")
    return armwise_recipe(problem, **overrides)


def train_one(recipe: ArmwiseRecipe, seed: int, steps: int | None, folder: Path) -> float:
    """Train one seed on one torch thread, save it to ``folder``; the minutes it took."""
    torch.set_num_threads(1)
    start = time.perf_counter()
    trained = train_armwise(recipe, seed=seed, total_timesteps=steps, candidates=1)
    minutes = (time.perf_counter() - start) / 60
    trained.save(folder)
    (folder / "training.json").write_text(json.dumps({"minutes": minutes, "steps": trained.model.num_timesteps,
                                                         "torch_threads": 1}))
    return minutes


def policy_of(out: Path, problem: str, seed: int) -> Any:
    """The policy trained with ``seed``: its folder under ``OUT/policies``, or its weights there
    (``PROBLEM-seedS.npz``, as ``bandit_gym.armwise.save_weights`` writes them), or the weights the package
    ships, when the file shipped for the candidate's seed (``seed % CANDIDATE_STRIDE``: candidate 1001 is seed 1's)
    is that candidate (its header's ``candidate_seed``, else its seed)."""
    folder = out / "policies" / f"{problem}-seed{seed}"
    if (folder / "model.zip").is_file():
        return SB3Agent(folder)
    if folder.with_suffix(".npz").is_file():
        return SB3Agent(load_weights(folder.with_suffix(".npz"))[0])
    shipped_seed = seed % CANDIDATE_STRIDE
    if problem in SHIPPED_PROBLEMS and shipped_seed in SHIPPED_SEEDS:
        header = load_weights(str(shipped_path(problem, shipped_seed)))[1]
        if header.get("candidate_seed", shipped_seed) == seed:
            return ArmwisePPO(problem, shipped_seed)
    raise FileNotFoundError(f"no policy trained with seed {seed}: {folder} holds no model.zip, there is no "
                            f"{folder.with_suffix('.npz')}, and the package ships another candidate for that seed")


def select(out: Path, problem: str, seeds: list[int], recipe: ArmwiseRecipe, reuse: bool = False) -> dict[int, int]:
    """Each seed's chosen candidate (``bandit_gym.rl.select_candidate``, on ``recipe``'s validation episodes);
    the validation of every candidate written to ``OUT/PROBLEM_validation.csv`` when the recipe has several.
    ``reuse``: read the choice from that file instead (it must hold every candidate of every seed)."""
    if recipe.candidates == 1:
        return {seed: seed for seed in seeds}
    if reuse:
        if not (out / f"{problem}_validation.csv").is_file():
            raise SystemExit(f"error: --reuse-validation needs {out / (problem + '_validation.csv')}, which is missing")
        done = pd.read_csv(out / f"{problem}_validation.csv")
        for seed in seeds:
            held = sorted(done.loc[done["seed"] == seed, "candidate_seed"])
            if held != list(candidate_seeds(seed, recipe.candidates)):
                raise SystemExit(f"error: {out / (problem + '_validation.csv')} does not hold seed {seed}'s candidates")
        return {int(r.seed): int(r.candidate_seed) for r in done[done["chosen"]].itertuples() if r.seed in seeds}
    chosen, rows = {}, []
    for seed in seeds:
        candidates = candidate_seeds(seed, recipe.candidates)
        best, regrets = select_candidate(recipe, [policy_of(out, problem, c) for c in candidates])
        chosen[seed] = candidates[best]
        rows += [{"problem": problem, "seed": seed, "candidate_seed": c, "runs": r.size, "mean": r.mean(),
                  "se": r.std(ddof=1) / np.sqrt(r.size), "chosen": c == chosen[seed]}
                 for c, r in zip(candidates, regrets, strict=True)]
        print(f"seed {seed}: candidate {chosen[seed]} chosen ({', '.join(f'{r.mean():.4g}' for r in regrets)})",
              flush=True)
    pd.DataFrame(rows).to_csv(out / f"{problem}_validation.csv", index=False)
    return chosen


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("problem", choices=sorted(HELD_OUT))
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--steps", type=int, default=None, help="training steps (default: the recipe's)")
    parser.add_argument("--runs", type=int, default=None, help="runs per setting (default: each setting's)")
    parser.add_argument("--jobs", type=int, default=2, help="seeds trained (agents scored) at once, one process each")
    parser.add_argument("--evaluate-only", action="store_true", help="score the policies saved under OUT/policies")
    parser.add_argument("--out", type=Path, default=Path("results/rl-armwise"))
    parser.add_argument("--variant", choices=sorted(VARIANTS), help="a variant of the problem's recipe")
    parser.add_argument("--env-seed", type=int, default=2019, help="the env seed of the scored runs (default 2019)")
    parser.add_argument("--setting", action="append", help="score only this held-out setting (its label; repeatable)")
    parser.add_argument("--with-shipped", metavar="PROBLEM", choices=sorted(SHIPPED_PROBLEMS),
                        help="also score the policies the package ships for PROBLEM (rows 'shipped seed S')")
    parser.add_argument("--reuse-validation", action="store_true",
                        help="take each seed's candidate from OUT/PROBLEM_validation.csv instead of validating again")
    args = parser.parse_args(argv)
    settings, agents_of_paper = HELD_OUT[args.problem]
    if args.setting:
        labels = [setting.label for setting in settings]
        unknown = sorted(set(args.setting) - set(labels))
        if unknown:
            parser.error(f"--setting {unknown[0]!r} is not a held-out setting of {args.problem}; choose from {labels}")
        settings = tuple(setting for setting in settings if setting.label in args.setting)
    args.out.mkdir(parents=True, exist_ok=True)
    recipe = recipe_of(args.problem, args.variant)
    trained = [c for seed in args.seeds for c in candidate_seeds(seed, recipe.candidates)]
    folders = {c: args.out / "policies" / f"{args.problem}-seed{c}" for c in trained}
    if not args.evaluate_only:
        todo = [c for c in trained if not (folders[c] / "training.json").is_file()]  # a rerun resumes
        took = Parallel(n_jobs=args.jobs)(delayed(train_one)(recipe, c, args.steps, folders[c]) for c in todo)
        print(", ".join(f"seed {s}: trained in {m:.1f} min" for s, m in zip(todo, took, strict=True)), flush=True)
    record = {c: folder / "training.json" for c, folder in folders.items()}
    training = {c: json.loads(path.read_text()) for c, path in record.items() if path.is_file()}
    torch.set_num_threads(1)
    chosen = select(args.out, args.problem, args.seeds, recipe, reuse=args.reuse_validation)
    policies = {f"armwise seed {seed}": policy_of(args.out, args.problem, chosen[seed]) for seed in args.seeds}
    if args.with_shipped:
        policies |= {f"shipped seed {seed}": ArmwisePPO(args.with_shipped, seed) for seed in SHIPPED_SEEDS}
    rows, tests = [], []
    for setting in settings:
        if args.runs is not None:
            setting = replace(setting, runs=args.runs)
        compared = setting.agents if setting.agents is not None else agents_of_paper
        agents = {**{spec.label or spec.name: AGENTS[spec.name](**spec.params) for spec in compared},
                  "Uniform": AGENTS["Uniform"](), **policies}
        regret = score(setting, agents, seed=args.env_seed, jobs=args.jobs)
        for label, values in regret.items():
            rows.append({"problem": args.problem, "setting": setting.label, "agent": label, "runs": values.size,
                         "mean": values.mean(), "se": values.std(ddof=1) / np.sqrt(values.size)})
        best = min((spec.label or spec.name for spec in compared), key=lambda name: regret[name].mean())
        for label in policies:
            for other in (best, "Uniform"):
                diff = regret[label] - regret[other]  # the same runs: paired
                p = 1.0 if not diff.any() else float(stats.ttest_rel(regret[label], regret[other]).pvalue)
                tests.append({"problem": args.problem, "setting": setting.label, "policy": label, "against": other,
                              "difference": diff.mean(), "relative": diff.mean() / max(regret[other].mean(), 1e-12),
                              "p_value": p})
        print(f"{setting.label}: done", flush=True)
    report(args.out, args.problem, pd.DataFrame(rows), pd.DataFrame(tests), training, args.steps, chosen, recipe,
           args.variant)
    return 0


def report(out: Path, problem: str, table: pd.DataFrame, tested: pd.DataFrame, training: dict[int, Any],
           steps: int | None, chosen: dict[int, int] | None = None, recipe: ArmwiseRecipe | None = None,
           variant: str | None = None) -> None:
    """Write ``OUT/PROBLEM.csv``, ``OUT/PROBLEM_tests.csv`` and ``OUT/PROBLEM.md`` (``chosen``: each seed's
    candidate, when the recipe chose among several; ``variant``: named in the title)."""
    table.to_csv(out / f"{problem}.csv", index=False)
    tested.to_csv(out / f"{problem}_tests.csv", index=False)
    trained_in = ", ".join(f"seed {s}: {t['minutes']:.1f} min, {t['torch_threads']} torch thread(s)"
                           for s, t in training.items()) or "training times not recorded"
    recipe = recipe or ARMWISE_RECIPES[problem]
    features = recipe.features or "the default"
    lines = [f"# Arm-wise policy, {problem}" + (f": variant `{variant}`" if variant else ""), "",
             f"Trained on `{recipe.env_id}` with {recipe.env_kwargs}, features {features} "
             f"({steps or recipe.total_timesteps} steps; {trained_in}). Held-out settings; mean regret (standard "
             "error) over the runs:", "",
             "| setting | agent | runs | mean (SE) |", "|---|---|---|---|"]
    if recipe.candidates > 1 and chosen:
        validated_on = (f"the training env with {recipe.validation_env_kwargs} instead"
                        if recipe.validation_env_kwargs else "the training distribution")
        picked = ", ".join(f"seed {seed}: candidate {c}" for seed, c in chosen.items())
        lines[2:2] = [f"Each seed trained {recipe.candidates} candidates (seeds s, s + 1000, ...) and kept the one "
                      f"with the lowest mean regret on {recipe.validation_runs} episodes of {validated_on} "
                      f"([validation]({problem}_validation.csv)): {picked}.", ""]
    lines += [f"| {r.setting} | {r.agent} | {r.runs} | {r.mean:.4g} ({r.se:.2g}) |" for r in table.itertuples()]
    lines += ["", "Paired two-sided t-tests (same runs), each policy against the best paper agent of the setting "
              "and against Uniform (negative difference: the policy's regret is lower):", "",
              "| setting | policy | against | difference | relative | p |", "|---|---|---|---|---|---|"]
    lines += [f"| {t.setting} | {t.policy} | {t.against} | {t.difference:.4g} | {t.relative:+.1%} | "
              f"{'< 1e-300' if t.p_value == 0 else format(t.p_value, '.2g')} |" for t in tested.itertuples()]
    (out / f"{problem}.md").write_text("\n".join(lines) + "\n")
    print(f"wrote {out / (problem + '.md')}")


if __name__ == "__main__":
    raise SystemExit(main())
