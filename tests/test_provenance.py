"""What made a stored cell (``bandit_gym.provenance``): every cell records its agent's code fingerprint and the
package version; a run recomputes the cells whose agent changed and says so, reuses the others and counts them;
``force`` recomputes all; reading a folder reports cells made by other code and imports nothing."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from bandit_gym import __version__
from bandit_gym.cli import main
from bandit_gym.experiments import ExperimentResult, ExperimentSpec, run_experiment
from bandit_gym.provenance import code_fingerprint
from tests.conftest import AGENTS

RULE = '''
import numpy as np
from bandit_gym.agents import Agent


class Rule(Agent):
    families = ("thresholding",)
    anytime = True

    def select(self, obs):
        return self.argmin(obs["counts"]{edit})
'''


def write_rule(folder: Path, edit: str = "") -> object:
    """Write (or rewrite) the module ``prov_rule`` in ``folder`` and import (or reload) it."""
    (folder / "prov_rule.py").write_text(RULE.format(edit=edit))
    if "prov_rule" in sys.modules:
        return importlib.reload(sys.modules["prov_rule"])
    return importlib.import_module("prov_rule")


def spec() -> ExperimentSpec:
    return ExperimentSpec.from_dict({"env": "ThresholdingBandit-Tao2019Setup1-v0", "budgets": [20, 40],
                                     "runs": 6, "chunk": 3, "agents": ["prov_rule:Rule", "LSA"]})


@pytest.fixture
def rule_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "prov_rule", raising=False)
    write_rule(tmp_path)
    return tmp_path


def test_the_fingerprint_follows_the_source(rule_folder: Path) -> None:
    first = code_fingerprint(sys.modules["prov_rule"].Rule)  # type: ignore[attr-defined]
    assert code_fingerprint(sys.modules["prov_rule"].Rule) == first  # type: ignore[attr-defined]
    module = write_rule(rule_folder, edit=" + 0")
    assert code_fingerprint(module.Rule) != first  # type: ignore[attr-defined]
    module = write_rule(rule_folder)
    assert code_fingerprint(module.Rule) == first  # type: ignore[attr-defined]


def test_a_built_in_agent_covers_its_kernels() -> None:
    from bandit_gym import provenance

    names = [name for name, _ in provenance._sources(AGENTS["SuccessiveRejects"])]
    for module in ("bandit_gym.agents.best_arm.successive_rejects", "bandit_gym.agents.best_arm._base",
                   "bandit_gym.agents.best_arm._kernels", "bandit_gym.agents.base"):
        assert module in names
    assert "bandit_gym.envs.thresholding" not in names  # the env is not the agent's code
    assert len({code_fingerprint(cls) for cls in AGENTS.values()}) == len(AGENTS)


def test_a_changed_agent_is_recomputed_and_the_others_reused(rule_folder: Path) -> None:
    out = rule_folder / "out"
    first = run_experiment(spec(), out=out, progress=False)
    assert (first.reused, first.stale) == (0, [])
    with np.load(next((out / "cells").glob("LSA__*.npz"))) as cell:
        assert str(cell["version"]) == __version__
        assert str(cell["code"]) == code_fingerprint(AGENTS["LSA"])
    again = run_experiment(spec(), out=out, progress=False)
    assert (again.reused, again.stale) == (4, [])  # 2 chunks each, anytime: 2 + 2 cells

    write_rule(rule_folder, edit=" * -1")  # argmax of the counts: a different rule
    with pytest.warns(UserWarning, match=r"recomputing 2 cells: prov_rule:Rule's code changed"):
        changed = run_experiment(spec(), out=out, progress=False)
    assert changed.reused == 2
    assert changed.stale == ["2 cells: prov_rule:Rule's code changed"]
    old, new = first.runs, changed.runs
    assert np.array_equal(old[("LSA", "aggregate_regret")], new[("LSA", "aggregate_regret")])
    assert not np.array_equal(old[("prov_rule:Rule", "aggregate_regret")], new[("prov_rule:Rule", "aggregate_regret")])
    fresh = run_experiment(spec(), progress=False)  # the same spec in memory: what the folder now holds
    assert np.array_equal(fresh.runs[("prov_rule:Rule", "aggregate_regret")],
                          new[("prov_rule:Rule", "aggregate_regret")])

    forced = run_experiment(spec(), out=out, progress=False, force=True)
    assert forced.reused == 0
    assert forced.stale == ["4 cells: recomputed on request (force)"]


def tamper(cell: Path, **arrays: object) -> None:
    """Rewrite a stored cell with some of its arrays replaced (None: removed)."""
    with np.load(cell) as data:
        kept = {key: data[key] for key in data.files}
    for key, value in arrays.items():
        if value is None:
            kept.pop(key)
        else:
            kept[key] = np.asarray(value)
    np.savez(cell, **kept)  # type: ignore[arg-type]


def test_reading_reports_cells_made_by_other_code(tmp_path: Path) -> None:
    made = ExperimentSpec.from_dict({"env": "ThresholdingBandit-Tao2019Setup1-v0", "budgets": [20], "runs": 4,
                                     "chunk": 2, "agents": ["LSA", "APT"]})
    out = tmp_path / "out"
    run_experiment(made, out=out, progress=False)
    tamper(out / "cells" / "LSA__anytime__chunk0.npz", code="0123456789abcdef")
    tamper(out / "cells" / "APT__anytime__chunk1.npz", code=None, version=None)
    before = {path: path.stat().st_mtime_ns for path in out.rglob("*")}
    with pytest.warns(UserWarning, match="cells made by code other than") as caught:
        result = ExperimentResult.load(out)
    assert result.stale == ["1 cell: LSA's code changed", "1 cell: APT's cells were made before cells recorded "
                            "their code"]
    assert result.reused == 4
    assert "run the spec again" in str(caught[0].message)
    assert {path: path.stat().st_mtime_ns for path in out.rglob("*")} == before  # reading writes nothing

    tamper(out / "cells" / "LSA__anytime__chunk0.npz", code=code_fingerprint(AGENTS["LSA"]), version="0.0.1")
    with pytest.warns(UserWarning, match=r"LSA's cells were made by bandit_gym 0\.0\.1"):
        ExperimentResult.load(out)


def test_reading_imports_no_agent_to_compare(tmp_path: Path, rule_folder: Path) -> None:
    out = tmp_path / "out"
    run_experiment(spec(), out=out, progress=False)
    for cell in (out / "cells").glob("prov_rule*.npz"):
        tamper(cell, code="0123456789abcdef")
    del sys.modules["prov_rule"]
    result = ExperimentResult.load(out)  # no warning: the rule's module is not imported, so not compared
    assert result.stale == []
    assert "prov_rule" not in sys.modules


def test_cli_run_reports_reuse_and_force(rule_folder: Path, capsys: pytest.CaptureFixture[str],
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(rule_folder)
    (rule_folder / "spec.toml").write_text('env = "ThresholdingBandit-Tao2019Setup1-v0"\nbudgets = [20]\nruns = 4\n'
                                           'chunk = 2\nagents = ["prov_rule:Rule", "LSA"]\n')
    command = ["run", "spec.toml", "--jobs", "1", "--quiet"]
    assert main(command) == 0
    assert capsys.readouterr().out.rstrip().endswith("reused 0 stored cells")
    assert main(command) == 0
    assert capsys.readouterr().out.rstrip().endswith("reused 4 stored cells")
    write_rule(rule_folder, edit=" * -1")
    assert main(command) == 0
    assert capsys.readouterr().out.rstrip().endswith("reused 2 stored cells; recomputed 2 cells: prov_rule:Rule's "
                                                      "code changed")
    assert main([*command, "--force"]) == 0
    assert capsys.readouterr().out.rstrip().endswith("reused 0 stored cells; recomputed 4 cells: recomputed on "
                                                      "request (force)")
    for cell in (rule_folder / "spec" / "cells").glob("LSA*.npz"):
        tamper(cell, code="0123456789abcdef")
    assert main(["stats", "spec"]) == 0
    assert "note: spec holds cells made by code other than the code installed now (2 cells: LSA's code changed)" \
        in capsys.readouterr().out


def test_a_policy_saved_again_under_the_same_path_is_recomputed(tmp_path: Path) -> None:
    """A learned agent's decisions live in its files: a policy trained again into the same folder recomputes its
    cells ("its data files changed"), where the code fingerprint alone would serve the old policy's numbers."""
    from bandit_gym.rl import train

    folder = tmp_path / "policy"
    kwargs = {"horizon": 40}
    train("ThresholdBandit-v0", total_timesteps=128, seed=0, num_envs=2, env_kwargs=kwargs).save(folder)
    made = ExperimentSpec.from_dict({"env": "ThresholdBandit-v0", "budgets": [40], "runs": 4, "chunk": 4,
                                     "agents": [{"name": "SB3Agent", "params": {"policy": str(folder)}, "label": "PPO"},
                                                "UCB"]})
    out = tmp_path / "out"
    first = run_experiment(made, out=out, progress=False)
    with np.load(out / "cells" / "PPO__T40__chunk0.npz") as cell:
        code, _, data = str(cell["code"]).partition("+")
    assert code == code_fingerprint(AGENTS["SB3Agent"]) and len(data) == 16
    assert run_experiment(made, out=out, progress=False).reused == 2

    train("ThresholdBandit-v0", total_timesteps=128, seed=1, num_envs=2, env_kwargs=kwargs).save(folder)
    with pytest.warns(UserWarning, match="recomputing 1 cell: PPO's data files changed"):
        again = run_experiment(made, out=out, progress=False)
    assert (again.reused, again.stale) == (1, ["1 cell: PPO's data files changed"])
    assert np.array_equal(again.runs[("UCB", "regret")], first.runs[("UCB", "regret")])
    train("ThresholdBandit-v0", total_timesteps=128, seed=2, num_envs=2, env_kwargs=kwargs).save(folder)
    with pytest.warns(UserWarning, match="PPO's data files changed"):  # reading sees it too
        ExperimentResult.load(out)


