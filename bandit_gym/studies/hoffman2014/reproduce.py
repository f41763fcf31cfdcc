"""hoffman2014 §6: BayesGap against the Bayesian optimisation baselines and the correlation-blind best-arm
algorithms, in two studies.

(a) Figure 2 analogue on **synthetic** traffic speeds (the paper's sensor data is not available offline), built
    by the paper's recipe (``CorrelatedBestArm-TrafficSynthetic-v1``): 357 sensors, 2520 simulated speed
    profiles (``bandit_gym.covariances.traffic_speeds``); the agents' model comes from the 1680 historical ones
    (G their empirical covariance, sigma^2 = 5% of its mean diagonal, eta = 20, prior mean 0) and each of the
    840 held-out profiles is the true mean vector of one run, each used once. Probability of error against the
    budget T. Every Bayesian agent has that model; UGap's H and UCB-E's H1 are medians over the historical
    profiles (data the learner has). BayesGap runs with eq. 9's beta (the paper's) and, beside it, with beta
    times a scale chosen by ``tune_beta_scale`` on runs whose means are historical profiles (never on the
    evaluation runs). UCB-E and UGap need T >= K and run only there. A second, smaller study labelled
    WELL-SPECIFIED plays ``CorrelatedBestArm-TrafficSynthetic-v0``, whose means are draws from the agents' own
    prior, at T = 100 and 400.
(b) Figures 3 and 4 analogues, model selection on scikit-learn's diabetes data (``ModelSelection-v0``; the
    paper's Wine Quality data is not available offline): the true RMSE of the recommended model over 100 runs
    at T = 10 (a boxplot), and the arms pulled at each round and the recommendations of BayesGap and EI over 100
    runs at T = 40. The agents' prior is an ORACLE prior: the env fits it to its reward table, whose means are
    the truth the runs are scored against (the paper gives none).
"""

from __future__ import annotations

import dataclasses
import functools
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bandit_gym.experiments import AgentSpec, ExperimentResult, ExperimentSpec, run_experiments
from bandit_gym.plotting import _figure, _finish, _grid
from bandit_gym.registration import TRAFFIC_ETA, TRAFFIC_SIGMA, TRAFFIC_SPEEDS_SIGMA
from bandit_gym.studies._figures import plot_failure_against_budget
from bandit_gym.studies._report import Report, exact_error_intervals, markdown_table, with_agents

TRAFFIC_ENV = "CorrelatedBestArm-TrafficSynthetic-v1"
TRAFFIC_MODEL: dict[str, Any] = {"kernel": "traffic-speeds", "eta": TRAFFIC_ETA, "sigma": TRAFFIC_SPEEDS_SIGMA}
"""The agents' model of the headline study: the paper's, from the historical profiles."""
TRAFFIC_ARMS = 357
TRAFFIC_RUNS = 840
"""The paper's number of held-out signals: one run each."""
TRAFFIC_BUDGETS = (100, 200, 400, 800)
"""The paper's figure is at T = 400 only; the grid adds T < K (where only the Bayesian agents apply) and 2 T."""
BLOCK = 210
"""Runs per block: a block is one vector env (a 357 x 357 covariance, 1 MB, per copy) dealt consecutive runs."""
BAYESIAN = (("BayesGap", "BayesGap"), ("ThompsonSampling", "Thompson"), ("BayesUCB", "BayesUCB"),
            ("GPUCB", "GP-UCB"), ("EI", "EI"), ("PI", "PI"))
