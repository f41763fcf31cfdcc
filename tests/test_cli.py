"""A user's mistake on the command line is one line on stderr and a non-zero exit, never a traceback, and the line
names what is wrong (file, key, value) and what is allowed; --debug (or BANDIT_GYM_DEBUG=1) shows the traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import bandit_gym.experiments
from bandit_gym.cli import main
from bandit_gym.experiments import AgentSpec, ExperimentError, ExperimentResult, ExperimentSpec, cores

GOOD = 'env = "ThresholdingBandit-Tao2019Setup1-v0"\nagents = ["APT"]\nbudgets = [20, 40]\nruns = 4\n'


def _swap(old: str, new: str) -> str:
    assert old in GOOD
    return GOOD.replace(old, new)


def _agents(text: str) -> str:
    return _swap('["APT"]', text)


#: (case, spec text or (file name, text) or None for a missing file, extra arguments, pieces of the message)
RUN_CASES: list[tuple[str, Any, list[str], tuple[str, ...]]] = [
    ("missing file", None, [], ("nope.toml does not exist",)),
    ("a folder", ("folder.toml", "DIR"), [], ("folder.toml is a folder",)),
    ("wrong suffix", ("spec.yaml", GOOD), [], ("spec.yaml must end in .toml or .json",)),
    ("empty file", "", [], ("spec.toml holds no experiment", "[[experiment]]")),
    ("no experiment", "experiment = []\n", [], ("spec.toml holds no experiment",)),
    ("an empty experiment", "[[experiment]]\n", [], ("holds no experiment",)),
    ("experiment a table", "[experiment]\n" + GOOD, [], ("experiment must be a list of tables",)),
    ("keys beside experiments", "title = 'x'\n[[experiment]]\n" + GOOD, [], ("['title'] sit beside [[experiment]]",)),
    ("bad TOML", "env = \n", [], ("spec.toml is not valid TOML", "line 1")),
    ("bad JSON", ("spec.json", "{"), [], ("spec.json is not valid JSON",)),
    ("JSON empty list", ("spec.json", "[]"), [], ("holds no experiment",)),
    ("JSON number", ("spec.json", "5"), [], ("holds no experiment",)),
    ("JSON list of numbers", ("spec.json", "[5]"), [], ("an experiment must be a table", "got 5")),
    ("budgets an int", _swap("budgets = [20, 40]", "budgets = 100"), [],
     ("budgets must be a non-empty list of strictly increasing positive integers, got 100",)),
    ("budgets empty", _swap("[20, 40]", "[]"), [], ("budgets must be a non-empty list", "got []")),
    ("budgets decreasing", _swap("[20, 40]", "[40, 20]"), [], ("strictly increasing", "got [40, 20]")),
    ("budgets repeated", _swap("[20, 40]", "[20, 20]"), [], ("strictly increasing", "got [20, 20]")),
    ("budget zero", _swap("[20, 40]", "[0, 40]"), [], ("budgets[0]=0 is too small", ">= 1")),
    ("budget a float", _swap("[20, 40]", "[20, 40.5]"), [], ("budgets[1] must be an integer, got 40.5",)),
    ("runs negative", _swap("runs = 4", "runs = -1"), [], ("runs=-1 is too small", ">= 2")),
    ("runs zero", _swap("runs = 4", "runs = 0"), [], ("runs=0 is too small",)),
    ("runs a string", _swap("runs = 4", 'runs = "x"'), [], ("runs must be an integer, got 'x'",)),
    ("seed negative", GOOD + "seed = -1\n", [], ("seed=-1 is too small", ">= 0")),
    ("seed a float", GOOD + "seed = 1.5\n", [], ("seed must be an integer, got 1.5",)),
    ("unknown key", GOOD + "budget = 5\n", [], ("unknown spec keys ['budget']", "did you mean 'budgets'", "allowed:")),
    ("misspelled key", GOOD + "env_kwarg = {}\n", [], ("['env_kwarg']", "did you mean 'env_kwargs'")),
    ("no env", GOOD.split("\n", 1)[1], [], ("lacks the keys ['env']",)),
    ("no budgets", _swap("budgets = [20, 40]\n", ""), [], ("lacks the keys ['budgets']",)),
    ("unknown env", _swap("ThresholdingBandit-Tao2019Setup1-v0", "Nope-v0"), [],
     ("env='Nope-v0' is not a registered id", "bandit-gym list")),
    ("env a number", _swap('"ThresholdingBandit-Tao2019Setup1-v0"', "5"), [], ("env=5 is not a registered id",)),
    ("env kwargs rejected", GOOD + "env_kwargs = {threshold = 7.0}\n", [], ("threshold=7.0 is outside",)),
    ("env kwargs unknown", GOOD + "env_kwargs = {nope = 7.0}\n", [], ("argument 'nope'", "takes means, threshold")),
    ("env kwargs not a table", GOOD + "env_kwargs = 5\n", [], ("env_kwargs must be a table, got 5",)),
    ("budget in env kwargs", GOOD + "env_kwargs = {budget = 5}\n", [], ("env_kwargs sets 'budget'",)),
    ("crn in env kwargs", GOOD + "env_kwargs = {common_random_numbers = false}\n", [],
     ("env_kwargs sets 'common_random_numbers'",)),
    ("agent without name", _agents("[{params = {epsilon = 0.1}}]"), [], ("agents[0]", "no 'name'")),
    ("agent with an unknown key", _agents('[{name = "APT", parms = {}}]'), [], ("agents[0]", "unknown keys ['parms']")),
    ("agent a number", _agents("[5]"), [], ("agents[0] = 5 must be a name or a table",)),
    ("agents a string", _agents('"APT"'), [], ("agents must be a list", "got 'APT'")),
    ("no agents", _agents("[]"), [], ("agents is empty",)),
    ("unknown agent", _agents('["Nope"]'), [], ("agents[0]", "name='Nope' is unknown", "LSA")),
    ("bad import path", _agents('["no_such_module:Rule"]'), [], ("agents[0]", "no_such_module")),
    ("import path not an agent", _agents('["json:JSONDecoder"]'), [], ("json:JSONDecoder", "subclass")),
    ("agent params rejected", _agents('[{name = "LSA", params = {alpha = -1.0}}]'), [],
     ("agents[0] (LSA(-1))", "alpha=-1.0")),
    ("unknown agent param", _agents('[{name = "LSA", params = {alhpa = 1.0}}]'), [],
     ("agents[0]", "unknown params ['alhpa']", "did you mean 'alpha'", "LSA takes alpha")),
    ("unknown oracle agent param", _agents('[{name = "UCBE", params = {aa = 1.0}}]'), [],
     ("unknown params ['aa']", "UCBE takes")),
    ("params not a table", _agents('[{name = "LSA", params = 3}]'), [], ("agents[0]", "params must be a table")),
    ("wrong family", _agents('["UGapEb"]'), [],
     ("agents[0] = 'UGapEb' plays ('best_arm',) envs", "agents for thresholding", "LSA")),
    ("oracle agent on random instances", _agents('["UCBE"]').replace("-Tao2019Setup1", ""), [],
     ("agents[0] (UCBE) needs the oracle parameters ['H']", "give them in the agent's params")),
    ("duplicate labels", _agents('["APT", "APT"]'), [], ("labels must be distinct", "give each agent a label")),
    ("chunk zero", GOOD + "chunk = 0\n", [], ("chunk=0 is too small",)),
    ("crn a string", GOOD + 'common_random_numbers = "yes"\n', [], ("common_random_numbers must be a bool",)),
    ("name a number", GOOD + "name = 5\n", [], ("name must be a str, got 5",)),
    ("second experiment bad", "[[experiment]]\n" + GOOD + "[[experiment]]\n" + _swap("runs = 4", "runs = 0"), [],
     ("spec.toml: experiment[1]: runs=0",)),
    ("experiments sharing a folder", "[[experiment]]\n" + GOOD + "[[experiment]]\n" + GOOD.replace("4", "6"), [],
     ("two experiments would write to", "distinct name")),
    ("out is a file", GOOD, ["--out", "FILE"], ("--out", "is a file")),
    ("out cannot be made", GOOD, ["--out", "/proc/bandit-gym-results"], ("--out /proc/bandit-gym-results",
                                                                         "cannot be made")),
    ("jobs zero", GOOD, ["--jobs", "0"], ("--jobs: 0 must be a positive integer",)),
    ("jobs negative", GOOD, ["--jobs", "-3"], ("--jobs: -3 must be a positive integer",)),
    ("jobs not a number", GOOD, ["--jobs", "x"], ("--jobs: 'x' is not an integer",)),
    ("unknown backend", GOOD, ["--backend", "nope"], ("--backend: invalid choice: 'nope'", "loky")),
    ("scheduler without dask", GOOD, ["--scheduler", "tcp://x:1"], ("--scheduler tcp://x:1 needs --backend dask",)),
    ("jobs over the cores", GOOD, ["--jobs", str(cores() + 1)], (f"--jobs {cores() + 1} is more than the {cores()} "
                                                                 "cores",)),
]


@pytest.mark.parametrize(("case", "spec", "extra", "message"), RUN_CASES, ids=[case[0] for case in RUN_CASES])
def test_run_mistakes_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str, spec: Any,
                                   extra: list[str], message: tuple[str, ...]) -> None:
    name, text = spec if isinstance(spec, tuple) else ("spec.toml", spec)
    path = tmp_path / ("nope.toml" if spec is None else name)
    if text == "DIR":
        path.mkdir()
    elif spec is not None:
        path.write_text(text)
    (tmp_path / "FILE").write_text("x")
    extra = [str(tmp_path / "FILE") if arg == "FILE" else arg for arg in extra]
    _assert_one_line(capsys, ["run", str(path), "--quiet", "--jobs", "1", *extra], "bandit-gym run: error: ", message)
    assert not (tmp_path / "spec").exists() or case == "out cannot be made"  # nothing ran, no folder was made


def _assert_one_line(capsys: pytest.CaptureFixture[str], argv: list[str], start: str,
                     message: tuple[str, ...]) -> None:
    try:
        code = main(argv)
    except SystemExit as exit_:  # argparse's own errors, made one line
        code = exit_.code
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert code == 2, err
    assert len(lines) == 1 and err.endswith("\n"), err
    assert "Traceback" not in err and lines[0].startswith(start), err
    for piece in message:
        assert piece in lines[0], (piece, err)


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("finished")
    spec = folder / "spec.toml"
    spec.write_text(GOOD)
    assert main(["run", str(spec), "--quiet", "--jobs", "1"]) == 0
    return folder / "spec"


#: (case, argv with placeholders, pieces of the message)
OTHER_CASES = [
    ("stats missing folder", ["stats", "MISSING"], ("MISSING is not a folder",)),
    ("stats on a file", ["stats", "FILE"], ("FILE is not a folder",)),
    ("stats empty folder", ["stats", "EMPTY"], ("EMPTY holds no experiment", "spec.json")),
    ("stats unfinished", ["stats", "UNFINISHED"], ("UNFINISHED is unfinished", "cells missing")),
    ("stats bad spec.json", ["stats", "BADJSON"], ("BADJSON/spec.json",)),
    ("stats unknown reference", ["stats", "FINISHED", "--reference", "Nope"], ("--reference 'Nope'", "one of APT")),
    ("stats unknown metric", ["stats", "FINISHED", "--metric", "nope"], ("--metric 'nope'", "aggregate_regret")),
    ("plot missing csv", ["plot", "MISSING"], ("MISSING does not exist",)),
    ("plot folder without csv", ["plot", "EMPTY"], ("EMPTY/results.csv does not exist",)),
    ("plot wrong columns", ["plot", "BADCSV"], ("bad.csv", "lacks the columns", "'metric'")),
    ("plot empty csv", ["plot", "EMPTYCSV"], ("empty.csv is not a results table",)),
    ("plot unknown metric", ["plot", "FINISHED", "--metric", "nope"], ("metric='nope'", "aggregate_regret")),
    ("plot unknown format", ["plot", "FINISHED", "--out", "OUTNOPE"], ("'nope' is not supported", "png")),
    ("reproduce zero runs", ["reproduce", "tao2019", "--runs", "0"], ("--runs: 0 must be a positive integer",)),
    ("reproduce negative runs", ["reproduce", "tao2019", "--runs", "-1"], ("--runs: -1",)),
    ("reproduce one run", ["reproduce", "tao2019", "--runs", "1"], ("--runs: 1 must be 2 or more",)),
    ("reproduce unknown paper", ["reproduce", "nope2020"], ("invalid choice: 'nope2020'", "tao2019")),
    ("reproduce out a file", ["reproduce", "tao2019", "--out", "FILE"], ("--out", "is a file")),
    ("reproduce jobs zero", ["reproduce", "tao2019", "--jobs", "0"], ("--jobs: 0",)),
    ("notebooks missing doc", ["notebooks", "MISSING"], ("MISSING' is not a file",)),
    ("notebooks a folder", ["notebooks", "EMPTY"], ("EMPTY' is not a file",)),
    ("notebooks out a file", ["notebooks", "DOC", "--out", "FILE"], ("--out", "is a file")),
    ("claims missing docs", ["claims", "--check", "--docs", "MISSING"], ("MISSING/tao2019-5000runs is missing",)),
    ("claims docs without results", ["claims", "--docs", "EMPTY", "--out", "EMPTY"], ("tao2019", "is missing",
                                                                                      "bandit-gym reproduce")),
    ("claims out a file", ["claims", "--docs", "EMPTY", "--out", "FILE"], ("--out", "is a file")),
    ("claims docs a file", ["claims", "--docs", "FILE"], ("--docs", "FILE is a file; give the folder",)),
    ("claims check docs a file", ["claims", "--check", "--docs", "FILE"], ("FILE is a file; give the folder",)),
    ("list with an argument", ["list", "extra"], ("unrecognized arguments: extra",)),
    ("no command", [], ("required: command", "bandit-gym --help")),
]


@pytest.mark.parametrize(("case", "argv", "message"), OTHER_CASES, ids=[case[0] for case in OTHER_CASES])
def test_other_mistakes_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], finished: Path, case: str,
                                     argv: list[str], message: tuple[str, ...]) -> None:
    for folder in ("EMPTY", "UNFINISHED", "BADJSON"):
        (tmp_path / folder).mkdir()
    for name in ("spec.json", "layout.json"):  # a run that wrote its spec and layout, and no cell yet
        (tmp_path / "UNFINISHED" / name).write_text((finished / name).read_text())
    (tmp_path / "BADJSON" / "spec.json").write_text("{")
    (tmp_path / "bad.csv").write_text("a,b\n1,2\n")
    (tmp_path / "empty.csv").write_text("")
    (tmp_path / "FILE").write_text("x")
    (tmp_path / "doc.md").write_text("# A doc\n")
    places = {"FINISHED": finished, "BADCSV": tmp_path / "bad.csv", "EMPTYCSV": tmp_path / "empty.csv",
              "OUTNOPE": tmp_path / "plot.nope", "DOC": tmp_path / "doc.md"}
    argv = [str(places.get(arg, tmp_path / arg if arg.isupper() else arg)) for arg in argv]
    top_level = case in ("list with an argument", "no command")  # the main parser's errors
    start = "bandit-gym: error: " if top_level else f"bandit-gym {argv[0]}: error: "
    _assert_one_line(capsys, argv, start, message)


def test_a_read_only_out_folder_is_one_line(good_spec: Path, capsys: pytest.CaptureFixture[str],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    # the permission bits do not stop root (tests may run as root), so the check's answer is what is faked here
    monkeypatch.setattr("bandit_gym.cli.os.access", lambda path, mode: False)
    out = good_spec.parent / "read-only"
    _assert_one_line(capsys, ["run", str(good_spec), "--out", str(out)], "bandit-gym run: error: ",
                     (f"--out {out} is not writable",))


def test_debug_shows_the_traceback(tmp_path: Path) -> None:
    spec = tmp_path / "spec.toml"
    spec.write_text("experiment = []\n")
    with pytest.raises(ValueError, match="holds no experiment"):
        main(["--debug", "run", str(spec)])
    with pytest.raises(ValueError, match="holds no experiment"):  # after the command, as users type it
        main(["run", str(spec), "--debug"])


@pytest.fixture
def good_spec(tmp_path: Path) -> Path:
    spec = tmp_path / "spec.toml"
    spec.write_text(GOOD)
    return spec


def _raising(error: BaseException) -> Any:
    def run_experiments(*args: Any, **kwargs: Any) -> Any:
        raise error
    return run_experiments


def test_an_interrupted_run_says_where_its_cells_are(good_spec: Path, capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bandit_gym.experiments, "run_experiments", _raising(KeyboardInterrupt()))
    assert main(["run", str(good_spec), "--quiet"]) == 130
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "interrupted" in err[0] and str(good_spec.with_suffix("")) in err[0], err


def test_failed_cells_exit_1_with_their_report(good_spec: Path, capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    report = "cell APT__anytime__chunk0 failed:\nTraceback (most recent call last):\nRuntimeError: agent bug"
    monkeypatch.setattr(bandit_gym.experiments, "run_experiments", _raising(ExperimentError(report)))
    assert main(["run", str(good_spec), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("bandit-gym run: error: some cells failed; the others are saved in") and report in err


def test_an_unexpected_error_is_one_line_with_a_hint(good_spec: Path, capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bandit_gym.experiments, "run_experiments", _raising(ZeroDivisionError("boom")))
    assert main(["run", str(good_spec), "--quiet"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "internal error: ZeroDivisionError: boom" in err[0] and "--debug" in err[0], err
    with pytest.raises(ZeroDivisionError):
        main(["--debug", "run", str(good_spec), "--quiet"])


@pytest.mark.parametrize(("kwargs", "error", "message"), [
    ({"agents": ("APT",)}, TypeError, "agents must be a tuple of AgentSpec"),
    ({"budgets": 100}, TypeError, "budgets must be a non-empty list of strictly increasing positive integers"),
    ({"budgets": (40, 20)}, ValueError, "got [40, 20]"),
    ({"runs": 0}, ValueError, "runs=0 is too small"),
    ({"agents": (AgentSpec("UGapEb"),)}, ValueError, "agents[0] = 'UGapEb' plays ('best_arm',) envs"),
    ({"agents": (AgentSpec("LSA", {"alhpa": 1.0}),)}, TypeError, "unknown params ['alhpa']"),
    ({"env": "Nope-v0"}, ValueError, "env='Nope-v0' is not a registered id"),
])
def test_the_python_api_raises_the_same_errors(kwargs: dict[str, Any], error: type[Exception], message: str) -> None:
    spec = {"env": "ThresholdingBandit-Tao2019Setup1-v0", "agents": (AgentSpec("APT"),), "budgets": (20, 40),
            "runs": 4, **kwargs}
    with pytest.raises(error) as raised:
        ExperimentSpec(**spec)
    assert message in str(raised.value)


@pytest.mark.parametrize(("kwargs", "message"), [({"name": 5}, "name must be a string"),
                                                  ({"name": "LSA", "params": 3}, "params must be a table"),
                                                  ({"name": "LSA", "label": 1}, "label must be a string")])
def test_agent_spec_checks_its_fields(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(TypeError, match=message):
        AgentSpec(**kwargs)


def test_the_console_script_and_the_environment_variable(tmp_path: Path) -> None:
    spec = tmp_path / "spec.toml"
    spec.write_text("experiment = []\n")
    script = Path(sys.executable).with_name("bandit-gym")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "bandit_gym.cli"]
    quiet = subprocess.run([*command, "run", str(spec)], capture_output=True, text=True)
    assert quiet.returncode == 2 and quiet.stderr.count("\n") == 1 and "Traceback" not in quiet.stderr, quiet.stderr
    assert quiet.stderr.startswith(f"bandit-gym run: error: {spec} holds no experiment")
    loud = subprocess.run([*command, "run", str(spec)], capture_output=True, text=True,
                          env={**os.environ, "BANDIT_GYM_DEBUG": "1"})
    assert loud.returncode == 1 and "Traceback" in loud.stderr and "holds no experiment" in loud.stderr


def test_stats_of_one_agent_prints_its_table_and_says_there_is_no_test(finished: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["stats", str(finished)]) == 0  # GOOD has one agent: nothing to compare it with
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0] == "ThresholdingBandit-Tao2019Setup1-v0: mean aggregate_regret over 4 runs"  # fixed budget
    assert lines[2].split() == ["agent"] and lines[3].split()[0] == "APT"
    assert lines[-1] == "no paired tests: APT is the only agent of this experiment (the tests compare agents)"


def test_jobs_beyond_the_cores_are_ignored_with_the_jax_backend(good_spec: Path, capsys: pytest.CaptureFixture[str],
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    real, seen = bandit_gym.experiments.run_experiments, {}

    def run_experiments(specs: Any, folders: Any, jobs: int, backend: str | None, **kwargs: Any) -> Any:
        seen.update(jobs=jobs, backend=backend)
        return real(specs, folders, jobs=1, backend=None, **kwargs)  # the numba backend: no JAX needed here

    monkeypatch.setattr(bandit_gym.experiments, "run_experiments", run_experiments)
    assert main(["run", str(good_spec), "--quiet", "--backend", "jax", "--jobs", str(cores() + 62)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"note: --jobs {cores() + 62} is not used with --backend jax (JAX plays the cells in this " \
                     "process); ignored"
    assert seen == {"jobs": min(2, cores()), "backend": "jax"}  # --jobs's default


FIXED_CONFIDENCE = """env = "BestArmIdentification-v0"
agents = [{name = "LUCB", params = {delta = 0.1}}, {name = "KLLUCB", params = {delta = 0.1}}]
budgets = [20000]
runs = 4
env_kwargs = {means = [0.7, 0.5, 0.3], setting = "fixed_confidence"}
"""


def test_a_fixed_confidence_summary_shows_the_stopping_time_and_the_error(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "spec.toml"
    spec.write_text(FIXED_CONFIDENCE)
    assert main(["run", str(spec), "--quiet", "--jobs", "1"]) == 0
    summary = ExperimentResult.load(tmp_path / "spec").summary().set_index(["agent", "metric"])["mean"]
    assert summary[("LUCB(0.1)", "pulls")] > summary[("KLLUCB(0.1)", "pulls")] > 3  # stopped well before the cap
    for command in (["run", str(spec), "--quiet", "--jobs", "1"], ["stats", str(tmp_path / "spec")]):
        assert main(command) == 0
        lines = capsys.readouterr().out.splitlines()
        assert lines[0] == ("BestArmIdentification-v0: mean pulls (the stopping time) and error over 4 runs (fixed "
                            "confidence: the budget caps the pulls)"), command
        assert lines[1].split() == ["metric", "pulls", "error"] and lines[2].split() == ["budget", "20000", "20000"]
        for line, agent in zip(lines[4:6], ("LUCB(0.1)", "KLLUCB(0.1)"), strict=True):
            assert line.split() == [agent, f"{summary[(agent, 'pulls')]:.4g}", f"{summary[(agent, 'error')]:.4g}"]
    assert lines[-1].split()[:2] == ["KLLUCB(0.1)", "20000"]  # the paired test of the stopping times
    difference = float(lines[-1].split()[2])
    assert difference == pytest.approx(summary[("KLLUCB(0.1)", "pulls")] - summary[("LUCB(0.1)", "pulls")], rel=1e-2)
    assert main(["stats", str(tmp_path / "spec"), "--metric", "error"]) == 0  # the one metric asked for
    assert capsys.readouterr().out.splitlines()[1].split() == ["budget", "20000"]