ENV = '''
from bandit_gym.envs.thresholding import ThresholdingBanditEnv, ThresholdingBanditVectorEnv

THRESHOLD = {threshold}


class Env(ThresholdingBanditEnv):
    def __init__(self, **kwargs):
        super().__init__(**{{"threshold": THRESHOLD, **kwargs}})


class VectorEnv(ThresholdingBanditVectorEnv):
    def __init__(self, **kwargs):
        super().__init__(**{{"threshold": THRESHOLD, **kwargs}})
'''


def write_env(folder: Path, threshold: float) -> None:
    """Write (or rewrite) the module ``prov_env`` of a user's env in ``folder``, import (or reload) it and register
    it as ``ProvEnv-v0``."""
    import gymnasium as gym

    (folder / "prov_env.py").write_text(ENV.format(threshold=threshold))
    if "prov_env" in sys.modules:
        importlib.reload(sys.modules["prov_env"])
    gym.registry.pop("ProvEnv-v0", None)
    gym.register("ProvEnv-v0", entry_point="prov_env:Env", vector_entry_point="prov_env:VectorEnv",
                 kwargs={"means": [0.1, 0.3, 0.6, 0.9], "budget": 100})


@pytest.fixture
def env_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    import gymnasium as gym

    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "prov_env", raising=False)
    write_env(tmp_path, 0.5)
    yield tmp_path
    gym.registry.pop("ProvEnv-v0", None)


