"""The arm-wise policy in JAX (``bandit_gym.rl.jax_armwise``) and PPO trained end to end in JAX
(``bandit_gym.rl.jax_ppo``): the same features, network and weights file as the stable-baselines3 policy, the
training env's rewards, the reproducibility of a run, and learning."""

from __future__ import annotations

import dataclasses
import math
import os

import gymnasium as gym
import numpy as np
import pytest

if os.environ.get("BANDIT_GYM_TESTED") != "installed":  # CI installs the [jax] extra: there, a missing JAX fails
    pytest.importorskip("jax")
    pytest.importorskip("optax")
pytest.importorskip("stable_baselines3")

import jax
import jax.numpy as jnp

import bandit_gym  # noqa: F401
from bandit_gym.agents import Uniform
from bandit_gym.families import Family
from bandit_gym.instances import UniformMeans
from bandit_gym.rl import SB3Agent
from bandit_gym.rl import armwise as torch_armwise
from bandit_gym.rl import jax_armwise as armwise
from bandit_gym.rl import jax_ppo as ppo
from bandit_gym.rl.armwise_ppo import shipped_path
from bandit_gym.rollout import play_vector

FAMILIES = {
    "thresholding": ("ThresholdingBandit-v0", {}, Family.THRESHOLDING),
    "best_arm": ("BestArmIdentification-v0", {"means": [0.1, 0.5, 0.45, 0.3, 0.2, 0.7, 0.1], "m": 2}, Family.BEST_ARM),
    "top_k": ("TopKIdentification-v0", {}, Family.TOP_K),
}


def observations(env_id: str, kwargs: dict, steps: int, seed: int = 0) -> dict[str, np.ndarray]:
    """A batch of 64 observations after ``steps`` random pulls (some arms unpulled, ties among the means)."""
    env = gym.make_vec(env_id, num_envs=64, vectorization_mode="vector_entry_point", **kwargs)
    obs, _ = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        action = env.action_space.sample()
        action[:, 0] = rng.integers(0, obs["counts"].shape[1], 64)
        obs, *_ = env.step(action)
    return obs


def jax_features(obs: dict[str, np.ndarray], family: Family, **options: bool) -> jax.Array:
    batch = {key: jnp.asarray(value) for key, value in obs.items()}
    return jax.vmap(lambda o: armwise.arm_features(o, family, **options))(batch)


@pytest.mark.parametrize("problem", sorted(FAMILIES))
@pytest.mark.parametrize("steps", [0, 3, 40])
def test_features_and_network_equal_the_sb3_policys(problem: str, steps: int) -> None:
    env_id, kwargs, family = FAMILIES[problem]
    obs = observations(env_id, kwargs, steps)
    import torch

    tensors = {key: torch.as_tensor(value) for key, value in obs.items()}
    for options in ({}, {"standardize": True}, {"k_invariant": True}):
        expected = torch_armwise.arm_features(tensors, **options).numpy()
        np.testing.assert_allclose(np.asarray(jax_features(obs, family, **options)), expected, atol=2e-6)
    policy, header = torch_armwise.load_weights(shipped_path(problem, 0))
    k = obs["counts"].shape[1]
    policy = policy.for_spaces(gym.make_vec(env_id, num_envs=1, vectorization_mode="vector_entry_point",
                                            **kwargs).single_observation_space, gym.spaces.Discrete(k))
    logits, values = torch_armwise.logits_and_value(policy, obs)
    params, same_header = armwise.load_weights(shipped_path(problem, 0))
    assert same_header == header
    features = jax_features(obs, family, standardize=header["standardize"],
                            k_invariant=header.get("k_invariant", False))
    jax_logits, jax_values = armwise.logits_and_value(params, features)
    np.testing.assert_allclose(np.asarray(jax_logits), logits, atol=1e-5)
    np.testing.assert_allclose(np.asarray(jax_values), values, atol=1e-5)


def test_permuting_the_arms_permutes_the_logits_and_keeps_the_value() -> None:
    obs = observations("ThresholdingBandit-v0", {}, 25)
    params = armwise.init_params(jax.random.key(3), armwise.NUM_FEATURES)
    params["mlp_extractor.rho.2"]["weight"] = params["mlp_extractor.rho.2"]["weight"] * 100  # logits far from 0
    features = jax_features(obs, Family.THRESHOLDING)
    order = np.random.default_rng(1).permutation(features.shape[1])
    logits, value = armwise.logits_and_value(params, features)
    moved_logits, moved_value = armwise.logits_and_value(params, features[:, order])
    np.testing.assert_allclose(np.asarray(moved_logits), np.asarray(logits)[:, order], atol=1e-5)
    np.testing.assert_allclose(np.asarray(moved_value), np.asarray(value), atol=1e-5)
    assert float(jnp.std(logits)) > 0.01  # a real test: the logits differ between arms


