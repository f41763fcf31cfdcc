"""Per-step kernels compiled twice, serial and parallel, and the choice between them, made by measuring both.

numba's parallel loops run on an OpenMP pool whose threads spin while they wait. On an idle machine that makes a
large batch's step about a third faster (LSA on tao2019 Setup 1, 5000 copies, 2 cores); when another process
keeps a core busy, every call waits for a descheduled thread, and the same step becomes tens of times slower
(measured on 2 cores with one busy process: 7 ms against 0.15 ms serial for LSA's ``act``). Waiting passively
(``OMP_WAIT_POLICY=PASSIVE``) avoids that but costs about 25 us per call, more than it saves. So for batches of
at least ``PARALLEL_COPIES`` copies a ``Kernel`` times its calls and uses the faster variant, trying
the other one again now and then (8 calls after a switch, then after 16, 32, ... up to 1024 calls while it
keeps losing). Both variants compute the same numbers (tested), so the choice changes only the speed.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

PARALLEL_COPIES = 2048
"""Batches from this many copies may run their per-step kernels on all cores."""
FORCE: str | None = None
"""``"serial"`` or ``"parallel"`` to bypass the measurement (tests); None: measure."""
#: calls between two tries of the variant that lost, at first and at most
PROBE_FIRST, PROBE_MOST = 8, 1024

SERIAL, PARALLEL = 0, 1


class Kernel:
    """A kernel's serial and parallel compilations; ``kernel(copies, *args)`` runs one of them."""

    def __init__(self, serial: Callable[..., Any], parallel: Callable[..., Any]) -> None:
        self.variants = (serial, parallel)
        self.warm = [False, False]  # a variant's first call compiles it: not timed
        self.cost = [math.inf, math.inf]  # seconds per copy, as last measured
        self.best = PARALLEL
        self.interval = self.wait = PROBE_FIRST

    def __call__(self, copies: int, *args: Any) -> Any:
        if FORCE is not None or copies < PARALLEL_COPIES:
            return self.variants[PARALLEL if FORCE == "parallel" and copies > 0 else SERIAL](*args)
        choice = self._choose()
        start = time.perf_counter()
        out = self.variants[choice](*args)
        self._record(choice, (time.perf_counter() - start) / copies)
        return out

    def _choose(self) -> int:
        for variant in (SERIAL, PARALLEL):
            if not self.warm[variant] or math.isinf(self.cost[variant]):
                return variant
        self.wait -= 1
        return self.best if self.wait > 0 else 1 - self.best

    def _record(self, choice: int, cost: float) -> None:
        if not self.warm[choice]:
            self.warm[choice] = True
            return
        probe = choice != self.best and not math.isinf(self.cost[self.best])
        old = self.cost[choice]
        self.cost[choice] = cost if probe or math.isinf(old) else (old + cost) / 2
        best = SERIAL if self.cost[SERIAL] <= self.cost[PARALLEL] else PARALLEL
        if probe and best != choice:  # the loser is tried again later and later while it keeps losing
            self.interval = min(2 * self.interval, PROBE_MOST)
            self.wait = self.interval
        elif best != self.best:  # a switch (a probe won, or the best one turned slow): check it again soon
            self.interval = self.wait = PROBE_FIRST
        self.best = best


class EntryPoints:
    """A compiled rule's entry points, made in its agent's file (``bandit_gym.jit``), as the agents call them:
    ``act(args)`` runs one act over a batch, serial or on all cores (a ``Kernel`` of ``step`` and
    ``parallel_step``; the copies are counted by the last array of ``args``, the action); ``play(*episodes)``
    runs whole episodes (``rollout``) in the signature ``bandit_gym.rollout`` calls."""

    def __init__(self, step: Callable[..., Any], parallel_step: Callable[..., Any],
                 rollout: Callable[..., Any] | None) -> None:
        self.step = Kernel(step, parallel_step)
        #: the whole-episode play, or None for a rule that has none (its agent returns no ``compiled_rollout``)
        self.rollout = rollout

    def act(self, args: tuple[Any, ...]) -> Any:
        return self.step(len(args[-1]), args)

    def play(self, *episodes: Any) -> None:
        if self.rollout is None:
            raise TypeError("this rule has no compiled rollout: play it step by step")
        self.rollout(episodes)
