"""The serial and parallel variants of the best-arm agents' per-step kernel compute the same numbers, whatever
was compiled before them in the process.

numba (0.68.1) compiles a parallel loop body through its parfor passes, whose dead-code elimination decides
which stores through a view it may drop from an alias analysis that follows the order of the body's blocks, an
order that depends on what the process compiled before. After four other rules had been compiled and played,
the parallel variant of EB-TCI's step dropped the store of its tracking count, and EB-TCI never stopped;
compiled first, it was right. Since then the parallel variant calls the per-copy step as a function compiled by
the serial pipeline (``bandit_gym.agents.best_arm._kernels.over_copies``).

A test run in a fresh process sees only the first situation, so each case runs in a subprocess of its own that
compiles and plays rules one after the other, as a test session or an experiment with several agents does, then
checks rules at every step of a short episode: the serial and the parallel variant applied to copies of the
same inputs must leave every output array equal bit for bit. The default case is the exact sequence that showed
the defect (it fails on the kernel before the fix); it depends on the compile history, so a change to the rules
or to numba may stop it from reproducing the old defect: the slow case checks every compiled rule after all the
others.

The same processes list every function of the package compiled for a literal argument and again for its type
(``leader = 0``, later ``leader = a``: ``bandit_gym.jit``, "Literals"), which the tests refuse: it doubles a
rule's first compilation for nothing.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from bandit_gym.agents.best_arm._base import BestArmAgent
from tests.conftest import AGENTS

SCRIPT = textwrap.dedent('''
    import copy, sys
    from numba.core import event, types

    compiled = []  # (the package's function, its argument types) of every compilation

    class Compiled(event.Listener):
        def on_start(self, event):
            function = event.data["dispatcher"].py_func
            if function.__module__.startswith("bandit_gym"):
                compiled.append((f"{function.__module__}.{function.__qualname__}", tuple(event.data["args"])))

        def on_end(self, event):
            pass

    event.register("numba:compile", Compiled())
    import gymnasium as gym
    import numpy as np
    import bandit_gym.agents as A
    from bandit_gym import _dispatch

    def env_for(cls, copies, means, budget, **options):
        setting = {"setting": "fixed_confidence"} if cls.anytime else {}
        if "top_k" in [family.value for family in cls.families]:
            return gym.make_vec("TopKIdentification-v0", num_envs=copies, vectorization_mode="vector_entry_point",
                                means=means, k=2, budget=budget, **setting, **options)
        return gym.make_vec("BestArmIdentification-v0", num_envs=copies, vectorization_mode="vector_entry_point",
                            means=means, budget=budget, **setting, **options)

    def agent_for(cls):
        if cls.__name__ in ("UCBEBestArm", "UGapEb"):  # no default exploration
            return cls(a=1.0)
        return cls(delta=0.1) if "delta" in cls.__init__.__code__.co_varnames else cls()

    before, checked = sys.argv[1].split(","), sys.argv[2].split(",")
    for name in filter(None, before):  # both variants compiled and played, as a session with several agents does
        for force in ("serial", "parallel"):
            _dispatch.FORCE = force
            env = env_for(A.AGENTS[name], 4, [0.5, 0.4, 0.3], 10_000)
            obs, _ = env.reset(seed=0)
            agent = agent_for(A.AGENTS[name])
            agent.reset(seed=0)
            for _ in range(8):
                obs, *_ = env.step(agent.act(obs))

    calls = []
    call = _dispatch.Kernel.__call__

    def flat(args):  # a best-arm step takes its arrays as one tuple
        return [a for arg in args for a in (arg if isinstance(arg, tuple) else (arg,))]

    def recorded(self, copies, *args):
        calls.append((self, [id(a) for a in flat(args)], copy.deepcopy(args)))
        return call(self, copies, *args)

    def raw(x):
        return np.ascontiguousarray(x).view(np.uint8) if isinstance(x, np.ndarray) else np.asarray(x)

    _dispatch.Kernel.__call__ = recorded
    _dispatch.FORCE = "serial"
    for name in checked:  # the serial variant plays; both are applied to copies of each step's inputs
        env = env_for(A.AGENTS[name], 8, [0.7, 0.5, 0.45, 0.4], 2000, copy=False)
        agent = agent_for(A.AGENTS[name])
        agent.reset(seed=0)
        obs, _ = env.reset(seed=1)
        for step in range(60):
            calls.clear()
            obs, *_ = env.step(agent.act(obs))
            kernel, _, args = [c for c in calls if id(agent.constants) in c[1]][-1]  # the agent's kernel
            serial, parallel = copy.deepcopy(args), copy.deepcopy(args)
            kernel.variants[0](*serial)
            kernel.variants[1](*parallel)
            serial, parallel = flat(serial), flat(parallel)
            unequal = [i for i in range(len(serial)) if not np.array_equal(raw(serial[i]), raw(parallel[i]))]
            if unequal:
                print(f"{name}: the variants differ at step {step} in arguments {unequal}")
                break
        else:
            print(f"{name}: equal")

    plain = {(function, args) for function, args in compiled if not any(isinstance(a, types.Literal) for a in args)}
    for function, args in compiled:  # a constant that later takes other values: compiled for both (bandit_gym.jit)
        if (function, tuple(types.unliteral(a) for a in args)) in plain and (function, args) not in plain:
            print(f"{function} compiled for a literal and again for its type: {args}")
''')

COMPILED = tuple(name for name, cls in AGENTS.items()
                 if isinstance(cls, type) and issubclass(cls, BestArmAgent) and cls.kernels is not None)
"""Every agent whose rule runs in the compiled per-step kernel (``over_copies``)."""


def variants_after(before: tuple[str, ...], checked: tuple[str, ...], cache: Path) -> list[str]:
    """In a fresh process with the empty compile cache ``cache`` (so that it compiles, not loads, what it plays),
    compile and play the rules ``before`` (both variants), then check the rules ``checked``; one line per checked
    rule."""
    done = subprocess.run([sys.executable, "-c", SCRIPT, ",".join(before), ",".join(checked)], capture_output=True,
                          text=True, check=False, env={**os.environ, "NUMBA_CACHE_DIR": str(cache)})
    assert done.returncode == 0, done.stderr[-3000:]
    return [line for line in done.stdout.splitlines() if line]


def test_the_compiled_rules_are_the_ones_checked() -> None:
    assert {"EBTCI", "TTTS", "TrackAndStop", "UGapEc", "CLUCBPAC", "SuccessiveRejects"} <= set(COMPILED)


@pytest.mark.slow
def test_eb_tci_after_four_other_rules(tmp_path: Path) -> None:
    """The sequence in which the parallel variant of EB-TCI's step dropped its tracking store (numba 0.68.1).
    Slow: a fresh process compiles five rules, serial and parallel (about 3 minutes on 2 busy cores)."""
    assert variants_after(("LilUCB", "FWSampling", "LUCB", "UGapEc"), ("EBTCI",), tmp_path) == ["EBTCI: equal"]


@pytest.mark.slow
def test_every_compiled_rule_after_all_the_others(tmp_path: Path) -> None:
    assert variants_after(COMPILED, COMPILED, tmp_path) == [f"{name}: equal" for name in COMPILED]
