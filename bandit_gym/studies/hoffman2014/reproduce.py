r"""hoffman2014 §6: BayesGap against the Bayesian optimisation baselines and the correlation-blind best-arm
algorithms, in two studies.

(a) Figure 2 analogue on **synthetic** traffic speeds (the paper's sensor data is not available offline), built
    by the paper's recipe (``CorrelatedBestArm-TrafficSynthetic-v1``): 357 sensors, 2520 simulated speed
    profiles (``bandit_gym.covariances.traffic_speeds``); the agents' model comes from the 1680 historical ones
    (\(G\) their empirical covariance, \(\sigma^2 = 5\%\) of its mean diagonal, \(\eta = 20\), prior mean 0) and
    each of the 840 held-out profiles is the true mean vector of one run, each used once. Probability of error
    against the budget \(T\). Every Bayesian agent has that model; UGap's \(H\) and UCB-E's \(H_1\) are medians over
    the historical profiles (data the learner has). BayesGap runs with eq. 9's \(\beta\) (the paper's) and, beside
    it, with \(\beta\) times a scale chosen by ``tune_beta_scale`` on runs whose means are historical profiles
    (never on the evaluation runs). UCB-E and UGap need \(T \ge K\) and run only there. A second, smaller study labelled
    WELL-SPECIFIED plays ``CorrelatedBestArm-TrafficSynthetic-v0``, whose means are draws from the agents' own
    prior, at \(T = 100\) and 400.
(b) Figures 3 and 4 analogues, model selection on scikit-learn's diabetes data (``ModelSelection-v0``; the
    paper's Wine Quality data is not available offline): the true RMSE of the recommended model over 100 runs
    at \(T = 10\) (a boxplot), and the arms pulled at each round and the recommendations of BayesGap and EI over
    100 runs at \(T = 40\). The agents' prior is an ORACLE prior: the env fits it to its reward table, whose means are
    the truth the runs are scored against (the paper gives none).
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bandit_gym.experiments import AgentSpec, ExperimentResult, ExperimentSpec, run_experiments
from bandit_gym.plotting import _finish, _grid
from bandit_gym.registration import TRAFFIC_SIGMA, TRAFFIC_SPEEDS_SIGMA
from bandit_gym.studies._figures import plot_failure_against_budget
from bandit_gym.studies._report import Report, with_agents

# the studies' modules: their public names stay importable from here (``from ...hoffman2014.reproduce import X``)
from bandit_gym.studies.hoffman2014.model_selection import (  # noqa: F401
    ALLOCATION_AGENTS,
    MODEL_SELECTION_BUDGETS,
    MODEL_SELECTION_ENV,
    model_selection_markdown,
    model_selection_runs,
    play_recorded,
)
from bandit_gym.studies.hoffman2014.traffic import (  # noqa: F401
    BAYESIAN,
    BETA_BUDGET,
    BETA_SCALES,
    BLOCK,
    HEADLINE,
    TRAFFIC_ARMS,
    TRAFFIC_BUDGETS,
    TRAFFIC_ENV,
    TRAFFIC_MODEL,
    TRAFFIC_RUNS,
    TUNING_BUDGET,
    TUNING_RUNS,
    TUNING_SEED,
    WELL_SPECIFIED,
    WELL_SPECIFIED_BUDGETS,
    WELL_SPECIFIED_ENV,
    WELL_SPECIFIED_MODEL,
    WELL_SPECIFIED_RUNS,
    WELL_SPECIFIED_SEED,
    _summary,
    bayesgap_final_beta,
    error_markdown,
    hardness_medians,
    historical_hardness,
    instances_table,
    merge_blocks,
    per_run_table,
    prior_hardness,
    run_blocks,
    theorem1_bound,
    traffic_agents,
    traffic_data_summary,
    traffic_markdown,
    tuned_label,
)


@dataclasses.dataclass(frozen=True)
class Quick:
    r"""The sizes of ``--quick``: the traffic study's budgets and runs, the model-selection runs, the runs of the
    \(\beta\) tuning, and the well-specified study's runs and budgets."""

    budgets: tuple[int, ...]
    runs: int
    model_runs: int
    tuning_runs: int
    well_specified_runs: int
    well_specified_budgets: tuple[int, ...]


QUICK = Quick(budgets=(100, 400), runs=30, model_runs=20, tuning_runs=30, well_specified_runs=30,
              well_specified_budgets=(50, 100))


