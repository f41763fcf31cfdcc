"""Shared fixtures: the registry drives the tests."""

from __future__ import annotations

import inspect
import sys
from collections.abc import Iterator
from pathlib import Path

import gymnasium as gym
import pytest

import bandit_gym
from bandit_gym.agents.registry import shipped_agents
from bandit_gym.registration import family_of_env

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
"""Where ``python_command`` runs: a folder without the checkout's ``bandit_gym`` source in it."""


def python_command(code: str, *args: str) -> list[str]:
    """``python -c code args`` with the repository appended to ``sys.path`` (so that ``tests`` imports), not put
    first: the ``bandit_gym`` it imports is the installed one (a wheel, or an editable checkout), as in the test
    run itself. Run it with ``cwd=TESTS`` (or any folder but the repository's root, whose ``bandit_gym/`` source
    would come first)."""
    return [sys.executable, "-c", f"import sys; sys.path.append({str(ROOT)!r}); {code}", *args]


def module_command(module: str, *args: str) -> list[str]:
    """``python -m module args`` for a module of the test tree, as ``python_command`` runs code."""
    return python_command(f"import runpy; runpy.run_module({module!r}, run_name='__main__', alter_sys=True)", *args)


def pytest_report_header() -> str:
    """Which bandit_gym the run tests: the installed wheel or a checkout (an editable install)."""
    where = Path(bandit_gym.__file__).resolve().parent
    kind = "the checkout (editable install)" if where.is_relative_to(ROOT) else "an installed copy (not the checkout)"
    return f"bandit_gym {bandit_gym.__version__} from {where}: {kind}"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--runslow", action="store_true", default=False,
                     help="run the tests marked slow too (statistical, training, paper-claim, a fresh process "
                          "compiling every agent); -m slow runs them alone")


def runs_slow(config: pytest.Config) -> bool:
    """Whether the run keeps the tests marked slow: with ``--runslow``, or a ``-m`` expression of the user's
    (``-m slow``, ``-m "not slow"``), which then decides alone. A plain run leaves them out, as pytest's documented
    ``--runslow`` recipe does: the default suite is the one meant to run in minutes."""
    return bool(config.getoption("runslow") or config.getoption("markexpr"))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if runs_slow(config):
        return
    slow = [item for item in items if item.get_closest_marker("slow") is not None]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if item.get_closest_marker("slow") is None]


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, exitstatus: int,
                            config: pytest.Config) -> None:
    if not runs_slow(config):
        terminalreporter.write_line("the tests marked slow were left out: --runslow runs them too, -m slow alone")


ENV_IDS = list(bandit_gym.ENV_SPECS)
#: every agent the package ships: the algorithms of ``bandit_gym.agents.AGENTS`` and the learned agents of the RL
#: study, registered through the package's entry point (the registry-driven tests run them all)
AGENTS = shipped_agents()


def family_of_id(env_id: str) -> str:
    """The family of a registered id, as a string (``bandit_gym.registration.family_of_env``)."""
    return str(family_of_env(env_id))


def small_kwargs(env_id: str) -> dict:
    """Shrink the budget/horizon so whole episodes stay fast in tests."""
    return {"horizon": 60} if family_of_id(env_id) == "threshold" else {"budget": 60}


def make_agent(name: str, env_id: str, **params: object):
    """An agent of the registry, with its oracle parameters computed from the env's (fixed) instance."""
    cls = AGENTS[name]
    if name == "SB3Agent" and "policy" not in params:  # an untrained PPO policy for this env (the adapter's path)
        from stable_baselines3 import PPO

        params = {"policy": PPO("MultiInputPolicy", gym.make(env_id, **small_kwargs(env_id)), seed=0, device="cpu"),
                  **params}
    if name == "ArmwisePPO" and "problem" not in params:  # the shipped policy of the env's family
        params = {"problem": family_of_id(env_id), **params}
    engine = gym.make(env_id).unwrapped.engine if "distribution" in inspect.signature(cls).parameters else None
    if hasattr(engine, "arm_distribution"):
        # a fixed-confidence rule's family of arms: the env's (Gaussian of the env's sigma unless Bernoulli)
        gaussian = engine.arm_distribution != "bernoulli"
        params = {"distribution": "gaussian" if gaussian else "bernoulli", "sigma": float(engine.sigma), **params}
    if cls.oracle_parameters:
        env = gym.make(env_id)
        env.reset(seed=0)
        engine = env.unwrapped.engine
        # a sampled instance: the oracle of the first episode's instance (enough to exercise the protocol)
        truth = engine.oracle_values(engine.means[0])
        params = {**{key: truth[key] for key in cls.oracle_parameters}, **params}
    return cls(**params)


#: Ids with hundreds of arms, where a PPO policy is slow (SB3's MultiDiscrete head is one torch Categorical per
#: action entry: a predict on n = 1000 costs about a second): chen2017's n = 1000 presets (the same env class as
#: TopKIdentification-v0, n = 100), the synthetic traffic preset (K = 357; CorrelatedBestArm-v0, K = 50, has the
#: same class) and ModelSelection-v0 (K = 160, a best-arm env with table-sampled arms). The PPO smoke test and
#: SB3Agent's registry test skip them; SB3's checker runs on all of them.
LARGE_K = ("TopKIdentification-Chen2017", "CorrelatedBestArm-TrafficSynthetic", "ModelSelection")

AGENT_ENV_PAIRS = [
    (name, env_id) for name, cls in AGENTS.items() for env_id in ENV_IDS
    if family_of_id(env_id) in cls.families and not (name == "SB3Agent" and env_id.startswith(LARGE_K))
]


@pytest.fixture(params=ENV_IDS)
def env_id(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture(autouse=True)
def _agent_registry_per_test() -> Iterator[None]:
    """Names a test gives to ``bandit_gym.agents.register`` (the tutorial's, an example's) end with the test, as
    they would with the process of a user's session."""
    from bandit_gym.agents.registry import REGISTERED

    saved = dict(REGISTERED)
    yield
    REGISTERED.clear()
    REGISTERED.update(saved)
