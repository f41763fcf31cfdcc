"""The tao2019 agents: selection rules on hand-made states, Opt-KG's numerics, the paper's robust claims."""

from __future__ import annotations

from fractions import Fraction

import gymnasium as gym
import mpmath
import numpy as np
import pytest
from scipy import special

from bandit_gym.agents import APT, LSA, UCBE, OptKG, Uniform
from bandit_gym.agents.thresholding import optkg
from bandit_gym.instances import TAO2019_SETUPS, complexity
from bandit_gym.rollout import play_vector


def state(counts: list[float], sums: list[float], budget_left: float, last_arm: float, theta: float = 0.5) -> dict:
    counts_a, sums_a = np.array(counts, np.float32), np.array(sums, np.float32)
    return {
        "threshold": np.array([theta], np.float32), "epsilon": np.zeros(1, np.float32),
        "budget_left": np.array([budget_left], np.float32), "last_arm": np.array([last_arm], np.float32),
        "last_value": np.zeros(1, np.float32), "counts": counts_a, "sums": sums_a,
        "means": np.divide(sums_a, np.maximum(counts_a, 1)),
    }


def drive(agent, counts: list[float], sums: list[float], budget: float = 100) -> int:
    """Start an episode, then hand the agent a state in which every arm was just recomputed (last_arm = -2)."""
    k = len(counts)
    agent.reset(seed=0)
    agent.act(state([0] * k, [0] * k, budget, -1))
    return int(agent.act(state(counts, sums, budget - sum(counts), -2))[0])


def test_initial_pulls_in_the_copys_arm_order() -> None:
    # each arm once first, in the copy's arm order (random per episode; index order with tie_break="index")
    for agent in (LSA(), APT(0.05), UCBE(0, H=100.0), LSA(tie_break="index")):
        agent.reset(seed=1)
        arms = []
        for t in range(4):
            pulled = np.zeros(4)
            pulled[arms] = 1
            last = arms[-1] if arms else -1
            arms.append(int(agent.act(state(pulled.tolist(), [0] * 4, 100 - t, last))[0]))
        assert arms == agent.scores.arm_at[0].tolist()
        assert (arms == [0, 1, 2, 3]) == (agent.tie_break == "index")  # seed 1 draws another order


def test_lsa_index_by_hand() -> None:
    agent = LSA(alpha=1.35, tie_break="index")
    counts, sums = [4, 10, 3], [3, 5, 0]
    arm = drive(agent, counts, sums)
    gaps = np.abs(np.array(sums) / np.array(counts) - 0.5)
    xi = 1.35 * np.array(counts) * gaps**2 + 0.5 * np.log(counts)
    np.testing.assert_allclose(agent.scores.table()[0], xi)
    assert arm == int(np.argmin(xi)) == 0  # 1.35 * 4 / 16 + 0.5 ln 4 = 1.031 < 0.5 ln 10 = 1.151 < 1.562
    assert xi.tolist() == pytest.approx([1.35 * 4 * 0.0625 + 0.5 * np.log(4), 0.5 * np.log(10),
                                         1.35 * 3 * 0.25 + 0.5 * np.log(3)])


def test_lsa_index_reads_ln_t_from_its_table_bit_for_bit() -> None:
    """LSA's compiled index takes ``ln T_i`` from a table for T_i <= 4096 and from ``math.log`` above: the same
    numbers, below, at and above the table's end, as the formula with ``math.log``."""
    import math

    from bandit_gym.agents._kernels import index_fresh
    from bandit_gym.agents.thresholding.lsa import lsa_compiled
    for count in [1, 2, 3, 100, 4095, 4096, 4097, 10**6]:
        total = 0.37 * count
        gap = abs(total / count - 0.5)
        want = 1.35 * count * (gap * gap) + 0.5 * math.log(count)
        assert index_fresh(lsa_compiled, float(count), total, 0.5, 1.35, 0.0, 0.0)[0] == want  # compiled
        assert LSA.index(float(count), total, 0.5, 1.35, 0.0) == want  # plain Python


