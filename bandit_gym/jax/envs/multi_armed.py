r"""The classic stochastic \(K\)-armed bandit (Lai and Robbins 1985; Auer et al. 2002) as a functional env: pull an
arm, receive its Bernoulli or Gaussian sample as the reward, pay the cumulative pseudo-regret
\(\sum_t (\mu^* - \mu_{I_t})\).

The arguments are ``MultiArmedBanditEnv``'s (``means``, ``budget``, ``distribution``, ``sigma``, ``num_arms``); the
numpy engine of one copy checks them and gives the spaces. The action is the arm (``Discrete(K)``), the reward its
sample, and the episode ends after ``budget`` pulls: there is no answer step, a budget of \(T\) is \(T\) steps.
``state.loss`` holds the cumulative pseudo-regret so far, \(\sum_i \Delta_i N_i\) (the same sum as
\(\sum_t \Delta_{I_t}\), computed from the exact pull counts, so a long float32 episode does not drift).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax.numpy as jnp

from bandit_gym.envs.multi_armed import MultiArmedEngine
from bandit_gym.families import Family
from bandit_gym.jax.envs._base import ArmState, Array, BanditFunctional, Obs
from bandit_gym.jax.envs._shells import BanditJaxEnv, BanditJaxVectorEnv

__all__ = ["MultiArmedBanditJaxEnv", "MultiArmedBanditJaxVectorEnv", "MultiArmedFunctional", "MultiArmedParams"]


class MultiArmedParams(NamedTuple):
    r"""The numbers of a \(K\)-armed bandit env that may change without recompiling (``MultiArmedFunctional``):
    the fixed means (zeros for an instance drawn per episode), the bounds of ``UniformMeans``, the Gaussian
    arms' \(\sigma\) and the budget \(T\) (at least 1)."""

    means: Array
    low: Array
    high: Array
    sigma: Array
    budget: Array


def pseudo_regret(means: Array, counts: Array) -> Array:
    r"""\(\sum_i (\mu^* - \mu_i) N_i\), the cumulative pseudo-regret of the pulls ``counts`` on ``means``, float32."""
    return jnp.sum((jnp.max(means) - means) * counts).astype(jnp.float32)


class MultiArmedFunctional(BanditFunctional):
    """The stochastic K-armed bandit as pure functions; the arguments of ``MultiArmedBanditEnv``.

    ``common_random_numbers=True`` and a means sampler other than ``UniformMeans`` are refused (use the numpy env
    ``MultiArmedBandit-v0``); ``means=None`` draws K = ``num_arms`` (default 10) means i.i.d. U(0, 1) per episode,
    as the numpy env does."""

    family = Family.MULTI_ARMED
    engine_class = MultiArmedEngine
    numpy_id = "MultiArmedBandit-v0"
    engine: MultiArmedEngine

    def get_default_params(self, **kwargs: Any) -> MultiArmedParams:
        engine = self.engine
        return MultiArmedParams(**self.instance_params(), sigma=jnp.float32(engine.sigma),
                                budget=jnp.int32(engine.budget))

    def transition(self, state: ArmState, action: Array, rng: Array, params: Any = None) -> ArmState:
        params = self._params(params)
        arm = jnp.reshape(jnp.asarray(action), (-1,))[0]  # a scalar, or the one-entry action of a wrapper
        pulling = ~state.done
        state, _ = self.pull(state, arm, pulling, rng, params)
        return state._replace(done=state.done | (state.budget_left <= 0),
                              loss=pseudo_regret(state.means, state.counts))

    def observation(self, state: ArmState, rng: Any = None, params: Any = None) -> Obs:
        return {**self.statistics(state), "last_reward": jnp.reshape(state.last_value, (1,)).astype(jnp.float32)}

    def reward(self, state: ArmState, action: Array, next_state: ArmState, rng: Any = None,
               params: Any = None) -> Array:
        pulled = next_state.budget_left < state.budget_left
        return jnp.where(pulled, next_state.last_value, 0.0).astype(jnp.float32)

    def transition_info(self, state: ArmState, action: Array, next_state: ArmState, params: Any = None) -> dict:
        r"""The numpy env's info: ``expected_reward`` (\(\mu\) of the pulled arm), ``best_expected_reward``
        (\(\mu^*\)) and
        ``pseudo_regret`` (the episode's so far)."""
        arm = jnp.clip(next_state.last_arm, 0, self.num_arms - 1)
        return {"expected_reward": next_state.means[arm], "best_expected_reward": jnp.max(next_state.means),
                "pseudo_regret": next_state.loss}

    def episode_metrics(self, state: ArmState, params: Any = None) -> dict[str, Array]:
        """The metrics of an ended episode, as the numpy env's ``RecordEpisodeRegret`` records them: the
        cumulative pseudo-regret ``regret`` and the ``pulls`` made (its ``length`` equals ``pulls`` here, and its
        ``return`` is ``state.sums.sum()``)."""
        params = self._params(params)
        return {"regret": state.loss.astype(jnp.float32), "pulls": params.budget - state.budget_left}


class MultiArmedBanditJaxEnv(BanditJaxEnv):
    """The stochastic K-armed bandit, one copy, JAX arrays; the arguments of ``MultiArmedBanditEnv``."""

    functional = MultiArmedFunctional


class MultiArmedBanditJaxVectorEnv(BanditJaxVectorEnv):
    """The stochastic K-armed bandit, ``num_envs`` copies stepped by one compiled function."""

    functional = MultiArmedFunctional