def test_a_changed_env_is_recomputed(env_folder: Path) -> None:
    """A user's registered env whose code changed (its threshold 0.5 -> 0.2): the run into the same folder recomputes
    every cell and says why; the numbers are those of a fresh folder. Registered again with other arguments: the
    same."""
    import gymnasium as gym

    made = ExperimentSpec.from_dict({"env": "ProvEnv-v0", "budgets": [40], "runs": 6, "chunk": 3,
                                     "agents": ["APT", "Uniform"]})
    out = env_folder / "out"
    first = run_experiment(made, out=out, progress=False)
    assert run_experiment(made, out=out, progress=False).reused == 4

    write_env(env_folder, 0.2)
    with pytest.warns(UserWarning, match=r"recomputing 4 cells: the env ProvEnv-v0's code or registration changed"):
        changed = run_experiment(made, out=out, progress=False)
    assert (changed.reused, changed.stale) == (0, ["4 cells: the env ProvEnv-v0's code or registration changed"])
    fresh = run_experiment(made, out=env_folder / "fresh", progress=False)
    for key in fresh.runs:
        assert np.array_equal(changed.runs[key], fresh.runs[key])
    assert not np.array_equal(changed.runs[("APT", "aggregate_regret")], first.runs[("APT", "aggregate_regret")])

    assert run_experiment(made, out=out, progress=False).reused == 4
    gym.registry.pop("ProvEnv-v0")
    gym.register("ProvEnv-v0", entry_point="prov_env:Env", vector_entry_point="prov_env:VectorEnv",
                 kwargs={"means": [0.1, 0.3, 0.6, 0.95], "budget": 100})
    with pytest.warns(UserWarning, match="recomputing 4 cells: the env ProvEnv-v0's code or registration changed"):
        run_experiment(made, out=out, progress=False)


def test_a_built_in_env_is_fingerprinted_by_its_modules() -> None:
    from bandit_gym import provenance

    first = provenance.env_fingerprint("ThresholdingBandit-Tao2019Setup1-v0")
    assert first == provenance.env_fingerprint("ThresholdingBandit-Tao2019Setup1-v0", imported_only=True)
    assert first != provenance.env_fingerprint("ThresholdingBandit-Tao2019Setup2-v0")  # other registered means
    assert first != provenance.env_fingerprint("jax/ThresholdingBandit-Tao2019Setup1-v0")  # the JAX twin's code


def test_reading_reports_a_changed_env_and_imports_nothing(env_folder: Path) -> None:
    made = ExperimentSpec.from_dict({"env": "ProvEnv-v0", "budgets": [40], "runs": 4, "chunk": 4, "agents": ["APT"]})
    out = env_folder / "out"
    run_experiment(made, out=out, progress=False)
    write_env(env_folder, 0.2)
    with pytest.warns(UserWarning, match=r"1 cell: the env ProvEnv-v0's code or registration changed"):
        ExperimentResult.load(out)
    del sys.modules["prov_env"]
    assert ExperimentResult.load(out).stale == []  # the env's module is not imported, so not compared
    assert "prov_env" not in sys.modules