def test_apt_index_by_hand() -> None:
    agent = APT(epsilon=0.05, tie_break="index")
    arm = drive(agent, [4, 16, 9], [3, 8, 2])
    b = np.sqrt([4, 16, 9]) * (np.abs(np.array([0.75, 0.5, 2 / 9]) - 0.5) + 0.05)
    np.testing.assert_allclose(agent.scores.table()[0], b)
    assert arm == int(np.argmin(b)) == 1


def test_ucbe_index_by_hand() -> None:
    agent = UCBE(b=1.0, H=50.0, tie_break="index")
    arm = drive(agent, [4, 16, 9], [3, 8, 2], budget=203)
    a = 4.0 * (203 - 3) / 50.0
    u = np.abs(np.array([0.75, 0.5, 2 / 9]) - 0.5) - np.sqrt(a / np.array([4, 16, 9]))
    np.testing.assert_allclose(agent.scores.table()[0], u)
    assert arm == int(np.argmin(u))
    with pytest.raises(ValueError, match="oracle complexity H"):
        UCBE(b=0.0)


def test_random_ties_vary_with_seed_and_index_ties_do_not() -> None:
    seeds = set()
    for seed in range(40):
        agent = LSA()
        agent.reset(seed=seed)
        agent.act(state([0] * 4, [0] * 4, 100, -1))
        seeds.add(int(agent.act(state([2] * 4, [1] * 4, 92, -2))[0]))
    assert seeds == {0, 1, 2, 3}
    assert drive(LSA(tie_break="index"), [2, 2, 2, 2], [1, 1, 1, 1]) == 0


def exact_tail(a: int, b: int) -> Fraction:
    """``P(vartheta >= 1/2)`` under ``Beta(a, b)`` for integers a, b, exactly: ``P(Bin(a + b - 1, 1/2) <= a - 1)``."""
    n, term, total = a + b - 1, 1, 0
    for k in range(a):
        total += term
        term = term * (n - k) // (k + 1)
    return Fraction(total, 2**n)


def exact_log_gain(a: int, b: int) -> float:
    """``log R+(a, b)`` at theta = 1/2 in exact rational arithmetic (no cancellation, whatever the counts)."""

    def h(v: Fraction) -> Fraction:
        return max(v, 1 - v)

    i = exact_tail(a, b)
    gain = max(h(exact_tail(a + 1, b)) - h(i), h(exact_tail(a, b + 1)) - h(i))
    return float(mpmath.log(mpmath.mpf(gain.numerator)) - mpmath.log(mpmath.mpf(gain.denominator)))


@pytest.mark.parametrize(("a", "b"), [(1, 1), (3, 7), (6, 5), (50, 50), (5001, 5000), (5000, 5001),
                                      (10001, 9901), (9801, 10201), (20000, 15000), (12, 20000)])
def test_optkg_log_gain_matches_exact_arithmetic(a: int, b: int) -> None:
    index, _, p, _ = optkg.fresh(0.0, 0.0, 0.5, float(a), float(b), 0.0)  # the posterior Beta(a, b)
    ours = -index
    assert p == special.betaincc(a, b, 0.5)
    assert np.isfinite(ours)
    assert ours == pytest.approx(exact_log_gain(a, b), rel=1e-9)


def test_optkg_counts_of_ten_thousand_do_not_tie() -> None:
    # plain double arithmetic underflows c = 0.5^20000 / B(a, b) to 0 for all three: an index-order tie
    a = np.array([10001.0, 10101.0, 10301.0])
    b = np.array([10001.0, 9901.0, 9701.0])
    gains = np.array([-optkg.fresh(0.0, 0.0, 0.5, a_, b_, 0.0)[0] for a_, b_ in zip(a, b, strict=True)])
    assert np.all(np.isfinite(gains)) and gains[0] > gains[1] > gains[2]
    assert 0.5**20000 == 0.0


def test_optkg_recurrence_tracks_the_exact_posterior() -> None:
    venv = gym.make_vec("ThresholdingBandit-Tao2019Setup3-v0", num_envs=50, vectorization_mode="vector_entry_point",
                        budget=3000)
    agent = OptKG(0.5, 0.5)
    play_vector(venv, agent, seed=0)
    obs = venv.unwrapped.engine.obs
    a, b = 0.5 + obs["sums"].astype(float), 0.5 + obs["counts"] - obs["sums"]
    np.testing.assert_allclose(agent.p, special.betaincc(a, b, 0.5), atol=1e-11)
    assert obs["counts"].max() > 1000


