"""The base of phase-based top-K agents: rounds of batched pulls with per-copy targets (numpy, batch-native)."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from bandit_gym.agents._batch import most_owed_first
from bandit_gym.agents.base import Agent, Obs
from bandit_gym.families import Family

#: arm status
ACTIVE, ACCEPTED, REJECTED = 0, 1, 2


class RoundAgent(Agent):
    """A phase-based agent: each copy owes every arm a number of pulls (``target - counts``); when a copy's
    pulls are all made, ``end_round`` decides (accepts, rejects, sets the next targets or finishes).

    Pull by pull, ``act`` pulls the arm owed the most (ties: the smallest index), which is round robin over
    the arms of a round; ``batch_pulls`` returns all the pulls owed at once (cut, in the same order, by the
    budget left). The decisions read only counts and sums, so both paths make the same pulls. A finished copy
    stops (action K, K the number of arms here, n in chen2017); the answer is ``answer``."""

    families: ClassVar[tuple[str, ...]] = ("top_k",)
    batched = True
    anytime = False

    def allocate(self, n: int, k: int) -> None:
        self.status = np.zeros((n, k), dtype=np.int8)
        self.target = np.zeros((n, k), dtype=np.int64)
        self.round = np.zeros(n, dtype=np.int64)
        self.finished = np.zeros(n, dtype=bool)

    def begin(self, obs: Obs, rows: np.ndarray) -> None:
        self.status[rows] = ACTIVE
        self.target[rows] = 0
        self.round[rows] = 0
        self.finished[rows] = False

    def end_round(self, obs: Obs, rows: np.ndarray) -> None:
        """Copies ``rows`` made every pull they owed: decide, then set new targets or ``finished``."""
        raise NotImplementedError

    def answer(self, obs: Obs) -> np.ndarray:
        """The answer bits of every copy, ``(N, K)``."""
        raise NotImplementedError

    # ----------------------------------------------------------------------------------------------- protocol
    def _owed(self, obs: Obs) -> np.ndarray:
        """End the rounds whose pulls are all made, repeatedly (a round may owe nothing: SAR's phases of length 0
        come by hundreds when the budget is small), then the pulls owed. Every round removes an arm or owes
        pulls, so at most a few rounds per arm end in a row."""
        counts = obs["counts"].astype(np.int64)
        for _ in range(4 * self.num_arms + 64):
            done = ~self.finished & np.all(counts >= self.target, axis=1)
            if not done.any():
                return np.where(self.finished[:, None], 0, np.maximum(self.target - counts, 0))
            self.end_round(obs, np.flatnonzero(done))
        raise RuntimeError(f"{type(self).__name__}: rounds keep ending without pulls (a bug in end_round)")

    def _batch_pulls(self, obs: Obs, family: Family) -> np.ndarray | None:
        return most_owed_first(self._owed(obs), obs["budget_left"][:, 0].astype(np.int64))

    def _act_batch(self, obs: Obs, last: np.ndarray, family: Family) -> np.ndarray:
        owed = self._owed(obs)
        arms = np.argmax(owed, axis=1)  # the most owed, the smallest index on ties
        arms[owed.max(axis=1) == 0] = self.num_arms  # nothing owed: finished, stop
        self._action[:, 0] = arms
        self._action[:, 1:] = self.answer(obs)
        return self._action


def answer_means(obs: Obs) -> np.ndarray:
    """The values an answer ranks arms by: the empirical means ``sums / counts`` (in the observation's float32),
    -inf for an arm never pulled, which therefore ranks below every pulled arm (among such arms the smaller
    index first, see ``top_of``), whatever the sign of the pulled arms' means."""
    counts = obs["counts"]
    return np.where(counts > 0, obs["sums"] / np.maximum(counts, 1.0), -np.inf)


def top_of(values: np.ndarray, eligible: np.ndarray, count: np.ndarray) -> np.ndarray:
    """Bits of the ``count[n]`` largest ``values[n]`` among ``eligible[n]`` (ties: the smaller index first). An
    eligible arm of value -inf (one never pulled, in ``answer_means``) ranks below every finite value, and
    still before every arm that is not eligible."""
    order = np.lexsort((np.where(eligible, -values, 0.0), ~eligible), axis=1)  # eligible first, then by value
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.arange(values.shape[1])[None, :].repeat(values.shape[0], axis=0), axis=1)
    return eligible & (rank < count[:, None])
