"""Train the arm-wise policy (``bandit_gym.rl.train_armwise``) with several seeds and score it on held-out
settings next to the papers' agents and Uniform, through the experiment engine: each held-out setting is an
``ExperimentSpec`` (the paper agents, Uniform and the policies, one budget, the setting's runs, ``--env-seed`` as
its seed), played by ``run_experiments`` on the same runs for every agent (common random numbers where the env has
them: the same samples per arm; the threshold bandit draws its thresholds and the uniforms behind each round's
value whatever the arm pulled, so its runs are paired by the seed alone), its cells stored under
``OUT/heldout/PROBLEM/SETTING-DIGEST`` (DIGEST: of the spec; an interrupted scoring resumes, a policy trained again
into its folder is played again). The paired two-sided t-tests of every policy against the best paper agent of the
setting and against Uniform are the engine's (``ExperimentResult.paired_tests``). Writes ``OUT/PROBLEM.csv`` (one
row per setting and agent: mean, standard error), ``OUT/PROBLEM_tests.csv`` and ``OUT/PROBLEM.md``, and the
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
import hashlib
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pandas as pd
import torch
from joblib import Parallel, delayed

from bandit_gym.agents import agent_class
from bandit_gym.experiments import AgentSpec, ExperimentResult, ExperimentSpec, run_experiments
from bandit_gym.instances import (
    AUDIBERT2010_PROBLEMS,
    BudgetRange,
    SpreadMeans,
    best_arm_complexity,
    gap_complexity,
    staircase_distributions,
)
from bandit_gym.registration import family_of_env
from bandit_gym.rl import (
    ARMWISE_RECIPES,
    CANDIDATE_STRIDE,
    ArmwiseRecipe,
    SB3Agent,
    armwise_recipe,
    candidate_seeds,
    select_candidate,
    train_armwise,
)
from bandit_gym.rl.armwise import load_weights
from bandit_gym.rl.armwise_ppo import SHIPPED_PROBLEMS, SHIPPED_SEEDS, shipped_path
from bandit_gym.studies.hoffman2014.reproduce import (
    TRAFFIC_ENV,
    TRAFFIC_MODEL,
    TRAFFIC_SPEEDS_SIGMA,
    historical_hardness,
    traffic_agents,
)


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


def budget_of(setting: Setting) -> tuple[str, int]:
    """The argument that sets a setting's budget (``horizon`` on the threshold bandit, else ``budget``) and its
    value there (the preset's when the setting does not give it)."""
    argument = "horizon" if str(family_of_env(setting.env_id)) == "threshold" else "budget"
    if argument in setting.kwargs:
        return argument, int(setting.kwargs[argument])
    env = gym.make(setting.env_id, **setting.kwargs)
    try:
        return argument, int(getattr(env.unwrapped.engine, argument))
    finally:
        env.close()


def setting_spec(setting: Setting, compared: tuple[AgentSpec, ...], policies: dict[str, AgentSpec],
                 seed: int) -> ExperimentSpec:
    """One held-out setting as an experiment: ``compared`` (the paper agents), Uniform and ``policies`` (label ->
    agent) on the same ``setting.runs`` runs, drawn from ``seed``, at the setting's one budget."""
    argument, budget = budget_of(setting)
    kwargs = {key: value for key, value in setting.kwargs.items() if key != argument}
    agents = (*compared, AgentSpec("Uniform", {}, "Uniform"),
              *(replace(agent, label=label) for label, agent in policies.items()))
    return ExperimentSpec(env=setting.env_id, agents=agents, budgets=(budget,), runs=setting.runs, seed=seed,
                          env_kwargs=kwargs, chunk=min(setting.runs, 2500), name=slug(setting.label))


def slug(label: str) -> str:
    """A setting's label as a folder and experiment name."""
    return "-".join("".join(c if c.isalnum() or c == "." else " " for c in label).split())


def spec_folder(root: Path, spec: ExperimentSpec) -> Path:
    """Where the cells of ``spec`` live: ``root/NAME-DIGEST``, the digest (12 hex digits) of the spec, so that
    another spec (other runs, seed or agents) never meets this one's cells."""
    digest = hashlib.sha256(json.dumps(spec.to_dict(), sort_keys=True).encode()).hexdigest()[:12]
    return root / f"{spec.name}-{digest}"


def score(specs: list[ExperimentSpec], root: Path, jobs: int) -> list[ExperimentResult]:
    """Play every setting's cells not already stored under ``root`` (``jobs`` workers, one torch thread each)."""
    torch.set_num_threads(1)
    return run_experiments(specs, [spec_folder(root, spec) for spec in specs], jobs=jobs)


def loss_metric(spec: ExperimentSpec) -> str:
    """The env's loss at the answer step (what ``play_vector`` returns as ``regret``): the engine's ``regret``,
    ``aggregate_regret`` on the thresholding bandit (where the engine's first metric of best arm and top K is the
    error)."""
    return "regret" if "regret" in spec.metrics else "aggregate_regret"


def tests_of(result: ExperimentResult, label: str, policies: dict[str, AgentSpec],
             compared: tuple[AgentSpec, ...]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The rows of one setting: every agent's mean and standard error, and each policy's paired tests (the
    engine's) against the best paper agent of the setting and against Uniform (difference: policy - other)."""
    metric = loss_metric(result.spec)
    regret = {agent.display: result.runs[(agent.display, metric)][:, 0] for agent in result.spec.agents}
    rows = [{"setting": label, "agent": name, "runs": values.size, "mean": values.mean(),
             "se": values.std(ddof=1) / np.sqrt(values.size)} for name, values in regret.items()]
    best = min((agent.display for agent in compared), key=lambda name: regret[name].mean())
    tests = []
    for policy in policies:
        paired = result.paired_tests(policy, metric).set_index("agent")
        for other in (best, "Uniform"):
            difference = -float(paired.loc[other, "mean_difference"])  # the engine's is other - policy
            tests.append({"setting": label, "policy": policy, "against": other, "difference": difference,
                          "relative": difference / max(regret[other].mean(), 1e-12),
                          "p_value": float(paired.loc[other, "p_value"])})
    return rows, tests


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


class WeightsPolicy(SB3Agent):
    """The arm-wise policy of a weights file (``bandit_gym.rl.armwise.save_weights``: numpy arrays, no pickles)."""

    def __init__(self, weights: str) -> None:
        self.weights = weights
        super().__init__(load_weights(weights)[0], any_budget=True)

    def params(self) -> dict[str, Any]:
        return {"weights": self.weights}

    @classmethod
    def data_files(cls, params: Mapping[str, Any]) -> tuple[Any, ...]:
        return (Path(params["weights"]),)


def policy_spec(out: Path, problem: str, seed: int) -> AgentSpec:
    """The policy trained with ``seed``, as an experiment's agent: its folder under ``OUT/policies``, or its weights
    there (``PROBLEM-seedS.npz``, as ``bandit_gym.rl.armwise.save_weights`` writes them), or the weights the package
    ships, when the file shipped for the candidate's seed (``seed % CANDIDATE_STRIDE``: candidate 1001 is seed 1's)
    is that candidate (its header's ``candidate_seed``, else its seed)."""
    folder = out / "policies" / f"{problem}-seed{seed}"
    if (folder / "model.zip").is_file():
        return AgentSpec("SB3Agent", {"policy": str(folder)})
    if folder.with_suffix(".npz").is_file():
        return AgentSpec(f"{__name__}:WeightsPolicy", {"weights": str(folder.with_suffix(".npz"))})
    shipped_seed = seed % CANDIDATE_STRIDE
    if problem in SHIPPED_PROBLEMS and shipped_seed in SHIPPED_SEEDS:
        header = load_weights(str(shipped_path(problem, shipped_seed)))[1]
        if header.get("candidate_seed", shipped_seed) == seed:
            return AgentSpec("ArmwisePPO", {"problem": problem, "seed": shipped_seed})
    raise FileNotFoundError(f"no policy trained with seed {seed}: {folder} holds no model.zip, there is no "
                            f"{folder.with_suffix('.npz')}, and the package ships another candidate for that seed")


def policy_of(out: Path, problem: str, seed: int) -> Any:
    """The agent of ``policy_spec``."""
    spec = policy_spec(out, problem, seed)
    return agent_class(spec.name)(**spec.params)


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
    policies = {f"armwise seed {seed}": policy_spec(args.out, args.problem, chosen[seed]) for seed in args.seeds}
    if args.with_shipped:
        policies |= {f"shipped seed {seed}": AgentSpec("ArmwisePPO", {"problem": args.with_shipped, "seed": seed})
                     for seed in SHIPPED_SEEDS}
    settings = tuple(replace(setting, runs=args.runs) if args.runs is not None else setting for setting in settings)
    compared = {setting.label: setting.agents if setting.agents is not None else agents_of_paper
                for setting in settings}
    specs = [setting_spec(setting, compared[setting.label], policies, args.env_seed) for setting in settings]
    results = score(specs, args.out / "heldout" / args.problem, args.jobs)
    rows, tests = [], []
    for setting, result in zip(settings, results, strict=True):
        more_rows, more_tests = tests_of(result, setting.label, policies, compared[setting.label])
        rows += [{"problem": args.problem, **row} for row in more_rows]
        tests += [{"problem": args.problem, **test} for test in more_tests]
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
    features = f"`{recipe.features}`" if recipe.features else "the default"
    lines = [f"# Arm-wise policy, {problem}" + (f": variant `{variant}`" if variant else ""), "",
             f"Trained on `{recipe.env_id}` with `{recipe.env_kwargs}`, features {features} "
             f"({steps or recipe.total_timesteps} steps; {trained_in}). Held-out settings; mean regret (standard "
             "error) over the runs:", "",
             "| setting | agent | runs | mean (SE) |", "|---|---|---|---|"]
    if recipe.candidates > 1 and chosen:
        validated_on = (f"the training env with `{recipe.validation_env_kwargs}` instead"
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
