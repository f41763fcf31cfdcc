"""Pulls per second of the JAX rollout on W1 (tao2019 Setup 1, K = 10, T = 1000) with the per-step code of before
2026-11-28 and of now, side by side in one run, and with keys of JAX's other PRNG implementations.

Before, a step read and wrote all K arms of a copy where one arm changed, and the index rules chose their arm in
two dependent passes:

- ``first_minimum``: the minimum of the index, then the argmin of the positions of the tied arms (two reductions,
  the second waiting for the first); now one reduction of (value, position, arm) triples;
- ``pull``: the pulled arm's mean as a sum of one-hot products over the K arms, and its count and sum updated by
  adding a one-hot vector; now an indexed read and an in-place add at the pulled arm;
- ``arm_at`` (the initial round): a comparison of the K positions; now an indexed read.

Both give the same episodes bit for bit (the same mean regret below; tested in tests/bandit_gym_jax). The old code is
patched into the package for the rows marked ``before`` and every row is compiled and run once before it is timed
(each rate the median of five runs). The last row is a hand-written kernel of the same workload (LSA, all copies'
arms in one (K, N) array, one draw per step for all copies): what a rollout written for this one workload reaches.

    python -m benchmarks.bench_jax_step                  # 20,000 copies (a CPU)
    python -m benchmarks.bench_jax_step --copies 1000000 # an accelerator
"""

from __future__ import annotations

import argparse
import functools
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import jax
import jax.numpy as jnp

import bandit_gym
from bandit_gym.jax import agents as jax_agents
from bandit_gym.jax.agents import _base, _index
from bandit_gym.jax.envs import ThresholdingFunctional
from bandit_gym.jax.envs import _base as env_base
from bandit_gym.jax.rollout import play

MEANS = bandit_gym.ENV_SPECS["ThresholdingBandit-Tao2019Setup1-v0"].kwargs["means"]
BUDGET = 1000


def before_first_minimum(values: jax.Array, order: _base.ArmOrder) -> jax.Array:
    tied = values == jnp.min(values)
    return jnp.argmin(jnp.where(tied, order.position_of, values.shape[-1]))


def before_arm_at(order: _base.ArmOrder, position: jax.Array) -> jax.Array:
    return jnp.argmax(order.position_of == position)


def before_pull(self: Any, state: Any, arm: jax.Array, pulling: jax.Array, key: jax.Array,
                params: Any) -> tuple[Any, jax.Array]:
    a = jnp.clip(arm, 0, self.num_arms - 1)
    hit = (jnp.arange(self.num_arms) == a) & pulling
    value = env_base.arm_sample(key, jnp.sum(jnp.where(hit, state.means, 0.0)), self.gaussian, params.sigma)
    return state._replace(counts=state.counts + hit, sums=state.sums + jnp.where(hit, value, 0.0),
                          budget_left=state.budget_left - pulling.astype(jnp.int32),
                          last_arm=jnp.where(pulling, a, state.last_arm),
                          last_value=jnp.where(pulling, value, state.last_value)), value


@contextmanager
def before() -> Iterator[None]:
    """The package with the per-step code of before 2026-11-28 (restored on exit)."""
    now = (_base.first_minimum, _index.first_minimum, _index.arm_at, env_base.BanditFunctional.pull)
    _base.first_minimum = _index.first_minimum = before_first_minimum
    _index.arm_at = before_arm_at
    env_base.BanditFunctional.pull = before_pull  # type: ignore[method-assign]
    jax.clear_caches()
    try:
        yield
    finally:
        _base.first_minimum, _index.first_minimum, _index.arm_at, env_base.BanditFunctional.pull = now
        jax.clear_caches()


def median_rate(run: Callable[[int], Any], copies: int) -> float:
    run(0)  # compile
    seconds = []
    for seed in range(1, 6):
        start = time.perf_counter()
        run(seed)
        seconds.append(time.perf_counter() - start)
    return copies * BUDGET / statistics.median(seconds)


