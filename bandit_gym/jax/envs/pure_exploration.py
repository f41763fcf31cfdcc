r"""The three pure-exploration families as functional envs: the thresholding bandit (tao2019), \((\epsilon, m)\)-best
arm identification (gabillon2012; fixed budget and fixed confidence) and \(\epsilon\)-top-\(K\) identification
(chen2017).

An action is the numpy env's: ``[arm in 0..K-1, or K to stop, then one answer bit per arm]``. A pull costs
``sample_cost``; the step after the last pull (or a stop) pulls nothing, scores its answer with the loss chosen by
``loss=`` (the functions of ``bandit_gym.metrics``), pays minus that loss and ends the episode. A budget of \(T\) is
at most \(T\) pulls and \(T + 1\) steps, as in the numpy envs.
"""

from __future__ import annotations

from typing import Any, ClassVar, NamedTuple

import jax
import jax.numpy as jnp

from bandit_gym import metrics
from bandit_gym.envs.best_arm import BestArmEngine
from bandit_gym.envs.thresholding import ThresholdingEngine
from bandit_gym.envs.top_k import TopKEngine
from bandit_gym.families import Family
from bandit_gym.jax.envs._base import ArmState, Array, BanditFunctional, Obs


class ThresholdingParams(NamedTuple):
    """The numbers of a thresholding env that may change without recompiling (``ThresholdingFunctional``)."""

    means: Array
    low: Array
    high: Array
    threshold: Array
    epsilon: Array
    sigma: Array
    sample_cost: Array
    budget: Array


class SetParams(NamedTuple):
    """The numbers of a best-arm or top-K env that may change without recompiling (m is K of top K)."""

    means: Array
    low: Array
    high: Array
    m: Array
    epsilon: Array
    delta: Array
    sigma: Array
    sample_cost: Array
    budget: Array


class PureExplorationFunctional(BanditFunctional):
    """A pure-exploration family: pulls, then one answer scored on the answer step."""

    @property
    def fixed_confidence(self) -> bool:
        """The fixed-confidence setting (the numpy engine's ``setting``): a stop action ends the episode before the
        budget, and running out of pulls caps (truncates) it."""
        return bool(getattr(self.engine, "setting", "fixed_budget") == "fixed_confidence")

    def answer_losses(self, answer: Array, means: Array, params: Any) -> dict[str, Any]:
        """``regret`` and ``error`` of a final answer (and ``invalid`` for set answers): the numpy env's
        ``answer_metrics``."""
        raise NotImplementedError

    def side_information(self, params: Any) -> Obs:
        r"""The family's constant observation keys (threshold and \(\epsilon\); \(m\), \(\epsilon\) and \(\delta\))."""
        raise NotImplementedError

    def shuffled(self, key: Array, means: Array) -> Array:
        """The means of an episode in a random arm order where the env shuffles (best arm, top K), else as
        drawn."""
        if getattr(self.engine, "shuffle", False):
            return jax.random.permutation(key, means)
        return means

    def initial(self, rng: Array, params: Any = None) -> ArmState:
        params = self._params(params)
        draw, order = jax.random.split(rng)
        return self.fresh_state(self.shuffled(order, self.draw_means(draw, params)), params.budget)

    def episode_loss(self, answer: Array, means: Array, params: Any) -> Array:
        """The loss ``loss=`` chose (the first of ``LOSSES`` is ``regret``, the second ``error``)."""
        losses = self.answer_losses(answer, means, params)
        return (losses["regret"] if self.engine.loss in self.regret_losses else losses["error"]).astype(jnp.float32)

    #: the values of ``loss=`` that pay the regret (the others pay the error indicator)
    regret_losses: ClassVar[tuple[str, ...]] = ("aggregate", "simple_regret", "aggregate_regret")

    def transition(self, state: ArmState, action: Array, rng: Array, params: Any = None) -> ArmState:
        params = self._params(params)
        arm = action[0]
        ending = ~state.done & ((arm == self.num_arms) | (state.budget_left <= 0))
        pulled = self.pull_step(state, arm, rng, params)
        return self.answer_step(pulled, action, params, ending)

    def pull_step(self, state: ArmState, arm: Array, rng: Array, params: Any = None) -> ArmState:
        """``transition`` on a step that pulls ``arm`` (a running episode with pulls left; anything else changes
        nothing): what a compiled rollout calls on every step but the answer step."""
        params = self._params(params)
        pulling = ~state.done & (arm < self.num_arms) & (state.budget_left > 0)
        return self.pull(state, arm, pulling, rng, params)[0]

    def answer_step(self, state: ArmState, action: Array, params: Any, ending: Array) -> ArmState:
        """Where ``ending``: score the answer bits ``action[1:]``, end the episode, and mark it capped if the
        budget ended it in the fixed-confidence setting."""
        answer = action[1:].astype(jnp.int32)
        capped = ending & (action[0] != self.num_arms) if self.fixed_confidence else jnp.bool_(False)
        return state._replace(
            done=state.done | ending,
            loss=jnp.where(ending, self.episode_loss(answer, state.means, params), state.loss),
            answer=jnp.where(ending, answer, state.answer),
            capped=state.capped | capped,
        )

    def observation(self, state: ArmState, rng: Any = None, params: Any = None) -> Obs:
        params = self._params(params)
        return {**self.side_information(params), **self.statistics(state),
                "last_value": jnp.reshape(state.last_value, (1,)).astype(jnp.float32)}

    def reward(self, state: ArmState, action: Array, next_state: ArmState, rng: Any = None,
               params: Any = None) -> Array:
        params = self._params(params)
        pulled = next_state.budget_left < state.budget_left
        ended = next_state.done & ~state.done
        return jnp.where(ended, 0.0 - next_state.loss, jnp.where(pulled, 0.0 - params.sample_cost, 0.0))

    def transition_info(self, state: ArmState, action: Array, next_state: ArmState, params: Any = None) -> dict:
        return {}

    def episode_metrics(self, state: ArmState, params: Any = None) -> dict[str, Array]:
        """The metrics of an ended episode, as the numpy env's ``RecordEpisodeRegret`` records them: the answer's
        ``regret`` and ``error`` (and ``invalid``), the ``pulls`` made, and whether the budget ``capped`` it."""
        params = self._params(params)
        losses = self.answer_losses(state.answer, state.means, params)
        pulls = params.budget - state.budget_left
        return {**{key: value.astype(jnp.float32) for key, value in losses.items()}, "pulls": pulls,
                "capped": state.capped}


