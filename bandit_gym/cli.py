"""Command line: ``bandit-gym list | run SPEC | reproduce PAPER | stats FOLDER | claims | plot RESULTS |
notebooks DOC.md | cache``."""

from __future__ import annotations

import argparse
import os
import sys
import traceback
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym

from bandit_gym import _cli_arguments
from bandit_gym.reproduce import PAPER_NAMES

#: the longest agent summary ``bandit-gym list`` prints whole; a longer first paragraph is cut at a sentence's end
_SUMMARY_LENGTH = 160


def _summary(doc: str | None) -> str:
    """One line for ``bandit-gym list``: the docstring's first paragraph as plain text (its lines joined, the
    reStructuredText literal markers ````` ``...`` ````` dropped), cut after the last whole sentence that fits in
    ``_SUMMARY_LENGTH`` characters when the paragraph is longer (the first sentence whole if it is longer itself;
    never in the middle of a sentence)."""
    paragraph = " ".join((doc or "").strip().split("\n\n")[0].split()).replace("``", "")
    if len(paragraph) <= _SUMMARY_LENGTH:
        return paragraph
    ends = [i + 1 for i in range(len(paragraph)) if paragraph[i] == "." and paragraph[i + 1:i + 2] in (" ", "")]
    fitting = [end for end in ends if end <= _SUMMARY_LENGTH]
    return paragraph[:fitting[-1]] if fitting else paragraph[:ends[0]] if ends else paragraph


def _list() -> str:
    import bandit_gym
    from bandit_gym.agents import registry

    shipped = registry.shipped_agents()  # the algorithms, then the RL study's learned agents

    lines = ["Environments (gym.make(id); gym.make_vec(id, num_envs=N, vectorization_mode='vector_entry_point')):"]
    width = max(map(len, bandit_gym.ENV_SPECS))
    for env_id, spec in bandit_gym.ENV_SPECS.items():
        assert env_id in gym.registry
        lines.append(f"  {env_id.ljust(width)}  [{spec.paper}] {spec.description}")
    lines.append("")
    from bandit_gym.registration import JAX_ENV_IDS, JAX_NAMESPACE

    families = sorted({str(bandit_gym.ENV_SPECS[env_id].family) for env_id in JAX_ENV_IDS.values()})
    lines.append(f"JAX twins (pip install 'pure-exploration-gym[jax]'; bandit_gym.jax): {JAX_NAMESPACE}/<id> for the "
                 f"{len(JAX_ENV_IDS)} ids of the families {', '.join(families)}")
    lines.append("")
    lines.append("Agents (bandit_gym.agents; the learned ones, which register through its entry point: bandit_gym.rl):")
    width = max(map(len, shipped))
    for name, cls in shipped.items():
        lines.append(f"  {name.ljust(width)}  [{', '.join(cls.families)}] {_summary(cls.__doc__)}")
        regimes = getattr(cls, "regime_lines", None)  # a learned agent: where it was trained and tested
        lines += [f"  {''.ljust(width)}    {line}" for line in (regimes() if regimes else [])]
    lines.append("")
    plugged = sorted((point.name, point.value) for point in registry._entry_points() if point.name not in shipped)
    if plugged:
        lines.append(f"Agents of installed packages (entry points {registry.ENTRY_POINT_GROUP!r}, loaded when a spec "
                     "names them):")
        width = max(len(name) for name, _ in plugged)
        lines += [f"  {name.ljust(width)}  {value}" for name, value in plugged]
        lines.append("")
    lines.append(f"Reproductions (bandit-gym reproduce PAPER): {', '.join(PAPER_NAMES)}")
    return "\n".join(lines)


def _check_scheduler(args: argparse.Namespace) -> None:
    """The parallel options together: --scheduler needs Dask, --jobs at most the cores of a local backend (the JAX
    backend does not use --jobs: one beyond the cores is ignored there, with a note)."""
    from bandit_gym.experiments import check_jobs, cores

    if args.scheduler and args.backend != "dask":
        raise ValueError(f"--scheduler {args.scheduler} needs --backend dask (got --backend {args.backend})")
    if args.backend == "jax" and args.jobs > cores():
        print(f"note: --jobs {args.jobs} is not used with --backend jax (JAX plays the cells in this process); "
              "ignored")
        args.jobs = min(2, cores())  # --jobs's default
    try:
        check_jobs(args.jobs, args.backend)
    except ValueError as error:
        raise ValueError(f"--{error}".replace("--jobs=", "--jobs ", 1)) from None


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


