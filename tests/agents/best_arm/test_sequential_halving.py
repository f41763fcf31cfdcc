"""Sequential Halving (agents/best_arm/sequential_halving.py): its rounds and budget by hand, the round-only
averages of the paper, the exact error at K = 2, top m, and the paths a contributor's agent must run on (make_vec,
``bandit-gym run --jobs 2``, Dask). Permuted arms and every env of its families: the registry-driven tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from scipy import stats

import bandit_gym  # noqa: F401  (registers the ids)
from bandit_gym.agents import SequentialHalving
from bandit_gym.experiments import ExperimentResult, load_specs, run_experiment
from bandit_gym.rollout import play_episode, play_vector


def pulls_of_episode(env_id: str, means: list[float], budget: int, seed: int = 0, **kwargs: object) -> tuple[
        np.ndarray, np.ndarray]:
    """Play one episode; return each arm's pulls and the final answer bits."""
    env = gym.make(env_id, means=means, budget=budget, **kwargs)
    agent = SequentialHalving()
    agent.reset(seed=seed)
    obs, _ = env.reset(seed=seed)
    while True:
        action = agent.act(obs)
        counts = obs["counts"].copy()
        obs, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            return counts, action[1:]


def test_rounds_and_budget_by_hand() -> None:
    # K = 8, T = 240: R = 3 rounds; t_0 = 240 / (8 * 3) = 10, t_1 = 240 / (4 * 3) = 20, t_2 = 240 / (2 * 3) = 40.
    # Arm 3 always pays 1 and the others 0: it survives every round (10 + 20 + 40 = 70 pulls) and is the answer.
    means = [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0]
    for seed in range(5):
        counts, answer = pulls_of_episode("BestArmIdentification-v0", means, 240, seed)
        assert counts.sum() == 240 and counts[3] == 70
        assert sorted(counts.tolist()) == [10, 10, 10, 10, 30, 30, 70, 70]
        assert answer.tolist() == [0, 0, 0, 1, 0, 0, 0, 0]


def test_leftover_pulls_end_in_a_stop() -> None:
    # K = 5, T = 100: R = 3; t = 100 // 15 = 6, 100 // 9 = 11, 100 // 6 = 16: 30 + 33 + 32 = 95 pulls, then stop
    counts, answer = pulls_of_episode("BestArmIdentification-v0", [0.0, 1.0, 0.0, 0.0, 0.0], 100)
    assert counts.sum() == 95 and counts[1] == 6 + 11 + 16 and answer.tolist() == [0, 1, 0, 0, 0]


def test_top_m_keeps_m_arms() -> None:
    # m = 2, K = 8: R = ceil(log2(8 / 2)) = 2; t_0 = 160 / (8 * 2) = 10, t_1 = 160 / (4 * 2) = 20
    means = [0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0]
    counts, answer = pulls_of_episode("BestArmIdentification-v0", means, 160, m=2)
    assert counts.sum() == 160 and counts[1] == counts[5] == 30
    assert answer.tolist() == [0, 1, 0, 0, 0, 1, 0, 0]
    counts, answer = pulls_of_episode("TopKIdentification-v0", means, 160, k=2, shuffle=False)
    assert answer.tolist() == [0, 1, 0, 0, 0, 1, 0, 0] and counts.sum() == 160


def test_a_round_is_judged_on_its_own_values() -> None:
    """Karnin et al.'s p_hat_i^r averages round r's values alone. K = 4, T = 8: t_0 = 1, t_1 = 2. Arm 0 pays 10
    then 0.1, 0.1; arm 1 pays 0.9 then 0.5, 0.5: over all its values arm 0 leads (3.4 against 0.63), in round 1
    arm 1 does (0.5 against 0.1), and the paper keeps arm 1."""
    values = {0: [10.0, 0.1, 0.1], 1: [0.9, 0.5, 0.5], 2: [0.0], 3: [0.0]}
    obs = {"budget_left": np.array([8.0]), "last_arm": np.array([-1.0]), "counts": np.zeros(4), "sums": np.zeros(4),
           "means": np.zeros(4), "m": np.array([1.0]), "epsilon": np.array([0.0]), "last_value": np.zeros(1)}
    agent = SequentialHalving()
    agent.reset(seed=0)
    while True:
        action = agent.act({key: value.astype(np.float32) for key, value in obs.items()})
        arm = int(action[0])
        if arm == 4 or obs["budget_left"][0] == 0:
            break
        obs["sums"][arm] += values[arm][int(obs["counts"][arm])]
        obs["counts"][arm] += 1
        obs["means"] = obs["sums"] / np.maximum(obs["counts"], 1)
        obs["budget_left"] -= 1
        obs["last_arm"][:] = arm
    assert obs["counts"].tolist() == [3, 3, 1, 1] and action.tolist() == [4, 0, 1, 0, 0]


