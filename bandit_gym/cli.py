"""Command line: ``bandit-gym list | run SPEC | reproduce PAPER | stats FOLDER | claims | plot RESULTS |
notebooks DOC.md``."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym


def _list() -> str:
    import bandit_gym
    from bandit_gym.agents import AGENTS

    lines = ["Environments (gym.make(id); gym.make_vec(id, num_envs=N, vectorization_mode='vector_entry_point')):"]
    width = max(map(len, bandit_gym.ENV_SPECS))
    for env_id, (_stem, _kwargs, paper, description) in bandit_gym.ENV_SPECS.items():
        assert env_id in gym.registry
        lines.append(f"  {env_id.ljust(width)}  [{paper}] {description}")
    lines.append("")
    lines.append("Agents (bandit_gym.agents):")
    width = max(map(len, AGENTS))
    for name, cls in AGENTS.items():
        summary = (cls.__doc__ or "").strip().splitlines()[0]
        lines.append(f"  {name.ljust(width)}  [{', '.join(cls.families)}] {summary}")
    lines.append("")
    lines.append("Reproductions (bandit-gym reproduce PAPER): tao2019, abernethy2016, gabillon2012, chen2017, "
                 "hoffman2014")
    return "\n".join(lines)


def _add_parallel(parser: argparse.ArgumentParser) -> None:
    from bandit_gym.experiments import BACKENDS

    parser.add_argument("--jobs", type=int, default=2, help="parallel workers (default 2)")
    parser.add_argument("--backend", choices=BACKENDS, default=None,
                        help="joblib backend (default: local processes); dask starts a local cluster unless "
                             "--scheduler is given")
    parser.add_argument("--scheduler", default=None, help="address of a running Dask scheduler")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")


def _dask_client(args: argparse.Namespace) -> object | None:
    if args.backend != "dask":
        return None
    from dask.distributed import Client, LocalCluster

    if args.scheduler:
        return Client(args.scheduler)
    return Client(LocalCluster(n_workers=args.jobs, threads_per_worker=1))


def _import_from_here() -> None:
    """Let a spec's import paths ``module:Class`` find modules in the working directory (as ``python -m`` does)."""
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())


