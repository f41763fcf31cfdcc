"""AdaptiveTopK (chen2017, Algorithm 1), fixed confidence and its fixed-budget conversion, as pure functions of one
copy."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from bandit_gym import _validation as check
from bandit_gym.agents.top_k.adaptive_top_k import round_size as numpy_round_size
from bandit_gym.jax.agents._base import ArmOrder, Array, JaxAgent, Obs
from bandit_gym.jax.agents.successive_rejects import answer_values, best_of

FORMS = ("fixed_budget", "pac")
SCHEDULES = ("printed", "log-free")
#: arm status (the numpy ``bandit_gym.agents.top_k._rounds``)
ACTIVE, ACCEPTED, REJECTED = 0, 1, 2
#: a round size is capped here (a round longer than any budget ends the episode all the same), so that targets fit
#: in int32
_LONGEST = 2**30


class RoundState(NamedTuple):
    """The state of AdaptiveTopK in one copy, kept by position in the copy's arm order."""

    #: the copy's arm order and budget
    order: ArmOrder
    #: every position's status: ``ACTIVE`` (in S), ``ACCEPTED`` (in A) or ``REJECTED``, ``(n,)`` int32
    status: Array
    #: the pulls every active position has at the end of the round, ``(n,)`` int32 (0 elsewhere)
    target: Array
    #: the round r (0 before the first), int32
    round: Array
    #: the copy finished (the guards or, in the PAC form, the outer loop): it stops
    finished: Array
    #: the counts and sums at the start of the round (for the round's fresh means), ``(n,)`` float32 each
    start_counts: Array
    start_sums: Array
    #: the last round's theta~ (the PAC form's answer), ``(n,)`` float32
    last_theta: Array


def round_size(r: Array, n: int, delta: Array, scale: float, schedule: str) -> Array:
    r"""\(m_r = \lceil \text{scale} \cdot 4^r \ln(2 n r^2 / \delta) \rceil\) (``"printed"``) or
    \(\lceil \text{scale} \cdot 4^{r-1} \rceil\) (``"log-free"``) in float32, capped at \(2^{30}\): the sizes of a
    \(\delta\) read from the observation (``AdaptiveTopK.sizes`` uses the exact ``size_table`` otherwise)."""
    r = r.astype(jnp.float32)
    if schedule == "log-free":
        base = 4.0 ** (r - 1.0)
    else:
        base = 4.0**r * (jnp.log(2.0 * n) + 2.0 * jnp.log(r) - jnp.log(delta))
    return jnp.minimum(jnp.ceil(scale * base), jnp.float32(_LONGEST)).astype(jnp.int32)


def size_table(n: int, delta: float, scale: float, schedule: str) -> np.ndarray:
    r"""\(m_1, m_2, \dots\) by the numpy agent's own float64 ``round_size`` (so the same numbers), up to the first
    round of \(2^{30}\) pulls or more, which is capped at \(2^{30}\) and stands for every later round."""
    sizes = []
    for r in range(1, 2048):
        size = int(numpy_round_size(np.array([r]), n, np.asarray(delta, dtype=np.float64), scale, schedule)[0])
        sizes.append(min(size, _LONGEST))
        if size >= _LONGEST:
            break
    return np.asarray(sizes, dtype=np.int32)


