r"""The fixed-confidence study's \(\delta\)-sweep: one sweep per problem, each normalised by its own lower bound.

Four fixed-confidence problems, each on one Bernoulli instance (``PROBLEMS``), each with its characteristic time
\(T^*(\mu)\) from ``bandit_gym.lower_bounds``:

- **best arm** (\(m = 1\)) on Garivier and Kaufmann (2016)'s \(\mu_1 = (0.5, 0.45, 0.43, 0.4)\): Track-and-Stop
  (D-tracking), EB-TCI, TTUCB and Frank-Wolfe Sampling stopped by the GLR rule, KL-LUCB by its own rule;
  ``best_arm_allocation``;
- **\(\epsilon\)-best arm**, \(\epsilon = 0.05\), on the same \(\mu_1\) (0.45 is exactly \(\epsilon\) below the best: a
  correct answer that no GLR stop can certify, as its \(T^*\) is infinite; the bound is that of the answer 0.5):
  EB-TC\(\epsilon\) (its slack the env's \(\epsilon\), Jourdan, Degenne and Kaufmann 2023's Corollary 1), and
  Track-and-Stop and EB-TCI, whose sampling targets the best arm and whose GLR stop reads \(\epsilon\);
  ``epsilon_best_arm_allocation``;
- **top-2** (\(m = 2\)) on (0.5, 0.45, 0.4, 0.35, 0.3), five arms 0.05 apart (\(T^* = 915\), about \(\mu_1\)'s):
  KL-LUCB and LUCB1 with their own rules, and Track-and-Stop, FWS and TS-KKT (a Top Two rule for top \(m\), You et
  al. 2023) by the GLR rule when they accept \(m = 2\) (``accepts``: the agent's ``check_m``); ``top_m_allocation``;
- **thresholding**, \(\theta = 0.5\), on (0.4, 0.45, 0.55, 0.6) (\(T^* = 499\)): Track-and-Stop (D-tracking of the
  closed-form \(w^*\)), uniform sampling, racing and APT's sampling, all stopped by the per-arm GLR rule;
  ``thresholding_allocation``.

Each GLR-stopped rule runs with two thresholds: ``"mixture"``, the tightest the package proves \(\delta\)-correct
whatever the sampling rule (Kaufmann and Koolen 2021's mixture martingales; ``agents/best_arm/_stopping.py``,
``agents/thresholding/_glr.py``), and ``"heuristic"``, \(\ln((1 + \ln t) / \delta)\) (GK 2016 §6), **outside the
theory**. KL-LUCB and LUCB1 keep their papers' rules (``"own"``, proved \(\delta\)-correct). The *proved* rules are
the ``mixture`` and ``own`` ones.

At each \(\delta\) of ``SWEEP_DELTAS`` every rule plays ``SWEEP_RUNS`` runs (``runs`` of ``run_sweep``), every
episode capped at ``CAP`` pulls (a capped run counts ``CAP`` pulls and its answer then; ``capped`` says how many).
Seeds: the env's from (``SWEEP_SEED``, problem, \(\delta\)), shared by the rules of a problem and \(\delta\) (common
random numbers: the same sample streams), the agent's also from its label and threshold; the deltas' runs are
independent.

Outputs (``run_sweep``): ``sweep.csv``, one row per problem, rule, threshold and \(\delta\): \(\mathbb{E}[\tau]\)
(``mean_tau``) with its 95% \(t\) interval, the lower bound \(\mathrm{kl}(\delta, 1 - \delta)\, T^*(\mu)\), the ratio
of the two (with the interval scaled), the errors, the error rate and the upper end of its exact (Clopper-Pearson)
95% interval, the capped runs; ``sweep.md``, a table per problem (every rule's ratio with its errors beside it) and
the goals (``GOALS``) decided on the rows; ``sweep.png``, a panel per problem, the ratio against \(\ln(1/\delta)\) on
a log axis.
"""

