"""KMUCB, the Kaplan-Meier UCB for censored feedback under cyclic-permutation thresholds (abernethy2016 §5.2)."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from bandit_gym.agents.base import Agent, Obs
from bandit_gym.agents.threshold_bandit._levels import current_levels, level_counts, num_levels, survival_estimate


class KMUCB(Agent):
    r"""Epoch-based elimination, level by level, on the modified Kaplan-Meier estimator.

    Paper: abernethy2016 §5.2, Algorithm 1, Theorem 5.

    Epochs of \(K m\) rounds; levels \(j = 1, \dots, m\) are resolved in increasing order. In a round with
    threshold \(c_t = j'\): if \(j' < j\) (level \(j'\) resolved) pull the arm kept for \(j'\); otherwise pull arm
    \(\mathrm{count}[j'] - 1\) (0-based), where \(\mathrm{count}[j']\) counts the rounds at level \(j'\) in this
    epoch, so each arm is pulled once per level per epoch. After epoch \(k\), with the estimates
    \(\hat F(j) = D(j) / N(j)\) of all data:

    $$
    \hat\imath = \operatorname*{arg\,max}_i \hat F_i(j), \qquad r_k = \sqrt{\frac{16 \log(T k)}{(m - j + 1) k}}
    $$

    and if \(\hat F_{\hat\imath}(j) - \hat F_i(j) \ge r_k\) for every \(i \ne \hat\imath\): keep \(\hat\imath\) for
    level \(j\), \(j \leftarrow j + 1\).

    Theorem 5:
    \(\mathbb{E}[\mathrm{Regret}_T] \le \sum_i 128 \max_j \Delta_i(j) \log T \log m / \min \Delta^2 + O(1)\):
    \(\log m\), not \(m\). \(T\) is read at the episode start: horizon-aware. Calling ``act`` twice on one observation
    returns the same arm (a round is counted once, recognised by ``budget_left``). Deviations: none on
    cyclic-permutation thresholds.

    Readings where the paper is silent or its text was garbled in extraction:

    - the data of the test: the paper's \(\hat F^{t_k}\) would, by eq. 8's sums over \(\tau < t\), leave out
      round \(t_k\), the epoch's last; we include it, so that every arm has the \((m - j + 1) k\) pulls at levels
      \(\ge j\) that the radius assumes.
    - the comparison sign of the test was lost; we use \(\ge\) (\(>\) is as plausible; it matters only on exact
      equality).
    - \(\log(T k)\) is read as the natural log of the product \(T\) times \(k\) (the epoch number).
    - at most one level is resolved per epoch (the printed ``if``, not a ``while``).
    - the \(\operatorname{arg\,max}\) runs over all arms \([K]\) as printed, and the test over every other arm (\(L_j\)
      is still \([K]\) when level \(j\) is tested); ties in the \(\operatorname{arg\,max}\) follow the agent's tie rule
      (a random arm order per copy and episode by default; a tie at the top never passes the test).
    - exploration order: the paper's \(I_t \leftarrow \mathrm{count}[j']\) is arm number \(\mathrm{count}[j']\) in
      \(1, \dots, K\), index order; we
      take the arm at that position of the copy's arm order (random per copy and episode, the tie rule; index
      order with ``tie_break="index"``). On cyclic thresholds every arm is pulled once per level per epoch either
      way; on sequences that break the block property the index order pulled the low indices more.
    - leftover rounds (\(T \bmod K m\), after the last full epoch): the paper's loop stops at
      \(\lfloor T / (K m) \rfloor\) epochs; we continue the in-epoch rule with the current level and kept arms,
      without a final test.
    - sequences that break the block property (a level seen more than \(K\) times in an epoch, e.g. i.i.d.
      thresholds) fall back to the arm \((\mathrm{count}[j'] - 1) \bmod K\) (not in the paper), so the agent runs
      on any threshold sequence, without the theorem.
    - the min in Theorem 5 is read over the suboptimal pairs \((i, j)\) (\(\Delta_i(j) > 0\)), and the place of
      \(\log m\) in the bound is read off garbled text.
    - the observation after the last round (\(c = 0\)) is read as level 1.
    - on an uncensored env the observation's counts are those of eq. 5 (every pull counts at every level), so
      the test runs on the empirical survival function instead of eq. 8; the paper runs KMUCB only censored.

    Examples:
        One seeded episode (threshold bandit) and the record of ``RecordEpisodeRegret``
        that ``play_episode`` returns:

        >>> import gymnasium as gym
        >>> from bandit_gym.agents import KMUCB
        >>> from bandit_gym.rollout import play_episode
        >>> env = gym.make("ThresholdBandit-v0", horizon=200)
        >>> result = play_episode(env, KMUCB(), seed=0)
        >>> result["pulls"], round(result["regret"], 3)
        (200, 46.35)
    """

    level_keys: ClassVar[bool] = True

    families: ClassVar[tuple[str, ...]] = ("threshold",)
    anytime: ClassVar[bool] = False

    def allocate(self, n: int, k: int) -> None:
        self.scores = self.new_scores()  # its arm order: the exploration order and the epoch-end argmax's ties
        self.level = np.ones(n, dtype=np.int64)               # j: the level being resolved (m + 1: all done)
        self.kept = np.zeros((n, 1), dtype=np.int64)          # arm kept for each resolved level
        self.count = np.zeros((n, 1), dtype=np.int64)         # rounds per level in the current epoch
        self.choice = np.zeros(n, dtype=np.int64)
        self.left_seen = np.full(n, -1, dtype=np.int64)

    def begin(self, obs: Obs, rows: np.ndarray) -> None:
        m = num_levels(obs)
        if self.kept.shape[1] != m:
            self.kept = np.zeros((self.num, m), dtype=np.int64)
            self.count = np.zeros((self.num, m), dtype=np.int64)
        self.level[rows] = 1
        self.kept[rows] = 0
        self.count[rows] = 0
        self.left_seen[rows] = -1

    def select(self, obs: Obs) -> np.ndarray:
        left = obs["budget_left"][:, 0].astype(np.int64)
        new = np.flatnonzero(left != self.left_seen)
        if new.size:
            self.left_seen[new] = left[new]
            self._round(obs, new)
        return self.choice.copy()

    def _round(self, obs: Obs, rows: np.ndarray) -> None:
        """Choose the arm of a new round in copies ``rows``, after the epoch-end test where an epoch ended."""
        k, m = self.num_arms, num_levels(obs)
        played = self.total_budget[rows] - obs["budget_left"][rows, 0].astype(np.int64)
        epoch_end = (played % (k * m) == 0) & (played > 0)
        self.count[rows[played % (k * m) == 0]] = 0
        test = rows[epoch_end & (self.level[rows] <= m)]
        if test.size:
            self._test(obs, test, played[epoch_end & (self.level[rows] <= m)] // (k * m), m)
        c = current_levels(obs)[rows]
        resolved = c < self.level[rows]
        self.count[rows, c - 1] += ~resolved
        # the arm at position count[j'] - 1 of the copy's arm order (index order with tie_break="index")
        explore = self.scores.arm_at[rows, (self.count[rows, c - 1] - 1) % k]
        self.choice[rows] = np.where(resolved, self.kept[rows, c - 1], explore)

    def _test(self, obs: Obs, rows: np.ndarray, epochs: np.ndarray, m: int) -> None:
        """The end-of-epoch test of level ``self.level`` in copies ``rows`` after ``epochs`` epochs."""
        j = self.level[rows]
        exceed, trials = level_counts(obs, j, rows)
        estimate = survival_estimate(exceed, trials)
        best = self.scores.best_of(rows, estimate)
        horizon = self.total_budget[rows].astype(np.float64)
        radius = np.sqrt(16.0 * np.log(horizon * epochs) / ((m - j + 1) * epochs))
        lead = estimate[np.arange(rows.size), best][:, None] - estimate
        lead[np.arange(rows.size), best] = np.inf
        separated = np.all(lead >= radius[:, None], axis=1)
        done = rows[separated]
        self.kept[done, j[separated] - 1] = best[separated]
        self.level[done] += 1
