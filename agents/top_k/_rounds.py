"""The round machinery of the phase-based top-K agents (OptMAI, AdaptiveTopK): rounds of batched pulls with
per-copy targets, kept by position in each copy's arm order (numpy, batch-native)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from bandit_gym.agents._batch import most_owed_first
from bandit_gym.agents.base import Agent, Obs
from bandit_gym.agents.scores import ArmScores

#: arm status
ACTIVE, ACCEPTED, REJECTED = 0, 1, 2

#: an agent's decision at the end of a round: ``end_round(obs, rows)``, ``obs`` by position
EndRound = Callable[[Obs, np.ndarray], None]
#: an agent's answer bits by position, ``(N, K)``, from the statistics by position
AnswerPos = Callable[[Obs], np.ndarray]


class Rounds:
    r"""The rounds of a phase-based agent (not an agent: each such agent owns one, ``agent.rounds``): each copy
    owes every arm a number of pulls (``target_pos - counts``); when a copy's pulls are all made, the agent's
    ``end_round`` decides (accepts, rejects, sets the next targets or ``finished``).

    Arm order. Every decision is taken on the copy's arms relabelled by ``order`` (the agent's ``ArmScores``,
    reshuffled by the agent per copy and episode): position p of copy n holds arm ``order.arm_at[n, p]``, a
    random order drawn from the agent's seeded generator (``tie_break="random"``, the default) or the identity
    (``tie_break="index"``). The state (``status_pos``, ``target_pos``, the agent's own ``*_pos`` arrays) is
    kept per position, ``end_round`` and the agent's ``answer_pos`` read the statistics relabelled
    (``counts_pos[n, p] = counts[n, arm_at[n, p]]``, sums alike; per-copy constants as they are), and every
    output is mapped back to arms. Every tie then goes to the first position among the tied arms: a uniformly
    random one of them (the smallest index with ``"index"``), so the results are the same in distribution
    whatever the order of the instance's arms.

    Pull by pull, ``next_arms`` pulls the arm owed the most (ties: the first position), which is round robin
    over the arms of a round in the copy's order; ``batch_pulls`` returns all the pulls owed at once (cut, in
    the same order, by the budget left). The decisions read only counts and sums, so both paths make the same
    pulls. A finished copy stops (action \(K\), \(K\) the number of arms here, \(n\) in chen2017)."""

    def __init__(self, order: ArmScores, tie_break: str) -> None:
        n, k = order.n, order.k
        self.order = order  # position -> arm, the agent's (reshuffled per copy at each episode begin)
        self.tie_break = tie_break
        self.num, self.num_arms = n, k
        base = np.arange(n, dtype=np.intp)[:, None] * k
        self._gather = base + np.arange(k)  # flat index of the arm at (n, p): n K + arm_at[n, p]
        self._scatter = self._gather.copy()  # flat index of the position of (n, arm): n K + position_of[n, arm]
        self.status_pos = np.zeros((n, k), dtype=np.int8)
        self.target_pos = np.zeros((n, k), dtype=np.int64)
        self.round = np.zeros(n, dtype=np.int64)
        self.finished = np.zeros(n, dtype=bool)

    def begin(self, rows: np.ndarray) -> None:
        """New episodes in copies ``rows``, whose orders were drawn just before (``Agent._begin``)."""
        base = rows[:, None] * self.num_arms
        self._gather[rows] = base + self.order.arm_at[rows]
        self._scatter[rows] = base + self.order.position_of[rows]
        self.status_pos[rows] = ACTIVE
        self.target_pos[rows] = 0
        self.round[rows] = 0
        self.finished[rows] = False

    def status(self) -> np.ndarray:
        """Every arm's status (``ACTIVE``, ``ACCEPTED``, ``REJECTED``) in every copy, ``(N, K)``, indexed by arm
        (a copy of the state)."""
        return self.to_arms(self.status_pos)

    def answer(self, obs: Obs, answer_pos: AnswerPos) -> np.ndarray:
        """The answer bits of every copy, ``(N, K)``, indexed by arm (``obs`` as the env gives it, batched), from
        the agent's ``answer_pos`` on the statistics by position."""
        return self.to_arms(answer_pos(self.relabel(obs)))

    # ----------------------------------------------------------------------------------------------- arm order
    def relabel(self, obs: Obs) -> Obs:
        """The statistics of ``obs`` by position: ``counts`` and ``sums`` permuted by each copy's order (O(N K)),
        the per-copy keys as they are; the other per-arm key (``means``) is left out, so that nothing reads it
        by arm. The identity order (``tie_break="index"``) returns ``obs`` itself."""
        if self.tie_break == "index":
            return obs
        rest = {key: value for key, value in obs.items() if key not in ("counts", "sums", "means")}
        return {**rest, "counts": np.ravel(obs["counts"]).take(self._gather),
                "sums": np.ravel(obs["sums"]).take(self._gather)}

    def to_arms(self, by_position: np.ndarray) -> np.ndarray:
        """Per-position values ``(N, K)`` indexed by arm: ``result[n, arm_at[n, p]] = by_position[n, p]``."""
        if self.tie_break == "index":
            return by_position.copy()
        return np.ravel(by_position).take(self._scatter)

    # ----------------------------------------------------------------------------------------------- pulls
    def owed(self, obs: Obs, end_round: EndRound) -> np.ndarray:
        """End the rounds whose pulls are all made (``end_round``), repeatedly (a round may owe nothing: SAR's
        phases of length 0 come by hundreds when the budget is small), then the pulls owed by position (``obs``
        by position). Every round removes an arm or owes pulls, so at most a few rounds per arm end in a row."""
        counts = obs["counts"].astype(np.int64)
        for _ in range(4 * self.num_arms + 64):
            done = ~self.finished & np.all(counts >= self.target_pos, axis=1)
            if not done.any():
                return np.where(self.finished[:, None], 0, np.maximum(self.target_pos - counts, 0))
            end_round(obs, np.flatnonzero(done))
        name = getattr(end_round, "__qualname__", repr(end_round))
        raise RuntimeError(f"{name}: rounds keep ending without pulls (a bug in end_round)")

    def batch_pulls(self, obs: Obs, end_round: EndRound) -> np.ndarray:
        """Every pull owed, ``(N, K)`` by arm (``obs`` as the env gives it), the most owed first when the budget
        left cuts them."""
        owed = self.owed(self.relabel(obs), end_round)
        return self.to_arms(most_owed_first(owed, obs["budget_left"][:, 0].astype(np.int64)))

    def stops(self, obs: Obs, end_round: EndRound) -> np.ndarray:
        """Where the copies are finished, ``(N,)`` bools, after ending the rounds whose pulls are all made (as
        ``next_arms`` does; ending them again on the same observation changes nothing)."""
        self.owed(self.relabel(obs), end_round)
        return self.finished.copy()

    def next_arms(self, obs: Obs, end_round: EndRound) -> np.ndarray:
        """The arm every copy pulls next, ``(N,)`` int64: the most owed (ties: the first position); K (stop)
        where nothing is owed, the copy finished."""
        owed = self.owed(self.relabel(obs), end_round)
        position = np.argmax(owed, axis=1)  # the most owed, the first position on ties
        arms = self.order.arm_at[np.arange(self.num), position].astype(np.int64)
        arms[owed.max(axis=1) == 0] = self.num_arms  # nothing owed: finished, stop
        return arms

    def act(self, agent: Agent, obs: Obs, end_round: EndRound, builtin: Callable[..., np.ndarray]) -> np.ndarray:
        """``agent``'s action buffer ``[arm, answer bits]``: ``next_arms``, then ``agent.answer`` (called after the
        rounds have ended). A subclass's own answer (``type(agent).answer`` is not ``builtin``, the agent class's
        own) is checked: nothing is cast, padded or cut."""
        action = agent._action
        action[:, 0] = self.next_arms(obs, end_round)
        bits = agent.answer(obs)
        action[:, 1:] = bits if type(agent).answer is builtin else agent._checked_answer(bits)
        return action


def answer_means(obs: Obs) -> np.ndarray:
    r"""The values an answer ranks arms by: the empirical means ``sums / counts`` (in the observation's float32),
    \(-\infty\) for an arm never pulled, which therefore ranks below every pulled arm (among such arms the earlier
    column first, see ``top_of``), whatever the sign of the pulled arms' means."""
    counts = obs["counts"]
    return np.where(counts > 0, obs["sums"] / np.maximum(counts, 1.0), -np.inf)


def top_of(values: np.ndarray, eligible: np.ndarray, count: np.ndarray) -> np.ndarray:
    r"""Bits of the ``count[n]`` largest ``values[n]`` among ``eligible[n]`` (ties: the earlier column first; the
    agents pass values by position, so a tie goes to the earlier position of the copy's arm order). An eligible
    arm of value \(-\infty\) (one never pulled, in ``answer_means``) ranks below every finite value, and still before
    every arm that is not eligible."""
    order = np.lexsort((np.where(eligible, -values, 0.0), ~eligible), axis=1)  # eligible first, then by value
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.arange(values.shape[1])[None, :].repeat(values.shape[0], axis=0), axis=1)
    return eligible & (rank < count[:, None])
