"""The JAX fixed-budget best-arm agents (UCBEBestArm, SuccessiveRejects, SAR): hand-computed decisions on crafted
observations, the exact phase lengths, and equality in distribution with their numpy twins."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import bandit_gym.agents as numpy_agents
from bandit_gym.agents.best_arm.successive_rejects import phase_lengths as numpy_phase_lengths
from bandit_gym.instances import AUDIBERT2010_PROBLEMS, best_arm_complexity
from bandit_gym.jax.agents._base import ArmOrder
from bandit_gym.jax.agents.sar import SAR
from bandit_gym.jax.agents.successive_rejects import PhaseState, SuccessiveRejects, phase_lengths
from bandit_gym.jax.agents.ucb_e import UCBEBestArm
from bandit_gym.jax.envs import BestArmFunctional
from bandit_gym.jax.rollout import play
from bandit_gym.rollout import play_vector
from tests.bandit_gym_jax._compare import Z_LIMIT, z_statistic

KEY = jax.random.key(0)
EPISODES = 20_000
PROBLEM3 = list(AUDIBERT2010_PROBLEMS[3])  # K = 4: 0.5, 0.3631, 0.449347, 0.48126
PROBLEM4 = list(AUDIBERT2010_PROBLEMS[4])  # K = 6: 0.5, 0.42, 0.4, 0.4, 0.35, 0.35


def observation(env: BestArmFunctional, counts: list[float], sums: list[float]) -> dict[str, jax.Array]:
    """The env's observation with crafted counts and sums (budget_left follows from the pulls made)."""
    obs = env.observation(env.initial(KEY))
    counts_, sums_ = jnp.asarray(counts, jnp.float32), jnp.asarray(sums, jnp.float32)
    left = obs["budget_left"] - counts_.sum()
    means = jnp.where(counts_ > 0, sums_ / jnp.maximum(counts_, 1.0), 0.0)
    return {**obs, "counts": counts_, "sums": sums_, "means": means, "budget_left": left}


def decide(agent: Any, env: BestArmFunctional, state: Any, counts: list[float], sums: list[float]) -> tuple:
    """One step of ``agent`` on a crafted observation: (arm, answer bits as a list, next state)."""
    obs = observation(env, counts, sums)
    arm, state = agent.select(state, obs, KEY)
    return int(arm), np.asarray(agent.answer(state, obs, KEY)).tolist(), state


def start(agent: Any, env: BestArmFunctional) -> Any:
    return agent.init(KEY, env.observation(env.initial(KEY)))


# --------------------------------------------------------------------------------------------- phase lengths
def test_phase_lengths_by_hand() -> None:
    # K = 4, n = 100: logbar = 1/2 + 1/2 + 1/3 + 1/4 = 19/12, n - K = 96
    # n_1 = ceil(96 / (19/12 * 4)) = ceil(15.16) = 16, n_2 = ceil(96 / (19/12 * 3)) = ceil(20.21) = 21,
    # n_3 = ceil(96 / (19/12 * 2)) = ceil(30.32) = 31; pulls 4*16 + 3*5 + 2*10 = 99, the survivor takes the last
    assert np.asarray(phase_lengths(jnp.int32(100), 4)).tolist() == [16, 21, 31]
    # K = 2: logbar = 1, n_1 = ceil((n - 2) / 2): an integer quotient is not rounded up (the 1e-9 tolerance)
    assert np.asarray(phase_lengths(jnp.int32(10), 2)).tolist() == [4]
    assert np.asarray(phase_lengths(jnp.int32(11), 2)).tolist() == [5]
    # n <= K: every phase has length 0
    assert np.asarray(phase_lengths(jnp.int32(3), 4)).tolist() == [0, 0, 0]