from __future__ import annotations

import math
import re
import time
import warnings
import zipfile
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bandit_gym.lower_bounds import (
    Allocation,
    best_arm_allocation,
    confidence_kl,
    epsilon_best_arm_allocation,
    thresholding_allocation,
    top_m_allocation,
)
from bandit_gym.studies._report import Report

SWEEP_DELTAS = (0.1, 0.01, 1e-3, 1e-4, 1e-6)
SWEEP_RUNS = 200
SWEEP_SEED = 2030
#: the cap on every episode's pulls (the study's ``reproduce.CAP``)
CAP = 10**7
MIXTURE, HEURISTIC, OWN = "mixture", "heuristic", "own"
#: the stops a theorem makes \(\delta\)-correct
PROVED = (MIXTURE, OWN)
THRESHOLDING_ENV = "ThresholdingBandit-v0"


@dataclass(frozen=True)
class Rule:
    r"""A sampling rule of the sweep: its label, the agent's name and parameters (\(\delta\) and threshold aside), and
    ``own``: stopped by its paper's own rule (else by the GLR rule, at each threshold)."""

    label: str
    agent: str
    params: tuple[tuple[str, Any], ...] = ()
    own: bool = False

    @property
    def thresholds(self) -> tuple[str, ...]:
        return (OWN,) if self.own else (MIXTURE, HEURISTIC)


@dataclass(frozen=True)
class Problem:
    """A fixed-confidence problem: its name, env id, Bernoulli means, the env's other arguments (``m``, ``epsilon``,
    ``threshold``), its rules and where the instance comes from."""

    name: str
    env: str
    means: tuple[float, ...]
    setting: tuple[tuple[str, Any], ...]
    rules: tuple[Rule, ...]
    source: str

    def allocation(self) -> Allocation:
        r"""\(T^*(\mu)\) and \(w^*(\mu)\) of the problem (``bandit_gym.lower_bounds``)."""
        kwargs = dict(self.setting)
        if self.env == THRESHOLDING_ENV:
            return thresholding_allocation(self.means, kwargs["threshold"])
        if kwargs.get("epsilon", 0.0) > 0.0:
            return epsilon_best_arm_allocation(self.means, kwargs["epsilon"])
        if kwargs.get("m", 1) > 1:
            return top_m_allocation(self.means, kwargs["m"])
        return best_arm_allocation(self.means)

    @property
    def instance(self) -> str:
        extra = "".join(f", {key} = {value:g}" for key, value in self.setting)
        return f"({', '.join(f'{m:g}' for m in self.means)}){extra}"


MU1 = (0.5, 0.45, 0.43, 0.4)
TAS_D = Rule("TaS-D", "TrackAndStop", (("tracking", "D"),))
EB_TCI, FWS = Rule("EB-TCI", "EBTCI"), Rule("FWS", "FWSampling")
KL_LUCB = Rule("KL-LUCB", "KLLUCB", own=True)
PROBLEMS = (
    Problem("best arm", "BestArmIdentification-v0", MU1, (), (TAS_D, EB_TCI, Rule("TTUCB", "TTUCB"), FWS, KL_LUCB),
            "Garivier and Kaufmann 2016, §6 (mu1)"),
    Problem("epsilon-best arm", "BestArmIdentification-v0", MU1, (("epsilon", 0.05),),
            (Rule("EB-TC-eps", "EBTCEpsilon", (("epsilon_0", None),)), TAS_D, EB_TCI),
            "Garivier and Kaufmann 2016's mu1, epsilon = 0.05"),
    Problem("top-2", "BestArmIdentification-v0", (0.5, 0.45, 0.4, 0.35, 0.3), (("m", 2),),
            (KL_LUCB, Rule("LUCB1", "LUCB", own=True), TAS_D, FWS, Rule("TS-KKT", "TSKKT")),
            "five arms 0.05 apart, the top two sought"),
    Problem("thresholding", THRESHOLDING_ENV, (0.4, 0.45, 0.55, 0.6), (("threshold", 0.5),),
            (Rule("TaS-D", "ThresholdingTaS"), Rule("Uniform", "ThresholdingUniform"),
             Rule("Racing", "ThresholdingRacing"), Rule("APT", "ThresholdingAPT")),
            "two arms 0.05 and two 0.1 from theta = 0.5"),
)