def accept_reject(theta: Array, status: Array, k: Array, threshold: Array) -> Array:
    r"""AdaptiveTopK's inner loop (chen2017 Algorithm 1, lines 6-14) by position; returns the new status.

    With \(S\) (the active positions) sorted by decreasing \(\theta\) (ties: the smaller position first),
    \(k' = K - \lvert A \rvert\), \(\theta_a\) / \(\theta_b\) the \((k'+1)\)-th / \(k'\)-th of \(S\): while
    \(k' > 0\) and \(\lvert S \rvert > k'\), the arm of largest \(\max(\theta_i - \theta_a, \theta_b - \theta_i)\)
    (the first or the last of \(S\)) leaves if that gap exceeds ``threshold``: accepted if it is the first
    (\(\theta_x > \theta_a\)), rejected otherwise. Ties as the numpy rule (``accept_reject_rule``): on equal gaps the
    first of \(S\) leaves unless the last one's tied block starts at a smaller position; a bottom removal takes the
    smallest position of the arms tied at the lowest value."""
    n = theta.shape[-1]
    positions = jnp.arange(n)
    active = status == ACTIVE
    order = jnp.lexsort((positions, -theta, ~active))  # S first, by theta (descending), then by position
    value = theta[order]
    size = jnp.sum(active).astype(jnp.int32)
    alive = positions < size  # by rank in ``order``: the members of S not removed yet
    left = k - jnp.sum(status == ACCEPTED).astype(jnp.int32)

    def going(carry: tuple[Array, Array, Array, Array]) -> Array:
        alive, left, _, clear = carry
        return ~clear & (left > 0) & (jnp.sum(alive) > left)

    def remove(carry: tuple[Array, Array, Array, Array]) -> tuple[Array, Array, Array, Array]:
        alive, left, status, _ = carry
        rank = jnp.cumsum(alive.astype(jnp.int32))
        hi = jnp.argmax(alive)  # the first of S
        lo = n - 1 - jnp.argmax(alive[::-1])  # the last of S
        theta_b = value[jnp.argmax(alive & (rank == left))]
        theta_a = value[jnp.argmax(alive & (rank == left + 1))]
        top_gap, bottom_gap = value[hi] - theta_a, theta_b - value[lo]
        best = jnp.maximum(top_gap, bottom_gap)
        bottom_first = jnp.argmax(alive & (value == value[lo]))  # the smallest position tied at the bottom
        take_top = (top_gap == best) & ((bottom_gap < best) | (order[hi] < order[bottom_first]))
        leaving = jnp.where(take_top, hi, bottom_first)
        clear = best <= threshold
        gone = (positions == leaving) & ~clear
        decided = jnp.where(take_top, ACCEPTED, REJECTED)
        status = jnp.where((positions == order[leaving]) & ~clear, decided, status)
        return alive & ~gone, left - (take_top & ~clear).astype(jnp.int32), status, clear

    _, _, status, _ = jax.lax.while_loop(going, remove, (alive, left, status, jnp.bool_(False)))
    return status


