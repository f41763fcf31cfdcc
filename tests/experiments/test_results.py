"""Results that can be trusted and shared: an override is the method played, two labels never share a cell file,
reading a folder writes nothing and imports nothing, a run writes only inside its folder, sizes and mistakes are
refused up front in one line."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest

from bandit_gym.agents import APT, LSA, Agent, SuccessiveRejects, Uniform, register
from bandit_gym.agents.base import Obs
from bandit_gym.cli import main
from bandit_gym.experiments import (
    MAX_CELLS,
    MAX_RUNS,
    CellStore,
    ExperimentError,
    ExperimentResult,
    ExperimentSpec,
    cores,
    run_experiment,
)

SETUP1 = "ThresholdingBandit-Tao2019Setup1-v0"
PROBLEM1 = "BestArmIdentification-Audibert2010Problem1-v0"
SCRIPT = str(Path(sys.executable).with_name("bandit-gym"))


def spec(env: str, *agents: str | dict, budgets: tuple[int, ...] = (200,), runs: int = 40, chunk: int = 20,
         **keys: object) -> ExperimentSpec:
    return ExperimentSpec.from_dict({"env": env, "agents": list(agents), "budgets": list(budgets), "runs": runs,
                                     "chunk": chunk, "seed": 5, **keys})


def means(result: ExperimentResult, metric: str) -> dict[str, float]:
    table = result.summary()
    return dict(zip(table.loc[table.metric == metric, "agent"], table.loc[table.metric == metric, "mean"],
                    strict=True))


def first_arm(obs: Obs) -> np.ndarray:
    return np.zeros(obs["counts"].shape[0], dtype=np.int64)


class FirstArm(Agent):
    """Always arm 0: played through the plain path, the reference for the subclasses below."""

    families: ClassVar[tuple[str, ...]] = ("thresholding", "best_arm")

    def select(self, obs: Obs) -> np.ndarray:
        return first_arm(obs)


class FirstArmUniform(Uniform):
    def select(self, obs: Obs) -> np.ndarray:
        return first_arm(obs)


class FirstArmLSA(LSA):
    def select(self, obs: Obs) -> np.ndarray:
        return first_arm(obs)


class FirstArmAPT(APT):
    def select(self, obs: Obs) -> np.ndarray:
        return first_arm(obs)


class FirstArmSR(SuccessiveRejects):
    def select(self, obs: Obs) -> np.ndarray:
        return first_arm(obs)


class Arm99Uniform(Uniform):
    def select(self, obs: Obs) -> np.ndarray:
        return np.full(obs["counts"].shape[0], 99)


# ----------------------------------------------------------------------------------------- the override is played
@pytest.mark.parametrize(("parent", "child", "env"), [
    ("Uniform", FirstArmUniform, SETUP1), ("Uniform", FirstArmUniform, PROBLEM1), ("LSA", FirstArmLSA, SETUP1),
    ("APT", FirstArmAPT, SETUP1), ("SuccessiveRejects", FirstArmSR, PROBLEM1)], ids=lambda v: getattr(v, "__name__", v))
def test_a_subclass_that_overrides_select_is_played_through_it(parent: str, child: type[Agent], env: str) -> None:
    """Before, the parent's compiled rollout, compiled step or batched pulls played instead: the subclass scored
    exactly its parent's number."""
    register(child.__name__, child, override=True)
    register("FirstArm", FirstArm, override=True)
    result = means(run_experiment(spec(env, parent, child.__name__, "FirstArm"), progress=False), "error")
    assert result[child.__name__] == result["FirstArm"] != result[parent]


def test_a_subclass_select_outside_the_arms_fails_its_cells_with_the_arm_named() -> None:
    register("Arm99Uniform", Arm99Uniform, override=True)
    with pytest.raises(ExperimentError, match=r"Arm99Uniform.select returned arm 99; allowed: 0..20"):
        run_experiment(spec(PROBLEM1, "Arm99Uniform"), progress=False)


