"""Study: the package's two UCB-E agents on the published low-exploration settings, next to the readings of the rule
that the publications leave open.

    taskset -c 1 python scripts/ucbe_published.py --runs 10000 [--published FILE] [--out FILE]

Two agents, two publications:

- ``UCBE`` (thresholding; Locatelli, Gutzeit, Carpentier, ICML 2016, plot UCBE variants; their UCBE(0.25) and
  UCBE(1) are compared with the package's ``b = -1`` and ``b = 0``, ``a = 4^b (T - K) / H`` as tao2019 states
  it). Instance: the arithmetic progression of ``TAO2019_SETUPS[1]`` (means 0.2 .. 0.8, threshold 0.5),
  Bernoulli (the package preset) and Gaussian with sigma = 0.5 (a reading of the noise), at T = 500 and 1000.
  Error: the probability that some arm is misclassified (the simple regret, no indifference zone); the
  aggregate regret is written too.
- ``UCBEBestArm`` (best arm; Karnin, Koren, Somekh, ICML 2013, UCB-E with c = 1). Instances: Audibert, Bubeck
  and Munos's seven problems (``AUDIBERT2010_PROBLEMS``) at n = H_1 rounded (2000 on problem 1). Error: the
  probability that the answer is not the best arm.

Each setting is played by the package's agent (compiled rollout, or the vector env for Gaussian arms) and by a
small numpy reference of the rule, once as the package reads it (its error must agree with the agent's: the
``z_vs_package`` column) and once per reading below. ``ratio`` is a reading's error over the package agent's.

Readings of the thresholding rule ``argmin_i |mu_hat_i - theta| - sqrt(a / T_i)``, ``a = 4^b (T - K) / H``:

- ``package``: as above, ``H = sum_i Delta_i^-2``, each arm pulled once first, ties at random;
- ``a=4^b T/H``: T instead of T - K in a;
- ``H=sum(Delta+eps)^-2``: H from the gaps plus APT's precision eps = 0.1 (adding eps to the index as well
  changes no argmin: every arm's index moves by the same eps);
- ``H=sum(2 Delta)^-2``: the gaps doubled, so H / 4 and a four times larger;
- ``4^x, x printed``: the printed argument read as the exponent (UCBE(1): a = 4 (T - K) / H; UCBE(0.25):
  a = 4^0.25 (T - K) / H);
- ``no initial pulls``: no round of one pull per arm; an arm never pulled has mean 0 and counts as pulled once;
- ``no sqrt``: ``|mu_hat_i - theta| - a / T_i``;
- ``ties by index``: the smallest index wins a tie;
- ``a x f``: the package's a times f, f in ``FACTORS`` (what a different constant in a would do).

Readings of the best-arm rule ``argmax_i mu_hat_i + sqrt(a / T_i)``, ``a = c (n - K) / H_1``, c = 1:
``package`` (``H_1 = sum_i Delta_i^-2`` with the best arm's gap that of the second, +inf for an arm never pulled,
ties as the package agent breaks them: ``tie_break`` where it takes one, else the smallest index), ``a=c n/H1``,
``H1 over suboptimal arms`` (the best arm's term left out), ``H=H2=max_i i Delta_(i)^-2`` (Karnin et al.'s
other complexity), ``H1=sum(2 Delta)^-2``, ``no initial pulls``, ``no sqrt``, ``ties at random`` (or ``ties by
index`` when the agent breaks them at random), and ``a x f``.

``--published FILE`` (csv: family, setup, noise, budget, agent, published_error, published_source) fills the
``published_error`` column; without it the column is empty. A value read off a figure or a table goes there with
its source, so that nothing in the table is a number this script did not measure or a reader cannot trace.
Deterministic for a given ``--runs`` and ``--seed``; 10,000 runs take about 8.5 CPU minutes.
"""

from __future__ import annotations

import argparse
import csv
import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