@dataclass(frozen=True)
class AdaptiveTopK(JaxAgent):
    r"""Adaptive top-\(K\): rounds of uniform sampling of the surviving arms at accuracy \(2^{-r}\), accepting and
    rejecting every arm whose empirical gap is clear.

    Paper: chen2017, Algorithm 1 (fixed confidence) and §3 (the fixed-budget conversion of the experiments). Here
    \(K\) is the set size (the observation's ``m``) and \(n\) the number of arms.

    Round \(r = 1, 2, \dots\): every arm of \(S\) is pulled up to \(m_r\) more times (round robin in the copy's arm
    order); then \(\tilde\theta\) is each arm's mean (over the round's samples, or over all of them when
    ``pooled``) and, while an arm is clear (\(\max_S \tilde\Delta > 2 \cdot 2^{-r}\),
    \(\tilde\Delta_i = \max(\tilde\theta_i - \tilde\theta_a, \tilde\theta_b - \tilde\theta_i)\) with
    \(\tilde\theta_a\) / \(\tilde\theta_b\) the \((k'+1)\)-th / \(k'\)-th largest over \(S\),
    \(k' = K - \lvert A \rvert\)), the arm of largest \(\tilde\Delta\) leaves \(S\), accepted if
    \(\tilde\theta_x > \tilde\theta_a\), else rejected (``accept_reject``). Guards: \(k' = 0\) or
    \(\lvert S \rvert \le k'\) ends. Round sizes \(m_r\) as ``round_size`` (``schedule``, ``scale``).
    ``form="fixed_budget"`` (default): rounds until the budget runs out; the answer is \(A\) plus the
    \(K - \lvert A \rvert\) arms of \(S\) of largest mean over all their samples (an arm never pulled last); a copy
    the guards end stops. ``form="pac"``: rounds while \(2 \cdot 2^{-r} (K - \lvert A \rvert) > \epsilon K\)
    (tested after each round), then \(A\) plus the arms of \(S\) of largest last-round \(\tilde\theta\).

    Parameters as the numpy agent's: ``delta`` (None: the observation's), ``pooled`` (None: pooled whenever the
    rounds are shortened, ``scale < 1`` or the log-free schedule), ``form``, ``scale``, ``schedule``,
    ``tie_break``; pass them by keyword.

    Equal in distribution to ``bandit_gym.agents.AdaptiveTopK`` (its docstring gives the paper's text and the
    readings where it is silent): the state is kept by position in the copy's arm order, so every tie (in the
    ranks, for the largest gap, in the answer, in the order of the pulls) goes to the arm first in the order
    (random per copy and episode, the identity with ``tie_break="index"``), as the numpy rule's do.

    The gaps are compared on the sums, exactly, as the numpy agent compares them (every arm of \(S\) has the same
    number of samples at a round's end), and the round sizes are the numpy agent's own (``size_table``) when
    \(\delta\) is the agent's or the schedule log-free. Differences: with \(\delta\) read from the observation the
    printed round sizes are computed in float32 (``round_size``: equal to numpy's on the settings tested; they
    could differ only where \(\text{scale} \cdot 4^r \ln(2 n r^2 / \delta)\) lies within a float32 rounding of an
    integer); the PAC form's answer ranks float32 means (numpy: float64); the state is recomputed where ``stop``
    reads it (a round's end is decided twice).
    """

    families: ClassVar[tuple[str, ...]] = ("top_k",)
    numpy_agent: ClassVar[str] = "AdaptiveTopK"

    delta: float | None = None
    pooled: bool | None = None
    form: str = "fixed_budget"
    scale: float = 1.0
    schedule: str = "printed"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.delta is not None:
            object.__setattr__(self, "delta", check.real("delta", self.delta, low=0.0, high=1.0, low_open=True,
                                                         high_open=True))
        if self.pooled is not None and not isinstance(self.pooled, (bool, np.bool_)):
            raise TypeError(f"pooled must be None, True or False, got {self.pooled!r}")
        object.__setattr__(self, "pooled", None if self.pooled is None else bool(self.pooled))
        object.__setattr__(self, "form", check.choice("form", self.form, FORMS))
        object.__setattr__(self, "scale", check.real("scale", self.scale, low=0.0, low_open=True))
        object.__setattr__(self, "schedule", check.choice("schedule", self.schedule, SCHEDULES))

    @property
    def pools(self) -> bool:
        r"""Whether \(\tilde\theta\) pools all of an arm's samples (the default: whenever the rounds are
        shortened)."""
        return self.pooled if self.pooled is not None else (self.scale < 1.0 or self.schedule != "printed")

    def init(self, key: Array, obs: Obs) -> RoundState:
        order = super().init(key, obs)
        n = obs["counts"].shape[-1]
        zeros = jnp.zeros(n, jnp.float32)
        return RoundState(order=order, status=jnp.full(n, ACTIVE, jnp.int32), target=jnp.zeros(n, jnp.int32),
                          round=jnp.int32(0), finished=jnp.bool_(False), start_counts=zeros, start_sums=zeros,
                          last_theta=zeros)

    # ------------------------------------------------------------------------------------------------ rounds
    def sizes(self, r: Array, n: int, obs: Obs) -> Array:
        r"""\(m_r\): from the exact ``size_table`` when \(\delta\) is the agent's or the schedule is log-free, in
        float32 (``round_size``) when \(\delta\) is the observation's."""
        if self.delta is None and self.schedule == "printed":
            return round_size(r, n, obs["delta"][0], self.scale, self.schedule)
        table = jnp.asarray(size_table(n, 0.5 if self.delta is None else self.delta, self.scale, self.schedule))
        return table[jnp.clip(r, 1, table.shape[0]) - 1]

    def end_round(self, state: RoundState, counts: Array, sums: Array, obs: Obs) -> RoundState:
        """The round just completed decides (accept / reject), then the copy finishes or starts the next round.
        ``counts`` and ``sums`` are by position."""
        n, k = counts.shape[-1], obs["m"][0].astype(jnp.int32)
        r = state.round
        played = r > 0
        active = state.status == ACTIVE
        fresh_counts = counts if self.pools else counts - state.start_counts
        fresh_sums = sums if self.pools else sums - state.start_sums
        theta = jnp.where(active, fresh_sums / jnp.maximum(fresh_counts, 1.0), 0.0)
        threshold = 2.0 * jnp.exp2(-r.astype(jnp.float32))
        # every arm of S has the same number of samples at a round's end: compare the sums, exactly
        common = jnp.max(jnp.where(active, fresh_counts, 0.0))
        exact = jnp.all(~active | (fresh_counts == common))
        values = jnp.where(exact, jnp.where(active, fresh_sums, 0.0), theta)
        decided = accept_reject(values, state.status, k, jnp.where(exact, threshold * common, threshold))
        status = jnp.where(played, decided, state.status)
        last_theta = jnp.where(played, theta, state.last_theta)
        left = k - jnp.sum(status == ACCEPTED).astype(jnp.int32)
        done = (left <= 0) | (jnp.sum(status == ACTIVE).astype(jnp.int32) <= left)
        if self.form == "pac":  # the outer loop: go on while 2 2^-r (K - |A|) > epsilon K
            done |= played & (threshold * left.astype(jnp.float32) <= obs["epsilon"][0] * k.astype(jnp.float32))
        size = self.sizes(r + 1, n, obs)
        target = jnp.where(status == ACTIVE, counts.astype(jnp.int32) + size, 0)
        return state._replace(status=status, last_theta=last_theta, finished=done,
                              round=jnp.where(done, r, r + 1),
                              target=jnp.where(done, state.target, target),
                              start_counts=jnp.where(done, state.start_counts, counts),
                              start_sums=jnp.where(done, state.start_sums, sums))

    def end_rounds(self, state: RoundState, counts: Array, sums: Array, obs: Obs) -> RoundState:
        """End the rounds whose pulls are all made (at most two in a row: a new round owes every active arm at
        least one pull)."""

        def ending(s: RoundState) -> Array:
            return ~s.finished & jnp.all(counts >= s.target.astype(jnp.float32))

        return jax.lax.while_loop(ending, lambda s: self.end_round(s, counts, sums, obs), state)

    def advanced(self, state: RoundState, obs: Obs) -> tuple[RoundState, Array]:
        """The state after the rounds that ``obs`` ends, and the counts by position."""
        counts, sums = obs["counts"][state.order.arm_at], obs["sums"][state.order.arm_at]
        return self.end_rounds(state, counts, sums, obs), counts

    # ------------------------------------------------------------------------------------------- the protocol
    def select(self, state: RoundState, obs: Obs, key: Array) -> tuple[Array, RoundState]:
        state, counts = self.advanced(state, obs)
        owed = jnp.where(state.status == ACTIVE, state.target.astype(jnp.float32) - counts, 0.0)
        return state.order.arm_at[jnp.argmax(owed)], state  # the most owed, the first position on ties

    def stop(self, state: RoundState, obs: Obs) -> Array:
        return self.advanced(state, obs)[0].finished

    def answer(self, state: RoundState, obs: Obs, key: Array) -> Array:
        r"""\(A\) plus the \(K - \lvert A \rvert\) arms of \(S\) of largest mean (last-round \(\tilde\theta\) when the
        PAC form finished, all samples otherwise; an arm never pulled last; ties: the first position); mapped back
        to arms."""
        order = state.order
        counts, sums = obs["counts"][order.arm_at], obs["sums"][order.arm_at]
        k = obs["m"][0].astype(jnp.int32)
        accepted, active = state.status == ACCEPTED, state.status == ACTIVE
        values = answer_values(counts, sums)
        if self.form == "pac":
            values = jnp.where(state.finished, state.last_theta, values)
        bits = accepted | best_of(values, active, k - jnp.sum(accepted).astype(jnp.int32))
        return bits[order.position_of].astype(jnp.int32)
