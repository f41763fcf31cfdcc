r"""hoffman2014 §6, study (a): the traffic studies' inputs (the agents, their model and complexity parameters, the
blocks of runs) and results (the merged blocks, the per-run and per-profile tables, BayesGap's final \(\beta\), the
data's numbers and ``traffic.md``). ``reproduce.py`` builds the experiments, runs them and draws the figure."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from typing import Any

import numpy as np

from bandit_gym.experiments import AgentSpec, ExperimentResult, ExperimentSpec
from bandit_gym.registration import TRAFFIC_ETA, TRAFFIC_SIGMA, TRAFFIC_SPEEDS_SIGMA
from bandit_gym.studies._report import exact_error_intervals, markdown_table

TRAFFIC_ENV = "CorrelatedBestArm-TrafficSynthetic-v1"
TRAFFIC_MODEL: dict[str, Any] = {"kernel": "traffic-speeds", "eta": TRAFFIC_ETA, "sigma": TRAFFIC_SPEEDS_SIGMA}
"""The agents' model of the headline study: the paper's, from the historical profiles."""
TRAFFIC_ARMS = 357
TRAFFIC_RUNS = 840
"""The paper's number of held-out signals: one run each."""
TRAFFIC_BUDGETS = (100, 200, 400, 800)
r"""The paper's figure is at \(T = 400\) only; the grid adds \(T < K\) (where only the Bayesian agents apply) and
\(2T\)."""
BLOCK = 210
r"""Runs per block: a block is one vector env (a \(357 \times 357\) covariance, 1 MB, per copy) dealt consecutive
runs."""
BAYESIAN = (("BayesGap", "BayesGap"), ("ThompsonSampling", "Thompson"), ("BayesUCB", "BayesUCB"),
            ("GPUCB", "GP-UCB"), ("EI", "EI"), ("PI", "PI"))
BETA_SCALES = (1.0, 2.0, 4.0, 8.0)
r"""BayesGap's \(\beta\) scales tried by the tuning step (1 is eq. 9's \(\beta\)), at the paper's budget, on runs
whose means are historical profiles (uniform draws), with their own seed.
"""
TUNING_BUDGET, TUNING_RUNS, TUNING_SEED = 400, 210, 1680
WELL_SPECIFIED_ENV = "CorrelatedBestArm-TrafficSynthetic-v0"
"""The second study: ``CorrelatedBestArm-TrafficSynthetic-v0``, means drawn from the agents' own prior."""
WELL_SPECIFIED_MODEL: dict[str, Any] = {"kernel": "traffic-synthetic", "eta": TRAFFIC_ETA, "sigma": TRAFFIC_SIGMA}
WELL_SPECIFIED_BUDGETS, WELL_SPECIFIED_RUNS, WELL_SPECIFIED_SEED = (100, 400), 210, 4102
BETA_BUDGET = 400
r"""The budget at which BayesGap's final \(\beta\) is recorded (Theorem 1's bound \(1 - K T \exp(-\beta^2 / 2)\))."""
HEADLINE, WELL_SPECIFIED = "v1 held-out profiles", "v0 well-specified"


# ------------------------------------------------------------------------------------------- traffic: inputs
def tuned_label(scale: float) -> str:
    r"""The label of BayesGap with \(\beta\) times a scale chosen by ``tune_beta_scale``."""
    return f"BayesGap (beta x {scale:g}, tuned on historical profiles)"


def hardness_medians(means: np.ndarray, b: float) -> dict[str, float]:
    r"""The medians over the rows of ``means`` ``(n, K)`` of \(H_\epsilon\) (gabillon2012, \(m = 1\), \(\epsilon = 0\),
    range \(b\)) and of \(H_1\) (Audibert et al.): ``gap_complexity`` and
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
    r"""UGap's and UCB-E's complexity parameters for the headline study: the medians, over the 1680 historical
    profiles (data the learner has; never the held-out ones it is evaluated on), of \(H_\epsilon\) (gabillon2012,
    with the sub-Gaussian range \(b = 2\sigma\)) and of \(H_1\) (Audibert et al.)."""
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
    r"""The Bayesian agents with ``model`` (every budget; BayesGap with eq. 9's \(\beta\), and with \(\beta\) times
    ``beta_scale`` unless it is None or 1) and the correlation-blind ones (\(T \ge K\)): UGap is UGapEb with
    \(a = (T - K) / (4 H)\) and widths \(b \sqrt{a / T_k}\), \(b = 2 \sigma\); UCB-E has
    \(a = \tfrac{25}{36}(T - K) / H_1\) (\(H\) and \(H_1\) from ``hardness``)."""
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
    r"""BayesGap's cell of a one-chunk spec at ``budget``, played again by the experiment engine
    (``play_cell``: same env, seeds and rollout), returning the \(\beta\) each run ended
    with (computed from the posterior after its \(T\) pulls, on the answer step) and each run's error."""
    from bandit_gym.experiments import Cell, play_cell

    if -(-spec.runs // spec.chunk) != 1:
        raise ValueError(f"{spec.name}: the replay needs a one-chunk spec")
    index = next(i for i, agent in enumerate(spec.agents) if agent.display == label)
    played, agent = play_cell(spec, Cell(index, budget, 0))
    return {"beta": np.asarray(agent.beta, dtype=np.float64).copy(),  # type: ignore[attr-defined]
            "error": played["error"].astype(np.float64)}


def bayesgap_final_beta(specs: Sequence[ExperimentSpec], merged: ExperimentResult, budget: int = BETA_BUDGET,
                        jobs: int = 1, backend: str | None = None) -> np.ndarray:
    r"""The \(\beta\) that BayesGap (eq. 9's, the agent labelled ``"BayesGap"``) ended each run of the headline study
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
    r"""hoffman2014 Theorem 1's lower bound on \(P(R \le \epsilon)\): \(1 - K T \exp(-\beta^2 / 2)\) (vacuous when
    negative; the theorem assumes \(\epsilon > 0\))."""
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
    r"""One row per run of the headline study: the held-out profile it played (index, day, time), its best arm
    and top gap, and BayesGap's final \(\beta\) at \(T = 400\) with Theorem 1's bound (NaN if not recorded)."""
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
    r"""``traffic.md``: the data, the tuning, both studies' error tables and BayesGap's \(\beta\)."""
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