def accepts(rule: Rule, problem: Problem) -> bool:
    r"""Whether the rule's agent plays the problem's \(m\) (its ``check_m``; every agent plays \(m = 1\))."""
    from bandit_gym.agents import agent_class

    m = dict(problem.setting).get("m", 1)
    check = getattr(agent_class(rule.agent)(), "check_m", None)
    if m == 1 or check is None:
        return True
    try:
        check(m)
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class Cell:
    r"""One cell of the sweep: a problem, a rule, its threshold (``OWN`` for a rule's own stop) and \(\delta\)."""

    problem: Problem
    rule: Rule
    threshold: str
    delta: float

    @property
    def key(self) -> str:
        text = f"{self.problem.name} {self.rule.label} {self.threshold} {self.delta:g}"
        return re.sub(r"[^A-Za-z0-9.]+", "-", text).strip("-")


def sweep_cells(problems: Sequence[Problem], deltas: Sequence[float]) -> list[Cell]:
    r"""Every cell: per problem, each rule that accepts it, at each of its thresholds and each \(\delta\)."""
    return [Cell(problem, rule, threshold, delta) for problem in problems for rule in problem.rules
            if accepts(rule, problem) for threshold in rule.thresholds for delta in deltas]


def _seed(*key: int) -> int:
    return int(np.random.SeedSequence(key[0], spawn_key=key[1:]).generate_state(1, np.uint32)[0])


def play(cell: Cell, runs: int, seed: int = SWEEP_SEED) -> dict[str, np.ndarray]:
    """Play ``runs`` episodes of the cell (one vector env, every copy's first episode): each run's pulls until the
    stop (``pulls``), its error (``error``), and the CPU seconds it took (``cpu``)."""
    import gymnasium as gym

    from bandit_gym.agents import agent_class
    from bandit_gym.rollout import play_compiled, play_vector

    start = time.process_time()
    problem = cell.problem
    params = {**dict(cell.rule.params), "delta": cell.delta}
    if cell.threshold != OWN:
        params["threshold"] = cell.threshold
    agent = agent_class(cell.rule.agent)(**params)
    env = gym.make_vec(problem.env, num_envs=runs, vectorization_mode="vector_entry_point", copy=False, budget=CAP,
                       setting="fixed_confidence", common_random_numbers=True, means=list(problem.means),
                       **dict(problem.setting))
    where = (zlib.crc32(problem.name.encode()), zlib.crc32(f"{cell.delta:g}".encode()))
    env_seed = _seed(seed, *where)
    agent_seed = _seed(seed, *where, zlib.crc32(f"{cell.rule.label} {cell.threshold}".encode()))
    result = None
    if problem.env != THRESHOLDING_ENV:  # the thresholding kernels play a fixed budget: step by step there
        result = play_compiled(env, agent, seed=env_seed, agent_seed=agent_seed)
    if result is None:
        result = play_vector(env, agent, seed=env_seed, agent_seed=agent_seed)
    env.close()
    return {"pulls": np.asarray(result["pulls"], dtype=np.int64), "error": np.asarray(result["error"], dtype=np.int64),
            "cpu": np.asarray(time.process_time() - start)}