BETA_SCALES = (1.0, 2.0, 4.0, 8.0)
"""BayesGap's beta scales tried by the tuning step (1 is eq. 9's beta), at the paper's budget, on runs whose means
are historical profiles (uniform draws), with their own seed.
"""
TUNING_BUDGET, TUNING_RUNS, TUNING_SEED = 400, 210, 1680
WELL_SPECIFIED_ENV = "CorrelatedBestArm-TrafficSynthetic-v0"
"""The second study: CorrelatedBestArm-TrafficSynthetic-v0, means drawn from the agents' own prior."""
WELL_SPECIFIED_MODEL: dict[str, Any] = {"kernel": "traffic-synthetic", "eta": TRAFFIC_ETA, "sigma": TRAFFIC_SIGMA}
WELL_SPECIFIED_BUDGETS, WELL_SPECIFIED_RUNS, WELL_SPECIFIED_SEED = (100, 400), 210, 4102
BETA_BUDGET = 400
"""The budget at which BayesGap's final beta is recorded (Theorem 1's bound 1 - K T exp(-beta^2 / 2))."""
MODEL_SELECTION_ENV = "ModelSelection-v0"
MODEL_SELECTION_BUDGETS = (10, 40)
ALLOCATION_AGENTS = ("BayesGap", "EI")
"""The agents whose pulls Figure 4 shows."""
@dataclasses.dataclass(frozen=True)
class Quick:
    """The sizes of ``--quick``: the traffic study's budgets and runs, the model-selection runs, the runs of the
    beta tuning, and the well-specified study's runs and budgets."""

    budgets: tuple[int, ...]
    runs: int
    model_runs: int
    tuning_runs: int
    well_specified_runs: int
    well_specified_budgets: tuple[int, ...]


QUICK = Quick(budgets=(100, 400), runs=30, model_runs=20, tuning_runs=30, well_specified_runs=30,
              well_specified_budgets=(50, 100))
HEADLINE, WELL_SPECIFIED = "v1 held-out profiles", "v0 well-specified"


# ------------------------------------------------------------------------------------------- traffic: inputs
def tuned_label(scale: float) -> str:
    """The label of BayesGap with beta times a scale chosen by ``tune_beta_scale``."""
    return f"BayesGap (beta x {scale:g}, tuned on historical profiles)"


def hardness_medians(means: np.ndarray, b: float) -> dict[str, float]:
    """The medians over the rows of ``means`` (n, K) of H_epsilon (gabillon2012, m = 1, epsilon = 0, range b)
    and of H_1 (Audibert et al.): ``gap_complexity`` and
    ``best_arm_complexity`` of each row, vectorised."""
    means = np.asarray(means, dtype=np.float64)
    ranked = -np.sort(-means, axis=1)
    gaps = np.where(means >= ranked[:, :1], means - ranked[:, 1:2], ranked[:, :1] - means)
    h = np.sum(b**2 / (gaps / 2.0) ** 2, axis=1)
    deltas = ranked[:, :1] - ranked
    deltas[:, 0] = deltas[:, 1]
    return {"H": float(np.median(h)), "H1": float(np.median(np.sum(1.0 / deltas**2, axis=1)))}


@functools.lru_cache(maxsize=1)
def historical_hardness() -> dict[str, float]:
    """UGap's and UCB-E's complexity parameters for the headline study: the medians, over the 1680 historical
    profiles (data the learner has; never the held-out ones it is evaluated on), of H_epsilon (gabillon2012, with
    the sub-Gaussian range b = 2 sigma) and of H_1 (Audibert et al.)."""
    from bandit_gym.covariances import traffic_speeds

    return hardness_medians(traffic_speeds().historical, 2 * TRAFFIC_SPEEDS_SIGMA)


@functools.lru_cache(maxsize=4)
def prior_hardness(draws: int = 4000, seed: int = 0) -> dict[str, float]:
    """The same parameters for the WELL-SPECIFIED study (``CorrelatedBestArm-TrafficSynthetic-v0``): medians over
    means drawn from its prior, which is the generating model there and known to the learner."""
    from bandit_gym.covariances import GaussianProcessMeans, traffic_synthetic

    means = GaussianProcessMeans(traffic_synthetic(), TRAFFIC_ETA)(np.random.default_rng(seed), draws)
    return hardness_medians(means, 2 * TRAFFIC_SIGMA)


