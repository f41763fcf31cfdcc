"""OptMAI (Zhou, Chen, Li 2014): quantile elimination, then accept-reject; a baseline of chen2017."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from bandit_gym import _validation as check
from bandit_gym.agents.base import Agent, Obs, plays
from bandit_gym.agents.best_arm._kernels import WORK_ROWS
from bandit_gym.agents.best_arm.successive_rejects import phase_lengths
from bandit_gym.agents.ranking import accept_or_reject
from bandit_gym.agents.top_k._rounds import ACCEPTED, ACTIVE, REJECTED, Rounds, answer_means, top_of
from bandit_gym.families import Family
from bandit_gym.jit import kernel

QE, AR = 0, 1

# OptMAI's accept-reject phases, compiled (numba) entry points.


@kernel
def ar_next_phase(rows: np.ndarray, k: int, status: np.ndarray, counts: np.ndarray, schedule: np.ndarray,
                  phase: np.ndarray, ar_size: np.ndarray, finished: np.ndarray, target: np.ndarray) -> None:
    r"""OptMAI's accept-reject: the targets of phase ``phase[row]`` (\(n_p - n_{p-1}\) more pulls of each active
    arm) of the copies ``rows``, or their end (``phase`` \(\ge n'\), no arm or every active arm still to accept)."""
    n_arms = status.shape[1]
    for j in range(rows.shape[0]):
        row = rows[j]
        active, left = 0, k
        for i in range(n_arms):
            active += status[row, i] == ACTIVE
            left -= status[row, i] == ACCEPTED
        p = phase[row]
        if p >= ar_size[row] or left <= 0 or active <= left:
            finished[row] = True
            continue
        step = schedule[row, p - 1] - (schedule[row, p - 2] if p > 1 else 0)
        for i in range(n_arms):
            target[row, i] = np.int64(counts[row, i]) + max(step, 0) if status[row, i] == ACTIVE else 0


@kernel
def ar_phase_end(rows: np.ndarray, k: int, status: np.ndarray, counts: np.ndarray, sums: np.ndarray,
                 start_counts: np.ndarray, start_sums: np.ndarray, schedule: np.ndarray, phase: np.ndarray,
                 ar_size: np.ndarray, finished: np.ndarray, target: np.ndarray) -> None:
    """The end of an accept-reject phase of OptMAI in the copies ``rows``: SAR's removal (the arm of largest
    empirical gap, by the means of accept-reject's own samples), then the next phase's targets. Every array is
    by position (the caller's arm order), so SAR's ties go to the earlier position."""
    n_arms = status.shape[1]
    work = np.zeros((WORK_ROWS, n_arms))
    alive, accepted, mean = np.zeros(n_arms), np.zeros(n_arms), np.zeros(n_arms)
    for j in range(rows.shape[0]):
        row = rows[j]
        for i in range(n_arms):
            alive[i] = 1.0 if status[row, i] == ACTIVE else 0.0
            accepted[i] = 1.0 if status[row, i] == ACCEPTED else 0.0
            made = np.float64(counts[row, i]) - start_counts[row, i]
            mean[i] = (np.float64(sums[row, i]) - start_sums[row, i]) / max(made, 1.0) if alive[i] == 1.0 else 0.0
        accept_or_reject(k, alive, accepted, mean, work)
        for i in range(n_arms):
            status[row, i] = ACCEPTED if accepted[i] == 1.0 else (ACTIVE if alive[i] == 1.0 else REJECTED)
        phase[row] += 1
    ar_next_phase(rows, k, status, counts, schedule, phase, ar_size, finished, target)


class OptMAI(Agent):
    r"""OptMAI: rounds of quantile elimination on a geometric budget until at most \(4K\) arms are left, then
    successive accepts and rejects on the rest of the budget.

    Paper: Y. Zhou, X. Chen, J. Li, Optimal PAC Multiple Arm Identification with Applications to Crowdsourcing,
    ICML 2014; a baseline of chen2017. **Low confidence**: Zhou et al.'s text was not at hand, so this is a
    reconstruction of its structure (quantile elimination, then accept-reject on at most \(4K\) arms) with every
    constant exposed. chen2017 gives none of them: it only calls OptMAI non-adaptive, with sample complexity
    \(\Theta\big((n / \epsilon^2) (1 + \ln(1 / \delta) / K)\big)\) (§1), and sets no parameter of it in §3
    (\(\delta\) only for AdaptiveTopK and CLUCB-PAC).

    Quantile elimination, round \(r = 0, 1, \dots\) while \(\lvert S \rvert > 4K\): every arm of \(S\) gets
    \(\lfloor (1 - \beta) \beta^r Q / \lvert S \rvert \rfloor\) fresh pulls; the
    \(\max(\lceil \text{keep} \cdot \lvert S \rvert \rceil, 4K)\) arms of largest fresh mean stay (``keep=3/4``).
    With \(K \ge n / 4\) (\(K = 250\) and 500 at chen2017's \(n = 1000\)) there is no such round.
    Accept-reject: Successive Accepts and Rejects (``SAR``'s rule) on the \(n'\) arms of \(S\) with the budget left
    \(Q'\), \(n_k = \big\lceil (Q' - n') / \big(\overline{\log}(n') (n' + 1 - k)\big) \big\rceil\), ranking by the
    means of its own samples. Answer: the accepted arms, filled with the best active arms.

    Parameters: \(\beta\) = ``beta`` = 0.9 (in \((3/4, 1)\)), ``keep=0.75``, ``tie_break="random"`` (or
    ``"index"``); \(Q\) is the episode's budget (fixed budget only).
    Readings (chen2017 is silent, Zhou et al. not checked): the fraction kept per round (3/4) and the floor of
    \(4K\) arms; the budget split \((1 - \beta) \beta^r Q\) with \(\beta \in (3/4, 1)\); SAR (not a uniform "sample
    and take the top \(K\)") as the accept-reject stage, which stops once no arm or every active arm is still to
    accept (\(K\) arms accepted or \(n' - K\) rejected), leaving the rest of the budget unused. Choices: every tie
    between arms (equal means in elimination, in accept-reject and in the answer, the order of the pulls, which
    pulls a budget that ends within a round cuts) goes to a uniformly random one of the tied arms, by a random
    order of the arms drawn per copy and episode from the agent's seeded generator (``Rounds``), so the results do
    not depend on the arms' positions; ``tie_break="index"`` gives them to the smaller index instead (the rule
    before the random one). In accept-reject, equal gaps of the empirical best and worst arm go to the best
    (SAR's first rank); a round whose per-arm share is 0 eliminates on zero samples (all means 0: a random
    \(\max(\lceil \text{keep} \cdot \lvert S \rvert \rceil, 4K)\) of the arms stay, the smallest indices with
    ``"index"``); the answer before the end: the accepted arms plus the best active ones by all their samples. In
    every answer an arm never pulled ranks below every pulled arm (an accepted arm too: with a small budget the
    phases may accept on no samples), ties among such arms broken as the others.

    Examples:
        One seeded episode (top 10 of 100 arms) and the record of ``RecordEpisodeRegret``
        that ``play_episode`` returns:

        >>> import gymnasium as gym
        >>> from bandit_gym.agents import OptMAI
        >>> from bandit_gym.rollout import play_episode
        >>> env = gym.make("TopKIdentification-v0", budget=5000)
        >>> result = play_episode(env, OptMAI(), seed=0)
        >>> result["pulls"], round(result["regret"], 3)
        (4984, 0.001)
    """

    def __init__(self, beta: float = 0.9, keep: float = 0.75, *, tie_break: str = "random") -> None:
        self.beta = check.real("beta", beta, low=0.75, high=1.0, low_open=True, high_open=True)
        self.keep = check.real("keep", keep, low=0.0, high=1.0, low_open=True, high_open=True)
        super().__init__(tie_break=tie_break)

    def params(self) -> dict[str, object]:
        return {"beta": self.beta, "keep": self.keep, **super().params()}

    families: ClassVar[tuple[str, ...]] = ("top_k",)
    batched = True

    def allocate(self, n: int, k: int) -> None:
        self.order = self.new_scores()  # position -> arm, reshuffled per copy at each episode begin
        self.rounds = Rounds(self.order, self.tie_break)
        self.stage = np.zeros(n, dtype=np.int64)
        self.start_counts_pos = np.zeros((n, k))  # by position, as every per-arm state (``Rounds``)
        self.start_sums_pos = np.zeros((n, k))
        self.schedule = np.zeros((n, k), dtype=np.int64)  # AR's n_1..n_{n'-1}
        self.ar_size = np.zeros(n, dtype=np.int64)  # n', the arms that entered AR

    def begin(self, obs: Obs, rows: np.ndarray) -> None:
        self.rounds.begin(rows)
        self.stage[rows] = QE

    @property
    def status(self) -> np.ndarray:
        """Every arm's status (``ACTIVE``, ``ACCEPTED``, ``REJECTED``) in every copy, ``(N, K)``, indexed by arm
        (a copy of the state)."""
        return self.rounds.status()

    def select(self, obs: Obs) -> np.ndarray:
        """The arm each copy owes the most pulls in its round (``(N,)``; K where it is finished), after ending the
        rounds whose pulls are all made (``_end_round``)."""
        return self.rounds.next_arms(obs, self._end_round)

    def stop(self, obs: Obs) -> np.ndarray:
        """Where the copy is finished (``(N,)`` bools): its answer is final."""
        return self.rounds.stops(obs, self._end_round)

    def answer(self, obs: Obs) -> np.ndarray:
        """The answer bits of every copy, ``(N, K)``, indexed by arm (``obs`` as the env gives it, batched)."""
        return self.rounds.answer(obs, self._answer_pos)

    def _batch_pulls(self, obs: Obs, family: Family) -> np.ndarray | None:
        return self.rounds.batch_pulls(obs, self._end_round)

    @plays("answer")
    def _act_batch(self, obs: Obs, last: np.ndarray, family: Family) -> np.ndarray:
        return self.rounds.act(self, obs, self._end_round, OptMAI.answer)

    # ----------------------------------------------------------------------------------------------- decisions
    def _end_round(self, obs: Obs, rows: np.ndarray) -> None:
        """Copies ``rows`` made every pull they owed: quantile elimination or an accept-reject phase, then the
        next targets or ``finished``. ``obs`` holds the statistics by position (``Rounds.relabel``)."""
        k = int(obs["m"][0, 0])
        qe = self.stage[rows] == QE
        if (~qe).any():  # accept-reject ranks by the means of all its own samples
            self._accept_reject_step(obs, rows[~qe], k)
        if qe.any():  # quantile elimination, by the means of the round just made
            rows = rows[qe]
            status = self.rounds.status_pos
            counts, sums = obs["counts"][rows].astype(np.float64), obs["sums"][rows].astype(np.float64)
            fresh = np.where(status[rows] == ACTIVE, (sums - self.start_sums_pos[rows]) /
                             np.maximum(counts - self.start_counts_pos[rows], 1.0), -np.inf)
            self._quantile_step(obs, rows, k, fresh, (status[rows] == ACTIVE).sum(axis=1))
            self.start_counts_pos[rows], self.start_sums_pos[rows] = counts, sums

    def _quantile_step(self, obs: Obs, rows: np.ndarray, k: int, fresh: np.ndarray, active: np.ndarray) -> None:
        rounds, status = self.rounds, self.rounds.status_pos
        played = rounds.round[rows] > 0
        if played.any():  # keep the best max(ceil(keep |S|), 4K) of the round just made
            p = rows[played]
            size = np.maximum(np.ceil(self.keep * active[played] - 1e-9).astype(np.int64), 4 * k)
            stay = top_of(fresh[played], status[p] == ACTIVE, np.minimum(size, active[played]))
            status[p] = np.where((status[p] == ACTIVE) & ~stay, REJECTED, status[p])
        survivors = (status[rows] == ACTIVE).sum(axis=1)
        qe = survivors > 4 * k
        counts = obs["counts"][rows].astype(np.int64)
        if qe.any():
            q = rows[qe]
            share = np.floor((1 - self.beta) * self.beta ** rounds.round[q] * self.total_budget[q] / survivors[qe]
                             + 1e-9).astype(np.int64)  # 1 - 0.9 is 0.0999...: floor(100 - 1e-14) would be 99
            rounds.target_pos[q] = np.where(status[q] == ACTIVE, counts[qe] + share[:, None], 0)
            rounds.round[q] += 1
        if (~qe).any():  # on to accept-reject with the budget left
            a = rows[~qe]
            self.stage[a] = AR
            left = obs["budget_left"][a, 0].astype(np.int64)
            self.ar_size[a] = survivors[~qe]
            for budget, size in set(zip(left.tolist(), survivors[~qe].tolist(), strict=True)):
                same = a[(left == budget) & (survivors[~qe] == size)]
                self.schedule[same, : size - 1] = phase_lengths(budget, size) if size > 1 else 0
            rounds.round[a] = 1  # the AR phase
            self._next_phase(obs, a)

    def _accept_reject_step(self, obs: Obs, rows: np.ndarray, k: int) -> None:
        rounds = self.rounds
        ar_phase_end(rows, k, rounds.status_pos, obs["counts"], obs["sums"], self.start_counts_pos,
                     self.start_sums_pos, self.schedule, rounds.round, self.ar_size, rounds.finished, rounds.target_pos)

    def _next_phase(self, obs: Obs, rows: np.ndarray) -> None:
        """Targets of AR phase ``round`` (``n_k - n_{k-1}`` more pulls of each active arm), or the end."""
        rounds = self.rounds
        ar_next_phase(rows, int(obs["m"][0, 0]), rounds.status_pos, obs["counts"], self.schedule, rounds.round,
                      self.ar_size, rounds.finished, rounds.target_pos)

    def _answer_pos(self, obs: Obs) -> np.ndarray:
        """The accepted arms that were pulled, then the best of the other candidates (the active arms, and
        accepted arms never pulled: zero-length phases decide on no samples) by empirical mean up to K, an arm
        never pulled ranking last (ties: the earlier position); by position (``obs`` by position)."""
        k = int(obs["m"][0, 0])
        status = self.rounds.status_pos
        accepted = status == ACCEPTED
        pulled = obs["counts"] > 0
        sure = accepted & pulled
        others = (status == ACTIVE) | (accepted & ~pulled)
        return sure | top_of(answer_means(obs), others, k - sure.sum(axis=1))