def _cached(folder: Path, cell: Cell, runs: int, seed: int, force: bool = False) -> tuple[dict[str, np.ndarray], str]:
    """``play``, kept in ``folder`` (keyed by the cell, runs and seed) so that an interrupted sweep resumes; with
    ``force`` played again whatever is stored. Returns the cell's arrays and what became of its stored file:
    ``"reused"``, ``"played"``, or ``"damaged: NAME (why)"`` (a file that cannot be read is played again and
    replaced)."""
    path = folder / f"{cell.key}-{runs}runs-seed{seed}.npz"
    status = "played"
    if path.exists() and not force:
        try:
            with np.load(path) as data:
                return {key: data[key] for key in ("pulls", "error", "cpu")}, "reused"
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as error:
            status = f"damaged: {path} ({type(error).__name__}: {error})"
    out = play(cell, runs, seed)
    partial = path.with_suffix(".partial.npz")
    np.savez(partial, pulls=out["pulls"], error=out["error"], cpu=out["cpu"])
    partial.replace(path)
    return out, status


# ----------------------------------------------------------------------------------------- the table
def sweep_frame(cells: Sequence[Cell], results: Sequence[dict[str, np.ndarray]]) -> Any:
    r"""One row per cell: \(\mathbb{E}[\tau]\) with its 95% \(t\) interval, \(T^*\), the bound
    \(\mathrm{kl}(\delta, 1 - \delta)\, T^*\), the ratio (its interval scaled), errors, error rate and the upper end of
    its exact 95% interval, capped runs."""
    import pandas as pd
    from scipy import stats

    from bandit_gym.studies._stats import clopper_pearson

    stars = {problem: problem.allocation().time for problem in dict.fromkeys(cell.problem for cell in cells)}
    rows = []
    for cell, result in zip(cells, results, strict=True):
        pulls = result["pulls"].astype(np.float64)
        runs = pulls.size
        mean, se = pulls.mean(), pulls.std(ddof=1) / math.sqrt(runs)
        half = float(stats.t.ppf(0.975, runs - 1)) * se
        bound = stars[cell.problem] * confidence_kl(cell.delta)
        errors = int(result["error"].sum())
        rows.append({"problem": cell.problem.name, "instance": cell.problem.instance, "source": cell.problem.source,
                     "rule": cell.rule.label,
                     "agent": cell.rule.agent, "threshold": cell.threshold, "proved": cell.threshold in PROVED,
                     "delta": cell.delta, "runs": runs, "mean_tau": mean, "se_tau": se, "tau_ci_low": mean - half,
                     "tau_ci_high": mean + half, "T_star": stars[cell.problem], "lower_bound": bound,
                     "ratio": mean / bound, "ratio_ci_low": (mean - half) / bound,
                     "ratio_ci_high": (mean + half) / bound, "errors": errors, "error_rate": errors / runs,
                     "error_upper": clopper_pearson(errors, runs)[1], "capped": int((pulls >= CAP).sum())})
    return pd.DataFrame(rows)


def sweep_markdown(frame: Any) -> str:
    r"""One table per problem: per rule and threshold, at each \(\delta\), the ratio
    \(\mathbb{E}[\tau] / (\mathrm{kl}(\delta, 1 - \delta)\, T^*)\) and the errors beside it (and the capped runs, where
    any); the bound's row first."""
    deltas = sorted(set(frame["delta"]), reverse=True)
    runs = ", ".join(str(r) for r in dict.fromkeys(frame["runs"]))
    lines = [f"The delta-sweep, {runs} runs per cell: per rule and delta, the ratio E[tau] / (kl(delta, 1 - delta) "
             "T*(mu)) of the mean pulls until the stop to the lower bound, then the errors over the runs. `mixture`: "
             "the GLR rule at the tightest proved threshold; `own`: the rule's paper's stop (proved); `heuristic`: "
             "the GLR rule at ln((1 + ln t) / delta), outside the theory. Every number with its interval is in "
             "`sweep.csv`.", ""]
    for name, rows in frame.groupby("problem", sort=False):
        first = rows.iloc[0]
        lines += [f"### {name}: {first['instance']}, Bernoulli, T* = {first['T_star']:.1f}", "",
                  f"{first['source']}.", "",
                  "| rule | threshold | " + " | ".join(f"delta = {d:g}" for d in deltas) + " |",
                  "|---|---|" + "---|" * len(deltas)]
        bounds = rows.drop_duplicates("delta").set_index("delta")["lower_bound"]
        lines.append("| lower bound | (pulls) | " + " | ".join(f"{bounds[d]:.0f}" for d in deltas) + " |")
        for (rule, threshold), cell in rows.groupby(["rule", "threshold"], sort=False):
            by = cell.set_index("delta")
            entries = [_entry(by.loc[d]) if d in by.index else "-" for d in deltas]
            lines.append(f"| {rule} | {threshold} | " + " | ".join(entries) + " |")
        lines.append("")
    return "\n".join(lines)


