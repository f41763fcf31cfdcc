"""Peer libraries, measured the way their documentation runs them, on the closest analogue of each workload.

No peer on PyPI implements APT, LSA, UCB-E, CLUCB-PAC, AdaptiveTopK, BayesGap or DKWUCB, or submits an answer
per episode; each runs an analogue with the same cost per pull on the workload's own instance (UCB1: K indices
and an argmax per pull, like APT and UCB-E; LUCB for best-arm identification). Measured when installed
(``pip install -e ".[bench]"``; checked on this machine, 2026-11-22):

- ``rovingbandit`` 0.1.0 (pure Python; ``OnlineRunner.run``): UCB1 on W1, W2 and W5, LUCB on W2 and W3;
- ``pymab`` 2.0.1 (a Rust core; the public ``Experiment.run``): UCB1 on W1, W2 and W5;
- ``xbandits`` 0.0.1.dev0 (numpy, vectorised over runs; ``rollout.play`` needs the whole reward tensor, drawn
  inside the timing): UCB1 on W1 (500 runs) and W5 (100 runs of T = 2000).

Not measured: SMPyBandits 0.9.7 fails to import with scipy >= 1.14 (``btdtri``), best-arm 0.1.1 and mabby
0.1.2 pin numpy < 2 / scipy < 1.13, mabwiser and pybandits run at 10^2-10^4 pulls/s; none has W4's correlated
arms. W5's analogue is UCB1 on Bernoulli arms with the staircase laws' means E[X] / m.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from bandit_gym.instances import TAO2019_SETUPS, chen2017_means, staircase_distributions

#: pulls of a per-step peer's measurement (its cost per pull does not depend on t)
PEER_PULLS = 20_000


@dataclass(frozen=True)
class Peer:
    workload: str
    library: str
    algorithm: str
    #: () -> pulls made, timed as a whole
    run: Callable[[], int]


def w5_means(k: int = 10, m: int = 20) -> np.ndarray:
    """W5's analogue: the Bernoulli means ``E[X_i] / m`` of ``staircase_distributions(k, m)``."""
    pmf = staircase_distributions(k, m)
    return pmf @ np.arange(m + 1) / m


def rovingbandit(policy: str, means: np.ndarray, steps: int = PEER_PULLS) -> Callable[[], int]:
    def run() -> int:
        from rovingbandit import LUCB, UCB1, BanditEnvironment, OnlineRunner

        env = BanditEnvironment(n_arms=len(means), arm_means=means, seed=0)
        agent = {"UCB1": UCB1, "LUCB": LUCB}[policy](n_arms=len(means), seed=0)
        return OnlineRunner().run(agent, env, n_steps=steps).n_steps

    return run


def pymab(means: np.ndarray, horizon: int, replicates: int) -> Callable[[], int]:
    def run() -> int:
        from pymab import BanditEnvironment, BernoulliReward, Experiment, ExperimentConfig
        from pymab.policies import UCBPolicy

        env = BanditEnvironment(means=means, reward_model=BernoulliReward())
        config = ExperimentConfig(horizon=horizon, n_replicates=replicates, seed=0, backend="rust")
        Experiment(environment=env, policies={"UCB1": UCBPolicy(n_arms=len(means))}, config=config).run()
        return horizon * replicates

    return run


def xbandits(means: np.ndarray, horizon: int, runs: int) -> Callable[[], int]:
    def run() -> int:
        from xbandits.algo import ucb
        from xbandits.core.rollout import play

        rewards = (np.random.default_rng(0).random((runs, horizon, len(means))) < means).astype(np.float64)
        play(rewards, ucb.initialize, ucb.select_arm, ucb.update)
        return runs * horizon

    return run


def peers() -> list[Peer]:
    w1, w2, w5 = np.asarray(TAO2019_SETUPS[1]), np.arange(1000) / 1000, w5_means()
    w3 = chen2017_means("TwoGroup", 1000, 250)
    return [
        Peer("W1", "rovingbandit", "UCB1", rovingbandit("UCB1", w1)),
        Peer("W1", "pymab", "UCB1", pymab(w1, 1000, 20)),
        Peer("W1", "xbandits", "UCB1, 500 runs", xbandits(w1, 1000, 500)),
        Peer("W2", "rovingbandit", "UCB1", rovingbandit("UCB1", w2)),
        Peer("W2", "rovingbandit", "LUCB", rovingbandit("LUCB", w2)),
        Peer("W2", "pymab", "UCB1", pymab(w2, 2000, 1)),
        Peer("W3", "rovingbandit", "LUCB (top 1)", rovingbandit("LUCB", w3)),
        Peer("W5", "rovingbandit", "UCB1", rovingbandit("UCB1", w5)),
        Peer("W5", "pymab", "UCB1", pymab(w5, PEER_PULLS, 1)),
        Peer("W5", "xbandits", "UCB1, 100 runs", xbandits(w5, 2000, 100)),
    ]


def installed(library: str) -> bool:
    return importlib.util.find_spec(library) is not None


def rate(peer: Peer) -> float:
    """Pulls per second: a warm-up run, then the median of three (their output silenced)."""
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        peer.run()
        rates = []
        for _ in range(3):
            start = time.perf_counter()
            pulls = peer.run()
            rates.append(pulls / (time.perf_counter() - start))
    return float(np.median(rates))
