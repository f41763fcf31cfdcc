"""hoffman2014 §6: BayesGap against the Bayesian optimisation baselines and the correlation-blind best-arm
algorithms, in two studies.

(a) Figure 2 analogue, on a **synthetic** stand-in for the paper's traffic data
    (``CorrelatedBestArm-TrafficSynthetic-v0``: K = 357, eta = 20, sigma^2 = 5% of the prior variance; the
    sensor data is not available offline): probability of error against the budget T, 840 runs per point (the
    paper's number of held-out signals), every agent given the env's generating model. UCB-E and UGap need
    T >= K and run only there.
(b) Figures 3 and 4 analogues, model selection on scikit-learn's diabetes data (``ModelSelection-v0``; the
    paper's Wine Quality data is not available offline): the true RMSE of the recommended model over 100 runs
    at T = 10 (a boxplot), and the arms pulled at each round and the recommendations of BayesGap and EI over 100
    runs at T = 40. The agents' model is the one the env fits to its reward table (the paper gives none).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from bandit_gym.experiments import AgentSpec, ExperimentSpec
from bandit_gym.instances import best_arm_complexity, gap_complexity
from bandit_gym.registration import TRAFFIC_SIGMA
from bandit_gym.reproduce._common import exact_error_intervals, markdown_table, run_specs

TRAFFIC_ENV = "CorrelatedBestArm-TrafficSynthetic-v0"
TRAFFIC_MODEL: dict[str, Any] = {"kernel": "traffic-synthetic", "eta": 20.0, "sigma": TRAFFIC_SIGMA}
TRAFFIC_ARMS = 357
#: the paper's figure is at T = 400 only; the grid adds T < K (where only the Bayesian agents apply) and 2 T
TRAFFIC_BUDGETS = (100, 200, 400, 800)
#: BayesGap's beta times 4 (ours): the best of {1, 2, 4, 8} in a 200-run look at T = 400, labelled as such
BETA_SCALE = 4.0
BAYESIAN = (("BayesGap", "BayesGap"), ("ThompsonSampling", "Thompson"), ("BayesUCB", "BayesUCB"),
            ("GPUCB", "GP-UCB"), ("EI", "EI"), ("PI", "PI"))
MODEL_SELECTION_ENV = "ModelSelection-v0"
MODEL_SELECTION_BUDGETS = (10, 40)
#: the agents whose pulls Figure 4 shows
ALLOCATION_AGENTS = ("BayesGap", "EI")
QUICK: dict[str, Any] = {"budgets": (100, 400), "runs": 30, "model_runs": 20}


def prior_hardness(draws: int = 4000, seed: int = 0) -> dict[str, float]:
    """The medians, over means drawn from the synthetic traffic prior, of H_epsilon (gabillon2012, with the
    sub-Gaussian range b = 2 sigma) and of H_1 (Audibert et al.): UGap's and UCB-E's complexity parameters. The
    instance changes every run, so no oracle value exists; these are known from the model, like the Bayesian
    agents' prior."""
    from bandit_gym.kernels import GaussianProcessMeans, traffic_synthetic

    means = GaussianProcessMeans(traffic_synthetic(), TRAFFIC_MODEL["eta"])(np.random.default_rng(seed), draws)
    return {"H": float(np.median([gap_complexity(mu, 1, 0.0, b=2 * TRAFFIC_SIGMA) for mu in means])),
            "H1": float(np.median([best_arm_complexity(mu) for mu in means]))}


def traffic_agents() -> tuple[tuple[AgentSpec, ...], tuple[AgentSpec, ...]]:
    """The Bayesian agents (every budget) and the correlation-blind ones (T >= K): UGap is UGapEb with
    ``a = (T - K) / (4 H)`` and widths ``b sqrt(a / T_k)``, ``b = 2 sigma``; UCB-E has ``a = (25/36)(T - K) / H1``
    (ALGORITHMS.md §E.5 (1)-(2), H and H1 from :func:`prior_hardness`)."""
    bayesian = [AgentSpec(name, TRAFFIC_MODEL, label) for name, label in BAYESIAN]
    bayesian.insert(1, AgentSpec("BayesGap", {**TRAFFIC_MODEL, "beta_scale": BETA_SCALE}, "BayesGap (beta x 4, ours)"))
    hardness = prior_hardness()
    blind = (AgentSpec("UGapEb", {"H": hardness["H"], "b": 2 * TRAFFIC_SIGMA}, "UGap"),
             AgentSpec("UCBEBestArm", {"H1": hardness["H1"]}, "UCB-E"))
    return tuple(bayesian), blind


