"""The arm-wise policy's training (``bandit_gym.rl.armwise.ArmwisePolicy``: one network for any K and budget):
a recipe per problem (``ARMWISE_RECIPES``, ``armwise_recipe``) on envs that draw a new instance and budget every
episode, the candidates of a seed and the rule that keeps one of them on the training distribution
(``candidate_seeds``, ``validate_armwise``, ``select_candidate``), and ``train_armwise``. Imported from
``bandit_gym.rl``."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from bandit_gym import _validation as check
from bandit_gym.instances import BudgetRange, RandomSurvival, UniformMeans
from bandit_gym.registration import family_of_env
from bandit_gym.rl.training import TrainedPolicy, load, make_vec_env, quiet_logger


@dataclass(frozen=True)
class ArmwiseRecipe:
    """How the arm-wise policy (``bandit_gym.rl.armwise.ArmwisePolicy``) trains on one problem: on ``env_id`` with
    ``env_kwargs`` that draw the instance (and on pure-exploration envs the budget) per episode, so that the
    policy learns to explore rather than one instance; PPO with ``algo_kwargs`` on ``num_envs`` copies for
    ``total_timesteps`` steps; the dense reward of ``ShapedLossVector`` when ``shaped`` (pure exploration); the
    reward scaled by ``VecNormalize`` (the observation is scaled by the policy's features, not normalised).

    ``candidates`` > 1: a seed trains that many policies (``candidate_seeds``) and keeps the one with the lowest
    mean regret on ``validation_runs`` episodes of the training distribution itself (``select_candidate``):
    a rule fixed before any held-out instance is played, which guards against a run that settles on a poor
    policy. The candidates train in parallel (``train_armwise``'s ``jobs``). ``validation_env_kwargs`` replace
    env arguments for those episodes only (e.g. another law of the means): the candidates are then chosen on
    that distribution instead (none by default)."""

    env_id: str
    env_kwargs: dict[str, Any]
    algo_kwargs: dict[str, Any] = field(default_factory=dict)
    num_envs: int = 64
    total_timesteps: int = 3_000_000
    shaped: bool = True
    candidates: int = 1
    validation_runs: int = 1000
    validation_env_kwargs: dict[str, Any] = field(default_factory=dict)

    @property
    def features(self) -> dict[str, Any]:
        """The policy's feature options (``ArmFeatures``' keyword arguments: ``standardize``, ``k_invariant``)."""
        return dict(self.algo_kwargs.get("policy_kwargs", {}).get("features_extractor_kwargs", {}))


def _armwise_recipes() -> dict[str, ArmwiseRecipe]:
    pure = {"n_steps": 64, "batch_size": 1024, "n_epochs": 4, "gamma": 1.0, "gae_lambda": 0.95,
            "learning_rate": 3e-4, "ent_coef": 0.0}
    online = {**pure, "gamma": 0.9, "gae_lambda": 0.9}
    best_arm = ArmwiseRecipe("BestArmIdentification-v0", {"means": UniformMeans(num_arms=15, low=0.1, high=0.6),
                                                          "m": 1, "budget": BudgetRange(100, 1000, log=True)},
                             pure, total_timesteps=4_000_000, candidates=3)
    near_ties = {"means": UniformMeans(num_arms=15, low=0.35, high=0.5), "budget": BudgetRange(600, 2000, log=True)}
    return {
        "thresholding": ArmwiseRecipe("ThresholdingBandit-v0", {"means": UniformMeans(num_arms=10),
                                                                "budget": BudgetRange(50, 400, log=True)}, pure),
        "best_arm": best_arm,
        "best_arm_dev_select": replace(best_arm, total_timesteps=2_000_000, candidates=4,
                                       validation_env_kwargs=near_ties),
        "top_k": ArmwiseRecipe("TopKIdentification-v0", {"means": UniformMeans(num_arms=30), "k": 3,
                                                         "budget": BudgetRange(300, 3000, log=True)},
                               {**pure, "policy_kwargs": {"features_extractor_kwargs": {"k_invariant": True}}},
                               total_timesteps=3_000_000, candidates=2),
        "correlated": ArmwiseRecipe("CorrelatedBestArm-v0", {"budget": BudgetRange(20, 120, log=True)},
                                    {**pure, "policy_kwargs": {"features_extractor_kwargs": {"standardize": True}}},
                                    total_timesteps=750_000),
        "threshold": ArmwiseRecipe("ThresholdBandit-v0", {"survival": RandomSurvival(4, 6), "horizon": 500},
                                   online, total_timesteps=1_000_000, shaped=False),
        "multi_armed": ArmwiseRecipe("MultiArmedBandit-v0", {"budget": 500}, online, shaped=False),
    }


ARMWISE_RECIPES: dict[str, ArmwiseRecipe] = _armwise_recipes()
"""The arm-wise recipes, by problem: the training env draws a new instance (and budget) every episode.
``best_arm_dev_select`` trains as ``best_arm`` does (2M steps per candidate) and chooses among 4 candidates on
instances whose arms are all close to the best (means U(0.35, 0.5), budgets 600..2000), not on its training
distribution."""

CANDIDATE_STRIDE = 1000
"""Candidate j of seed s trains with seed ``s + 1000 j`` (``candidate_seeds``); candidate 0 is seed s itself."""

VALIDATION_SEED = 123_456_789
"""The env seed of the validation episodes (``validate_armwise``): one fixed set of training-distribution
instances, shared by every candidate, and no training seed's."""


def armwise_recipe(problem: str | ArmwiseRecipe, **overrides: Any) -> ArmwiseRecipe:
    """The recipe of ``problem`` (a key of ``ARMWISE_RECIPES``, or a recipe) with ``overrides`` replacing its
    fields (``algo_kwargs``, ``env_kwargs`` and ``validation_env_kwargs`` are merged)."""
    recipe = problem if isinstance(problem, ArmwiseRecipe) else ARMWISE_RECIPES[
        check.choice("problem", problem, tuple(ARMWISE_RECIPES))]
    unknown = set(overrides) - set(ArmwiseRecipe.__dataclass_fields__)
    if unknown:
        raise ValueError(f"unknown recipe fields {sorted(unknown)}; allowed: "
                         f"{sorted(ArmwiseRecipe.__dataclass_fields__)}")
    for merged in ("algo_kwargs", "env_kwargs", "validation_env_kwargs"):
        if merged in overrides:
            overrides[merged] = {**getattr(recipe, merged), **overrides[merged]}
    if "candidates" in overrides:
        check.integer("candidates", overrides["candidates"], minimum=1)
    if "validation_runs" in overrides:
        check.integer("validation_runs", overrides["validation_runs"], minimum=2)
    return replace(recipe, **overrides)


def candidate_seeds(seed: int | None, candidates: int) -> tuple[int | None, ...]:
    """The training seeds of seed ``seed``'s ``candidates`` candidates: ``seed, seed + 1000, seed + 2000, ...``
    (all None when ``seed`` is None)."""
    check.integer("candidates", candidates, minimum=1)
    return tuple(None if seed is None else seed + CANDIDATE_STRIDE * j for j in range(candidates))


def validate_armwise(problem: str | ArmwiseRecipe, policy: Any, runs: int | None = None,
                     seed: int = VALIDATION_SEED) -> np.ndarray:
    """Per-episode regret of ``policy`` on ``runs`` episodes (the recipe's ``validation_runs`` if None) of the
    recipe's own training distribution (its env and ``env_kwargs``, with its ``validation_env_kwargs`` replacing
    some: new instances and budgets, never a held-out instance), the env seeded with ``seed``. ``policy`` is an
    agent, or anything ``SB3Agent`` plays (played at any budget; sampled, as in training)."""
    from bandit_gym.agents.base import Agent
    from bandit_gym.rl.sb3_agent import SB3Agent
    from bandit_gym.rollout import play_vector

    recipe = armwise_recipe(problem)
    runs = recipe.validation_runs if runs is None else check.integer("runs", runs, minimum=2)
    agent = policy if isinstance(policy, Agent) else SB3Agent(policy, any_budget=True)
    env = gym.make_vec(recipe.env_id, num_envs=runs, vectorization_mode="vector_entry_point",
                       **{**recipe.env_kwargs, **recipe.validation_env_kwargs})
    try:
        return play_vector(env, agent, seed=seed)["regret"]
    finally:
        env.close()


def select_candidate(problem: str | ArmwiseRecipe, policies: list[Any], runs: int | None = None,
                     seed: int = VALIDATION_SEED) -> tuple[int, np.ndarray]:
    """The index of the policy with the lowest mean regret on the same validation episodes
    (``validate_armwise``; the first on a tie), and every policy's per-episode regret there, ``(policies, runs)``."""
    if not policies:
        raise ValueError("policies must hold at least one candidate")
    regrets = np.stack([validate_armwise(problem, policy, runs, seed) for policy in policies])
    return int(np.argmin(regrets.mean(axis=1))), regrets


def _train_candidate(recipe: ArmwiseRecipe, seed: int | None, steps: int, verbose: int,
                     folder: Path | None = None) -> TrainedPolicy | Path:
    """One PPO run of ``recipe``; saved to ``folder`` (and the folder returned) when given, on one torch thread
    (a parallel worker's share of the cores)."""
    from stable_baselines3 import PPO

    from bandit_gym.rl.armwise import ArmwisePolicy

    if folder is not None:
        import torch

        torch.set_num_threads(1)
    pure = family_of_env(recipe.env_id, **recipe.env_kwargs).pure_exploration
    gamma = recipe.algo_kwargs.get("gamma", 0.99)
    venv = make_vec_env(recipe.env_id, recipe.num_envs, discrete=pure, shaped=recipe.shaped and pure,
                        normalize={"norm_obs": False, "norm_reward": True, "gamma": gamma}, **recipe.env_kwargs)
    venv.seed(seed)
    model = PPO(ArmwisePolicy, venv, seed=seed, verbose=verbose, device="cpu", **recipe.algo_kwargs)
    quiet_logger(model)
    model.learn(total_timesteps=steps)
    trained = TrainedPolicy(model, None)
    return trained if folder is None else trained.save(folder)


def train_armwise(problem: str | ArmwiseRecipe, seed: int | None = 0, total_timesteps: int | None = None,
                  verbose: int = 0, jobs: int = 1, **overrides: Any) -> TrainedPolicy:
    """Train the arm-wise policy on ``problem`` (a key of ``ARMWISE_RECIPES``: ``"thresholding"``,
    ``"best_arm"``, ``"best_arm_dev_select"``, ``"top_k"``, ``"correlated"``, ``"threshold"``, ``"multi_armed"``;
    or a recipe, e.g. of ``armwise_recipe``) with PPO, for ``total_timesteps`` steps (the recipe's if None);
    ``overrides`` replace recipe fields (``algo_kwargs``, ``env_kwargs`` and ``validation_env_kwargs`` are
    merged). The policy plays any K and budget of its family through ``SB3Agent``.

    A recipe with ``candidates`` > 1 trains one policy per seed of ``candidate_seeds(seed, candidates)`` (with
    ``jobs`` > 1, that many at once, each in its own process on one torch thread; with ``jobs=1``, one after the
    other in this process) and returns the one ``select_candidate`` keeps, with the validation in its
    ``selection``."""
    recipe = armwise_recipe(problem, **overrides)
    steps = recipe.total_timesteps if total_timesteps is None else check.integer("total_timesteps",
                                                                                 total_timesteps, minimum=1)
    jobs = check.integer("jobs", jobs, minimum=1)
    if recipe.candidates == 1:
        result = _train_candidate(recipe, seed, steps, verbose)
        assert isinstance(result, TrainedPolicy)
        return result
    seeds = candidate_seeds(seed, recipe.candidates)
    if jobs == 1:
        trained = [_train_candidate(recipe, s, steps, verbose) for s in seeds]
    else:
        import tempfile

        from joblib import Parallel, delayed

        with tempfile.TemporaryDirectory() as tmp:
            folders = Parallel(n_jobs=jobs)(delayed(_train_candidate)(recipe, s, steps, verbose, Path(tmp) / str(j))
                                            for j, s in enumerate(seeds))
            trained = [load(folder) for folder in folders]
    best, regrets = select_candidate(recipe, trained)
    chosen = trained[best]
    assert isinstance(chosen, TrainedPolicy)
    chosen.selection = {"seed": seed, "candidate_seeds": list(seeds), "chosen": seeds[best],
                        "validation_regret": regrets.mean(axis=1).tolist(), "validation_runs": recipe.validation_runs,
                        "validation_seed": VALIDATION_SEED,
                        "validation_env_kwargs": {k: repr(v) for k, v in recipe.validation_env_kwargs.items()}}
    return chosen
