"""The per-step primitives of the JAX rollout: the tie rule of ``first_minimum`` against its two-pass definition,
``arm_at``, a pull that touches the pulled arm alone, and the step code of before 2026-11-28 (kept by
``benchmarks/bench_jax_step.py``) playing the same episodes bit for bit."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from bandit_gym.jax.agents import APT, LSA
from bandit_gym.jax.agents._base import ArmOrder, arm_at, first_maximum, first_minimum
from bandit_gym.jax.envs import BestArmFunctional, ThresholdingFunctional
from bandit_gym.jax.rollout import play
from bandit_gym.registration import ENV_SPECS
from benchmarks import bench_jax_step


def order_of(arm_at_: np.ndarray) -> ArmOrder:
    arms = jnp.asarray(arm_at_, jnp.int32)
    return ArmOrder(arm_at=arms, position_of=jnp.argsort(arms).astype(jnp.int32), total=jnp.int32(100))


def two_pass(values: np.ndarray, arm_at_: np.ndarray) -> int:
    """The smallest value, then among the arms that have it the one first in the order."""
    tied = np.flatnonzero(values == values.min())
    position = np.argsort(arm_at_)
    return int(tied[np.argmin(position[tied])])


def test_first_minimum_by_hand() -> None:
    order = order_of(np.array([2, 0, 3, 1]))  # positions: arm 2 first, then 0, 3, 1
    assert int(first_minimum(jnp.asarray([1.0, 1.0, 1.0, 1.0]), order)) == 2
    assert int(first_minimum(jnp.asarray([1.0, 0.5, 1.0, 0.5]), order)) == 3  # arms 1 and 3 tie; 3 comes first
    assert int(first_minimum(jnp.asarray([-jnp.inf, 0.0, 1.0, -jnp.inf]), order)) == 0  # arm 0 before arm 3
    assert int(first_minimum(jnp.asarray([jnp.inf, jnp.inf, jnp.inf, jnp.inf]), order)) == 2
    assert int(first_maximum(jnp.asarray([0.0, 2.0, 1.0, 2.0]), order)) == 3


def test_first_minimum_is_the_two_pass_rule_on_random_ties() -> None:
    rng = np.random.default_rng(7)
    k, n = 9, 3000
    values = rng.integers(0, 4, size=(n, k)).astype(np.float32)  # about a quarter of the arms tie at the minimum
    values[rng.random((n, k)) < 0.05] = np.inf
    values[rng.random((n, k)) < 0.02] = -np.inf
    orders = np.argsort(rng.random((n, k)), axis=1)
    batch = ArmOrder(arm_at=jnp.asarray(orders, jnp.int32), position_of=jnp.asarray(np.argsort(orders, axis=1),
                     jnp.int32), total=jnp.full(n, 100, jnp.int32))
    got = np.asarray(jax.jit(jax.vmap(first_minimum))(jnp.asarray(values), batch))
    expected = np.array([two_pass(values[i], orders[i]) for i in range(n)])
    np.testing.assert_array_equal(got, expected)
    assert len(set(expected.tolist())) == k  # every arm wins somewhere: the rule favours no position


def test_arm_at_reads_the_order() -> None:
    order = order_of(np.array([2, 0, 3, 1]))
    assert [int(arm_at(order, jnp.int32(p))) for p in range(4)] == [2, 0, 3, 1]


@pytest.mark.parametrize("pulling", [True, False])
def test_a_pull_changes_the_pulled_arm_alone(pulling: bool) -> None:
    env = BestArmFunctional(means=[0.2, 0.9, 0.5], budget=10)
    params = env.default_params
    state = env.initial(jax.random.key(0), params)._replace(counts=jnp.asarray([3.0, 1.0, 2.0]),
                                                             sums=jnp.asarray([1.0, 1.0, 0.0]))
    after, value = env.pull(state, jnp.int32(1), jnp.bool_(pulling), jax.random.key(3), params)
    pulled = float(value) if pulling else 0.0
    np.testing.assert_array_equal(np.asarray(after.counts), [3.0, 1.0 + pulling, 2.0])
    np.testing.assert_array_equal(np.asarray(after.sums), [1.0, 1.0 + pulled, 0.0])
    assert int(after.budget_left) == 10 - pulling and int(after.last_arm) == (1 if pulling else -1)


@pytest.mark.parametrize("agent", [LSA(), APT(epsilon=0.05)], ids=["LSA", "APT"])
def test_the_step_code_of_before_plays_the_same_episodes(agent) -> None:
    env = ThresholdingFunctional(means=ENV_SPECS["ThresholdingBandit-Tao2019Setup1-v0"].kwargs["means"],
                                 threshold=0.5, budget=200)
    now = play(env, agent, 3, 64)
    with bench_jax_step.before():
        before = play(env, agent, 3, 64)
    assert bench_jax_step.env_base.BanditFunctional.pull is not bench_jax_step.before_pull  # restored
    for metric in ("regret", "error", "pulls"):
        np.testing.assert_array_equal(np.asarray(now[metric]), np.asarray(before[metric]))
    assert float(np.asarray(now["regret"]).std()) > 0  # the episodes differ from one another