def _entry(row: Any) -> str:
    capped = f", {int(row['capped'])} capped" if row["capped"] else ""
    return f"{row['ratio']:.2f} ({int(row['errors'])}/{int(row['runs'])} errors{capped})"


# ----------------------------------------------------------------------------------------- the goals
@dataclass(frozen=True)
class Goal:
    r"""One goal of the sweep: its text, the \(\delta\) it is read at (None: every \(\delta\)), the stops it reads and
    the largest ratio it allows (None: the error goal, every proved rule's error rate at most \(\delta\))."""

    text: str
    delta: float | None
    pool: tuple[str, ...]
    target: float | None


GOALS = (
    Goal("at delta = 0.01 the best rule (the heuristic threshold allowed) within 1.5x of the bound", 0.01,
         (MIXTURE, OWN, HEURISTIC), 1.5),
    Goal("at delta = 0.01 the best proved rule within 3x of the bound", 0.01, PROVED, 3.0),
    Goal("at delta = 1e-6 the best proved rule within 1.5x of the bound", 1e-6, PROVED, 1.5),
    Goal("every proved rule's error rate at most delta", None, PROVED, None),
)


def goal_rows(frame: Any) -> list[dict[str, str]]:
    r"""Each goal decided on each problem's rows: the value it reads, and ``met`` / ``not met`` (``not run`` when the
    sweep has no row at the goal's \(\delta\)). Ratio goals read the point estimates of the means (their intervals are
    in ``sweep.csv``); the error goal reads the observed rates (an error rate above \(\delta\) anywhere fails it)."""
    out = []
    for goal in GOALS:
        for name, rows in frame.groupby("problem", sort=False):
            pool = rows[rows["threshold"].isin(goal.pool)]
            if goal.target is None:
                above = pool[pool["error_rate"] > pool["delta"]]
                value = f"{int(pool['errors'].sum())} errors in {int(pool['runs'].sum())} runs"
                if pool["errors"].any():
                    worst = pool.loc[(pool["error_rate"] / pool["delta"]).idxmax()]
                    value += (f"; the largest rate against delta: {worst['rule']} ({worst['threshold']}), "
                              f"{int(worst['errors'])}/{int(worst['runs'])} at delta = {worst['delta']:g}")
                verdict = "met" if above.empty else "not met"
            else:
                pool = pool[np.isclose(pool["delta"], goal.delta or 0.0)]
                if pool.empty:
                    out.append({"goal": goal.text, "problem": name, "value": "-", "verdict": "not run"})
                    continue
                best = pool.loc[pool["ratio"].idxmin()]
                value = (f"{best['rule']} ({best['threshold']}): {best['ratio']:.2f} [{best['ratio_ci_low']:.2f}, "
                         f"{best['ratio_ci_high']:.2f}]")
                verdict = "met" if best["ratio"] <= goal.target else "not met"
            out.append({"goal": goal.text, "problem": name, "value": value, "verdict": verdict})
    return out