def test_optkg_answer_is_the_bayes_decision() -> None:
    agent = OptKG(1.0, 1.0)
    agent.reset(seed=0)
    agent.act(state([0, 0, 0], [0, 0, 0], 30, -1))
    action = agent.act(state([4, 4, 5], [2, 3, 2], 17, -2))
    assert action[1:].tolist() == [1, 1, 0]  # a >= b: (3, 3), (4, 2); (3, 4) below


AGENTS_TAO = {"Uniform": Uniform(), "LSA": LSA(), "APT(.05)": APT(0.05), "OptKG(1,1)": OptKG(1, 1)}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(AGENTS_TAO))
def test_anytime_curves_decrease_in_budget(name: str) -> None:
    venv = gym.make_vec("ThresholdingBandit-Tao2019Setup1-v0", num_envs=5000,
                        vectorization_mode="vector_entry_point", common_random_numbers=True)
    budgets = [100, 300, 600, 1000]
    regret = play_vector(venv, AGENTS_TAO[name], seed=11, budgets=budgets)["anytime_regret"]
    means = regret.mean(axis=0)
    diffs = np.diff(regret, axis=1)
    se = diffs.std(axis=0, ddof=1) / np.sqrt(len(regret))
    assert np.all(np.diff(means) < 0) and np.all(diffs.mean(axis=0) + 3 * se < 0), means


@pytest.mark.slow
def test_ucbe_oracle_h_of_setup_1() -> None:
    H = complexity(np.array(TAO2019_SETUPS[1]), 0.5)
    venv = gym.make_vec("ThresholdingBandit-Tao2019Setup1-v0", num_envs=5000, vectorization_mode="vector_entry_point")
    regret = play_vector(venv, UCBE(0.0, H=H), seed=3)["regret"]
    assert -4.6 < np.log(regret.mean() / 10) < -4.1  # an independent pre-check gave -4.36 at T = 1000


def test_opt_kg_finds_scipys_float64_betaincc_by_its_signature() -> None:
    """Not by the name Cython made up for it (``__pyx_fuse_0betaincc`` in today's scipy)."""
    from scipy import special

    from bandit_gym.agents.thresholding.optkg import double_version

    assert double_version("betaln") == "betaln"
    assert double_version("betaincc").endswith("betaincc")
    with pytest.raises(ImportError, match="no float64 nope"):
        double_version("nope")
    betaincc = optkg.betaincc
    assert betaincc(2.0, 3.0, 0.4) == pytest.approx(special.betaincc(2.0, 3.0, 0.4), rel=1e-15)


@pytest.mark.parametrize("agent", [LSA(), LSA(alpha=4.0), APT(epsilon=0.05), UCBE(H=40.0)], ids=repr)
def test_the_compiled_index_step_equals_a_plain_python_one(agent: LSA | APT | UCBE) -> None:
    """The compiled step of an index agent against the rule written in plain Python from the same ``index``
    function (its Python source, not compiled): each copy pulls every arm once in its arm order, then the arm of
    smallest index, ties to the first position of that order; the answer is ``mean >= theta``. Bit for bit, on
    every step of 6 copies."""
    envs = gym.make_vec("ThresholdingBandit-Tao2019Setup1-v0", num_envs=6, vectorization_mode="vector_entry_point",
                        budget=120)
    obs, _ = envs.reset(seed=4)
    agent.reset(seed=5)
    index, checked = type(agent).index, 0
    for _ in range(121):
        action = agent.act(obs).copy()
        order, param = agent.scores.arm_at, agent.index_param()
        for n in range(6):
            counts, sums = obs["counts"][n].astype(float), obs["sums"][n].astype(float)
            theta, made = float(obs["threshold"][n, 0]), int(counts.sum())
            if made < counts.size:
                arm = order[n, made]
            else:
                values = [index(counts[a], sums[a], theta, param, float(agent.per_copy[n])) for a in order[n]]
                arm = order[n, int(np.argmin(values))]  # the first position among the smallest
                checked += 1
            answer = sums / np.maximum(counts, 1.0) >= theta
            assert action[n, 0] == arm and (action[n, 1:] == answer).all()
        obs, *_ = envs.step(action)
    assert checked > 500