# ------------------------------------------------------------------------------------------- traffic: specs
def hoffman2014_specs(runs: int = TRAFFIC_RUNS, quick: bool = False, seed: int = 2014,
                      beta_scale: float | None = None) -> list[ExperimentSpec]:
    r"""The headline study's experiments (v1), block by block (``run_blocks``): per block a Bayesian spec
    (every budget) and a correlation-blind one (the budgets \(T \ge K\)). Block \(b\), of runs \(s\) .. \(e\), has
    env kwarg ``means="traffic-held-out@s"``: run \(r\) plays held-out profile
    ``traffic_run_order("held-out")[r % 840]``, so 840 runs play each held-out profile once (as the paper). Block
    \(b\)'s seed is ``seed + b``; within it, common random numbers: run \(r\) of every agent plays the same means
    and the same reward streams. With ``beta_scale`` (from ``tune_beta_scale``), BayesGap also runs with \(\beta\)
    times it."""
    budgets = tuple(QUICK.budgets if quick else TRAFFIC_BUDGETS)
    bayesian, blind = traffic_agents(TRAFFIC_MODEL, historical_hardness(), TRAFFIC_SPEEDS_SIGMA, beta_scale)
    blind_budgets = tuple(b for b in budgets if b >= TRAFFIC_ARMS)
    specs = []
    for b, block in enumerate(run_blocks(runs)):
        kwargs = {"means": f"traffic-held-out@{block.start}"}
        specs.append(ExperimentSpec(env=TRAFFIC_ENV, agents=bayesian, budgets=budgets, runs=len(block), seed=seed + b,
                                    env_kwargs=kwargs, chunk=len(block), name=f"{HEADLINE} Bayesian block {b}"))
        if blind_budgets:
            specs.append(ExperimentSpec(env=TRAFFIC_ENV, agents=blind, budgets=blind_budgets, runs=len(block),
                                        seed=seed + b, env_kwargs=kwargs, chunk=len(block),
                                        name=f"{HEADLINE} blind block {b}"))
    return specs


def well_specified_specs(runs: int = WELL_SPECIFIED_RUNS, seed: int = WELL_SPECIFIED_SEED,
                         budgets: Sequence[int] = WELL_SPECIFIED_BUDGETS) -> list[ExperimentSpec]:
    r"""The WELL-SPECIFIED study (v0: means drawn from the agents' own prior) at ``budgets``: the Bayesian agents
    with v0's generating model (BayesGap with eq. 9's \(\beta\) only) and, where \(T \ge K\), UGap and UCB-E with
    ``prior_hardness``."""
    bayesian, blind = traffic_agents(WELL_SPECIFIED_MODEL, prior_hardness(), TRAFFIC_SIGMA)
    chunk = min(runs, BLOCK)
    specs = [ExperimentSpec(env=WELL_SPECIFIED_ENV, agents=bayesian, budgets=tuple(budgets), runs=runs, seed=seed,
                            chunk=chunk, name=f"{WELL_SPECIFIED} Bayesian")]
    blind_budgets = tuple(b for b in budgets if b >= TRAFFIC_ARMS)
    if blind_budgets:
        specs.append(ExperimentSpec(env=WELL_SPECIFIED_ENV, agents=blind, budgets=blind_budgets, runs=runs,
                                    seed=seed, chunk=chunk, name=f"{WELL_SPECIFIED} blind"))
    return specs


def _with_bayesian(specs: Sequence[ExperimentSpec], agents: Sequence[AgentSpec]) -> list[ExperimentSpec]:
    r"""``specs`` with ``agents`` added (``with_agents``) to the Bayesian ones, which run at every budget (the
    correlation-blind ones run at \(T \ge K\) only: added there too, the agents' rows would repeat)."""
    return [with_agents([spec], agents)[0] if " Bayesian" in spec.name else spec for spec in specs]


def _folder(out: Path | None, spec: ExperimentSpec) -> Path | None:
    return None if out is None else out / re.sub(r"[^A-Za-z0-9.]+", "-", spec.name).strip("-")


def _run(specs: Sequence[ExperimentSpec], out: Path | None, jobs: int, backend: str | None,
         progress: bool) -> list[ExperimentResult]:
    """The specs through one pool of workers, each spec's cells under ``out/<spec name>`` (resumable)."""
    return run_experiments(specs, [_folder(out, spec) for spec in specs], jobs=jobs, backend=backend,
                           progress=progress)