def play_rate(agent: Any, copies: int, prng: str | None) -> tuple[float, float]:
    """Pulls per second of ``play`` and the mean regret of its first call."""
    env = ThresholdingFunctional(means=MEANS, threshold=0.5, budget=BUDGET)

    def key(seed: int) -> Any:
        return seed if prng is None else jax.random.key(seed, impl=prng)

    regret = float(play(env, agent, key(0), copies)["regret"].mean())
    return median_rate(lambda seed: int(play(env, agent, key(seed), copies)["pulls"].sum()), copies), regret


@functools.partial(jax.jit, static_argnames=("copies",))
def hand_run(key: jax.Array, copies: int, alpha: float, threshold: float) -> jax.Array:
    """LSA on W1 written for it alone: the copies' arms as one (K, N) array, a fixed loop of T pulls; the
    episodes' errors."""
    k = len(MEANS)
    means = jnp.asarray(MEANS, jnp.float32)[:, None]

    def pull(t: jax.Array, carry: tuple[jax.Array, jax.Array]) -> tuple[jax.Array, jax.Array]:
        counts, sums = carry
        gap = jnp.where(counts > 0, sums / jnp.maximum(counts, 1.0), 0.0) - threshold
        xi = jnp.where(counts < 1, -jnp.inf, alpha * counts * gap**2 + 0.5 * jnp.log(jnp.maximum(counts, 1.0)))
        hit = jnp.arange(k)[:, None] == jnp.argmin(xi, axis=0)[None, :]
        u = jax.random.uniform(jax.random.fold_in(key, t), (copies,))
        x = (u < jnp.sum(jnp.where(hit, means, 0.0), axis=0)).astype(jnp.float32)
        return counts + hit, sums + jnp.where(hit, x[None, :], 0.0)

    zero = jnp.zeros((k, copies), jnp.float32)
    counts, sums = jax.lax.fori_loop(0, BUDGET, pull, (zero, zero))
    return jnp.sum((sums / counts >= threshold) != (means >= threshold), axis=0).astype(jnp.float32)


def hand_kernel(copies: int, alpha: float = 1.35, threshold: float = 0.5) -> tuple[float, float]:
    """Pulls per second of ``hand_run`` and the mean regret of its first call."""
    def run(seed: int) -> jax.Array:
        return hand_run(jax.random.key(seed), copies, alpha, threshold)

    regret = float(run(0).mean())
    return median_rate(lambda seed: run(seed).block_until_ready(), copies), regret


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_jax_step", description=__doc__.split("\n\n")[0])
    parser.add_argument("--copies", type=int, default=20_000, help="episodes played at once (default 20000)")
    args = parser.parse_args(argv)
    device = jax.devices()[0]
    print(f"JAX {jax.__version__} on {device.platform}: {device.device_kind}; W1 with {args.copies} copies")
    print(f"{'step code':<10} {'keys':<13} {'agent':<10} {'pulls/s':>10} {'/ before':>9} {'mean regret':>12}")
    agents = {"LSA": jax_agents.LSA(), "APT(0.05)": jax_agents.APT(epsilon=0.05)}
    base: dict[str, float] = {}
    with before():
        for label, agent in agents.items():
            base[label], regret = play_rate(agent, args.copies, None)
            print(f"{'before':<10} {'threefry2x32':<13} {label:<10} {base[label]:>10.3g} {1.0:>9.2f} {regret:>12.6f}")
    for prng in (None, "philox4x32", "philox2x32", "unsafe_rbg", "rbg"):
        for label, agent in agents.items():
            rate, regret = play_rate(agent, args.copies, prng)
            print(f"{'now':<10} {prng or 'threefry2x32':<13} {label:<10} {rate:>10.3g} {rate / base[label]:>9.2f} "
                  f"{regret:>12.6f}", flush=True)
    rate, regret = hand_kernel(args.copies)
    print(f"{'hand':<10} {'threefry2x32':<13} {'LSA':<10} {rate:>10.3g} {rate / base['LSA']:>9.2f} {regret:>12.6f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
