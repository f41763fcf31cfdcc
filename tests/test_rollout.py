"""The compiled paths: a compiled rollout equals playing the vector env step by step, bit for bit, and is used
only where it applies."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import bandit_gym  # noqa: F401
from bandit_gym.agents import UCBEBestArm
from bandit_gym.experiments import AgentSpec, build_agent
from bandit_gym.rollout import play_compiled, play_vector

AGENT_CASES = [
    ("Uniform", {}),
    ("LSA", {}),
    ("LSA", {"alpha": 4.0, "tie_break": "index"}),
    ("APT", {"epsilon": 0.05}),
    ("UCBE", {"b": 0.0}),
    ("UCBE", {"b": 4.0, "tie_break": "index"}),
    ("OptKG", {}),
    ("OptKG", {"a0": 0.5, "b0": 0.5}),
]


def both_ways(env_id: str, name: str, params: dict[str, Any], copies: int = 37, budget: int = 600,
              **env_kwargs: Any) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray] | None]:
    venv = gym.make_vec(env_id, num_envs=copies, vectorization_mode="vector_entry_point", budget=budget,
                        **env_kwargs)
    budgets = [3, 10, 11, 250, budget]  # 3 < K: inside the initial round of pulls
    spec = AgentSpec(name, params)
    stepped = play_vector(venv, build_agent(spec, venv), seed=5, budgets=budgets, agent_seed=6)
    compiled = play_compiled(venv, build_agent(spec, venv), seed=5, budgets=budgets, agent_seed=6)
    return stepped, compiled


@pytest.mark.parametrize(("name", "params"), AGENT_CASES)
@pytest.mark.parametrize("setup", [1, 2, 3])
def test_compiled_rollout_equals_the_vector_env_bit_for_bit(setup: int, name: str, params: dict[str, Any]) -> None:
    # 37 copies: not a multiple of the rollout's group of copies played in lockstep
    stepped, compiled = both_ways(f"ThresholdingBandit-Tao2019Setup{setup}-v0", name, params,
                                  common_random_numbers=True)
    assert compiled is not None
    assert set(compiled) <= set(stepped)
    for key, value in compiled.items():
        np.testing.assert_array_equal(value, stepped[key], err_msg=key)
    assert stepped["anytime_regret"][:, -1].sum() < stepped["anytime_regret"][:, 0].sum()  # something was learnt


def test_compiled_rollout_scores_only_arms_outside_the_indifference_zone() -> None:
    stepped, compiled = both_ways("ThresholdingBandit-Tao2019Setup1-v0", "LSA", {}, epsilon=0.1,
                                  common_random_numbers=True)
    assert compiled is not None
    np.testing.assert_array_equal(compiled["anytime_regret"], stepped["anytime_regret"])
    assert compiled["anytime_regret"].max() <= 8  # arms 0.45 and 0.55 never count


@pytest.mark.parametrize("env_kwargs", [{"common_random_numbers": False},
                                        {"common_random_numbers": True, "arm_distribution": "gaussian"}])
def test_no_compiled_rollout_without_bernoulli_streams(env_kwargs: dict[str, Any]) -> None:
    # Without common random numbers the vector env draws for all copies in bulk at every step, an order a
    # per-copy rollout cannot follow; Gaussian streams need ndtri. Both play step by step.
    _, compiled = both_ways("ThresholdingBandit-v0", "LSA", {}, budget=300, **env_kwargs)
    assert compiled is None


def test_no_compiled_rollout_on_the_threshold_bandit() -> None:
    venv = gym.make_vec("ThresholdBandit-v0", num_envs=4, vectorization_mode="vector_entry_point")
    assert play_compiled(venv, build_agent(AgentSpec("UCB"), venv), seed=0) is None


def assert_parallel_kernels_agree(play: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """``play()`` gives the same numbers when every batch steps on all cores as when every batch steps on one
    (large batches use the faster of the two, ``bandit_gym._dispatch``): each copy's arithmetic is unchanged."""
    from bandit_gym import _dispatch

    monkeypatch.setattr(_dispatch, "FORCE", "serial")
    serial = play()
    monkeypatch.setattr(_dispatch, "FORCE", "parallel")
    parallel = play()
    for key, value in serial.items():
        np.testing.assert_array_equal(parallel[key], value, err_msg=key)


