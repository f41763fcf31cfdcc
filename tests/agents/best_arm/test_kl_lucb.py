"""KL-LUCB's exploration rates (``rate``): Kaufmann and Kalyanakrishnan 2013's (the default, unchanged) and Garivier
and Kaufmann 2016's experiments' (``"gk2016"``: ``ln((1 + ln t) / delta)`` at t the samples, the stop after the
round's two pulls on the bounds of its start), by hand against scipy's bounds, and on seeded runs."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest

import bandit_gym  # noqa: F401
from bandit_gym.agents import KLLUCB
from bandit_gym.agents.best_arm import _stopping, kl_lucb
from bandit_gym.agents.best_arm._base import records
from bandit_gym.experiments import AgentSpec, build_agent
from bandit_gym.rollout import play_compiled, play_vector
from tests.agents.best_arm.test_fixed_confidence import decide, kl_bounds


def kk2013_level(made: int, k: int, delta: float) -> float:
    """Kaufmann and Kalyanakrishnan 2013's b(t), t = 1 + floor((made - K) / 2) the round counter."""
    rounds = 1 + (made - k) // 2
    inner = math.log(405.5 * k * rounds**1.1 / delta)
    return inner + math.log(inner)


def gk2016_level(made: int, delta: float) -> float:
    """GK 2016's experiments' b(t) = ln((1 + ln t) / delta), t the samples made."""
    return math.log((1.0 + math.log(made)) / delta)


def constants(rate: str, delta: float) -> np.void:
    record = np.zeros(1, records(KLLUCB.constant_fields, (*_stopping.CHOICES, *KLLUCB.choice_fields)))
    record["delta"], record["rate"] = delta, kl_lucb.RATES.index(rate)
    return record[0]


# ------------------------------------------------------------------------------------------ the rates
@pytest.mark.parametrize(("made", "k", "delta"), [(4, 4, 0.1), (75, 4, 0.05), (1001, 5, 0.01), (10**6, 10, 0.2)])
def test_the_rates_are_their_formulas(made: int, k: int, delta: float) -> None:
    assert kl_lucb.exploration_rate(made, k, constants("gk2016", delta)) == pytest.approx(
        gk2016_level(made, delta), rel=1e-14)
    assert kl_lucb.exploration_rate(made, k, constants("kk2013", delta)) == pytest.approx(
        kk2013_level(made, k, delta), rel=1e-14)
    # by hand at t = 75 samples, delta = 0.05: ln((1 + 4.3175) / 0.05) = 4.6667; the round counter 36
    if made == 75:
        assert kl_lucb.exploration_rate(made, k, constants("gk2016", delta)) == pytest.approx(4.666733, abs=1e-6)
        assert kl_lucb.exploration_rate(made, k, constants("kk2013", delta)) == pytest.approx(16.991305, abs=1e-6)


def test_the_gk2016_round_samples_the_empirical_best_then_the_largest_upper_bound_at_its_rate() -> None:
    counts, sums = np.array([30, 12, 25, 8]), np.array([18, 6, 10, 2])  # t = 75 samples
    means, level = sums / counts, gk2016_level(75, 0.05)
    bounds = [kl_bounds(means[a], counts[a], level) for a in range(4)]
    best = int(np.argmax(means))
    u = max((a for a in range(4) if a != best), key=lambda a: bounds[a][1])
    assert (best, u) == (0, 1) and bounds[u][1] > bounds[best][0]  # the intervals overlap: no stop
    bernoulli = _stopping.BERNOULLI
    for a in range(4):  # the compiled bounds at this rate are scipy's
        assert _stopping.kl_bound(means[a], float(counts[a]), level, True, bernoulli, 1.0) == pytest.approx(
            bounds[a][1], abs=1e-12)
        assert _stopping.kl_bound(means[a], float(counts[a]), level, False, bernoulli, 1.0) == pytest.approx(
            bounds[a][0], abs=1e-12)
    actions = decide(KLLUCB(rate="gk2016", tie_break="index"), counts, sums, ([31, 12, 25, 8], [19, 6, 10, 2]))
    assert [int(a[0]) for a in actions] == [best, u]


# a round whose intervals separate at GK 2016's rate and overlap at Kaufmann and Kalyanakrishnan's
SEPARATED = (np.array([400, 400, 400, 400]), np.array([280, 200, 160, 120]))


