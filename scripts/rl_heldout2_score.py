"""Score the learned agents' second held-out set (``docs/rl-armwise/heldout2/``) by the protocol of its README.

Every agent of a family (the paper agents listed per setting in ``instances.json``, Uniform and the shipped arm-wise
policies) plays the same runs of every instance, through the experiment engine: instance i of a setting is one
``ExperimentSpec`` (the env with that instance fixed, the setting's R runs in one chunk, seed ``1000 * score_seed +
i``, common random numbers where the env takes them), from which the engine derives the env's and each agent's seeds.
Oracle parameters (H, H1) are filled by the engine from the instance's true means; the correlated family's Bayesian
agents get the env's model (kernel, eta, sigma). Learned policies play as shipped, after their weights' SHA-256 is
checked against the set. The engine plays ``play_compiled`` where the agent has a compiled rollout, else
``play_vector``.

The cells are the engine's, under ``OUT/cells/f{f}-s{s}-i{i}``, saved as they finish: an interrupted scoring resumes
where it stopped, and a cell made by other agent code (or other weights) is recomputed, the engine saying which
(``bandit_gym.provenance``). Then it writes, under ``OUT``:

- ``instance_means.csv``: every agent's mean loss and error per instance (the m_a,i of the protocol);
- ``means.csv``: every agent's family mean M_a and per-setting means;
- ``tests.csv``: each learned policy against the family's best paper agent B and against Uniform, over instances
  (family and per setting): mean difference, paired t, two-sided p, ratio with its 95% Fieller interval, the one-sided
  p-values of "within 10%" and "more than 10% behind";
- ``goals.csv``: the three goals decided by the protocol's rules, with the tests they rest on;
- ``summary.md``: the headline (each policy against B and Uniform on the family mean) and the goals;
- ``meta.json``: commit, package and library versions, the time of the call.

    python scripts/rl_heldout2.py --seed 7 --out /tmp/dev.json       # a development set (same laws, not held out)
    python scripts/rl_heldout2_score.py --set /tmp/dev.json --out /tmp/dev-scores --instances 2
    python scripts/rl_heldout2_score.py                               # the held-out set, once
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pandas as pd
from scipy import stats

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
from rl_heldout2 import OUT as SET  # noqa: E402
from rl_heldout2 import instance_kwargs, sha256  # noqa: E402

OUT = SET.parent / "scores-engine"  # the first scoring (commit 6f52ef3, its own play loop) is in scores/
LEVEL = 0.05
MARGIN = 1.1  # "within 10%": lambda = 1.1
SEEDS = 3  # shipped seeds per learned problem


# ------------------------------------------------------------------------------------------------ the agents
def entries(family: dict[str, Any], setting: dict[str, Any], uniform: dict[str, Any]) -> list[dict[str, Any]]:
    """The agents scored on a setting, each with its ``kind``: paper, uniform or learned."""
    paper = [{**a, "kind": "paper"} for a in setting["agents"]]
    learned = [{**a, "kind": "learned", "oracle": [], "model_from_env": False} for a in family["learned"]]
    return [*paper, {**uniform, "kind": "uniform", "oracle": [], "model_from_env": False}, *learned]


def commit() -> str:
    return subprocess.run(["git", "describe", "--always", "--dirty", "--abbrev=40"], cwd=ROOT, capture_output=True,
                          text=True, check=True).stdout.strip()


def model_of(setting: dict[str, Any], instance: dict[str, Any]) -> dict[str, Any]:
    """The env's model (kernel matrix, eta, sigma) of a correlated setting, for the agents the protocol gives it."""
    from bandit_gym.envs._base import engine_of

    env = gym.make(setting["env_id"], **instance_kwargs(setting, instance))
    try:
        engine: Any = engine_of(env)
        return {"kernel": np.asarray(engine.kernel).tolist(), "eta": float(engine.eta), "sigma": float(engine.sigma)}
    finally:
        env.close()


def check_weights(data: dict[str, Any]) -> None:
    """Every learned policy's shipped weights are those the set fixed (their SHA-256), before anything is played."""
    from bandit_gym.rl.armwise_ppo import shipped_path

    for family in data["families"]:
        for entry in family["learned"]:
            found = sha256(shipped_path(entry["params"]["problem"], entry["params"]["seed"]))
            if found != entry["weights_sha256"]:
                raise SystemExit(f"error: {entry['label']}: the shipped weights' SHA-256 is {found}, the set fixed "
                                 f"{entry['weights_sha256']}")


