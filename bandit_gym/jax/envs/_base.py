"""The functional form shared by every family: a ``FuncEnv`` whose pure functions advance one copy.

An env here is built from the same keyword arguments as the package's numpy env of its family: the numpy engine
of one copy checks them (so every error message is the numpy env's) and hands over the resolved instance, the
observation space and the action space, which are therefore the same objects as the numpy env's. The pure
functions then play the family's rules in ``jax.numpy``: the observation keys are the family contract's
(``bandit_gym.families``), the answers are scored by the loss functions of ``bandit_gym.metrics``, which take JAX
arrays, and every random draw comes from the ``jax.random`` key handed in.

State, params and observations are pytrees (``NamedTuple`` and ``dict``) of one copy: ``jax.vmap`` makes a batch.
"""

from __future__ import annotations

from typing import Any, ClassVar, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from gymnasium.experimental.functional import FuncEnv

from bandit_gym.envs._base import Engine
from bandit_gym.families import CONTRACTS, Family
from bandit_gym.instances import UniformMeans

Array = jax.Array
Obs = dict[str, Array]

INSTANCES = ("fixed", "uniform")
"""How a functional env gets each episode's means: ``fixed`` (``params.means``), or ``uniform`` (i.i.d.
``U(params.low, params.high)`` per arm, ``UniformMeans``)."""


class ArmState(NamedTuple):
    """The state of one copy: the instance, the statistics the observation shows, and the end of the episode."""

    #: the episode's means, ``(K,)``
    means: Array
    #: pulls of each arm, ``(K,)`` float32 (exact up to 2^24 pulls, like the numpy env's observation)
    counts: Array
    #: sums of each arm's samples, ``(K,)`` float32
    sums: Array
    #: pulls left, int32
    budget_left: Array
    #: the arm pulled last, -1 before the first pull, int32
    last_arm: Array
    #: the sample of the last pull (0 before the first), float32
    last_value: Array
    #: the episode has ended (its answer step was played, or the last round of an online env)
    done: Array
    #: pure exploration: the final answer's loss (chosen by ``loss=``); online: the cumulative pseudo-regret
    loss: Array
    #: pure exploration: the final answer's bits, ``(K,)`` int32 (zeros until the answer step)
    answer: Array
    #: pure exploration: the episode ended on the budget in the fixed-confidence setting, without a stop
    capped: Array


def arm_sample(key: Array, mean: Array, gaussian: bool, sigma: Array) -> Array:
    """One sample of an arm of mean ``mean``: ``1{U < mean}`` (Bernoulli) or ``mean + sigma Z`` (Gaussian)."""
    if gaussian:
        return mean + sigma * jax.random.normal(key)
    return (jax.random.uniform(key) < mean).astype(jnp.float32)


def empirical_means(counts: Array, sums: Array) -> Array:
    """``sums / counts``, 0 for an arm never pulled (the numpy env's observation)."""
    return jnp.where(counts > 0, sums / jnp.maximum(counts, 1.0), 0.0)


