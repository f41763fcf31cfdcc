"""The arguments of ``bandit-gym``'s commands (``bandit_gym.cli`` runs them): one helper per command adds its
arguments, the argparse types check them, and a mistake is one line (``_Parser``)."""

from __future__ import annotations

import argparse
from typing import Any

from bandit_gym.reproduce import PAPER_NAMES

__all__ = ["EXIT_CODES", "parser"]


def _add_parallel(parser: argparse.ArgumentParser) -> None:
    from bandit_gym.experiments import BACKENDS, cores

    parser.add_argument("--jobs", type=_positive, default=min(2, cores()),
                        help="parallel workers, at most the machine's cores unless --backend is dask or ray "
                             "(default 2, or 1 on one core)")
    parser.add_argument("--backend", choices=BACKENDS, default=None,
                        help="joblib backend (default: local processes); dask starts a local cluster unless "
                             "--scheduler is given; jax plays the cells with JAX in this process, on the device JAX "
                             "finds (pip install 'pure-exploration-gym[jax]'; --jobs is not used), numbers equal in "
                             "distribution to the default's, in a folder of their own")
    parser.add_argument("--scheduler", default=None, help="address of a running Dask scheduler")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")


EXIT_CODES = """exit codes: 0 done; 2 a mistake in the command line, a spec or a file (one line on stderr saying what to
fix); 1 cells that failed (reported with their tracebacks; the others are saved), a stale ledger of `claims
--check`, or an internal error; 130 interrupted (the finished cells are saved; the same command resumes).
--debug or BANDIT_GYM_DEBUG=1 shows the Python traceback of an error instead."""
"""Exit codes: 0 success; 1 failed cells, a stale ledger (``claims --check``) or an internal error; 2 a user error
(as argparse's usage errors); 130 interrupted (Ctrl-C).
"""


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors: ``bandit-gym run: error: ...`` and a pointer to ``--help``, exit code 2."""

    def error(self, message: str) -> Any:  # argparse's signature says NoReturn; it exits
        self.exit(2, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")


def _positive(text: str) -> int:
    """argparse type of --jobs: a positive integer."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} must be a positive integer (1 or more)")
    return value


def _runs(text: str) -> int:
    """argparse type of reproduce --runs: an integer of at least 2 (the paired tests need two runs)."""
    value = _positive(text)
    if value < 2:
        raise argparse.ArgumentTypeError(f"{value} must be 2 or more (the paired tests need two runs)")
    return value


def _agent(text: str) -> Any:
    """argparse type of reproduce --agent: an agent name, or a TOML inline table as in a spec file's ``agents``
    (``{name = "ArmwisePPO", params = {problem = "thresholding"}, label = "PPO arm-wise"}``)."""
    from bandit_gym.experiments.spec import _agent_from, tomllib

    text = text.strip()
    if not text.startswith("{"):
        entry: Any = text
    else:
        try:
            entry = tomllib.loads(f"agent = {text}")["agent"]
        except tomllib.TOMLDecodeError as error:
            raise argparse.ArgumentTypeError(f"{text!r} is not a TOML inline table ({error}); write "
                                             '{name = "NAME", params = {key = value}, label = "LABEL"}') from None
    try:
        agent = _agent_from(0, entry)
        agent.cls  # noqa: B018 - resolve the name now: an unknown one is a command-line mistake
    except (TypeError, ValueError) as error:
        raise argparse.ArgumentTypeError(str(error).replace("agents[0] = ", "")) from None
    return agent


def _add_run(sub: argparse._SubParsersAction[_Parser]) -> None:
    run = sub.add_parser("run", help="run an experiment spec (TOML or JSON)")
    run.add_argument("spec", help="the spec file; an agent's name is a built-in name, a registered or entry-point "
                                  "name, or an import path 'package.module:Class' (importable from the working "
                                  "directory or PYTHONPATH)")
    run.add_argument("--out", help="results folder (default: the spec's path without its suffix)")
    run.add_argument("--force", action="store_true",
                     help="recompute every cell, also those stored in --out by the code installed now")
    _add_parallel(run)