def instance_spec(f: int, s: int, i: int, data: dict[str, Any]) -> Any:
    """Instance i of setting s of family f as an experiment of the engine: every agent of the setting on the
    instance's R runs (``seed = 1000 * score_seed + i``, one chunk; common random numbers where the env takes
    them), the oracle parameters filled by the engine from the instance's true means, the model agents given
    the env's model."""
    from bandit_gym.experiments import AgentSpec, ExperimentSpec
    from bandit_gym.registration import family_of_env

    family = data["families"][f]
    setting = family["settings"][s]
    instance = setting["instances"][i]
    kwargs = instance_kwargs(setting, instance)
    argument = "horizon" if str(family_of_env(setting["env_id"])) == "threshold" else "budget"
    budget = kwargs.pop(argument)
    listed = entries(family, setting, data["uniform"])
    model = model_of(setting, instance) if any(entry["model_from_env"] for entry in listed) else {}
    agents = tuple(AgentSpec(entry["name"], {**(model if entry["model_from_env"] else {}), **entry["params"]},
                             entry["label"]) for entry in listed)
    runs = setting["runs_per_instance"]
    return ExperimentSpec(env=setting["env_id"], agents=agents, budgets=(budget,), runs=runs,
                          seed=1000 * setting["score_seed"] + i, env_kwargs=kwargs, chunk=runs,
                          name=f"f{f}-s{s}-i{i}")


def score_all(data: dict[str, Any], out: Path, jobs: int, instances: int) -> dict[tuple, dict]:
    """Every instance's experiment through the engine (``run_experiments``, ``jobs`` workers): cells stored under
    ``OUT/cells/f{f}-s{s}-i{i}`` as they finish (an interrupted scoring resumes; a cell made by other agent code is
    recomputed, the engine says which), then per (family, setting, agent) ``regret`` and ``error`` of shape
    (I, R); an agent whose cells failed is reported as failed, never dropped."""
    from bandit_gym.experiments import ExperimentError, ExperimentResult, run_experiments

    keys = [(f, s, i) for f, family in enumerate(data["families"]) for s, setting in enumerate(family["settings"])
            for i in range(min(instances, len(setting["instances"])))]
    specs = [instance_spec(f, s, i, data) for f, s, i in keys]
    folders = [out / "cells" / spec.name for spec in specs]
    failure = ""
    try:
        results: list[Any] = run_experiments(specs, folders, jobs=jobs)
    except ExperimentError as error:  # the other cells completed and are stored
        failure = str(error)
        results = []
        for folder in folders:
            try:
                results.append(ExperimentResult.load(folder))
            except ValueError:
                results.append(None)
    cells: dict[tuple, dict] = {}
    for (f, s, _), spec, result in zip(keys, specs, results, strict=True):
        metric = "regret" if "regret" in spec.metrics else "aggregate_regret"  # the env's loss, as the protocol
        for agent in spec.agents:
            cell = cells.setdefault((f, s, agent.display), {"regret": [], "error": []})
            if result is None or "failed" in cell:
                cell.clear()
                cell.update({"failed": failure.splitlines()[0] if failure else "not played"})
                continue
            regret = result.runs[(agent.display, metric)][:, 0]
            error = result.runs.get((agent.display, "error"))
            cell["regret"].append(regret)
            cell["error"].append(np.full(regret.shape, np.nan) if error is None else error[:, 0])
    for cell in cells.values():
        if "failed" not in cell:
            cell["regret"], cell["error"] = np.stack(cell["regret"]), np.stack(cell["error"])
    return cells


# ------------------------------------------------------------------------------------------------ statistics
def paired(policy: np.ndarray, other: np.ndarray, factor: float = 1.0) -> tuple[float, float, float]:
    """The paired t-test over instances of ``d_i = policy_i - factor * other_i``: (mean, t, two-sided p)."""
    d = policy - factor * other
    n = len(d)
    sd = d.std(ddof=1)
    if sd == 0:  # every instance the same difference
        return float(d.mean()), 0.0 if d.mean() == 0 else math.copysign(math.inf, d.mean()), float(d.mean() == 0)
    t = d.mean() / (sd / math.sqrt(n))
    return float(d.mean()), float(t), float(2 * stats.t.sf(abs(t), n - 1))