class ThresholdingFunctional(PureExplorationFunctional):
    """The thresholding bandit (tao2019) as pure functions; the arguments of ``ThresholdingBanditEnv``."""

    family = Family.THRESHOLDING
    engine_class = ThresholdingEngine
    numpy_id = "ThresholdingBandit-v0"

    def get_default_params(self, **kwargs: Any) -> ThresholdingParams:
        engine = self.engine
        return ThresholdingParams(**self.instance_params(), threshold=jnp.float32(engine.threshold),
                                  epsilon=jnp.float32(engine.epsilon), sigma=jnp.float32(engine.sigma),
                                  sample_cost=jnp.float32(engine.sample_cost), budget=jnp.int32(engine.budget))

    def side_information(self, params: Any) -> Obs:
        return {"threshold": jnp.reshape(params.threshold, (1,)), "epsilon": jnp.reshape(params.epsilon, (1,))}

    def answer_losses(self, answer: Array, means: Array, params: Any) -> dict[str, Any]:
        return {"regret": metrics.aggregate_regret(answer, means, params.threshold, params.epsilon),
                "error": metrics.error_indicator(answer, means, params.threshold, params.epsilon)}


class SetFunctional(PureExplorationFunctional):
    """A family whose answer is a set of m arms (best arm, top K)."""

    def get_default_params(self, **kwargs: Any) -> SetParams:
        engine = self.engine
        return SetParams(**self.instance_params(), m=jnp.int32(engine.m), epsilon=jnp.float32(engine.epsilon),
                         delta=jnp.float32(getattr(engine, "delta", 0.0)), sigma=jnp.float32(engine.sigma),
                         sample_cost=jnp.float32(engine.sample_cost), budget=jnp.int32(engine.budget))


class BestArmFunctional(SetFunctional):
    r"""\((\epsilon, m)\)-best arm identification (gabillon2012) as pure functions; the arguments of
    ``BestArmIdentificationEnv`` (``setting="fixed_confidence"`` takes stop actions)."""

    family = Family.BEST_ARM
    engine_class = BestArmEngine
    numpy_id = "BestArmIdentification-v0"

    def side_information(self, params: Any) -> Obs:
        return {"m": jnp.reshape(params.m, (1,)).astype(jnp.float32), "epsilon": jnp.reshape(params.epsilon, (1,))}

    def answer_losses(self, answer: Array, means: Array, params: Any) -> dict[str, Any]:
        return {"regret": metrics.set_simple_regret(answer, means, params.m),
                "error": metrics.set_error(answer, means, params.m, params.epsilon),
                "invalid": (answer.sum() != params.m).astype(jnp.float32)}


class TopKFunctional(SetFunctional):
    r"""\(\epsilon\)-top-\(K\) identification (chen2017) as pure functions; the arguments of
    ``TopKIdentificationEnv``."""

    family = Family.TOP_K
    engine_class = TopKEngine
    numpy_id = "TopKIdentification-v0"

    def side_information(self, params: Any) -> Obs:
        return {"m": jnp.reshape(params.m, (1,)).astype(jnp.float32), "epsilon": jnp.reshape(params.epsilon, (1,)),
                "delta": jnp.reshape(params.delta, (1,))}

    def answer_losses(self, answer: Array, means: Array, params: Any) -> dict[str, Any]:
        return {"regret": metrics.top_k_regret(answer, means, params.m),
                "error": metrics.top_k_error(answer, means, params.m, params.epsilon),
                "invalid": (answer.sum() != params.m).astype(jnp.float32)}