def hoffman2014_specs(runs: int = 840, quick: bool = False, seed: int = 2014) -> list[ExperimentSpec]:
    """(a)'s experiments: the Bayesian agents at every budget, the correlation-blind ones where T >= K. Common
    random numbers (the default): run r of every agent plays the same means and the same reward streams."""
    budgets = QUICK["budgets"] if quick else TRAFFIC_BUDGETS
    bayesian, blind = traffic_agents()
    chunk = min(runs, 210)  # a covariance (K x K floats, 1 MB) per copy: 210 copies per cell
    return [ExperimentSpec(env=TRAFFIC_ENV, agents=bayesian, budgets=tuple(budgets), runs=runs, seed=seed,
                           chunk=chunk, name="traffic (synthetic) Bayesian"),
            ExperimentSpec(env=TRAFFIC_ENV, agents=blind, budgets=tuple(b for b in budgets if b >= TRAFFIC_ARMS),
                           runs=runs, seed=seed, chunk=chunk, name="traffic (synthetic) blind")]


def _describe(summary: Any, spec: ExperimentSpec) -> Any:
    return exact_error_intervals(summary.assign(k="SYNTHETIC traffic-like instance, K = 357"))


def error_markdown(summary: Any, runs: int) -> str:
    rows = summary[summary["metric"] == "error"]
    cells = rows.assign(text=[f"{m:.3f} [{lo:.3f}, {hi:.3f}]" for m, lo, hi in
                              zip(rows["mean"], rows["ci_low"], rows["ci_high"], strict=True)])
    lines = [f"Probability of error P(answer is not the best arm) over {runs} runs (95% Clopper-Pearson interval),",
             "synthetic traffic instance (K = 357). UGap and UCB-E need T >= K.", ""]
    pivot = cells.pivot_table(index="agent", columns="budget", values="text", aggfunc="first", sort=False)
    return "\n".join(lines + markdown_table(pivot.fillna("n/a (T < K)"), lambda b: f"T={b}"))


# ------------------------------------------------------------------------------------------- model selection
def play_recorded(agent: Any, runs: int, budget: int, seed: int) -> dict[str, np.ndarray]:
    """``runs`` episodes of ``ModelSelection-v0`` at once (a vector env), recording the arm pulled at every
    round ``(runs, T)`` and the final recommendation ``(runs,)``."""
    import gymnasium as gym

    venv = gym.make_vec(MODEL_SELECTION_ENV, num_envs=runs, vectorization_mode="vector_entry_point", budget=budget,
                        common_random_numbers=True)
    obs, _ = venv.reset(seed=seed)
    agent.reset(seed=seed + 1)
    pulls = np.zeros((runs, budget), dtype=np.int64)
    for t in range(budget + 1):
        action = agent.act(obs)
        if t < budget:
            pulls[:, t] = action[:, 0]
        else:
            answer = action[:, 1:].argmax(axis=1)
        obs, *_ = venv.step(action)
    venv.close()
    return {"pulls": pulls, "answer": answer}


def model_selection_runs(runs: int, seed: int = 2014) -> tuple[Any, Any]:
    """Every Bayesian agent at T = 10 and 40: one row per run (recommended model, its true RMSE) and one row
    per run and round (the model trained)."""
    import pandas as pd

    from bandit_gym.agents import AGENTS
    from bandit_gym.envs.model_selection import empirical_bayes_model
    from bandit_gym.model_selection import MODELS, load_table

    rmse = -load_table().mean(axis=1)
    model = empirical_bayes_model()
    records, allocations = [], []
    for budget in MODEL_SELECTION_BUDGETS:
        for name, label in BAYESIAN:
            played = play_recorded(AGENTS[name](**model), runs, budget, seed)
            answer = played["answer"]
            records.append(pd.DataFrame({"agent": label, "budget": budget, "run": np.arange(runs), "arm": answer,
                                         "model": [MODELS[a].label for a in answer], "rmse": rmse[answer],
                                         "regret": rmse[answer] - rmse.min()}))
            run, rnd = np.indices(played["pulls"].shape)
            allocations.append(pd.DataFrame({"agent": label, "budget": budget, "run": run.ravel(),
                                             "round": rnd.ravel() + 1, "arm": played["pulls"].ravel()}))
    return pd.concat(records, ignore_index=True), pd.concat(allocations, ignore_index=True)


