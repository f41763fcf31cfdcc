"""Compiled once, never stale (``bandit_gym.jit``): no compiled function is made inside a function; a second process
compiles nothing it compiled before; a changed helper in another module is compiled again and played; processes
that compile at the same moment share the cache without damaging it; workers of a parallel run share it."""

from __future__ import annotations

import ast
import importlib
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import bandit_gym
from bandit_gym import jit

#: the names under which a module compiles a function (decorators and calls)
COMPILERS = {"njit", "jit", "driver", "called", "parallel_called", "kernel", "parallel_kernel", "compile_pair",
             "parallel_pair", "vectorize", "cfunc", "_jit"}
#: those a call is recognised by (``kernel`` and ``jit`` also name variables)
CALLED_COMPILERS = COMPILERS - {"kernel", "jit"}


def compiler_name(node: ast.expr) -> str:
    target = node.func if isinstance(node, ast.Call) else node
    if isinstance(target, ast.Call):  # numba.njit(...)(function)
        target = target.func
    return target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")


def compiled_in_functions(path: Path) -> list[str]:
    """``file:line`` of every function compiled inside another function's body: a decorated nested ``def``, or a
    call that compiles a function."""
    found = []
    for outer in ast.walk(ast.parse(path.read_text())):
        if not isinstance(outer, (ast.FunctionDef, ast.AsyncFunctionDef)) or outer.name in COMPILERS:
            continue
        for node in (inner for statement in outer.body for inner in ast.walk(statement)):
            if isinstance(node, ast.FunctionDef) and any(compiler_name(d) in COMPILERS for d in node.decorator_list):
                found.append(f"{path}:{node.lineno} ({outer.name} defines {node.name})")
            elif isinstance(node, ast.Call) and compiler_name(node) in CALLED_COMPILERS:
                found.append(f"{path}:{node.lineno} ({outer.name} compiles)")
    return found


def test_no_compiled_function_is_made_inside_a_function() -> None:
    """numba caches a closure by its cells, and a dispatcher in a cell pickles with a per-process id: a compiled
    function made inside a function is compiled again in every process. The package's own decorators
    (``bandit_gym.jit``, which compile what they are given) and the JAX path (``jax.jit``) aside."""
    found = []
    for folder in jit.package_folders():
        for path in sorted(folder.rglob("*.py")):
            name = f"{folder.name}/{path.relative_to(folder).as_posix()}"
            if name == "bandit_gym/jit.py" or "/jax/" in name:
                continue
            found += compiled_in_functions(path)
    assert not found, "\n".join(found)


