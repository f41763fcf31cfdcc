"""chen2017's top-K env, its hardness, the batched allocation path, and AdaptiveTopK."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from scipy import stats

import bandit_gym  # noqa: F401
from bandit_gym import metrics
from bandit_gym.agents import AdaptiveTopK, SuccessiveRejects, Uniform
from bandit_gym.instances import chen2017_means
from bandit_gym.rollout import play_batched, play_compiled, play_episode, play_vector
from tests.conftest import AGENTS


def test_aggregate_regret_and_failure_by_hand() -> None:
    means = [0.9, 0.8, 0.5, 0.1]
    assert metrics.top_k_regret([[1, 1, 0, 0], [1, 0, 1, 0], [1, 0, 0, 0]], means, 2).tolist() == \
        pytest.approx([0.0, 0.15, 0.55])  # the last holds one arm: the worst set, (1.7 - 0.6) / 2
    assert metrics.top_k_error([1, 0, 1, 0], means, 2, 0.1) == 1
    assert metrics.top_k_error([1, 0, 1, 0], means, 2, 0.15 + 1e-9) == 0


def test_hardness_by_hand() -> None:
    # theta = (.9, .52, .51 | .49, .48, .1), K = 3: Delta = (.41, .03, .02, .02, .03, .41). With epsilon = 0.05
    # (K epsilon = .15): t = 1 (Delta_2 * 1 = .03 and Delta_5 * 1 = .03 <= .15; t = 2 fails: Delta_1 * 2 = .82);
    # Psi = max(.05, min(.03, .03)) = .05; H = 2 / .41^2 + 4 / .05^2
    t, h = metrics.top_k_hardness([0.48, 0.9, 0.1, 0.51, 0.52, 0.49], 3, 0.05)
    assert t == 1 and h == pytest.approx(2 / 0.41**2 + 4 / 0.05**2)
    assert metrics.top_k_hardness([0.9, 0.8, 0.5, 0.1], 2, 0.1) == (0, pytest.approx(1 / 0.16 + 2 / 0.09 + 1 / 0.49))
    # TwoGroup, n = 1000: t grows with K (0.4 t <= K epsilon), so H shrinks
    assert metrics.top_k_hardness(chen2017_means("TwoGroup", 1000, 100), 100, 0.01)[0] == 2
    assert metrics.top_k_hardness(chen2017_means("TwoGroup", 1000, 500), 500, 0.01)[0] == 12


def test_datasets() -> None:
    np.testing.assert_allclose(chen2017_means("Uniform", 1000, 250), 1 - np.arange(1, 1001) / 1000)
    for name in ("Synthetic0.5", "Synthetic6"):
        theta = chen2017_means(name, 1000, 100)
        assert np.all(np.diff(theta) <= 0) and theta[99] == pytest.approx(0.9) and theta[-1] == 0.0
    assert np.sum(chen2017_means("TwoGroup", 1000, 100) == 0.7) == 100
    with pytest.raises(ValueError, match="dataset='Gauss' is unknown"):
        chen2017_means("Gauss")


def test_env_shuffles_arms_per_episode_and_scores_the_answer() -> None:
    env = gym.make("TopKIdentification-Chen2017TwoGroupK100-v0", budget=10)
    obs, _ = env.reset(seed=0)
    assert obs["m"][0] == 100 and obs["delta"][0] == pytest.approx(0.01) and obs["epsilon"][0] == pytest.approx(0.01)
    first = env.unwrapped.engine.means[0].copy()
    env.reset(seed=1)
    second = env.unwrapped.engine.means[0]
    assert not np.array_equal(first, second) and np.array_equal(np.sort(first), np.sort(second))
    answer = (second == 0.7).astype(np.int64)  # the true top 100
    answer[np.flatnonzero(second == 0.7)[:3]] = 0
    answer[np.flatnonzero(second == 0.3)[:3]] = 1  # three swaps: R = 3 * 0.4 / 100 = 0.012 > 0.01
    env.unwrapped.allocate(np.r_[np.full(10, 1), np.zeros(990, dtype=np.int64)])
    *_, info = env.step(np.r_[0, answer])
    assert info["invalid_answer"] == 0


LAST_FOUR = np.r_[np.full(36, 0.45), np.full(4, 0.55)]  # 40 arms, the best 4 last (gap 0.1), unshuffled


@pytest.mark.parametrize(("name", "env_id", "kwargs"), [
    ("Uniform", "TopKIdentification-v0", {}),
    ("AdaptiveTopK", "TopKIdentification-v0", {"budget": 30000}),
    ("AdaptiveTopK", "TopKIdentification-v0", {"means": 0.9 - 0.05 * np.arange(12), "k": 3, "epsilon": 0.1,
                                               "budget": 10**6, "setting": "fixed_confidence"}),
    ("OptMAI", "TopKIdentification-v0", {"k": 3, "budget": 5000}),
    # many ties, unshuffled, random tie orders: OptMAI eliminates on 2 samples per arm; AdaptiveTopK's round 2 is
    # cut by the budget (in the copy's arm order)
    ("OptMAI", "TopKIdentification-v0", {"means": LAST_FOUR, "k": 4, "budget": 1000, "shuffle": False}),
    ("AdaptiveTopK", "TopKIdentification-v0", {"means": LAST_FOUR, "k": 4, "budget": 2000, "shuffle": False}),
    ("SuccessiveRejects", "BestArmIdentification-Audibert2010Problem4-v0", {}),
    ("SAR", "BestArmIdentification-Audibert2010Problem5-v0", {"m": 2, "epsilon": 0.05}),
])
def test_batched_pulls_equal_single_pulls_bit_for_bit(name: str, env_id: str, kwargs: dict) -> None:
    # with common random numbers both paths draw the same samples: the same pulls give the same results
    params = {"form": "pac"} if kwargs.get("setting") == "fixed_confidence" else {}
    venv = gym.make_vec(env_id, num_envs=12, vectorization_mode="vector_entry_point", common_random_numbers=True,
                        **kwargs)
    batched = play_batched(venv, AGENTS[name](**params), seed=4)
    single = play_vector(venv, AGENTS[name](**params), seed=4)
    assert batched is not None
    for key in ("regret", "error", "pulls"):
        np.testing.assert_array_equal(batched[key], single[key], err_msg=key)


@pytest.mark.slow
@pytest.mark.parametrize("agent", [Uniform, SuccessiveRejects, AdaptiveTopK])
def test_batched_pulls_and_single_pulls_agree_in_distribution(agent: type) -> None:
    # without common random numbers a batch draws exact binomial sums: 3000 runs each way, same regret law
    # (12 arms, means 0.9 - 0.05 i, K = 3; AdaptiveTopK completes two rounds and part of a third)
    env_id, kwargs = (("BestArmIdentification-Audibert2010Problem4-v0", {"budget": 300}) if agent is SuccessiveRejects
                      else ("TopKIdentification-v0", {"means": 0.9 - 0.05 * np.arange(12), "k": 3, "budget": 6000}))
    venv = gym.make_vec(env_id, num_envs=3000, vectorization_mode="vector_entry_point", **kwargs)
    batched = play_batched(venv, agent(), seed=1)["regret"]
    single = play_vector(venv, agent(), seed=2)["regret"]
    assert stats.ks_2samp(batched, single).pvalue > 0.001
    assert abs(batched.mean() - single.mean()) < 4 * np.sqrt(batched.var() / 3000 + single.var() / 3000) + 1e-12


def test_adaptive_top_k_accepts_and_rejects_by_hand() -> None:
    from bandit_gym.agents.top_k.adaptive_top_k import accept_reject

    theta = np.array([[0.9, 0.8, 0.5, 0.2, 0.1]])
    # K = 2, threshold .25: theta_b = .8, theta_a = .5 (k' = 2): gaps top .4, bottom .7 -> reject arm 4; then
    # bottom .6 -> reject arm 3; then top .4 > bottom .3 -> accept arm 0; now k' = 1, theta_b = .8, theta_a = .5:
    # top .3 ties bottom .3 -> the smaller index, arm 1, accepted; k' = 0 ends the loop
    status = np.zeros((1, 5), dtype=np.int8)
    accept_reject(theta, status, np.array([0]), 2, np.array([0.25]))
    assert status[0].tolist() == [1, 1, 0, 2, 2]
    # threshold .35: the same three removals, then max(.3, .3) <= .35 ends the round with arms 1, 2 in S
    status = np.zeros((1, 5), dtype=np.int8)
    accept_reject(theta, status, np.array([0]), 2, np.array([0.35]))
    assert status[0].tolist() == [1, 0, 0, 2, 2]
    # an accepted arm counts: with arm 0 accepted and K = 2, k' = 1 among arms 1..4 (theta_b = .8, theta_a
    # = .5): reject 4 (.7), reject 3 (.6), then .3 ties .3: accept arm 1; k' = 0 ends it (arm 2 is left to the
    # guard of the caller)
    status = np.array([[1, 0, 0, 0, 0]], dtype=np.int8)
    accept_reject(theta, status, np.array([0]), 2, np.array([0.25]))
    assert status[0].tolist() == [1, 1, 0, 2, 2]
    # ties at the bottom go to the smallest index, removal after removal: arms 0, 1, 6 at .1 and arm 5 at .9,
    # K = 1, threshold .5 (theta_b = .9, theta_a = .1): the top gap .8 ties the bottom gap .8, arm 0 < arm 5:
    # reject 0; then again 1 < 5: reject 1; then 5 < 6: accept 5 and k' = 0 ends it (arm 6 left in S)
    theta = np.array([[0.1, 0.1, 0.5, 0.5, 0.5, 0.9, 0.1]])
    status = np.array([[0, 0, 2, 2, 2, 0, 0]], dtype=np.int8)
    accept_reject(theta, status, np.array([0]), 1, np.array([0.5]))
    assert status[0].tolist() == [2, 2, 2, 2, 2, 1, 0]


def test_adaptive_top_k_rounds_and_guards() -> None:
    # n = 4, K = 2: round 1 pulls every arm m_1 = ceil(4 ln(2 * 4 / 0.5)) = 12 times; means 1, 1, 0, 0 clear
    # the threshold 2 * 2^-1 = 1? No: Delta~ = 1 <= 1, so round 2 (m_2 = ceil(16 ln(32 / 0.5)) = 67 more)
    from bandit_gym.agents.top_k.adaptive_top_k import round_size

    assert round_size(1, 4, 0.5) == 12 and round_size(2, 4, 0.5) == 67
    env = gym.make("TopKIdentification-v0", means=[1.0, 1.0, 0.0, 0.0], k=2, budget=1000, shuffle=False)
    agent = AdaptiveTopK(delta=0.5)
    agent.reset(seed=0)
    obs, _ = env.reset(seed=0)
    assert agent.batch_pulls(obs).tolist() == [12] * 4
    obs = env.unwrapped.allocate(np.full(4, 12))
    assert agent.batch_pulls(obs).tolist() == [67] * 4  # nothing decided at 2 2^-1 = 1
    obs = env.unwrapped.allocate(np.full(4, 67))
    assert agent.batch_pulls(obs).tolist() == [0] * 4  # gaps 1 > 0.5: all decided, the guard ends it
    action = agent.act(obs)
    assert action[0] == 4 and action[1:].tolist() == [1, 1, 0, 0]  # stop, with budget left unused


def clucb_by_definition(counts: np.ndarray, sums: np.ndarray, k: int, epsilon: float, delta: float,
                        r: float = 0.5) -> tuple[int, list[int]]:
    """CLUCB-PAC's step written straight from Chen et al. 2014's PAC rule (sorting, no selection tricks)."""
    n, t = len(counts), counts.sum()
    mean = sums / counts
    top = set(np.argsort(-mean, kind="stable")[:k].tolist())
    rad = r * np.sqrt(2 * np.log(4 * n * t**3 / delta) / counts)
    tilde = np.array([mean[e] - rad[e] if e in top else mean[e] + rad[e] for e in range(n)])
    top_tilde = set(np.argsort(-tilde, kind="stable")[:k].tolist())
    if tilde[list(top_tilde)].sum() - tilde[list(top)].sum() <= k * epsilon:
        return n, sorted(top)
    candidates = sorted(top ^ top_tilde)
    return max(candidates, key=lambda e: (rad[e], -e)), sorted(top)


def test_clucb_pac_matches_its_definition_on_random_statistics() -> None:
    from bandit_gym.agents import CLUCBPAC

    rng = np.random.default_rng(0)
    stops = 0
    for _ in range(200):
        n, k = 6, int(rng.integers(1, 4))
        counts = (rng.integers(1, 40, size=n) * rng.choice([1, 3000])).astype(np.float32)  # large counts can stop
        sums = np.floor(rng.random(n) * (counts + 1)).astype(np.float32)
        epsilon = float(rng.choice([0.0, 0.05, 0.3]))
        obs = {"m": np.array([k], np.float32), "epsilon": np.array([epsilon], np.float32),
               "delta": np.array([0.1], np.float32), "budget_left": np.array([10**6], np.float32),
               "last_arm": np.array([-1.0], np.float32), "last_value": np.zeros(1, np.float32),
               "counts": counts, "sums": sums, "means": sums / counts}
        agent = CLUCBPAC(tie_break="index")
        agent.reset(seed=0)
        agent.act({**obs, "counts": np.zeros(n, np.float32), "sums": np.zeros(n, np.float32),
                   "budget_left": np.array([10**6 + counts.sum()], np.float32)})  # the episode starts
        action = agent.act({**obs, "last_arm": np.array([0.0], np.float32)})
        arm, top = clucb_by_definition(counts.astype(np.float64), sums.astype(np.float64), k,
                                       float(np.float32(epsilon)), float(np.float32(0.1)))
        assert int(action[0]) == arm and np.flatnonzero(action[1:]).tolist() == top
        stops += arm == n
    assert 0 < stops < 200  # both branches were exercised


def test_opt_mai_eliminates_a_quarter_per_round_down_to_4k_then_accepts_and_rejects() -> None:
    from bandit_gym.agents import OptMAI

    # n = 40, K = 3: quantile elimination keeps 30, 23, 18, 14, then max(ceil(0.75 * 14), 4K) = 12 arms;
    # round r gives each arm floor(0.1 * 0.9^r * Q / |S|) pulls
    means = np.linspace(0.9, 0.1, 40)
    env = gym.make("TopKIdentification-v0", means=means, k=3, budget=40000, shuffle=False)
    agent = OptMAI()
    agent.reset(seed=0)
    obs, _ = env.reset(seed=0)
    sizes, shares = [], []
    while True:
        pulls = agent.batch_pulls(obs)
        if not pulls.any():
            break
        if agent.stage[0] == 0:
            sizes.append(int((pulls > 0).sum()))
            shares.append(int(pulls.max()))
        obs = env.unwrapped.allocate(pulls)
    assert sizes == [40, 30, 23, 18, 14]
    assert shares == [100, 120, 140, 162, 187]  # floor(0.1 0.9^r 40000 / |S|)
    action = agent.act(obs)
    assert action[1:].sum() == 3 and action[1:4].tolist() == [1, 1, 1]  # the three best arms
    assert obs["counts"].sum() <= 40000


def test_adaptive_top_k_pac_failure_rate_is_below_delta() -> None:
    # 12 arms 0.9 - 0.05 i, K = 3, epsilon = 0.05, delta = 0.1, the PAC form (fixed confidence): 500 runs
    venv = gym.make_vec("TopKIdentification-v0", num_envs=500, vectorization_mode="vector_entry_point",
                        means=0.9 - 0.05 * np.arange(12), k=3, epsilon=0.05, delta=0.1, budget=10**7,
                        setting="fixed_confidence")
    result = play_batched(venv, AdaptiveTopK(form="pac"), seed=0)
    failures = int(result["error"].sum())
    assert stats.binomtest(failures, 500, 0.1, alternative="less").pvalue < 0.05  # 95% upper bound below delta
    assert result["pulls"].max() < 10**7 and result["invalid"].sum() == 0  # every run stopped by itself


def sar_removal_by_sorting(m: int, alive: np.ndarray, accepted: np.ndarray, mean: np.ndarray) -> None:
    """SAR's removal written with a full sort (the accept-reject loop body, ties: smaller index first)."""
    ranked = np.where(alive == 1.0, mean, -np.inf)
    order = np.argsort(-ranked, kind="stable")
    active, left = int(alive.sum()), m - int(accepted.sum())
    kth, after = ranked[order[max(left - 1, 0)]], ranked[order[min(left, len(mean) - 1)]]
    gaps = [ranked[order[p]] - after if p < left else kth - ranked[order[p]] for p in range(active)]
    pick = active - 1 if left <= 0 else 0 if left >= active else int(np.argmax(gaps))
    alive[order[pick]] = 0.0
    if pick < left:
        accepted[order[pick]] = 1.0
    if alive.sum() == 1 and accepted.sum() < m:
        accepted[alive == 1.0] = 1.0