def traffic_agents(model: dict[str, Any], hardness: dict[str, float], sigma: float, beta_scale: float | None = None,
                   ) -> tuple[tuple[AgentSpec, ...], tuple[AgentSpec, ...]]:
    """The Bayesian agents with ``model`` (every budget; BayesGap with eq. 9's beta, and with beta times
    ``beta_scale`` unless it is None or 1) and the correlation-blind ones (T >= K): UGap is UGapEb with
    ``a = (T - K) / (4 H)`` and widths ``b sqrt(a / T_k)``, ``b = 2 sigma``; UCB-E has ``a = (25/36)(T - K) / H1``
    (H and H1 from ``hardness``)."""
    bayesian = [AgentSpec(name, model, label) for name, label in BAYESIAN]
    if beta_scale is not None and beta_scale != 1.0:
        bayesian.insert(1, AgentSpec("BayesGap", {**model, "beta_scale": beta_scale}, tuned_label(beta_scale)))
    blind = (AgentSpec("UGapEb", {"H": hardness["H"], "b": 2 * sigma}, "UGap"),
             AgentSpec("UCBEBestArm", {"H1": hardness["H1"]}, "UCB-E"))
    return tuple(bayesian), blind


def run_blocks(runs: int) -> list[range]:
    """Runs ``0 .. runs - 1`` in consecutive blocks of at most ``BLOCK``, of sizes within one of each other."""
    count = -(-runs // BLOCK)
    return [range(int(part[0]), int(part[-1]) + 1) for part in np.array_split(np.arange(runs), count)]


def hoffman2014_specs(runs: int = TRAFFIC_RUNS, quick: bool = False, seed: int = 2014,
                      beta_scale: float | None = None) -> list[ExperimentSpec]:
    """The headline study's experiments (v1), block by block (``run_blocks``): per block a Bayesian spec
    (every budget) and a correlation-blind one (the budgets T >= K). Block b, of runs s .. e, has env kwarg
    ``means="traffic-held-out@s"``: run r plays held-out profile ``traffic_run_order("held-out")[r % 840]``,
    so 840 runs play each held-out profile once (as the paper). Block b's seed is ``seed + b``; within it,
    common random numbers: run r of every agent plays the same means and the same reward streams. With
    ``beta_scale`` (from ``tune_beta_scale``), BayesGap also runs with beta times it."""
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
    """The WELL-SPECIFIED study (v0: means drawn from the agents' own prior) at ``budgets``: the Bayesian agents
    with v0's generating model (BayesGap with eq. 9's beta only) and, where T >= K, UGap and UCB-E with
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
    """``specs`` with ``agents`` added (``with_agents``) to the Bayesian ones, which run at every budget (the
    correlation-blind ones run at T >= K only: added there too, the agents' rows would repeat)."""
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
    """BayesGap with beta times each of ``BETA_SCALES`` on ``CorrelatedBestArm-TrafficSynthetic-v1`` with
    means drawn uniformly from the HISTORICAL profiles (``means="traffic-historical"``): the data the agents'
    model is built from, not the held-out profiles the study reports on. Common random numbers: run r of every
    scale plays the same profile and reward streams."""
    agents = tuple(AgentSpec("BayesGap", {**TRAFFIC_MODEL, "beta_scale": s}, f"BayesGap (beta x {s:g})")
                   for s in BETA_SCALES)
    return ExperimentSpec(env=TRAFFIC_ENV, agents=agents, budgets=(budget,), runs=runs, seed=seed,
                          env_kwargs={"means": "traffic-historical"}, chunk=min(runs, BLOCK),
                          name="tuning on historical profiles")


def tune_beta_scale(out: str | Path | None = None, runs: int = TUNING_RUNS, budget: int = TUNING_BUDGET,
                    seed: int = TUNING_SEED, jobs: int = 1, backend: str | None = None,
                    progress: bool = False) -> tuple[Any, float]:
    """Choose BayesGap's beta scale by code, on data that is not reported: play ``tuning_spec`` and pick
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


# ------------------------------------------------------------------------------------------- traffic: results
def merge_blocks(results: Sequence[ExperimentResult], name: str) -> ExperimentResult:
    """The blocks of one kind (Bayesian or blind) as one experiment: their runs concatenated in run order."""
    first = results[0].spec
    runs = {key: np.concatenate([result.runs[key] for result in results], axis=0) for key in results[0].runs}
    total = sum(result.spec.runs for result in results)
    spec = dataclasses.replace(first, runs=total, chunk=max(result.spec.chunk for result in results), name=name,
                               env_kwargs={"means": "traffic-held-out@0"} if first.env == TRAFFIC_ENV else {})
    return ExperimentResult(spec, runs)


def _summary(result: ExperimentResult, study: str, panel: str) -> Any:
    summary = exact_error_intervals(result.summary().assign(study=study, k=panel))
    errors = summary["metric"] == "error"
    summary["errors"] = np.where(errors, (summary["mean"] * summary["runs"]).round(), np.nan)
    return summary


def per_run_table(result: ExperimentResult, study: str, profiles: np.ndarray | None) -> Any:
    """One row per run, agent and budget: the run's error (0/1) and simple regret, and the held-out profile it
    played (-1 where the means were prior draws)."""
    import pandas as pd

    spec = result.spec
    frames = []
    for agent in spec.agents:
        error, regret = result.runs[(agent.display, "error")], result.runs[(agent.display, "regret")]
        run, j = np.indices(error.shape)
        frames.append(pd.DataFrame({
            "study": study, "run": run.ravel(), "profile": -1 if profiles is None else profiles[run.ravel()],
            "agent": agent.display, "budget": np.asarray(spec.budgets)[j.ravel()],
            "error": error.ravel().astype(np.int64), "regret": regret.ravel()}))
    return pd.concat(frames, ignore_index=True)


def _replay_bayesgap(spec: ExperimentSpec, label: str, budget: int) -> dict[str, np.ndarray]:
    """BayesGap's cell of a one-chunk spec at ``budget``, played again by the experiment engine
    (``play_cell``: same env, seeds and rollout), returning the beta each run ended
    with (computed from the posterior after its T pulls, on the answer step) and each run's error."""
    from bandit_gym.experiments import Cell, play_cell

    if -(-spec.runs // spec.chunk) != 1:
        raise ValueError(f"{spec.name}: the replay needs a one-chunk spec")
    index = next(i for i, agent in enumerate(spec.agents) if agent.display == label)
    played, agent = play_cell(spec, Cell(index, budget, 0))
    return {"beta": np.asarray(agent.beta, dtype=np.float64).copy(),  # type: ignore[attr-defined]
            "error": played["error"].astype(np.float64)}


def bayesgap_final_beta(specs: Sequence[ExperimentSpec], merged: ExperimentResult, budget: int = BETA_BUDGET,
                        jobs: int = 1, backend: str | None = None) -> np.ndarray:
    """The beta that BayesGap (eq. 9's, the agent labelled ``"BayesGap"``) ended each run of the headline study
    with at ``budget``, in run order, from a replay of its cells (``_replay_bayesgap``, one per block, in
    parallel); a replay whose errors differ from the study's raises a RuntimeError."""
    if jobs == 1 and backend in (None, "sequential"):
        replays = [_replay_bayesgap(spec, "BayesGap", budget) for spec in specs]
    else:
        import joblib

        with joblib.parallel_config(backend=backend or "loky", n_jobs=jobs):
            replays = joblib.Parallel(return_as="list")(joblib.delayed(_replay_bayesgap)(spec, "BayesGap", budget)
                                                        for spec in specs)
    errors = np.concatenate([replay["error"] for replay in replays])
    column = list(merged.spec.budgets).index(budget)
    if not np.array_equal(errors, merged.runs[("BayesGap", "error")][:, column]):
        raise RuntimeError("the replay of BayesGap's runs does not match the study's errors")
    return np.concatenate([replay["beta"] for replay in replays])


def theorem1_bound(beta: Any, arms: int = TRAFFIC_ARMS, budget: int = BETA_BUDGET) -> np.ndarray:
    """hoffman2014 Theorem 1's lower bound on P(R <= epsilon): ``1 - K T exp(-beta^2 / 2)`` (vacuous when
    negative; the theorem assumes epsilon > 0)."""
    return 1.0 - arms * budget * np.exp(-np.asarray(beta, dtype=np.float64) ** 2 / 2.0)


def traffic_data_summary() -> dict[str, Any]:
    """The numbers of the synthetic speed data and of the headline study's inputs (``traffic_data.csv``)."""
    from bandit_gym.covariances import traffic_noise_variance, traffic_speeds, traffic_speeds_kernel

    data = traffic_speeds()
    g = traffic_speeds_kernel()
    held = data.held_out
    prior_var = TRAFFIC_ETA**2 * np.diag(g)
    ranked = np.sort(held, axis=1)
    # under the prior N(0, eta^2 G) the average of a profile over the sensors is N(0, eta^2 1'G1 / K^2)
    average_sd = TRAFFIC_ETA * np.sqrt(g.sum()) / g.shape[0]
    hardness = historical_hardness()
    return {
        "sensors": g.shape[0], "readings": len(data.speeds), "historical": len(data.historical),
        "held_out": len(held), "mean_diag_G": float(np.mean(np.diag(g))), "sigma2": traffic_noise_variance(),
        "sigma": TRAFFIC_SPEEDS_SIGMA, "eta": TRAFFIC_ETA, "mean_speed": float(data.speeds.mean()),
        "mean_speed_historical": float(data.historical.mean()), "mean_speed_held_out": float(held.mean()),
        "min_speed": float(data.speeds.min()), "max_speed": float(data.speeds.max()),
        "share_below_45_mph": float(np.mean(data.speeds < 45.0)),
        "held_out_variance_over_prior_variance_median": float(np.median(held.var(axis=0, ddof=1) / prior_var)),
        "held_out_average_speed_in_prior_sd": float(held.mean() / average_sd),
        "held_out_grand_mean_in_prior_se": float(held.mean() / (average_sd / np.sqrt(len(held)))),
        "held_out_top_gap_median": float(np.median(ranked[:, -1] - ranked[:, -2])),
        "held_out_distinct_best_arms": int(np.unique(held.argmax(axis=1)).size),
        "ugap_H_median_historical": hardness["H"], "ucbe_H1_median_historical": hardness["H1"],
    }


def instances_table(runs: int, beta: np.ndarray | None) -> Any:
    """One row per run of the headline study: the held-out profile it played (index, day, time), its best arm
    and top gap, and BayesGap's final beta at T = 400 with Theorem 1's bound (NaN if not recorded)."""
    import pandas as pd

    from bandit_gym.covariances import TRAFFIC_HISTORY, traffic_run_order, traffic_speeds

    data = traffic_speeds()
    order = traffic_run_order("held-out")
    profiles = order[np.arange(runs) % order.size]
    means = data.held_out[profiles]
    ranked = np.sort(means, axis=1)
    when = [data.when(TRAFFIC_HISTORY + p) for p in profiles]
    beta = np.full(runs, np.nan) if beta is None else beta
    return pd.DataFrame({"run": np.arange(runs), "profile": profiles, "day": [d for d, _ in when],
                         "hour": [h for _, h in when], "best_arm": means.argmax(axis=1), "best_speed": ranked[:, -1],
                         "top_gap": ranked[:, -1] - ranked[:, -2], f"bayesgap_beta_T{BETA_BUDGET}": beta,
                         f"theorem1_bound_T{BETA_BUDGET}": theorem1_bound(beta)})


def error_markdown(summary: Any, study: str) -> list[str]:
    """The error table of one study: rate [95% Clopper-Pearson interval] (errors / runs) per agent and budget."""
    rows = summary[(summary["metric"] == "error") & (summary["study"] == study)]
    cells = rows.assign(text=[f"{m:.3f} [{lo:.3f}, {hi:.3f}] ({int(e)}/{int(n)})" for m, lo, hi, e, n in
                              zip(rows["mean"], rows["ci_low"], rows["ci_high"], rows["errors"], rows["runs"],
                                  strict=True)])
    pivot = cells.pivot_table(index="agent", columns="budget", values="text", aggfunc="first", sort=False)
    return markdown_table(pivot.fillna("n/a (T < K)"), lambda b: f"T={b}")


def traffic_markdown(summary: Any, data: dict[str, Any], tuning: Any, scale: float, instances: Any) -> str:
    """``traffic.md``: the data, the tuning, both studies' error tables and BayesGap's beta."""
    runs = int(summary.loc[summary["study"] == HEADLINE, "runs"].iloc[0])
    lines = [
        "# hoffman2014 Figure 2 analogue on SYNTHETIC traffic speeds", "",
        f"Data (`bandit_gym.covariances.traffic_speeds`, simulated; the paper's sensor data is not available offline): "
        f"{data['sensors']} sensors, {data['readings']} speed profiles (mph), the first {data['historical']} "
        f"historical, the last {data['held_out']} held out. Mean speed {data['mean_speed']:.1f} mph (held out "
        f"{data['mean_speed_held_out']:.1f}), {100 * data['share_below_45_mph']:.1f}% of readings below 45 mph.",
        f"Agents' model (paper's recipe, from the historical profiles only): G = their empirical covariance, mean "
        f"diagonal {data['mean_diag_G']:.2f} mph^2 (not rescaled); sigma^2 = 5% of it = {data['sigma2']:.3f} "
        f"(the paper's: 4.78); eta = {data['eta']:g}; prior mean 0.",
        f"The true means are the held-out profiles, not draws from that prior: their per-sensor variance is "
        f"{data['held_out_variance_over_prior_variance_median']:.4f} of the prior's (median over sensors), and the "
        f"average speed over all {data['held_out']} profiles is {data['held_out_grand_mean_in_prior_se']:.1f} "
        f"standard errors above the prior's 0 (one profile's average: "
        f"{data['held_out_average_speed_in_prior_sd']:.2f} prior standard deviations). "
        f"Median gap between the best and second sensor of a held-out profile: "
        f"{data['held_out_top_gap_median']:.2f} mph; {data['held_out_distinct_best_arms']} distinct best sensors.",
        f"UGap's H and UCB-E's H1 are medians over the historical profiles: H = {data['ugap_H_median_historical']:.4g}"
        f" (b = 2 sigma), H1 = {data['ucbe_H1_median_historical']:.4g}.", "",
        "## Tuning BayesGap's beta scale (on historical profiles, not reported runs)", "",
        f"BayesGap with beta x s at T = {int(tuning['budget'].iloc[0])}, {int(tuning['runs'].iloc[0])} runs whose "
        f"means are historical profiles drawn uniformly (seed {int(tuning['seed'].iloc[0])}); the fewest errors wins "
        f"(ties: the smaller s). Chosen: s = {scale:g}" + (" (the paper's beta: no second BayesGap is run)."
                                                             if scale == 1.0 else "."), "",
        "| s | errors / runs | error [95% CI] | chosen |", "|---|---|---|---|"]
    for row in tuning.itertuples():
        lines.append(f"| {row.beta_scale:g} | {row.errors}/{row.runs} | {row.error:.3f} [{row.ci_low:.3f}, "
                     f"{row.ci_high:.3f}] | {'yes' if row.chosen else ''} |")
    lines += ["", f"## Headline study: `{TRAFFIC_ENV}`, {runs} runs", "",
              "Run r plays held-out profile `traffic_run_order('held-out')[r]` (each profile once when runs = 840); "
              "common random numbers within each block of runs. Probability of error P(answer is not the best "
              "sensor), 95% Clopper-Pearson interval, (errors / runs). UGap and UCB-E need T >= K.", ""]
    lines += error_markdown(summary, HEADLINE)
    beta_column = f"bayesgap_beta_T{BETA_BUDGET}"
    beta = instances[beta_column].to_numpy()
    if np.isfinite(beta).all():
        q1, median, q3 = np.percentile(beta, [25, 50, 75])
        bound = float(theorem1_bound(median))
        lines += [f"BayesGap (eq. 9's beta) ended its runs at T = {BETA_BUDGET} with beta: median {median:.3f} "
                  f"(quartiles {q1:.3f}, {q3:.3f}; per run in `traffic_instances.csv`). Theorem 1's bound "
                  f"1 - K T exp(-beta^2/2) at the median: {bound:.4g}"
                  + (" (vacuous)" if bound <= 0 else "") + f"; positive in {int(np.sum(theorem1_bound(beta) > 0))} "
                  f"of {beta.size} runs (it needs beta > {np.sqrt(2 * np.log(TRAFFIC_ARMS * BETA_BUDGET)):.2f}).",
                  ""]
    if (summary["study"] == WELL_SPECIFIED).any():
        wruns = int(summary.loc[summary["study"] == WELL_SPECIFIED, "runs"].iloc[0])
        lines += [f"## Second study, WELL-SPECIFIED: `{WELL_SPECIFIED_ENV}`, {wruns} runs", "",
                  "Each run's means are a draw from the agents' own prior N(0, 20^2 G) (G: unit mean diagonal, "
                  "`traffic-synthetic`; sigma^2 = 20): the prior is exactly right, unlike the paper's setting. "
                  "UGap's H and UCB-E's H1: medians over that prior.", ""]
        lines += error_markdown(summary, WELL_SPECIFIED)
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------- model selection
def play_recorded(agent: Any, runs: int, budget: int, seed: int) -> dict[str, np.ndarray]:
    """``runs`` episodes of ``ModelSelection-v0`` at once (a vector env), recording the arm pulled at every
    round ``(runs, T)`` and the final recommendation ``(runs,)``."""
    import gymnasium as gym

    venv = gym.make_vec(MODEL_SELECTION_ENV, num_envs=runs, vectorization_mode="vector_entry_point", budget=budget,
                        common_random_numbers=True, copy=False)
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
    """Every Bayesian agent at T = 10 and 40, each with the ORACLE prior of ``empirical_bayes_model`` (fitted to
    the reward table, whose means are the truth): one row per run (recommended model, its true RMSE) and one row
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
    """``model_selection.md``: the true RMSE of each agent's recommended model per budget (mean, standard error,
    median, how often it is the best model), from the per-run records of the model-selection study."""
    from bandit_gym.model_selection import MODELS, load_table

    rmse = -load_table().mean(axis=1)
    best = int(np.argmin(rmse))
    table = records.groupby(["budget", "agent"], sort=False).agg(
        mean=("rmse", "mean"), se=("rmse", lambda x: x.std(ddof=1) / np.sqrt(len(x))), median=("rmse", "median"),
        best=("arm", lambda x: float(np.mean(x == best))), runs=("rmse", "size"))
    lines = [f"True RMSE (table mean) of the recommended model on the diabetes data; the best model is "
             f"{MODELS[best].label} (RMSE {rmse[best]:.2f}), the median model {np.median(rmse):.2f}, the worst "
             f"{rmse.max():.2f}.", "",
             "Every agent has an ORACLE prior: its prior mean, eta and sigma are fitted to the reward table "
             "(`bandit_gym.envs.model_selection.empirical_bayes_model`), whose means are the truth the runs are "
             "scored against (the paper gives no model). A learner would have to estimate them from its own pulls.",
             "",
             "| T | agent | mean RMSE (SE) | median | P(best model) | runs |", "|---|---|---|---|---|---|"]
    for (budget, agent), row in table.iterrows():
        lines.append(f"| {budget} | {agent} | {row['mean']:.2f} ({row['se']:.2f}) | {row['median']:.2f} | "
                     f"{row['best']:.2f} | {int(row['runs'])} |")
    return "\n".join([*lines, ""])


def _plot_order(summary: Any) -> Any:
    """The summary with the tuned BayesGap last, so that both panels of ``traffic.png`` give an agent one
    colour (the second study has no tuned BayesGap)."""
    import pandas as pd

    tuned = summary["agent"].str.contains("tuned", regex=False)
    return pd.concat([summary[~tuned], summary[tuned]], ignore_index=True)


def reproduce_hoffman2014(
    out: str | Path, runs: int | None = None, quick: bool = False, jobs: int = 2, backend: str | None = None,
    progress: bool = True, agents: Sequence[AgentSpec] = (),
) -> Report:
    """Run both studies. (a): tune BayesGap's beta scale on historical profiles (``tuning.csv``), then the
    headline study on the held-out profiles and the WELL-SPECIFIED second study; write ``results.csv`` (both
    studies' summaries, with error counts), ``traffic_runs.csv`` (every run, agent and budget),
    ``traffic_instances.csv`` (every run's profile and BayesGap's final beta at T = 400), ``traffic_data.csv``,
    ``traffic.md`` and ``traffic.png``. (b): ``model_selection_runs.csv``, ``model_selection_allocations.csv``,
    ``model_selection.md``, ``model_selection_T10.png`` and ``allocations_T40.png``. ``runs`` sets the headline
    study's runs (840, each held-out profile once; 30 quick); the tuning has 210 runs and the second study 210
    (30 each quick); (b) runs 100 (20 quick). ``agents`` are added to both traffic studies' Bayesian experiments
    (every budget, same runs), as rows of ``results.csv``, ``traffic_runs.csv``, ``traffic.md`` and curves of
    ``traffic.png``; not to the correlation-blind ones (T >= K), the beta tuning nor the model selection."""
    import pandas as pd


    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    runs = runs if runs is not None else (QUICK.runs if quick else TRAFFIC_RUNS)
    model_runs = QUICK.model_runs if quick else 100
    start = time.perf_counter()
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
    beta = None
    if BETA_BUDGET in merged["Bayesian"].spec.budgets:
        beta = bayesgap_final_beta([r.spec for r in blocks["Bayesian"]], merged["Bayesian"], jobs=jobs,
                                   backend=backend)
    instances = instances_table(runs, beta)
    instances.to_csv(out / "traffic_instances.csv", index=False)
    data = traffic_data_summary()
    pd.DataFrame([data]).to_csv(out / "traffic_data.csv", index=False)
    (out / "traffic.md").write_text(traffic_markdown(summary, data, tuning, scale, instances))
    traffic = plot_failure_against_budget(_plot_order(summary), out / "traffic.png",
                                          title="hoffman2014 Fig. 2 analogue, SYNTHETIC traffic speeds",
                                          xlabel="budget T", ylabel="probability of error", panel="{}")
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
    files = [out / name for name in ("results.csv", "tuning.csv", "traffic_runs.csv", "traffic_instances.csv",
                                     "traffic_data.csv", "traffic.md", "model_selection_runs.csv",
                                     "model_selection_allocations.csv", "model_selection.md")]
    return Report(summary=summary, figures=[traffic, boxplot, histograms], seconds=time.perf_counter() - start,
                  files=[*files, traffic, boxplot, histograms],
                  extras={"tuning": tuning, "beta_scale": scale, "instances": instances, "records": records})


# ----------------------------------------------------------------------------------------- figures
def plot_rmse_boxplot(records: Any, path: str | Path, title: str = "") -> Path:
    """hoffman2014 Figure 3: the true RMSE of the recommended model over the runs, one box per agent, with the
    best model's RMSE as a dashed line (lower is better)."""
    from bandit_gym.model_selection import load_table

    fig, axes = _figure(1, width=7.0, height=4.4)
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
    fig, axes = _grid(2 * len(agents), 2, width=6.0, height=3.6)
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
                          [name.replace("_", " ") for name in FAMILIES], fontsize=7)
            ax.set_xlabel(f"model (arm): the {k} models by family")
    return _finish(fig, [*axes, twin], path, title)