class BanditFunctional(FuncEnv):
    """Base class of the functional envs: the numpy engine of one copy checks the arguments and gives the spaces;
    subclasses give the family's side information, dynamics and losses."""

    #: the problem family, whose contract (``bandit_gym.families.CONTRACTS``) gives the observation keys
    family: ClassVar[Family]
    #: the numpy engine whose constructor checks the arguments (``bandit_gym.envs``)
    engine_class: ClassVar[type[Engine]]
    #: the env id of the numpy env of this family (named in errors)
    numpy_id: ClassVar[str]

    def __init__(self, **kwargs: Any) -> None:
        #: the numpy engine of one copy (its family's attributes: ``means``, ``threshold``, ``m``, ...)
        self.engine: Any = self.engine_class(1, **kwargs)  # checks every argument, as the numpy env does
        self.kwargs = dict(kwargs)
        self.num_arms = int(self.engine.num_arms)
        self.observation_space = self.engine.observation_space()
        self.action_space = self.engine.action_space()
        self.instance = self._instance_kind()
        keys = set(self.observation_space.spaces)
        if keys != set(CONTRACTS[self.family].observation_keys):  # pragma: no cover - a contract change
            raise AssertionError(f"{type(self).__name__}: observation keys {sorted(keys)} are not the contract's")
        super().__init__()

    # ----------------------------------------------------------------------------------------------- instance
    def _instance_kind(self) -> str:
        """``fixed`` or ``uniform``; anything the JAX path cannot draw is refused with the allowed choices."""
        refused = [name for name in ("common_random_numbers", "distributions") if self.kwargs.get(name)]
        if getattr(self.engine, "budget_range", None) is not None:
            refused.append("budget")
        if refused:
            raise ValueError(f"{type(self).__name__}: {', '.join(refused)} is not supported by the JAX envs; they "
                             "take fixed means or UniformMeans, a fixed budget and Bernoulli or Gaussian arms (use "
                             f"the numpy env {self.numpy_id} for the rest)")
        sampler = getattr(self.engine, "_sampler", None)
        if sampler is None:
            return "fixed"
        if isinstance(sampler, UniformMeans):
            return "uniform"
        raise ValueError(f"{type(self).__name__}: means={sampler!r} is not supported by the JAX envs; allowed: a "
                         "fixed instance (a list of means, a preset) or bandit_gym.instances.UniformMeans(...)")

    def instance_params(self) -> dict[str, Array]:
        """The params that give the means: the fixed means (zeros for a sampled instance), and the bounds of
        ``UniformMeans``."""
        sampler = getattr(self.engine, "_sampler", None)
        fixed = self.engine.fixed_means if sampler is None else np.zeros(self.num_arms)
        low, high = (sampler.low, sampler.high) if isinstance(sampler, UniformMeans) else (0.0, 0.0)
        return {"means": jnp.asarray(fixed, dtype=jnp.float32), "low": jnp.float32(low), "high": jnp.float32(high)}

    def draw_means(self, key: Array, params: Any) -> Array:
        """The means of a new episode, from ``params``."""
        if self.instance == "uniform":
            return jax.random.uniform(key, (self.num_arms,), minval=params.low, maxval=params.high)
        return params.means

    def fresh_state(self, means: Array, budget: Array) -> ArmState:
        """The state of an episode that starts on ``means`` with ``budget`` pulls."""
        k = self.num_arms
        zero = jnp.zeros(k, dtype=jnp.float32)
        return ArmState(means=means, counts=zero, sums=zero, budget_left=jnp.asarray(budget, dtype=jnp.int32),
                        last_arm=jnp.int32(-1), last_value=jnp.float32(0.0), done=jnp.bool_(False),
                        loss=jnp.float32(0.0), answer=jnp.zeros(k, dtype=jnp.int32), capped=jnp.bool_(False))

    def _params(self, params: Any) -> Any:
        return self.default_params if params is None else params

    # ----------------------------------------------------------------------------------------------- FuncEnv
    def initial(self, rng: Array, params: Any = None) -> ArmState:
        params = self._params(params)
        return self.fresh_state(self.draw_means(rng, params), params.budget)

    def terminal(self, state: ArmState, rng: Any = None, params: Any = None) -> Array:
        return state.done

    def state_info(self, state: ArmState, params: Any = None) -> dict[str, Any]:
        return {}

    def statistics(self, state: ArmState) -> Obs:
        """The observation keys every family shares (``COMMON_SCALAR_KEYS`` and ``COMMON_ARM_KEYS``), float32."""
        return {
            "budget_left": jnp.reshape(state.budget_left, (1,)).astype(jnp.float32),
            "last_arm": jnp.reshape(state.last_arm, (1,)).astype(jnp.float32),
            "counts": state.counts,
            "sums": state.sums,
            "means": empirical_means(state.counts, state.sums).astype(jnp.float32),
        }

    def pull(self, state: ArmState, arm: Array, pulling: Array, key: Array, params: Any) -> tuple[ArmState, Array]:
        """Pull ``arm`` where ``pulling`` (else change nothing); return the state and the sample."""
        a = jnp.clip(arm, 0, self.num_arms - 1)
        # the pulled arm's entries alone are read and written (an indexed read and an in-place add), not all K
        value = arm_sample(key, state.means[a], self.gaussian, params.sigma)
        state = state._replace(
            counts=state.counts.at[a].add(pulling.astype(state.counts.dtype)),
            sums=state.sums.at[a].add(jnp.where(pulling, value, 0.0)),
            budget_left=state.budget_left - pulling.astype(jnp.int32),
            last_arm=jnp.where(pulling, a, state.last_arm),
            last_value=jnp.where(pulling, value, state.last_value),
        )
        return state, value

    def pull_step(self, state: ArmState, arm: Array, rng: Array, params: Any = None) -> ArmState:
        """``transition`` on a step that pulls ``arm`` (pure exploration: any step but the answer step)."""
        raise NotImplementedError

    def answer_losses(self, answer: Array, means: Array, params: Any) -> dict[str, Any]:
        """``regret`` and ``error`` of an answer (pure exploration; an online family has none)."""
        raise NotImplementedError(f"a {self.family.value} env scores no answer")

    def episode_metrics(self, state: Any, params: Any = None) -> dict[str, Array]:
        """The metrics of an ended episode, as the numpy env's ``RecordEpisodeRegret`` records them."""
        raise NotImplementedError

    @property
    def gaussian(self) -> bool:
        """The arms are Gaussian (else Bernoulli)."""
        return bool(getattr(self.engine, "bernoulli", True) is False)