def _writable_folder(out: Path) -> Path:
    """``--out``: a folder that exists or can be made, and that this process can write to."""
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {out} is a file; give a folder for the results")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ValueError(f"--out {out} cannot be made ({error.strerror}); give a folder you can write to") from None
    if not os.access(out, os.W_OK | os.X_OK):
        raise ValueError(f"--out {out} is not writable; give a folder you can write to")
    return out


_REPORTED = r".*: recomputing |.* was damaged \("
"""The warnings of a run (stored cells recomputed, damaged cells moved aside) that ``run`` and ``reproduce`` report
in lines of their own instead."""


def _run(args: argparse.Namespace) -> int:
    from bandit_gym.experiments import load_specs, run_experiments

    _check_scheduler(args)
    _import_from_here()
    specs = load_specs(args.spec)  # every experiment is checked before any work starts; errors name the file
    out = Path(args.out or Path(args.spec).with_suffix(""))
    # names are plain folder names (ExperimentSpec checks them); an env id may hold a namespace's '/'
    folders = [out / (spec.name or spec.env.replace("/", "-")).replace(" ", "_") for spec in specs] \
        if len(specs) > 1 else [out]
    if len(set(folders)) < len(folders):
        shared = next(folder for folder in folders if folders.count(folder) > 1)
        raise ValueError(f"{args.spec}: two experiments would write to {shared}; give each [[experiment]] a "
                         "distinct name")
    args.saved_in = _writable_folder(out)
    client = _dask_client(args)
    try:
        with warnings.catch_warnings():  # the recomputed and damaged cells are reported below, one line each
            warnings.filterwarnings("ignore", message=_REPORTED)
            results = run_experiments(specs, folders, jobs=args.jobs, backend=args.backend,
                                      progress=not args.quiet, force=args.force)
    finally:
        if client is not None:
            client.close()  # type: ignore[attr-defined]
    for result, folder in zip(results, folders, strict=True):
        _print_means(result, _shown_metrics(result.spec))
        print(f"-> {folder / 'results.csv'} (every metric, with standard errors and 95% intervals); "
              f"`bandit-gym stats {folder}` for paired tests")
        for line in result.damaged:
            print(f"recomputed a damaged cell: {folder}/{line}")
        print(f"reused {result.reused} stored cell{'' if result.reused == 1 else 's'}"
              + (f"; recomputed {'; '.join(result.stale)}" if result.stale else ""))
    return 0


def _reproduce(args: argparse.Namespace) -> int:
    from bandit_gym.experiments import stored_cells
    from bandit_gym.reproduce import PAPERS

    _check_scheduler(args)
    client = _dask_client(args)
    try:
        out = _writable_folder(Path(args.out or f"results/{args.paper}{'-quick' if args.quick else ''}"))
        args.saved_in = out
        with warnings.catch_warnings(), stored_cells(force=args.force) as stored:  # reported below, as `run` does
            warnings.filterwarnings("ignore", message=_REPORTED)
            report = PAPERS[args.paper](out, runs=args.runs, quick=args.quick, jobs=args.jobs, backend=args.backend,
                                        progress=not args.quiet, agents=args.agent)
    finally:
        if client is not None:
            client.close()  # type: ignore[attr-defined]
    for path in report.files:
        print(f"wrote {path}")
    for line in stored.damaged:
        print(f"recomputed a damaged cell: {line}")
    print(f"reused {stored.reused} stored cell{'' if stored.reused == 1 else 's'} from {out}"
          + (f"; recomputed {'; '.join(stored.recomputed())}" if stored.stale else ""))
    print(f"finished in {report.seconds:.1f} s")
    return 0


def _fixed_confidence(spec: Any) -> bool:
    """The spec plays the fixed-confidence setting: an agent stops when it is confident, its budget is a cap."""
    return bool(spec.env_kwargs.get("setting") == "fixed_confidence")


