"""The fixed-confidence rules against the same rules in the peer package ``best-arm`` (0.1.1, pure Python), side
by side in one run: pulls per CPU-second and the ratio, and the statistical agreement of the two implementations
(Welch's t-test on the sample complexity tau, Fisher's exact test on the errors).

``best-arm`` pins numpy < 2 and scipy < 1.13, so it lives in an environment of its own; its interpreter is
``--peer-python`` (for example ``python3 -m venv /tmp/peer && /tmp/peer/bin/pip install best-arm==0.1.1``, then
``python benchmarks/peer_best_arm.py --peer-python /tmp/peer/bin/python``). Each peer rule runs in a subprocess
(``benchmarks/_best_arm_peer.py``) that times its runs with ``time.process_time``; this package's rule runs in this
process, timed the same way, after one warm-up cell (its compilation). Both rules play the same instance and
delta with the same stopping rule, the GLR (Chernoff) rule with the heuristic threshold ``ln((1 + ln t) /
delta)`` (the peer's ``chernoff``, mode ``practice``), except lil'UCB, which both stop by its own rule with the
theory's parameters (epsilon = 0.01, beta = 1, lambda = 9).

The pairs are the rules that both packages define: Track-and-Stop with D- and C-tracking, EB-TCI (the peer's
``top_two`` with an EB leader, a TCI challenger and beta = 1/2, chosen at random with probability beta where this
package tracks it), TTTS (the peer's ``top_two`` with a TS leader and an RS challenger, whose redraws it never caps,
where this package caps them at 100 and then draws the challenger by a normal approximation), lil'UCB, and
Frank-Wolfe Sampling (the peer's ``fws``: its forced exploration falls on the steps t with K | t and t / K a perfect
square, and also whenever a Bernoulli mean is 0 or 1, as the authors' runner re-pulls such arms; this package's on
every t with floor(t / K) a perfect square; the peer solves the zero-sum game with HiGHS, this package exactly).
The rules of the other problems (thresholding, top-m, epsilon-good answers, unknown variances) have no
counterpart in the peer, which identifies the best arm only. The peer
has no KL-LUCB and no TTUCB; its LUCB1 is another reading of the paper (its h_t is the empirical best, its t counts
pulls), so it is not paired.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from bandit_gym.experiments import AgentSpec, ExperimentSpec, expand, run_cell

#: GK 2016's second instance: its tau at delta = 0.1 is a few thousand pulls, so the peer's runs take seconds
MEANS = (0.3, 0.21, 0.2, 0.19, 0.18)
DELTA = 0.1
HEURISTIC = {"stopping": "chernoff", "stopping_args": {"mode": "practice"}}


@dataclass(frozen=True)
class Pair:
    rule: str
    ours: AgentSpec
    peer: dict[str, Any] = field(default_factory=dict)


PAIRS = (
    Pair("Track-and-Stop, D-tracking", AgentSpec("TrackAndStop", {"tracking": "D", "threshold": "heuristic"}),
         {"algo": "track_and_stop", "tracker": "d_tracking", **HEURISTIC}),
    Pair("Track-and-Stop, C-tracking", AgentSpec("TrackAndStop", {"tracking": "C", "threshold": "heuristic"}),
         {"algo": "track_and_stop", "tracker": "c_tracking", **HEURISTIC}),
    Pair("EB-TCI", AgentSpec("EBTCI", {"threshold": "heuristic"}),
         {"algo": "top_two", "algo_args": {"beta": 0.5, "leader_type": "EB", "challenger_type": "TCI"}, **HEURISTIC}),
    Pair("TTTS", AgentSpec("TTTS", {"threshold": "heuristic"}),
         {"algo": "top_two", "algo_args": {"beta": 0.5, "leader_type": "TS", "challenger_type": "RS"}, **HEURISTIC}),
    Pair("lil'UCB", AgentSpec("LilUCB", {}), {"algo": "lil_ucb"}),
    Pair("FWS", AgentSpec("FWSampling", {"threshold": "heuristic"}), {"algo": "fws", **HEURISTIC}),
)


def ours(pair: Pair, runs: int, seed: int) -> tuple[np.ndarray, np.ndarray, float]:
    """Our rule's tau and errors over ``runs`` runs (one cell of the experiment engine, in this process) and
    its CPU seconds, after a warm-up cell of 2 runs."""
    agent = AgentSpec(pair.ours.name, {**pair.ours.params, "delta": DELTA})
    result = None
    for count in (2, runs):
        spec = ExperimentSpec(env="BestArmIdentification-v0", agents=(agent,), budgets=(10**7,), runs=count,
                              seed=seed, env_kwargs={"means": list(MEANS), "setting": "fixed_confidence"},
                              chunk=count)
        start = time.process_time()
        result = run_cell(spec, expand(spec)[0])
        cpu = time.process_time() - start
    assert result is not None
    return result["pulls"][:, 0], result["error"][:, 0], cpu


def peer(pair: Pair, python: str, runs: int, seed: int,
         timeout: float | None = None) -> tuple[np.ndarray, np.ndarray, float] | None:
    """The peer's tau, errors and CPU seconds over ``runs`` runs (a subprocess of ``python``); None if they take
    more than ``timeout`` seconds."""
    job = {**pair.peer, "means": list(MEANS), "delta": DELTA, "runs": runs, "seed": seed}
    script = Path(__file__).with_name("_best_arm_peer.py")
    try:
        done = subprocess.run([python, str(script), json.dumps(job)], capture_output=True, text=True, check=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    out = json.loads(done.stdout.strip().splitlines()[-1])
    errors = (np.asarray(out["answers"]) != int(np.argmax(MEANS))).astype(float)
    return np.asarray(out["pulls"], dtype=float), errors, float(out["cpu"])


def _mean(values: np.ndarray) -> str:
    half = stats.t.ppf(0.975, len(values) - 1) * values.std(ddof=1) / np.sqrt(len(values))
    return f"{values.mean():.0f} +- {half:.0f}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peer-python", required=True, help="the interpreter of an environment with best-arm")
    parser.add_argument("--runs", type=int, default=200, help="this package's runs per rule")
    parser.add_argument("--peer-runs", type=int, default=40, help="the peer's runs per rule")
    parser.add_argument("--peer-timeout", type=float, default=900.0,
                        help="seconds after which a peer rule's runs are given up (reported as such)")
    parser.add_argument("--rules", nargs="*", choices=[pair.rule for pair in PAIRS], default=None,
                        help="the pairs to run (default: all)")
    args = parser.parse_args(argv)
    print(f"best-arm identification, Bernoulli means {list(MEANS)}, delta = {DELTA}; ours {args.runs} runs, "
          f"best-arm {args.peer_runs} runs; pulls per CPU-second; tau: mean +- 95% CI; p: Welch (tau), "
          f"Fisher (errors)")
    print("| rule | ours pulls/CPU-s | best-arm pulls/CPU-s | ratio | ours tau | best-arm tau | p (tau) | ours errors "
          "| best-arm errors | p (errors) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for pair in PAIRS:
        if args.rules is not None and pair.rule not in args.rules:
            continue
        tau, err, cpu = ours(pair, args.runs, seed=1)
        theirs = peer(pair, args.peer_python, args.peer_runs, seed=1, timeout=args.peer_timeout)
        if theirs is None:
            print(f"| {pair.rule} | {tau.sum() / cpu:.3g} | {args.peer_runs} runs not done in {args.peer_timeout:g} s "
                  f"| - | {_mean(tau)} | - | - | {int(err.sum())}/{len(err)} | - | - |")
            continue
        tau_p, err_p, cpu_p = theirs
        rate, rate_p = tau.sum() / cpu, tau_p.sum() / cpu_p
        p_tau = stats.ttest_ind(tau, tau_p, equal_var=False).pvalue
        table = [[int(err.sum()), len(err) - int(err.sum())], [int(err_p.sum()), len(err_p) - int(err_p.sum())]]
        p_err = stats.fisher_exact(table).pvalue
        print(f"| {pair.rule} | {rate:.3g} | {rate_p:.3g} | {rate / rate_p:.0f}x | {_mean(tau)} | {_mean(tau_p)} | "
              f"{p_tau:.2f} | {int(err.sum())}/{len(err)} | {int(err_p.sum())}/{len(err_p)} | {p_err:.2f} |")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
