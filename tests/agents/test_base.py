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


class LeastPulledSet(Agent):
    """``select`` + ``answer``: the least pulled arm, and an answer of its own (the m least pulled arms; on the
    thresholding bandit every arm pulled at least twice)."""

    families = ("thresholding", "best_arm", "top_k")

    def select(self, obs: dict) -> np.ndarray:
        return self.argmin(obs["counts"])

    def answer(self, obs: dict) -> np.ndarray:
        if "m" not in obs:
            return (obs["counts"] >= 2).astype(np.int64)
        return self.top(-obs["counts"], obs["m"][:, 0].astype(np.int64)).astype(np.int64)


def submitted(env_id: str, kwargs: dict[str, object], agent: Agent, steps: int = 7) -> list[tuple[np.ndarray,
                                                                                                    np.ndarray]]:
    """(obs counts, action) of the first ``steps`` steps of a 3-copy vector env."""
    env = gym.make_vec(env_id, num_envs=3, vectorization_mode="vector_entry_point", **kwargs)
    obs, _ = env.reset(seed=0)
    agent.reset(seed=2)
    seen = []
    for _ in range(steps):
        action = agent.act(obs).copy()
        seen.append((obs["counts"].copy(), action))
        obs, *_ = env.step(action)
    return seen


@pytest.mark.parametrize("family", ["thresholding", "best_arm", "top_k"])
def test_an_answer_of_its_own_is_submitted(family: str) -> None:
    env_id, kwargs = FAMILY_ENVS[family]
    for counts, action in submitted(env_id, kwargs, LeastPulledSet()):
        bits = action[:, 1:]
        if family == "thresholding":
            np.testing.assert_array_equal(bits, counts >= 2)
        else:  # m ones, all on arms of the fewest pulls
            m = 1 if family == "best_arm" else 10  # TopKIdentification-v0's default k
            assert (bits.sum(axis=1) == m).all()
            chosen = np.where(bits == 1, counts, -1).max(axis=1)
            unchosen = np.where(bits == 0, counts, np.inf).min(axis=1)
            assert (chosen <= unchosen).all()


@pytest.mark.parametrize("family", ["thresholding", "best_arm", "top_k"])
def test_the_default_answer_is_the_empirical_one_the_fast_path_submits(family: str) -> None:
    class Plain(Agent):  # the default answer, called as a user would
        families = ("thresholding", "best_arm", "top_k")

        def select(self, obs: dict) -> np.ndarray:
            self.called.append(Agent.answer(self, obs))
            return self.argmin(obs["counts"])

    agent = Plain()
    agent.called = []
    env_id, kwargs = FAMILY_ENVS[family]
    for called, (_, action) in zip(agent.called, submitted(env_id, kwargs, agent, steps=40), strict=True):
        np.testing.assert_array_equal(called, action[:, 1:])


def test_answer_is_checked() -> None:
    env = gym.make_vec("BestArmIdentification-v0", num_envs=3, vectorization_mode="vector_entry_point")
    obs, _ = env.reset(seed=0)
    k = env.unwrapped.engine.num_arms
    for returned in (np.ones((3, k - 1), int), np.full((3, k), 0.5), np.full((3, k), np.nan), np.full((3, k), 2),
                     np.ones(k, int), np.full((3, k), -1)):
        class Bad(LeastPulledSet):
            def answer(self, obs: dict, returned: object = returned) -> object:
                return returned

        with pytest.raises(ValueError, match=r"Bad\.answer must return one answer bit per copy and arm, an array of "
                                             rf"shape \(N, K\) = \(3, {k}\) of 0/1 integers or bools"):
            Bad().act(obs)


@pytest.mark.parametrize("parent", ["AdaptiveTopK", "OptMAI"])
def test_a_round_agents_overridden_answer_is_checked(parent: str) -> None:
    """The round-based top-K agents submit their answer themselves: a subclass's answer of fractions was cast to
    integer bits (0.7 -> 0) before this check."""
    from tests.conftest import AGENTS

    env = gym.make_vec("TopKIdentification-v0", num_envs=3, vectorization_mode="vector_entry_point")
    obs, _ = env.reset(seed=0)
    k = env.unwrapped.engine.num_arms

    class Bad(AGENTS[parent]):  # type: ignore[misc, valid-type]
        def answer(self, obs: dict) -> object:
            return np.full((3, k), 0.7)

    with pytest.raises(ValueError, match=r"Bad\.answer must return one answer bit per copy and arm"):
        Bad().act(obs)