def _shown_metrics(spec: Any) -> list[str]:
    """The metrics a summary shows by default: the family's main one; in the fixed-confidence setting the stopping
    time (``pulls``, the sample complexity, that setting's point) and then the error."""
    if _fixed_confidence(spec) and "pulls" in spec.metrics:
        return ["pulls", "error"]
    return [spec.metrics[0]]


def _print_means(result: Any, metrics: list[str]) -> None:
    """The readable summary of an experiment: the mean of each of ``metrics`` per agent (rows) and budget
    (columns; with several metrics, per metric and budget)."""
    summary = result.summary()
    rows = summary[summary["metric"].isin(metrics)]
    if len(metrics) == 1:
        table = rows.pivot_table(index="agent", columns="budget", values="mean", sort=False)
    else:
        table = rows.pivot_table(index="agent", columns=["metric", "budget"], values="mean", sort=False)[metrics]
    names = " and ".join("pulls (the stopping time)" if metric == "pulls" else metric for metric in metrics)
    cap = " (fixed confidence: the budget caps the pulls)" if _fixed_confidence(result.spec) else ""
    print(f"{result.spec.title}: mean {names} over {result.spec.runs} runs{cap}")
    print(table.to_string(float_format=lambda v: f"{v:.4g}"))


def _stats(args: argparse.Namespace) -> int:
    from bandit_gym.experiments import ExperimentResult
    from bandit_gym.studies._stats import holm

    folder = Path(args.folder)  # read as data: nothing in it is imported or written
    if not folder.is_dir():
        raise ValueError(f"{folder} is not a folder; pass the --out folder of `bandit-gym run`")
    try:
        with warnings.catch_warnings():  # cells made by other code: one line below, not a warning
            warnings.filterwarnings("ignore", message=".* holds cells made by code other than")
            result = ExperimentResult.load(folder)
    except (ValueError, TypeError) as error:  # e.g. a spec.json that is not JSON, or not a valid spec
        if str(folder) in str(error):
            raise
        kind = TypeError if isinstance(error, TypeError) else ValueError
        raise kind(f"{folder / 'spec.json'}: {error}") from error
    labels = [agent.display for agent in result.spec.agents]
    metrics = result.spec.metrics
    reference = args.reference or labels[0]
    metric = args.metric or _shown_metrics(result.spec)[0]
    if reference not in labels:
        raise ValueError(f"--reference {reference!r} is not an agent of this experiment; choose one of "
                         f"{', '.join(labels)}")
    if metric not in metrics:
        raise ValueError(f"--metric {metric!r} is not recorded here; choose one of {', '.join(metrics)}")
    if result.stale:
        print(f"note: {folder} holds cells made by code other than the code installed now ({'; '.join(result.stale)}); "
              "`bandit-gym run` of its spec into the folder recomputes them")
    _print_means(result, [metric] if args.metric else _shown_metrics(result.spec))
    if len(labels) == 1:
        print(f"\nno paired tests: {reference} is the only agent of this experiment (the tests compare agents)")
        return 0
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

    if Path(args.docs).exists() and not Path(args.docs).is_dir():
        raise ValueError(f"--docs {args.docs} is a file; give the folder holding the reproductions' result folders "
                         "(default docs)")
    if args.out is not None and not args.check:
        _writable_folder(Path(args.out))
    return _claims_in(args, check_ledger, write_ledger)


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
        raise FileNotFoundError(f"{csv} does not exist; pass a results.csv or the folder `bandit-gym run` wrote")
    out = Path(args.out) if args.out else csv.with_suffix(".png") if args.metric is None else \
        csv.with_name(f"{csv.stem}-{args.metric}.png")
    try:
        table = pd.read_csv(csv)
    except ValueError as error:  # pandas' EmptyDataError, ParserError; a binary file's UnicodeDecodeError
        raise ValueError(f"{csv} is not a results table ({error}); pass a results.csv of `bandit-gym run`") from None
    try:
        path = plot_results(table, out, metric=args.metric, title=args.title or "")
    except ValueError as error:  # missing columns, an unknown --metric, an unsupported --out format
        raise ValueError(f"{csv}: {error}") from error
    print(f"wrote {path}")
    return 0


def _notebooks(args: argparse.Namespace) -> int:
    from bandit_gym.notebooks import build_all

    _writable_folder(Path(args.out))
    written = build_all(args.docs, args.out)
    for student, solutions in written:
        print(f"wrote {student} (student) and {solutions} (solutions)")
    return 0