@pytest.mark.slow
def test_two_arms_err_as_the_exact_law_says() -> None:
    """K = 2: one round of t = floor(T / 2) pulls each, the larger average kept, a tie at random. With Bernoulli
    arms P(error) = P(B_1 < B_0) + P(B_1 = B_0) / 2, B_i ~ Bin(t, mu_i), mu_1 > mu_0 (scipy)."""
    mu, budget, runs = (0.45, 0.55), 41, 20_000  # t = 20 (one pull left over: the agent stops)
    t = budget // 2
    b0, b1 = stats.binom.pmf(np.arange(t + 1), t, mu[0]), stats.binom.pmf(np.arange(t + 1), t, mu[1])
    joint = np.outer(b0, b1)  # [i, j] = P(B_0 = i, B_1 = j)
    exact = np.tril(joint, -1).sum() + np.trace(joint) / 2
    envs = gym.make_vec("BestArmIdentification-v0", num_envs=runs, vectorization_mode="vector_entry_point",
                        means=list(mu), budget=budget, loss="error")
    agent = SequentialHalving()
    agent.reset(seed=7)
    obs, _ = envs.reset(seed=7)
    done, loss = np.zeros(runs, dtype=bool), np.zeros(runs)
    while not done.all():
        obs, reward, terminated, truncated, _ = envs.step(agent.act(obs))
        loss[~done] -= reward[~done]
        done |= terminated | truncated
    error = loss.mean()
    assert abs(error - exact) < 4 * np.sqrt(exact * (1 - exact) / runs), (error, exact)


@pytest.mark.slow
def test_agrees_with_an_independent_simulation_of_algorithm_1() -> None:
    """Audibert et al.'s problem 1 (K = 20, R = 5 rounds), T = 2000: the agent through the vector env against
    Algorithm 1 written directly on binomial draws (each round's sum of t_r Bernoulli values), 4000 runs each."""
    from bandit_gym.instances import AUDIBERT2010_PROBLEMS

    mu, budget, runs = np.array(AUDIBERT2010_PROBLEMS[1]), 2000, 4000
    rng, rounds = np.random.default_rng(3), 5
    errors = 0
    for _ in range(runs):
        alive = np.arange(mu.size)
        for _ in range(rounds):
            t = budget // (alive.size * rounds)
            average = rng.binomial(t, mu[alive]) / t
            alive = alive[np.lexsort((rng.random(alive.size), -average))[: -(-alive.size // 2)]]
        errors += alive[0] != 0
    direct = errors / runs
    envs = gym.make_vec("BestArmIdentification-Audibert2010Problem1-v0", num_envs=runs,
                        vectorization_mode="vector_entry_point", budget=budget, loss="error")
    played = play_vector(envs, SequentialHalving(), seed=3)["error"].mean()
    se = np.sqrt(direct * (1 - direct) / runs + played * (1 - played) / runs)
    assert abs(played - direct) < 4 * se, (played, direct)


def test_plays_a_single_top_k_env() -> None:
    result = play_episode(gym.make("TopKIdentification-v0", budget=200), SequentialHalving(), seed=0)
    assert 0 < result["pulls"] <= 200


EXPERIMENT = """
[[experiment]]
name = "{name}"
env = "{env}"
budgets = [200]
runs = 6
chunk = 3
agents = ["SequentialHalving", "Uniform"]
"""
SPEC = "".join(EXPERIMENT.format(name=name, env=env) for name, env in (
    ("best_arm", "BestArmIdentification-v0"), ("top_k", "TopKIdentification-v0")))


def spec_file(folder: Path) -> Path:
    path = folder / "halving.toml"
    path.write_text(SPEC)
    return path


def test_runs_through_the_cli_with_two_workers(tmp_path: Path) -> None:
    script = Path(sys.executable).with_name("bandit-gym")
    command = [str(script), "run", str(spec_file(tmp_path)), "--jobs", "2", "--quiet", "--out", str(tmp_path / "out")]
    done = subprocess.run(command, cwd=tmp_path, env=dict(os.environ), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    for name in ("best_arm", "top_k"):
        table = ExperimentResult.load(tmp_path / "out" / name).summary().query("metric == 'pulls'")
        assert set(table["agent"]) == {"SequentialHalving", "Uniform"}


def test_runs_on_dask(tmp_path: Path) -> None:
    distributed = pytest.importorskip("dask.distributed")
    specs = load_specs(spec_file(tmp_path))
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as \
            cluster, distributed.Client(cluster):
        results = [run_experiment(spec, jobs=2, backend="dask", progress=False) for spec in specs]
    for result in results:
        pulls = result.summary().query("metric == 'pulls' and agent == 'SequentialHalving'")["mean"].item()
        assert 0 < pulls <= 200
