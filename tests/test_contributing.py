"""The contributor's page (``docs/contributing.md``) names every file and hook an addition needs: its table of
what adding Sequential Halving touched is every file of the package, its docs and its tests that names the agent,
and every hook the registry-driven tests look up on an agent class is named on the page."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "contributing.md"
TEXT = (".py", ".md", ".toml", ".yml", ".yaml", ".ipynb")


def touched_table() -> set[str]:
    """The files in the page's table "What adding Sequential Halving touched"."""
    section = PAGE.read_text().split("### What adding Sequential Halving touched", 1)[1].split("\n#", 1)[0]
    return set(re.findall(r"^\| `([^`]+)` \|", section, flags=re.M))


def files_naming(word: str) -> set[str]:
    """The package's, docs' and tests' text files that name ``word``: not the changelog, the contributor's page
    itself, the committed results (``docs/<study>-<runs>runs/``) or the tests of the repository's layout."""
    found = set()
    for top in ("agents", "bandit_gym", "wrappers", "docs", "tests"):
        for path in (ROOT / top).rglob("*"):
            relative = path.relative_to(ROOT).as_posix()
            if (path.suffix not in TEXT or "__pycache__" in path.parts or re.match(r"docs/[^/]*runs/", relative)
                    or relative in {"docs/contributing.md", "tests/test_contributing.py", "tests/test_layout.py"}):
                continue
            if word in path.read_text(errors="replace"):
                found.add(relative)
    return found


def test_the_page_names_every_file_that_adding_sequential_halving_touched() -> None:
    table = touched_table()
    assert "agents/best_arm/sequential_halving.py" in table
    assert table == files_naming("SequentialHalving"), "docs/contributing.md's table and the repository disagree"


def test_the_page_names_every_hook_the_registry_tests_look_up() -> None:
    hooks = set()
    for path in (ROOT / "tests").rglob("test_*.py"):
        hooks |= set(re.findall(r'getattr\(cls, "(\w+)"', path.read_text()))
    assert "check_m" in hooks  # the one today: which agents return one arm only
    page = PAGE.read_text()
    assert not [hook for hook in hooks if f"`{hook}" not in page]
    assert "object.__new__(cls)" in page and ">>>" in page


NEW_AGENT = '''"""Least pulled: a least-pulled arm, the empirical answer (a test's agent, added as the page says)."""

from __future__ import annotations

import numpy as np

from bandit_gym.agents.base import Agent, Obs


class LeastPulled(Agent):
    """Least pulled: round robin over the arms, by the agent's tie rule; the family's empirical answer.

    Example:
        >>> import gymnasium as gym
        >>> from bandit_gym.agents import LeastPulled
        >>> from bandit_gym.rollout import play_episode
        >>> env = gym.make("BestArmIdentification-v0", means=[0.0, 1.0], budget=10, loss="error")
        >>> int(play_episode(env, LeastPulled(), seed=0)["pulls"])
        10
    """

    families = ("best_arm", "top_k")

    def select(self, obs: Obs) -> np.ndarray:
        return self.argmin(obs["counts"])
'''

PLAY = '''
import json, sys
import gymnasium as gym
import bandit_gym
from bandit_gym.agents import AGENTS, LeastPulled
from bandit_gym.cli import main
from bandit_gym.rollout import play_vector

assert AGENTS["LeastPulled"] is LeastPulled and "LeastPulled" in bandit_gym.agents.__all__
env = gym.make_vec("BestArmIdentification-v0", num_envs=64, vectorization_mode="vector_entry_point",
                   means=[0.2, 0.8], budget=40, loss="error")
episodes = play_vector(env, LeastPulled(), seed=0)
spec = sys.argv[1] + "/spec.toml"
with open(spec, "w") as file:
    file.write('[[experiment]]\\nname = "added"\\nenv = "TopKIdentification-v0"\\nbudgets = [60]\\nruns = 20\\n'
               'agents = ["LeastPulled", "Uniform"]\\n')
code = main(["run", spec, "--jobs", "1", "--quiet", "--out", sys.argv[1] + "/results"])
print(json.dumps({"pulls": episodes["pulls"].tolist(), "error": float(episodes["error"].mean()), "run": code}))
'''


@pytest.mark.slow
def test_an_agent_added_as_the_page_says_is_registered_and_plays_everywhere(tmp_path: Path) -> None:
    """Steps 1 and 3 of the page on a copy of the package: one new file and one import line make an agent that
    the registry lists, a vector env plays and a spec runs by name (the docs steps are what the docs tests check
    of every registered agent)."""
    import json
    import os
    import shutil
    import subprocess
    import sys

    import bandit_gym
    import bandit_gym.agents
    import bandit_gym.wrappers

    tree = tmp_path / "tree"
    compiled = shutil.ignore_patterns("__pycache__", "*.pyc")
    source = Path(bandit_gym.__file__).parent
    shutil.copytree(source, tree / "bandit_gym", ignore=compiled)
    for package in (bandit_gym.agents, bandit_gym.wrappers):
        shutil.copytree(Path(package.__file__).parent, tree / "bandit_gym" / package.__name__.rpartition(".")[2],
                        ignore=compiled, dirs_exist_ok=True)
    agents = tree / "bandit_gym" / "agents"
    (agents / "best_arm" / "least_pulled.py").write_text(NEW_AGENT)  # step 1: one file
    init = (agents / "__init__.py").read_text()
    line = "from bandit_gym.agents.best_arm.sequential_halving import SequentialHalving\n"
    assert line in init
    (agents / "__init__.py").write_text(init.replace(line, line.replace("sequential_halving import SequentialHalving",
                                                                        "least_pulled import LeastPulled") + line))
    env = {**os.environ, "PYTHONPATH": str(tree), "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    result = subprocess.run([sys.executable, "-c", PLAY, str(tmp_path)], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=None)
    assert result.returncode == 0, result.stderr[-3000:]
    played = json.loads(result.stdout.strip().splitlines()[-1])
    assert played["pulls"] == [40] * 64 and played["run"] == 0
    assert 0.0 <= played["error"] < 0.2  # 20 pulls of each arm tell 0.2 from 0.8 nearly always
    tables = list((tmp_path / "results").rglob("results.csv"))
    assert tables and all("LeastPulled" in table.read_text() for table in tables)
