r"""The threshold bandit (abernethy2016) as a functional env: a threshold \(c_t \in \{1..m\}\) is shown before each
round, the pulled arm's value \(X \in \{0..m\}\) pays \(\mathbb{1}\{X \ge c_t\}\), and \(X\) is observed in full
(``feedback="uncensored"``) or only when \(X < c_t\) (``"censored"``).

The rules are the numpy env's (``bandit_gym.envs.threshold``, its kernel ``_threshold_pull``):
\(X = \#\{j : U < F_a(j)\}\) for one uniform \(U\); the level counts of the pulled arm grow by
\(\mathbb{1}\{j \le X\}\) / 1 at every level \(j\) (uncensored) or by \(\mathbb{1}\{j \le \min(X, c_t)\}\) /
\(\mathbb{1}\{j \le c_t\}\) (censored, the modified Kaplan-Meier counts); ``last_value`` is -1 and
``last_censored`` 1 when a censored \(X\) reached \(c_t\). The thresholds follow ``thresholds=``: i.i.d. uniform, a
cyclic permutation of \(1..m\) drawn at each reset, the increasing or decreasing stages of \(\lfloor T/m \rfloor\)
rounds, or a fixed sequence. The instance is fixed (``distributions=`` or ``survival=`` as a
matrix, or a preset) or drawn per episode by ``bandit_gym.instances.RandomSurvival``. The state sums the
pseudo-regret \(\max_i F_i(c_t) - F_{I_t}(c_t)\) of every round; the episode ends after ``horizon`` rounds.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from bandit_gym.envs.threshold import ThresholdEngine
from bandit_gym.families import Family
from bandit_gym.instances import RandomSurvival
from bandit_gym.jax.envs._base import Array, BanditFunctional, Obs
from bandit_gym.jax.envs._shells import BanditJaxEnv, BanditJaxVectorEnv

THRESHOLD_INSTANCES = ("fixed", "random_survival")
"""How the threshold env gets each episode's survival matrix: ``fixed`` (``params.survival``: ``distributions=``,
a ``survival=`` matrix or a preset), or ``random_survival`` (``survival=RandomSurvival(...)``, drawn per episode
by the same rejection rule)."""

MAX_REJECTIONS = 1000
"""Rounds of rejection of ``RandomSurvival`` before giving up, as in the numpy sampler (which then raises; here
the episode's survival is NaN, see ``draw_random_survival``)."""


class ThresholdParams(NamedTuple):
    """The numbers of a threshold env that may change without recompiling."""

    #: the fixed instance ``F_i(j) = P(X_i >= j)``, ``(K, m)`` float32 (zeros when a sampler draws it)
    survival: Array
    #: the thresholds of ``thresholds=`` given as a sequence, ``(T,)`` int32 (``(1,)`` zeros otherwise)
    sequence: Array
    #: the horizon T (rounds)
    horizon: Array


class ThresholdState(NamedTuple):
    """The state of one copy of the threshold bandit."""

    #: the episode's instance ``F_i(j)``, ``(K, m)`` float32
    survival: Array
    #: pulls of each arm, ``(K,)`` float32
    counts: Array
    #: reward sums of each arm, ``(K,)`` float32
    sums: Array
    #: rounds left, T - t, int32
    budget_left: Array
    #: the arm pulled last, -1 before the first round, int32
    last_arm: Array
    #: X of the last round, -1 if it was censored (0 before the first round), float32
    last_value: Array
    #: 1 if the last observation was censored, float32
    last_censored: Array
    #: ``1{X >= c}`` of the last round, float32
    last_reward: Array
    #: c_t of the round about to be played, 0 once the episode is over, int32
    threshold: Array
    #: ``(K, m)`` float32: pulls of arm i known to have X >= j (``level_exceed`` reshaped)
    exceed: Array
    #: ``(K, m)`` float32: pulls of arm i whose outcome at level j is counted (``level_trials`` reshaped)
    trials: Array
    #: ``(K, m)`` float32: pulls of arm i at the threshold j (exact counts, from which ``episode_metrics`` sums the
    #: regret)
    pulls_at: Array
    #: ``thresholds="cyclic"``: the episode's permutation of ``1..m``, ``(m,)`` int32 (zeros otherwise)
    cycle: Array
    #: the episode has ended (after T rounds)
    done: Array
    #: the cumulative pseudo-regret ``sum_t max_i F_i(c_t) - F_{I_t}(c_t)``, float32, summed round by round
    #: (``episode_metrics`` recomputes it from ``pulls_at``, which does not drift over a long float32 episode)
    loss: Array
    #: always False: the threshold bandit never truncates (read by the shells)
    capped: Array


def draw_random_survival(key: Array, sampler: RandomSurvival) -> Array:
    """One survival matrix ``(K, m)`` of ``RandomSurvival``'s distribution: flat-Dirichlet arms redrawn until
    every level has a unique best arm ahead by ``min_gap`` (and, with ``crossing``, the best arm changes with the
    level). After ``MAX_REJECTIONS`` rejected draws the matrix is NaN (the numpy sampler raises there), so the
    episode's regret is NaN rather than an instance of another distribution."""
    k, m = sampler.num_arms, sampler.num_levels
    gap = max(sampler.min_gap, 1e-9)

    def draw(key: Array) -> tuple[Array, Array]:
        weights = jax.random.exponential(key, (k, m + 1))  # flat Dirichlet: i.i.d. Exp(1), normalised (cheaper
        p = weights / jnp.sum(weights, axis=1, keepdims=True)  # than jax.random.dirichlet's gamma draws)
        survival = jnp.clip(1.0 - jnp.cumsum(p, axis=1)[:, :-1], 0.0, 1.0)
        ranked = jnp.sort(survival, axis=0)
        ok = jnp.all(ranked[-1] - ranked[-2] >= gap)
        if sampler.crossing:
            best = jnp.argmax(survival, axis=0)
            ok &= jnp.any(best != best[0])
        return survival.astype(jnp.float32), ok

    def going(carry: tuple[Array, Array, Array, Array]) -> Array:
        rounds, _, _, ok = carry
        return ~ok & (rounds < MAX_REJECTIONS)

    def again(carry: tuple[Array, Array, Array, Array]) -> tuple[Array, Array, Array, Array]:
        rounds, key, _, _ = carry
        key, sub = jax.random.split(key)
        survival, ok = draw(sub)
        return rounds + 1, key, survival, ok

    start = (jnp.int32(0), key, jnp.zeros((k, m), dtype=jnp.float32), jnp.bool_(False))
    _, _, survival, ok = jax.lax.while_loop(going, again, start)
    return jnp.where(ok, survival, jnp.nan)


class ThresholdFunctional(BanditFunctional):
    r"""The threshold bandit (abernethy2016) as pure functions; the arguments of ``ThresholdBanditEnv``
    (``distributions``, ``survival``, ``thresholds``, ``feedback``, ``horizon``).

    The action is the arm (an int32 scalar; out of range it is clipped, the numpy env refuses it). The reward is
    \(\mathbb{1}\{X \ge c_t\}\); ``episode_metrics`` gives the cumulative pseudo-regret and the pulls."""

    family = Family.THRESHOLD
    engine_class = ThresholdEngine
    numpy_id = "ThresholdBandit-v0"

    engine: ThresholdEngine

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.num_levels = int(self.engine.num_levels)
        #: ``iid``, ``cyclic``, ``increasing``, ``decreasing`` or ``sequence`` (thresholds given as T levels)
        self.regime: str = self.engine.thresholds
        self.censored = bool(self.engine.censored)

    # ----------------------------------------------------------------------------------------------- instance
    def _instance_kind(self) -> str:
        sampler = self.engine.sampler
        if sampler is None:
            return "fixed"
        if type(sampler) is RandomSurvival:
            return "random_survival"
        raise ValueError(f"{type(self).__name__}: survival={sampler!r} is not supported by the JAX envs; allowed: a "
                         "fixed instance (distributions=, a survival matrix, a preset) or "
                         "survival=bandit_gym.instances.RandomSurvival(...) (use the numpy env "
                         f"{self.numpy_id} for other samplers)")

    def instance_params(self) -> dict[str, Array]:
        """The fixed survival matrix (zeros when ``RandomSurvival`` draws one per episode)."""
        engine = self.engine
        fixed = engine.default_survival if engine.sampler is None else np.zeros(engine.default_survival.shape)
        return {"survival": jnp.asarray(fixed, dtype=jnp.float32)}

    def draw_survival(self, key: Array, params: Any) -> Array:
        """The survival matrix of a new episode, ``(K, m)``."""
        sampler = self.engine.sampler
        if isinstance(sampler, RandomSurvival):  # the instance kind "random_survival"
            return draw_random_survival(key, sampler)
        return params.survival

    def draw_means(self, key: Array, params: Any) -> Array:
        """The instance of a new episode: here its survival matrix ``(K, m)`` (the family has no means)."""
        return self.draw_survival(key, params)

    def get_default_params(self, **kwargs: Any) -> ThresholdParams:
        engine = self.engine
        sequence = engine._sequence if engine._sequence is not None else np.zeros(1, dtype=np.int64)
        return ThresholdParams(**self.instance_params(), sequence=jnp.asarray(sequence, dtype=jnp.int32),
                               horizon=jnp.int32(engine.horizon))

    # ----------------------------------------------------------------------------------------------- thresholds
    def threshold_at(self, rounds: Array, cycle: Array, key: Array, params: Any) -> Array:
        """The threshold of the round with 0-based index ``rounds`` (the numpy engine's ``_threshold_at``)."""
        m = self.num_levels
        if self.regime == "iid":
            return jax.random.randint(key, (), 1, m + 1, dtype=jnp.int32)
        if self.regime == "cyclic":
            return cycle[rounds % m]
        if self.regime == "sequence":
            return params.sequence[jnp.clip(rounds, 0, params.sequence.shape[0] - 1)].astype(jnp.int32)
        stage = jnp.minimum(rounds // jnp.maximum(params.horizon // m, 1), m - 1).astype(jnp.int32)
        return stage + 1 if self.regime == "increasing" else m - stage

    # ----------------------------------------------------------------------------------------------- FuncEnv
    def initial(self, rng: Array, params: Any = None) -> ThresholdState:  # type: ignore[override]
        params = self._params(params)
        k, m = self.num_arms, self.num_levels
        draw_key, cycle_key, threshold_key = jax.random.split(rng, 3)
        if self.regime == "cyclic":
            cycle = jax.random.permutation(cycle_key, jnp.arange(1, m + 1, dtype=jnp.int32))
        else:
            cycle = jnp.zeros(m, dtype=jnp.int32)
        zero_k, zero_km = jnp.zeros(k, dtype=jnp.float32), jnp.zeros((k, m), dtype=jnp.float32)
        return ThresholdState(
            survival=self.draw_survival(draw_key, params), counts=zero_k, sums=zero_k,
            budget_left=jnp.asarray(params.horizon, dtype=jnp.int32), last_arm=jnp.int32(-1),
            last_value=jnp.float32(0.0), last_censored=jnp.float32(0.0), last_reward=jnp.float32(0.0),
            threshold=self.threshold_at(jnp.int32(0), cycle, threshold_key, params), exceed=zero_km,
            trials=zero_km, pulls_at=zero_km, cycle=cycle, done=jnp.bool_(False), loss=jnp.float32(0.0),
            capped=jnp.bool_(False),
        )

    def transition(self, state: ThresholdState, action: Array, rng: Array,  # type: ignore[override]
                   params: Any = None) -> ThresholdState:
        params = self._params(params)
        k, m = self.num_arms, self.num_levels
        pulling = ~state.done
        arm = jnp.reshape(jnp.asarray(action), (-1,))[0]  # a scalar, or the one-entry action of a wrapper
        a = jnp.clip(arm.astype(jnp.int32), 0, k - 1)
        value_key, threshold_key = jax.random.split(rng)
        c = jnp.clip(state.threshold, 1, m)  # 0 only once the episode is over, where nothing is pulled
        f_a = state.survival[a]
        x = jnp.sum(jax.random.uniform(value_key) < f_a).astype(jnp.int32)
        won = x >= c
        regret = jnp.max(state.survival[:, c - 1]) - f_a[c - 1]
        if self.censored:
            known, counted = jnp.minimum(x, c), c
        else:
            known, counted = x, jnp.int32(m)
        levels = jnp.arange(m)
        step = jnp.where(pulling, 1.0, 0.0)
        budget_left = state.budget_left - pulling.astype(jnp.int32)
        rounds = params.horizon - budget_left
        done = state.done | (pulling & (rounds >= params.horizon))
        upcoming = self.threshold_at(rounds, state.cycle, threshold_key, params)
        hidden = won & self.censored
        return state._replace(
            counts=state.counts.at[a].add(step),
            sums=state.sums.at[a].add(step * won),
            budget_left=budget_left,
            last_arm=jnp.where(pulling, a, state.last_arm),
            last_value=jnp.where(pulling, jnp.where(hidden, -1.0, x.astype(jnp.float32)), state.last_value),
            last_censored=jnp.where(pulling, hidden.astype(jnp.float32), state.last_censored),
            last_reward=jnp.where(pulling, won.astype(jnp.float32), state.last_reward),
            threshold=jnp.where(done, 0, jnp.where(pulling, upcoming, state.threshold)).astype(jnp.int32),
            exceed=state.exceed.at[a].add(step * (levels < known)),
            trials=state.trials.at[a].add(step * (levels < counted)),
            pulls_at=state.pulls_at.at[a, c - 1].add(step),
            done=done,
            loss=state.loss + jnp.where(pulling, regret, 0.0).astype(jnp.float32),
        )

    def observation(self, state: ThresholdState, rng: Any = None,  # type: ignore[override]
                    params: Any = None) -> Obs:
        def one(value: Array) -> Array:
            return jnp.reshape(value, (1,)).astype(jnp.float32)

        return {**self.statistics(state),  # type: ignore[arg-type]
                "threshold": one(state.threshold), "last_value": one(state.last_value),
                "last_censored": one(state.last_censored), "last_reward": one(state.last_reward),
                "level_exceed": jnp.reshape(state.exceed, (-1,)), "level_trials": jnp.reshape(state.trials, (-1,))}

    def reward(self, state: ThresholdState, action: Array, next_state: ThresholdState,  # type: ignore[override]
               rng: Any = None, params: Any = None) -> Array:
        return jnp.where(state.done, 0.0, next_state.last_reward)

    def transition_info(self, state: Any, action: Array, next_state: Any, params: Any = None) -> dict:
        r"""The numpy env's info: ``expected_reward`` \(F_{I_t}(c_t)\) and ``best_expected_reward``
        \(\max_i F_i(c_t)\) of the round played (0 where none was)."""
        played = ~state.done
        c = jnp.clip(state.threshold, 1, self.num_levels) - 1
        arm = jnp.clip(next_state.last_arm, 0, self.num_arms - 1)
        return {"expected_reward": jnp.where(played, state.survival[arm, c], 0.0),
                "best_expected_reward": jnp.where(played, jnp.max(state.survival[:, c]), 0.0)}

    def episode_metrics(self, state: ThresholdState,  # type: ignore[override]
                        params: Any = None) -> dict[str, Array]:
        r"""The metrics of an ended episode, as the numpy env's ``RecordEpisodeRegret`` records them: the
        cumulative pseudo-regret ``regret`` (\(\sum_{i, j} (\max_l F_l(j) - F_i(j)) N_i(j)\) over the exact pull
        counts \(N_i(j)\) at each threshold) and the rounds played ``pulls``."""
        params = self._params(params)
        gaps = jnp.max(state.survival, axis=0) - state.survival
        return {"regret": jnp.sum(gaps * state.pulls_at).astype(jnp.float32),
                "pulls": params.horizon - state.budget_left}


class ThresholdBanditJaxEnv(BanditJaxEnv):
    """The threshold bandit (abernethy2016), one copy, JAX arrays; the arguments of ``ThresholdBanditEnv``."""

    functional = ThresholdFunctional


class ThresholdBanditJaxVectorEnv(BanditJaxVectorEnv):
    """The threshold bandit (abernethy2016), ``num_envs`` copies stepped by one compiled function."""

    functional = ThresholdFunctional


__all__ = [
    "MAX_REJECTIONS",
    "THRESHOLD_INSTANCES",
    "ThresholdBanditJaxEnv",
    "ThresholdBanditJaxVectorEnv",
    "ThresholdFunctional",
    "ThresholdParams",
    "ThresholdState",
    "draw_random_survival",
]
