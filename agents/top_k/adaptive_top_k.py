"""AdaptiveTopK (chen2017, Algorithm 1), fixed confidence and its fixed-budget conversion."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from bandit_gym import _validation as check
from bandit_gym.agents.base import Agent, Obs, plays
from bandit_gym.agents.ranking import stable_order
from bandit_gym.agents.top_k._rounds import ACCEPTED, ACTIVE, REJECTED, Rounds, answer_means, top_of
from bandit_gym.families import Family
from bandit_gym.jit import kernel

FORMS = ("fixed_budget", "pac")
SCHEDULES = ("printed", "log-free")


def round_size(r: np.ndarray, n: int, delta: np.ndarray, scale: float = 1.0,
               schedule: str = "printed") -> np.ndarray:
    r"""The pulls of each surviving arm in round \(r\) (\(r = 1, 2, \dots\)), per copy:
    \(m_r = \lceil \text{scale} \cdot 4^r \ln(2 n r^2 / \delta) \rceil\) on the ``"printed"`` schedule (Algorithm 1
    line 5 and Claim 1 at ``scale=1``), \(m_r = \lceil \text{scale} \cdot 4^{r-1} \rceil\) on the ``"log-free"``
    one."""
    r = np.asarray(r, dtype=np.float64)
    base = 4.0 ** (r - 1.0) if schedule == "log-free" else 4.0**r * np.log(2.0 * n * r * r / np.asarray(delta))
    return np.ceil(scale * base).astype(np.int64)


@kernel
def accept_reject(theta: np.ndarray, status: np.ndarray, rows: np.ndarray, k: int,
                  threshold: np.ndarray) -> None:
    r"""AdaptiveTopK's inner loop (chen2017 Algorithm 1, lines 6-14) for the copies ``rows``; ``theta[j]`` are
    copy ``rows[j]``'s round means (or its round sums, with the threshold times their common count, when every
    arm of \(S\) has the same count: then every comparison is exact). With \(S\) sorted by decreasing \(\theta\)
    (ties: smaller index first), the arm of largest
    \(\tilde\Delta_i = \max(\theta_i - \theta_a, \theta_b - \theta_i)\) is the first or the last of \(S\), so each
    removal costs \(O(1)\) plus the number of arms tied with it (ties between equal
    values: the smallest index; the arms tied at the bottom stay in index order after a removal). The agent
    passes ``theta`` and ``status`` by position (``Rounds``), so its ties go to the earlier position."""
    n_arms = status.shape[1]
    for j in range(rows.shape[0]):
        row = rows[j]
        th = theta[j]
        members = np.empty(n_arms, np.int64)
        size, kp = 0, k
        for i in range(n_arms):
            if status[row, i] == ACTIVE:
                members[size] = i
                size += 1
            elif status[row, i] == ACCEPTED:
                kp -= 1
        order = members[:size][stable_order(-th[members[:size]])]
        hi, lo = 0, size - 1
        while kp > 0 and lo - hi + 1 > kp:
            theta_b, theta_a = th[order[hi + kp - 1]], th[order[hi + kp]]
            top_gap, bottom_gap = th[order[hi]] - theta_a, theta_b - th[order[lo]]
            best = max(top_gap, bottom_gap)
            if best <= threshold[j]:
                break
            bottom_first = lo  # the smallest index among the arms tied at the bottom value
            while bottom_first > hi and th[order[bottom_first - 1]] == th[order[lo]]:
                bottom_first -= 1
            take_top = top_gap == best and (bottom_gap < best or order[hi] < order[bottom_first])
            if take_top:
                status[row, order[hi]] = ACCEPTED  # theta_x > theta_a: top_gap > threshold >= 0
                hi += 1
                kp -= 1
            else:
                # the tied block keeps its index order: its smallest index moves to the end and leaves
                removed = order[bottom_first]
                for q in range(bottom_first, lo):
                    order[q] = order[q + 1]
                order[lo] = removed
                status[row, removed] = REJECTED  # theta_x <= theta_b, and the bottom is not above theta_a
                lo -= 1


class AdaptiveTopK(Agent):
    r"""Adaptive top-K: rounds of uniform sampling of the surviving arms at accuracy \(2^{-r}\), accepting and
    rejecting every arm whose empirical gap is clear.

    Paper: chen2017, Algorithm 1 (fixed confidence) and §3 (the fixed-budget conversion of the experiments).

    Round \(r = 1, 2, \dots\) (the paper's rounds; \(r = 0\) only before the first): every arm of \(S\) gets \(m_r\)
    more pulls (line 5), and \(\tilde\theta_i\) is its empirical mean (fresh: over the round's \(m_r\) samples;
    pooled: over all its samples so far); then, while an arm is clear, with \(k' = K - \lvert A \rvert\),
    \(\tilde\theta_a\) / \(\tilde\theta_b\) the \((k'+1)\)-th / \(k'\)-th largest \(\tilde\theta\) over \(S\) (line 6)
    and \(\tilde\Delta_i = \max(\tilde\theta_i - \tilde\theta_a, \tilde\theta_b - \tilde\theta_i)\) (eq. 7): if
    \(\max_S \tilde\Delta \le 2 \cdot 2^{-r}\) the round ends (line 7 goes on while it is \(> 2 \cdot 2^{-r}\)); else
    the arm \(x\) of largest \(\tilde\Delta\) (ties: see below) leaves \(S\), accepted if
    \(\tilde\theta_x > \tilde\theta_a\), else rejected (lines 8-13; \(\tilde\theta_a\), \(\tilde\theta_b\)
    recomputed after every removal). Guards: \(k' = 0\) ends (answer \(A\)); \(\lvert S \rvert \le k'\) accepts all
    of \(S\) and ends.

    Round sizes (``schedule``, ``scale``):

    - ``"printed"`` (default), \(m_r = \lceil \text{scale} \cdot 4^r \ln(2 n r^2 / \delta) \rceil\) (line 5 prints
      \(2^{2r} \ln(2 n r^2 / \delta)\)). At ``scale=1`` these are the constants of the proof: Hoeffding gives
      \(P(\lvert \tilde\theta_i - \theta_i \rvert \ge 2^{-r}) \le 2 \exp(-2 m_r 4^{-r}) \le \delta / (2 n r^2)\) per
      arm and round (Claim 1), and the union bound over arms and rounds gives the event of Definition 2 with
      probability at least \(1 - \delta\). Below 1 that guarantee is lost.
    - ``"log-free"`` (ours, experimental), \(m_r = \lceil \text{scale} \cdot 4^{r-1} \rceil\): the \(4^r\) growth
      that matches the halving accuracy, without the \(\ln(2 n r^2 / \delta)\) factor and with a free constant; no
      guarantee.

    Why a shortened version exists: at the paper's scale (\(n = 1000\), \(\delta = 0.01\)) the printed rounds cost
    \(m_1 = 49\), \(m_2 = 218\) and \(m_3 = 922\) pulls per arm. Round 1 cannot decide anything (with rewards in
    \([0, 1]\) no empirical gap exceeds its threshold \(2 \cdot 2^{-1} = 1\)), so up to \(267 n\) pulls the agent
    allocates like Uniform. Round 2 (threshold 1/2) removes only arms whose empirical gap exceeds 1/2 (practically
    none on TwoGroup, whose gap is 0.4); there the inner loop first removes arms in round 3 (threshold 1/4), after
    about 1.2 million pulls. The paper's text ("only a few pulls to classify the arms", the inner loop accepting or
    rejecting many arms in one round, §3) and its figures (failure falling between \(10^4\) and \(10^5\) pulls)
    imply much shorter rounds, whose constant the paper does not give.

    Fresh or pooled means (``pooled``; the paper is silent): ``None`` (default) pools whenever the rounds are
    shortened (``scale < 1`` or the log-free schedule) and uses each round's fresh samples at the printed
    constants; True / False force it. Pooling is as faithful to the analysis: an arm still in \(S\) at round \(r\)
    has exactly \(m_1 + \dots + m_r\) samples, a number fixed in advance, and Claim 1's Hoeffding bound holds for
    any fixed prefix of an arm's samples, with at least \(m_r\) of them (the bound only tightens); the query bound
    (eq. 18) counts pulls, not which samples enter a mean. With short rounds, fresh means of a few samples make
    wrong removals (which are final) far more likely than the pooled means do.

    ``form="fixed_budget"`` (default; the paper's experiments, §3: "remove the outer while loop ... stop pulling
    the arms once the budget is exhausted"): no \(\epsilon\) test, rounds go on until the budget runs out (a round
    cut short by the budget decides nothing); the answer is \(A\) plus the \(K - \lvert A \rvert\) arms of \(S\) of
    largest mean over all their samples (arms never pulled rank last; ties: see below); budget left unused when
    the guards end it early (the agent stops). ``form="pac"`` (Algorithm 1): rounds go on while
    \(2 \cdot 2^{-r} (K - \lvert A \rvert) > \epsilon K\) (line 3, tested after each round: at \(r = 0\) it holds
    for every \(\epsilon < 2\); \(\epsilon\) from the observation); then \(A\) plus the \(K - \lvert A \rvert\) arms
    of \(S\) of largest last-round \(\tilde\theta\) (line 16); the budget is only a cap (if it ends the episode
    first, the answer is the fixed-budget one).

    Parameters: ``delta`` (None: the observation's \(\delta\); the paper's experiments use 0.01), ``pooled=None``,
    ``form``, ``schedule="printed"``, ``scale=1``, ``tie_break="random"`` (or ``"index"``).

    Readings where the paper is silent (ours): \(m_r\) rounded up; \(\tilde\theta_a\) and \(\tilde\theta_b\)
    recomputed after every removal (line 6 stands before the inner loop, but the proofs of Lemmas 3-5 use the
    current \(A\) and \(S\)); ties (for the largest \(\tilde\Delta\), in the ranks that set \(\tilde\theta_a\) and
    \(\tilde\theta_b\), in the answer, in the order of the pulls and in which pulls a budget that ends within a
    round cuts) go to a uniformly random one of the tied arms, by a random order of the arms drawn per copy and
    episode from the agent's seeded generator (``Rounds``), so the results do not depend on the arms' positions;
    ``tie_break="index"`` gives them to the smallest index instead (the rule before the random one); the guards;
    the fixed-budget answer (all samples, the interrupted round included). An exact tie (a gap equal to
    \(2 \cdot 2^{-r}\), or two equal gaps) is decided exactly: every arm of \(S\) has the same number of samples at
    a round's end, so the gaps are compared on the sums (differences of float64 means would decide such ties by
    their rounding: \(5/6 - 2/6\) is 0.5000000000000001 in float64). The inner loop runs over \(S\) sorted once per
    round: the arm of largest \(\tilde\Delta\) is always the largest or the smallest \(\tilde\theta\) of \(S\).

    Examples:
        One seeded episode (top 10 of 100 arms) and the record of ``RecordEpisodeRegret``
        that ``play_episode`` returns:

        >>> import gymnasium as gym
        >>> from bandit_gym.agents import AdaptiveTopK
        >>> from bandit_gym.rollout import play_episode
        >>> env = gym.make("TopKIdentification-v0", budget=5000)
        >>> result = play_episode(env, AdaptiveTopK(), seed=0)
        >>> result["pulls"], round(result["regret"], 3)
        (5000, 0.009)
    """

    def __init__(self, delta: float | None = None, pooled: bool | None = None, form: str = "fixed_budget",
                 scale: float = 1.0, schedule: str = "printed", *, tie_break: str = "random") -> None:
        self.delta = None if delta is None else check.real("delta", delta, low=0.0, high=1.0, low_open=True,
                                                           high_open=True)
        if pooled is not None and not isinstance(pooled, (bool, np.bool_)):
            raise TypeError(f"pooled must be None, True or False, got {pooled!r}")
        self.pooled = None if pooled is None else bool(pooled)
        self.form = check.choice("form", form, FORMS)
        self.scale = check.real("scale", scale, low=0.0, low_open=True)
        self.schedule = check.choice("schedule", schedule, SCHEDULES)
        #: whether \(\tilde\theta\) pools all of an arm's samples (the default: whenever the rounds are shortened)
        self.pools = self.pooled if self.pooled is not None else (self.scale < 1.0 or self.schedule != "printed")
        super().__init__(tie_break=tie_break)

    def params(self) -> dict[str, object]:
        return {"delta": self.delta, "pooled": self.pooled, "form": self.form, "scale": self.scale,
                "schedule": self.schedule, **super().params()}

    families: ClassVar[tuple[str, ...]] = ("top_k",)
    batched = True

    def allocate(self, n: int, k: int) -> None:
        self.order = self.new_scores()  # position -> arm, reshuffled per copy at each episode begin
        self.rounds = Rounds(self.order, self.tie_break)
        self.start_counts_pos = np.zeros((n, k))  # by position, as every per-arm state (``Rounds``)
        self.start_sums_pos = np.zeros((n, k))
        self.last_theta_pos = np.zeros((n, k))
        self.confidence = np.zeros(n)

    def begin(self, obs: Obs, rows: np.ndarray) -> None:
        self.rounds.begin(rows)
        self.confidence[rows] = obs["delta"][rows, 0] if self.delta is None else self.delta

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
        return self.rounds.act(self, obs, self._end_round, AdaptiveTopK.answer)

    # ----------------------------------------------------------------------------------------------- decisions
    def _end_round(self, obs: Obs, rows: np.ndarray) -> None:
        """Copies ``rows`` made every pull they owed: the accept / reject loop of the round just made (lines
        6-14), then the next round's targets (line 5) or ``finished``. ``obs`` holds the statistics by position
        (``Rounds.relabel``)."""
        k = int(obs["m"][0, 0])
        rounds, status = self.rounds, self.rounds.status_pos
        counts, sums = obs["counts"][rows].astype(np.float64), obs["sums"][rows].astype(np.float64)
        r = rounds.round[rows]
        played = r > 0
        if played.any():  # the accept / reject loop of the round just completed
            p = rows[played]
            fresh_counts = counts[played] - (0.0 if self.pools else self.start_counts_pos[p])
            fresh_sums = sums[played] - (0.0 if self.pools else self.start_sums_pos[p])
            active = status[p] == ACTIVE
            theta = np.where(active, fresh_sums / np.maximum(fresh_counts, 1.0), 0.0)
            self.last_theta_pos[p] = theta
            threshold = 2.0 * 2.0 ** -r[played].astype(np.float64)
            # every arm of S has the same number of samples at a round's end: the gaps are compared on the sums,
            # exactly (differences of float64 means would decide an exact tie with the threshold by rounding)
            common = np.where(active, fresh_counts, 0.0).max(axis=1)
            exact = np.all(~active | (fresh_counts == common[:, None]), axis=1)
            values = np.where(exact[:, None], np.where(active, fresh_sums, 0.0), theta)
            accept_reject(values, status, p, k, np.where(exact, threshold * common, threshold))
        left = k - (status[rows] == ACCEPTED).sum(axis=1)
        active = (status[rows] == ACTIVE).sum(axis=1)
        done = (left <= 0) | (active <= left)
        if self.form == "pac":  # the outer loop: go on while 2 2^-r (K - |A|) > epsilon K
            done |= played & (2.0 * 2.0 ** -r.astype(np.float64) * left <= obs["epsilon"][rows, 0] * k)
        rounds.finished[rows[done]] = True
        go = rows[~done]
        if go.size:
            rounds.round[go] += 1
            sizes = round_size(rounds.round[go], self.num_arms, self.confidence[go], self.scale, self.schedule)
            self.start_counts_pos[go], self.start_sums_pos[go] = counts[~done], sums[~done]
            rounds.target_pos[go] = np.where(status[go] == ACTIVE, counts[~done] + sizes[:, None], 0)

    def _answer_pos(self, obs: Obs) -> np.ndarray:
        r"""\(A\) plus the \(K - \lvert A \rvert\) arms of \(S\) of largest mean (last-round \(\tilde\theta\) when the
        PAC form finished, all samples otherwise; an arm never pulled last; ties: the earlier position); by position
        (``obs`` by position)."""
        k = int(obs["m"][0, 0])
        accepted = self.rounds.status_pos == ACCEPTED
        active = self.rounds.status_pos == ACTIVE
        finished = self.rounds.finished[:, None]
        values = np.where((self.form == "pac") & finished, self.last_theta_pos, answer_means(obs))
        return accepted | top_of(values, active, k - accepted.sum(axis=1))