def test_sar_removal_in_linear_time_matches_the_sorted_definition() -> None:
    # the O(K) removal (two order statistics and a pass) against the sort, on 20000 random cases, half with ties
    from bandit_gym.agents.best_arm._kernels import WORK_ROWS
    from bandit_gym.agents.ranking import accept_or_reject

    rng = np.random.default_rng(0)
    for trial in range(20000):
        k = int(rng.integers(2, 12))
        m = int(rng.integers(1, k))
        mean = rng.integers(0, 4, size=k) / 4.0 if trial % 2 else rng.random(k)
        status = rng.integers(0, 3, size=k)  # 0 active, 1 accepted, 2 rejected
        status[status == 1] = np.where(np.cumsum(status == 1)[status == 1] > m, 2, 1)
        status[0] = 0 if not (status == 0).any() else status[0]
        alive, accepted = (status == 0).astype(float), (status == 1).astype(float)
        expected_alive, expected_accepted = alive.copy(), accepted.copy()
        sar_removal_by_sorting(m, expected_alive, expected_accepted, mean)
        accept_or_reject(m, alive, accepted, mean, np.zeros((WORK_ROWS, k)))
        assert alive.tolist() == expected_alive.tolist(), trial
        assert accepted.tolist() == expected_accepted.tolist(), trial


