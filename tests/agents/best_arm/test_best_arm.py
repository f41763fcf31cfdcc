"""gabillon2012's agents: UGapE's SELECT-ARM on hand-made statistics (B, J, u_t, l_t, the pulled arm, the tie
rules, max^m), UGapEb's recommendation, UGapEc's stopping; and the paper's claims (slow)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from scipy import stats

from bandit_gym.agents import LUCB, SAR, SuccessiveRejects, UCBEBestArm, UGapEb, UGapEc, Uniform
from bandit_gym.agents.best_arm.ugape import select_arm
from bandit_gym.experiments import AgentSpec, build_agent
from bandit_gym.rollout import play_compiled, play_vector


def select(means: list[float], beta: list[float], m: int) -> tuple[list[int], float, int]:
    answer, set_index, pull = select_arm(np.array([means]), np.array([beta]), m)
    return np.flatnonzero(answer[0]).tolist(), float(set_index[0]), int(pull[0])


def test_select_arm_by_hand() -> None:
    # U = [.875, .75, .75], L = [.625, .25, -.25]; B = [.75 - .625, .875 - .25, .875 + .25]; J = {0}, B_J = .125.
    # u_t: arms 1 and 2 tie on U = .75, the larger beta wins (arm 2); l_t = 0; beta_2 > beta_0: pull arm 2.
    assert select([0.75, 0.5, 0.25], [0.125, 0.25, 0.5], 1) == ([0], 0.125, 2)


def test_select_arm_with_m_two_uses_the_mth_largest_of_the_others() -> None:
    # U = [.875, .625, .375, .25], L = [.625, .375, .125, 0]: max^2 over the others is U_(3) = .375 for arms 0
    # and 1 (in the top two), U_(2) = .625 for arms 2 and 3. B = [-.25, 0, .5, .625]; J = {0, 1}, B_J = 0;
    # u_t = 2 (largest U outside J), l_t = 1 (smallest L inside); equal betas: a tie pulls l_t.
    assert select([0.75, 0.5, 0.25, 0.125], [0.125] * 4, 2) == ([0, 1], 0.0, 1)


def test_select_arm_ties_in_b_go_to_the_smallest_index() -> None:
    # arms 0 and 1 are identical: B ties at .25, J = {0}; u_t = 1; l_t = 0; equal betas pull l_t = 0
    assert select([0.5, 0.5, 0.25], [0.125] * 3, 1) == ([0], 0.25, 0)


def drive(agent: UGapEb | UGapEc | UCBEBestArm | LUCB, states: list[tuple[list[int], list[int]]], epsilon: float = 0.0,
          budget: int = 100) -> list[np.ndarray]:
    """Act on a first observation, then on each (counts, sums) state; return the actions."""
    k = len(states[0][0])

    def obs(counts: list[int], sums: list[int], last: float) -> dict[str, np.ndarray]:
        c, s = np.array(counts, dtype=np.float32), np.array(sums, dtype=np.float32)
        return {"m": np.array([1.0], np.float32), "epsilon": np.array([epsilon], np.float32),
                "budget_left": np.array([budget - c.sum()], np.float32), "last_arm": np.array([last], np.float32),
                "last_value": np.zeros(1, np.float32), "counts": c, "sums": s, "means": s / np.maximum(c, 1)}

    agent.reset(seed=0)
    agent.act(obs([0] * k, [0] * k, -1.0))
    return [agent.act(obs(counts, sums, 0.0)) for counts, sums in states]


def test_ugapeb_recommends_the_set_of_smallest_index_over_time() -> None:
    agent = UGapEb(a=0.01)  # beta = 0.1 / sqrt(T)
    actions = drive(agent, [
        ([4, 4], [3, 1]),  # mu = (.75, .25), beta .05: J = {0}, B_J = .3 - .7 = -.4
        ([8, 4], [3, 3]),  # mu = (.375, .75): J = {1} but B_J = .410 - .7 = -.29 > -.4: keep {0}
        ([8, 4], [1, 3]),  # mu = (.125, .75): J = {1}, B_J = .160 - .7 = -.54 < -.4: now {1}
    ])
    assert [action[1:].tolist() for action in actions] == [[1, 0], [1, 0], [0, 1]]
    assert agent.best_index[0] == pytest.approx(0.125 + 0.1 / np.sqrt(8) - (0.75 - 0.05))


def test_ugapeb_last_recommendation_answers_the_current_j() -> None:
    agent = UGapEb(a=0.01, recommendation="last")
    actions = drive(agent, [([4, 4], [3, 1]), ([8, 4], [3, 3])])  # J = {0}, then J = {1} with a larger B_J
    assert [action[1:].tolist() for action in actions] == [[1, 0], [0, 1]]
    with pytest.raises(ValueError, match="recommendation"):
        UGapEb(a=1.0, recommendation="best")


def test_ugapeb_initial_round_and_oracle_exploration() -> None:
    agent = UGapEb(H=50.0, tie_break="index")
    actions = drive(agent, [([1, 0, 0], [1, 0, 0]), ([1, 1, 0], [1, 0, 0])], budget=203)
    assert [int(a[0]) for a in actions] == [1, 2]  # each arm once, in index order
    assert agent.exploration[0] == pytest.approx((203 - 3) / (4 * 50.0))
    with pytest.raises(ValueError, match="exactly one of a"):
        UGapEb()


def test_ugapec_stops_when_the_set_index_falls_below_epsilon() -> None:
    agent = UGapEc(delta=0.1)
    going = drive(agent, [([10, 10], [9, 1])], epsilon=0.0)[0]
    assert going[0] in (0, 1)  # B_J = U_1 - L_0 > 0 with 20 pulls
    stopped = drive(agent, [([4000, 4000], [3600, 400])], epsilon=0.0, budget=10_000)[0]
    assert stopped.tolist() == [2, 1, 0]  # B_J < 0: stop (action K) with J = {0}


def error_rate(agent_spec: AgentSpec, env_id: str, runs: int, **kwargs: object) -> dict[str, np.ndarray]:
    """Play ``runs`` episodes with common random numbers in compiled code (the same numbers as the vector env
    step by step, tests/test_rollout.py)."""
    venv = gym.make_vec(env_id, num_envs=runs, vectorization_mode="vector_entry_point", common_random_numbers=True,
                        **kwargs)
    result = play_compiled(venv, build_agent(agent_spec, venv), seed=5)
    assert result is not None
    return result


@pytest.mark.slow
@pytest.mark.parametrize("problem", [1, 2])
def test_ugapeb_beats_uniform_at_budget_h1(problem: int) -> None:
    # eta = 16: the theoretical a (eta = 1) is too small at n = H_1 (see UGapEb's docstring)
    env_id = f"BestArmIdentification-Audibert2010Problem{problem}-v0"
    ugape = error_rate(AgentSpec("UGapEb", {"eta": 16.0}), env_id, 1000)["error"]
    uniform = error_rate(AgentSpec("Uniform"), env_id, 1000)["error"]
    test = stats.ttest_ind(ugape, uniform, equal_var=False)
    assert ugape.mean() < uniform.mean() and test.pvalue < 0.01


@pytest.mark.slow
@pytest.mark.parametrize(("problem", "m", "epsilon"), [(4, 1, 0.0), (5, 2, 0.05)])
def test_ugapec_error_is_below_delta(problem: int, m: int, epsilon: float) -> None:
    # Audibert et al.'s problem 4 (K = 6) as best-arm identification, problem 5 (K = 15) as (0.05, 2)-best arms
    delta, runs = 0.1, 1000
    result = error_rate(AgentSpec("UGapEc", {"delta": delta}), f"BestArmIdentification-Audibert2010Problem{problem}-v0",
                        runs, m=m, epsilon=epsilon, setting="fixed_confidence", budget=10**6)
    errors = int(result["error"].sum())
    # the one-sided 95% upper confidence bound of the error rate lies below delta
    assert stats.binomtest(errors, runs, delta, alternative="less").pvalue < 0.05
    assert result["pulls"].max() < 10**6  # every run stopped before the cap


def test_uniform_answers_the_top_m_empirical_means() -> None:
    env = gym.make("BestArmIdentification-v0", m=2, budget=40)
    agent = Uniform()
    agent.reset(seed=0)
    obs, _ = env.reset(seed=0)
    for _ in range(40):
        action = agent.act(obs)
        obs, *_ = env.step(action)
    assert action[1:].sum() == 2


def test_successive_rejects_phase_lengths_by_hand() -> None:
    from bandit_gym.agents.best_arm.successive_rejects import phase_lengths

    # K = 4, n = 100: logbar = 1/2 + 1/2 + 1/3 + 1/4; n_k = ceil(96 / (logbar (5 - k)))
    assert phase_lengths(100, 4).tolist() == [16, 21, 31]
    assert 4 * 16 + 3 * (21 - 16) + 2 * (31 - 21) <= 100


def test_successive_rejects_plays_its_phases() -> None:
    env = gym.make("BestArmIdentification-v0", means=[0.9, 0.1, 0.5, 0.4], budget=100)
    agent = SuccessiveRejects()
    agent.reset(seed=0)
    obs, _ = env.reset(seed=0)
    pulls_at_phase_end = []
    while True:
        action = agent.act(obs)
        if len(pulls_at_phase_end) < int(agent.phase[0]) - 1:
            pulls_at_phase_end.append(obs["counts"].copy())
        obs, _, terminated, _, _ = env.step(action)
        if terminated:
            break
    assert [int(p.max()) for p in pulls_at_phase_end] == [16, 21, 31]
    assert pulls_at_phase_end[0].tolist() == [16, 16, 16, 16]
    assert int(agent.alive[0].sum()) == 1 and action[1:].tolist() == [1, 0, 0, 0]  # arm 0 (0.9) survives


def test_ucbe_best_arm_pulls_each_arm_once_then_its_index() -> None:
    agent = UCBEBestArm(a=2.0, tie_break="index")
    actions = drive(agent, [([1, 0, 0], [1, 0, 0]), ([1, 1, 1], [1, 0, 1]), ([2, 1, 1], [1, 0, 1])])
    assert [int(a[0]) for a in actions] == [1, 0, 2]  # unpulled first; then 1 + sqrt(2) ties, smallest index
    assert actions[-1][1:].tolist() == [0, 0, 1]  # the largest empirical mean


def test_lucb_samples_h_then_l_and_stops_when_they_separate() -> None:
    agent = LUCB(delta=0.05)
    # mu = (.8, .5, .2), 10 pulls each: High = {0}, h = 0, l = 1 (largest UCB outside), intervals overlap
    actions = drive(agent, [([10, 10, 10], [8, 5, 2]), ([11, 10, 10], [9, 5, 2])])
    assert [int(a[0]) for a in actions] == [0, 1]  # h_t, then l_t at the next step
    stopped = drive(LUCB(delta=0.05), [([20000] * 3, [16000, 10000, 4000])], budget=100_000)[0]
    assert stopped.tolist() == [3, 1, 0, 0]  # UCB_1 - LCB_0 < 0: stop with High = {0}


def test_sar_accepts_and_rejects_to_the_m_best() -> None:
    venv = gym.make_vec("BestArmIdentification-v0", num_envs=50, vectorization_mode="vector_entry_point",
                        means=[0.9, 0.1, 0.8, 0.2, 0.7], m=3, budget=500)
    result = play_vector(venv, SAR(), seed=0)
    assert result["error"].mean() == 0.0 and result["invalid"].max() == 0.0  # gaps of 0.5: always {0, 2, 4}
    with pytest.raises(ValueError, match="use SAR"):
        play_vector(venv, SuccessiveRejects(), seed=0)


def test_env_warns_when_the_m_best_set_is_not_unique() -> None:
    with pytest.warns(UserWarning, match="not unique"):
        gym.make("BestArmIdentification-Audibert2010Problem4-v0", m=3)


def test_agents_play_custom_bounded_arms() -> None:
    # beta / uniform / triangular arms with means 0.8, 0.29, 0.4, 0.5: the compiled agents read only the
    # statistics, so they play them unchanged; UGapEc finds the best arm and stops, SR mostly answers it
    from scipy import stats

    arms = [stats.beta(8, 2), stats.beta(2, 5), stats.uniform(0, 0.8), stats.triang(0.5, 0, 1)]
    env = gym.make_vec("BestArmIdentification-v0", num_envs=200, vectorization_mode="vector_entry_point",
                       distributions=arms, budget=200000, setting="fixed_confidence")
    result = play_vector(env, UGapEc(delta=0.1), seed=0)
    assert result["error"].sum() == 0 and 4 < result["pulls"].max() < 200000
    env = gym.make_vec("BestArmIdentification-v0", num_envs=200, vectorization_mode="vector_entry_point",
                       distributions=arms, budget=400)
    assert play_vector(env, SuccessiveRejects(), seed=0)["error"].mean() < 0.05