def fieller(policy: np.ndarray, other: np.ndarray, level: float = LEVEL) -> tuple[float, float]:
    """The 95% Fieller interval of mean(policy) / mean(other), paired: the factors lambda that the two-sided paired
    t-test of ``policy - lambda other`` does not reject at ``level`` (infinite ends when it is unbounded)."""
    n = len(policy)
    q = stats.t.ppf(1 - level / 2, n - 1) ** 2 / n
    cov = np.cov(policy, other, ddof=1)
    mp, mo = policy.mean(), other.mean()
    a = mo**2 - q * cov[1, 1]
    b = -2 * (mp * mo - q * cov[0, 1])
    c = mp**2 - q * cov[0, 0]
    disc = b * b - 4 * a * c
    if a <= 0 or disc < 0:
        return -math.inf, math.inf
    root = math.sqrt(disc)
    return float((-b - root) / (2 * a)), float((-b + root) / (2 * a))


def compare(policy: np.ndarray, other: np.ndarray) -> dict[str, Any]:
    """One row of ``tests.csv``: the policy's per-instance means against another agent's."""
    diff, t, p = paired(policy, other)
    low, high = fieller(policy, other)
    _, t_margin, _ = paired(policy, other, MARGIN)
    n = len(policy)
    within = float(stats.t.cdf(t_margin, n - 1))  # H1: mean(policy - 1.1 other) < 0
    behind = float(stats.t.sf(t_margin, n - 1))  # H1: mean(policy - 1.1 other) > 0
    verdict = "no difference" if not p < LEVEL else ("better" if diff < 0 else "worse")
    ratio = policy.mean() / other.mean() if other.mean() != 0 else math.inf
    return {"instances": n, "mean_policy": policy.mean(), "mean_other": other.mean(), "difference": diff, "t": t,
            "p": p, "verdict": verdict, "ratio": ratio, "fieller_low": low, "fieller_high": high,
            "p_within_10pct": within, "p_behind_10pct": behind}


def instance_table(data: dict[str, Any], cells: dict[tuple, dict]) -> pd.DataFrame:
    rows = []
    for f, family in enumerate(data["families"]):
        for s, setting in enumerate(family["settings"]):
            for entry in entries(family, setting, data["uniform"]):
                cell = cells[f, s, entry["label"]]
                if "failed" in cell:
                    rows.append({"family": family["family"], "setting": setting["label"], "instance": -1,
                                 "agent": entry["label"], "kind": entry["kind"], "failed": cell["failed"]})
                    continue
                for i, (regret, error) in enumerate(zip(cell["regret"], cell["error"], strict=True)):
                    rows.append({"family": family["family"], "setting": setting["label"], "instance": i,
                                 "agent": entry["label"], "kind": entry["kind"], "runs": len(regret),
                                 "loss": regret.mean(), "error": error.mean(), "failed": ""})
    return pd.DataFrame(rows)


def problem_of(label: str) -> str:
    return label.rsplit(" seed ", 1)[0]


def test_table(table: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, str]]:
    """Family means, the tests of every learned policy against B and Uniform, and each family's B."""
    done = table[table["failed"] == ""]
    means, tests, best = [], [], {}
    for family, rows in done.groupby("family", sort=False):
        wide = rows.pivot_table(index=["setting", "instance"], columns="agent", values="loss", sort=False)
        kinds = rows.drop_duplicates("agent").set_index("agent")["kind"]
        family_mean = wide.mean()
        for agent, value in family_mean.items():
            means.append({"family": family, "agent": agent, "kind": kinds[agent], "scope": "family",
                          "instances": int(wide[agent].notna().sum()), "mean_loss": value})
        for setting, sub in wide.groupby(level="setting", sort=False):
            for agent, value in sub.mean().items():
                means.append({"family": family, "agent": agent, "kind": kinds[agent], "scope": setting,
                              "instances": len(sub), "mean_loss": value})
        paper = [a for a in wide.columns if kinds[a] == "paper"]
        best[family] = str(family_mean[paper].idxmin())
        uniform = next(a for a in wide.columns if kinds[a] == "uniform")
        for policy in (a for a in wide.columns if kinds[a] == "learned"):
            for role, other in (("best paper agent", best[family]), ("Uniform", uniform)):
                scopes = [("family", wide), *wide.groupby(level="setting", sort=False)]
                for scope, sub in scopes:
                    tests.append({"family": family, "scope": scope, "policy": policy, "problem": problem_of(policy),
                                  "against": role, "other": other,
                                  **compare(sub[policy].to_numpy(), sub[other].to_numpy())})
    return pd.DataFrame(means), pd.DataFrame(tests), best


