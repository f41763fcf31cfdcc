"""The performance suite: five workloads through the public API, each against a plain per-step loop over one env.

    python -m benchmarks                 # every workload (under 10 minutes on 2 cores)
    python -m benchmarks --only W1 W2    # some of them
    python -m benchmarks --quick         # a tenth of the runs, to check that it works

For each workload it prints, side by side in one run: the pulls made, the time, pulls per second, the rate of a
plain per-step loop (``gym.make`` + ``agent.act`` + ``env.step``, one pull per Python iteration, the way bandit
code is usually written; the loop's rate does not depend on the number of runs, so it plays a fixed number of
pulls) and the ratio of the two, and the rate of the fastest installed peer library on the workload's analogue
(:mod:`benchmarks.peers`; ``pip install -e ".[bench]"``) with our ratio to it. Then the issue's targets, each
met or missed: W1 >= 2e7 pulls/s; W2's cost per pull within 5x of W1's; the vector env's own overhead at most
15% over the bare simulation kernel; ``import bandit_gym`` under 0.35 s. Every kernel is compiled before the
timing starts.

Workloads:

- W1: tao2019 Setup 1 (K = 10, T = 1000), LSA and APT, 5000 runs: ``gym.make_vec`` + ``agent.act``.
- W2: K = 1000 Bernoulli arms with means i / 1000, UCB-E (``UCBEBestArm``, Audibert et al.'s a from H1), 50
  runs, budget 10^5: ``gym.make_vec`` + ``agent.act``.
- W3: chen2017 TWOGROUP, n = 1000, K = 250, budget 10^5, AdaptiveTopK (batched rounds, ``play_batched``) and
  CLUCB-PAC (whole compiled episodes, ``play_compiled``), 200 runs: the paths the experiment engine takes.
- W4: CorrelatedBestArm-TrafficSynthetic (K = 357, T = 400), BayesGap, 100 runs: ``gym.make_vec`` + ``act``.
- W5: ThresholdBandit, K = 10, m = 20 (``staircase_distributions``), T = 10^5, DKWUCB, 1000 runs.

Two diagnostic variants run with W2 and explain its target: W2's 50 copies with K = 10 arms (does a pull cost
more with more arms?) and W1 played by 50 copies (what does a pull cost at W2's number of copies?). The env's
overhead is split into its compiled work and Gymnasium's step in Python.

The vector envs are made with ``copy=False``, the no-copy fast path the experiment engine takes (observations
are the env's buffers); ``python -m benchmarks.bench_copy`` measures the default ``copy=True`` against it.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numba
import numpy as np

import bandit_gym  # noqa: F401  (registers the envs)
from bandit_gym.agents import APT, CLUCBPAC, DKWUCB, LSA, AdaptiveTopK, BayesGap, UCBEBestArm
from bandit_gym.envs._base import engine_of
from bandit_gym.instances import best_arm_complexity, staircase_distributions
from bandit_gym.rollout import play_batched, play_compiled
from benchmarks import peers

#: pulls the per-step loop plays for each workload (enough for a stable rate: its cost per pull is constant)
LOOP_PULLS = 20_000


@dataclass
class Row:
    """One measured path of one workload."""

    workload: str
    agent: str
    path: str
    pulls: int
    seconds: float
    loop_rate: float = float("nan")
    #: the fastest installed peer library on this workload's analogue (``benchmarks.peers``)
    peer: str = ""
    peer_rate: float = float("nan")

    @property
    def rate(self) -> float:
        return self.pulls / self.seconds

    @property
    def ratio(self) -> float:
        return self.rate / self.loop_rate


@dataclass(frozen=True)
class Workload:
    """An env (id and keyword arguments) and the agents to play on it."""

    name: str
    env_id: str
    env_kwargs: dict[str, Any]
    runs: int
    horizon: int
    agents: dict[str, Callable[[], Any]]
    #: per agent, the paths measured: "vector" (make_vec + act, the default), "batched" or "compiled" (the
    #: experiment engine's rollouts: batched rounds, or whole episodes in compiled code)
    paths: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: the workload a diagnostic variant belongs to (it explains that workload's target); "" for the five
    diagnoses: str = ""

    @property
    def group(self) -> str:
        return self.diagnoses or self.name


def make_vec(workload: Workload, runs: int, **overrides: Any) -> gym.vector.VectorEnv:
    """The workload's native vector env on the no-copy fast path (``copy=False``: the env's buffers, as the
    experiment engine plays; :mod:`benchmarks.bench_copy` measures the default ``copy=True`` against it)."""
    return gym.make_vec(workload.env_id, num_envs=runs, vectorization_mode="vector_entry_point",
                        **{"copy": False, **workload.env_kwargs, **overrides})


def play_steps(env: Any, agent: Any, steps: int, seed: int = 0) -> int:
    """Step a (vector) env ``steps`` times with ``agent``; return the pulls made (a pure-exploration episode's
    answer step, which ends it, pulls nothing; the threshold bandit's last round does)."""
    pure = "m" in env.observation_space.spaces or "epsilon" in env.observation_space.spaces
    agent.reset(seed=seed)
    obs, _ = env.reset(seed=seed)
    pulls = 0
    for _ in range(steps):
        obs, _, terminated, truncated, _ = env.step(agent.act(obs))
        pulls += int(np.size(terminated) - (np.count_nonzero(terminated) if pure else 0))
        if np.ndim(terminated) == 0 and (terminated or truncated):  # a single env: the loop resets it
            obs, _ = env.reset()
    return pulls


def vector_row(workload: Workload, label: str) -> Row:
    """``gym.make_vec`` + ``agent.act`` for one episode per copy (``horizon`` pulls, then the answer step)."""
    agent = workload.agents[label]()
    env = make_vec(workload, workload.runs)
    play_steps(env, agent, 30)  # compile first (the kernels differ with the batch size: serial or parallel)
    pure = not workload.env_id.startswith("ThresholdBandit")
    steps = workload.horizon + 1 if pure else workload.horizon  # pure exploration: T pulls and the answer step

    def once() -> tuple[int, float]:
        start = time.perf_counter()
        pulls = play_steps(env, agent, steps)
        return pulls, time.perf_counter() - start

    pulls, seconds = median_time(once)
    return Row(workload.name, label, "make_vec + act", pulls, seconds)


def median_time(once: Callable[[], tuple[int, float]]) -> tuple[int, float]:
    """``once()`` -> (pulls, seconds); repeated to 5 times in all when it takes under 2 s (a shared machine's
    rates vary by tens of percent from run to run), and the median time kept."""
    pulls, seconds = once()
    if seconds >= 2.0:
        return pulls, seconds
    return pulls, statistics.median([seconds] + [once()[1] for _ in range(4)])


def rollout_row(workload: Workload, label: str, path: str) -> Row:
    """The experiment engine's path: batched rounds (``play_batched``) or compiled episodes (``play_compiled``)."""
    play = play_batched if path == "batched" else play_compiled
    # the compiled thresholding rollout reads counter-based streams (common random numbers)
    crn = {"common_random_numbers": True} if workload.env_id.startswith("Thresholding") else {}
    env = make_vec(workload, workload.runs, **crn)
    # compile first, on the env that is timed: a shorter budget or fewer copies can leave a kernel of the timed run
    # uncompiled (W3's AdaptiveTopK with a budget of 2000; the serial and parallel kernels), and a first run of 2 s
    # or more is timed once (``median_time``), its compilation included
    play(env, workload.agents[label](), seed=0)

    def once() -> tuple[int, float]:
        start = time.perf_counter()
        result = play(env, workload.agents[label](), seed=0)
        seconds = time.perf_counter() - start
        assert result is not None, f"{label} has no {path} path on {workload.env_id}"
        return int(result["pulls"].sum()), seconds

    pulls, seconds = median_time(once)
    return Row(workload.name, label, "play_batched" if path == "batched" else "play_compiled", pulls, seconds)


def loop_rate(workload: Workload, label: str, pulls: int = LOOP_PULLS) -> float:
    """Pulls per second of the plain loop: one ``gym.make`` env, ``agent.act`` and ``env.step`` per pull."""
    env = gym.make(workload.env_id, **workload.env_kwargs)
    agent = workload.agents[label]()
    play_steps(env, agent, 30)  # compile the single-copy kernels first
    start = time.perf_counter()
    made = play_steps(env, agent, pulls)
    return made / (time.perf_counter() - start)


def workloads(quick: bool) -> list[Workload]:
    scale = 10 if quick else 1
    k2 = 1000
    means2 = np.arange(k2) / k2
    small = np.arange(10) / 10  # W2's shape with K = 10: the same copies and budget, a hundredth of the arms
    traffic = gym.make("CorrelatedBestArm-TrafficSynthetic-v1").reset(seed=0)[1]["model"]
    return [
        Workload("W1", "ThresholdingBandit-Tao2019Setup1-v0", {"budget": 1000}, 5000 // scale, 1000,
                 {"LSA": LSA, "APT": lambda: APT(epsilon=0.05)},
                 {"LSA": ("vector", "compiled"), "APT": ("vector", "compiled")}),
        Workload("W2", "BestArmIdentification-v0", {"means": means2, "budget": 100_000}, 50 // scale, 100_000,
                 {"UCB-E": lambda: UCBEBestArm(H1=best_arm_complexity(means2))}, {"UCB-E": ("vector", "compiled")}),
        # the diagnostics of W2's target: the same 50 copies with K = 10 arms, and W1 played by 50 copies
        Workload("W2, K = 10", "BestArmIdentification-v0", {"means": small, "budget": 100_000}, 50 // scale,
                 100_000, {"UCB-E": lambda: UCBEBestArm(H1=best_arm_complexity(small))}, {"UCB-E": ("vector",)},
                 diagnoses="W2"),
        Workload("W1, 50 runs", "ThresholdingBandit-Tao2019Setup1-v0", {"budget": 1000}, 50 // scale, 1000,
                 {"APT": lambda: APT(epsilon=0.05)}, diagnoses="W2"),
        Workload("W3", "TopKIdentification-Chen2017TwoGroupK250-v0", {}, 200 // scale, 100_000,
                 {"AdaptiveTopK": lambda: AdaptiveTopK(form="fixed_budget"), "CLUCB-PAC": CLUCBPAC},
                 {"AdaptiveTopK": ("batched",), "CLUCB-PAC": ("compiled",)}),
        Workload("W4", "CorrelatedBestArm-TrafficSynthetic-v1", {}, 100 // scale, 400,
                 {"BayesGap": lambda: BayesGap(**traffic)}),
        Workload("W5", "ThresholdBandit-v0",
                 {"distributions": staircase_distributions(10, 20), "horizon": 100_000}, 1000 // scale, 100_000,
                 {"DKWUCB": DKWUCB}),
    ]


@numba.njit(cache=True)
def _bare_update(u: np.ndarray, mean: float, arm: int, counts: np.ndarray, sums: np.ndarray) -> None:
    for n in range(u.shape[0]):
        counts[n, arm] += 1.0
        sums[n, arm] += u[n] < mean


def bare_and_env_rates(copies: int = 5000, k: int = 10, steps: int = 1000) -> dict[str, float]:
    """The vector env's own cost against the bare simulation it performs, on W1's shape: round-robin pulls of
    Bernoulli arms (no agent). In pulls per second:

    - ``bare``: one uniform per copy from a numpy Generator, then one compiled pass that compares it with the
      pulled arm's mean and adds to that arm's count and sum;
    - ``kernels``: the env's own compiled work called directly: the uniforms, the action check (every entry of
      the ``(N, K + 1)`` actions: an arm, then answer bits) and the pull kernel (which also keeps the budget, the
      last pull and the means of the observation);
    - ``env``: ``env.step`` with the same actions (the kernels, plus Gymnasium's step in Python)."""
    from bandit_gym.envs import _kernels

    means = np.linspace(0.05, 0.95, k)
    rng = np.random.default_rng(0)
    counts, sums = np.zeros((copies, k)), np.zeros((copies, k))
    _bare_update(rng.random(copies), 0.5, 0, counts, sums)  # compile first

    def bare_once() -> tuple[int, float]:
        start = time.perf_counter()
        for t in range(steps):
            _bare_update(rng.random(copies), means[t % k], t % k, counts, sums)
        return copies * steps, time.perf_counter() - start

    env = gym.make_vec("ThresholdingBandit-v0", num_envs=copies, vectorization_mode="vector_entry_point",
                       means=means, budget=steps, copy=False)
    actions = [np.zeros((copies, k + 1), dtype=np.int64) for _ in range(k)]
    for arm, action in enumerate(actions):
        action[:, 0] = arm
    env.reset(seed=0)
    for t in range(30):  # compile the step kernel first
        env.step(actions[t % k])
    engine: Any = engine_of(env)
    obs, rows = engine.obs, np.ones(copies, dtype=bool)
    rewards, stop, no_sums64 = np.empty(copies), np.empty(copies, dtype=bool), np.zeros((1, 1))

    def kernels_once() -> tuple[int, float]:
        env.reset(seed=0)
        start = time.perf_counter()
        for t in range(steps):
            _kernels.actions_valid(actions[t % k], k)
            _kernels.pull(_kernels.BERNOULLI, actions[t % k][:, 0], rows, rng.random(copies), engine._seeds,
                          engine.means, 1.0, 0.0, engine.left, obs["counts"], obs["sums"], no_sums64, obs["means"],
                          obs["budget_left"], obs["last_arm"], obs["last_value"], rewards, stop)
        return copies * steps, time.perf_counter() - start

    def env_once() -> tuple[int, float]:
        env.reset(seed=0)
        start = time.perf_counter()
        for t in range(steps):
            env.step(actions[t % k])
        return copies * steps, time.perf_counter() - start

    return {name: copies * steps / median_time(once)[1]
            for name, once in (("bare", bare_once), ("kernels", kernels_once), ("env", env_once))}


def import_seconds(repeats: int = 5) -> tuple[float, list[str]]:
    """Median wall time of ``import bandit_gym`` in a fresh interpreter, and the heavy modules it loaded."""
    code = ("import sys, time; t = time.perf_counter(); import bandit_gym; print(time.perf_counter() - t); "
            "print(','.join(m for m in ('matplotlib', 'pandas', 'sklearn', 'torch', 'scipy.stats', 'scipy.optimize',"
            " 'numba', 'stable_baselines3', 'joblib') if m in sys.modules))")
    times, heavy = [], ""
    for _ in range(repeats):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
        lines = out.splitlines()
        times.append(float(lines[0]))
        heavy = lines[1] if len(lines) > 1 else ""
    return statistics.median(times), [m for m in heavy.split(",") if m]


def measure(workload: Workload, label: str) -> list[Row]:
    """Every path of one agent on one workload, with the per-step loop's rate."""
    rate = loop_rate(workload, label)
    rows = []
    for path in workload.paths.get(label, ("vector",)):
        row = vector_row(workload, label) if path == "vector" else rollout_row(workload, label, path)
        row.loop_rate = rate
        rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", nargs="*", default=None, help="workload names (W1..W5)")
    parser.add_argument("--quick", action="store_true", help="a tenth of the runs")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    rows = []
    for workload in workloads(args.quick):
        if args.only and workload.group not in args.only:
            continue
        found = [] if workload.diagnoses else measure_peers(workload.name)
        fastest = max(found, key=lambda pair: pair[1], default=("", float("nan")))
        for row in (row for label in workload.agents for row in measure(workload, label)):
            row.peer, row.peer_rate = fastest
            rows.append(row)
            print(f"{row.workload} {row.agent:13s} {row.path:14s} {row.pulls:>12,d} pulls in {row.seconds:7.1f} s: "
                  f"{row.rate:>12,.0f} pulls/s; per-step loop {row.loop_rate:>8,.0f} pulls/s; "
                  f"ratio {row.ratio:,.0f}x", flush=True)
    print()
    print(table(rows))
    print(targets(rows, bare_and_env_rates(), *import_seconds()))
    print(f"\nsuite finished in {time.perf_counter() - start:.0f} s")
    return 0


def measure_peers(workload: str) -> list[tuple[str, float]]:
    """Every installed peer on the workload's analogue, printed; returns (name, pulls/s) pairs."""
    found = []
    for peer in peers.peers():
        if peer.workload != workload:
            continue
        if not peers.installed(peer.library):
            print(f"{workload} peer {peer.library}: not installed (pip install -e '.[bench]')")
            continue
        rate = peers.rate(peer)
        found.append((f"{peer.library} {peer.algorithm}", rate))
        print(f"{workload} peer {peer.library} {peer.algorithm}: {rate:,.0f} pulls/s", flush=True)
    return found


def table(rows: list[Row]) -> str:
    lines = ["| workload | agent | path | pulls | seconds | pulls/s | per-step loop (pulls/s) | ratio | fastest peer "
             "(pulls/s) | ratio |", "|---|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        peer = f"{row.peer}: {row.peer_rate:,.0f} | {row.rate / row.peer_rate:,.0f}x" if row.peer else "- | -"
        lines.append(f"| {row.workload} | {row.agent} | {row.path} | {row.pulls:,d} | {row.seconds:.1f} | "
                     f"{row.rate:,.0f} | {row.loop_rate:,.0f} | {row.ratio:,.0f}x | {peer} |")
    return "\n".join(lines)


def targets(rows: list[Row], rates: dict[str, float], seconds: float, heavy: list[str]) -> str:
    def verdict(ok: bool) -> str:
        return "met" if ok else "MISSED"

    def rate(workload: str, path: str) -> float | None:
        found = [row.rate for row in rows if row.workload == workload and row.path == path]
        return min(found) if found else None  # the slowest agent

    lines = ["", "targets:"]
    w1 = rate("W1", "make_vec + act")
    if w1:
        lines.append(f"  W1 >= 2e7 pulls/s through make_vec + act: slowest agent {w1:,.0f} -> {verdict(w1 >= 2e7)}")
    for path in ("make_vec + act", "play_compiled"):
        one, two = rate("W1", path), rate("W2", path)
        if one and two:
            lines.append(f"  W2's cost per pull within 5x of W1's ({path}): {one / two:.1f}x -> "
                         f"{verdict(one / two <= 5)}")
    small, w2, w1_50 = rate("W2, K = 10", "make_vec + act"), rate("W2", "make_vec + act"), rate(
        "W1, 50 runs", "make_vec + act")
    if small and w2:
        lines.append(f"    diagnosis: W2 with K = 1000 against K = 10 arms (50 copies each): cost per pull "
                     f"{small / w2:.2f}x (UCB-E recomputes one index per pull; the env checks the K + 1 entries of "
                     "each action)")
    if w1_50 and w2:
        lines.append(f"    diagnosis: W2 against W1 both with 50 copies: cost per pull {w1_50 / w2:.1f}x "
                     "(Python's per-step cost is shared by 50 copies, not 5000)")
    bare, kernels, env = rates["bare"], rates["kernels"], rates["env"]
    overhead = bare / env - 1
    lines.append(f"  vector env overhead over the bare kernel (W1 shape, round robin): bare {bare:,.0f}, env "
                 f"{env:,.0f} pulls/s, overhead {overhead:+.0%} -> {verdict(overhead <= 0.15)}")
    lines.append(f"    diagnosis: the env's compiled work alone (uniforms, action check, pull kernel) {kernels:,.0f} "
                 f"pulls/s: {bare / kernels - 1:+.0%} over the bare kernel; Gymnasium's step in Python adds "
                 f"{kernels / env - 1:+.0%}")
    lines.append(f"  import bandit_gym < 0.35 s: {seconds:.3f} s (median of 5; heavy modules loaded: "
                 f"{', '.join(heavy) or 'none'}) -> {verdict(seconds < 0.35)}")
    return "\n".join(lines)
