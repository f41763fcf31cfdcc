"""The JAX thresholding agents: first decisions computed by hand, and equality in distribution with the numpy agents
of the same names (and with themselves on permuted arms)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import bandit_gym
from bandit_gym.families import Family
from bandit_gym.instances import complexity
from bandit_gym.jax.agents import APT, JAX_AGENTS, LSA, UCBE, Uniform, act
from bandit_gym.jax.envs import ThresholdingFunctional
from bandit_gym.jax.rollout import play
from bandit_gym.registration import ENV_SPECS

from ._compare import Z_LIMIT, numpy_metric, z_statistic

SETUP1 = "ThresholdingBandit-Tao2019Setup1-v0"
MEANS = ENV_SPECS[SETUP1].kwargs["means"]
H = complexity(np.asarray(MEANS), 0.5)


def observation(counts: list[float], sums: list[float], budget_left: float, threshold: float = 0.5) -> dict:
    counts_, sums_ = np.asarray(counts, np.float32), np.asarray(sums, np.float32)
    means = np.where(counts_ > 0, sums_ / np.maximum(counts_, 1), 0)
    return {key: jnp.asarray(value, dtype=jnp.float32) for key, value in {
        "counts": counts_, "sums": sums_, "means": means, "threshold": [threshold], "epsilon": [0.0],
        "budget_left": [budget_left], "last_arm": [-1.0], "last_value": [0.0]}.items()}


def first_arm(agent, obs: dict, start: dict | None = None) -> int:
    state = agent.init(jax.random.key(0), start or obs)
    return int(agent.select(state, obs, jax.random.key(1))[0])


def test_the_initial_round_pulls_each_arm_once_in_the_copys_order() -> None:
    start = observation([0, 0, 0], [0, 0, 0], 10)
    for agent in (LSA(tie_break="index"), APT(tie_break="index"), UCBE(H=4.0, tie_break="index")):
        assert [first_arm(agent, observation([1] * p + [0] * (3 - p), [0, 0, 0], 10 - p), start)
                for p in range(3)] == [0, 1, 2]
    order = LSA().init(jax.random.key(5), start).arm_at
    assert sorted(np.asarray(order).tolist()) == [0, 1, 2]
    assert first_arm(LSA(), start) == int(order[0])


def test_lsa_by_hand() -> None:
    # means 0.5, 1.0, 0.0, 0.25 from 2, 2, 2, 4 pulls, theta 0.5, alpha 1.35:
    #   xi = 1.35 T Delta^2 + 0.5 ln T = 0.3466, 1.0216, 1.0216, 1.35 * 4 * 0.0625 + 0.5 ln 4 = 1.0306
    start = observation([0, 0, 0, 0], [0, 0, 0, 0], 10)
    assert first_arm(LSA(tie_break="index"), observation([2, 2, 2, 4], [1, 2, 0, 1], 0), start) == 0
    # means 1.0, 1.0, 0.0, 0.5: xi = 1.0216 (three times), 0.5 ln 4 = 0.6931 for arm 3
    assert first_arm(LSA(tie_break="index"), observation([2, 2, 2, 4], [2, 2, 0, 2], 0), start) == 3
    # means 1.0, 1.0, 0.0, 0.25: arms 0, 1 and 2 tie at 1.0216 < 1.0306: the first in the order
    tied = observation([2, 2, 2, 4], [2, 2, 0, 1], 0)
    assert first_arm(LSA(tie_break="index"), tied, start) == 0
    picks = {int(LSA().select(LSA().init(jax.random.key(s), start), tied, jax.random.key(0))[0]) for s in range(40)}
    assert picks == {0, 1, 2}  # a random order per episode: every tied arm, never arm 3


def test_apt_and_ucbe_by_hand() -> None:
    start = observation([0, 0, 0], [0, 0, 0], 20)
    # APT(0): B = sqrt(T) |mean - theta|: sqrt(4) * 0.25 = 0.5, sqrt(1) * 0.5 = 0.5, sqrt(9) * (1/3 - 0.5)... = 0.5
    obs = observation([4, 1, 16], [3, 1, 10], 0)  # means 0.75, 1.0, 0.625: B = 0.5, 0.5, 0.5
    assert first_arm(APT(tie_break="index"), obs, start) == 0
    assert first_arm(APT(epsilon=0.1, tie_break="index"), obs, start) == 1  # + eps: 0.7, 0.6, 0.9
    # UCBE: a = 4^b (T - K) / H = (20 - 3) / 17 = 1; index = Delta - sqrt(1 / T_i): 0.25 - 0.5, 0.5 - 1, 0.125 - 0.25
    assert first_arm(UCBE(b=0.0, H=17.0, tie_break="index"), obs, start) == 1


def test_act_composes_the_envs_action() -> None:
    obs = observation([2, 2, 2], [2, 0, 1], 5)
    agent = LSA(tie_break="index")
    action, _ = act(agent, Family.THRESHOLDING, agent.init(jax.random.key(0), obs), obs, jax.random.key(1))
    assert action.shape == (4,)
    np.testing.assert_array_equal(action[1:], [1, 0, 1])  # 1{mean >= 0.5}: 1.0, 0.0, 0.5


def test_bad_parameters_name_the_argument() -> None:
    with pytest.raises(ValueError, match="alpha"):
        LSA(alpha=0.0)
    with pytest.raises(ValueError, match="H=None"):
        UCBE()
    with pytest.raises(ValueError, match="tie_break"):
        APT(tie_break="first")
    with pytest.raises(ValueError, match="plays"):
        play(ThresholdingFunctional(), _BestArmOnly(), 0, 10)
    with pytest.raises(ValueError, match="episodes"):
        play(ThresholdingFunctional(), JAX_AGENTS["Uniform"](), 0, 0)


class _BestArmOnly(Uniform):
    families = ("best_arm",)


CASES = [(LSA(), bandit_gym.agents.LSA()), (APT(), bandit_gym.agents.APT()),
         (APT(epsilon=0.05), bandit_gym.agents.APT(epsilon=0.05)), (UCBE(H=H), bandit_gym.agents.UCBE(H=H)),
         (Uniform(), bandit_gym.agents.Uniform())]


@pytest.mark.parametrize(("jax_agent", "numpy_agent"), CASES, ids=lambda a: repr(a)[:24])
def test_equal_in_distribution_to_the_numpy_agent(jax_agent, numpy_agent) -> None:
    budget, episodes = 300, 8000
    env = ThresholdingFunctional(**{**ENV_SPECS[SETUP1].kwargs, "budget": budget})
    for metric in ("regret", "error"):
        got = np.asarray(play(env, jax_agent, 11, episodes)[metric])
        want = numpy_metric(SETUP1, numpy_agent, metric, episodes, seed=12, budget=budget)
        assert abs(z_statistic(got, want)) < Z_LIMIT, (metric, got.mean(), want.mean())


def test_the_comparison_can_fail() -> None:
    budget, episodes = 300, 8000
    env = ThresholdingFunctional(**{**ENV_SPECS[SETUP1].kwargs, "budget": budget})
    lsa = np.asarray(play(env, LSA(), 11, episodes)["regret"])
    uniform = numpy_metric(SETUP1, bandit_gym.agents.Uniform(), "regret", episodes, seed=12, budget=budget)
    assert abs(z_statistic(lsa, uniform)) > 3 * Z_LIMIT


@pytest.mark.parametrize("agent", [LSA(), APT(), Uniform()], ids=lambda a: type(a).__name__)
def test_permuted_arms_give_the_same_results(agent) -> None:
    means = np.asarray(MEANS)
    permuted = np.random.default_rng(0).permutation(means)
    results = [np.asarray(play(ThresholdingFunctional(means=m, budget=200), agent, seed, 8000)["regret"])
               for seed, m in ((1, means), (2, permuted))]
    assert abs(z_statistic(*results)) < Z_LIMIT


class _NeverStops(LSA):
    """LSA with a ``stop`` of its own (always False): ``play`` then runs its general, per-copy loop."""

    def stop(self, state, obs):  # type: ignore[no-untyped-def]
        return jnp.bool_(False)


@pytest.mark.parametrize("checkpoints", [(), (17, 120)])
def test_the_lockstep_loop_plays_the_same_episodes_as_the_per_copy_loop(checkpoints) -> None:
    """A fixed-budget agent that never stops runs on the step count alone; the episodes, the answers and the
    checkpoint scores are those of the per-copy loop, draw for draw."""
    env = ThresholdingFunctional(means=bandit_gym.instances.TAO2019_SETUPS[1], budget=150)
    for crn in (False, True):
        fast = play(env, LSA(), 3, 300, checkpoints=checkpoints, common_random_numbers=crn)
        general = play(env, _NeverStops(), 3, 300, checkpoints=checkpoints, common_random_numbers=crn)
        assert set(fast) == set(general)
        for name in fast:
            np.testing.assert_array_equal(np.asarray(fast[name]), np.asarray(general[name]))
        assert float(jnp.mean(fast["regret"])) > 0  # episodes that can differ