@pytest.mark.parametrize("k", [2, 3, 4, 6, 7, 20, 40])
def test_phase_lengths_equal_numpy(k: int) -> None:
    """Exact integer arithmetic gives numpy's float64 schedule (with its 1e-9 tolerance) for every budget up to
    50,000 and for large random budgets."""
    budgets = np.concatenate([np.arange(0, 50_001), np.random.default_rng(k).integers(0, 2**24, 5_000)])
    got = np.asarray(jax.jit(jax.vmap(lambda b: phase_lengths(b, k)))(jnp.asarray(budgets, jnp.int32)))
    logbar = 0.5 + np.sum(1.0 / np.arange(2, k + 1))  # numpy's phase_lengths, vectorised over the budgets
    want = np.ceil(np.maximum(budgets[:, None] - k, 0) / (logbar * (k + 1 - np.arange(1, k)))[None] - 1e-9)
    for budget in (0, k, k + 1, 100, 12_345, int(budgets[-1])):  # the vectorised form is numpy's
        assert (want[budgets == budget][0] == numpy_phase_lengths(budget, k)).all()
    assert (got == want).all(), budgets[(got != want).any(axis=1)][:10]


# --------------------------------------------------------------------------------------------- SR by hand
def test_successive_rejects_first_decisions() -> None:
    env, agent = BestArmFunctional(means=[0.5, 0.4, 0.3, 0.2], budget=100), SuccessiveRejects(tie_break="index")
    state = start(agent, env)
    assert np.asarray(state.schedule).tolist() == [16, 21, 31] and int(state.phase) == 1
    # phase 1 (n_1 = 16): the arm with the fewest pulls, the smallest index on ties
    arm, bits, state = decide(agent, env, state, [0, 0, 0, 0], [0, 0, 0, 0])
    assert (arm, bits) == (0, [1, 0, 0, 0])  # answer before any pull: all rank last, the first arm
    arm, _, state = decide(agent, env, state, [16, 16, 16, 15], [8, 4, 10, 3])
    assert arm == 3 and int(state.phase) == 1
    # end of phase 1: means 8/16, 4/16, 10/16, 4/16: arms 1 and 3 tie for the smallest, arm 1 (first) leaves
    arm, bits, state = decide(agent, env, state, [16, 16, 16, 16], [8, 4, 10, 4])
    assert np.asarray(state.alive).tolist() == [True, False, True, True] and int(state.phase) == 2
    assert arm == 0 and bits == [0, 0, 1, 0]  # phase 2 begins with arm 0; the best survivor is arm 2
    # end of phase 2 (n_2 = 21): means 10/21, 13/21, 9/21 among the survivors: arm 3 leaves; then arm 0
    arm, bits, state = decide(agent, env, state, [21, 16, 21, 21], [10, 4, 13, 9])
    assert np.asarray(state.alive).tolist() == [True, False, True, False] and (arm, bits) == (0, [0, 0, 1, 0])
    # end of phase 3 (n_3 = 31): 99 pulls made, arm 0 (16/31) beats arm 2 (15/31): arm 2 leaves and the
    # survivor, arm 0, takes the 100th pull
    arm, bits, state = decide(agent, env, state, [31, 16, 31, 21], [16, 4, 15, 9])
    assert np.asarray(state.alive).tolist() == [True, False, False, False] and int(state.phase) == 4
    assert (arm, bits) == (0, [1, 0, 0, 0])


def test_successive_rejects_ties_follow_the_copy_order() -> None:
    """The same tie as above in the copy order 3, 2, 1, 0: arm 3 (first in that order) leaves, and the pulls of
    phase 2 begin with arm 2."""
    env, agent = BestArmFunctional(means=[0.5, 0.4, 0.3, 0.2], budget=100), SuccessiveRejects()
    state = start(agent, env)
    arm_at = jnp.asarray([3, 2, 1, 0], jnp.int32)
    state = state._replace(order=ArmOrder(arm_at=arm_at, position_of=jnp.argsort(arm_at).astype(jnp.int32),
                                          total=state.order.total))
    arm, bits, state = decide(agent, env, state, [16, 16, 16, 16], [8, 4, 10, 4])
    # by position (arms 3, 2, 1, 0): means 4, 10, 4, 8 /16: position 0 (arm 3) leaves
    assert np.asarray(state.alive).tolist() == [False, True, True, True]
    assert (arm, bits) == (2, [0, 0, 1, 0])