def test_the_gk2016_stop_comes_after_the_rounds_two_pulls_with_the_answer_of_its_start() -> None:
    counts, sums = SEPARATED
    means = sums / counts
    gk, kk = gk2016_level(1600, 0.05), kk2013_level(1600, 4, 0.05)
    assert kl_bounds(means[0], 400, gk)[0] >= kl_bounds(means[1], 400, gk)[1]  # L_best >= U_challenger
    assert kl_bounds(means[0], 400, kk)[0] < kl_bounds(means[1], 400, kk)[1]
    # the round's start: L_0 >= U_1, yet arm 0 and then arm 1 are pulled; then the stop, answering arm 0 (J(t) of
    # the round's start) although arm 1 now leads (the statistics of a later step are the test's to choose)
    later = ([401, 401, 400, 400], [281, 330, 160, 120])
    actions = decide(KLLUCB(rate="gk2016", tie_break="index"), counts, sums, ([401, 400, 400, 400],
                                                                               [281, 200, 160, 120]), later, later)
    assert [int(a[0]) for a in actions] == [0, 1, 4, 4]  # the repeated act on the last observation too
    assert actions[2][1:].tolist() == [1, 0, 0, 0] and actions[3][1:].tolist() == [1, 0, 0, 0]
    # Kaufmann and Kalyanakrishnan's rate: the intervals overlap, the round goes on
    assert int(decide(KLLUCB(tie_break="index"), counts, sums)[0]) == 0
    # far apart, both stop; the default at once, with its strict comparison
    apart = (np.array([2000, 2000, 2000, 2000]), np.array([1600, 1000, 600, 200]))
    assert decide(KLLUCB(tie_break="index"), *apart)[0] == 4
    assert [int(a[0]) for a in decide(KLLUCB(rate="gk2016", tie_break="index"), *apart,
                                      ([2001, 2000, 2000, 2000], [1601, 1000, 600, 200]),
                                      ([2001, 2001, 2000, 2000], [1601, 1001, 600, 200]))] == [0, 1, 4]


def test_a_bad_rate_is_refused_with_the_allowed_values() -> None:
    with pytest.raises(ValueError, match=r"rate='gk' is not allowed; use one of 'kk2013', 'gk2016'"):
        KLLUCB(rate="gk")
    with pytest.raises(ValueError, match=r"rate=None is not allowed"):
        KLLUCB(rate=None)  # type: ignore[arg-type]
    assert KLLUCB().params()["rate"] == "kk2013" and KLLUCB(rate="gk2016").params()["rate"] == "gk2016"


# ------------------------------------------------------------------------------------------ whole episodes
def env(num: int, means: list[float], m: int = 1, epsilon: float = 0.0, budget: int = 20_000,
        crn: bool = False) -> gym.vector.VectorEnv:
    return gym.make_vec("BestArmIdentification-v0", num_envs=num, vectorization_mode="vector_entry_point",
                        means=means, m=m, epsilon=epsilon, setting="fixed_confidence", budget=budget,
                        common_random_numbers=crn)


def test_the_default_plays_as_before_the_rate_existed() -> None:
    """The pulls of ten seeded episodes, recorded from the code before ``rate`` existed (the same, bit for bit)."""
    means = [0.8, 0.5, 0.4, 0.2]
    out = play_vector(env(10, means), KLLUCB(delta=0.1), seed=7)
    assert out["pulls"].astype(int).tolist() == [1222, 926, 1056, 736, 1570, 972, 1284, 838, 862, 1392]
    out = play_vector(env(10, means, m=2, epsilon=0.05), KLLUCB(delta=0.1), seed=7)
    assert out["pulls"].astype(int).tolist() == [4486, 6098, 3950, 3782, 4560, 4084, 4402, 4138, 3916, 3948]


def test_a_seeded_gk2016_run_stops_sooner_after_whole_rounds_and_right() -> None:
    means = [0.8, 0.5, 0.4, 0.3, 0.2]  # K = 5: after whole rounds of two the pulls are odd
    fast = play_vector(env(30, means), KLLUCB(delta=0.1, rate="gk2016"), seed=11)
    slow = play_vector(env(30, means), KLLUCB(delta=0.1), seed=11)
    pulls = fast["pulls"].astype(int)
    assert np.all((pulls - 5) % 2 == 0) and pulls.min() > 5 and pulls.max() < 20_000
    assert fast["error"].sum() == 0  # delta = 0.1: 30 runs without error has probability > 0.04 at error rate 0.1
    assert pulls.mean() < slow["pulls"].mean() / 3  # ln((1 + ln t) / delta) is far below ln(k1 K t^1.1 / delta)
    top_two = play_vector(env(30, means, m=2, epsilon=0.05), KLLUCB(delta=0.1, rate="gk2016"), seed=11)
    assert top_two["error"].sum() == 0 and top_two["pulls"].max() < 20_000


@pytest.mark.parametrize(("m", "epsilon"), [(1, 0.0), (2, 0.05)])
def test_the_gk2016_compiled_rollout_equals_the_vector_env_bit_for_bit(m: int, epsilon: float) -> None:
    venv = env(37, [0.7, 0.6, 0.55, 0.5, 0.3], m, epsilon, budget=600, crn=True)  # some copies hit the cap
    spec = AgentSpec("KLLUCB", {"delta": 0.1, "rate": "gk2016"})
    stepped = play_vector(venv, build_agent(spec, venv), seed=5, agent_seed=6)
    compiled = play_compiled(venv, build_agent(spec, venv), seed=5, agent_seed=6)
    assert compiled is not None
    for key in ("error", "invalid", "pulls"):
        np.testing.assert_array_equal(compiled[key], stepped[key], err_msg=key)
    assert 0 < (compiled["pulls"] < 600).sum() < 37  # stopped copies and capped ones