def test_an_import_path_subclass_is_played_through_its_select_by_the_cli(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "my_lsa_subclass.py").write_text(
        "import numpy as np\nfrom bandit_gym.agents import LSA\n\n\nclass Mine(LSA):\n"
        "    def select(self, obs):\n        return np.zeros(obs['counts'].shape[0], dtype=np.int64)\n")
    (tmp_path / "spec.toml").write_text(f'env = "{SETUP1}"\nbudgets = [200]\nruns = 20\nchunk = 10\n'
                                        'agents = ["LSA", "my_lsa_subclass:Mine"]\n')
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["run", "spec.toml", "--quiet", "--jobs", "1", "--out", "out"]) == 0
    import pandas as pd

    table = pd.read_csv(tmp_path / "out" / "results.csv").set_index(["agent", "metric"])["mean"]
    assert table["my_lsa_subclass:Mine", "aggregate_regret"] > 2 * table["LSA", "aggregate_regret"]


# ------------------------------------------------------------------------------------------------- cell names
def test_labels_that_a_file_name_would_merge_keep_their_own_cells(tmp_path: Path) -> None:
    """'mine/1' and 'mine 1' both became the file mine_1__...: the table reported LSA at Uniform's number."""
    agents = ({"name": "LSA", "params": {"tie_break": "index"}}, {"name": "Uniform"})
    merged = spec(SETUP1, {**agents[0], "label": "mine/1"}, {**agents[1], "label": "mine 1"})
    plain = spec(SETUP1, {**agents[0], "label": "a"}, {**agents[1], "label": "b"})
    got = means(run_experiment(merged, out=tmp_path / "merged", progress=False), "aggregate_regret")
    want = means(run_experiment(plain, out=tmp_path / "plain", progress=False), "aggregate_regret")
    assert (got["mine/1"], got["mine 1"]) == (want["a"], want["b"]) and want["a"] != want["b"]
    assert len(list((tmp_path / "merged" / "cells").glob("*.npz"))) == 4


def test_labels_whose_file_names_meet_are_refused() -> None:
    with pytest.raises(ValueError, match="shares its cell file name"):
        spec(SETUP1, {"name": "LSA", "label": "mine"}, {"name": "APT", "label": "MINE"})


# ------------------------------------------------------------------------------------- reading writes nothing
def snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {str(path.relative_to(folder)): (path.read_bytes(), path.stat().st_mtime_ns)
            for path in sorted(folder.rglob("*")) if path.is_file()}


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("finished")
    run_experiment(spec(SETUP1, "LSA", {"name": "APT", "label": "APT mine"}, budgets=(100, 200)), out=folder,
                   progress=False)
    return folder