def test_budget_at_most_k() -> None:
    """n <= K: every phase ends before the first pull, on means of 0. SR rejects positions 0, 1, 2 and pulls
    arm 3; SAR (m = 1) accepts position 0, rejects 3 and 2, pulls arm 1 and answers it once pulled."""
    env = BestArmFunctional(means=[0.5, 0.4, 0.3, 0.2], budget=3)
    sr = SuccessiveRejects(tie_break="index")
    arm, bits, state = decide(sr, env, start(sr, env), [0, 0, 0, 0], [0, 0, 0, 0])
    assert (arm, bits, int(state.phase)) == (3, [0, 0, 0, 1], 4)
    sar = SAR(tie_break="index")
    arm, _, state = decide(sar, env, start(sar, env), [0, 0, 0, 0], [0, 0, 0, 0])
    assert arm == 1 and np.asarray(state.accepted).tolist() == [True, False, False, False]
    arm, bits, state = decide(sar, env, state, [0, 1, 0, 0], [0, 0, 0, 0])
    assert (arm, bits) == (1, [0, 1, 0, 0])  # the accepted arm 0 was never pulled: the pulled survivor


def test_successive_rejects_refuses_m_above_one_as_numpy_does() -> None:
    env = BestArmFunctional(means=[0.5, 0.4, 0.3, 0.2], m=2, budget=100)
    message = r"SuccessiveRejects returns one arm \(m = 1\); this env asks for m = 2: use SAR"
    with pytest.raises(ValueError, match=message):
        play(env, SuccessiveRejects(), 0, 2)
    with pytest.raises(ValueError, match=message):
        play_vector(gym.make_vec("BestArmIdentification-v0", num_envs=2, vectorization_mode="vector_entry_point",
                                 means=[0.5, 0.4, 0.3, 0.2], m=2, budget=100), numpy_agents.SuccessiveRejects(), seed=0)
    assert np.all(np.asarray(play(env, SAR(), 0, 2)["invalid"]) == 0)  # SAR answers m = 2 arms


# --------------------------------------------------------------------------------------------- SAR by hand
@pytest.mark.parametrize(("sums", "alive", "accepted"), [
    # counts 16 each (n_1 for K = 4, n = 100), m = 2 so l = 2; ranks by sums 10 >= 9 >= 8 >= 2:
    # top gap mu_1 - mu_3 = (10 - 8)/16, bottom gap mu_2 - mu_4 = (9 - 2)/16: the bottom arm 3 is rejected
    ([10, 9, 8, 2], [True, True, True, False], [False] * 4),
    # (14 - 4)/16 > (5 - 3)/16: arm 0 is accepted
    ([14, 5, 4, 3], [False, True, True, True], [True, False, False, False]),
    # equal gaps (5 - 3)/16 = (4 - 2)/16: the higher-ranked arm leaves, arm 0 is accepted
    ([5, 4, 3, 2], [False, True, True, True], [True, False, False, False]),
    # unordered arms: sums 2, 9, 3, 9 rank arms 1, 3 (tie: index), 2, 0; top gap (9 - 3)/16 = 6/16 against
    # bottom gap (9 - 2)/16 = 7/16: arm 0 is rejected
    ([2, 9, 3, 9], [False, True, True, True], [False] * 4),
])
def test_sar_removal_by_hand(sums: list[float], alive: list[bool], accepted: list[bool]) -> None:
    env, agent = BestArmFunctional(means=[0.5, 0.4, 0.3, 0.2], budget=100, m=2), SAR(tie_break="index")
    arm, _, state = decide(agent, env, start(agent, env), [16] * 4, sums)
    assert np.asarray(state.alive).tolist() == alive and np.asarray(state.accepted).tolist() == accepted
    assert int(state.phase) == 2 and alive[arm]  # the next pull: the first survivor (counts tie)