import bandit_gym  # noqa: F401  (registers the envs)
from bandit_gym.agents import UCBE, UCBEBestArm
from bandit_gym.instances import AUDIBERT2010_PROBLEMS, TAO2019_SETUPS, best_arm_complexity, complexity
from bandit_gym.rollout import play_compiled, play_vector

DEFAULT_OUT = Path(__file__).resolve().parents[1] / "docs" / "ucbe-published" / "results.csv"
THETA = 0.5
"""The threshold of the thresholding instance."""
EPS = 0.1
"""APT's precision in Locatelli et al.'s experiments, used by the ``H=sum(Delta+eps)^-2`` reading."""
THRESHOLD_BUDGETS = (500, 1000)
THRESHOLD_B = (-1.0, 0.0)
"""UCBE(0.25) and UCBE(1): b with 4^b = 0.25 and 1."""
NOISES = (("bernoulli", 0.0), ("gaussian", 0.5))
BEST_ARM_C = 1.0
FACTORS = (0.25, 0.5, 2.0, 4.0, 8.0, 16.0)
COLUMNS = ("family", "setup", "noise", "budget", "agent", "reading", "a", "runs", "error", "error_se", "aggregate",
           "ratio", "z_vs_package", "published_error", "published_source")


@dataclass(frozen=True)
class Rule:
    """One reading of a UCB-E rule: its exploration a, and how it starts, breaks ties and shapes its bonus."""

    name: str
    a: float
    init: bool = True
    random_ties: bool = True
    sqrt: bool = True


# ----------------------------------------------------------------------------------------- numpy reference
def arm_orders(rng: np.random.Generator, runs: int, k: int, random_ties: bool) -> np.ndarray:
    """Each run's order of the arms: a random permutation (ties at random) or the identity (ties by index)."""
    if random_ties:
        return rng.permuted(np.tile(np.arange(k), (runs, 1)), axis=1)
    return np.tile(np.arange(k), (runs, 1))


def bonus(a: float, counts: np.ndarray, sqrt: bool) -> np.ndarray:
    """``sqrt(a / T_i)`` (or ``a / T_i``), an arm never pulled counting as pulled once."""
    ratio = a / np.maximum(counts, 1.0)
    return np.sqrt(ratio) if sqrt else ratio


