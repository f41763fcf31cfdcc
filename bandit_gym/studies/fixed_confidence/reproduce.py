r"""fixed-confidence: the package's fixed-confidence best-arm identification rules against the lower bound.

Not one paper's figure: the study that a new fixed-confidence algorithm is measured in since Garivier and
Kaufmann (2016). Every fixed-confidence agent of the package, old (LUCB1, UGapEc) and new (KL-LUCB, lil'UCB,
Track-and-Stop C and D, EB-TCI, TTUCB, TTTS, FWS), each with its paper's stopping rule or the theory's GLR
threshold, plays the same instances at \(\delta\) in ``DELTAS``; two agents are also played with the GLR rule's
heuristic threshold \(\ln((1 + \ln t) / \delta)\), GK 2016 §6's choice for its experiments, which no theorem
covers (labelled ``heuristic``). For every agent, instance and \(\delta\):

- the mean sample complexity \(\mathbb{E}[\tau]\) over the runs (95% CI), and its ratio to the lower bound
  \(\mathrm{kl}(\delta, 1 - \delta)\, T^*(\mu)\) (Garivier and Kaufmann 2016, Theorem 1;
  ``bandit_gym.lower_bounds``): a \(\delta\)-correct rule has ratio \(\ge 1\) in expectation, and
  Track-and-Stop's ratio to \(T^*(\mu) \ln(1/\delta)\) tends to 1 as \(\delta\) falls (their Theorem 14);
- the error rate with its exact (Clopper-Pearson) 95% interval, against \(\delta\);
- the empirical allocation \(N_i(\tau) / \tau\) at \(\delta\) = ``ALLOCATION_DELTA`` on the literature instances,
  against the optimal allocation \(w^*(\mu)\) (figure ``allocation.png``).

Instances (``INSTANCES``): three from the literature (GK 2016's two Bernoulli instances; Audibert, Bubeck and
Munos's problem 4) and four random ones (``random_instance``: \(K \in \{10, 50\}\) Bernoulli, \(K \in \{4, 20\}\)
Gaussian of standard deviation 1/2), drawn once by a fixed seed, before any agent was run on them, with one rule
written down beforehand: the best arm leads the second by at least ``MIN_GAP`` (so that \(T^*(\mu)\) stays finite
and the study runs in minutes). LUCB1 and UGapEc are Hoeffding rules for rewards in \([0, b]\): on the Gaussian
instances they get \(b = 2\sigma\) (the same sub-Gaussian width), outside their papers' theory. Every episode is
capped at ``CAP`` pulls; a run that reaches the cap counts its ``CAP`` pulls and its answer then (the ``capped``
column says how many).

GK 2016 Table 1 side by side (``TABLE1``): the algorithms of Garivier and Kaufmann's Table 1 (§6,
\(\delta = 0.1\) on their \(\mu_1\) and \(\mu_2\)) that the package can run as they ran them (their published Julia
code: Track-and-Stop with D-tracking and the heuristic GLR threshold; KL-LUCB with the rate
\(\ln((1 + \ln t) / \delta)\), ``KLLUCB(rate="gk2016")``), ``TABLE1_RUNS`` runs per cell (``Quick.table1_runs``
with ``--quick``), next to the paper's mean number of draws, with
\(z = (\text{package} - \text{paper}) / \text{se}\) (``table1.csv``, ``table1.md``).

The \(\delta\)-sweep (``sweep.py``): best arm, \(\epsilon\)-best arm, top-2 and thresholding, \(\delta\) from 0.1 to
\(10^{-6}\), each problem's ratio to its own bound (``sweep.csv``, ``sweep.md``, ``sweep.png``; ``Quick.sweep_runs``
runs a cell and ``Quick.sweep_deltas`` with ``--quick``).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bandit_gym.experiments import AgentSpec, ExperimentSpec
from bandit_gym.instances import AUDIBERT2010_PROBLEMS
from bandit_gym.lower_bounds import best_arm_allocation, confidence_kl
from bandit_gym.plotting import COLORS, PAGE_WIDTH, _errorbars, _finish, _grid
from bandit_gym.studies._report import Report, exact_error_intervals, run_specs, with_agents


@dataclass(frozen=True)
class Instance:
    """A best-arm identification instance: its name, means, arm family (``"bernoulli"`` or ``"gaussian"`` of
    standard deviation ``sigma``) and where it comes from."""

    name: str
    means: tuple[float, ...]
    distribution: str = "bernoulli"
    sigma: float = 1.0
    source: str = ""


DELTAS = (0.1, 0.01, 0.001)
#: the cap on every episode's pulls
CAP = 10**7
#: the random instances' rule: the best arm leads the second by at least this much (in means)
MIN_GAP = {"bernoulli": 0.05, "gaussian": 0.1}
GAUSSIAN_SIGMA = 0.5
RANDOM_SEED = 2026
#: the \(\delta\) of the allocation figure, and the agents it shows
ALLOCATION_DELTA = 0.01
ALLOCATION_AGENTS = ("LUCB1", "KL-LUCB", "TaS-D", "EB-TCI", "TTUCB")


def random_instance(distribution: str, num_arms: int, seed: int = RANDOM_SEED) -> Instance:
    r"""\(K\) means drawn uniformly (Bernoulli: on \([0.1, 0.9]\); Gaussian: on \([0, 1]\), \(\sigma\) =
    ``GAUSSIAN_SIGMA``) and rounded to 3 decimals, redrawn until the best leads the second by ``MIN_GAP``; the
    generator is seeded by (``seed``, \(K\), ``family``), so each instance is fixed."""
    gaussian = distribution == "gaussian"
    rng = np.random.default_rng([seed, num_arms, int(gaussian)])
    low, high = (0.0, 1.0) if gaussian else (0.1, 0.9)
    while True:
        means = np.round(rng.uniform(low, high, num_arms), 3)
        top = np.sort(means)[::-1]
        if top[0] - top[1] >= MIN_GAP[distribution]:
            break
    return Instance(f"random {'Gaussian' if gaussian else 'Bernoulli'} K={num_arms}",
                    tuple(float(x) for x in means), distribution, GAUSSIAN_SIGMA if gaussian else 1.0,
                    f"random_instance({distribution!r}, {num_arms})")


LITERATURE = (
    Instance("GK2016 mu1", (0.5, 0.45, 0.43, 0.4), source="Garivier and Kaufmann 2016, §6 (also Kaufmann and "
                                                        "Kalyanakrishnan 2013)"),
    Instance("GK2016 mu2", (0.3, 0.21, 0.2, 0.19, 0.18), source="Garivier and Kaufmann 2016, §6"),
    Instance("Audibert2010 problem 4", AUDIBERT2010_PROBLEMS[4], source="Audibert, Bubeck and Munos 2010, §6"),
)
INSTANCES = (*LITERATURE, random_instance("bernoulli", 10), random_instance("bernoulli", 50),
             random_instance("gaussian", 4), random_instance("gaussian", 20))

#: (label, agent name, parameters): every fixed-confidence agent with its paper's stopping rule or the theory's GLR
#: threshold, and the two best-known rules with the heuristic threshold (outside the theory)
AGENTS: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("LUCB1", "LUCB", {}),
    ("UGapEc", "UGapEc", {}),
    ("KL-LUCB", "KLLUCB", {}),
    ("lilUCB", "LilUCB", {}),
    ("TaS-C", "TrackAndStop", {"tracking": "C"}),
    ("TaS-D", "TrackAndStop", {"tracking": "D"}),
    ("EB-TCI", "EBTCI", {}),
    ("TTUCB", "TTUCB", {}),
    ("TTTS", "TTTS", {}),
    ("TaS-D heuristic", "TrackAndStop", {"tracking": "D", "threshold": "heuristic"}),
    ("EB-TCI heuristic", "EBTCI", {"threshold": "heuristic"}),
    ("FWS", "FWSampling", {}),  # last: the allocation study's seeds follow the agents' positions
)
#: the agents whose rates are Hoeffding's for rewards in \([0, b]\) (no ``distribution``)
HOEFFDING = ("LUCB", "UGapEc")


@dataclass(frozen=True)
class Quick:
    """The grid of ``--quick``: the instances (by name) and deltas."""

    instances: tuple[str, ...]
    deltas: tuple[float, ...]

    #: the runs of each cell of GK 2016 Table 1 side by side (``TABLE1``)
    table1_runs: int = 100
    #: the runs of each cell of the \(\delta\)-sweep (``sweep.py``), and its deltas
    sweep_runs: int = 10
    sweep_deltas: tuple[float, ...] = (0.1, 0.001)


QUICK = Quick(instances=("GK2016 mu2",), deltas=(0.1, 0.01))


def agents_for(instance: Instance, deltas: Sequence[float]) -> tuple[AgentSpec, ...]:
    r"""The study's agents at every \(\delta\), labelled ``LABEL(delta=D)``, with the instance's arm family
    (Hoeffding rules: \(b = 2\sigma\) on Gaussian arms)."""
    out = []
    for label, name, params in AGENTS:
        family: dict[str, Any]
        if name in HOEFFDING:
            family = {"b": 2.0 * instance.sigma} if instance.distribution == "gaussian" else {}
        else:
            family = {"distribution": instance.distribution}
            if instance.distribution == "gaussian":
                family["sigma"] = instance.sigma
        out += [AgentSpec(name, {**params, **family, "delta": d}, f"{label}(delta={d:g})") for d in deltas]
    return tuple(out)


def _env_kwargs(instance: Instance) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"means": list(instance.means), "setting": "fixed_confidence"}
    if instance.distribution == "gaussian":
        kwargs |= {"arm_distribution": "gaussian", "sigma": instance.sigma}
    return kwargs


def fixed_confidence_specs(runs: int = 50, quick: bool = False, seed: int = 2016) -> list[ExperimentSpec]:
    r"""One experiment per instance: every agent at every \(\delta\), ``runs`` runs, capped at ``CAP`` pulls."""
    chosen = [i for i in INSTANCES if i.name in QUICK.instances] if quick else list(INSTANCES)
    deltas = QUICK.deltas if quick else DELTAS
    return [ExperimentSpec(env="BestArmIdentification-v0", agents=agents_for(instance, deltas), budgets=(CAP,),
                           runs=runs, seed=seed + index, env_kwargs=_env_kwargs(instance), chunk=runs,
                           name=instance.name)
            for index, instance in enumerate(chosen)]


def _instance(name: str) -> Instance:
    return next(i for i in INSTANCES if i.name == name)


def _describe(summary: Any, spec: ExperimentSpec) -> Any:
    r"""Add the instance's columns (\(K\), family, \(T^*\)), \(\delta\), the lower bound
    \(\mathrm{kl}(\delta, 1 - \delta)\, T^*\) and the ratio of each row's mean to it (pulls rows), and exact intervals
    of the errors."""
    instance = _instance(spec.name)
    star = best_arm_allocation(instance.means, instance.distribution, instance.sigma).time
    deltas = {agent.display: float(agent.cls(**agent.params).delta) for agent in spec.agents}  # type: ignore[attr-defined]
    delta = summary["agent"].map(deltas)
    bound = star * delta.map(confidence_kl)
    out = summary.assign(instance=instance.name, num_arms=len(instance.means), distribution=instance.distribution,
                         T_star=star, delta=delta, rule=summary["agent"].str.replace(r"\(delta=.*\)$", "", regex=True),
                         lower_bound=bound, ratio=summary["mean"] / bound)
    out.loc[out["metric"] != "pulls", "ratio"] = np.nan
    return exact_error_intervals(out)


# ----------------------------------------------------------------------------------------- tables
def study_markdown(summary: Any, runs: int) -> str:
    r"""The table of every instance: per \(\delta\), each agent's \(\mathbb{E}[\tau]\) (95% CI half-width), its ratio
    to \(\mathrm{kl}(\delta, 1 - \delta)\, T^*\), runs at the cap, and its error rate with its exact 95% upper bound."""
    lines = [f"Fixed confidence, {runs} runs per cell: mean pulls until the stop E[tau] (+- 95% CI half-width), its "
             "ratio to the lower bound kl(delta, 1 - delta) T*(mu), and the error rate with its exact (Clopper-"
             "Pearson) 95% upper bound. `heuristic`: the GLR threshold ln((1 + ln t) / delta), outside the theory.",
             ""]
    for name, rows in summary.groupby("instance", sort=False):
        instance = _instance(name)
        first = rows.iloc[0]
        family = (f"Gaussian, sigma = {instance.sigma:g}" if instance.distribution == "gaussian" else "Bernoulli")
        lines += [f"### {name} (K = {first['num_arms']}, {family}, T* = {first['T_star']:.1f})", "",
                  f"means {', '.join(f'{m:g}' for m in instance.means)}; {instance.source}.", "",
                  "| delta | lower bound | agent | E[tau] | ratio | error | error upper bound |",
                  "|---|---|---|---|---|---|---|"]
        for (delta, rule), cell in rows.groupby(["delta", "rule"], sort=False):
            pulls, error = cell[cell.metric == "pulls"].iloc[0], cell[cell.metric == "error"].iloc[0]
            lines.append(f"| {delta:g} | {pulls['lower_bound']:.0f} | {rule} | {pulls['mean']:.0f} +- "
                         f"{pulls['ci_high'] - pulls['mean']:.0f} | {pulls['ratio']:.2f} | {error['mean']:.3f} | "
                         f"{error['ci_high']:.3f} |")
        lines.append("")
    return "\n".join(lines)


def goal_markdown(summary: Any) -> str:
    r"""The goal of the study, decided on its rows: at \(\delta = 0.01\) on the literature instances, the best agent's
    ratio to the bound (goal: at most 2), and LUCB1's pulls over the best agent's (goal: at least 10), with the
    best agent among those a theorem covers and among all."""
    pulls = summary[(summary.metric == "pulls") & (summary.delta == 0.01)
                    & summary.instance.isin([i.name for i in LITERATURE])]
    if pulls.empty:
        return "The goal is decided at delta = 0.01 on the literature instances; this run has none.\n"
    lines = ["At delta = 0.01 on the literature instances: the best agent's ratio E[tau] / (kl(delta, 1 - delta) T*) "
             "(goal: at most 2) and LUCB1's E[tau] over the best agent's (goal: at least 10), among the rules a "
             "theorem covers (every rule but the `heuristic` ones) and among all.", "",
             "| instance | best (theory) | ratio | LUCB1 / best | best (all) | ratio | LUCB1 / best |",
             "|---|---|---|---|---|---|---|"]
    for name, rows in pulls.groupby("instance", sort=False):
        lucb = rows.loc[rows.rule == "LUCB1", "mean"]
        cells = []
        for pool in (rows[~rows.rule.str.contains("heuristic")], rows):
            best = pool.loc[pool["ratio"].idxmin()]
            speedup = f"{lucb.iloc[0] / best['mean']:.1f}" if len(lucb) else "-"
            cells += [best["rule"], f"{best['ratio']:.2f}", speedup]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join([*lines, ""])


# ----------------------------------------------------------------------------------------- GK 2016 Table 1
@dataclass(frozen=True)
class PaperRow:
    r"""One algorithm of GK 2016 Table 1 as the package runs it: its label, the agent's name and parameters
    (\(\delta\) aside), how it runs, and the paper's mean number of draws on each of its instances (by instance
    name)."""

    label: str
    name: str
    params: tuple[tuple[str, Any], ...]
    how: str
    paper: tuple[tuple[str, float], ...]


#: GK 2016 §6, Table 1: the mean number of draws at \(\delta = 0.1\) over \(N = 3000\) runs, on
#: \(\mu_1 = [0.5\ 0.45\ 0.43\ 0.4]\) and \(\mu_2 = [0.3\ 0.21\ 0.2\ 0.19\ 0.18]\) (Bernoulli); the numbers
#: and \(N\) as quoted, not rechecked against the paper's text (not available here). Their code (``mainBAI.jl``)
#: runs every algorithm with ``explo(t, n, delta) = log((log(t) + 1) / delta)``; its ``TrackAndStop`` is
#: D-tracking. Table 1's other columns (Chernoff-Racing, KL-Racing) have no agent here.
TABLE1_DELTA = 0.1
TABLE1_RUNS = 3000
TABLE1_INSTANCES = ("GK2016 mu1", "GK2016 mu2")
TABLE1: tuple[PaperRow, ...] = (
    PaperRow("Track-and-Stop", "TrackAndStop", (("tracking", "D"), ("threshold", "heuristic")),
             "D-tracking, GLR stop at ln((1 + ln t)/delta)", (("GK2016 mu1", 4052.0), ("GK2016 mu2", 1406.0))),
    PaperRow("KL-LUCB", "KLLUCB", (("rate", "gk2016"),),
             "KL bounds at ln((1 + ln t)/delta), t the samples; stop when L >= U", (("GK2016 mu1", 8437.0),
                                                                                   ("GK2016 mu2", 2716.0))),
)
#: the runs of a chunk of a Table 1 cell (the seeds of a cell depend on it)
TABLE1_CHUNK = 500


def table1_specs(runs: int = TABLE1_RUNS, seed: int = 2116) -> list[ExperimentSpec]:
    r"""One experiment per instance of GK 2016 Table 1: its algorithms (``TABLE1``) at \(\delta = 0.1\), ``runs`` runs,
    capped at ``CAP`` pulls; named ``GK2016 Table 1, <instance>``."""
    agents = tuple(AgentSpec(row.name, {**dict(row.params), "delta": TABLE1_DELTA}, row.label) for row in TABLE1)
    return [ExperimentSpec(env="BestArmIdentification-v0", agents=agents, budgets=(CAP,), runs=runs,
                           seed=seed + index, env_kwargs=_env_kwargs(_instance(name)), chunk=min(runs, TABLE1_CHUNK),
                           name=f"GK2016 Table 1, {name}")
            for index, name in enumerate(TABLE1_INSTANCES)]


def _table1_describe(summary: Any, spec: ExperimentSpec) -> Any:
    return summary.assign(instance=spec.name.removeprefix("GK2016 Table 1, "))


def table1_frame(summary: Any, paper_runs: int = TABLE1_RUNS) -> Any:
    r"""One row per algorithm of ``TABLE1`` and instance: the paper's mean number of draws, the package's mean pulls
    (``mean``), their standard error (``se``) and standard deviation over the ``runs``, its error rate,
    \(z = (\text{mean} - \text{paper}) / \text{se}\) and ``z_both``, the same difference over the standard error of
    a difference of two means of independent runs, the paper's estimated by the package's standard deviation over
    ``paper_runs`` runs."""
    import pandas as pd

    rows = []
    for row in TABLE1:
        for instance, paper in row.paper:
            cell = summary[(summary["agent"] == row.label) & (summary["instance"] == instance)]
            pulls = cell[cell["metric"] == "pulls"].iloc[0]
            error = cell[cell["metric"] == "error"].iloc[0]
            mean, se, runs = float(pulls["mean"]), float(pulls["se"]), int(pulls["runs"])
            sd = se * np.sqrt(runs)
            both = float(np.sqrt(se**2 + sd**2 / paper_runs))
            rows.append({"algorithm": row.label, "agent": row.name, "params": repr(dict(row.params)), "how": row.how,
                         "instance": instance, "delta": TABLE1_DELTA, "paper": paper, "paper_runs": paper_runs,
                         "mean": mean, "se": se, "sd": sd, "runs": runs, "error": float(error["mean"]),
                         "z": (mean - paper) / se, "z_both": (mean - paper) / both})
    return pd.DataFrame(rows)


def table1_markdown(table: Any) -> str:
    r"""GK 2016 Table 1 side by side: one row per algorithm, per instance the paper's number, the package's mean
    \(\pm\) its standard error and \(z\)."""
    instances = list(dict.fromkeys(table["instance"]))
    runs = ", ".join(str(r) for r in dict.fromkeys(table["runs"]))
    lines = [f"GK 2016 Table 1 side by side: delta = {TABLE1_DELTA:g}, Bernoulli arms. `paper`: the paper's mean "
             f"number of draws (N = {int(table['paper_runs'].iloc[0])} runs); `package`: the mean pulls until the "
             f"stop +- its standard error over {runs} runs; `z` = (package - paper) / se. `z_both` (in "
             "`table1.csv`) also counts the paper's sampling error.", "",
             "| algorithm | as run here | " + " | ".join(f"{i}: paper | {i}: package | {i}: z" for i in instances)
             + " |", "|---|---|" + "---|---|---|" * len(instances)]
    for label, rows in table.groupby("algorithm", sort=False):
        cells = []
        for instance in instances:
            r = rows[rows["instance"] == instance].iloc[0]
            cells += [f"{r['paper']:.0f}", f"{r['mean']:.0f} +- {r['se']:.0f}", f"{r['z']:+.2f}"]
        lines.append(f"| {label} | {rows['how'].iloc[0]} | " + " | ".join(cells) + " |")
    return "\n".join([*lines, ""])


# ----------------------------------------------------------------------------------------- allocations
def empirical_allocations(instance: Instance, label: str, runs: int, seed: int,
                          delta: float = ALLOCATION_DELTA) -> np.ndarray:
    r"""Play ``runs`` episodes of the study's agent ``label`` at ``delta`` on the instance (one vector env, every
    copy's first episode) and return each run's allocation \(N_i(\tau) / \tau\), shape ``(runs, K)``."""
    import gymnasium as gym

    from bandit_gym.experiments import build_agent

    spec = next(a for a in agents_for(instance, (delta,)) if a.display == f"{label}(delta={delta:g})")
    env = gym.make_vec("BestArmIdentification-v0", num_envs=runs, vectorization_mode="vector_entry_point",
                       budget=CAP, **_env_kwargs(instance))
    agent = build_agent(spec, env)
    agent.reset(seed=seed)
    obs, _ = env.reset(seed=seed)
    out = np.zeros((runs, len(instance.means)))
    pending = np.ones(runs, dtype=bool)
    while pending.any():
        obs, _, terminated, truncated, _ = env.step(agent.act(obs))
        done = (terminated | truncated) & pending
        counts = np.asarray(obs["counts"], dtype=np.float64)[done]
        out[done] = counts / counts.sum(axis=1, keepdims=True)
        pending &= ~done
    env.close()
    return out


def allocation_table(runs: int, instances: Sequence[Instance], seed: int = 2017) -> Any:
    r"""Mean empirical allocation (and its standard error) of each of ``ALLOCATION_AGENTS`` on each instance at
    ``ALLOCATION_DELTA``, next to \(w^*(\mu)\): one row per instance, agent and arm."""
    import pandas as pd

    rows = []
    for instance in instances:
        weights = best_arm_allocation(instance.means, instance.distribution, instance.sigma).weights
        for index, (label, _, _) in enumerate(AGENTS):
            if label not in ALLOCATION_AGENTS:
                continue
            shares = empirical_allocations(instance, label, runs, seed + 100 * index)
            for arm in range(len(instance.means)):
                rows.append({"instance": instance.name, "agent": label, "arm": arm, "mean": instance.means[arm],
                             "w_star": weights[arm], "share": shares[:, arm].mean(),
                             "share_se": shares[:, arm].std(ddof=1) / np.sqrt(runs)})
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------------------- figures
def plot_ratio(summary: Any, path: str | Path, title: str = "") -> Path:
    r"""One panel per instance: \(\mathbb{E}[\tau] / (\mathrm{kl}(\delta, 1 - \delta)\, T^*)\) against
    \(\log(1/\delta)\), one curve per agent (95% interval), log \(y\) axis; the bound is the line at 1."""
    pulls = summary[summary.metric == "pulls"]
    instances = list(dict.fromkeys(pulls["instance"]))
    fig, axes = _grid(len(instances), 2)
    for ax, name in zip(axes, instances, strict=True):
        panel = pulls[pulls.instance == name]
        for i, (rule, rows) in enumerate(panel.groupby("rule", sort=False)):
            scaled = rows.assign(mean=rows["ratio"], ci_low=rows["ci_low"] / rows["lower_bound"],
                                 ci_high=rows["ci_high"] / rows["lower_bound"])
            _errorbars(ax, np.log(1.0 / rows["delta"]), scaled, rule, i)
        ax.axhline(1.0, color="k", linestyle="--", linewidth=1, label="lower bound")
        ax.set_yscale("log")
        ax.set(xlabel="log(1/delta)", ylabel="E[tau] / (kl(delta,1-delta) T*)",
               title=f"{name} (T* = {panel['T_star'].iloc[0]:.0f})")
        ax.grid(alpha=0.3, which="both")
    return _finish(fig, axes, path, title)


def plot_errors(summary: Any, path: str | Path, title: str = "") -> Path:
    r"""One panel per \(\delta\): every agent's error rate with its exact 95% interval, instances side by side, and
    the line \(\text{error} = \delta\)."""
    errors = summary[summary.metric == "error"]
    deltas = sorted(set(errors["delta"]), reverse=True)
    instances = list(dict.fromkeys(errors["instance"]))
    fig, axes = _grid(len(deltas), 1, width=PAGE_WIDTH, height=2.8)
    for ax, delta in zip(axes, deltas, strict=True):
        panel = errors[errors.delta == delta]
        rules = list(dict.fromkeys(panel["rule"]))
        for i, rule in enumerate(rules):
            rows = panel[panel.rule == rule]
            x = [instances.index(name) for name in rows["instance"]]
            _errorbars(ax, x, rows, rule, i, offset=0.07 * (i - len(rules) / 2), line=False)
        ax.axhline(delta, color="k", linestyle=":", linewidth=1, label="error = delta")
        ax.set_xticks(range(len(instances)), [name.replace(" ", "\n") for name in instances], fontsize=8)
        top = max(2.5 * delta, float(panel["ci_high"].max()) * 1.1)  # every interval in full
        ax.set(ylabel="P(error)", title=f"delta = {delta:g}", ylim=(-0.02 * top, top))
        ax.grid(alpha=0.3)
    return _finish(fig, axes, path, title)


def plot_allocation(table: Any, path: str | Path, title: str = "") -> Path:
    r"""One panel per instance: each agent's mean allocation \(N_i(\tau) / \tau\) per arm (bars, \(\pm\) 2 standard
    errors) next to \(w^*(\mu)\) (black markers)."""
    instances = list(dict.fromkeys(table["instance"]))
    fig, axes = _grid(len(instances), 2)
    for ax, name in zip(axes, instances, strict=True):
        panel = table[table.instance == name]
        agents = list(dict.fromkeys(panel["agent"]))
        width = 0.8 / len(agents)
        for i, agent in enumerate(agents):
            rows = panel[panel.agent == agent]
            ax.bar(rows["arm"] + (i - (len(agents) - 1) / 2) * width, rows["share"], width, yerr=2 * rows["share_se"],
                   color=COLORS[i % len(COLORS)], label=agent, capsize=1.5)
        star = panel.drop_duplicates("arm")
        ax.plot(star["arm"], star["w_star"], "k_", markersize=18, markeredgewidth=2, label="w*(mu)")
        ax.set_xticks(star["arm"], [f"{m:g}" for m in star["mean"]], fontsize=8)
        ax.set(xlabel="arm (its mean)", ylabel="N_i(tau) / tau", title=name)
        ax.grid(alpha=0.3, axis="y")
    return _finish(fig, axes, path, title)


# ----------------------------------------------------------------------------------------- the study
def reproduce_fixed_confidence(
    out: str | Path, runs: int | None = None, quick: bool = False, jobs: int = 2, backend: str | None = None,
    progress: bool = True, agents: Sequence[AgentSpec] = (),
) -> Report:
    r"""Run the study and write ``results.csv`` (every agent \(\times\) instance \(\times\) \(\delta\) \(\times\)
    metric, with \(T^*\), the bound, the ratio and exact error intervals), ``study.md`` (the tables), ``goal.md``
    (the goal at \(\delta = 0.01\)),
    ``allocation.csv``, GK 2016 Table 1 side by side (``table1.csv``, ``table1.md``: ``TABLE1_RUNS`` runs per
    cell, ``QUICK.table1_runs`` with ``quick``, whatever ``runs``), the figures ``ratio.png``, ``errors.png``
    and ``allocation.png``, and the \(\delta\)-sweep (``sweep.run_sweep``: ``sweep.SWEEP_RUNS`` runs per cell,
    ``QUICK.sweep_runs`` at ``QUICK.sweep_deltas`` with ``quick``). ``agents`` (fixed-confidence agents, each
    configured with its \(\delta\)) are added to every instance's experiment, not to Table 1's nor to the sweep's."""
    out = Path(out)
    specs = with_agents(fixed_confidence_specs(runs=runs or (10 if quick else 50), quick=quick), agents)
    out.mkdir(parents=True, exist_ok=True)
    runs = specs[0].runs
    start = time.perf_counter()
    summary = run_specs(specs, out, _describe, jobs, backend, progress)
    summary.to_csv(out / "results.csv", index=False)
    (out / "study.md").write_text(study_markdown(summary, runs))
    (out / "goal.md").write_text(goal_markdown(summary))
    chosen = [_instance(spec.name) for spec in specs]
    allocation = allocation_table(runs, [i for i in chosen if i in LITERATURE])
    allocation.to_csv(out / "allocation.csv", index=False)
    table1_runs = QUICK.table1_runs if quick else TABLE1_RUNS
    table1 = table1_frame(run_specs(table1_specs(table1_runs), out, _table1_describe, jobs, backend, progress))
    table1.to_csv(out / "table1.csv", index=False)
    (out / "table1.md").write_text(table1_markdown(table1))
    from bandit_gym.studies.fixed_confidence.sweep import SWEEP_DELTAS, SWEEP_RUNS, run_sweep

    sweep = run_sweep(out, QUICK.sweep_runs if quick else SWEEP_RUNS, QUICK.sweep_deltas if quick else SWEEP_DELTAS,
                      jobs=jobs, progress=progress)
    figures = [
        plot_ratio(summary, out / "ratio.png", title=f"fixed confidence: E[tau] against the lower bound, {runs} runs"),
        plot_errors(summary, out / "errors.png", title=f"fixed confidence: error rate against delta, {runs} runs"),
        plot_allocation(allocation, out / "allocation.png",
                        title=f"fixed confidence: allocations at delta = {ALLOCATION_DELTA:g} against w*(mu), "
                              f"{runs} runs"),
    ]
    return Report(summary=summary, figures=[*figures, *sweep.figures], seconds=time.perf_counter() - start,
                  files=[out / "results.csv", out / "study.md", out / "goal.md", out / "allocation.csv",
                         out / "table1.csv", out / "table1.md", *figures, *sweep.files],
                  extras={"allocation": allocation, "table1": table1, "sweep": sweep.summary})