def test_fresh_weights_are_sb3s_and_their_file_loads_as_an_sb3_policy(tmp_path) -> None:
    params = armwise.init_params(jax.random.key(0), 9, hidden=32)
    for name, (_kind, gain) in armwise.LAYERS.items():
        weight = np.asarray(params[name]["weight"])
        rows = min(weight.shape)
        gram = weight @ weight.T if weight.shape[0] <= weight.shape[1] else weight.T @ weight
        np.testing.assert_allclose(gram, gain**2 * np.eye(rows), atol=1e-5)  # orthogonal with SB3's gain
        assert not np.asarray(params[name]["bias"]).any()
    env = gym.make_vec("TopKIdentification-v0", num_envs=1, vectorization_mode="vector_entry_point")
    shapes = {key: list(box.shape) for key, box in env.single_observation_space.spaces.items()}
    path = armwise.save_weights(params, tmp_path / "w.npz", shapes, k_invariant=True, note="test")
    policy, header = torch_armwise.load_weights(path)
    assert header["hidden"] == 32 and header["k_invariant"] and header["note"] == "test"
    obs = observations("TopKIdentification-v0", {}, 50)
    logits, values = torch_armwise.logits_and_value(policy, obs)
    jax_logits, jax_values = armwise.logits_and_value(params, jax_features(obs, Family.TOP_K, k_invariant=True))
    np.testing.assert_allclose(np.asarray(jax_logits), logits, atol=1e-5)
    np.testing.assert_allclose(np.asarray(jax_values), values, atol=1e-5)


def test_features_refuse_the_families_they_do_not_cover() -> None:
    obs = {key: jnp.asarray(value[0]) for key, value in observations("ThresholdingBandit-v0", {}, 1).items()}
    with pytest.raises(ValueError, match="family='threshold'"):
        armwise.arm_features(obs, Family.THRESHOLD)


# --------------------------------------------------------------------------------------------------- PPO
SMALL = ppo.JaxRecipe("ThresholdingBandit-v0", {"means": UniformMeans(num_arms=4)}, (6, 11),
                      config=ppo.PPOConfig(num_envs=16, n_steps=8, batch_size=32, n_epochs=2, hidden=16))


@pytest.mark.parametrize("problem", sorted(ppo.JAX_RECIPES))
def test_training_env_pays_the_shaped_loss_and_ends_on_the_budget(problem: str) -> None:
    recipe = dataclasses.replace(ppo.JAX_RECIPES[problem], budget=(5, 12))
    env = ppo.TrainingEnv(recipe)
    step = jax.jit(env.step)
    copy = env.reset(jax.random.key(7))
    rng = np.random.default_rng(0)
    budgets, episodes = [], 0
    start_loss, total, length = float(copy.loss), 0.0, 0
    budget = int(copy.env.budget_left)
    for t in range(400):
        copy, reward, done, loss = step(copy, jnp.int32(rng.integers(env.env.num_arms)), jax.random.key(t))
        total += float(reward)
        length += 1
        if bool(done):
            # the rewards of an episode sum to L_0 - L_T, L_T the loss of the final empirical answer
            assert total == pytest.approx(start_loss - float(loss), abs=1e-5)
            assert length == budget and 5 <= budget <= 12
            budgets.append(budget)
            episodes += 1
            start_loss, total, length, budget = float(copy.loss), 0.0, 0, int(copy.env.budget_left)
    assert episodes >= 30 and len(set(budgets)) >= 5


def test_final_loss_is_the_envs_loss_of_the_empirical_answer() -> None:
    env = ppo.TrainingEnv(SMALL)
    copy = env.reset(jax.random.key(1))
    for t in range(int(copy.env.budget_left) - 1):
        copy, *_ = env.step(copy, jnp.int32(t % 4), jax.random.key(100 + t))
    state = copy.env
    ended, _, done, loss = env.step(copy, jnp.int32(2), jax.random.key(5))
    pulled = env.env.pull_step(state, jnp.int32(2), jax.random.split(jax.random.key(5))[0], env.params)
    means = np.asarray(pulled.sums) / np.maximum(np.asarray(pulled.counts), 1)
    answer = (np.where(np.asarray(pulled.counts) > 0, means, 0.0) >= 0.5).astype(int)
    misclassified = np.sum(answer != (np.asarray(state.means) >= 0.5))
    assert bool(done) and float(loss) == misclassified  # aggregate regret, epsilon = 0
    assert int(ended.env.budget_left) >= 6  # the next episode started on the same step


