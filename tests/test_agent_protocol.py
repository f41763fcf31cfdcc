"""The agent protocol on every family: a ``select``-only agent and a ``select`` + ``stop`` agent, each written in
one user file, run through ``make_vec``, ``bandit-gym run --jobs 2`` and the Dask backend; what ``stop`` returns
is checked; a subclass that overrides ``stop`` is played through it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import bandit_gym  # noqa: F401  (registers the ids)
from bandit_gym.agents import Agent, Uniform
from bandit_gym.experiments import ExperimentResult, ExperimentSpec, run_experiment

USER_FILE = '''
import numpy as np
from bandit_gym.agents import Agent


class LeastPulled(Agent):
    """The least pulled arm, ties at random: ``select`` only."""

    families = ("thresholding", "threshold", "multi_armed", "best_arm", "top_k")

    def select(self, obs):
        return self.argmin(obs["counts"])


class StopAtFive(Agent):
    """Every arm five times, then stop: ``select`` + ``stop`` (the fixed-confidence setting's hook)."""

    families = ("thresholding", "best_arm", "top_k")

    def select(self, obs):
        return self.argmin(obs["counts"])

    def stop(self, obs):
        return obs["counts"].min(axis=1) >= 5
'''
#: one id per family, with a budget large enough that StopAtFive stops before it runs out
FAMILY_ENVS = {
    "thresholding": ("ThresholdingBandit-v0", {"budget": 200}),
    "threshold": ("ThresholdBandit-v0", {"horizon": 50}),
    "multi_armed": ("MultiArmedBandit-v0", {"budget": 50}),
    "best_arm": ("BestArmIdentification-v0", {"budget": 300}),
    "top_k": ("TopKIdentification-v0", {"budget": 800}),
}


@pytest.fixture
def user_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> object:
    (tmp_path / "my_rules.py").write_text(USER_FILE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "my_rules", raising=False)
    import my_rules  # type: ignore[import-not-found]

    return my_rules


def play(env_id: str, kwargs: dict[str, object], agent: Agent, copies: int = 4) -> np.ndarray:
    """Play one episode per copy through ``make_vec``; return each copy's pulls in it."""
    env = gym.make_vec(env_id, num_envs=copies, vectorization_mode="vector_entry_point", **kwargs)
    obs, _ = env.reset(seed=0)
    agent.reset(seed=1)
    pulls = np.zeros(copies, dtype=np.int64)
    done = np.zeros(copies, dtype=bool)
    while not done.all():
        obs, _, terminated, truncated, _ = env.step(agent.act(obs))
        ended = (terminated | truncated) & ~done
        pulls[ended] = obs["counts"][ended].sum(axis=1)  # the episode's last observation
        done |= ended
    env.close()
    return pulls


@pytest.mark.parametrize("family", sorted(FAMILY_ENVS))
def test_a_select_only_agent_plays_every_family(family: str, user_module: object) -> None:
    env_id, kwargs = FAMILY_ENVS[family]
    pulls = play(env_id, kwargs, user_module.LeastPulled())  # type: ignore[attr-defined]
    assert (pulls == next(iter(kwargs.values()))).all()  # never stops: the whole budget


@pytest.mark.parametrize("family", ["thresholding", "best_arm", "top_k"])
def test_a_select_and_stop_agent_stops_where_it_says(family: str, user_module: object) -> None:
    env_id, kwargs = FAMILY_ENVS[family]
    k = gym.make(env_id, **kwargs).unwrapped.engine.num_arms
    assert (play(env_id, kwargs, user_module.StopAtFive()) == 5 * k).all()  # type: ignore[attr-defined]


def test_stop_is_checked(user_module: object) -> None:
    env = gym.make_vec("BestArmIdentification-v0", num_envs=3, vectorization_mode="vector_entry_point")
    obs, _ = env.reset(seed=0)
    for returned, words in ((np.ones(2, bool), "shape (N,) = (3,)"), (np.ones(3), "dtype bool"),
                            (np.array([1, 0, 1]), "dtype bool"), (True, "shape (N,) = (3,)")):
        class Bad(user_module.LeastPulled):  # type: ignore[name-defined,misc]
            def stop(self, obs: dict, returned: object = returned) -> object:
                return returned

        with pytest.raises(ValueError, match=r"Bad\.stop must return one bool per copy.*" + words.replace("(", r"\(")
                           .replace(")", r"\)")):
            Bad().act(obs)
    online = gym.make_vec("MultiArmedBandit-v0", num_envs=3, vectorization_mode="vector_entry_point")
    obs, _ = online.reset(seed=0)

    class Stops(user_module.LeastPulled):  # type: ignore[name-defined,misc]
        def stop(self, obs: dict) -> np.ndarray:
            return np.ones(len(obs["counts"]), dtype=bool)

    with pytest.raises(ValueError, match=r"Stops\.stop returned True on a 'multi_armed' env, which has no stop"):
        Stops().act(obs)


def test_a_subclass_that_overrides_stop_is_played_through_it() -> None:
    class UniformToFive(Uniform):  # Uniform's own step calls select, not stop: it must be switched off
        def stop(self, obs: dict) -> np.ndarray:
            return obs["counts"].min(axis=1) >= 5

    assert (play("BestArmIdentification-v0", {"budget": 300}, UniformToFive()) == 100).all()
    spec = ExperimentSpec.from_dict({"env": "BestArmIdentification-v0", "budgets": [300], "runs": 4,
                                     "agents": [{"name": "Uniform"}]})
    assert run_experiment(spec, progress=False).summary().query("metric == 'pulls'")["mean"].item() == 300


def spec_file(folder: Path) -> Path:
    path = folder / "stop.toml"
    path.write_text('env = "BestArmIdentification-v0"\nbudgets = [300]\nruns = 6\nchunk = 3\n'
                    'agents = ["my_rules:LeastPulled", "my_rules:StopAtFive"]\n')
    return path


def pulls_of(result: ExperimentResult) -> dict[str, float]:
    table = result.summary().query("metric == 'pulls'")
    return dict(zip(table["agent"], table["mean"], strict=True))


def test_both_agents_run_through_the_cli_with_two_workers(user_module: object, tmp_path: Path) -> None:
    script = Path(sys.executable).with_name("bandit-gym")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    command = [str(script), "run", str(spec_file(tmp_path)), "--jobs", "2", "--quiet", "--out", str(tmp_path / "out")]
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert pulls_of(ExperimentResult.load(tmp_path / "out")) == {"my_rules:LeastPulled": 300.0,
                                                                  "my_rules:StopAtFive": 100.0}


def test_both_agents_run_on_dask(user_module: object, tmp_path: Path) -> None:
    distributed = pytest.importorskip("dask.distributed")
    from bandit_gym.experiments import load_specs

    spec = load_specs(spec_file(tmp_path))[0]
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as \
            cluster, distributed.Client(cluster):
        result = run_experiment(spec, jobs=2, backend="dask", progress=False)
    assert pulls_of(result) == {"my_rules:LeastPulled": 300.0, "my_rules:StopAtFive": 100.0}