# ------------------------------------------------------------------------------------------- traffic: tuning
def tuning_spec(runs: int = TUNING_RUNS, budget: int = TUNING_BUDGET, seed: int = TUNING_SEED) -> ExperimentSpec:
    r"""BayesGap with \(\beta\) times each of ``BETA_SCALES`` on ``CorrelatedBestArm-TrafficSynthetic-v1`` with
    means drawn uniformly from the HISTORICAL profiles (``means="traffic-historical"``): the data the agents'
    model is built from, not the held-out profiles the study reports on. Common random numbers: run \(r\) of every
    scale plays the same profile and reward streams."""
    agents = tuple(AgentSpec("BayesGap", {**TRAFFIC_MODEL, "beta_scale": s}, f"BayesGap (beta x {s:g})")
                   for s in BETA_SCALES)
    return ExperimentSpec(env=TRAFFIC_ENV, agents=agents, budgets=(budget,), runs=runs, seed=seed,
                          env_kwargs={"means": "traffic-historical"}, chunk=min(runs, BLOCK),
                          name="tuning on historical profiles")


def tune_beta_scale(out: str | Path | None = None, runs: int = TUNING_RUNS, budget: int = TUNING_BUDGET,
                    seed: int = TUNING_SEED, jobs: int = 1, backend: str | None = None,
                    progress: bool = False) -> tuple[Any, float]:
    r"""Choose BayesGap's \(\beta\) scale by code, on data that is not reported: play ``tuning_spec`` and pick
    the scale with the fewest errors (ties: the smaller scale, the closer to eq. 9). Returns the table (one row
    per scale: errors, runs, error rate and its 95% Clopper-Pearson interval, ``chosen``) and the scale.
    Deterministic (the experiment engine's seeds)."""
    import pandas as pd
    from scipy import stats

    spec = tuning_spec(runs, budget, seed)
    result = _run([spec], None if out is None else Path(out), jobs, backend, progress)[0]
    rows = []
    for scale, agent in zip(BETA_SCALES, spec.agents, strict=True):
        errors = int(result.runs[(agent.display, "error")][:, 0].sum().round())
        ci = stats.binomtest(errors, runs).proportion_ci(method="exact")
        rows.append({"beta_scale": scale, "budget": budget, "runs": runs, "errors": errors, "error": errors / runs,
                     "ci_low": ci.low, "ci_high": ci.high, "means": "historical profiles (uniform draws)",
                     "seed": seed})
    table = pd.DataFrame(rows)
    chosen = float(table.sort_values(["errors", "beta_scale"]).iloc[0]["beta_scale"])
    table["chosen"] = table["beta_scale"] == chosen
    return table, chosen


# ------------------------------------------------------------------------------------------- both studies
def _plot_order(summary: Any) -> Any:
    """The summary with the tuned BayesGap last, so that both panels of ``traffic.png`` give an agent one
    colour (the second study has no tuned BayesGap)."""
    import pandas as pd

    tuned = summary["agent"].str.contains("tuned", regex=False)
    return pd.concat([summary[~tuned], summary[tuned]], ignore_index=True)


def _traffic_instances(out: Path, runs: int, blocks: dict[str, list[ExperimentResult]],
                       merged: dict[str, ExperimentResult], jobs: int, backend: str | None) -> Any:
    r"""``traffic_instances.csv``: the headline study's runs (``instances_table``), with BayesGap's final \(\beta\)
    replayed when the study reached ``BETA_BUDGET``."""
    beta = None
    if BETA_BUDGET in merged["Bayesian"].spec.budgets:
        beta = bayesgap_final_beta([r.spec for r in blocks["Bayesian"]], merged["Bayesian"], jobs=jobs,
                                   backend=backend)
    instances = instances_table(runs, beta)
    instances.to_csv(out / "traffic_instances.csv", index=False)
    return instances