def test_ppo_settings_are_checked() -> None:
    with pytest.raises(ValueError, match="batch_size=1000 must divide"):
        ppo.PPOConfig(batch_size=1000)
    with pytest.raises(ValueError, match="gamma"):
        ppo.PPOConfig(gamma=1.5)
    with pytest.raises(ValueError, match="env_id="):
        ppo.JaxRecipe("ThresholdBandit-v0", {"means": UniformMeans(num_arms=4)}, (5, 6))
    with pytest.raises(ValueError, match="UniformMeans"):
        ppo.JaxRecipe("ThresholdingBandit-v0", {"means": [0.1, 0.9]}, (5, 6))
    with pytest.raises(ValueError, match="budget="):
        ppo.JaxRecipe("ThresholdingBandit-v0", {"means": UniformMeans(num_arms=4)}, (6, 5))
    with pytest.raises(ValueError, match="recipe='nope'"):
        ppo.train("nope")
    with pytest.raises(ValueError, match="distinct"):
        ppo.train(SMALL, seeds=[1, 1])


def test_a_run_is_reproducible_and_does_not_depend_on_the_seeds_beside_it() -> None:
    steps = 3 * SMALL.config.steps_per_update
    alone = ppo.train(SMALL, 0, steps)[0]
    again = ppo.train(SMALL, [0], steps, updates_per_call=2)[0]
    together = ppo.train(SMALL, [5, 0], steps)
    assert [r.seed for r in together] == [5, 0] and alone.total_timesteps == steps == 3 * 128
    for name in armwise.LAYERS:
        for part in ("weight", "bias"):
            np.testing.assert_array_equal(alone.params[name][part], again.params[name][part])
            np.testing.assert_allclose(together[1].params[name][part], alone.params[name][part], atol=1e-5)
    assert not np.allclose(together[0].params["value_net"]["weight"], alone.params["value_net"]["weight"])
    assert alone.log["steps"].tolist() == [128, 256, 384] and set(alone.log) >= {"final_loss", "entropy"}


@pytest.mark.slow
def test_ppo_learns_to_beat_uniform(tmp_path) -> None:
    """PPO on the SB3 thresholding recipe's distribution (10 arms, means U(0, 1), budgets log-uniform in 50..400)
    with a learning rate of 1e-3 (the recipe's 3e-4 needed 1.5 million steps), 400,000 steps for each of three
    seeds side by side. The seed of lowest training loss over its last fifth of updates (chosen before any policy
    is scored) is well below Uniform's regret on fresh instances (4000 episodes each, played by the numpy env
    through the weights file).

    One seed is not enough: a training run's floating-point path depends on the processor XLA compiles for, and
    the run's quality with it (at the recipe's settings seed 0 gave 0.878 against Uniform's 1.052 on one machine
    and 0.996 on an AMD EPYC). Measured when this test was written: training losses 0.968, 1.043 and 0.955 (seeds
    0, 1, 2); seed 2 scored 0.874 +- 0.015 against Uniform's 1.052 +- 0.016."""
    from bandit_gym.instances import BudgetRange

    recipe = ppo.JaxRecipe("ThresholdingBandit-v0", {"means": UniformMeans(num_arms=10)}, (50, 400),
                           config=ppo.PPOConfig(learning_rate=1e-3))
    results = ppo.train(recipe, [0, 1, 2], 400_000, updates_per_call=20)

    def training_loss(result: ppo.TrainingResult) -> float:
        losses = np.asarray(result.log["final_loss"])
        return float(np.nanmean(losses[-max(1, losses.size // 5):]))

    chosen = min(results, key=training_loss)

    def regret(agent: object) -> tuple[float, float]:
        env = gym.make_vec("ThresholdingBandit-v0", num_envs=4000, vectorization_mode="vector_entry_point",
                           means=UniformMeans(num_arms=10), budget=BudgetRange(50, 400, log=True))
        values = play_vector(env, agent, seed=11)["regret"]
        return float(values.mean()), float(values.std() / math.sqrt(values.size))

    path = chosen.save(tmp_path / f"policy-{chosen.seed}.npz")
    learned, learned_se = regret(SB3Agent(torch_armwise.load_weights(path)[0], any_budget=True))
    uniform, uniform_se = regret(Uniform())
    print(f"seed {chosen.seed} of {[round(training_loss(r), 3) for r in results]}: learned {learned:.4f} +- "
          f"{learned_se:.4f}, uniform {uniform:.4f} +- {uniform_se:.4f}")
    assert learned < uniform - 4 * math.hypot(learned_se, uniform_se), (chosen.seed, learned, uniform)