def goals_markdown(frame: Any) -> str:
    """The goals' table (``goal_rows``), then one line per goal: met on every problem, or where not."""
    rows = goal_rows(frame)
    lines = ["## Goals", "", "Each goal decided on each problem's rows: ratios by the point estimate of E[tau] (95% "
             "interval in brackets), the error goal by the observed error rates.", "",
             "| goal | problem | best rule: ratio [95% CI], or the errors | verdict |", "|---|---|---|---|"]
    lines += [f"| {r['goal']} | {r['problem']} | {r['value']} | **{r['verdict']}** |" for r in rows]
    lines.append("")
    for goal in GOALS:
        mine = [r for r in rows if r["goal"] == goal.text]
        missed = [r["problem"] for r in mine if r["verdict"] == "not met"]
        unrun = [r["problem"] for r in mine if r["verdict"] == "not run"]
        if len(unrun) == len(mine):
            verdict = f"**not run** (no row at delta = {goal.delta:g})"
        elif missed:
            verdict = f"**not met** on {', '.join(missed)} ({len(mine) - len(missed) - len(unrun)} of {len(mine)} met)"
        else:
            verdict = "**met** on every problem" + (f" run (not run on {', '.join(unrun)})" if unrun else "")
        lines.append(f"- {goal.text[0].upper() + goal.text[1:]}: {verdict}.")
    return "\n".join([*lines, ""])


# ----------------------------------------------------------------------------------------- the figure
def plot_sweep(frame: Any, path: str | Path, title: str = "") -> Path:
    r"""One panel per problem: the ratio \(\mathbb{E}[\tau] / (\mathrm{kl}(\delta, 1 - \delta)\, T^*)\) against
    \(\ln(1/\delta)\) on a log axis (95% intervals), every rule (one colour per sampling rule; solid: a proved stop,
    dashed: the heuristic threshold), log \(y\) axis, and the bound at 1."""
    from matplotlib.lines import Line2D
    from matplotlib.ticker import (
        FixedFormatter,
        FixedLocator,
        FormatStrFormatter,
        LogLocator,
        NullFormatter,
        NullLocator,
    )

    from bandit_gym.plotting import COLORS, _finish, _grid

    problems = list(dict.fromkeys(frame["problem"]))
    colors = {rule: COLORS[i % len(COLORS)] for i, rule in enumerate(dict.fromkeys(frame["rule"]))}
    fig, axes = _grid(len(problems), 2)
    styles: tuple[tuple[Any, str], ...] = (("-", "proved stop (mixture or own)"), ("--", "heuristic threshold"),
                                           (":", "lower bound (ratio 1)"))
    for style, text in styles:  # the legend's first column
        axes[0].add_line(Line2D([], [], color="k", linestyle=style, label=text))
    for ax, name in zip(axes, problems, strict=True):
        panel = frame[frame["problem"] == name]
        for (rule, threshold), rows in panel.groupby(["rule", "threshold"], sort=False):
            rows = rows.sort_values("delta", ascending=False)
            ax.errorbar(np.log(1.0 / rows["delta"]), rows["ratio"],
                        yerr=[rows["ratio"] - rows["ratio_ci_low"], rows["ratio_ci_high"] - rows["ratio"]],
                        color=colors[rule], linestyle="--" if threshold == HEURISTIC else "-", marker="o",
                        markersize=3, capsize=2, linewidth=1.3)
        ax.axhline(1.0, color="k", linestyle=":", linewidth=1.2)
        ax.set_xscale("log")
        ax.set_yscale("log")
        deltas = sorted(set(panel["delta"]), reverse=True)
        ax.xaxis.set_major_locator(FixedLocator([math.log(1.0 / d) for d in deltas]))
        ax.xaxis.set_major_formatter(FixedFormatter([f"{math.log(1.0 / d):.1f}\n({_short(d)})" for d in deltas]))
        ax.xaxis.set_minor_locator(NullLocator())
        ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(FormatStrFormatter("%g"))
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.set(xlabel="ln(1/delta)  (delta)", ylabel="E[tau] / (kl(delta,1-delta) T*)",
               title=f"{name} (T* = {panel['T_star'].iloc[0]:.0f})")
        ax.grid(alpha=0.3, which="both")
        for rule in dict.fromkeys(panel["rule"]):  # the legend's entries: each sampling rule once
            ax.plot([], [], color=colors[rule], linewidth=3, label=rule)
    return _finish(fig, axes, path, title, columns=5)