CLUCB_CASES = [
    ("TopKIdentification-v0", {"budget": 3000}),  # 100 arms, K = 10
    ("TopKIdentification-Chen2017TwoGroupK100-v0", {"budget": 12000}),  # 1000 arms, many tied statistics
    ("TopKIdentification-v0", {"means": 0.9 - 0.1 * np.arange(8), "k": 2, "epsilon": 0.05, "budget": 30000}),
]


@pytest.mark.parametrize(("env_id", "kwargs"), CLUCB_CASES)
def test_clucb_rollout_kernel_equals_the_rule_bit_for_bit(env_id: str, kwargs: dict,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    # the whole-episode kernel (M by swaps, M~ by a split key in a window) against the rule run pull by pull;
    # answers at three checkpoints, pulls; the last case stops before its budget
    from bandit_gym.agents import CLUCBPAC
    from bandit_gym.agents.best_arm._base import BestArmAgent

    venv = gym.make_vec(env_id, num_envs=6, vectorization_mode="vector_entry_point", common_random_numbers=True,
                        **kwargs)
    budgets = [kwargs["budget"] // 3, kwargs["budget"] // 2, kwargs["budget"]]
    fast = play_compiled(venv, CLUCBPAC(), seed=3, budgets=budgets)
    monkeypatch.setattr(CLUCBPAC, "compiled_rollout", BestArmAgent.compiled_rollout)
    rule = play_compiled(venv, CLUCBPAC(), seed=3, budgets=budgets)
    assert fast is not None and rule is not None
    for key in ("regret", "error", "invalid", "pulls", "anytime_regret", "anytime_error"):
        np.testing.assert_array_equal(fast[key], rule[key], err_msg=key)
    if "means" in kwargs:
        assert (fast["pulls"] < kwargs["budget"]).all() and fast["error"].sum() == 0  # the PAC stop fired
    else:
        assert fast["regret"].min() > 0 and (fast["pulls"] == kwargs["budget"]).all()


def test_clucb_rollout_equals_the_vector_env_step_by_step() -> None:
    from bandit_gym.agents import CLUCBPAC

    venv = gym.make_vec("TopKIdentification-v0", num_envs=5, vectorization_mode="vector_entry_point",
                        common_random_numbers=True, budget=1500)
    fast = play_compiled(venv, CLUCBPAC(), seed=8)
    stepped = play_vector(venv, CLUCBPAC(), seed=8)
    assert fast is not None
    for key in ("regret", "error", "invalid", "pulls"):
        np.testing.assert_array_equal(fast[key], stepped[key], err_msg=key)


def test_compiled_rollout_without_common_random_numbers_agrees_in_distribution() -> None:
    # fresh per-copy streams (compiled) against the vector env's bulk draws (step by step): 2000 runs each way
    from bandit_gym.agents import CLUCBPAC

    kwargs = {"means": 0.9 - 0.05 * np.arange(12), "k": 3, "budget": 400, "common_random_numbers": False}
    venv = gym.make_vec("TopKIdentification-v0", num_envs=2000, vectorization_mode="vector_entry_point", **kwargs)
    compiled = play_compiled(venv, CLUCBPAC(), seed=1)
    stepped = play_vector(venv, CLUCBPAC(), seed=2)
    assert compiled is not None
    a, b = compiled["regret"], stepped["regret"]
    assert stats.ks_2samp(a, b).pvalue > 0.001
    assert abs(a.mean() - b.mean()) < 4 * np.sqrt(a.var() / a.size + b.var() / b.size)
    assert a.mean() > 0.0  # a budget where answers differ


def test_anytime_cells_score_one_episode_at_every_budget() -> None:
    # CLUCB-PAC never reads the budget: one episode per run, scored at each budget, gives with common random
    # numbers exactly what one run per budget gives; batched agents (Uniform) keep one cell per budget
    from bandit_gym.experiments import AgentSpec, Cell, ExperimentSpec, expand, run_cell

    spec = ExperimentSpec(env="TopKIdentification-v0", agents=(AgentSpec("CLUCBPAC"), AgentSpec("Uniform")),
                          budgets=(500, 1200, 3000), runs=6, seed=5)
    cells = expand(spec)
    assert [c.budget for c in cells if c.agent == 0] == [None]
    assert [c.budget for c in cells if c.agent == 1] == [500, 1200, 3000]
    anytime = run_cell(spec, Cell(0, None, 0))
    for j, budget in enumerate(spec.budgets):
        alone = run_cell(spec, Cell(0, budget, 0))
        for metric in ("regret", "error", "pulls"):
            np.testing.assert_array_equal(anytime[metric][:, j], alone[metric][:, 0], err_msg=f"{metric} {budget}")


def test_anytime_wrapper_scores_top_k_answers_step_by_step() -> None:
    # Gaussian arms (no compiled rollout): the vector env step by step with the anytime wrapper, against one run
    # per budget; with common random numbers CLUCB-PAC's answers after b pulls are the same
    from bandit_gym.agents import CLUCBPAC

    kwargs = {"means": 0.9 - 0.05 * np.arange(12), "k": 3, "arm_distribution": "gaussian", "sigma": 0.5,
              "common_random_numbers": True}
    venv = gym.make_vec("TopKIdentification-v0", num_envs=8, vectorization_mode="vector_entry_point", budget=600,
                        **kwargs)
    anytime = play_vector(venv, CLUCBPAC(), seed=2, budgets=[100, 300, 600])
    assert play_compiled(venv, CLUCBPAC(), seed=2) is None
    for j, budget in enumerate([100, 300, 600]):
        alone = gym.make_vec("TopKIdentification-v0", num_envs=8, vectorization_mode="vector_entry_point",
                             budget=budget, **kwargs)
        result = play_vector(alone, CLUCBPAC(), seed=2)
        np.testing.assert_array_equal(anytime["anytime_regret"][:, j], result["regret"], err_msg=str(budget))
        np.testing.assert_array_equal(anytime["anytime_error"][:, j], result["error"], err_msg=str(budget))
    assert anytime["anytime_regret"][:, 0].mean() > anytime["anytime_regret"][:, 2].mean()


def test_opt_mai_goes_through_long_runs_of_empty_phases() -> None:
    # n = 1000, K = 250: no quantile elimination, SAR on all arms with Q = 30,000: hundreds of phases in a row
    # have length n_k - n_{k-1} = 0 and are decided on the same samples; the agent must go on to the phases that
    # pull (it once stopped after 128 empty phases, with 5,000 of the 30,000 pulls made)
    from bandit_gym.agents import OptMAI

    venv = gym.make_vec("TopKIdentification-Chen2017UniformK250-v0", num_envs=4, budget=30000,
                        vectorization_mode="vector_entry_point")
    batched = play_batched(venv, OptMAI(), seed=0)
    assert batched is not None and batched["pulls"].min() > 25000


def test_adaptive_top_k_round_sizes_by_hand() -> None:
    # n = 1000, delta = 0.01: ln(2 n r^2 / delta) = ln(2e5) = 12.206 (r = 1), ln(8e5) = 13.592 (r = 2),
    # ln(1.8e6) = 14.403 (r = 3); printed: 4 x 12.206 = 48.8, 16 x 13.592 = 217.5, 64 x 14.403 = 921.8
    from bandit_gym.agents.top_k.adaptive_top_k import round_size

    r = np.array([1, 2, 3])
    assert round_size(r, 1000, 0.01).tolist() == [49, 218, 922]
    assert round_size(r, 1000, 0.01, 1 / 16).tolist() == [4, 14, 58]  # 3.05, 13.59, 57.6
    assert round_size(r, 1000, 0.01, 1 / 64).tolist() == [1, 4, 15]  # 0.76, 3.40, 14.4
    # log-free: ceil(scale 4^(r-1)), whatever n and delta
    r = np.arange(1, 6)
    assert round_size(r, 1000, 0.01, 1.0, "log-free").tolist() == [1, 4, 16, 64, 256]
    assert round_size(r, 10, 0.5, 1 / 2, "log-free").tolist() == [1, 2, 8, 32, 128]
    assert round_size(r, 1000, 0.01, 1 / 32, "log-free").tolist() == [1, 1, 1, 2, 8]


def test_adaptive_top_k_pools_by_default_only_when_the_rounds_are_shortened() -> None:
    assert not AdaptiveTopK().pools and AdaptiveTopK().params()["pooled"] is None
    assert AdaptiveTopK(scale=0.5).pools and AdaptiveTopK(schedule="log-free").pools
    assert AdaptiveTopK(schedule="log-free", scale=4.0).pools  # log-free pools at any scale
    assert not AdaptiveTopK(scale=2.0).pools  # longer printed rounds: fresh
    assert not AdaptiveTopK(scale=0.5, pooled=False).pools and AdaptiveTopK(pooled=True).pools
    assert AdaptiveTopK(schedule="log-free", scale=0.25).params()["schedule"] == "log-free"
    with pytest.raises(ValueError, match="schedule"):
        AdaptiveTopK(schedule="short")
    with pytest.raises(TypeError, match="pooled"):
        AdaptiveTopK(pooled="yes")  # type: ignore[arg-type]


def inner_loop_by_definition(theta: np.ndarray, status: np.ndarray, k: int, threshold: float) -> list[int]:
    """chen2017 Algorithm 1's inner loop by its definition (theta~_a / theta~_b recomputed after each removal,
    ties: the smallest index), with the guards; returns the new status."""
    status = status.copy()
    while True:
        alive = [i for i in range(len(theta)) if status[i] == 0]
        left = k - int((status == 1).sum())
        if left <= 0 or len(alive) <= left:
            return status.tolist()
        ranked = sorted(alive, key=lambda i: (-theta[i], i))
        theta_b, theta_a = theta[ranked[left - 1]], theta[ranked[left]]
        gaps = {i: max(theta[i] - theta_a, theta_b - theta[i]) for i in alive}
        if max(gaps.values()) <= threshold:
            return status.tolist()
        x = min(i for i in alive if gaps[i] == max(gaps.values()))
        status[x] = 1 if theta[x] > theta_a else 2


def test_adaptive_top_k_pooled_and_fresh_means_by_hand() -> None:
    # log-free, scale 1: rounds of 1 and 4 pulls; after round 2 (threshold 2 2^-2 = 1/2) the pooled means are
    # over 5 samples, the fresh ones over the round's 4. Seed 11 draws sums [1, 1, 0, 0, 0, 1] in round 1 and
    # [5, 5, 1, 2, 1, 2] after round 2: pooled theta~ = [1, 1, .2, .4, .2, .4] rejects arms 2 and 4 (gap .8), then
    # accepts 0 and 1 (gap .6, ties to the top's smaller index); fresh theta~ = [1, 1, .25, .5, .25, .25] rejects
    # 2, 4, 5 (gap .75) and stops at gaps .5 <= .5.
    env = gym.make("TopKIdentification-v0", means=[0.8, 0.7, 0.6, 0.5, 0.4, 0.3], k=2, budget=10**5,
                   shuffle=False)
    statuses = {}
    for pooled in (None, True, False):
        agent = AdaptiveTopK(schedule="log-free", pooled=pooled, tie_break="index")  # the definition's ties
        agent.reset(seed=0)
        obs, _ = env.reset(seed=11)
        assert agent.batch_pulls(obs).tolist() == [1] * 6
        first = {key: value.copy() for key, value in env.unwrapped.allocate(np.ones(6, np.int64)).items()}
        assert agent.batch_pulls(first).tolist() == [4] * 6  # threshold 1 decides nothing
        second = {key: value.copy() for key, value in env.unwrapped.allocate(np.full(6, 4)).items()}
        agent.batch_pulls(second)
        statuses[pooled] = agent.status[0].tolist()
        counts = second["counts"] - (0 if agent.pools else first["counts"])
        sums = second["sums"] - (0 if agent.pools else first["sums"])
        assert statuses[pooled] == inner_loop_by_definition(sums / counts, np.zeros(6, np.int8), 2, 0.5)
    assert first["sums"].tolist() == [1, 1, 0, 0, 0, 1] and second["sums"].tolist() == [5, 5, 1, 2, 1, 2]
    assert statuses[None] == statuses[True] == [1, 1, 2, 0, 2, 0]  # log-free pools by default
    assert statuses[False] == [0, 0, 2, 0, 2, 2]


def test_adaptive_top_k_log_free_plays_the_same_batched_and_pull_by_pull() -> None:
    venv = gym.make_vec("TopKIdentification-v0", num_envs=4, vectorization_mode="vector_entry_point",
                        common_random_numbers=True, budget=3000)
    for agent in (AdaptiveTopK(schedule="log-free", scale=0.5), AdaptiveTopK(scale=1 / 64)):
        batched = play_batched(venv, agent, seed=4)
        single = play_vector(venv, type(agent)(**agent.params()), seed=4)  # type: ignore[arg-type]
        assert batched is not None
        for key in ("regret", "error", "pulls"):
            np.testing.assert_array_equal(batched[key], single[key], err_msg=f"{agent} {key}")


def test_clucb_pac_epsilon_sum_reading_stops_at_epsilon() -> None:
    # epsilon_sum = "epsilon": the stop is w~(M~) - w~(M) <= epsilon instead of K epsilon, pull by pull (the
    # rule) and in whole episodes (the kernel); the allocations are the same until one of them stops
    from bandit_gym.agents import CLUCBPAC

    rng = np.random.default_rng(1)
    stops = 0
    for _ in range(200):
        n, k = 6, int(rng.integers(1, 4))
        counts = (rng.integers(1, 40, size=n) * rng.choice([1, 3000])).astype(np.float32)
        sums = np.floor(rng.random(n) * (counts + 1)).astype(np.float32)
        epsilon = float(rng.choice([0.05, 0.3]))
        obs = {"m": np.array([k], np.float32), "epsilon": np.array([epsilon], np.float32),
               "delta": np.array([0.1], np.float32), "budget_left": np.array([10**6], np.float32),
               "last_arm": np.array([-1.0], np.float32), "last_value": np.zeros(1, np.float32),
               "counts": counts, "sums": sums, "means": sums / counts}
        agent = CLUCBPAC(epsilon_sum="epsilon", tie_break="index")
        agent.reset(seed=0)
        agent.act({**obs, "counts": np.zeros(n, np.float32), "sums": np.zeros(n, np.float32),
                   "budget_left": np.array([10**6 + counts.sum()], np.float32)})
        action = agent.act({**obs, "last_arm": np.array([0.0], np.float32)})
        arm, top = clucb_by_definition(counts.astype(np.float64), sums.astype(np.float64), k,
                                       float(np.float32(epsilon)) / k, float(np.float32(0.1)))
        assert int(action[0]) == arm and np.flatnonzero(action[1:]).tolist() == top
        stops += arm == n
    assert 0 < stops < 200
    with pytest.raises(ValueError, match="epsilon_sum"):
        CLUCBPAC(epsilon_sum="sum")
    kwargs = {"means": 0.9 - 0.1 * np.arange(8), "k": 2, "epsilon": 0.05, "budget": 30000}
    venv = gym.make_vec("TopKIdentification-v0", num_envs=5, vectorization_mode="vector_entry_point",
                        common_random_numbers=True, **kwargs)
    fast = play_compiled(venv, CLUCBPAC(epsilon_sum="epsilon"), seed=8)
    stepped = play_vector(venv, CLUCBPAC(epsilon_sum="epsilon"), seed=8)
    default = play_compiled(venv, CLUCBPAC(), seed=8)
    assert fast is not None and default is not None
    for key in ("regret", "error", "invalid", "pulls"):
        np.testing.assert_array_equal(fast[key], stepped[key], err_msg=key)
    assert (default["pulls"] < fast["pulls"]).all() and (fast["pulls"] < 30000).all()  # a later stop


# ------------------------------------------------------------------------------------------------------------------
# OptMAI and AdaptiveTopK: ties at random (a relabelling of the arms per copy and episode), or by index
# (agent, params, budget): the regrets (8 copies, seed 3) and pulls, and the answers of 4 episodes (seeds 0-3), as
# the agents gave them before ties went random; tie_break="index" must keep every one of them
INDEX_TIE_NUMBERS = [
    ("OptMAI", {}, 1000,
     [0.10000000000000003, 0.07500000000000007, 0.07500000000000007, 0.10000000000000003, 0.050000000000000044,
      0.07500000000000001, 0.10000000000000003, 0.10000000000000003], [912, 912, 912, 990, 990, 990, 990, 990],
     [[1, 15, 36, 39], [3, 12, 19, 36], [0, 14, 21, 39], [16, 19, 38, 39]]),
    ("OptMAI", {}, 300,  # shares of 0 pulls: elimination on zero samples keeps the smallest indices
     [0.10000000000000003] * 8, [267, 295, 295, 267, 295, 295, 190, 267],
     [[2, 3, 13, 20], [2, 4, 5, 7], [2, 3, 12, 19], [1, 8, 12, 16]]),
    ("AdaptiveTopK", {}, 2000,  # round 2 cut by the budget
     [0.10000000000000003, 0.025000000000000022, 0.07500000000000007, 0.050000000000000044, 0.050000000000000044,
      0.10000000000000003, 0.050000000000000044, 0.050000000000000044], [2000] * 8,
     [[15, 21, 37, 39], [30, 37, 38, 39], [20, 31, 37, 38], [0, 8, 25, 36]]),
    ("AdaptiveTopK", {"schedule": "log-free", "scale": 0.5}, 1000,
     [0.10000000000000003, 0.050000000000000044, 0.07500000000000007, 0.07500000000000007, 0.050000000000000044,
      0.07500000000000007, 0.07500000000000007, 0.050000000000000044], [1000] * 8,
     [[21, 24, 31, 39], [7, 13, 25, 39], [8, 18, 23, 37], [26, 35, 36, 38]]),
]


@pytest.mark.parametrize(("name", "params", "budget", "regret", "pulls", "answers"), INDEX_TIE_NUMBERS)
def test_round_agents_with_index_ties_give_the_numbers_of_the_smallest_index_rule(
        name: str, params: dict, budget: int, regret: list, pulls: list, answers: list) -> None:
    venv = gym.make_vec("TopKIdentification-v0", num_envs=8, vectorization_mode="vector_entry_point",
                        common_random_numbers=True, means=LAST_FOUR, k=4, budget=budget, shuffle=False)
    batched = play_batched(venv, AGENTS[name](**params, tie_break="index"), seed=3)
    single = play_vector(venv, AGENTS[name](**params, tie_break="index"), seed=3)
    assert batched is not None
    for result in (batched, single):
        assert result["regret"].tolist() == regret and result["pulls"].tolist() == pulls
    env = gym.make("TopKIdentification-v0", means=LAST_FOUR, k=4, budget=budget, shuffle=False)
    played = [np.flatnonzero(play_episode(env, AGENTS[name](**params, tie_break="index"), seed=s)["answer"]).tolist()
              for s in range(4)]
    assert played == answers


def test_adaptive_top_k_pac_with_index_ties_gives_the_numbers_of_the_smallest_index_rule() -> None:
    venv = gym.make_vec("TopKIdentification-v0", num_envs=8, vectorization_mode="vector_entry_point",
                        common_random_numbers=True, means=np.repeat([0.9, 0.6, 0.5, 0.2], 3), k=3, epsilon=0.1,
                        budget=10**6, setting="fixed_confidence", shuffle=False)
    result = play_batched(venv, AdaptiveTopK(form="pac", delta=0.1, tie_break="index"), seed=5)
    assert result is not None and result["error"].sum() == 0
    assert result["pulls"].tolist() == [6012, 6012, 6012, 5520, 6012, 6012, 6012, 6012]


@pytest.mark.parametrize("name", ["OptMAI", "AdaptiveTopK"])
def test_round_agents_take_tie_break_and_keep_state_by_arm(name: str) -> None:
    assert AGENTS[name]().params()["tie_break"] == "random"
    assert AGENTS[name](tie_break="index").params()["tie_break"] == "index"
    with pytest.raises(ValueError, match="tie_break"):
        AGENTS[name](tie_break="smallest")
    # status and answer are indexed by arm, whatever each copy's order: 0.9 and 0.8 are the top 2 of every copy
    means = np.array([0.1, 0.9, 0.2, 0.8, 0.3, 0.15])
    venv = gym.make_vec("TopKIdentification-v0", num_envs=6, vectorization_mode="vector_entry_point", means=means,
                        k=2, budget=6000, shuffle=False)
    core: Any = venv.unwrapped
    agent = AGENTS[name]()
    agent.reset(seed=2)
    obs, _ = venv.reset(seed=1)
    while (pulls := agent.batch_pulls(obs)).any():
        obs = core.allocate(pulls)
    assert len({tuple(row) for row in agent.order.arm_at.tolist()}) > 1  # the copies' orders differ
    assert agent.answer(obs).tolist() == [[0, 1, 0, 1, 0, 0]] * 6
    status = agent.status
    assert (status[:, [1, 3]] != 2).all() and (status[:, [0, 2, 4, 5]] != 1).all()  # never a wrong decision
    np.testing.assert_array_equal(np.take_along_axis(status, agent.order.arm_at, axis=1), agent.rounds.status_pos)


@pytest.mark.slow
@pytest.mark.parametrize(("name", "params"), [("OptMAI", {}), ("AdaptiveTopK", {}),
                                              ("AdaptiveTopK", {"schedule": "log-free", "scale": 0.5})])
def test_round_agents_error_is_unchanged_when_the_arms_are_permuted(name: str, params: dict) -> None:
    # three random instances with ties (means in {.3, .5, .7}), unshuffled, each played as drawn and with its
    # arms permuted: 4000 runs each, a two-proportion z test; and the random rule on a fixed order is the index
    # rule on an instance shuffled per episode (the same law by construction). The agent's seed differs from the
    # env's: with the same seed its order would be drawn from the uniforms of the env's first samples
    rng = np.random.default_rng(36)
    runs = 4000
    for case in range(3):
        n = int(rng.integers(12, 41))
        k = int(rng.integers(2, n // 4 + 1))
        means, permutation = rng.choice([0.3, 0.5, 0.7], size=n), rng.permutation(n)
        budget = int(rng.integers(10, 40)) * n
        errors = []
        for arms, shuffle, tie_break in ((means, False, "random"), (means[permutation], False, "random"),
                                         (means, True, "index")):
            venv = gym.make_vec("TopKIdentification-v0", num_envs=runs, vectorization_mode="vector_entry_point",
                                means=arms, k=k, budget=budget, shuffle=shuffle)
            result = play_batched(venv, AGENTS[name](**params, tie_break=tie_break), seed=case, agent_seed=99)
            assert result is not None
            errors.append(float(result["error"].mean()))
        for other in errors[1:]:
            pooled = (errors[0] + other) / 2
            z = (errors[0] - other) / np.sqrt(2 * pooled * (1 - pooled) / runs) if 0 < pooled < 1 else 0.0
            assert abs(z) < 4, (case, n, k, budget, errors)


@pytest.mark.parametrize("name", ["OptMAI", "AdaptiveTopK"])
def test_round_agents_with_index_ties_favour_the_first_arms_and_random_ties_do_not(name: str) -> None:
    # TwoGroup with n = 100, K = 10 (0.7 / 0.3) at 1000 pulls, the best arms first or last, 1000 runs each: the
    # index rule's error moves by more than 0.05 (by 0.61 for OptMAI, 0.08 for AdaptiveTopK in 20,000 runs), the
    # random rule's by less than 4 standard errors
    runs = 1000
    means = chen2017_means("TwoGroup", 100, 10)
    errors = {}
    for tie_break in ("index", "random"):
        for order, arms in (("first", means), ("last", means[::-1].copy())):
            venv = gym.make_vec("TopKIdentification-v0", num_envs=runs, vectorization_mode="vector_entry_point",
                                means=arms, k=10, budget=1000, shuffle=False)
            result = play_batched(venv, AGENTS[name](tie_break=tie_break), seed=7, agent_seed=99)
            assert result is not None
            errors[tie_break, order] = float(result["error"].mean())
    assert errors["index", "last"] - errors["index", "first"] > 0.05, errors
    first, last = errors["random", "first"], errors["random", "last"]
    assert abs(first - last) < 4 * np.sqrt((first * (1 - first) + last * (1 - last)) / runs) + 1e-12, errors