def _traffic_study(out: Path, runs: int, quick: bool, jobs: int, backend: str | None, progress: bool,
                   agents: Sequence[AgentSpec]) -> tuple[Any, Path, dict[str, Any]]:
    r"""Study (a): the \(\beta\) tuning (``tuning.csv``), the headline and WELL-SPECIFIED studies (``results.csv``,
    ``traffic_runs.csv``, ``traffic_instances.csv``, ``traffic_data.csv``, ``traffic.md``, ``traffic.png``).
    Returns the summary of both studies, the figure and the report's extras (tuning, \(\beta\) scale, instances)."""
    import pandas as pd

    _with_bayesian(hoffman2014_specs(runs=runs, quick=quick), agents)  # a repeated label: refused before the tuning
    tuning, scale = tune_beta_scale(out, runs=QUICK.tuning_runs if quick else TUNING_RUNS, jobs=jobs,
                                    backend=backend, progress=progress)
    tuning.to_csv(out / "tuning.csv", index=False)
    headline = _with_bayesian(hoffman2014_specs(runs=runs, quick=quick, beta_scale=scale), agents)
    second = _with_bayesian(well_specified_specs(QUICK.well_specified_runs, budgets=QUICK.well_specified_budgets)
                            if quick else well_specified_specs(), agents)
    results = _run([*headline, *second], out, jobs, backend, progress)
    blocks = {kind: [r for r in results[:len(headline)] if f" {kind} block " in r.spec.name]
              for kind in ("Bayesian", "blind")}
    merged = {kind: merge_blocks(parts, f"{HEADLINE} {kind}") for kind, parts in blocks.items() if parts}
    panel = f"v1: held-out profiles as means, {runs} runs"
    second_panel = f"v0: means from the prior, {second[0].runs} runs"
    summary = pd.concat([*(_summary(result, HEADLINE, panel) for result in merged.values()),
                         *(_summary(result, WELL_SPECIFIED, second_panel) for result in results[len(headline):])],
                        ignore_index=True)
    summary.to_csv(out / "results.csv", index=False)
    order = instances_table(runs, None)["profile"].to_numpy()
    pd.concat([*(per_run_table(result, HEADLINE, order) for result in merged.values()),
               *(per_run_table(result, WELL_SPECIFIED, None) for result in results[len(headline):])],
              ignore_index=True).to_csv(out / "traffic_runs.csv", index=False)
    instances = _traffic_instances(out, runs, blocks, merged, jobs, backend)
    data = traffic_data_summary()
    pd.DataFrame([data]).to_csv(out / "traffic_data.csv", index=False)
    (out / "traffic.md").write_text(traffic_markdown(summary, data, tuning, scale, instances))
    traffic = plot_failure_against_budget(_plot_order(summary), out / "traffic.png",
                                          title="hoffman2014 Fig. 2 analogue, SYNTHETIC traffic speeds",
                                          xlabel="budget T", ylabel="probability of error", panel="{}")
    return summary, traffic, {"tuning": tuning, "beta_scale": scale, "instances": instances}


def _model_selection_study(out: Path, model_runs: int) -> tuple[Any, Path, Path]:
    """Study (b): ``model_selection_runs.csv``, ``model_selection_allocations.csv``, ``model_selection.md``,
    ``model_selection_T10.png`` and ``allocations_T40.png``. Returns the per-run records and the two figures."""
    records, allocations = model_selection_runs(model_runs)
    records.to_csv(out / "model_selection_runs.csv", index=False)
    allocations.to_csv(out / "model_selection_allocations.csv", index=False)
    (out / "model_selection.md").write_text(model_selection_markdown(records))
    boxplot = plot_rmse_boxplot(records[records["budget"] == 10], out / "model_selection_T10.png",
                                title=f"hoffman2014 Figure 3 analogue: diabetes data, ORACLE prior, T = 10, "
                                      f"{model_runs} runs")
    histograms = plot_allocations(records, allocations, 40, ALLOCATION_AGENTS, out / "allocations_T40.png",
                                  title=f"hoffman2014 Figure 4 analogue: diabetes data, ORACLE prior, T = 40, "
                                        f"{model_runs} runs")
    return records, boxplot, histograms