def _short(delta: float) -> str:
    r"""\(\delta\) as a tick label: 0.1 and 0.01 as they are, a smaller power of ten as ``1e-3``."""
    exponent = round(math.log10(delta))
    return f"1e{exponent}" if delta < 0.01 and math.isclose(delta, 10.0**exponent) else f"{delta:g}"


# ----------------------------------------------------------------------------------------- the sweep
def run_sweep(out: str | Path, runs: int = SWEEP_RUNS, deltas: Sequence[float] = SWEEP_DELTAS,
              problems: Sequence[Problem] | None = None, jobs: int = 1, progress: bool = False,
              seed: int = SWEEP_SEED) -> Report:
    """Play every cell of ``problems`` (``sweep_cells``; default ``PROBLEMS``) in ``jobs`` worker processes, each
    cell kept under ``out/sweep-cells/<the package's source fingerprint>`` (an interrupted sweep resumes, changed
    code plays again), and write ``sweep.csv``, ``sweep.md`` (the tables and the goals) and ``sweep.png`` into
    ``out``. The report's ``extras``
    hold ``cpu``, the CPU seconds the cells took when played (a cell read back counts its first play's)."""
    from joblib import Parallel, delayed

    from bandit_gym.experiments import current_stored_cells
    from bandit_gym.jit import source_fingerprint

    start = time.perf_counter()
    out = Path(out)
    folder = out / "sweep-cells" / source_fingerprint()[:16]
    folder.mkdir(parents=True, exist_ok=True)
    cells = sweep_cells(PROBLEMS if problems is None else problems, deltas)
    # the longest cells first; at one delta the rules interleaved (one threshold after the other), so that two
    # workers seldom compile one rule at once
    order = sorted(range(len(cells)), key=lambda i: (cells[i].delta, cells[i].threshold))
    tally = current_stored_cells()  # bandit-gym reproduce's: its --force, and its count of the reused cells
    force = tally is not None and tally.force
    work = Parallel(n_jobs=jobs, return_as="generator")(delayed(_cached)(folder, cells[i], runs, seed, force)
                                                        for i in order)
    if progress:
        from tqdm import tqdm

        work = tqdm(work, total=len(cells), desc="fixed-confidence sweep")
    results: list[dict[str, np.ndarray]] = [{}] * len(cells)
    for i, (result, status) in zip(order, work, strict=True):
        results[i] = result
        if tally is not None and status == "reused":
            tally.reused += 1
        elif tally is not None and status.startswith("damaged: "):
            tally.damaged.append(status.removeprefix("damaged: "))
        elif status.startswith("damaged: "):
            warnings.warn(f"the sweep's cell {status.removeprefix('damaged: ')} was damaged: played again",
                          stacklevel=2)
    frame = sweep_frame(cells, results)
    frame.to_csv(out / "sweep.csv", index=False)
    (out / "sweep.md").write_text(sweep_markdown(frame) + "\n" + goals_markdown(frame))
    figure = plot_sweep(frame, out / "sweep.png", title=f"fixed confidence: E[tau] against the lower bound as delta "
                                                        f"falls, {runs} runs per cell")
    cpu = float(sum(float(r["cpu"]) for r in results))
    return Report(summary=frame, files=[out / "sweep.csv", out / "sweep.md", figure], figures=[figure],
                  seconds=time.perf_counter() - start, extras={"cpu": cpu})
