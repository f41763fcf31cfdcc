"""Pulls per second of the JAX path (``bandit_gym.jax``: functional env + pure agent, whole episodes in one
compiled function) beside the numba paths, side by side in one run, on the device JAX finds.

W1 is the suite's (tao2019 Setup 1, K = 10, T = 1000, LSA and APT(0.05)); W2 is K = 1000 Bernoulli arms with means
i / 1000, budget 10^5, UCB-E from H1; W3 is chen2017's TWOGROUP (n = 1000 arms, top K = 250, budget 10^5),
AdaptiveTopK (fixed budget) and CLUCB-PAC. For each agent and number of copies it prints the numba rates (the
path the experiment engine takes: compiled episodes, or batched rounds for AdaptiveTopK; and for W1 and W2 the
public vector API, ``make_vec`` + ``act``) and the JAX rate, and the ratio JAX / fastest numba. W2 and W3 play a
hundredth and a 125th of the copies (at least one: 50 and 40 with the default 5000; the suite plays 50 and 200).
Every path is compiled (and run once) before it is timed; times are the median of repeated runs.

    python -m benchmarks.bench_jax                       # W1 with 5000 copies (the suite's), on this machine
    python -m benchmarks.bench_jax --w2 --w3             # and W2 (50 copies) and W3 (40 copies)
    python -m benchmarks.bench_jax --copies 10000 100000 1000000 --skip-numba   # an accelerator's sweep
    python -m benchmarks.bench_jax --quick               # a tenth of the copies, to check that it works
    python -m benchmarks.bench_jax --prng philox4x32     # W1 also with keys of another JAX PRNG implementation

The numba numbers are this machine's CPU; the JAX numbers are those of ``jax.devices()[0]``, printed in the header.
"""

from __future__ import annotations

import argparse
import platform
import time
from collections.abc import Callable
from typing import Any

import jax
import numpy as np

import bandit_gym
from bandit_gym.instances import best_arm_complexity
from bandit_gym.jax import agents as jax_agents
from bandit_gym.jax.envs import BestArmFunctional, ThresholdingFunctional, TopKFunctional
from bandit_gym.jax.rollout import play
from benchmarks.suite import Workload, median_time, rollout_row, vector_row

W1_ID = "ThresholdingBandit-Tao2019Setup1-v0"
W3_ID = "TopKIdentification-Chen2017TwoGroupK250-v0"
PRNG_IMPLS = ("threefry2x32", "philox4x32", "philox2x32", "rbg", "unsafe_rbg")
"""JAX's PRNG implementations that ``--prng`` takes (``jax.random.key(seed, impl=...)``)."""


def jax_rate(env: Any, agent: Any, copies: int, prng: str | None = None) -> float:
    """Pulls per second of ``play`` on ``copies`` episodes (compiled and run once first), with keys of JAX's
    ``prng`` implementation (default: JAX's default, threefry2x32)."""
    def key(seed: int) -> Any:
        return seed if prng is None else jax.random.key(seed, impl=prng)

    play(env, agent, key(0), copies)["pulls"].block_until_ready()

    def once() -> tuple[int, float]:
        start = time.perf_counter()
        pulls = play(env, agent, key(1), copies)["pulls"]
        total = int(pulls.sum())  # waits for the device
        return total, time.perf_counter() - start

    pulls, seconds = median_time(once)
    return pulls / seconds


def w1_cases() -> list[tuple[str, Any, Callable[[], Any], Any]]:
    """(label, numba agent class, numba agent factory, JAX agent) for W1."""
    return [("LSA", bandit_gym.agents.LSA, bandit_gym.agents.LSA, jax_agents.LSA()),
            ("APT(0.05)", bandit_gym.agents.APT, lambda: bandit_gym.agents.APT(epsilon=0.05),
             jax_agents.APT(epsilon=0.05))]