def test_no_jax_function_is_jitted_by_a_decorator_inside_a_function() -> None:
    """The JAX path's ``jax.jit``-decorated functions (``@jax.jit``, ``@functools.partial(jax.jit, ...)``) are
    module-level: one wrapper per process, whose traces are kept between calls. (``jax.jit`` of an env's bound
    step, one per env, aside.)"""
    found = []
    for path in sorted((Path(bandit_gym.__file__).parent / "jax").rglob("*.py")):
        for outer in ast.walk(ast.parse(path.read_text())):
            if isinstance(outer, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found += [f"{path}:{node.lineno} ({outer.name} defines {node.name})"
                          for statement in outer.body for node in ast.walk(statement)
                          if isinstance(node, ast.FunctionDef)
                          and any("jax.jit" in ast.unparse(d) for d in node.decorator_list)]
    assert not found, "\n".join(found)


def test_the_scan_finds_a_compiled_closure(tmp_path: Path) -> None:
    source = tmp_path / "factory.py"
    source.write_text(textwrap.dedent("""
        import numba
        from bandit_gym.jit import driver

        def factory(rule):
            @driver
            def step(x):
                return rule(x)
            return numba.njit(lambda x: x), step
    """))
    assert len(compiled_in_functions(source)) == 2


def test_the_cache_folder_is_keyed_by_the_source_and_honours_numba_cache_dir(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    assert jit.cache_root() == tmp_path / "bandit-gym"
    monkeypatch.delenv("NUMBA_CACHE_DIR")
    assert tmp_path not in jit.cache_root().parents and jit.cache_root().name == "numba"
    assert len(jit.source_fingerprint()) == 16
    names = {folder.name for folder in jit.package_folders()}
    assert "bandit_gym" in names and Path(bandit_gym.__file__).parent.resolve() in jit.package_folders()


#: a fresh process: the first acts of an agent (``sys.argv[1]``, SuccessiveRejects by default) on an env
#: (``sys.argv[2]``) and the compilations they made, as ``compiles=N actions=...``
FIRST_ACT = textwrap.dedent("""
    import hashlib
    import sys

    import numpy as np
    from numba.core import event

    compiles = []

    class Count(event.Listener):
        def on_start(self, event):
            compiles.append(event.data["dispatcher"].py_func.__qualname__)

        def on_end(self, event):
            pass

    event.register("numba:compile", Count())
    import gymnasium as gym
    from bandit_gym.agents import AGENTS

    name, env_id = "SuccessiveRejects", "BestArmIdentification-Audibert2010Problem1-v0"
    if len(sys.argv) > 2:
        name, env_id = sys.argv[1:3]
    env = gym.make_vec(env_id, num_envs=3, vectorization_mode="vector_entry_point", budget=120)
    agent = AGENTS[name]()
    obs, _ = env.reset(seed=0)
    agent.reset(seed=0)
    actions = []
    for _ in range(120):
        action = agent.act(obs)
        actions.append(action.copy())
        obs, *_ = env.step(action)
    print(f"compiles={len(compiles)} actions={hashlib.sha256(np.stack(actions).tobytes()).hexdigest()[:16]}")
""")


def first_act(cache: Path, path: str | None = None, agent: tuple[str, ...] = ()) -> tuple[int, str]:
    """Run ``FIRST_ACT`` in a fresh process with ``cache`` as ``NUMBA_CACHE_DIR`` (and ``path`` first on the
    module path; ``agent``: its name and env id); return its compilations and its actions' digest."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    if path is not None:
        env["PYTHONPATH"] = path
    done = subprocess.run([sys.executable, "-c", FIRST_ACT, *agent], capture_output=True, text=True, env=env,
                          check=False, cwd=cache)
    assert done.returncode == 0, done.stderr[-3000:]
    compiles, actions = done.stdout.split()[-2:]
    return int(compiles.split("=")[1]), actions.split("=")[1]


@pytest.mark.slow  # two fresh processes, the first compiling one rule
def test_a_second_process_compiles_nothing_it_compiled_before(tmp_path: Path) -> None:
    compiled, actions = first_act(tmp_path)
    assert compiled > 0
    assert first_act(tmp_path) == (0, actions)
    assert not list(tmp_path.glob("*.nb[ic]")) and (tmp_path / "bandit-gym").is_dir()  # nothing beside its folder


@pytest.mark.slow  # two fresh processes, the first compiling Opt-KG
def test_opt_kg_calls_scipy_by_a_symbol_and_is_cached_too(tmp_path: Path) -> None:
    """Opt-KG's rule calls scipy's compiled ``betaincc`` and ``betaln``; by an address of the process, numba would
    compile it again in every process."""
    agent = ("OptKG", "ThresholdingBandit-Tao2019Setup1-v0")
    compiled, actions = first_act(tmp_path, agent=agent)
    assert compiled > 0
    assert first_act(tmp_path, agent=agent) == (0, actions)


def package_copy(folder: Path) -> Path:
    """A copy of the installed package (its agents and wrappers inside it, as the wheel lays them out) under
    ``folder``, importable by putting ``folder`` first on the module path."""
    target = folder / "bandit_gym"
    shutil.copytree(Path(bandit_gym.__file__).parent, target, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("agents", "wrappers"):
        source = Path(str(importlib.import_module(f"bandit_gym.{name}").__file__)).parent
        if not (target / name).exists():
            shutil.copytree(source, target / name, ignore=shutil.ignore_patterns("__pycache__"))
    return folder


@pytest.mark.slow  # three fresh processes, two of them compiling one rule
def test_a_changed_helper_in_another_module_is_compiled_again_and_played(tmp_path: Path) -> None:
    """SuccessiveRejects' rule lives in ``best_arm/successive_rejects.py``; its empirical means come from
    ``ranking.empirical_means``. numba's own cache checks only the rule's file; the package's checks the whole
    source, so the edited helper is compiled and played."""
    root = package_copy(tmp_path / "copy")
    cache = tmp_path / "cache"
    cache.mkdir()
    compiled, actions = first_act(cache, str(root))
    assert compiled > 0 and first_act(cache, str(root)) == (0, actions)
    ranking = root / "bandit_gym" / "agents" / "ranking.py"
    text = ranking.read_text()
    helper = "out[i] = np.float64(sums[i]) / max(np.float64(counts[i]), 1.0)"
    assert helper in text
    ranking.write_text(text.replace(helper, "out[i] = -np.float64(sums[i]) / max(np.float64(counts[i]), 1.0)"))
    recompiled, changed = first_act(cache, str(root))
    assert recompiled > 0 and changed != actions  # the new code, not the cached one
    assert len([p for p in (cache / "bandit-gym").iterdir()]) == 2  # one folder per source fingerprint


@pytest.mark.slow  # three fresh processes compiling one rule, two of them at the same moment
def test_processes_compiling_at_once_leave_a_cache_that_loads(tmp_path: Path) -> None:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    runs = [subprocess.Popen([sys.executable, "-c", FIRST_ACT], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, env=env, cwd=tmp_path) for _ in range(2)]
    outputs = [run.communicate() for run in runs]
    assert all(run.returncode == 0 for run in runs), [err[-2000:] for _, err in outputs]
    digests = {out.split()[-1] for out, _ in outputs}
    assert len(digests) == 1
    assert first_act(tmp_path) == (0, digests.pop().split("=")[1])
    assert not list(tmp_path.rglob("*.tmp.*"))  # every write was completed by its rename


def test_the_cache_command_shows_the_folder_and_clears_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    from bandit_gym.cli import main

    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user"))
    (tmp_path / "bandit-gym" / "0123456789abcdef").mkdir(parents=True)
    (tmp_path / "bandit-gym" / "0123456789abcdef" / "rule.nbi").write_bytes(b"x" * 10)
    (tmp_path / "user" / "bandit_gym" / "jax").mkdir(parents=True)
    (tmp_path / "user" / "bandit_gym" / "jax" / "jit_play-cache").write_bytes(b"x" * 10)
    (tmp_path / "user" / "theirs").mkdir()
    assert main(["cache"]) == 0
    shown = capsys.readouterr().out
    assert str(tmp_path / "bandit-gym") in shown and "1 files" in shown and jit.source_fingerprint() in shown
    assert str(tmp_path / "user" / "bandit_gym" / "jax") in shown
    assert main(["cache", "--clear"]) == 0
    assert not (tmp_path / "bandit-gym").exists() and tmp_path.exists()  # only the package's own folders
    assert not (tmp_path / "user" / "bandit_gym" / "jax").exists() and (tmp_path / "user" / "theirs").exists()


def cache_files(folder: Path) -> dict[str, tuple[int, int]]:
    """Every file of a cache folder, with its size and modification time (a compilation saves, so rewrites)."""
    return {str(path.relative_to(folder)): (path.stat().st_size, path.stat().st_mtime_ns)
            for path in folder.rglob("*") if path.is_file()}


@pytest.mark.slow  # two runs of two workers, the first compiling two rules in each worker
@pytest.mark.parametrize("backend", ["loky", "dask", "ray"])
def test_workers_of_a_parallel_run_share_the_cache(tmp_path: Path, backend: str) -> None:
    """``bandit-gym run --jobs 2`` with joblib's local processes, a local Dask cluster or a local Ray: the first
    run's workers save the rules they compile into the cache; the second run's workers load them and save nothing
    (a compilation of a cached function would save it again), and the two tables are the same."""
    pytest.importorskip({"loky": "joblib", "dask": "dask.distributed", "ray": "ray"}[backend])
    spec = tmp_path / "spec.toml"
    spec.write_text(textwrap.dedent("""
        env = "BestArmIdentification-Audibert2010Problem1-v0"
        budgets = [100, 200]
        runs = 8
        chunk = 4
        seed = 0
        agents = ["SuccessiveRejects", "UGapEb"]
    """))
    cache = tmp_path / "cache"
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache), "RAY_USAGE_STATS_ENABLED": "0"}
    for out in ("first", "second"):
        done = subprocess.run([sys.executable, "-m", "bandit_gym.cli", "run", str(spec), "--out",
                               str(tmp_path / out), "--jobs", "2", "--backend", backend, "--quiet"],
                              capture_output=True, text=True, env=env, cwd=tmp_path, check=False)
        assert done.returncode == 0, done.stderr[-3000:]
        if out == "first":
            before = cache_files(cache)
    assert any(name.endswith(".nbc") and "successive_rejects" in name for name in before)
    assert cache_files(cache) == before
    first = (tmp_path / "first" / "results.csv").read_text()
    assert first == (tmp_path / "second" / "results.csv").read_text()


def test_a_record_played_as_the_shorter_record_it_extends_is_not_reported() -> None:
    """TTTS's state record extends every fixed-confidence state record (the same fields at the same offsets, then
    ``draws``): numba plays a helper compiled for the shorter one on it, and its experimental-feature warning is
    hidden (``bandit_gym.jit``'s "Records"), while the conversion itself, and every other warning, stay."""
    import warnings

    from numba import from_dtype
    from numba.core.errors import NumbaExperimentalFeatureWarning

    from bandit_gym.agents import TTTS
    from bandit_gym.agents.best_arm._base import records
    from bandit_gym.agents.best_arm._fixed_confidence import STATE_FIELDS
    from bandit_gym.jit import hide_record_subtyping

    longer, shorter = from_dtype(records(TTTS.state_fields)), from_dtype(records(STATE_FIELDS))
    assert TTTS.state_fields[:len(STATE_FIELDS)] == STATE_FIELDS and longer != shorter
    with warnings.catch_warnings(record=True) as caught:
        hide_record_subtyping()  # as importing bandit_gym.jit does (pytest keeps no filter made while collecting)
        warnings.simplefilter("default", UserWarning)
        assert longer.can_convert_to(None, shorter) is not None  # played as the shorter record
        assert shorter.can_convert_to(None, longer) is None  # never the other way
        warnings.warn("another warning", UserWarning, stacklevel=1)
    assert [str(w.message) for w in caught] == ["another warning"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", NumbaExperimentalFeatureWarning)  # the default: no filter of the package
        longer.can_convert_to(None, shorter)
    assert [w.category for w in caught] == [NumbaExperimentalFeatureWarning]  # what the package's filter hides


def test_a_best_arm_rule_method_is_refused_not_ignored() -> None:
    from bandit_gym.agents.best_arm._base import BestArmAgent

    with pytest.raises(TypeError, match="module-level function"):
        type("MyRule", (BestArmAgent,), {"rule": classmethod(lambda cls: None)})


def test_an_index_that_its_entry_points_would_not_play_is_refused() -> None:
    from bandit_gym.agents import LSA

    with pytest.raises(TypeError, match="LSA play its own index"):
        type("MyLSA", (LSA,), {"index": staticmethod(lambda count, total, theta, alpha, q: -count)})


#: a fresh process: W1's first JAX play, and the persistent-cache events of JAX, as ``misses=N hits=M folder=F``
JAX_PLAY = textwrap.dedent("""
    import jax

    events = []
    jax.monitoring.register_event_listener(lambda name, **kwargs: events.append(name))
    from bandit_gym.jax import agents, envs, rollout

    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
    env = envs.ThresholdingBanditJaxEnv.functional(means=(0.1, 0.4, 0.6, 0.9), threshold=0.5, budget=50)
    result = rollout.play(env, agents.JAX_AGENTS["APT"](), 0, 8)
    jax.block_until_ready(result)
    misses = events.count("/jax/compilation_cache/cache_misses")
    hits = events.count("/jax/compilation_cache/cache_hits")
    print(f"misses={misses} hits={hits} folder={jax.config.jax_compilation_cache_dir}")
""")


def test_a_second_process_loads_the_jax_play_from_the_persistent_cache(tmp_path: Path) -> None:
    """JAX's persistent compilation cache in the user's cache folder (none given): the second process's play
    compiles nothing; a cache folder the user gave JAX is kept."""
    pytest.importorskip("jax")
    env = {key: value for key, value in os.environ.items() if key != "JAX_COMPILATION_CACHE_DIR"}
    env["XDG_CACHE_HOME"] = str(tmp_path / "user")

    def run(**extra: str) -> str:
        done = subprocess.run([sys.executable, "-c", JAX_PLAY], env={**env, **extra}, capture_output=True, text=True,
                              check=True, cwd=tmp_path)
        return done.stdout.strip().splitlines()[-1]

    first, second = run(), run()
    folder = tmp_path / "user" / "bandit_gym" / "jax"
    assert first.startswith("misses=") and not first.startswith("misses=0 ") and first.endswith(f"folder={folder}")
    assert second.startswith("misses=0 hits=") and not second.startswith("misses=0 hits=0 ")
    assert any(folder.iterdir()) and sorted(path.name for path in tmp_path.iterdir()) == ["user"]
    theirs = tmp_path / "theirs"
    assert run(JAX_COMPILATION_CACHE_DIR=str(theirs)).endswith(f"folder={theirs}")
