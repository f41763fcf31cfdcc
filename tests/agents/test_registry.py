"""Custom agents are first-class: import paths, ``register``, entry points; parallel workers (loky, Dask); the safe
``anytime`` default; the tie helpers ``Agent.argmax`` / ``Agent.argmin``; one-line CLI errors."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import ClassVar

import gymnasium as gym
import numpy as np
import pytest
from scipy import stats

from bandit_gym.agents import AGENTS, Agent, agent_class, register, registry
from bandit_gym.agents.base import Obs
from bandit_gym.cli import main
from bandit_gym.experiments import AgentSpec, Cell, ExperimentResult, ExperimentSpec, expand, run_experiment

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
SETUP1 = "ThresholdingBandit-Tao2019Setup1-v0"
#: the built-in agents that are anytime with their default parameters, as before the default became False
ANYTIME_BEFORE = {"APT", "BayesUCB", "CLUCBPAC", "EI", "EpsilonGreedy", "GPUCB", "KLUCB", "LSA", "LUCB", "OptKG", "PI",
                  "Thompson", "ThompsonSampling", "UCB1", "UGapEc", "Uniform",
                  # the fixed-confidence rules of issue 38: they never read the horizon (the env's budget is a cap)
                  "TrackAndStop", "EBTCI", "KLLUCB", "LilUCB", "TTUCB", "TTTS", "FWSampling",
                  # issue 62's fixed-confidence rules
                  "EBTCEpsilon", "ThresholdingTaS", "ThresholdingUniform", "ThresholdingRacing", "ThresholdingAPT",
                  "EBTCIUnknownVariances", "TSKKT"}


class LeastPulled(Agent):
    """Pull the least pulled arm, ties at random (never reads the budget)."""

    families: ClassVar[tuple[str, ...]] = ("thresholding",)
    anytime = True

    def select(self, obs: Obs) -> np.ndarray:
        return self.argmin(obs["counts"])


class HalfThenNearest(Agent):
    """Round robin for the first half of the budget T, then the arm whose mean is nearest the threshold: it reads
    T (``total_budget``), so it is not anytime (the default)."""

    families: ClassVar[tuple[str, ...]] = ("thresholding",)

    def select(self, obs: Obs) -> np.ndarray:
        robin = (obs["last_arm"][:, 0] + 1) % self.num_arms
        nearest = self.argmin(np.abs(obs["means"] - obs["threshold"]))
        return np.where(obs["counts"].sum(axis=1) < self.total_budget // 2, robin, nearest)


class HalfThenNearestClaimsAnytime(HalfThenNearest):
    anytime = True  # wrongly: it reads T


def spec_of(*agents: dict | str, budgets: tuple[int, ...] = (40, 100), runs: int = 20, chunk: int = 10,
            env: str = SETUP1) -> ExperimentSpec:
    return ExperimentSpec.from_dict({"env": env, "budgets": list(budgets), "runs": runs, "chunk": chunk, "seed": 3,
                                     "agents": list(agents)})


def assert_same_runs(a: ExperimentResult, b: ExperimentResult) -> None:
    assert a.runs.keys() == b.runs.keys()
    for key in a.runs:
        np.testing.assert_array_equal(a.runs[key], b.runs[key], err_msg=str(key))


# ---------------------------------------------------------------------------------------------------- anytime
def test_builtin_anytime_agents_unchanged() -> None:
    assert {name for name, cls in AGENTS.items() if cls.is_anytime({})} == ANYTIME_BEFORE
    assert {name for name, cls in AGENTS.items() if cls.anytime} == ANYTIME_BEFORE  # the class attribute agrees
    # parameters that remove the horizon, as before
    assert AGENTS["UGapEb"].is_anytime({"a": 1.0}) and AGENTS["UCBEBestArm"].is_anytime({"a": 1.0})
    assert AGENTS["DKWUCB"].is_anytime({"delta": 0.01}) and not AGENTS["BayesUCB"].is_anytime({"c": 1.0})


def test_a_custom_agent_is_not_anytime_by_default() -> None:
    assert Agent.anytime is False and not HalfThenNearest.is_anytime({})
    register("HalfThenNearest", HalfThenNearest)
    cells = expand(spec_of("HalfThenNearest"))
    assert {cell.budget for cell in cells} == {40, 100}  # one episode per budget
    register("Lying", HalfThenNearestClaimsAnytime)
    assert {cell.budget for cell in expand(spec_of("Lying"))} == {None}  # one episode serves both budgets


def test_an_agent_reading_the_budget_is_not_scored_from_longer_episodes() -> None:
    register("HalfThenNearest", HalfThenNearest)
    register("Lying", HalfThenNearestClaimsAnytime)
    both = run_experiment(spec_of("HalfThenNearest", "Lying", budgets=(40, 400), runs=60, chunk=30), progress=False)
    direct = run_experiment(spec_of("HalfThenNearest", "Lying", budgets=(40,), runs=60, chunk=30), progress=False)
    for metric in ("aggregate_regret", "error"):
        np.testing.assert_array_equal(both.runs[("HalfThenNearest", metric)][:, 0],
                                      direct.runs[("HalfThenNearest", metric)][:, 0])
    # the agent that wrongly declares anytime is scored at T = 40 from episodes played to T = 400 (round robin up
    # to pull 200): another result than the direct run at T = 40 gives it
    lying = both.runs[("Lying", "aggregate_regret")][:, 0]
    assert not np.array_equal(lying, direct.runs[("Lying", "aggregate_regret")][:, 0])


# ---------------------------------------------------------------------------------------------------- ties
class FixedValues(Agent):
    """Returns ``self.argmax(values)`` (or argmin) of fixed values, to test the tie rule."""

    families: ClassVar[tuple[str, ...]] = ("thresholding",)

    def __init__(self, values: list[float], largest: bool = True, *, tie_break: str = "random") -> None:
        self.values, self.largest = np.asarray(values, dtype=float), largest
        super().__init__(tie_break=tie_break)

    def select(self, obs: Obs) -> np.ndarray:
        table = np.broadcast_to(self.values, (self.num, self.num_arms))
        return self.argmax(table) if self.largest else self.argmin(table)


def arms_chosen(agent: Agent, n: int = 4000, seed: int = 0) -> np.ndarray:
    env = gym.make_vec(SETUP1, num_envs=n, vectorization_mode="vector_entry_point", budget=20)
    obs, _ = env.reset(seed=0)
    agent.reset(seed=seed)
    return agent.act(obs)[:, 0].copy()


@pytest.mark.parametrize("largest", [True, False])
def test_tie_helper_random_is_uniform_among_tied_arms(largest: bool) -> None:
    values = [1.0, 3.0, 3.0, 0.0, 3.0, 2.0, 3.0, 1.0, 0.0, 1.0]
    if not largest:
        values = [-v for v in values]
    arms = arms_chosen(FixedValues(values, largest))
    tied = [1, 2, 4, 6]
    assert set(np.unique(arms)) == set(tied)
    counts = np.bincount(arms, minlength=10)[tied]
    assert stats.chisquare(counts).pvalue > 0.001, counts  # 4000 copies, seed 0: uniform over the 4 tied arms


def test_tie_helper_index_takes_the_lowest_index() -> None:
    values = [1.0, 3.0, 3.0, 0.0, 3.0, 2.0, 3.0, 1.0, 0.0, 1.0]
    assert set(arms_chosen(FixedValues(values, True, tie_break="index"), n=50)) == {1}
    assert set(arms_chosen(FixedValues(values, False, tie_break="index"), n=50)) == {3}


def test_tie_helper_is_seeded_and_stable_within_an_episode() -> None:
    agent = FixedValues([0.0] * 10)
    first = arms_chosen(agent, n=200, seed=5)
    np.testing.assert_array_equal(first, arms_chosen(agent, n=200, seed=5))
    assert not np.array_equal(first, arms_chosen(agent, n=200, seed=6))
    env = gym.make_vec(SETUP1, num_envs=200, vectorization_mode="vector_entry_point", budget=20)
    obs, _ = env.reset(seed=0)
    agent.reset(seed=5)
    again = [agent.act(obs)[:, 0].copy() for _ in range(2)]  # the same observation twice: the same arms
    np.testing.assert_array_equal(again[0], again[1])


def test_tie_helper_rejects_wrong_shapes() -> None:
    agent = LeastPulled()
    with pytest.raises(ValueError, match=r"values must have shape \(N, K\)"):
        agent.argmax(np.zeros((3, 10)))  # no observation seen yet
    agent.act(gym.make(SETUP1).reset(seed=0)[0])
    with pytest.raises(ValueError, match=r"values must have shape \(N, K\) = \(1, 10\).*got \(10,\)"):
        agent.argmin(np.zeros(10))


# ---------------------------------------------------------------------------------------------------- lookup
def test_import_path_resolves_and_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    assert agent_class("tests.agents.test_registry:LeastPulled") is LeastPulled
    monkeypatch.syspath_prepend(str(EXAMPLES))
    spec = spec_of({"name": "custom_agent:VarianceAPT", "params": {"epsilon": 0.05}})
    assert spec.agents[0].cls.__name__ == "VarianceAPT" and spec.agents[0].anytime
    result = run_experiment(spec, progress=False)
    assert result.runs[("custom_agent:VarianceAPT(0.05)", "aggregate_regret")].shape == (20, 2)


@pytest.mark.parametrize(("name", "error", "match"), [
    ("LSAA", ValueError, r"agent name='LSAA' is unknown \(did you mean 'LSA'\?\); allowed: a built-in name "
                         r"\(bandit_gym.agents.registry.shipped_agents\(\): .*Uniform, ArmwisePPO, SB3Agent\), "
                         r".*register\(name, cls\).*entry point, or an import path 'package.module:Class'"),
    ("no_such_module_x:Rule", ValueError, r"cannot import module 'no_such_module_x'"),
    ("bandit_gym.metrics:Nope", ValueError, r"bandit_gym.metrics has no attribute 'Nope'"),
    ("json:JSONDecoder", TypeError, r"agent name='json:JSONDecoder' must be a subclass of bandit_gym.agents.Agent"),
    ("bandit_gym.metrics:aggregate_regret", TypeError, r"must be a subclass of .*Agent, got a function"),
    (":LSA", ValueError, r"is not an import path; write 'package.module:Class'"),
])
def test_bad_names(name: str, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        AgentSpec(name).cls  # noqa: B018  (resolved when a spec needs it)
    with pytest.raises(error, match=match):
        spec_of(name)


def test_register_rules() -> None:
    register("LeastPulled", LeastPulled)
    register("LeastPulled", LeastPulled)  # idempotent
    assert agent_class("LeastPulled") is LeastPulled
    with pytest.raises(ValueError, match=r"name='LSA' is a built-in agent \(bandit_gym.agents.thresholding.lsa.LSA\)"):
        register("LSA", LeastPulled)
    register("LSA", AGENTS["LSA"])  # the built-in itself: nothing to do
    with pytest.raises(ValueError, match=r"already registered to .*LeastPulled; pass override=True"):
        register("LeastPulled", HalfThenNearest)
    register("LeastPulled", HalfThenNearest, override=True)
    assert agent_class("LeastPulled") is HalfThenNearest

    class LeastPulled2(LeastPulled):  # the same code run again (a notebook cell): replaces the old class
        pass

    register("Again", LeastPulled2)
    redefined = type("LeastPulled2", (LeastPulled,), {"__qualname__": LeastPulled2.__qualname__,
                                                     "__module__": LeastPulled2.__module__})
    register("Again", redefined)
    assert agent_class("Again") is redefined
    with pytest.raises(TypeError, match=r"cls must be a subclass of bandit_gym.agents.Agent, got int"):
        register("Number", int)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="name must be a non-empty string without ':'"):
        register("a:b", LeastPulled)


def test_registered_name_runs_in_parallel_workers() -> None:
    class Local(LeastPulled):  # defined in a function: pickled by value (cloudpickle), as in a notebook
        pass

    register("LeastPulled", LeastPulled)  # importable by the workers (tests.agents.test_registry)
    register("Local", Local)
    spec = spec_of("LeastPulled", "Local", "Uniform")
    serial = run_experiment(spec, progress=False)
    assert_same_runs(serial, run_experiment(spec, jobs=2, progress=False))


def test_entry_point_is_loaded_lazily(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []

    def entry_points() -> list[EntryPoint]:
        calls.append(1)
        return [EntryPoint("Plugged", "tests.agents.test_registry:LeastPulled", registry.ENTRY_POINT_GROUP),
                EntryPoint("Broken", "no_such_module_x:Rule", registry.ENTRY_POINT_GROUP),
                EntryPoint("NotAnAgent", "json:JSONDecoder", registry.ENTRY_POINT_GROUP)]

    monkeypatch.setattr(registry, "_entry_points", entry_points)
    ExperimentSpec.from_dict({"env": SETUP1, "budgets": [10], "runs": 2, "agents": ["LSA"]})
    assert not calls  # built-in names never look at entry points
    result = run_experiment(spec_of("Plugged", runs=4, chunk=2), jobs=2, progress=False)
    assert calls and result.runs[("Plugged", "error")].shape == (4, 2)
    assert agent_class("Plugged") is LeastPulled and len(calls) == 1  # loaded once, then known
    with pytest.raises(ValueError, match=r"entry point 'no_such_module_x:Rule' failed to load \(ModuleNotFound"):
        agent_class("Broken")
    with pytest.raises(TypeError, match=r"entry point NotAnAgent = 'json:JSONDecoder' must be a subclass"):
        agent_class("NotAnAgent")


def test_cli_list_names_the_agents_of_installed_packages_without_loading_them(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from bandit_gym.cli import main

    points = [EntryPoint("Plugged", "no_such_module_x:Rule", registry.ENTRY_POINT_GROUP),
              EntryPoint("LSA", "elsewhere:LSA", registry.ENTRY_POINT_GROUP)]  # a built-in name wins; not listed
    monkeypatch.setattr(registry, "_entry_points", lambda: points)
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "Agents of installed packages" in out and "Plugged  no_such_module_x:Rule" in out
    assert "elsewhere:LSA" not in out  # and nothing was imported: the module does not exist
    monkeypatch.setattr(registry, "_entry_points", lambda: [])
    assert main(["list"]) == 0 and "Agents of installed packages" not in capsys.readouterr().out


def test_cell_keys_keep_plain_labels_and_digest_the_others() -> None:
    """A plain label (letters, digits, '.', '+', '-') is its own file name; any other gets its SHA-256 digest, so
    that two labels never share a cell file."""
    import hashlib

    spec = spec_of({"name": "APT", "params": {"epsilon": 0.05}, "label": "APT(.05)"}, "LSA",
                   {"name": "UCBE", "params": {"b": 0.0}})
    apt, ucbe = (f"{readable}_{hashlib.sha256(label.encode()).hexdigest()[:10]}"
                 for readable, label in (("APT_.05", "APT(.05)"), ("UCBE_0", "UCBE(0)")))
    assert [cell.key(spec) for cell in expand(spec)][::2] == [
        f"{apt}__anytime__chunk0", "LSA__anytime__chunk0", f"{ucbe}__T40__chunk0", f"{ucbe}__T100__chunk0"]
    assert Cell(0, None, 1).key(spec) == f"{apt}__anytime__chunk1"


# ---------------------------------------------------------------------------------------------------- CLI, Dask
def write_spec(path: Path, name: str, runs: int = 20) -> Path:
    path.write_text(f'env = "{SETUP1}"\nbudgets = [40, 100]\nruns = {runs}\nchunk = 10\nseed = 3\n'
                    f'agents = [{{name = "{name}", params = {{epsilon = 0.05}}}}, "APT"]\n')
    return path


def test_cli_runs_an_import_path_in_parallel_workers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec_file = write_spec(tmp_path / "custom.toml", "custom_agent:VarianceAPT")
    script = Path(sys.executable).with_name("bandit-gym")
    command = [str(script), "run", str(spec_file), "--jobs", "2", "--quiet", "--out", str(tmp_path / "out")]
    env = {**os.environ, "PYTHONPATH": str(EXAMPLES)}
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "custom_agent:VarianceAPT(0.05)" in done.stdout
    monkeypatch.syspath_prepend(str(EXAMPLES))
    parallel = ExperimentResult.load(tmp_path / "out")
    assert_same_runs(parallel, run_experiment(load_spec(spec_file), progress=False))


def test_cli_run_and_stats_find_a_module_in_the_working_directory(tmp_path: Path) -> None:
    """As in the README: the agent's module beside the spec, no PYTHONPATH; `stats` reloads the folder."""
    shutil.copy(EXAMPLES / "custom_agent.py", tmp_path)
    spec_file = write_spec(tmp_path / "custom.toml", "custom_agent:VarianceAPT")
    script = str(Path(sys.executable).with_name("bandit-gym"))
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    for command in (["run", str(spec_file), "--jobs", "2", "--quiet", "--out", "out"],
                    ["stats", "out", "--reference", "APT"]):
        done = subprocess.run([script, *command], cwd=tmp_path, env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    assert "custom_agent:VarianceAPT(0.05)" in done.stdout and "p_holm" in done.stdout


def load_spec(path: Path) -> ExperimentSpec:
    from bandit_gym.experiments import load_specs

    return load_specs(path)[0]


def test_dask_backend_runs_custom_agents(monkeypatch: pytest.MonkeyPatch) -> None:
    distributed = pytest.importorskip("dask.distributed")

    class Local(LeastPulled):  # by value through cloudpickle
        pass

    monkeypatch.syspath_prepend(str(EXAMPLES))
    register("LeastPulled", LeastPulled)
    register("Local", Local)
    spec = spec_of({"name": "custom_agent:VarianceAPT", "params": {"epsilon": 0.05}}, "LeastPulled", "Local", "APT")
    serial = run_experiment(spec, progress=False)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as \
            cluster, distributed.Client(cluster) as client:
        result = run_experiment(spec, jobs=2, backend="dask", progress=False)
        worker_pids = client.run(os.getpid)
    assert os.getpid() not in worker_pids.values()  # the cells ran in another process
    assert_same_runs(serial, result)


@pytest.mark.parametrize(("name", "words"), [
    ("LSAA", ["agent name='LSAA' is unknown", "import path 'package.module:Class'", "register"]),
    ("no_such_module_x:Rule", ["agent name='no_such_module_x:Rule'", "cannot import module", "PYTHONPATH"]),
    ("json:JSONDecoder", ["agent name='json:JSONDecoder'", "subclass of bandit_gym.agents.Agent"]),
])
def test_cli_bad_agent_name_is_one_line(name: str, words: list[str], tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    spec_file = write_spec(tmp_path / "bad.toml", name)
    assert main(["run", str(spec_file), "--jobs", "1", "--quiet", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("bandit-gym run: ")
    assert all(word in err for word in words), err
    assert not (tmp_path / "out").exists()
