"""Draw the learned agents' second held-out set: instances from documented families, with a published seed, at K,
budgets and gaps that no arm-wise recipe trained, validated or was scored on. It draws and writes; it scores nothing
and trains nothing. ``docs/rl-armwise/heldout2/README.md`` describes the set and the scoring protocol fixed with it.

Every family (thresholding, threshold bandit, best arm, top K, correlated arms) has settings (an env id and its fixed
arguments: K, budget, threshold ...), and every setting draws its instances from its own generator,
``numpy.random.default_rng([SEED, family index, setting index])``. The laws, per instance:

- thresholding: relative gaps ``g_i ~ log-U[1, 4]``, a hardness ``c ~ log-U[0.2, 1]``, the scale ``s`` with
  ``H = sum_i Delta_i^-2 = T / c`` (so ``s = sqrt(c sum_i g_i^-2 / T)``), ``Delta_i = s g_i``, each arm above or
  below theta with probability 1/2: ``theta_i = theta +- Delta_i``;
- threshold bandit: each arm's law on ``{0..m}`` flat Dirichlet (normalised standard exponentials), kept when every
  level j has a unique best arm ``argmax_i F_i(j)`` ahead by at least ``MIN_GAP``, the best arm is not the same at
  every level, and the smallest of the m gaps is below ``TRAINING_MIN_GAP`` (every training instance had all its gaps
  at least that);
- best arm: the best mean ``mu* ~ U(low, high)``, the K - 1 gaps ``Delta_i ~ log-U[0.02, gap_high]``, the arms in a
  uniformly random order;
- top K: a boundary ``b ~ U(0.3, 0.7)``, K arms at ``b + Delta_i`` and n - K at ``b - Delta_i``, ``Delta_i ~
  log-U[0.005, 0.25]`` (the env shuffles the arms every episode);
- correlated arms: one draw of the env's own prior ``N(0, eta^2 G)`` (``GaussianProcessMeans``), G the
  squared-exponential kernel of the setting's locations.

A draw whose means leave ``[MEAN_LOW, MEAN_HIGH]`` (thresholding) is redrawn whole; so is a threshold-bandit draw that
fails its conditions. The instance's own record keeps what it was drawn with (c, H, gaps).

    python scripts/rl_heldout2.py            # write docs/rl-armwise/heldout2/instances.json
    python scripts/rl_heldout2.py --check    # the committed file is the draw; every instance builds its env
    python scripts/rl_heldout2.py --seed 7 --out /tmp/dev.json   # a development set of the same laws (not held out)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

import bandit_gym  # noqa: F401  (registers the env ids)
from bandit_gym.covariances import GaussianProcessMeans, squared_exponential
from bandit_gym.rl.armwise_ppo import SHIPPED_SEEDS, shipped_path

SEED = 3602
"""The published seed of the set (issue 36, held-out set 2)."""
SCORE_SEED = 360_200
"""Setting s of family f is scored from env seed ``SCORE_SEED + 10 f + s``."""
FIXED_ON = "2026-11-26"
OUT = Path(__file__).resolve().parents[1] / "docs" / "rl-armwise" / "heldout2" / "instances.json"
MEAN_LOW, MEAN_HIGH = 0.02, 0.98
MIN_GAP, TRAINING_MIN_GAP = 0.02, 0.05
TOLERANCE = 1e-9
"""``--check``: the difference allowed between a drawn number and the committed one, relative or absolute (BLAS and
LAPACK may change the last bits of the correlated draws on another machine or numpy build; on the machine that drew
them they are equal). 1e-12 until 2026-11-27, when numpy 2.4.6 gave differences up to 1.9e-11 (3.7e-9 relative, on a
mean of 3e-4); any other seed or law changes the numbers at their first digits."""
EIGEN_TIES = 1e-12
"""Eigenvalues of a correlated setting's kernel this close (relative to the largest) form one eigenspace. The grid's
repeated eigenvalues come out of LAPACK within 8e-16 of each other; the distinct ones of the three kernels are 1.2e-10
apart or more (the closest among the smallest kept, where a mean's part is of order 3e-5)."""

Draw = Callable[[np.random.Generator], dict[str, Any]]


@dataclass(frozen=True)
class Setting:
    """One setting: ``env_kwargs`` fixed for all its instances, ``draw`` one instance (the env arguments that set it,
    and what it was drawn with), ``law`` the law in words, ``agents`` the paper agents scored on it."""

    label: str
    env_id: str
    env_kwargs: dict[str, Any]
    law: str
    draw: Draw
    instances: int
    runs: int
    agents: tuple[dict[str, Any], ...]


@dataclass(frozen=True)
class Family:
    """A family: its settings, the metric (the env's loss at the answer step, or the pseudo-regret) and the shipped
    learned problems scored on it."""

    name: str
    metric: str
    problems: tuple[str, ...]
    settings: tuple[Setting, ...] = field(default_factory=tuple)


def log_uniform(rng: np.random.Generator, low: float, high: float, size: int | None = None) -> Any:
    """``exp(U(ln low, ln high))``."""
    return np.exp(rng.uniform(math.log(low), math.log(high), size=size))


def agent(name: str, label: str, oracle: tuple[str, ...] = (), model: bool = False, **params: Any) -> dict[str, Any]:
    """A paper agent's record: ``oracle`` names the parameters computed from each instance's true means (as the
    experiment engine does), ``model``: the Bayesian agent's ``kernel, eta, sigma`` are the env's (its reset info)."""
    return {"name": name, "params": params, "label": label, "oracle": list(oracle), "model_from_env": model}


# ------------------------------------------------------------------------------------------------------ thresholding
THRESHOLDING_AGENTS = (
    agent("LSA", "LSA", alpha=1.35), agent("APT", "APT(0)", epsilon=0.0), agent("APT", "APT(.025)", epsilon=0.025),
    agent("APT", "APT(.05)", epsilon=0.05), agent("APT", "APT(.1)", epsilon=0.1),
    agent("UCBE", "UCBE(-1)", ("H",), b=-1.0), agent("UCBE", "UCBE(0)", ("H",), b=0.0),
    agent("UCBE", "UCBE(4)", ("H",), b=4.0), agent("OptKG", "Opt-KG(1,1)", a0=1.0, b0=1.0),
    agent("OptKG", "Opt-KG(.5,.5)", a0=0.5, b0=0.5),
)
"""tao2019's eleven algorithms as the package's reproduction runs them, Uniform apart."""


def thresholding_draw(theta: float, budget: int, arms: int) -> Draw:
    """``theta_i = theta +- s g_i``, ``g_i ~ log-U[1, 4]``, ``c ~ log-U[0.2, 1]``, ``s = sqrt(c sum_i g_i^-2 / T)`` (so
    ``H = sum_i (theta_i - theta)^-2 = T / c``); redrawn while a mean leaves ``[MEAN_LOW, MEAN_HIGH]``."""

    def draw(rng: np.random.Generator) -> dict[str, Any]:
        while True:
            relative = log_uniform(rng, 1.0, 4.0, arms)
            hardness = float(log_uniform(rng, 0.2, 1.0))
            scale = math.sqrt(hardness * float(np.sum(relative**-2.0)) / budget)
            signs = np.where(rng.uniform(size=arms) < 0.5, -1.0, 1.0)
            means = theta + signs * scale * relative
            if means.min() >= MEAN_LOW and means.max() <= MEAN_HIGH:
                return {"means": means.tolist(), "c": hardness, "H": float(np.sum((means - theta) ** -2.0))}
    return draw


def thresholding(arms: int, theta: float, budget: int) -> Setting:
    return Setting(f"K = {arms}, theta = {theta:g}, T = {budget}", "ThresholdingBandit-v0",
                   {"threshold": theta, "budget": budget, "epsilon": 0.0},
                   "theta_i = theta +- s g_i, g_i ~ log-U[1, 4], sign +-1 w.p. 1/2, H = T / c, c ~ log-U[0.2, 1]",
                   thresholding_draw(theta, budget, arms), instances=12, runs=25, agents=THRESHOLDING_AGENTS)


# ------------------------------------------------------------------------------------------------------ threshold
THRESHOLD_AGENTS = tuple(agent(name, name) for name in ("UCB", "DKWUCB", "OPTIM", "KMUCB", "PerThresholdUCB"))


def level_gaps(survival: np.ndarray) -> np.ndarray:
    """``F_(1)(j) - F_(2)(j)``, the best arm's lead at each level j."""
    ranked = np.sort(survival, axis=0)
    return ranked[-1] - ranked[-2]


def threshold_draw(arms: int, levels: int) -> Draw:
    """Each arm's law on ``{0..m}`` flat Dirichlet; kept when every level's lead ``F_(1)(j) - F_(2)(j)`` is at least
    ``MIN_GAP``, the smallest is below ``TRAINING_MIN_GAP`` and ``argmax_i F_i(j)`` is not the same at every level."""

    def draw(rng: np.random.Generator) -> dict[str, Any]:
        while True:
            weights = rng.standard_exponential((arms, levels + 1))
            p = weights / weights.sum(axis=1, keepdims=True)
            survival = np.cumsum(p[:, ::-1], axis=1)[:, ::-1][:, 1:]  # F_i(j) = P(X_i >= j), j = 1..m
            gaps = level_gaps(survival)
            best = survival.argmax(axis=0)
            if gaps.min() >= MIN_GAP and gaps.min() < TRAINING_MIN_GAP and np.any(best != best[0]):
                return {"distributions": p.tolist(), "level_gaps": gaps.tolist(), "best_arm": best.tolist()}
    return draw


def threshold(arms: int, levels: int, budget: int) -> Setting:
    return Setting(f"K = {arms}, m = {levels}, T = {budget}", "ThresholdBandit-v0",
                   {"horizon": budget, "thresholds": "iid", "feedback": "uncensored"},
                   f"each arm flat Dirichlet on {{0..{levels}}}; every level a unique best arm ahead by >= {MIN_GAP}, "
                   f"not the same at every level, the smallest lead < {TRAINING_MIN_GAP}",
                   threshold_draw(arms, levels), instances=10, runs=20, agents=THRESHOLD_AGENTS)


# ------------------------------------------------------------------------------------------------------ best arm
BAYESIAN = (("BayesGap", "BayesGap"), ("ThompsonSampling", "Thompson"), ("BayesUCB", "BayesUCB"),
            ("GPUCB", "GP-UCB"), ("EI", "EI"), ("PI", "PI"))
"""hoffman2014's Bayesian agents, with the reproduction's labels."""
BEST_ARM_AGENTS = (
    agent("SuccessiveRejects", "SR"), agent("UCBEBestArm", "UCB-E(a=(n-K)/H1)", ("H1",), c=1.0),
    agent("SAR", "SAR"), agent("UGapEb", "UGapEb(a=(n-K)/4H)", ("H",)),
    agent("UGapEb", "UGapEb(a=16(n-K)/4H)", ("H",), eta=16.0),
    agent("UGapEc", "UGapEc"), agent("LUCB", "LUCB"),
    *(agent(name, label) for name, label in BAYESIAN),
)
"""gabillon2012's fixed-budget agents as the reproduction runs them, the fixed-confidence UGapEc and LUCB and the
Bayesian agents with their defaults (independent arms, prior N(0, 1), sigma = 1)."""


def best_arm_draw(arms: int, top: tuple[float, float], gap_high: float) -> Draw:
    """``mu* ~ U(top)``, ``mu_i = mu* - Delta_i`` with ``Delta_i ~ log-U[0.02, gap_high]`` for the K - 1 others, in a
    uniformly random order."""

    def draw(rng: np.random.Generator) -> dict[str, Any]:
        best = float(rng.uniform(*top))
        gaps = np.concatenate([[0.0], log_uniform(rng, 0.02, gap_high, arms - 1)])
        order = rng.permutation(arms)
        return {"means": (best - gaps)[order].tolist()}
    return draw


def best_arm(arms: int, top: tuple[float, float], gap_high: float, budget: int) -> Setting:
    return Setting(f"K = {arms}, mu* ~ U({top[0]:g}, {top[1]:g}), T = {budget}", "BestArmIdentification-v0",
                   {"m": 1, "epsilon": 0.0, "budget": budget},
                   f"mu* ~ U({top[0]:g}, {top[1]:g}), K - 1 gaps ~ log-U[0.02, {gap_high:g}], arms in random order",
                   best_arm_draw(arms, top, gap_high), instances=16, runs=12, agents=BEST_ARM_AGENTS)


# ------------------------------------------------------------------------------------------------------ top K
TOP_K_AGENTS = (
    agent("AdaptiveTopK", "AdaptiveTopK (as printed)"),
    agent("AdaptiveTopK", "AdaptiveTopK (log-free, x1/4)", schedule="log-free", scale=0.25),
    agent("OptMAI", "OptMAI"), agent("CLUCBPAC", "CLUCB-PAC"),
    agent("CLUCBPAC", "CLUCB-PAC (R = 1)", R=1.0),
    agent("CLUCBPAC", "CLUCB-PAC (epsilon_sum = epsilon)", epsilon_sum="epsilon"),
)
"""chen2017's agents as the reproduction runs them: the printed and the tuned AdaptiveTopK, OptMAI, CLUCB-PAC and its
two readings."""


def top_k_draw(arms: int, k: int) -> Draw:
    """``b ~ U(0.3, 0.7)``; K means ``b + Delta_i``, n - K means ``b - Delta_i``, ``Delta_i ~ log-U[0.005, 0.25]``."""

    def draw(rng: np.random.Generator) -> dict[str, Any]:
        boundary = float(rng.uniform(0.3, 0.7))
        gaps = log_uniform(rng, 0.005, 0.25, arms)
        signs = np.where(np.arange(arms) < k, 1.0, -1.0)
        return {"means": (boundary + signs * gaps).tolist(), "boundary": boundary}
    return draw


def top_k(arms: int, k: int, budget: int) -> Setting:
    return Setting(f"n = {arms}, K = {k}, T = {budget}", "TopKIdentification-v0",
                   {"k": k, "epsilon": 0.01, "delta": 0.01, "budget": budget},
                   "K arms b + Delta_i, n - K arms b - Delta_i, b ~ U(0.3, 0.7), Delta_i ~ log-U[0.005, 0.25]",
                   top_k_draw(arms, k), instances=16, runs=16, agents=TOP_K_AGENTS)


# ------------------------------------------------------------------------------------------------------ correlated
def correlated_agents(sigma: float) -> tuple[dict[str, Any], ...]:
    """hoffman2014's agents as the traffic reproduction runs them (the Bayesian ones with the env's model, BayesGap
    also with its tuned beta x 2; UGap with b = 2 sigma, UCB-E with H1) and the family's other agents."""
    bayesian = [agent(name, label, model=True) for name, label in BAYESIAN]
    bayesian.insert(1, agent("BayesGap", "BayesGap (beta x 2)", model=True, beta_scale=2.0))
    return (*bayesian, agent("UGapEb", "UGap", ("H",), b=2 * sigma), agent("UCBEBestArm", "UCB-E", ("H1",)),
            agent("SuccessiveRejects", "SR"), agent("SAR", "SAR"), agent("UGapEc", "UGapEc"), agent("LUCB", "LUCB"))


def correlated_draw(locations: list[Any], length: float, eta: float) -> Draw:
    """One draw of ``N(0, eta^2 G)``, ``G_ij = exp(-|x_i - x_j|^2 / length^2)``: the env's own prior sampler."""
    prior = GaussianProcessMeans(squared_exponential(locations, length), eta)

    def draw(rng: np.random.Generator) -> dict[str, Any]:
        return {"means": prior(rng, 1)[0].tolist()}
    return draw


def correlated(label: str, locations: list[Any], length: float, eta: float, sigma: float, budget: int) -> Setting:
    return Setting(f"{label}, length {length:g}, eta = {eta:g}, sigma = {sigma:g}, T = {budget}",
                   "CorrelatedBestArm-v0",
                   {"locations": locations, "length_scale": length, "eta": eta, "sigma": sigma, "budget": budget},
                   "one draw of the prior N(0, eta^2 G), G_ij = exp(-|x_i - x_j|^2 / length^2)",
                   correlated_draw(locations, length, eta), instances=20, runs=16, agents=correlated_agents(sigma))


def line(arms: int) -> list[float]:
    return np.linspace(0.0, 1.0, arms).tolist()


def grid(side: int) -> list[list[float]]:
    x = np.linspace(0.0, 1.0, side)
    return [[float(a), float(b)] for a in x for b in x]


FAMILIES = (
    Family("thresholding", "aggregate regret", ("thresholding",),
           (thresholding(6, 0.4, 600), thresholding(15, 0.6, 900), thresholding(8, 0.35, 2400))),
    Family("threshold", "pseudo-regret over T rounds", ("threshold",),
           (threshold(3, 4, 2000), threshold(6, 8, 1500), threshold(8, 3, 1200))),
    Family("best_arm", "simple regret", ("best_arm", "best_arm_dev_select"),
           (best_arm(7, (0.6, 0.85), 0.3, 1400), best_arm(18, (0.25, 0.4), 0.2, 2700))),
    Family("top_k", "aggregate regret (chen2017 eq. 1)", ("top_k",),
           (top_k(16, 4, 1800), top_k(24, 8, 200), top_k(64, 8, 256))),
    Family("correlated", "simple regret", ("correlated",),
           (correlated("K = 30 on a line", line(30), 0.2, 1.0, 0.1, 150),
            correlated("K = 80 on a line", line(80), 0.05, 1.0, 0.4, 200),
            correlated("K = 36 on a 6 x 6 grid", grid(6), 0.3, 2.0, 0.5, 300))),
)


def sha256(path: Any) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def learned(problems: tuple[str, ...]) -> list[dict[str, Any]]:
    """The shipped learned policies of the problems, with the hash of the weights fixed with the set."""
    return [{"name": "ArmwisePPO", "params": {"problem": p, "seed": s}, "label": f"{p} seed {s}",
             "weights_sha256": sha256(shipped_path(p, s))} for p in problems for s in SHIPPED_SEEDS]


def draw_setting(f: int, s: int, setting: Setting, seed: int) -> dict[str, Any]:
    rng = np.random.default_rng([seed, f, s])
    instances = [setting.draw(rng) for _ in range(setting.instances)]
    return {"label": setting.label, "env_id": setting.env_id, "env_kwargs": setting.env_kwargs, "law": setting.law,
            "generator": f"numpy.random.default_rng([{seed}, {f}, {s}])", "runs_per_instance": setting.runs,
            "score_seed": SCORE_SEED + 10 * f + s, "agents": list(setting.agents), "instances": instances}


def draw_all(seed: int = SEED) -> dict[str, Any]:
    """The whole set, as ``instances.json`` holds it (another ``seed``: a development set of the same laws, for
    testing a scoring script without playing the held-out instances)."""
    return {"name": "bandit_gym arm-wise policies, second held-out set", "fixed_on": FIXED_ON, "seed": seed,
            "protocol": "README.md of this folder",
            "uniform": {"name": "Uniform", "params": {}, "label": "Uniform"},
            "families": [{"family": family.name, "metric": family.metric, "problems": list(family.problems),
                          "learned": learned(family.problems),
                          "settings": [draw_setting(f, s, setting, seed) for s, setting in enumerate(family.settings)]}
                         for f, family in enumerate(FAMILIES)]}


def dumps(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=1) + "\n"


def instance_kwargs(setting: dict[str, Any], instance: dict[str, Any]) -> dict[str, Any]:
    """The env arguments of one instance: the setting's, and its means (or its arms' laws)."""
    key = "distributions" if "distributions" in instance else "means"
    return {**setting["env_kwargs"], key: instance[key]}


def build_every_env(data: dict[str, Any]) -> int:
    """Make and reset the env of every instance once (no step); the number of envs."""
    built = 0
    for family in data["families"]:
        for setting in family["settings"]:
            for instance in setting["instances"]:
                env = gym.make(setting["env_id"], **instance_kwargs(setting, instance))
                env.reset(seed=setting["score_seed"])
                env.close()
                built += 1
    return built


def differences(drawn: Any, committed: Any, where: str = "") -> list[str]:
    """Where ``drawn`` and ``committed`` differ: structure exactly, numbers to ``TOLERANCE`` (relative or absolute)."""
    if isinstance(drawn, dict) and isinstance(committed, dict):
        if drawn.keys() != committed.keys():
            return [f"{where}: keys {sorted(drawn)} drawn, {sorted(committed)} committed"]
        return [d for key in drawn for d in differences(drawn[key], committed[key], f"{where}/{key}")]
    if isinstance(drawn, list) and isinstance(committed, list):
        if len(drawn) != len(committed):
            return [f"{where}: {len(drawn)} entries drawn, {len(committed)} committed"]
        pairs = enumerate(zip(drawn, committed, strict=True))
        return [d for i, (a, b) in pairs for d in differences(a, b, f"{where}/{i}")]
    if isinstance(drawn, float) and isinstance(committed, float):
        close = math.isclose(drawn, committed, rel_tol=TOLERANCE, abs_tol=TOLERANCE)
        return [] if close else [f"{where}: {drawn!r} drawn, {committed!r} committed"]
    same = drawn == committed and type(drawn) is type(committed)
    return [] if same else [f"{where}: {drawn!r} drawn, {committed!r} committed"]


def eigenspaces(env_kwargs: dict[str, Any]) -> list[np.ndarray]:
    """The eigenspaces of the prior covariance of a correlated setting, each an orthonormal ``(K, d)`` basis: the
    eigenvectors of G that ``prior_factor`` keeps, eigenvalues within ``EIGEN_TIES`` of each other (relative to the
    largest) in one space. A symmetric set of locations (the 6 x 6 grid) gives G repeated eigenvalues."""
    d, v = np.linalg.eigh(squared_exponential(env_kwargs["locations"], env_kwargs["length_scale"]))
    kept = np.flatnonzero(d > 1e-10 * d.max())  # prior_factor's tolerance
    spaces: list[list[int]] = []
    for i in kept:
        if spaces and d[i] - d[spaces[-1][-1]] <= EIGEN_TIES * d.max():
            spaces[-1].append(int(i))
        else:
            spaces.append([int(i)])
    return [v[:, space] for space in spaces]


def eigenspace_norms(means: list[float], spaces: list[np.ndarray]) -> list[float]:
    """The length of the projection of ``means`` on each eigenspace, then the length of what lies outside them all."""
    m = np.asarray(means)
    parts = [float(np.linalg.norm(m @ basis)) for basis in spaces]
    inside = sum((basis @ (m @ basis) for basis in spaces), np.zeros_like(m))
    return [*parts, float(np.linalg.norm(m - inside))]


def comparable(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with every correlated instance's means replaced by ``eigenspace_norms``: what a draw of the prior
    fixes on every machine. The draw is ``F z`` with ``F = V D^(1/2)`` from ``numpy.linalg.eigh``, whose basis of an
    eigenspace of dimension d > 1 is LAPACK's choice (and of dimension 1, its sign): the same seed's normals z give
    other means through another basis, but the same length in each eigenspace (z's part there, scaled). Another
    seed or law changes those lengths at their first digits."""
    out = json.loads(json.dumps(data))
    for family in out["families"]:
        for setting in family["settings"]:
            if setting["env_id"] != "CorrelatedBestArm-v0":
                continue
            spaces = eigenspaces(setting["env_kwargs"])
            for instance in setting["instances"]:
                instance["means"] = {"eigenspace_norms": eigenspace_norms(instance.pop("means"), spaces)}
    return out


def draw_differences(drawn: dict[str, Any], committed: dict[str, Any]) -> list[str]:
    """Where the set ``drawn`` here and the ``committed`` one differ: every number to ``TOLERANCE``, the correlated
    means through ``comparable``."""
    return differences(comparable(drawn), comparable(committed))


def check(path: Path) -> int:
    drawn = draw_all()
    committed_text = path.read_text()
    if dumps(drawn) == committed_text:
        print(f"{path}: identical to the draw")
    else:
        found = draw_differences(drawn, json.loads(committed_text))
        if found:
            print(f"{path} differs from the draw in {len(found)} places:", *found[:20], sep="\n  ")
            return 1
        print(f"{path}: equal to the draw within {TOLERANCE:g} (not byte-identical)")
    print(f"{build_every_env(drawn)} instances: every env built and reset once")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="compare the file with the draw; build every env")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--seed", type=int, default=SEED, help=f"another seed draws a development set (not {SEED})")
    args = parser.parse_args(argv)
    if args.check:
        if args.seed != SEED:
            parser.error(f"--check compares with the set drawn from the published seed {SEED}; drop --seed")
        return check(args.out)
    if args.seed != SEED and args.out.resolve() == OUT.resolve():
        parser.error(f"--seed {args.seed} draws a development set: give it another --out than the held-out set {OUT}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(dumps(draw_all(args.seed)))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