def test_sar_to_the_end_by_hand() -> None:
    """K = 4, n = 100, m = 2 through its three phases; the answer at each step."""
    env, agent = BestArmFunctional(means=[0.5, 0.4, 0.3, 0.2], budget=100, m=2), SAR(tie_break="index")
    state = start(agent, env)
    # phase 1: arm 0 accepted (sums 14, 5, 4, 3 as above); answer: arm 0, then the best active arm, arm 1
    arm, bits, state = decide(agent, env, state, [16] * 4, [14, 5, 4, 3])
    assert (arm, bits) == (1, [1, 1, 0, 0])
    # phase 2 (n_2 = 21): l = 1 and active arms 1, 2, 3 with sums 8, 12, 2: top gap (12 - 8)/21, bottom gap
    # mu_(1) - mu_low = (12 - 2)/21: arm 3 is rejected; the answer is arms 0 and 2
    arm, bits, state = decide(agent, env, state, [16, 21, 21, 21], [14, 8, 12, 2])
    assert np.asarray(state.alive).tolist() == [False, True, True, False] and (arm, bits) == (1, [1, 0, 1, 0])
    # phase 3 (n_3 = 31): arms 1 (sums 15) and 2 (14): gaps both 1/31: the higher-ranked arm 1 is accepted; arm 2,
    # the last active arm, is not (two accepted); the pulls left go to it
    arm, bits, state = decide(agent, env, state, [16, 31, 31, 21], [14, 15, 14, 2])
    assert np.asarray(state.accepted).tolist() == [True, True, False, False] and (arm, bits) == (2, [1, 1, 0, 0])


# --------------------------------------------------------------------------------------------- UCB-E by hand
def test_ucbe_first_decisions() -> None:
    env = BestArmFunctional(means=[0.5, 0.4, 0.3, 0.2], budget=100)
    agent = UCBEBestArm(a=1.0, tie_break="index")
    state = start(agent, env)
    # the initial round: +inf for an arm never pulled, the first in the order
    assert decide(agent, env, state, [0, 0, 0, 0], [0, 0, 0, 0])[0] == 0
    assert decide(agent, env, state, [1, 1, 0, 0], [1, 0, 0, 0])[0] == 2
    # mu + sqrt(1 / T): 1 + 1 = 2, 0 + 1, 0 + 1, 1 + 1 = 2: the tie goes to arm 0
    assert decide(agent, env, state, [1, 1, 1, 1], [1, 0, 0, 1])[:2] == (0, [1, 0, 0, 0])
    # 1 + sqrt(1/4) = 1.5, 1, 1, 2: arm 3
    assert decide(agent, env, state, [4, 1, 1, 1], [4, 0, 0, 1])[:2] == (3, [1, 0, 0, 0])
    # the oracle: a = c (n - K) / H1 = (25/36) 96 / 50 = 4/3; sqrt(4/3 / 4) = 0.577 > 0.5: arm 1 (0.25 + 0.577)
    # beats arm 0 (0.5 + 0.289 at T = 16)
    oracle = UCBEBestArm(H1=50.0, tie_break="index")
    state = start(oracle, env)
    assert float(state.a) == pytest.approx(4.0 / 3.0)
    assert decide(oracle, env, state, [16, 4, 16, 16], [8, 1, 4, 4])[:2] == (1, [1, 0, 0, 0])
    # m = 2: the two largest means, an arm never pulled last
    env2 = BestArmFunctional(means=[0.5, 0.4, 0.3, 0.2], budget=100, m=2)
    assert decide(agent, env2, start(agent, env2), [2, 0, 2, 2], [0, 0, 1, 2])[1] == [0, 0, 1, 1]


def test_ucbe_parameters() -> None:
    with pytest.raises(ValueError, match="exactly one"):
        UCBEBestArm()
    with pytest.raises(ValueError, match="exactly one"):
        UCBEBestArm(a=1.0, H1=2.0)
    with pytest.raises(ValueError, match="outside"):
        UCBEBestArm(a=-1.0)
    with pytest.raises(ValueError, match="tie_break"):
        SAR(tie_break="smallest")
    assert (UCBEBestArm.numpy_agent, SuccessiveRejects.numpy_agent, SAR.numpy_agent) == (
        "UCBEBestArm", "SuccessiveRejects", "SAR")