@pytest.mark.parametrize("parent", ["LSA", "Uniform", "UGapEb", "AdaptiveTopK"])
def test_a_subclass_that_overrides_answer_is_played_through_it(parent: str) -> None:
    from tests.conftest import AGENTS

    cls = AGENTS[parent]
    family = cls.families[0] if parent != "AdaptiveTopK" else "top_k"
    env_id, kwargs = FAMILY_ENVS[str(family)]
    params = {"a": 1.0} if parent == "UGapEb" else {}

    class AllOnes(cls):  # type: ignore[misc,valid-type]
        def answer(self, obs: dict) -> np.ndarray:
            return np.ones(obs["counts"].shape, dtype=np.int64)

    for _, action in submitted(env_id, kwargs, AllOnes(**params)):
        assert (action[:, 1:] == 1).all()
    # the override changes nothing but the answer: the same arms as the parent's
    ours = [action[:, 0] for _, action in submitted(env_id, kwargs, AllOnes(**params), steps=30)]
    theirs = [action[:, 0] for _, action in submitted(env_id, kwargs, cls(**params), steps=30)]
    np.testing.assert_array_equal(ours, theirs)


class FirstArmMixin(Agent):
    """Pulls arm 0 (and counts its calls): a mixin meant to come before a built-in in a user's class."""

    calls = 0

    def select(self, obs: dict) -> np.ndarray:
        FirstArmMixin.calls += 1
        return np.zeros(len(obs["counts"]), dtype=np.int64)


@pytest.mark.parametrize("parent", ["LSA", "UGapEb", "AdaptiveTopK", "BayesUCB"])
def test_a_mixin_listed_before_a_built_in_is_played_through_its_select(parent: str) -> None:
    """Before, only an override in a subclass of the class with the fast step counted: ``class Mine(FirstArmMixin,
    LSA)`` was played by LSA's compiled step, and scored exactly LSA's numbers."""
    from bandit_gym.agents import register
    from tests.conftest import AGENTS

    cls = AGENTS[parent]
    mine = type("Mine", (FirstArmMixin, cls), {})
    family = "top_k" if parent == "AdaptiveTopK" else str(cls.families[0])
    env_id, kwargs = FAMILY_ENVS[family]
    params = {"a": 1.0} if parent == "UGapEb" else {}
    for _, action in submitted(env_id, kwargs, mine(**params)):
        assert (action[:, 0] == 0).all()
    # the engine's paths (a compiled rollout, batched pulls) play it through its select too
    register("Mine", mine, override=True)
    spec = ExperimentSpec.from_dict({"env": env_id, "budgets": [60], "runs": 4, "agents": [
        {"name": "Mine", "params": params}]})
    FirstArmMixin.calls = 0
    run_experiment(spec, progress=False)
    assert FirstArmMixin.calls >= 59


def test_top_keeps_count_arms_among_the_mask_and_ties_at_random() -> None:
    class Probe(Agent):
        families = ("best_arm",)

        def select(self, obs: dict) -> np.ndarray:
            return self.argmin(obs["counts"])

    env = gym.make_vec("BestArmIdentification-v0", num_envs=2000, vectorization_mode="vector_entry_point",
                       means=[0.2, 0.4, 0.6, 0.8])
    obs, _ = env.reset(seed=0)
    agent = Probe()
    agent.reset(seed=0)
    agent.act(obs)
    values = np.tile([1.0, 3.0, 3.0, -np.inf], (2000, 1))
    among = np.tile([True, True, True, False], (2000, 1))
    kept = agent.top(values, 2, among)
    assert (kept.sum(axis=1) == 2).all() and not kept[:, 3].any()
    assert kept[:, 1:3].all()  # the two 3s
    one = agent.top(values, 1, among)  # a tie between arms 1 and 2: each about half the time
    assert one[:, 1:3].sum(axis=1).tolist() == [1] * 2000 and 900 < one[:, 1].sum() < 1100
    assert (agent.top(values, 3, ~among)[:, 3]).all()  # -inf still ranks above the arms outside the mask
    with pytest.raises(ValueError, match=r"values must have shape \(N, K\) = \(2000, 4\)"):
        agent.top(values[:, :3], 1)


#: what a user's ``select`` may wrongly return for 5 copies of a 4-armed best-arm env, and words of the error (a
#: whole float, such as ``(obs["last_arm"] + 1) % K`` on the float32 observation, is an arm: it is not rounded)
MALFORMED_ARMS = {
    "too few (was padded with 0)": (np.array([1, 2, 3]), r"shape \(N,\) = \(5,\)"),
    "one number for all": (np.int64(1), r"shape \(N,\) = \(5,\)"),
    "(N, 1) (was flattened)": (np.ones((5, 1), dtype=int), r"shape \(N,\) = \(5,\)"),
    "a float arm (was rounded down)": (np.full(5, 2.7), r"of integers \(or whole floats\).*dtype float64"),
    "NaN": (np.full(5, np.nan), r"of integers \(or whole floats\).*dtype float64"),
    "bools": (np.ones(5, dtype=bool), r"of integers \(or whole floats\).*dtype bool"),
    "an arm past K": (np.full(5, 9), r"returned arm 9; allowed: 0\.\.4 \(K = 4, K: stop\)"),
    "a negative arm": (np.full(5, -1), r"returned arm -1; allowed: 0\.\.4"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED_ARMS))
