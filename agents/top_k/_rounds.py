"""The base of phase-based top-K agents: rounds of batched pulls with per-copy targets (numpy, batch-native)."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from bandit_gym.agents._batch import most_owed_first
from bandit_gym.agents.base import Agent, Obs, plays
from bandit_gym.families import Family

#: arm status
ACTIVE, ACCEPTED, REJECTED = 0, 1, 2


class RoundAgent(Agent):
    """A phase-based agent: each copy owes every arm a number of pulls (``target - counts``); when a copy's
    pulls are all made, ``end_round`` decides (accepts, rejects, sets the next targets or finishes).

    Arm order. Every decision is taken on the copy's arms relabelled by ``order`` (an ``ArmScores``): position
    p of copy n holds arm ``order.arm_at[n, p]``, a random order drawn per copy and episode from the agent's
    seeded generator (``tie_break="random"``, the default) or the identity (``tie_break="index"``). The state
    (``status_pos``, ``target_pos``, a subclass's ``*_pos`` arrays) is kept per position, the hooks ``end_round``
    and ``answer_pos`` read the statistics relabelled (``counts_pos[n, p] = counts[n, arm_at[n, p]]``, sums
    alike; per-copy constants as they are), and every output is mapped back to arms. Every tie then goes to the
    first position among the tied arms: a uniformly random one of them (the smallest index with ``"index"``),
    so the results are the same in distribution whatever the order of the instance's arms.

    Pull by pull, ``act`` pulls the arm owed the most (ties: the first position), which is round robin over
    the arms of a round in the copy's order; ``batch_pulls`` returns all the pulls owed at once (cut, in the
    same order, by the budget left). The decisions read only counts and sums, so both paths make the same pulls.
    A finished copy stops (action K, K the number of arms here, n in chen2017); the answer is ``answer``."""

    families: ClassVar[tuple[str, ...]] = ("top_k",)
    batched = True
    anytime = False

    def allocate(self, n: int, k: int) -> None:
        self.order = self.new_scores()  # position -> arm, reshuffled per copy at each episode begin
        base = np.arange(n, dtype=np.intp)[:, None] * k
        self._gather = base + np.arange(k)  # flat index of the arm at (n, p): n K + arm_at[n, p]
        self._scatter = self._gather.copy()  # flat index of the position of (n, arm): n K + position_of[n, arm]
        self.status_pos = np.zeros((n, k), dtype=np.int8)
        self.target_pos = np.zeros((n, k), dtype=np.int64)
        self.round = np.zeros(n, dtype=np.int64)
        self.finished = np.zeros(n, dtype=bool)

    def begin(self, obs: Obs, rows: np.ndarray) -> None:
        base = rows[:, None] * self.num_arms  # the copies' orders were drawn just before (``Agent._begin``)
        self._gather[rows] = base + self.order.arm_at[rows]
        self._scatter[rows] = base + self.order.position_of[rows]
        self.status_pos[rows] = ACTIVE
        self.target_pos[rows] = 0
        self.round[rows] = 0
        self.finished[rows] = False

    @property
    def status(self) -> np.ndarray:
        """Every arm's status (``ACTIVE``, ``ACCEPTED``, ``REJECTED``) in every copy, ``(N, K)``, indexed by arm
        (a copy of the state)."""
        return self.to_arms(self.status_pos)

    def end_round(self, obs: Obs, rows: np.ndarray) -> None:
        """Copies ``rows`` made every pull they owed: decide, then set new targets or ``finished``. ``obs`` holds
        the statistics by position (``relabel``)."""
        raise NotImplementedError

    def answer_pos(self, obs: Obs) -> np.ndarray:
        """The answer bits of every copy by position, ``(N, K)``, from the statistics by position (``relabel``)."""
        raise NotImplementedError

    def answer(self, obs: Obs) -> np.ndarray:
        """The answer bits of every copy, ``(N, K)``, indexed by arm (``obs`` as the env gives it, batched)."""
        return self.to_arms(self.answer_pos(self.relabel(obs)))

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

    # ----------------------------------------------------------------------------------------------- protocol
    def _owed(self, obs: Obs) -> np.ndarray:
        """End the rounds whose pulls are all made, repeatedly (a round may owe nothing: SAR's phases of length 0
        come by hundreds when the budget is small), then the pulls owed by position (``obs`` by position). Every
        round removes an arm or owes pulls, so at most a few rounds per arm end in a row."""
        counts = obs["counts"].astype(np.int64)
        for _ in range(4 * self.num_arms + 64):
            done = ~self.finished & np.all(counts >= self.target_pos, axis=1)
            if not done.any():
                return np.where(self.finished[:, None], 0, np.maximum(self.target_pos - counts, 0))
            self.end_round(obs, np.flatnonzero(done))
        raise RuntimeError(f"{type(self).__name__}: rounds keep ending without pulls (a bug in end_round)")

    def _batch_pulls(self, obs: Obs, family: Family) -> np.ndarray | None:
        owed = self._owed(self.relabel(obs))
        return self.to_arms(most_owed_first(owed, obs["budget_left"][:, 0].astype(np.int64)))

    @plays("answer")
    def _act_batch(self, obs: Obs, last: np.ndarray, family: Family) -> np.ndarray:
        owed = self._owed(self.relabel(obs))
        position = np.argmax(owed, axis=1)  # the most owed, the first position on ties
        arms = self.order.arm_at[np.arange(self.num), position].astype(np.int64)
        arms[owed.max(axis=1) == 0] = self.num_arms  # nothing owed: finished, stop
        self._action[:, 0] = arms
        bits = self.answer(obs)  # a subclass's own answer is checked: nothing is cast, padded or cut
        self._action[:, 1:] = bits if type(self).answer is RoundAgent.answer else self._checked_answer(bits)
        return self._action


def answer_means(obs: Obs) -> np.ndarray:
    """The values an answer ranks arms by: the empirical means ``sums / counts`` (in the observation's float32),
    -inf for an arm never pulled, which therefore ranks below every pulled arm (among such arms the earlier
    column first, see ``top_of``), whatever the sign of the pulled arms' means."""
    counts = obs["counts"]
    return np.where(counts > 0, obs["sums"] / np.maximum(counts, 1.0), -np.inf)


def top_of(values: np.ndarray, eligible: np.ndarray, count: np.ndarray) -> np.ndarray:
    """Bits of the ``count[n]`` largest ``values[n]`` among ``eligible[n]`` (ties: the earlier column first; the
    agents pass values by position, so a tie goes to the earlier position of the copy's arm order). An eligible
    arm of value -inf (one never pulled, in ``answer_means``) ranks below every finite value, and still before
    every arm that is not eligible."""
    order = np.lexsort((np.where(eligible, -values, 0.0), ~eligible), axis=1)  # eligible first, then by value
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.arange(values.shape[1])[None, :].repeat(values.shape[0], axis=0), axis=1)
    return eligible & (rank < count[:, None])