# --------------------------------------------------------------------------------------------- in distribution
def numpy_metrics(agent: Any, seed: int, **kwargs: Any) -> dict[str, np.ndarray]:
    """``error`` and ``regret`` of ``EPISODES`` episodes of the numpy agent on the numpy vector env (one run;
    ``tests.bandit_gym_jax._compare.numpy_metric`` gives one metric per run)."""
    envs = gym.make_vec("BestArmIdentification-v0", num_envs=EPISODES, vectorization_mode="vector_entry_point",
                        copy=False, **kwargs)
    out = play_vector(envs, agent, seed=seed)
    return {key: np.asarray(out[key], dtype=np.float64) for key in ("error", "regret")}


def assert_equal_in_distribution(jax_agent: Any, numpy_agent: Any, **kwargs: Any) -> None:
    ours = play(BestArmFunctional(**kwargs), jax_agent, 1, EPISODES)
    theirs = numpy_metrics(numpy_agent, 2, **kwargs)
    for metric in ("error", "regret"):
        z = z_statistic(np.asarray(ours[metric]), theirs[metric])
        assert abs(z) < Z_LIMIT, (metric, float(np.mean(ours[metric])), theirs[metric].mean(), z)
    assert (np.asarray(ours["pulls"]) == kwargs["budget"]).all()


@pytest.mark.slow
@pytest.mark.parametrize("kwargs", [dict(means=PROBLEM4, budget=300), dict(means=PROBLEM3, budget=200)])
def test_successive_rejects_equals_numpy(kwargs: dict) -> None:
    assert_equal_in_distribution(SuccessiveRejects(), numpy_agents.SuccessiveRejects(), **kwargs)


@pytest.mark.slow
@pytest.mark.parametrize("kwargs", [
    dict(means=PROBLEM4, budget=300),
    dict(means=PROBLEM4, budget=300, m=2),
    dict(means=[0.5, 0.45, 0.4, 0.35], budget=60, m=2),  # small counts: many equal gaps
])
def test_sar_equals_numpy(kwargs: dict) -> None:
    assert_equal_in_distribution(SAR(), numpy_agents.SAR(), **kwargs)


@pytest.mark.slow
@pytest.mark.parametrize(("params", "kwargs"), [
    (dict(H1=best_arm_complexity(PROBLEM4)), dict(means=PROBLEM4, budget=300)),
    (dict(a=2.0), dict(means=PROBLEM3, budget=200, m=2)),
])
def test_ucbe_equals_numpy(params: dict, kwargs: dict) -> None:
    assert_equal_in_distribution(UCBEBestArm(**params), numpy_agents.UCBEBestArm(**params), **kwargs)


@pytest.mark.slow
def test_comparison_can_fail() -> None:
    """The negative control: SR with a budget of 300 against the numpy SR with 240 (error about 0.31 against
    0.36) gives |z| well above the limit, so the comparisons above can tell such a difference."""
    ours = play(BestArmFunctional(means=PROBLEM4, budget=300), SuccessiveRejects(), 1, EPISODES)
    theirs = numpy_metrics(numpy_agents.SuccessiveRejects(), 2, means=PROBLEM4, budget=240)
    assert abs(z_statistic(np.asarray(ours["error"]), theirs["error"])) > Z_LIMIT


def test_families_and_state_shapes() -> None:
    """The agents play best-arm identification only (play refuses another family) and keep a per-position state
    that vmaps."""
    assert SuccessiveRejects.families == SAR.families == UCBEBestArm.families == ("best_arm",)
    env = BestArmFunctional(means=[0.5, 0.4, 0.3, 0.2], budget=20)
    keys = jax.random.split(KEY, 3)
    obs = env.observation(env.initial(KEY))
    states = jax.vmap(lambda key: SAR().init(key, obs))(keys)
    assert isinstance(states, PhaseState) and states.alive.shape == (3, 4) and states.schedule.shape == (3, 3)
    result = play(env, SAR(), 0, 8)
    assert np.asarray(result["pulls"]).tolist() == [20] * 8