def reproduce_hoffman2014(
    out: str | Path, runs: int | None = None, quick: bool = False, jobs: int = 2, backend: str | None = None,
    progress: bool = True, agents: Sequence[AgentSpec] = (),
) -> Report:
    r"""Run both studies. (a): tune BayesGap's \(\beta\) scale on historical profiles (``tuning.csv``), then the
    headline study on the held-out profiles and the WELL-SPECIFIED second study; write ``results.csv`` (both
    studies' summaries, with error counts), ``traffic_runs.csv`` (every run, agent and budget),
    ``traffic_instances.csv`` (every run's profile and BayesGap's final \(\beta\) at \(T = 400\)), ``traffic_data.csv``,
    ``traffic.md`` and ``traffic.png``. (b): ``model_selection_runs.csv``, ``model_selection_allocations.csv``,
    ``model_selection.md``, ``model_selection_T10.png`` and ``allocations_T40.png``. ``runs`` sets the headline
    study's runs (840, each held-out profile once; 30 quick); the tuning has 210 runs and the second study 210
    (30 each quick); (b) runs 100 (20 quick). ``agents`` are added to both traffic studies' Bayesian experiments
    (every budget, same runs), as rows of ``results.csv``, ``traffic_runs.csv``, ``traffic.md`` and curves of
    ``traffic.png``; not to the correlation-blind ones (\(T \ge K\)), the \(\beta\) tuning nor the model selection."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    runs = runs if runs is not None else (QUICK.runs if quick else TRAFFIC_RUNS)
    model_runs = QUICK.model_runs if quick else 100
    start = time.perf_counter()
    summary, traffic, extras = _traffic_study(out, runs, quick, jobs, backend, progress, agents)
    records, boxplot, histograms = _model_selection_study(out, model_runs)
    files = [out / name for name in ("results.csv", "tuning.csv", "traffic_runs.csv", "traffic_instances.csv",
                                     "traffic_data.csv", "traffic.md", "model_selection_runs.csv",
                                     "model_selection_allocations.csv", "model_selection.md")]
    return Report(summary=summary, figures=[traffic, boxplot, histograms], seconds=time.perf_counter() - start,
                  files=[*files, traffic, boxplot, histograms],
                  extras={**extras, "records": records})


# ----------------------------------------------------------------------------------------- figures
def plot_rmse_boxplot(records: Any, path: str | Path, title: str = "") -> Path:
    """hoffman2014 Figure 3: the true RMSE of the recommended model over the runs, one box per agent, with the
    best model's RMSE as a dashed line (lower is better)."""
    from bandit_gym.model_selection import load_table

    fig, axes = _grid(1, 1, width=7.0, height=4.4)
    ax = axes[0]
    agents = list(dict.fromkeys(records["agent"]))
    ax.boxplot([records.loc[records["agent"] == a, "rmse"] for a in agents], tick_labels=agents)
    ax.axhline(-load_table().mean(axis=1).max(), color="black", linestyle="--", linewidth=1, label="best model")
    ax.set(ylabel="true RMSE of the recommended model", xlabel="agent")
    ax.grid(alpha=0.3, axis="y")
    return _finish(fig, axes, path, title)


def plot_allocations(records: Any, allocations: Any, budget: int, agents: Any, path: str | Path,
                     title: str = "") -> Path:
    """hoffman2014 Figure 4, flattened: per agent, the models trained at each round over the runs (a heat map of
    round against model, families separated) and the recommended models (bars) with each model's true RMSE
    (black line, right axis)."""
    from matplotlib.colors import PowerNorm

    from bandit_gym.model_selection import FAMILIES, family_of_arms, load_table

    rmse = -load_table().mean(axis=1)
    k = rmse.size
    families = family_of_arms()
    starts = [int(np.flatnonzero(families == f)[0]) for f in range(len(FAMILIES))]
    fig, axes = _grid(2 * len(agents), 2, height=3.0)
    for row, agent in enumerate(agents):
        heat_ax, bar_ax = axes[2 * row], axes[2 * row + 1]
        pulls = allocations[(allocations["agent"] == agent) & (allocations["budget"] == budget)]
        counts = np.zeros((budget, k))
        np.add.at(counts, (pulls["round"].to_numpy() - 1, pulls["arm"].to_numpy()), 1.0)
        image = heat_ax.imshow(counts, aspect="auto", origin="lower", cmap="viridis", norm=PowerNorm(0.5),
                               extent=(-0.5, k - 0.5, 0.5, budget + 0.5), interpolation="nearest")
        fig.colorbar(image, ax=heat_ax, label="runs (square-root scale)")
        heat_ax.set(ylabel="round t", title=f"{agent}: models trained per round")
        chosen = records[(records["agent"] == agent) & (records["budget"] == budget)]["arm"].to_numpy()
        bar_ax.bar(np.arange(k), np.bincount(chosen, minlength=k), width=1.0, color="tab:orange")
        bar_ax.set(ylabel="runs recommending it", title=f"{agent}: recommendations")
        twin = bar_ax.twinx()
        twin.plot(np.arange(k), rmse, color="black", linewidth=1, label="true RMSE of each model")
        twin.set_ylabel("true RMSE")
        ends = [*starts[1:], k]
        for ax in (heat_ax, bar_ax):  # the families as x ticks, separated by lines
            for start in starts[1:]:
                ax.axvline(start - 0.5, color="white" if ax is heat_ax else "gray", linewidth=0.6)
            ax.set_xticks([(a + b - 1) / 2 for a, b in zip(starts, ends, strict=True)],
                          [name.replace("_", "\n") for name in FAMILIES], fontsize=8)
            ax.set_xlabel(f"model (arm): the {k} models by family")
    return _finish(fig, [*axes, twin], path, title)