def model_selection_markdown(records: Any) -> str:
    from bandit_gym.model_selection import MODELS, load_table

    rmse = -load_table().mean(axis=1)
    best = int(np.argmin(rmse))
    table = records.groupby(["budget", "agent"], sort=False).agg(
        mean=("rmse", "mean"), se=("rmse", lambda x: x.std(ddof=1) / np.sqrt(len(x))), median=("rmse", "median"),
        best=("arm", lambda x: float(np.mean(x == best))), runs=("rmse", "size"))
    lines = [f"True RMSE (table mean) of the recommended model on the diabetes data; the best model is "
             f"{MODELS[best].label} (RMSE {rmse[best]:.2f}), the median model {np.median(rmse):.2f}, the worst "
             f"{rmse.max():.2f}.", "",
             "| T | agent | mean RMSE (SE) | median | P(best model) | runs |", "|---|---|---|---|---|---|"]
    for (budget, agent), row in table.iterrows():
        lines.append(f"| {budget} | {agent} | {row['mean']:.2f} ({row['se']:.2f}) | {row['median']:.2f} | "
                     f"{row['best']:.2f} | {int(row['runs'])} |")
    return "\n".join([*lines, ""])


def reproduce_hoffman2014(
    out: str | Path, runs: int | None = None, quick: bool = False, jobs: int = 2, backend: str | None = None,
    progress: bool = True,
) -> dict[str, Any]:
    """Run both studies; write ``results.csv`` and ``traffic.md`` and ``traffic.png`` (a), and
    ``model_selection_runs.csv``, ``model_selection_allocations.csv``, ``model_selection.md``,
    ``model_selection_T10.png`` and ``allocations_T40.png`` (b). ``runs`` sets (a)'s runs (840; 30 quick); (b)
    runs 100 (20 quick)."""
    from bandit_gym.plotting import plot_allocations, plot_failure_against_budget, plot_rmse_boxplot

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    runs = runs if runs is not None else (QUICK["runs"] if quick else 840)
    model_runs = QUICK["model_runs"] if quick else 100
    start = time.perf_counter()
    summary = run_specs(hoffman2014_specs(runs=runs, quick=quick), out, _describe, jobs, backend, progress)
    summary.to_csv(out / "results.csv", index=False)
    (out / "traffic.md").write_text(error_markdown(summary, runs))
    traffic = plot_failure_against_budget(summary, out / "traffic.png", title=f"hoffman2014 Fig. 2 analogue, "
                                          f"{runs} runs per point",
                                          xlabel="budget T", ylabel="probability of error", panel="{}")
    records, allocations = model_selection_runs(model_runs)
    records.to_csv(out / "model_selection_runs.csv", index=False)
    allocations.to_csv(out / "model_selection_allocations.csv", index=False)
    (out / "model_selection.md").write_text(model_selection_markdown(records))
    boxplot = plot_rmse_boxplot(records[records["budget"] == 10], out / "model_selection_T10.png",
                                title=f"hoffman2014 Figure 3 analogue: diabetes data, T = 10, {model_runs} runs")
    histograms = plot_allocations(records, allocations, 40, ALLOCATION_AGENTS, out / "allocations_T40.png",
                                  title=f"hoffman2014 Figure 4 analogue: diabetes data, T = 40, {model_runs} runs")
    files = [out / name for name in ("results.csv", "traffic.md", "model_selection_runs.csv",
                                     "model_selection_allocations.csv", "model_selection.md")]
    return {"summary": summary, "records": records, "figures": [traffic, boxplot, histograms],
            "seconds": time.perf_counter() - start, "files": [*files, traffic, boxplot, histograms]}