def decide_goals(tests: pd.DataFrame, families: list[dict[str, Any]]) -> pd.DataFrame:
    """The protocol's three goals, each decided once from the family-level tests."""
    t = tests[tests["scope"] == "family"]
    problems = {fam["family"]: fam["problems"] for fam in families}
    scored = sum(len(p) for p in problems.values())

    def rows(family: str, problem: str, against: str) -> pd.DataFrame:
        return t[(t["family"] == family) & (t["problem"] == problem) & (t["against"] == against)]

    def cite(selected: pd.DataFrame, column: str) -> str:
        return "; ".join(f"{r.policy}: ratio {r.ratio:.3f} [{r.fieller_low:.3f}, {r.fieller_high:.3f}], "
                         f"{column} = {getattr(r, column):.2g}" for r in selected.itertuples())

    def better(sel: pd.DataFrame, alpha: float) -> bool:  # every seed scored (a failed cell passes nothing)
        return len(sel) == SEEDS and bool(((sel["p"] < alpha) & (sel["difference"] < 0)).all())

    def worse(sel: pd.DataFrame) -> bool:
        return bool(((sel["p"] < LEVEL) & (sel["difference"] > 0)).any())

    goals = []
    # 1. significantly better than B, all three seeds, in one family (p < 0.05 / problems scored)
    alpha = LEVEL / scored
    sel = [(f, p, rows(f, p, "best paper agent")) for f in problems for p in problems[f]]
    if any(better(r, alpha) for _, _, r in sel):
        verdict = "supported"
    elif all(worse(r) for _, _, r in sel):
        verdict = "not supported"
    else:
        verdict = "inconclusive"
    goals.append({"goal": "a learned policy significantly better than the best paper agent, all 3 seeds, in one "
                          "family", "verdict": verdict, "rule": f"two-sided paired t over instances, p < {alpha:.4g}",
                  "tests": " | ".join(f"{p}: {cite(r, 'p')}" for _, p, r in sel)})
    # 2. within 10% of B in three families (p < 0.05 / P, one-sided, lambda = 1.1)
    passing, behind = [], []
    for f, ps in problems.items():
        alpha_f = LEVEL / len(ps)
        if any(len(r := rows(f, p, "best paper agent")) == SEEDS and bool((r["p_within_10pct"] < alpha_f).all())
               for p in ps):
            passing.append(f)
        if all(bool((rows(f, p, "best paper agent")["p_behind_10pct"] < LEVEL).any()) for p in ps):
            behind.append(f)
    # not supported as soon as three families can no longer pass: fewer than three scored, or behind
    verdict = ("supported" if len(passing) >= 3 else "not supported" if len(problems) - len(behind) < 3
               else "inconclusive")
    goals.append({"goal": "within 10% of the best paper agent in three families", "verdict": verdict,
                  "rule": "one-sided paired t of policy - 1.1 B over instances, p < 0.05 / P; families passing: "
                          f"{', '.join(passing) or 'none'}; families more than 10% behind: "
                          f"{', '.join(behind) or 'none'}",
                  "tests": " | ".join(f"{p}: {cite(rows(f, p, 'best paper agent'), 'p_within_10pct')}"
                                      for f in problems for p in problems[f])})
    # 3. better than Uniform with significance in every family (p < 0.05 / P)
    ok = {f: any(better(rows(f, p, "Uniform"), LEVEL / len(ps)) for p in ps) for f, ps in problems.items()}
    lost = {f: all(worse(rows(f, p, "Uniform")) for p in ps) for f, ps in problems.items()}
    verdict = "supported" if all(ok.values()) else "not supported" if any(lost.values()) else "inconclusive"
    goals.append({"goal": "better than Uniform with significance in every family", "verdict": verdict,
                  "rule": "two-sided paired t over instances, p < 0.05 / P; families passing: "
                          f"{', '.join(f for f, v in ok.items() if v) or 'none'}",
                  "tests": " | ".join(f"{p}: {cite(rows(f, p, 'Uniform'), 'p')}"
                                      for f in problems for p in problems[f])})
    return pd.DataFrame(goals)