class Reference:
    """A vectorised play of ``runs`` episodes of one UCB-E rule on a fixed instance, in each run's own arm order
    (so that ``argmax``'s first-position rule is the run's tie rule). ``index(counts, sums)`` is the rule's index
    (largest pulled), computed for every arm once and then only for the arm each run pulled."""

    def __init__(self, means: np.ndarray, rule: Rule, runs: int, rng: np.random.Generator, sigma: float) -> None:
        self.rng, self.sigma, self.rule = rng, sigma, rule
        self.order = arm_orders(rng, runs, means.size, rule.random_ties)
        self.means = means[self.order]  # (runs, K): the instance in each run's order
        self.rows = np.arange(runs)
        self.counts = np.zeros(self.means.shape)
        self.sums = np.zeros(self.means.shape)

    def pull(self, arm: np.ndarray) -> None:
        mu = self.means[self.rows, arm]
        if self.sigma > 0:
            x = mu + self.sigma * self.rng.standard_normal(mu.size)
        else:
            x = (self.rng.random(mu.size) < mu).astype(np.float64)
        self.counts[self.rows, arm] += 1.0
        self.sums[self.rows, arm] += x

    def empirical_means(self) -> np.ndarray:
        return self.sums / np.maximum(self.counts, 1.0)

    def play(self, budget: int, index: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> None:
        """``budget`` pulls: one per arm first (under ``rule.init``), then ``argmax index``."""
        made = 0
        if self.rule.init:
            made = min(self.means.shape[1], budget)
            for j in range(made):
                self.pull(np.full(self.rows.size, j))
        values = index(self.counts, self.sums)
        for _ in range(made, budget):
            arm = np.argmax(values, axis=1)
            self.pull(arm)
            values[self.rows, arm] = index(self.counts[self.rows, arm], self.sums[self.rows, arm])


def threshold_reference(means: np.ndarray, budget: int, rule: Rule, runs: int, rng: np.random.Generator,
                        sigma: float) -> tuple[np.ndarray, np.ndarray]:
    """Per run: 1{some arm misclassified} and the number misclassified, for ``argmin |mu_hat - theta| - bonus``
    and the answer ``1{mu_hat_i >= theta}``."""
    ref = Reference(means, rule, runs, rng, sigma)

    def index(counts: np.ndarray, sums: np.ndarray) -> np.ndarray:  # minus the pulled-smallest index
        return bonus(rule.a, counts, rule.sqrt) - np.abs(sums / np.maximum(counts, 1.0) - THETA)

    ref.play(budget, index)
    wrong = (ref.empirical_means() >= THETA) != (ref.means >= THETA)
    return wrong.any(axis=1).astype(np.float64), wrong.sum(axis=1).astype(np.float64)


def best_arm_reference(means: np.ndarray, budget: int, rule: Rule, runs: int,
                       rng: np.random.Generator) -> np.ndarray:
    """Per run: 1{the answer is not the best arm}, for ``argmax mu_hat + bonus`` (+inf for an arm never pulled
    under the package's reading) and the answer ``argmax mu_hat`` (an arm never pulled ranking last)."""
    ref = Reference(means, rule, runs, rng, 0.0)

    def index(counts: np.ndarray, sums: np.ndarray) -> np.ndarray:
        values = sums / np.maximum(counts, 1.0) + bonus(rule.a, counts, rule.sqrt)
        return np.where(counts > 0, values, np.inf) if rule.init else values

    ref.play(budget, index)
    answer = np.argmax(np.where(ref.counts > 0, ref.empirical_means(), -np.inf), axis=1)
    return (ref.means[ref.rows, answer] < means.max()).astype(np.float64)


# ----------------------------------------------------------------------------------------- the package's agents
def package_threshold(b: float, H: float, budget: int, noise: str, sigma: float, runs: int,
                      seed: int) -> tuple[np.ndarray, np.ndarray, str]:
    """The package's ``UCBE(b, H)`` on the thresholding instance: per run, the error and the aggregate regret."""
    kwargs: dict[str, Any] = {"num_envs": runs, "vectorization_mode": "vector_entry_point", "budget": budget,
                              "loss": "simple"}
    agent = UCBE(b=b, H=H)
    result = None
    if noise == "bernoulli":  # the compiled rollout reads common random numbers
        venv = gym.make_vec("ThresholdingBandit-Tao2019Setup1-v0", common_random_numbers=True, **kwargs)
        result = play_compiled(venv, agent, seed=seed)
    else:
        venv = gym.make_vec("ThresholdingBandit-Tao2019Setup1-v0", arm_distribution=noise, sigma=sigma, **kwargs)
    if result is None:
        result = play_vector(venv, agent, seed=seed)
    venv.close()
    return result["error"].astype(np.float64), result["regret"].astype(np.float64), str(agent.params())


def package_best_arm(problem: int, h1: float, budget: int, runs: int, seed: int) -> tuple[np.ndarray, str]:
    """The package's ``UCBEBestArm(H1=H_1, c=1)`` on Audibert et al.'s problem: per run, the error."""
    agent = UCBEBestArm(H1=h1, c=BEST_ARM_C)
    venv = gym.make_vec(f"BestArmIdentification-Audibert2010Problem{problem}-v0", num_envs=runs,
                        vectorization_mode="vector_entry_point", budget=budget)
    result = play_compiled(venv, agent, seed=seed)
    if result is None:
        result = play_vector(venv, agent, seed=seed)
    venv.close()
    return result["error"].astype(np.float64), str(agent.params())


def agent_breaks_ties_at_random(agent: Any) -> bool:
    """Whether the package agent breaks ties at random (its ``tie_break``; the smallest index if it has none)."""
    return getattr(agent, "tie_break", "index") == "random"


# ----------------------------------------------------------------------------------------- the readings
def threshold_rules(b: float, means: np.ndarray, budget: int, printed: float) -> Iterator[Rule]:
    """The readings of UCBE(4^b), the argument ``printed`` as the publication names the variant."""
    k, H = means.size, complexity(means, THETA)
    a = 4.0**b * max(budget - k, 0) / H
    yield Rule("package", a)
    yield Rule("a=4^b T/H", 4.0**b * budget / H)
    yield Rule("H=sum(Delta+eps)^-2", a * H / float(np.sum((np.abs(means - THETA) + EPS) ** -2.0)))
    yield Rule("H=sum(2 Delta)^-2", 4.0 * a)
    yield Rule("4^x, x printed", 4.0**printed * max(budget - k, 0) / H)
    yield Rule("no initial pulls", a, init=False)
    yield Rule("no sqrt", a, sqrt=False)
    yield Rule("ties by index", a, random_ties=False)
    yield from (Rule(f"a x {f:g}", f * a) for f in FACTORS)


def h2(means: np.ndarray) -> float:
    """Karnin et al.'s ``H_2 = max_i i Delta_(i)^-2`` over the suboptimal arms (i = 2..K, sorted gaps)."""
    gaps = np.sort(means.max() - means)[1:]
    return float(np.max(np.arange(2, means.size + 1) / gaps**2))


def best_arm_rules(means: np.ndarray, budget: int, random_ties: bool) -> Iterator[Rule]:
    """The readings of UCB-E with c = 1; ``random_ties``: how the package agent breaks ties."""
    k, h1 = means.size, best_arm_complexity(means)
    a = BEST_ARM_C * max(budget - k, 0) / h1
    suboptimal = float(np.sum((means.max() - means[means < means.max()]) ** -2.0))
    yield Rule("package", a, random_ties=random_ties)
    yield Rule("a=c n/H1", BEST_ARM_C * budget / h1, random_ties=random_ties)
    yield Rule("H1 over suboptimal arms", a * h1 / suboptimal, random_ties=random_ties)
    yield Rule("H=H2=max_i i Delta_(i)^-2", a * h1 / h2(means), random_ties=random_ties)
    yield Rule("H1=sum(2 Delta)^-2", 4.0 * a, random_ties=random_ties)
    yield Rule("no initial pulls", a, init=False, random_ties=random_ties)
    yield Rule("no sqrt", a, sqrt=False, random_ties=random_ties)
    yield Rule("ties by index" if random_ties else "ties at random", a, random_ties=not random_ties)
    yield from (Rule(f"a x {f:g}", f * a, random_ties=random_ties) for f in FACTORS)


# ----------------------------------------------------------------------------------------- the table
def stats(x: np.ndarray) -> tuple[float, float]:
    """Mean and its standard error."""
    return float(x.mean()), float(x.std(ddof=1) / math.sqrt(x.size))


def compare(row: dict[str, Any], mean: float, se: float, base: tuple[float, float]) -> dict[str, Any]:
    """``row`` with the error, its standard error, the ratio to the package agent's error and the z-score of the
    difference (independent samples)."""
    z = (mean - base[0]) / math.hypot(se, base[1]) if se + base[1] > 0 else 0.0
    ratio = mean / base[0] if base[0] > 0 else float("nan")
    return {**row, "error": f"{mean:.5f}", "error_se": f"{se:.5f}", "ratio": f"{ratio:.3f}", "z_vs_package": f"{z:.2f}"}


def threshold_rows(runs: int, seed: int) -> Iterator[dict[str, Any]]:
    """The thresholding table: for each noise, budget and b, the package agent then every reading."""
    means = np.asarray(TAO2019_SETUPS[1])
    H = complexity(means, THETA)
    for n_i, (noise, sigma) in enumerate(NOISES):
        for t_i, budget in enumerate(THRESHOLD_BUDGETS):
            for b_i, b in enumerate(THRESHOLD_B):
                cell_seed = seed + 100 * n_i + 10 * t_i + b_i
                printed = 4.0**b
                head = {"family": "thresholding", "setup": "tao2019 Setup 1 means, theta 0.5", "noise":
                        noise if sigma == 0 else f"{noise} sigma={sigma:g}", "budget": budget,
                        "agent": f"UCBE({printed:g}) [b={b:g}]", "runs": runs}
                err, agg, params = package_threshold(b, H, budget, noise, sigma, runs, cell_seed)
                base = stats(err)
                a = 4.0**b * max(budget - means.size, 0) / H
                yield compare({**head, "reading": f"package agent {params}", "a": f"{a:.5g}",
                               "aggregate": f"{agg.mean():.5f}"}, *base, base)
                rng = np.random.default_rng([seed, n_i, t_i, b_i])
                for rule in threshold_rules(b, means, budget, printed):
                    r_err, r_agg = threshold_reference(means, budget, rule, runs, rng, sigma)
                    yield compare({**head, "reading": rule.name, "a": f"{rule.a:.5g}",
                                   "aggregate": f"{r_agg.mean():.5f}"}, *stats(r_err), base)


def best_arm_rows(runs: int, seed: int) -> Iterator[dict[str, Any]]:
    """The best-arm table: for each of Audibert et al.'s problems at n = H_1, the package agent then every
    reading."""
    for problem, values in AUDIBERT2010_PROBLEMS.items():
        means = np.asarray(values)
        h1 = best_arm_complexity(means)
        budget = round(h1)
        head = {"family": "best_arm", "setup": f"Audibert et al. problem {problem}", "noise": "bernoulli",
                "budget": budget, "agent": f"UCB-E c={BEST_ARM_C:g}", "runs": runs, "aggregate": ""}
        err, params = package_best_arm(problem, h1, budget, runs, seed + problem)
        base = stats(err)
        random_ties = agent_breaks_ties_at_random(UCBEBestArm(H1=h1, c=BEST_ARM_C))
        a = BEST_ARM_C * max(budget - means.size, 0) / h1
        yield compare({**head, "reading": f"package agent {params}", "a": f"{a:.5g}"}, *base, base)
        rng = np.random.default_rng([seed, 1000 + problem])
        for rule in best_arm_rules(means, budget, random_ties):
            yield compare({**head, "reading": rule.name, "a": f"{rule.a:.5g}"},
                          *stats(best_arm_reference(means, budget, rule, runs, rng)), base)


def published_values(path: Path | None) -> dict[tuple[str, ...], tuple[str, str]]:
    """``(family, setup, noise, budget, agent) -> (published_error, published_source)`` from ``--published``."""
    if path is None:
        return {}
    with path.open(newline="") as f:
        return {(r["family"], r["setup"], r["noise"], r["budget"], r["agent"]):
                (r["published_error"], r["published_source"]) for r in csv.DictReader(f)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10000, help="runs per cell (default 10000)")
    parser.add_argument("--seed", type=int, default=2016)
    parser.add_argument("--published", type=Path, default=None, help="csv of published values (see the docstring)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--only", choices=("thresholding", "best_arm"), default=None)
    args = parser.parse_args(argv)
    if args.runs < 2:
        parser.error(f"--runs={args.runs}: the standard errors need at least 2 runs")
    published = published_values(args.published)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    tables = {"thresholding": threshold_rows, "best_arm": best_arm_rows}
    with args.out.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS)
        writer.writeheader()
        for family, rows in tables.items():
            if args.only not in (None, family):
                continue
            for row in rows(args.runs, args.seed):
                key = (row["family"], row["setup"], row["noise"], str(row["budget"]), row["agent"])
                value, source = published.get(key, ("", ""))
                writer.writerow({**row, "published_error": value, "published_source": source})
                f.flush()
                print(f"{time.perf_counter() - start:7.1f}s  {row['setup'][:34]:34s} {row['noise'][:18]:18s} "
                      f"{row['budget']:>5} {row['agent']:22s} {row['reading'][:40]:40s} {row['error']} "
                      f"+- {row['error_se']}  x{row['ratio']}  z={row['z_vs_package']}", flush=True)
    print(f"wrote {args.out} in {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
