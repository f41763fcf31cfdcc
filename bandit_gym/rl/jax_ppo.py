r"""The arm-wise policy trained end to end in JAX: PPO whose environment, rollout and update are one compiled function
(as PureJaxRL does on gymnax), on the per-episode instance samplers of the functional envs.

What it trains is ``bandit_gym.rl.armwise``'s policy (the features and network of ``bandit_gym.rl.jax_armwise``), and
what it writes is that policy's weights file: ``bandit_gym.rl.armwise.load_weights`` makes it an SB3 policy, which
``SB3Agent(policy, any_budget=True)`` plays through the numpy envs and the experiment engine beside the
stable-baselines3 policies (``scripts/rl_jax_ppo.py score`` does so on the held-out settings).

The algorithm is stable-baselines3's PPO as the arm-wise recipes run it (``bandit_gym.rl.ARMWISE_RECIPES``), step for
step:

- the environment: every episode draws its means (``UniformMeans``; best arm and top K in a random arm order) and its
  budget \(T\) (log-uniform in ``budget``); the policy chooses arms only, the answer being the empirical rule; the
  reward is ``ShapedLossVector``'s, \(L_{t-1} - L_t\) (\(L_t\): the loss of the empirical answer after \(t\) pulls, by
  the env's ``loss=``), whose sum over an episode is \(L_0 - L_T\). The numpy env's answer step, whose shaped reward is
  \(-L_T + L_T = 0\) and whose action is ignored, is merged into the last pull; a copy whose episode ends starts the
  next one on the same step (``SAME_STEP`` autoreset), as SB3 sees the envs;
- the rewards scaled as ``VecNormalize(norm_obs=False, norm_reward=True, gamma=gamma)`` scales them (divided by the
  running standard deviation of the discounted return, clipped to \(\pm 10\));
- ``n_steps`` steps of ``num_envs`` copies per rollout, GAE(``gamma``, ``gae_lambda``), ``n_epochs`` passes over
  shuffled minibatches of ``batch_size`` with advantages normalised per minibatch (by their standard deviation with ddof
  0, where SB3 takes torch's unbiased one: a factor of 1.0005 at 1024), the clipped surrogate (``clip_range``), the
  value loss \((R - V)^2\) with weight ``vf_coef``, entropy weight ``ent_coef``, gradients clipped to global norm
  ``max_grad_norm``, Adam (``optax.adam``, eps 1e-5) at ``learning_rate``;
- the weights initialised as SB3 initialises ``ArmwisePolicy`` (``bandit_gym.rl.jax_armwise.init_params``).

``train(recipe, seeds)`` runs it; ``JAX_RECIPES`` are the problems' training distributions. The whole of one update
(rollout, advantages, epochs) is one jitted function, and ``updates_per_call`` of them are scanned in one call.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from bandit_gym.families import Family
from bandit_gym.instances import UniformMeans
from bandit_gym.jax.agents._base import thresholding_answer, top_m_answer
from bandit_gym.jax.envs._base import ArmState
from bandit_gym.jax.envs.pure_exploration import (
    BestArmFunctional,
    PureExplorationFunctional,
    ThresholdingFunctional,
    TopKFunctional,
)
from bandit_gym.rl import jax_armwise as armwise

try:
    import optax
except ImportError as error:  # pragma: no cover - the jax extra installs it
    raise ImportError('bandit_gym.rl.jax_ppo needs optax: pip install "pure-exploration-gym[jax]"') from error

Array = jax.Array

FUNCTIONALS: dict[str, type[PureExplorationFunctional]] = {
    "ThresholdingBandit-v0": ThresholdingFunctional,
    "BestArmIdentification-v0": BestArmFunctional,
    "TopKIdentification-v0": TopKFunctional,
}
"""The env ids PPO trains on here, and their functional envs."""


@dataclass(frozen=True)
class PPOConfig:
    """PPO's settings; the defaults are the arm-wise recipes' (``bandit_gym.rl.ARMWISE_RECIPES``: SB3's PPO with
    ``n_steps=64``, ``batch_size=1024``, ``n_epochs=4``, ``gamma=1``, ``gae_lambda=0.95``, ``learning_rate=3e-4``,
    ``ent_coef=0`` on 64 copies, SB3's ``clip_range``, ``vf_coef`` and ``max_grad_norm``)."""

    num_envs: int = 64
    n_steps: int = 64
    batch_size: int = 1024
    n_epochs: int = 4
    learning_rate: float = 3e-4
    gamma: float = 1.0
    gae_lambda: float = 0.95
    clip_range: float = 0.2
    ent_coef: float = 0.0
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    hidden: int = 64
    normalize_reward: bool = True

    def __post_init__(self) -> None:
        for name in ("num_envs", "n_steps", "batch_size", "n_epochs", "hidden"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name}={value!r} must be an integer >= 1")
        if (self.num_envs * self.n_steps) % self.batch_size:
            raise ValueError(f"batch_size={self.batch_size} must divide num_envs * n_steps = "
                             f"{self.num_envs * self.n_steps}")
        for name in ("learning_rate", "clip_range", "max_grad_norm"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name}={getattr(self, name)!r} must be > 0")
        for name in ("gamma", "gae_lambda"):
            if not 0 <= getattr(self, name) <= 1:
                raise ValueError(f"{name}={getattr(self, name)!r} must lie in [0, 1]")

    @property
    def steps_per_update(self) -> int:
        """Env steps (pulls) per rollout: ``num_envs * n_steps``."""
        return self.num_envs * self.n_steps


ACCELERATOR_CONFIG = PPOConfig(num_envs=2048, batch_size=8192)
"""PPO's settings for one GPU: 32 times the copies of the SB3 recipe (131,072 steps per update) and 8 times its
minibatch (so 64 gradient steps per update instead of 16); everything else the recipe's. Fixed before any run."""


@dataclass(frozen=True)
class JaxRecipe:
    """A training distribution: ``env_id`` (a key of ``FUNCTIONALS``) with ``env_kwargs`` (its means drawn per
    episode by ``UniformMeans``), the budget of each episode log-uniform in ``budget`` (both ends included, rounded
    to the nearest integer), the feature options, and PPO's ``config``."""

    env_id: str
    env_kwargs: dict[str, Any]
    budget: tuple[int, int]
    config: PPOConfig = field(default_factory=PPOConfig)
    standardize: bool = False
    k_invariant: bool = False

    def __post_init__(self) -> None:
        if self.env_id not in FUNCTIONALS:
            raise ValueError(f"env_id={self.env_id!r}: PPO in JAX trains on {', '.join(FUNCTIONALS)}")
        low, high = self.budget
        if not (isinstance(low, int) and isinstance(high, int) and 1 <= low <= high):
            raise ValueError(f"budget={self.budget!r} must be two integers 1 <= low <= high")
        if not isinstance(self.env_kwargs.get("means"), UniformMeans):
            raise ValueError("env_kwargs['means'] must be a UniformMeans: the policy learns across instances")

    def functional(self) -> PureExplorationFunctional:
        """The functional env (its default budget the largest of the range)."""
        return FUNCTIONALS[self.env_id](**{**self.env_kwargs, "budget": self.budget[1]})


JAX_RECIPES: dict[str, JaxRecipe] = {
    "thresholding": JaxRecipe("ThresholdingBandit-v0", {"means": UniformMeans(num_arms=10)}, (50, 2500)),
    "best_arm": JaxRecipe("BestArmIdentification-v0",
                          {"means": UniformMeans(num_arms=15, low=0.1, high=0.6), "m": 1}, (100, 3000)),
    "top_k": JaxRecipe("TopKIdentification-v0", {"means": UniformMeans(num_arms=30), "k": 3}, (200, 3000),
                       k_invariant=True),
}
"""The training distributions, fixed on 2026-11-27 before any JAX-trained policy was played: the laws of the means
and K of the SB3 recipes (``bandit_gym.rl.ARMWISE_RECIPES``), with budget ranges widened to the budgets the policies
are scored at (the SB3 recipes train on T up to 400, 1000 and 3000)."""


# --------------------------------------------------------------------------------------------------- the env
class Copy(NamedTuple):
    r"""One training copy: the env's state, the arm order that breaks ties in the empirical answer, the loss of the
    current empirical answer \(L_t\), and the discounted return that scales the rewards."""

    env: ArmState
    position_of: Array
    loss: Array
    ret: Array


class RunningStats(NamedTuple):
    """SB3's ``RunningMeanStd`` of the discounted returns (starts at mean 0, variance 1, count 1e-4)."""

    mean: Array
    var: Array
    samples: Array


def _update_stats(stats: RunningStats, batch: Array) -> RunningStats:
    """Chan et al.'s parallel update, as SB3's ``RunningMeanStd.update``."""
    batch_mean, batch_var, n = jnp.mean(batch), jnp.var(batch), batch.shape[0]
    delta = batch_mean - stats.mean
    total = stats.samples + n
    m2 = stats.var * stats.samples + batch_var * n + delta**2 * stats.samples * n / total
    return RunningStats(stats.mean + delta * n / total, m2 / total, total)


class TrainingEnv:
    """The recipe's env as the functions PPO scans: ``reset(key) -> Copy``, ``step(copy, arm, key) -> (copy,
    reward, done, final_loss)`` and ``observe(copy) -> obs``, for one copy."""

    def __init__(self, recipe: JaxRecipe) -> None:
        self.recipe = recipe
        self.env = recipe.functional()
        self.params: Any = self.env.default_params
        self.family = self.env.family

    def observe(self, copy: Copy) -> dict[str, Array]:
        return self.env.observation(copy.env, None, self.params)

    def answer_loss(self, state: ArmState, position_of: Array) -> Array:
        r"""\(L_t\): the loss of the empirical answer of ``state``."""
        obs = self.env.observation(state, None, self.params)
        bits = thresholding_answer(obs) if self.family is Family.THRESHOLDING else top_m_answer(obs, position_of)
        return self.env.episode_loss(bits, state.means, self.params)

    def draw_budget(self, key: Array) -> Array:
        low, high = self.recipe.budget
        return jnp.round(jnp.exp(jax.random.uniform(key, minval=math.log(low), maxval=math.log(high)))).astype(
            jnp.int32)

    def reset(self, key: Array) -> Copy:
        means_key, order_key, budget_key, tie_key = jax.random.split(key, 4)
        state = self.env.fresh_state(self.env.shuffled(order_key, self.env.draw_means(means_key, self.params)),
                                     self.draw_budget(budget_key))
        position_of = jnp.argsort(jax.random.permutation(tie_key, self.env.num_arms)).astype(jnp.int32)
        return Copy(state, position_of, self.answer_loss(state, position_of), jnp.float32(0.0))

    def step(self, copy: Copy, arm: Array, key: Array) -> tuple[Copy, Array, Array, Array]:
        pull_key, reset_key = jax.random.split(key)
        state = self.env.pull_step(copy.env, arm, pull_key, self.params)
        loss = self.answer_loss(state, copy.position_of)
        reward = copy.loss - loss - self.params.sample_cost
        done = state.budget_left <= 0
        fresh = self.reset(reset_key)
        following = jax.tree.map(lambda a, b: jnp.where(done, a, b), fresh,
                                 Copy(state, copy.position_of, loss, copy.ret))
        return following, reward, done, loss


# --------------------------------------------------------------------------------------------------- PPO
class Runner(NamedTuple):
    """What one update carries to the next."""

    params: armwise.Params
    opt_state: Any
    copies: Copy
    stats: RunningStats
    key: Array


def _features(env: TrainingEnv, copies: Copy) -> Array:
    recipe = env.recipe
    obs = jax.vmap(env.observe)(copies)
    return jax.vmap(lambda o: armwise.arm_features(o, env.family, recipe.standardize, recipe.k_invariant))(obs)


def make_update(env: TrainingEnv, config: PPOConfig, optimizer: Any) -> Callable[[Runner], tuple[Runner, dict]]:
    """One PPO update (rollout, advantages, ``n_epochs`` of minibatches) as a pure function of the runner."""
    n, steps = config.num_envs, config.n_steps
    minibatches = config.steps_per_update // config.batch_size

    def rollout_step(runner: Runner, _: Any) -> tuple[Runner, tuple[Array, ...]]:
        key, act_key, step_key = jax.random.split(runner.key, 3)
        features = _features(env, runner.copies)
        logits, value = armwise.logits_and_value(runner.params, features)
        arm = jax.random.categorical(act_key, logits)
        logp = jnp.take_along_axis(jax.nn.log_softmax(logits), arm[:, None], axis=1)[:, 0]
        copies, reward, done, loss = jax.vmap(env.step)(runner.copies, arm, jax.random.split(step_key, n))
        stats = runner.stats
        if config.normalize_reward:  # VecNormalize: the return before the reset, then zeroed where done
            ret = runner.copies.ret * config.gamma + reward
            stats = _update_stats(stats, ret)
            scaled = jnp.clip(reward / jnp.sqrt(stats.var + 1e-8), -10.0, 10.0)
            copies = copies._replace(ret=jnp.where(done, 0.0, ret))
        else:
            scaled = reward
        transition = (features, arm, logp, value, scaled, done, loss)
        return Runner(runner.params, runner.opt_state, copies, stats, key), transition

    def advantages(values: Array, rewards: Array, dones: Array, last_value: Array) -> tuple[Array, Array]:
        def backward(carry: tuple[Array, Array], t: tuple[Array, ...]) -> tuple[tuple[Array, Array], Array]:
            gae, next_value = carry
            value, reward, done = t
            alive = 1.0 - done.astype(jnp.float32)
            delta = reward + config.gamma * next_value * alive - value
            gae = delta + config.gamma * config.gae_lambda * alive * gae
            return (gae, value), gae

        _, adv = jax.lax.scan(backward, (jnp.zeros_like(last_value), last_value), (values, rewards, dones),
                              reverse=True)
        return adv, adv + values

    def loss_fn(params: armwise.Params, batch: tuple[Array, ...]) -> tuple[Array, dict[str, Array]]:
        features, arm, old_logp, adv, returns = batch
        logits, value = armwise.logits_and_value(params, features)
        log_probs = jax.nn.log_softmax(logits)
        logp = jnp.take_along_axis(log_probs, arm[:, None], axis=1)[:, 0]
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        ratio = jnp.exp(logp - old_logp)
        clipped = jnp.clip(ratio, 1 - config.clip_range, 1 + config.clip_range)
        policy_loss = -jnp.mean(jnp.minimum(adv * ratio, adv * clipped))
        value_loss = jnp.mean((returns - value) ** 2)
        entropy = -jnp.mean(jnp.sum(jnp.exp(log_probs) * log_probs, axis=1))
        total = policy_loss - config.ent_coef * entropy + config.vf_coef * value_loss
        return total, {"policy_loss": policy_loss, "value_loss": value_loss, "entropy": entropy}

    def epoch(carry: tuple[Any, ...], key: Array) -> tuple[tuple[Any, ...], dict[str, Array]]:
        params, opt_state, data = carry
        order = jax.random.permutation(key, config.steps_per_update)
        shuffled = jax.tree.map(lambda x: x[order].reshape(minibatches, config.batch_size, *x.shape[1:]), data)

        def minibatch(carry: tuple[Any, Any], batch: tuple[Array, ...]) -> tuple[tuple[Any, Any], dict]:
            params, opt_state = carry
            grads, info = jax.grad(loss_fn, has_aux=True)(params, batch)
            updates, opt_state = optimizer.update(grads, opt_state, params)
            return (optax.apply_updates(params, updates), opt_state), info

        (params, opt_state), info = jax.lax.scan(minibatch, (params, opt_state), shuffled)
        return (params, opt_state, data), info

    def update(runner: Runner) -> tuple[Runner, dict[str, Array]]:
        runner, (features, arm, logp, value, reward, done, loss) = jax.lax.scan(rollout_step, runner, None, steps)
        _, last_value = armwise.logits_and_value(runner.params, _features(env, runner.copies))
        adv, returns = advantages(value, reward, done, last_value)
        flat = jax.tree.map(lambda x: x.reshape(steps * n, *x.shape[2:]), (features, arm, logp, adv, returns))
        key, epoch_key = jax.random.split(runner.key)
        (params, opt_state, _), info = jax.lax.scan(epoch, (runner.params, runner.opt_state, flat),
                                                    jax.random.split(epoch_key, config.n_epochs))
        ended = jnp.sum(done)
        log = {"episodes": ended,  # the mean final loss of the episodes that ended in this rollout (NaN if none did)
               "final_loss": jnp.where(ended > 0, jnp.sum(jnp.where(done, loss, 0.0)) / jnp.maximum(ended, 1), jnp.nan),
               **{name: jnp.mean(value) for name, value in info.items()}}
        return Runner(params, opt_state, runner.copies, runner.stats, key), log

    return update


@dataclass
class TrainingResult:
    """A finished training: the weights, the per-update log (env steps, episodes ended and their mean final loss,
    the losses), and what made it."""

    params: armwise.Params
    log: dict[str, np.ndarray]
    recipe: JaxRecipe
    seed: int
    total_timesteps: int
    seconds: float
    device: str
    #: the seeds trained side by side with this one (``seconds`` is theirs together)
    trained_with: int = 1

    def save(self, path: str | Path, **meta: Any) -> Path:
        """The weights file (``bandit_gym.rl.jax_armwise.save_weights``), its header naming the recipe, the seed, the
        steps, the time and the device."""
        space: Any = self.recipe.functional().observation_space  # a gymnasium.spaces.Dict
        shapes = {key: list(box.shape) for key, box in space.spaces.items()}
        recipe = {"env_id": self.recipe.env_id, "env_kwargs": repr(self.recipe.env_kwargs),
                  "budget": list(self.recipe.budget), "config": asdict(self.recipe.config)}
        return armwise.save_weights(self.params, path, shapes, standardize=self.recipe.standardize,
                                    k_invariant=self.recipe.k_invariant, trainer="bandit_gym.rl.jax_ppo",
                                    recipe=recipe, seed=self.seed, total_timesteps=self.total_timesteps,
                                    seconds=round(self.seconds, 1), device=self.device,
                                    seeds_trained_together=self.trained_with, **meta)


def _recipe(recipe: str | JaxRecipe) -> JaxRecipe:
    if isinstance(recipe, JaxRecipe):
        return recipe
    if recipe not in JAX_RECIPES:
        raise ValueError(f"recipe={recipe!r}; allowed: {', '.join(JAX_RECIPES)} or a JaxRecipe")
    return JAX_RECIPES[recipe]


def _first_runner(env: TrainingEnv, optimizer: Any, seed: int) -> Runner:
    """The runner before the first update of ``seed``: fresh weights, copies at the start of an episode."""
    config, recipe = env.recipe.config, env.recipe
    init_key, reset_key, run_key = jax.random.split(jax.random.key(seed), 3)
    params = armwise.init_params(init_key, armwise.NUM_FEATURES - int(recipe.k_invariant), config.hidden)
    copies = jax.vmap(env.reset)(jax.random.split(reset_key, config.num_envs))
    stats = RunningStats(jnp.float32(0.0), jnp.float32(1.0), jnp.float32(1e-4))
    return Runner(params, optimizer.init(params), copies, stats, run_key)


@functools.partial(jax.jit, static_argnums=(0, 2))
def _run_updates(update: Callable[[Runner], tuple[Runner, dict]], runner: Runner,
                 count: int) -> tuple[Runner, dict[str, Array]]:
    """``count`` PPO updates of every seed's runner in one compiled scan (``update``: the vmapped
    ``make_update``, static: one compilation per training run and per ``count``)."""
    return jax.lax.scan(lambda r, _: update(r), runner, None, count)


def train(recipe: str | JaxRecipe, seeds: int | Sequence[int] = 0, total_timesteps: int = 3_000_000,
          updates_per_call: int = 10, max_seconds: float | None = None,
          progress: Callable[[int, dict[str, float]], None] | None = None) -> list[TrainingResult]:
    """Train the arm-wise policy on ``recipe`` (a key of ``JAX_RECIPES`` or a ``JaxRecipe``), once per seed of
    ``seeds`` (the seeds train side by side, ``jax.vmap`` over them), for ``total_timesteps`` env steps per seed,
    rounded up to whole updates of ``num_envs * n_steps``. A seed seeds everything of its run (the weights, the
    instances, the samples, the actions), and a run does not depend on the other seeds trained beside it.

    ``updates_per_call`` updates are one compiled call; ``progress(steps, log)`` is called after each, with the
    last update's log averaged over the seeds. ``max_seconds``: stop after the first call that ends past that
    many seconds of training (compilation included); the results then say how many steps were made, and training
    that many steps from the same seeds makes the same policies (up to the device's floating-point
    non-determinism)."""
    recipe = _recipe(recipe)
    seed_list: list[Any] = [seeds] if isinstance(seeds, (int, np.integer)) else list(seeds)
    seed_list = [int(seed) if isinstance(seed, np.integer) else seed for seed in seed_list]
    for seed in seed_list:
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**32:
            raise ValueError(f"seeds: {seed!r} must be an integer in 0..2^32 - 1")
    if not seed_list or len(set(seed_list)) != len(seed_list):
        raise ValueError(f"seeds={seeds!r} must be one seed or distinct seeds")
    if isinstance(total_timesteps, bool) or not isinstance(total_timesteps, int) or total_timesteps < 1:
        raise ValueError(f"total_timesteps={total_timesteps!r} must be an integer >= 1")
    if max_seconds is not None and not max_seconds > 0:
        raise ValueError(f"max_seconds={max_seconds!r} must be None or > 0")
    config = recipe.config
    env = TrainingEnv(recipe)
    optimizer = optax.chain(optax.clip_by_global_norm(config.max_grad_norm),
                            optax.adam(config.learning_rate, eps=1e-5))
    runners = [_first_runner(env, optimizer, seed) for seed in seed_list]
    runner = jax.tree.map(lambda *leaves: jnp.stack(leaves), *runners)
    update = jax.vmap(make_update(env, config, optimizer))
    updates = -(-total_timesteps // config.steps_per_update)
    per_call = max(1, min(int(updates_per_call), updates))

    logs: list[dict[str, np.ndarray]] = []
    start = time.perf_counter()
    done = 0
    while done < updates:
        count = min(per_call, updates - done)  # a last, shorter call compiles once more
        runner, log = _run_updates(update, runner, count)
        logs.append({name: np.asarray(value) for name, value in log.items()})  # (count, seeds)
        done += count
        if progress is not None:
            progress(done * config.steps_per_update, {k: float(v[-1].mean()) for k, v in logs[-1].items()})
        if max_seconds is not None and time.perf_counter() - start > max_seconds:
            break
    seconds = time.perf_counter() - start
    merged = {name: np.concatenate([log[name] for log in logs]) for name in logs[0]}
    steps = len(merged["episodes"]) * config.steps_per_update
    params = jax.device_get(runner.params)
    device = str(jax.devices()[0].device_kind)
    return [TrainingResult(jax.tree.map(lambda leaf, i=i: leaf[i], params),
                           {**{name: value[:, i] for name, value in merged.items()},
                            "steps": np.arange(1, len(merged["episodes"]) + 1) * config.steps_per_update},
                           recipe, seed, steps, seconds, device, len(seed_list))
            for i, seed in enumerate(seed_list)]