def _add_reproduce(sub: argparse._SubParsersAction[_Parser]) -> None:
    rep = sub.add_parser("reproduce", help="reproduce a paper's figure and tables (or run a study: "
                                           "fixed-confidence)")
    rep.add_argument("paper", choices=PAPER_NAMES)
    rep.add_argument("--runs", type=_runs, default=None,
                     help="runs per point (tao2019: 5000, 200 with --quick; abernethy2016: 200, 50 with --quick; "
                          "hoffman2014: 840 traffic runs, 30 with --quick; fixed-confidence: 50, 10 with --quick)")
    rep.add_argument("--quick", action="store_true", help="a short version: fewer runs and budgets")
    rep.add_argument("--out", help="results folder (default results/PAPER[-quick])")
    rep.add_argument("--force", action="store_true",
                     help="recompute every cell of the experiments, also those stored in --out by the code installed "
                          "now (the fixed-confidence sweep's cells in --out/sweep-cells too)")
    rep.add_argument("--agent", type=_agent, action="append", default=[], metavar="AGENT",
                     help="an agent to add to every experiment of its family, as rows of the tables and figures "
                          "(repeatable): a name, or a TOML table such as '{name = \"ArmwisePPO\", params = "
                          "{problem = \"thresholding\"}, label = \"PPO arm-wise\"}'")
    _add_parallel(rep)


def _add_stats(sub: argparse._SubParsersAction[_Parser]) -> None:
    stats = sub.add_parser("stats", help="summary and paired tests (Holm-corrected) of a finished experiment "
                                         "folder (the --out of run)")
    stats.add_argument("folder")
    stats.add_argument("--reference", help="the agent the others are tested against (default: the first)")
    stats.add_argument("--metric", help="the metric (default: the family's first, e.g. aggregate_regret; pulls, the "
                                        "stopping time, in the fixed-confidence setting)")


def _add_claims(sub: argparse._SubParsersAction[_Parser]) -> None:
    claims = sub.add_parser("claims", help="write the claims ledger (claims.md, claims.csv) from the reproductions' "
                                           "results under --docs")
    claims.add_argument("--docs", default="docs", help="folder holding the reproductions' result folders "
                                                       "(default docs)")
    claims.add_argument("--out", help="where to write claims.md and claims.csv (default: --docs)")
    claims.add_argument("--check", action="store_true", help="only check that the ledger under --docs is current")
    claims.add_argument("--readme", nargs="+", metavar="PAGE",
                        help="also refresh the ledger tables quoted in these Markdown files, e.g. "
                             "docs/reproductions/*.md (between <!-- claims:PAPER --> markers)")


def _add_plot(sub: argparse._SubParsersAction[_Parser]) -> None:
    plot = sub.add_parser("plot", help="plot a results.csv (or the folder of `run`): the mean metric against the "
                                       "budget per agent with 95%% confidence bands")
    plot.add_argument("results", help="a results.csv, or the folder holding it")
    plot.add_argument("--out", help="PNG path (default: next to the CSV)")
    plot.add_argument("--metric", default=None,
                      help="the metric to draw (default: the family's main one: aggregate_regret for thresholding, "
                           "regret for the threshold bandit, the multi-armed bandit and correlated best arm, "
                           "error for best arm and top-K)")
    plot.add_argument("--title", help="figure title (default: the metric)")


def _add_cache(sub: argparse._SubParsersAction[_Parser]) -> None:
    cache = sub.add_parser("cache", help="show where compiled code is cached (numba, keyed by the package's "
                                         "source, and JAX) and its size")
    cache.add_argument("--clear", action="store_true",
                       help="remove the whole cache (every source's folder, and the JAX cache)")


def _add_notebooks(sub: argparse._SubParsersAction[_Parser]) -> None:
    notebooks = sub.add_parser("notebooks", help="build a student notebook (solutions replaced by exercise stubs) "
                                                 "and a solutions notebook from tutorial-style markdown docs")
    notebooks.add_argument("docs", nargs="+", metavar="DOC.md",
                           help="markdown docs with <details><summary>Solution</summary> blocks, e.g. "
                                "docs/tutorial.md")
    notebooks.add_argument("--out", default="notebooks", help="folder for DOC.ipynb and DOC-solutions.ipynb "
                                                              "(default notebooks)")


def parser(description: str | None) -> argparse.ArgumentParser:
    """The parser of ``bandit-gym``'s commands and arguments (``description``: the command line's help)."""
    parser = _Parser(prog="bandit-gym", description=description, epilog=EXIT_CODES)
    parser.add_argument("--debug", action="store_true",
                        help="show the Python traceback of an error (also BANDIT_GYM_DEBUG=1)")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="print the registered envs, the agents and the reproductions")
    for add in (_add_run, _add_reproduce, _add_stats, _add_claims, _add_plot, _add_cache, _add_notebooks):
        add(sub)
    for command in sub.choices.values():  # `bandit-gym run spec.toml --debug` as well as `bandit-gym --debug run`
        command.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                             help="show the Python traceback of an error (also BANDIT_GYM_DEBUG=1)")
        command.epilog = EXIT_CODES
    return parser
