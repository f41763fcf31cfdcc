"""The figure and the summary table of the arm-wise studies. The figure: on every held-out setting, the mean regret
of each learned policy (one dot per seed) and of Uniform, divided by the best paper agent's on the same runs (log
scale; 1 is the best paper agent, the dashed line is 10% above it). The table (``DOCS/summary.md``): per setting,
the best paper agent's, Uniform's and each seed's mean, and how the seeds compare with the best paper agent and
with Uniform in the paired two-sided t-tests (p < 0.05, uncorrected; "3/3 better" means every seed is
significantly better). Reads ``DOCS/PROBLEM.csv`` and ``DOCS/PROBLEM_tests.csv`` written by
``scripts/rl_armwise.py``.

    python scripts/rl_armwise_figure.py --docs docs/rl-armwise
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd

from bandit_gym.plotting import save_figure

ORDER = ("thresholding", "threshold", "best_arm", "best_arm_dev_select", "top_k", "correlated")


def settings(docs: Path) -> Iterator[tuple[str, str, str, pd.DataFrame, pd.DataFrame]]:
    """Every held-out setting of the studies found under ``docs``: problem, setting, best paper agent, its rows of
    the table, its paired tests."""
    for problem in ORDER:
        if not (docs / f"{problem}.csv").is_file():
            continue
        table = pd.read_csv(docs / f"{problem}.csv")
        tests = pd.read_csv(docs / f"{problem}_tests.csv")
        for setting, cells in table.groupby("setting", sort=False):
            tested = tests[tests.setting == setting]
            yield problem, str(setting), tested[tested.against != "Uniform"]["against"].iloc[0], cells, tested


def ratios(docs: Path) -> pd.DataFrame:
    """One row per problem, setting and agent (the seeds and Uniform): its mean over the best paper agent's."""
    rows = []
    for problem, setting, best, cells, _ in settings(docs):
        reference = cells.loc[cells.agent == best, "mean"].iloc[0]
        for row in cells.itertuples():
            if row.agent == "Uniform" or row.agent.startswith("armwise"):
                rows.append({"problem": problem, "setting": setting, "best": best, "agent": row.agent,
                             "ratio": row.mean / reference if reference > 0 else float("nan")})
    return pd.DataFrame(rows)


def verdict(tests: pd.DataFrame) -> str:
    """How the seeds compare in their paired tests: better / worse (significant, p < 0.05) / not different."""
    better = int(((tests.p_value < 0.05) & (tests.difference < 0)).sum())
    worse = int(((tests.p_value < 0.05) & (tests.difference > 0)).sum())
    same = len(tests) - better - worse
    parts = [f"{n}/{len(tests)} {word}" for n, word in ((better, "better"), (worse, "worse"), (same, "no difference"))
             if n]
    return ", ".join(parts)


def summary(docs: Path) -> str:
    """The summary table, Markdown."""
    lines = ["| family | held-out setting | best paper agent | Uniform | arm-wise seeds 0 / 1 / 2 | ratio to best "
             "| against the best paper agent | against Uniform |", "|---|---|---|---|---|---|---|---|"]
    for problem, setting, best, cells, tested in settings(docs):
        mean = dict(zip(cells.agent, cells["mean"], strict=True))
        seeds = [agent for agent in cells.agent if agent.startswith("armwise")]
        ratios = [mean[s] / mean[best] for s in seeds] if mean[best] > 0 else []
        lines.append(f"| {problem} | {setting} | {best} {mean[best]:.4g} | {mean['Uniform']:.4g} | "
                     f"{' / '.join(f'{mean[s]:.4g}' for s in seeds)} | "
                     f"{' / '.join(f'{r:.2f}' for r in ratios) or '-'} | "
                     f"{verdict(tested[tested.against == best])} | "
                     f"{verdict(tested[tested.against == 'Uniform'])} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=Path, default=Path("docs/rl-armwise"))
    parser.add_argument("--out", type=Path, default=None, help="PNG (default DOCS/heldout.png)")
    args = parser.parse_args(argv)
    data = ratios(args.docs)
    settings = list(dict.fromkeys(zip(data.problem, data.setting, data.best, strict=True)))
    fig, ax = plt.subplots(figsize=(7.8, 0.38 * len(settings) + 1.6), layout="constrained")  # 8 pt: 10.7 px at 748 px
    for y, (problem, setting, _) in enumerate(settings):
        cells = data[(data.problem == problem) & (data.setting == setting)]
        seeds = cells[cells.agent.str.startswith("armwise")]
        ax.scatter(seeds.ratio, [y] * len(seeds), color="tab:blue", s=22, zorder=3,
                   label="arm-wise PPO (one dot per seed)" if y == 0 else None)
        uniform = cells[cells.agent == "Uniform"]
        ax.scatter(uniform.ratio, [y] * len(uniform), color="tab:gray", marker="x", s=30, zorder=3,
                   label="Uniform" if y == 0 else None)
    ax.axvline(1.0, color="tab:red", lw=1, label="best paper agent of the setting")
    ax.axvline(1.1, color="tab:red", lw=1, ls="--", label="10% above it")
    ax.set_xscale("log")
    ax.set_yticks(range(len(settings)), [f"{p}: {s}\n(best: {b})" for p, s, b in settings], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("mean regret / best paper agent's mean regret\n(same runs; log scale)")
    ax.set_title("Learned (arm-wise PPO) against designed,\non held-out settings")
    ax.grid(axis="x", which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    out = args.out or args.docs / "heldout.png"
    save_figure(fig, out, dpi=120)
    print(f"wrote {out}")
    (args.docs / "summary.md").write_text(summary(args.docs))
    print(f"wrote {args.docs / 'summary.md'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