def numba_rates(env_id: str, env_kwargs: dict[str, Any], label: str, factory: Callable[[], Any], copies: int,
                horizon: int, paths: tuple[str, ...] = ("compiled", "vector")) -> dict[str, float]:
    """The engine's path (``"compiled"`` episodes or ``"batched"`` rounds) and the public vector API
    (``"vector"``) on ``copies`` copies (the suite's functions)."""
    workload = Workload(label, env_id, env_kwargs, copies, horizon, {label: factory})
    rates = {}
    for path in paths:
        row = vector_row(workload, label) if path == "vector" else rollout_row(workload, label, path)
        rates["vector" if path == "vector" else "compiled"] = row.pulls / row.seconds
    return rates


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_jax", description=__doc__.split("\n\n")[0])
    parser.add_argument("--copies", type=int, nargs="*", default=None, help="numbers of copies (default 5000)")
    parser.add_argument("--quick", action="store_true", help="a tenth of the copies")
    parser.add_argument("--skip-numba", action="store_true", help="JAX only (an accelerator's large sweeps)")
    parser.add_argument("--prng", nargs="*", default=[], choices=PRNG_IMPLS, metavar="IMPL",
                        help=f"W1 also played from jax.random keys of these implementations ({', '.join(PRNG_IMPLS)})")
    parser.add_argument("--w2", action="store_true", help="also W2 (K = 1000, budget 10^5, UCB-E)")
    parser.add_argument("--w3", action="store_true",
                        help="also W3 (chen2017 TWOGROUP, n = 1000, K = 250, budget 10^5, AdaptiveTopK, CLUCB-PAC)")
    args = parser.parse_args(argv)
    copies = args.copies or [5000]
    if args.quick:
        copies = [max(c // 10, 1) for c in copies]
    device = jax.devices()[0]
    print(f"JAX {jax.__version__} on {device.platform}: {device.device_kind}; numba on {platform.processor() or 'CPU'}"
          f" ({platform.machine()})")
    print(f"{'workload':<6} {'agent':<22} {'copies':>9} {'numba engine':>15} {'numba make_vec':>15} "
          f"{'JAX play':>13} {'JAX / numba':>12}")
    env = ThresholdingFunctional(means=bandit_gym.ENV_SPECS[W1_ID].kwargs["means"], threshold=0.5, budget=1000)
    for label, _, factory, agent in w1_cases():
        for n in copies:
            rates = {} if args.skip_numba else numba_rates(W1_ID, {"budget": 1000}, label, factory, n, 1000)
            fast = jax_rate(env, agent, n)
            print(row("W1", label, n, rates, fast), flush=True)
            for impl in args.prng:
                print(row("W1", f"{label} {impl}", n, rates, jax_rate(env, agent, n, impl)), flush=True)
    if args.w2:
        w2(copies=[max(c // 100, 1) for c in copies], skip_numba=args.skip_numba)
    if args.w3:
        w3(copies=[max(c // 125, 1) for c in copies], skip_numba=args.skip_numba)
    return 0


def w2(copies: list[int], skip_numba: bool) -> None:
    """W2 through both paths."""
    means = np.arange(1000) / 1000
    h1 = best_arm_complexity(means)
    env = BestArmFunctional(means=means, budget=100_000)
    for n in copies:
        rates = {} if skip_numba else numba_rates(
            "BestArmIdentification-v0", {"means": means, "budget": 100_000}, "UCB-E",
            lambda: bandit_gym.agents.UCBEBestArm(H1=h1), n, 100_000)
        print(row("W2", "UCB-E", n, rates, jax_rate(env, jax_agents.UCBEBestArm(H1=h1), n)), flush=True)


def w3(copies: list[int], skip_numba: bool) -> None:
    """W3 through both paths: the engine's numba path (AdaptiveTopK's batched rounds, CLUCB-PAC's compiled
    episodes) beside ``play``."""
    kwargs = bandit_gym.ENV_SPECS[W3_ID].kwargs
    env = TopKFunctional(**kwargs)
    cases = [("AdaptiveTopK", lambda: bandit_gym.agents.AdaptiveTopK(form="fixed_budget"), "batched",
              jax_agents.AdaptiveTopK(form="fixed_budget")),
             ("CLUCB-PAC", bandit_gym.agents.CLUCBPAC, "compiled", jax_agents.CLUCBPAC())]
    for label, factory, path, agent in cases:
        for n in copies:
            rates = {} if skip_numba else numba_rates(W3_ID, {}, label, factory, n, kwargs["budget"], (path,))
            print(row("W3", label, n, rates, jax_rate(env, agent, n)), flush=True)


def row(workload: str, label: str, copies: int, numba: dict[str, float], fast: float) -> str:
    compiled, vector = numba.get("compiled"), numba.get("vector")
    best = max(numba.values()) if numba else None

    def cell(rate: float | None, width: int) -> str:
        return f"{rate:>{width}.3g}" if rate is not None else f"{'-':>{width}}"

    ratio = f"{fast / best:>12.2g}" if best else f"{'-':>12}"
    return f"{workload:<6} {label:<22} {copies:>9} {cell(compiled, 15)} {cell(vector, 15)} {cell(fast, 13)} {ratio}"


if __name__ == "__main__":
    raise SystemExit(main())