USER_ERRORS = (ValueError, TypeError, OSError, ImportError)
"""The exceptions that a user's input causes (a bad spec, a missing file, an unwritable folder, a missing optional
dependency): one line on stderr and exit code 2. TOML and JSON decoding errors are ValueErrors.
"""


def _debug(args: argparse.Namespace) -> bool:
    return bool(getattr(args, "debug", False)) or os.environ.get("BANDIT_GYM_DEBUG", "") not in ("", "0")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command. A user's mistake is one line on stderr (``bandit-gym COMMAND: error: ...``, saying what to
    fix) and exit code 2, as argparse does for a bad command line; ``--debug`` (or ``BANDIT_GYM_DEBUG=1``) raises
    it with its traceback instead. Failed cells exit with 1 after the others are saved; an interrupted run exits
    with 130 and keeps the cells it finished."""
    from bandit_gym.experiments import ExperimentError

    args = _parser().parse_args(argv)
    command = {"list": _list_command, "run": _run, "reproduce": _reproduce, "stats": _stats, "claims": _claims,
               "plot": _plot, "notebooks": _notebooks, "cache": _cache}[args.command]
    where = f"bandit-gym {args.command}"
    try:
        return command(args)
    except KeyboardInterrupt:
        if _debug(args):
            raise
        saved = getattr(args, "saved_in", None)
        kept = f"; the finished cells are saved in {saved} and the same command resumes from them" if saved else ""
        print(f"{where}: interrupted{kept}", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the output went to a pager or `head` that closed: not an error of the command
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # Python's recipe: no second error at exit
        return 0
    except ExperimentError as error:  # cells that failed (e.g. a custom agent that raised): their tracebacks
        if _debug(args):
            raise
        saved = getattr(args, "saved_in", None)
        print(f"{where}: error: some cells failed{f'; the others are saved in {saved}' if saved else ''}; "
              f"fix the cause and run the same command to compute the rest. The failures:\n{error}", file=sys.stderr)
        return 1
    except USER_ERRORS as error:
        if _debug(args):
            raise
        print(f"{where}: error: {_one_line(error)}", file=sys.stderr)
        return 2
    except Exception as error:  # a bug of bandit-gym or of a custom agent: one line, the traceback on request
        if _debug(args):
            raise
        origin = traceback.extract_tb(error.__traceback__)[-1]
        print(f"{where}: internal error: {type(error).__name__}: {_one_line(error)} (at {Path(origin.filename).name}:"
              f"{origin.lineno}); run with --debug for the traceback and report it", file=sys.stderr)
        return 1


def _one_line(error: BaseException) -> str:
    """The error's message on one line (with what to do for a missing key or module)."""
    message = " ".join(str(error).split()) or type(error).__name__
    if isinstance(error, KeyError):
        message = f"missing key {message}"
    if isinstance(error, ModuleNotFoundError) and error.name:
        message = f"{message}; install it (pip install {error.name.split('.')[0]}) or the bandit-gym extra that " \
                  "needs it"
    return message


def _list_command(args: argparse.Namespace) -> int:
    print(_list())
    return 0


def _cache(args: argparse.Namespace) -> int:
    """Print the compiled-code caches' folders and sizes (``bandit_gym.jit``), or remove them with ``--clear``."""
    from bandit_gym import jit

    if args.clear:
        for folder in jit.clear_cache():
            print(f"removed {folder}")
        return 0
    for what, folder in (("numba", jit.cache_root()), ("JAX", jit.jax_cache_dir())):
        files = [path for path in folder.rglob("*") if path.is_file()] if folder.is_dir() else []
        size = sum(path.stat().st_size for path in files)
        mine = f"; this source's folder: {jit.source_fingerprint()}" if what == "numba" else ""
        print(f"{what}: {folder}\n  {len(files)} files, {size / 2**20:.1f} MiB{mine}")
    return 0


def _parser() -> argparse.ArgumentParser:
    """The command line's parser (``bandit_gym._cli_arguments``), described by this module's docstring."""
    return _cli_arguments.parser(description=__doc__)


if __name__ == "__main__":
    sys.exit(main())