@pytest.mark.parametrize("name", ["Uniform", "LSA", "OptKG"])
def test_parallel_step_kernels_give_the_same_numbers(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # Large batches may step on all cores; every copy's arithmetic is unchanged.
    def play() -> dict[str, np.ndarray]:
        venv = gym.make_vec("ThresholdingBandit-Tao2019Setup2-v0", num_envs=64, vectorization_mode="vector_entry_point",
                            budget=400)
        return play_vector(venv, build_agent(AgentSpec(name), venv), seed=3, budgets=[50, 400])

    assert_parallel_kernels_agree(play, monkeypatch)


BEST_ARM_CASES = [
    ("Uniform", {}, {}),
    ("SuccessiveRejects", {}, {}),
    ("SAR", {}, {"m": 2, "epsilon": 0.05}),
    ("UCBEBestArm", {}, {}),
    ("UGapEb", {}, {}),
    ("UGapEb", {"eta": 16.0}, {"m": 2, "epsilon": 0.05}),
    ("UGapEc", {"delta": 0.1}, {"setting": "fixed_confidence", "budget": 20000}),
    ("UGapEc", {"delta": 0.1}, {"setting": "fixed_confidence", "m": 2, "epsilon": 0.05, "budget": 300}),  # capped
    ("LUCB", {"delta": 0.1}, {"setting": "fixed_confidence", "budget": 20000}),
    ("LUCB", {"delta": 0.1}, {"setting": "fixed_confidence", "m": 3, "epsilon": 0.05, "budget": 300}),
    # the rules on the stopping components (``Stopping.component``), by the GLR rule's heuristic threshold
    ("TrackAndStop", {"delta": 0.1, "threshold": "heuristic"}, {"setting": "fixed_confidence", "budget": 20000}),
    ("TrackAndStop", {"delta": 0.1, "tracking": "C", "threshold": "heuristic"},
     {"setting": "fixed_confidence", "budget": 300}),
    ("EBTCI", {"delta": 0.1, "threshold": "heuristic"}, {"setting": "fixed_confidence", "budget": 20000}),
    ("TTUCB", {"delta": 0.1}, {"setting": "fixed_confidence", "budget": 300}),
    ("TTTS", {"delta": 0.1}, {"setting": "fixed_confidence", "budget": 300}),
    ("FWSampling", {"delta": 0.1}, {"setting": "fixed_confidence", "budget": 300}),
    ("FWSampling", {"delta": 0.01, "threshold": "heuristic"}, {"setting": "fixed_confidence", "budget": 2000}),
    ("TTTS", {"delta": 0.1, "max_resamples": 1, "threshold": "heuristic"},  # the pairwise challenger
     {"setting": "fixed_confidence", "budget": 20000}),
    ("KLLUCB", {"delta": 0.1}, {"setting": "fixed_confidence", "m": 2, "epsilon": 0.05, "budget": 300}),
    ("LilUCB", {"delta": 0.1}, {"setting": "fixed_confidence", "budget": 300}),
]


@pytest.mark.parametrize(("name", "params", "env_kwargs"), BEST_ARM_CASES)
def test_best_arm_compiled_rollout_equals_the_vector_env_bit_for_bit(name: str, params: dict[str, Any],
                                                                      env_kwargs: dict[str, Any]) -> None:
    # Audibert et al.'s problem 4 (K = 6); 37 copies; fixed budget 600 unless the case sets a cap
    kwargs = {"budget": 600, **env_kwargs}
    venv = gym.make_vec("BestArmIdentification-Audibert2010Problem4-v0", num_envs=37,
                        vectorization_mode="vector_entry_point", common_random_numbers=True, **kwargs)
    spec = AgentSpec(name, params)
    stepped = play_vector(venv, build_agent(spec, venv), seed=5, agent_seed=6)
    compiled = play_compiled(venv, build_agent(spec, venv), seed=5, agent_seed=6)
    assert compiled is not None
    for key in ("regret", "error", "invalid", "pulls"):
        np.testing.assert_array_equal(compiled[key], stepped[key], err_msg=key)
    assert compiled["invalid"].sum() == 0
    assert 0 < compiled["error"].mean() < 1 or kwargs["budget"] == 20000  # a budget where answers differ
    if kwargs["budget"] == 300:
        assert (compiled["pulls"] == 300).any()  # some copies hit the cap (truncation)


@pytest.mark.parametrize("name", ["UGapEb", "SAR", "LUCB"])
def test_best_arm_parallel_step_kernels_give_the_same_numbers(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    def play() -> dict[str, np.ndarray]:
        venv = gym.make_vec("BestArmIdentification-Audibert2010Problem5-v0", num_envs=64, m=2, epsilon=0.05,
                            vectorization_mode="vector_entry_point", budget=400,
                            setting="fixed_confidence" if name == "LUCB" else "fixed_budget")
        return play_vector(venv, build_agent(AgentSpec(name), venv), seed=3)

    assert_parallel_kernels_agree(play, monkeypatch)


def test_dispatch_uses_the_faster_variant_and_tries_the_other_again_later(monkeypatch: pytest.MonkeyPatch) -> None:
    """The serial/parallel choice follows measured costs: a variant that turns slow (a busy core) is left after
    one call, and the loser is retried after 8 calls, then after 16, 32, ... while it keeps losing."""
    from bandit_gym import _dispatch

    slow = {_dispatch.SERIAL: 0.0, _dispatch.PARALLEL: 0.0}
    calls: list[int] = []

    def variant(which: int) -> Any:
        def run() -> int:
            calls.append(which)
            clock[0] += slow[which]
            return which
        return run

    clock = [0.0]
    monkeypatch.setattr(_dispatch.time, "perf_counter", lambda: clock[0])
    kernel = _dispatch.Kernel(variant(_dispatch.SERIAL), variant(_dispatch.PARALLEL))
    assert kernel(10) == _dispatch.SERIAL  # small batches: always serial, nothing measured
    assert kernel.warm == [False, False]
    slow.update({_dispatch.SERIAL: 2.0, _dispatch.PARALLEL: 1.0})
    for _ in range(4):  # warm-up (compile) calls, then one measured call each
        kernel(4096)
    assert calls[1:] == [0, 0, 1, 1] and kernel.best == _dispatch.PARALLEL
    del calls[:]
    for _ in range(40):
        kernel(4096)
    assert calls.count(_dispatch.SERIAL) == 2 and calls.index(_dispatch.SERIAL) == 7  # retried after 8, then 16
    slow[_dispatch.PARALLEL] = 100.0  # a busy core: parallel becomes slow
    del calls[:]
    for _ in range(3):
        kernel(4096)
    assert calls == [1, 0, 0] and kernel.best == _dispatch.SERIAL
    del calls[:]
    for _ in range(30):  # parallel is tried again at the 8th call after the switch, then 16 calls later
        kernel(4096)
    assert [i for i, which in enumerate(calls) if which == _dispatch.PARALLEL] == [5, 21]


def test_tournament_tree_gives_the_first_largest_value() -> None:
    from bandit_gym.agents.best_arm.ucbe import tree_size
    from bandit_gym.agents.ranking import max_tree_build, max_tree_update

    rng = np.random.default_rng(0)
    for k in (1, 2, 3, 7, 64, 1000):
        values = rng.integers(0, 5, size=k).astype(float)  # many ties
        values[rng.integers(k)] = np.inf
        tree = np.zeros(tree_size(k))
        max_tree_build(values, tree)
        assert tree[1] == np.argmax(values)
        for _ in range(200):
            arm = int(rng.integers(k))
            values[arm] = float(rng.integers(0, 6))
            max_tree_update(values, tree, arm)
            assert tree[1] == np.argmax(values)  # numpy's argmax: the first largest


def test_ucbe_incremental_rollout_equals_the_vector_env_at_every_checkpoint() -> None:
    """UCB-E's rollout keeps its indices in a tournament tree and recomputes only the pulled arm's between
    checkpoints; its answers at 30 budgets equal those of act (all K indices at every step), bit for bit."""
    means = np.arange(64) / 64
    venv = gym.make_vec("BestArmIdentification-v0", num_envs=12, vectorization_mode="vector_entry_point",
                        common_random_numbers=True, means=means, budget=3000)
    budgets = list(range(100, 3001, 100))
    stepped = play_vector(venv, UCBEBestArm(a=50.0), seed=2, budgets=budgets)
    compiled = play_compiled(venv, UCBEBestArm(a=50.0), seed=2, budgets=budgets)
    assert compiled is not None
    np.testing.assert_array_equal(compiled["anytime_regret"], stepped["anytime_regret"])
    assert 0 < stepped["anytime_regret"][:, -1].mean() < stepped["anytime_regret"][:, 0].mean()


def ucbe_by_hand(obs: dict[str, np.ndarray], a: float) -> tuple[np.ndarray, np.ndarray]:
    """UCB-E from scratch on a batch: every index, the first argmax (unpulled arms first), the answer bits."""
    counts, sums = obs["counts"].astype(np.float64), obs["sums"].astype(np.float64)
    means = sums / np.maximum(counts, 1.0)
    with np.errstate(divide="ignore"):
        index = np.where(counts == 0, np.inf, means + np.sqrt(a / counts))
    answer = np.zeros(counts.shape, dtype=np.int64)
    answer[np.arange(len(counts)), means.argmax(axis=1)] = 1
    return index.argmax(axis=1), answer


def test_ucbe_act_equals_recomputing_every_index_at_every_step() -> None:
    """``act`` recomputes only the pulled arm's index and answer entry; at every step of 8 copies x 1500 pulls
    (K = 40, means with ties) its arm and answer equal a from-scratch computation, also after the env pulled
    another arm than the one asked for (every 97th step), which must send the agent back to a full recompute."""
    means = np.repeat(np.linspace(0.2, 0.8, 20), 2)
    venv = gym.make_vec("BestArmIdentification-v0", num_envs=8, vectorization_mode="vector_entry_point",
                        means=means, budget=1500)
    agent, a = UCBEBestArm(a=20.0, tie_break="index"), 20.0  # the hand computation breaks ties by index
    agent.reset(seed=0)
    obs, _ = venv.reset(seed=1)
    foreign = 0
    for t in range(1501):
        action = agent.act(obs)
        arms, answer = ucbe_by_hand(obs, a)
        np.testing.assert_array_equal(action[:, 0], arms, err_msg=f"arm at step {t}")
        np.testing.assert_array_equal(action[:, 1:], answer, err_msg=f"answer at step {t}")
        action = action.copy()
        if t % 97 == 50:
            action[:, 0] = (action[:, 0] + 1 + t % 5) % len(means)
            foreign += 1
        obs, _, terminated, _, _ = venv.step(action)
    assert terminated.all() and foreign == 15


def test_play_episode_and_play_vector_pass_reset_options() -> None:
    from bandit_gym.rollout import play_episode, play_vector
    from tests.conftest import AGENTS

    means = [0.1, 0.2, 0.3, 0.45, 0.55, 0.7, 0.8, 0.9, 0.95, 0.99]
    env = gym.make("ThresholdingBandit-v0", budget=50)
    play_episode(env, AGENTS["APT"](), seed=0, options={"means": means})
    np.testing.assert_allclose(env.unwrapped.engine.means[0], means)
    envs = gym.make_vec("ThresholdingBandit-v0", num_envs=4, vectorization_mode="vector_entry_point", budget=50)
    play_vector(envs, AGENTS["APT"](), seed=0, options={"means": means})
    np.testing.assert_allclose(envs.unwrapped.engine.means, np.tile(means, (4, 1)))


def test_the_compiled_rollout_reads_only_public_engine_state() -> None:
    import inspect

    from bandit_gym import rollout
    from tests.conftest import AGENTS

    source = inspect.getsource(rollout)
    assert "._seeds" not in source and "AnytimeTracker(" not in source  # no private state, no throwaway objects
    envs = gym.make_vec("ThresholdingBandit-Tao2019Setup1-v0", num_envs=4, vectorization_mode="vector_entry_point",
                        common_random_numbers=True, budget=50)
    envs.reset(seed=0)
    seeds = envs.unwrapped.engine.stream_seeds
    assert seeds.shape == (4, 10) and not seeds.flags.writeable
    with pytest.raises(ValueError, match="strictly increasing"):
        rollout.play_compiled(envs, AGENTS["APT"](), seed=0, budgets=[30, 20])