def test_a_malformed_arm_from_select_is_one_clear_error(case: str) -> None:
    returned, words = MALFORMED_ARMS[case]

    class Careless(Agent):
        families = ("best_arm",)

        def select(self, obs: dict) -> object:
            return returned

    env = gym.make_vec("BestArmIdentification-v0", num_envs=5, vectorization_mode="vector_entry_point",
                       means=[0.2, 0.4, 0.6, 0.8])
    obs, _ = env.reset(seed=0)
    with pytest.raises(ValueError, match=r"Careless\.select .*" + words):
        Careless().act(obs)


def test_every_agent_derives_from_at_most_four_base_classes() -> None:
    """One protocol: every agent class of the package is a registered agent or one of four base classes (the
    protocol ``Agent``; ``BestArmAgent``, a compiled best-arm rule over named records; ``ThresholdingAgent``, a
    compiled thresholding rule, an index or a sampling rule stopped arm by arm; ``BayesianAgent``, a Gaussian
    posterior). Stopping rules, running means and rounds are components, not classes to derive from."""
    import importlib
    import pkgutil

    import bandit_gym.agents as package
    from bandit_gym.agents import AGENTS  # the algorithms (the learned agents are the RL study's)
    from bandit_gym.agents.bayesian._base import BayesianAgent
    from bandit_gym.agents.best_arm._base import BestArmAgent
    from bandit_gym.agents.thresholding._base import ThresholdingAgent

    classes = set()
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        module = importlib.import_module(info.name)
        classes |= {value for value in vars(module).values() if isinstance(value, type) and issubclass(value, Agent)
                    and value.__module__ == module.__name__}
    registered = {value for value in AGENTS.values() if isinstance(value, type)}
    assert len(classes) > 30 and registered <= classes
    assert classes - registered == {Agent, BestArmAgent, ThresholdingAgent, BayesianAgent}


def test_a_choice_is_compared_with_a_named_int_constant_never_a_float_code() -> None:
    """Choices are named: in every agent module, a value compared (``==``, ``!=``) with a named constant
    (``constants["threshold"] == _stopping.MIXTURE``, ``family == BERNOULLI``) is compared with an int, the option's
    index in its tuple, never with a float code; a record field is compared with no number literal but a flag's 0 or 1
    (``arrays["alive"] == 1.0``); and every constants field so compared is declared a choice (the stopping
    component's ``_stopping.CHOICES``, an agent's ``choice_fields``), which its agents' records hold as int64."""
    import ast
    import importlib
    import pathlib

    import bandit_gym.agents as package
    from bandit_gym.agents import AGENTS
    from bandit_gym.agents.best_arm import _stopping
    from bandit_gym.agents.best_arm._base import BestArmAgent

    def resolve(node: ast.expr, namespace: dict) -> object:
        if isinstance(node, ast.Name):
            return namespace.get(node.id)
        if isinstance(node, ast.Attribute):
            owner = resolve(node.value, namespace)
            return None if owner is None else getattr(owner, node.attr, None)
        return None

    root = pathlib.Path(package.__path__[0])
    compared: set[str] = set()  # the named constants compared with
    fields: set[str] = set()  # the constants fields compared with a named constant
    for path in sorted(root.rglob("*.py")):
        name = ".".join(("bandit_gym.agents", *path.relative_to(root).with_suffix("").parts)).removesuffix(".__init__")
        namespace = vars(importlib.import_module(name))
        for node in ast.walk(ast.parse(path.read_text())):
            equality = isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in (ast.Eq, ast.NotEq)
            if not equality:
                continue
            left, right = node.left, node.comparators[0]
            field = left.slice.value if (isinstance(left, ast.Subscript) and isinstance(left.slice, ast.Constant)
                                         and isinstance(left.slice.value, str)) else None
            where = f"{path.relative_to(root)}:{node.lineno}"
            if field is not None and isinstance(right, ast.Constant) and right.value not in (0, 1):
                raise AssertionError(f"{where}: the record field {field!r} compared with the literal {right.value!r}")
            label = right.attr if isinstance(right, ast.Attribute) else getattr(right, "id", "")
            value = resolve(right, namespace)
            if not (label.isupper() and len(label) > 1) or isinstance(value, str):  # not a code: a name
                continue
            assert type(value) is int, f"{where}: {label} = {value!r} is not an int"
            compared.add(label)
            if field is not None and isinstance(left.value, ast.Name) and left.value.id == "constants":
                fields.add(field)
    assert {"BERNOULLI", "MIXTURE", "HEURISTIC", "GK2016", "LS2020", "IDS", "LAST", "D_TRACKING"} <= compared
    declared = set(_stopping.CHOICES)
    for cls in AGENTS.values():
        if isinstance(cls, type) and issubclass(cls, BestArmAgent):
            agent = object.__new__(cls)
            agent.stopper = None
            dtype = agent.constants_type()
            assert all(dtype[name] == np.int64 for name in cls.choice_fields), cls.__name__
            declared |= set(cls.choice_fields)
    assert fields == declared == {"threshold", "family", "tracking", "proportions", "rate", "recommendation"}