def test_reading_a_folder_leaves_every_file_as_it_was(finished: Path, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """A run's half-written cell (``*.npz.tmp``) was deleted by a reader, and spec.json rewritten."""
    folder = tmp_path / "copy"
    folder.mkdir()
    for name, (data, _) in snapshot(finished).items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    (folder / "cells" / "LSA__anytime__chunk9.npz.tmp").write_bytes(b"a run is writing this")
    before = snapshot(folder)
    ExperimentResult.load(folder).summary()
    assert main(["stats", str(folder)]) == 0 and "p_holm" in capsys.readouterr().out
    assert main(["plot", str(folder), "--out", str(tmp_path / "figure.png")]) == 0
    assert snapshot(folder) == before


def test_a_reader_beside_a_writer_20_times(tmp_path: Path) -> None:
    """Readers load the folder over and over while a run writes it: every run completes and its table is the
    uninterrupted run's."""
    work = spec(SETUP1, "LSA", "APT", budgets=(50, 100), runs=64, chunk=4)
    reference = run_experiment(work, progress=False).summary()
    for round_ in range(20):
        folder = tmp_path / f"round{round_}"
        done = threading.Event()
        outcome: dict[str, object] = {}

        def write(folder: Path = folder, done: threading.Event = done, outcome: dict = outcome) -> None:
            try:
                outcome["table"] = run_experiment(work, out=folder, progress=False).summary()
            except BaseException as error:  # reported by the assertion below
                outcome["error"] = error
            finally:
                done.set()

        writer = threading.Thread(target=write)
        writer.start()
        reads = 0
        while not done.is_set() or reads == 0:
            try:
                ExperimentResult.load(folder)
            except ValueError as error:  # an unfinished folder, or none yet
                assert "unfinished" in str(error) or "holds no experiment" in str(error), error
            reads += 1
        writer.join()
        assert "error" not in outcome, outcome.get("error")
        assert outcome["table"].equals(reference)  # type: ignore[union-attr]
        assert ExperimentResult.load(folder).summary().equals(reference)


def test_a_second_run_on_a_folder_is_refused_while_the_first_writes(tmp_path: Path) -> None:
    first = CellStore(spec(SETUP1, "LSA"), tmp_path)
    try:
        with pytest.raises(ValueError, match="being written by another run"):
            CellStore(spec(SETUP1, "LSA"), tmp_path)
    finally:
        first.close()
    CellStore(spec(SETUP1, "LSA"), tmp_path).close()  # free again


# ------------------------------------------------------------------------------------ reading imports nothing
def test_reading_a_folder_never_imports_the_modules_its_spec_names(tmp_path: Path) -> None:
    """A folder received from someone else: `stats` imported the module spec.json names, from the working
    directory; with `this:Agent` loading printed the Zen of Python."""
    (tmp_path / "planted.py").write_text("import pathlib\npathlib.Path('IMPORTED').write_text('ran')\n"
                                         "from bandit_gym.agents import APT as Agent\n")
    (tmp_path / "spec.toml").write_text(f'env = "{SETUP1}"\nbudgets = [100]\nruns = 20\nchunk = 10\n'
                                        'agents = ["LSA", {name = "planted:Agent", label = "theirs"}, '
                                        '{name = "APT", label = "zen"}]\n')
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    run = [SCRIPT, "run", "spec.toml", "--quiet", "--jobs", "1", "--out", "out"]
    assert subprocess.run(run, cwd=tmp_path, env=env, capture_output=True).returncode == 0
    (tmp_path / "IMPORTED").unlink()
    spec_file = tmp_path / "out" / "spec.json"
    spec_file.write_text(spec_file.read_text().replace('"APT"', '"this:Agent"'))
    read = subprocess.run([SCRIPT, "stats", "out"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert read.returncode == 0, read.stderr
    assert "theirs" in read.stdout and "zen" in read.stdout
    assert not (tmp_path / "IMPORTED").exists() and "Beautiful is better" not in read.stdout + read.stderr


def test_a_spec_read_from_a_folder_cannot_be_played(finished: Path) -> None:
    agent = ExperimentResult.load(finished).spec.agents[0]
    with pytest.raises(ValueError, match="read from a results folder"):
        agent.cls  # noqa: B018


# ------------------------------------------------------------------------------ writes stay in the out folder
@pytest.mark.parametrize("name", ["../../X", "/tmp/elsewhere", "a/b", "..", "C:escape", "a\\b"])
def test_experiment_names_that_leave_the_output_folder_are_refused(name: str) -> None:
    with pytest.raises(ValueError, match="must be a plain folder name"):
        spec(SETUP1, "LSA", name=name)


def test_the_cli_refuses_an_experiment_named_out_of_its_folder(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "victim").mkdir()
    (tmp_path / "victim" / "results.csv").write_text("theirs\n")
    lines = [f'[[experiment]]\nname = "{name}"\nenv = "{SETUP1}"\nbudgets = [50]\nruns = 4\nagents = ["LSA"]\n'
             for name in ("fine", "../../victim")]
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "two.toml").write_text("\n".join(lines))
    code = main(["run", str(tmp_path / "specs" / "two.toml"), "--quiet", "--jobs", "1", "--out",
                 str(tmp_path / "specs" / "out")])
    err = capsys.readouterr().err
    assert code == 2 and "experiment[1]" in err and "plain folder name" in err and len(err.splitlines()) == 1
    assert (tmp_path / "victim" / "results.csv").read_text() == "theirs\n"
    assert not (tmp_path / "specs" / "out").exists()


def test_a_run_never_overwrites_files_it_did_not_write(tmp_path: Path) -> None:
    (tmp_path / "results.csv").write_text("someone's table\n")
    with pytest.raises(ValueError, match=r"holds results.csv but no spec.json"):
        run_experiment(spec(SETUP1, "LSA"), out=tmp_path, progress=False)
    assert (tmp_path / "results.csv").read_text() == "someone's table\n"


def test_notebooks_embed_only_pictures_inside_the_docs_folder(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "secret.txt").write_text("password")
    docs = tmp_path / "docs"
    (docs / "img").mkdir(parents=True)
    (docs / "img" / "plot.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (docs / "notes.txt").write_text("not a picture")
    for image, why in (("../secret.txt", "outside the doc's folder"), (str(tmp_path / "secret.txt"), "outside"),
                       ("notes.txt", "not a picture")):
        (docs / "lesson.md").write_text(f"# Lesson\n\n![d]({image})\n\n![ok](img/plot.png)\n")
        assert main(["notebooks", str(docs / "lesson.md"), "--out", str(tmp_path / "nb")]) == 2
        err = capsys.readouterr().err
        assert why in err and len(err.splitlines()) == 1, err
        assert not list((tmp_path / "nb").glob("*.ipynb"))
    (docs / "lesson.md").write_text("# Lesson\n\n![ok](img/plot.png)\n")
    assert main(["notebooks", str(docs / "lesson.md"), "--out", str(tmp_path / "nb")]) == 0
    assert "attachment:img_plot.png" in (tmp_path / "nb" / "lesson.ipynb").read_text()


# ---------------------------------------------------------------------------------------- sizes checked early
def test_runs_and_cells_have_documented_maxima() -> None:
    with pytest.raises(ValueError, match=f"runs=1000000000 is too large; it must be <= {MAX_RUNS}"):
        spec(SETUP1, "LSA", runs=10**9)
    with pytest.raises(ValueError, match=f"at most {MAX_CELLS} are allowed: raise chunk"):
        spec(SETUP1, "LSA", "APT", runs=10**6, chunk=10)


def test_a_chunk_whose_vector_env_does_not_fit_in_memory_is_the_spec_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from bandit_gym import _validation

    monkeypatch.setattr(_validation, "memory_limit", lambda: 2**20)
    with pytest.raises(ValueError, match=r"chunk=2500: a cell's num_envs=2500 copies .* give a smaller chunk"):
        spec(SETUP1, "LSA", runs=5000, chunk=2500)
    spec(SETUP1, "LSA", runs=5000, chunk=500)  # 500 copies fit


def test_every_budget_is_checked_against_the_env_not_only_the_first() -> None:
    with pytest.raises(ValueError, match="budget=100000000000"):
        spec(SETUP1, "LSA", budgets=(100, 10**11))


def test_jobs_beyond_the_cores_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ValueError, match=f"jobs={cores() + 1} is more than the {cores()} cores"):
        run_experiment(spec(SETUP1, "LSA"), jobs=cores() + 1, progress=False)
    (tmp_path / "s.toml").write_text(f'env = "{SETUP1}"\nbudgets = [50]\nruns = 4\nagents = ["LSA"]\n')
    assert main(["run", str(tmp_path / "s.toml"), "--jobs", "1000000"]) == 2
    err = capsys.readouterr().err
    assert "--jobs 1000000 is more than" in err and len(err.splitlines()) == 1


def test_stats_refuses_a_spec_json_of_too_many_runs_before_reading_cells(finished: Path, tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "huge"
    folder.mkdir()
    for name in ("spec.json", "layout.json"):
        (folder / name).write_text((finished / name).read_text().replace('"runs": 40', '"runs": 1000000000000'))
    assert main(["stats", str(folder)]) == 2
    err = capsys.readouterr().err
    assert "runs=1000000000000 is too large" in err and len(err.splitlines()) == 1


# ---------------------------------------------------------------------------- a user's mistake is one line
def one_line(capsys: pytest.CaptureFixture[str], argv: list[str], *pieces: str) -> None:
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2 and len(err.splitlines()) == 1 and "Traceback" not in err and "internal error" not in err, err
    for piece in pieces:
        assert piece in err, (piece, err)


@pytest.mark.parametrize(("module", "pieces"), [
    ("def broken(:\n", ("has a syntax error", "line 1")),
    ("raise RuntimeError('no licence server')\n", ("raised RuntimeError: no licence server",)),
    ("from bandit_gym.agents import LSA\n\n\nclass Agent(LSA):\n    def __init__(self):\n"
     "        raise ZeroDivisionError('my bug')\n", ("raised ZeroDivisionError: my bug",)),
], ids=["syntax error", "raises at import", "__init__ raises"])
def test_a_broken_user_module_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str], module: str,
                                          pieces: tuple[str, ...]) -> None:
    name = f"user_module_{abs(hash(module)) % 10**8}"
    (tmp_path / f"{name}.py").write_text(module)
    (tmp_path / "s.toml").write_text(f'env = "{SETUP1}"\nbudgets = [50]\nruns = 4\nagents = ["{name}:Agent"]\n')
    monkeypatch.chdir(tmp_path)
    one_line(capsys, ["run", "s.toml", "--jobs", "1"], f"{name}:Agent", *pieces)


def test_claims_on_a_malformed_results_table_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import shutil

    docs = Path(__file__).resolve().parents[2] / "docs"
    shutil.copytree(docs, tmp_path / "docs", ignore=shutil.ignore_patterns("*.png", "*.gif"))
    results = next((tmp_path / "docs").rglob("tao2019*/results.csv"))
    results.write_text("agent,budget\nLSA,1\n")
    one_line(capsys, ["claims", "--check", "--docs", str(tmp_path / "docs")], "does not hold the results of",
             "missing column")


@pytest.fixture(scope="module")
def ppo_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from bandit_gym.rl import train

    folder = tmp_path_factory.mktemp("ppo") / "policy"
    train("ThresholdBandit-v0", total_timesteps=256, seed=0, num_envs=2, env_kwargs={"horizon": 50}).save(folder)
    return folder


@pytest.mark.parametrize(("case", "params", "env", "pieces"), [
    ("another env", "{policy = 'POLICY'}", "MultiArmedBandit-v0", ("agents[0]", "SB3Agent", "level_exceed")),
    ("another budget", "{policy = 'POLICY'}", "ThresholdBandit-v0", ("agents[0]", "trained on budget 50")),
    ("another algo", "{policy = 'POLICY/model.zip', algo = 'DQN'}", "ThresholdBandit-v0",
     ("agents[0]", "is a PPO", "algo=")),
    ("not a zip", "{policy = 'TEXT/model.zip'}", "ThresholdBandit-v0", ("agents[0]", "not a zip")),
])
def test_a_policy_that_cannot_play_the_spec_is_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], ppo_folder: Path, case: str, params: str, env: str,
        pieces: tuple[str, ...]) -> None:
    """Before, these failed inside every cell (exit 1, a traceback per cell) or as an internal error."""
    (tmp_path / "text").mkdir()
    (tmp_path / "text" / "model.zip").write_text("not a zip")
    params = params.replace("POLICY", str(ppo_folder)).replace("TEXT", str(tmp_path / "text"))
    (tmp_path / "s.toml").write_text(f'env = "{env}"\nbudgets = [80]\nruns = 4\n'
                                     f'agents = [{{name = "SB3Agent", params = {params}}}]\n')
    one_line(capsys, ["run", str(tmp_path / "s.toml"), "--jobs", "1", "--quiet"], *pieces)