# ------------------------------------------------------------------------------------------------- reports
def summary(data: dict[str, Any], means: pd.DataFrame, tests: pd.DataFrame, goals: pd.DataFrame,
            best: dict[str, str], failed: list[str], made_by: str) -> str:
    lines = ["# The second held-out set: scores", "",
             f"Made by `python scripts/rl_heldout2_score.py` at commit `{made_by}`, by the protocol of "
             "[the set's README](../README.md), once. Every instance weighs the same; tests are paired t-tests "
             "over instances; intervals are 95% Fieller intervals of the ratio of family means.", ""]
    if failed:
        lines += ["**Failed cells** (reported, not dropped): " + "; ".join(failed), ""]
    lines += ["## Headline: each shipped policy against its family's best paper agent and Uniform", "",
              "| family | best paper agent B (mean) | Uniform (mean) | policy | mean | ratio to B [95%] | vs B | "
              "ratio to Uniform [95%] | vs Uniform |", "|---|---|---|---|---|---|---|---|---|"]
    fam = tests[tests["scope"] == "family"]
    fmeans = means[means["scope"] == "family"].set_index(["family", "agent"])["mean_loss"]
    for family in best:
        sub = fam[fam["family"] == family]
        uniform = sub[sub["against"] == "Uniform"]["other"].iloc[0]
        for policy in sub["policy"].unique():
            b = sub[(sub["policy"] == policy) & (sub["against"] == "best paper agent")].iloc[0]
            u = sub[(sub["policy"] == policy) & (sub["against"] == "Uniform")].iloc[0]
            lines.append(f"| {family} | {best[family]} ({fmeans[family, best[family]]:.4g}) | "
                         f"{fmeans[family, uniform]:.4g} | {policy} | {b.mean_policy:.4g} | "
                         f"{b.ratio:.3f} [{b.fieller_low:.3f}, {b.fieller_high:.3f}] | {b.verdict} (p = {b.p:.2g}) | "
                         f"{u.ratio:.3f} [{u.fieller_low:.3f}, {u.fieller_high:.3f}] | {u.verdict} (p = {u.p:.2g}) |")
    lines += ["", "## The goals, decided once", "", "| goal | verdict | rule |", "|---|---|---|"]
    lines += [f"| {g.goal} | **{g.verdict}** | {g.rule} |" for g in goals.itertuples()]
    lines += ["", "The tests behind each goal are in `goals.csv`; every test, per family and per setting, in "
              "`tests.csv`; every agent's mean per instance in `instance_means.csv`.", "",
              "## Every agent's family mean", ""]
    for family in best:
        sub = means[(means["family"] == family) & (means["scope"] == "family")].sort_values("mean_loss")
        metric = next(f["metric"] for f in data["families"] if f["family"] == family)
        lines += [f"**{family}** ({metric}): " + ", ".join(f"{r.agent} {r.mean_loss:.4g}" for r in sub.itertuples()),
                  ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", type=Path, default=SET, help="the set (default: the committed held-out set)")
    parser.add_argument("--out", type=Path, default=None, help=f"results folder (default for the held-out set: {OUT})")
    parser.add_argument("--jobs", type=int, default=2, help="cells played at once (default 2)")
    parser.add_argument("--instances", type=int, default=None, help="the first N instances per setting (a "
                        "development set only)")
    args = parser.parse_args(argv)
    held_out = args.set.resolve() == SET.resolve()
    out = args.out or (OUT if held_out else None)
    if out is None:
        parser.error("--out is needed for a set other than the held-out one")
    if held_out and args.instances is not None:
        parser.error("--instances is for a development set: the held-out set is scored whole")
    if args.jobs < 1:
        parser.error(f"--jobs must be at least 1, got {args.jobs}")
    made_by = commit()
    if held_out and made_by.endswith("-dirty"):
        parser.error("the held-out set is scored from a clean checkout (the commit is recorded with the scores)")
    data = json.loads(args.set.read_text())
    start = time.perf_counter()
    check_weights(data)
    cells = score_all(data, out, args.jobs, args.instances or 10**9)
    table = instance_table(data, cells)
    failed = [f"{r.family} / {r.setting} / {r.agent}: {r.failed}" for r in table[table["failed"] != ""].itertuples()]
    means, tests, best = test_table(table)
    goals = decide_goals(tests, data["families"])
    table.to_csv(out / "instance_means.csv", index=False)
    means.to_csv(out / "means.csv", index=False)
    tests.to_csv(out / "tests.csv", index=False)
    goals.to_csv(out / "goals.csv", index=False)
    (out / "summary.md").write_text(summary(data, means, tests, goals, best, failed, made_by) + "\n")
    import torch

    import bandit_gym

    where = args.set.resolve()
    meta = {"commit": made_by, "set": str(where.relative_to(ROOT) if where.is_relative_to(ROOT) else where),
            "bandit_gym": bandit_gym.__version__, "numpy": np.__version__,
            "torch": torch.__version__, "gymnasium": gym.__version__, "python": platform.python_version(),
            "seconds_this_call": time.perf_counter() - start}
    (out / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")
    print((out / "summary.md").read_text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