def _run(args: argparse.Namespace) -> int:
    from bandit_gym.experiments import load_specs, run_experiment

    _import_from_here()
    try:  # the spec's mistakes (an unknown agent name, a bad import path, ...) are one line, not a traceback
        specs = load_specs(args.spec)
    except (OSError, ValueError, TypeError) as error:
        print(f"bandit-gym run: {args.spec}: {error}", file=sys.stderr)
        return 2
    out = Path(args.out or Path(args.spec).with_suffix(""))
    client = _dask_client(args)
    try:
        for spec in specs:
            folder = out / (spec.name or spec.env).replace(" ", "_") if len(specs) > 1 else out
            try:
                result = run_experiment(spec, out=folder, jobs=args.jobs, backend=args.backend,
                                        progress=not args.quiet)
            except ValueError as error:  # e.g. the folder holds another spec's results
                print(f"bandit-gym run: {error}", file=sys.stderr)
                return 2
            summary = result.summary()  # run_experiment wrote it to results.csv
            print(summary.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
            print(f"-> {folder / 'results.csv'}")
    finally:
        if client is not None:
            client.close()  # type: ignore[attr-defined]
    return 0


def _reproduce(args: argparse.Namespace) -> int:
    from bandit_gym.reproduce import PAPERS

    client = _dask_client(args)
    try:
        out = Path(args.out or f"results/{args.paper}{'-quick' if args.quick else ''}")
        report = PAPERS[args.paper](out, runs=args.runs, quick=args.quick, jobs=args.jobs, backend=args.backend,
                                    progress=not args.quiet)
    finally:
        if client is not None:
            client.close()  # type: ignore[attr-defined]
    for path in report["files"]:
        print(f"wrote {path}")
    print(f"finished in {report['seconds']:.1f} s")
    return 0


def _stats(args: argparse.Namespace) -> int:
    from bandit_gym.claims._stats import holm
    from bandit_gym.experiments import METRICS, ExperimentResult

    _import_from_here()
    try:
        result = ExperimentResult.load(args.folder)
    except (OSError, ValueError, TypeError) as error:
        print(f"bandit-gym stats: {error}", file=sys.stderr)
        return 2
    labels = [agent.display for agent in result.spec.agents]
    metrics = METRICS[result.spec.family]
    reference = args.reference or labels[0]
    metric = args.metric or metrics[0]
    if reference not in labels:
        print(f"bandit-gym stats: --reference {reference!r} is not an agent of this experiment; choose one of "
              f"{', '.join(labels)}", file=sys.stderr)
        return 2
    if metric not in metrics:
        print(f"bandit-gym stats: --metric {metric!r} is not recorded here; choose one of {', '.join(metrics)}",
              file=sys.stderr)
        return 2
    summary = result.summary()
    table = summary[summary["metric"] == metric].pivot_table(index="agent", columns="budget", values="mean",
                                                             sort=False)
    print(f"{result.spec.title}: mean {metric} over {result.spec.runs} runs")
    print(table.to_string(float_format=lambda v: f"{v:.4g}"))
    tests = result.paired_tests(reference, metric)
    tests["p_holm"] = holm(tests["p_value"].to_numpy())
    tests["significant"] = tests["p_holm"] < 0.05
    print(f"\nTwo-tailed paired t-tests against {reference} (mean_difference = agent - {reference}); p_holm: Holm's "
          f"correction over all {len(tests)} tests of this table")
    columns = ["agent", "budget", "mean_difference", "t", "p_value", "p_holm", "significant"]
    print(tests[columns].to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    return 0


def _claims(args: argparse.Namespace) -> int:
    from bandit_gym.claims import check_ledger, write_ledger

    try:
        return _claims_in(args, check_ledger, write_ledger)
    except FileNotFoundError as error:
        print(f"bandit-gym claims: {error}", file=sys.stderr)
        return 2


def _claims_in(args: argparse.Namespace, check_ledger: Any, write_ledger: Any) -> int:
    if args.check:
        stale = check_ledger(args.docs)
        if stale:
            print(f"bandit-gym claims: {', '.join(stale)} in {args.docs} differ from what the results there give; "
                  f"run `bandit-gym claims --docs {args.docs}`", file=sys.stderr)
            return 1
        print(f"{args.docs}/claims.md and claims.csv are current")
        return 0
    for path in write_ledger(args.docs, args.out, args.readme):
        print(f"wrote {path}")
    return 0


def _plot(args: argparse.Namespace) -> int:
    import pandas as pd

    from bandit_gym.plotting import plot_results

    results = Path(args.results)
    csv = results / "results.csv" if results.is_dir() else results
    if not csv.is_file():
        print(f"bandit-gym plot: {csv} does not exist; pass a results.csv or the folder `bandit-gym run` wrote",
              file=sys.stderr)
        return 2
    out = Path(args.out) if args.out else csv.with_suffix(".png") if args.metric is None else \
        csv.with_name(f"{csv.stem}-{args.metric}.png")
    try:
        path = plot_results(pd.read_csv(csv), out, metric=args.metric, title=args.title or "")
    except ValueError as error:
        print(f"bandit-gym plot: {error}", file=sys.stderr)
        return 2
    print(f"wrote {path}")
    return 0


def _notebooks(args: argparse.Namespace) -> int:
    try:
        from bandit_gym.notebooks import build_all

        written = build_all(args.docs, args.out)
    except (ImportError, OSError, ValueError) as error:
        print(f"bandit-gym notebooks: {error}", file=sys.stderr)
        return 2
    for student, solutions in written:
        print(f"wrote {student} (student) and {solutions} (solutions)")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bandit-gym", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="print the registered envs, the agents and the reproductions")
    run = sub.add_parser("run", help="run an experiment spec (TOML or JSON)")
    run.add_argument("spec", help="the spec file; an agent's name is a built-in name, a registered or entry-point "
                                  "name, or an import path 'package.module:Class' (importable from the working "
                                  "directory or PYTHONPATH)")
    run.add_argument("--out", help="results folder (default: the spec's path without its suffix)")
    _add_parallel(run)
    rep = sub.add_parser("reproduce", help="reproduce a paper's figure and tables")
    rep.add_argument("paper", choices=["tao2019", "abernethy2016", "gabillon2012", "chen2017", "hoffman2014"])
    rep.add_argument("--runs", type=int, default=None,
                     help="runs per point (tao2019: 5000, 200 with --quick; abernethy2016: 200, 50 with --quick; "
                          "hoffman2014: 840 traffic runs, 30 with --quick)")
    rep.add_argument("--quick", action="store_true", help="a short version: fewer runs and budgets")
    rep.add_argument("--out", help="results folder (default results/PAPER[-quick])")
    _add_parallel(rep)
    stats = sub.add_parser("stats", help="summary and paired tests (Holm-corrected) of a finished experiment "
                                         "folder (the --out of run)")
    stats.add_argument("folder")
    stats.add_argument("--reference", help="the agent the others are tested against (default: the first)")
    stats.add_argument("--metric", help="the metric (default: the family's first, e.g. aggregate_regret)")
    claims = sub.add_parser("claims", help="write the claims ledger (claims.md, claims.csv) from the reproductions' "
                                           "results under --docs")
    claims.add_argument("--docs", default="docs", help="folder holding the reproductions' result folders "
                                                       "(default docs)")
    claims.add_argument("--out", help="where to write claims.md and claims.csv (default: --docs)")
    claims.add_argument("--check", action="store_true", help="only check that the ledger under --docs is current")
    claims.add_argument("--readme", help="also refresh the ledger tables quoted in this README (between "
                                         "<!-- claims:PAPER --> markers)")
    plot = sub.add_parser("plot", help="plot a results.csv (or the folder of `run`): the mean metric against the "
                                       "budget per agent with 95%% confidence bands")
    plot.add_argument("results", help="a results.csv, or the folder holding it")
    plot.add_argument("--out", help="PNG path (default: next to the CSV)")
    plot.add_argument("--metric", default=None,
                      help="the metric to draw (default: the family's main one: aggregate_regret for thresholding, "
                           "regret for the threshold bandit and correlated best arm, error for best arm and top-K)")
    plot.add_argument("--title", help="figure title (default: the metric)")
    notebooks = sub.add_parser("notebooks", help="build a student notebook (solutions replaced by exercise stubs) "
                                                 "and a solutions notebook from tutorial-style markdown docs")
    notebooks.add_argument("docs", nargs="+", metavar="DOC.md",
                           help="markdown docs with <details><summary>Solution</summary> blocks, e.g. "
                                "docs/tutorial.md")
    notebooks.add_argument("--out", default="notebooks", help="folder for DOC.ipynb and DOC-solutions.ipynb "
                                                              "(default notebooks)")
    args = parser.parse_args(argv)
    if args.command == "list":
        print(_list())
        return 0
    return {"run": _run, "reproduce": _reproduce, "stats": _stats, "claims": _claims,
            "plot": _plot, "notebooks": _notebooks}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
