"""Stopping rules of fixed-confidence identification, as components: any fixed-confidence sampling rule of the
package stops by any of them (its ``stopping`` and ``threshold`` parameters, in Python and in a spec): the rules
given a ``Stopping.component``, and the two older ones, ``LUCB`` and ``UGapEc``, which stop by their paper's
own rule by default (``stopping="own"``, ``Stopping.paper``) and by a component with ``stopping="glr"``
(and a ``threshold``), ``"lucb"`` or ``"kllucb"``, their sampling and their answer unchanged.

Given the empirical answer S (the m arms of largest empirical mean) after t pulls:

- ``"glr"``, the generalised likelihood ratio (Chernoff) rule of Garivier and Kaufmann (2016, eq. 8, §4): stop
  as soon as

      Z(t) = min_{i in S, j not in S} Z_ij(t) > beta(t, delta),
      Z_ij(t) = N_i d(mu_i, mu_ij) + N_j d(mu_j, mu_ij),  mu_ij = (N_i mu_i + N_j mu_j) / (N_i + N_j)

  (empirical means mu, pull counts N; Z_ij = 0 when mu_i = mu_j: a tie never stops). Its thresholds
  (``threshold``), with P = m (K - m) pairs (K - 1 for best-arm identification):

  - ``"gk2016"``: ``beta = ln(2 t P / delta)``, GK 2016 Theorem 10: delta-correct on Bernoulli arms whatever the
    sampling rule (their m = 1; for m > 1 their per-pair bound with a union over the P pairs, our extension).
    Bernoulli arms only.
  - ``"ls2020"``: ``beta = 2 ln(c t (t + 1)) + x_P``, c = 2 for Bernoulli arms and 1 for Gaussian ones, x_P the
    root x >= 2 of ``(x / 2)^2 e^(2 - x) = delta / P``: Lattimore and Szepesvári (2020, Lemma 33.7 with
    Proposition 33.9 and Lemma 33.8) applied to the two arms of each pair, with a union over the P pairs.
    delta-correct on Bernoulli and Gaussian arms whatever the sampling rule (a wrong answer needs, for some pair
    (i, j) with mu_j > mu_i truly, ``N_i d(mu_i_hat, mu_i) + N_j d(mu_j_hat, mu_j) >= Z_ij > beta``; Lemma 33.8
    holds for each arm with ``g(s) = ln(c s (s + 1))``, by Chernoff's bound on each tail). Looser than
    ``"gk2016"`` (about 4 ln t against ln t).
  - ``"mixture"``: one threshold per pair (i, j), from mixture martingales (the method of Robbins, revisited by
    Kaufmann and Koolen 2021): stop when every pair has ``Z_ij > b(N_i, N_j)``, ``b`` the boundary of
    ``bandit_gym.divergences.mixture_boundary`` at level ``ln(P / delta)``: on Bernoulli arms ``ln(P / delta) +
    ln(N_i N_j) / 2 + 2 ln 2`` (the Krichevsky-Trofimov mixture), on Gaussian arms ``(ln(P / delta) + ln((1 +
    N_i)(1 + N_j)) / 2) / min_a N_a / (1 + N_a)`` (a normal mixture). delta-correct whatever the sampling rule: a
    wrong answer needs a pair (i, j) whose true means lie in the pair's alternative, where ``N_i d(mu_i_hat,
    mu_i) + N_j d(mu_j_hat, mu_j) >= Z_ij > b``; then the product of the two arms' mixture martingales exceeds
    ``P / delta``, which by Ville's inequality happens with probability at most ``delta / P``; a union over the P
    pairs. It grows as ``ln(N_i N_j) / 2``, data-dependent: never above ``"gk2016"`` on Bernoulli arms (``ln(N_i
    N_j) / 2 <= ln(t / 2)``), and about half of ``"ls2020"``'s growth on Gaussian ones.
  - ``"heuristic"``: ``beta = ln((1 + ln t) / delta)``, GK 2016 §6's choice for its experiments and the common
    choice since: **outside the theory** (no proof of delta-correctness; it is observed to hold in their
    experiments).

  With a slack epsilon > 0 (the env's epsilon: epsilon-good answers, Jourdan, Degenne and Kaufmann 2023; Degenne
  and Koolen 2019 for problems with several correct answers), ``Z_ij`` is the shifted statistic ``inf_{lambda_j >=
  lambda_i + epsilon} N_i d(mu_i, lambda_i) + N_j d(mu_j, lambda_j)`` (0 unless ``mu_i + epsilon > mu_j``): the
  GLR of "no arm outside S beats an arm of S by epsilon", with the same thresholds (the same deviation argument).
  With m = 1 its alternative is exactly the instances where the answer is not epsilon-good; with m > 1 the union
  of the pairs' alternatives contains the instances where S is not (epsilon, m)-good, so the rule is
  conservative.

- ``"lucb"``, LUCB1's rule (Kalyanakrishnan et al. 2012): with ``UCB/LCB = mu +- s sqrt(2 ln(k1 K t^4 / delta) /
  N)`` (s = 1/2 for Bernoulli arms, Hoeffding; sigma for Gaussian arms; k1 = 5/4), stop when
  ``max_{j not in S} UCB_j - min_{i in S} LCB_i < epsilon``. delta-correct by LUCB1's union bound over t, arms
  and pull counts (``sum_t t K delta / (k1 K t^4) <= delta``); t counts pulls here, not LUCB1's rounds of two.

- ``"kllucb"``, KL-LUCB's rule (Kaufmann and Kalyanakrishnan 2013): the same with the KL confidence bounds
  ``U_a = max{q >= mu_a : N_a d(mu_a, q) <= b(t)}``, ``L_a = min{q <= mu_a : N_a d(mu_a, q) <= b(t)}`` and
  ``b(t) = ln(k1 K t^alpha / delta) + ln ln(k1 K t^alpha / delta)``, alpha = 1.1, k1 = 405.5 (their
  experiments' values, which meet their Theorem 3's condition on k1: delta-correct). t counts pulls here; the
  ``KLLUCB`` agent, whose own rule this is, counts its rounds of two pulls as the paper does.

- ``"lil"``, lil'UCB's own rule (some arm's pulls exceed 1 + lambda times all the others'; the answer is the most
  pulled arm): ``LilUCB`` only, whose pulls make it meaningful.

Every rule reads epsilon from the observation.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy

from bandit_gym import _validation as check
from bandit_gym.jit import called

STOPPING_RULES = ("glr", "lucb", "kllucb", "lil")
#: KL-LUCB's exploration rate: alpha and k1 of Kaufmann and Kalyanakrishnan 2013's experiments (Theorem 3 asks
#: k1 > 2e + 1 + e / (alpha - 1) + (e + 1) / (alpha - 1)^2, 405.45 at alpha = 1.1)
KL_LUCB_ALPHA, KL_LUCB_K1 = 1.1, 405.5
THRESHOLDS = ("gk2016", "ls2020", "heuristic", "mixture")
DISTRIBUTIONS = ("bernoulli", "gaussian")
#: the constant fields that a stopping rule reads (an agent's ``constant_fields`` include them)
FIELDS = ("delta", "threshold", "family", "sigma", "offset")
#: the fields of ``FIELDS`` that hold a choice (int64 in the record: ``_base.records``)
CHOICES = ("threshold", "family")
#: the stopping rules as compiled: a component (``"glr"``; the GLR rule with the ``"mixture"`` thresholds, which
#: are per pair, apart; ``"lucb"``; ``"kllucb"``), or the agent's own rule (``"lil"``: lil'UCB's; ``"own"``:
#: LUCB1's, UGapEc's)
KINDS = ("glr", "mixture", "lucb", "kllucb", "lil", "own")
#: the prefix of the field that names a copy's kind in its constants record: ``"stops_by_glr"``, ...
KIND_FIELD = "stops_by_"


def check_stopping(stopping: str, threshold: str | None, distribution: str, sigma: float) -> tuple[str, str]:
    """Validate a stopping rule's parameters; return (stopping, threshold), the threshold's default filled in
    (``"gk2016"`` on Bernoulli arms, ``"ls2020"`` on Gaussian ones: the theory's)."""
    stopping = check.choice("stopping", stopping, STOPPING_RULES)
    distribution = check.choice("distribution", distribution, DISTRIBUTIONS)
    check.real("sigma", sigma, low=0.0, low_open=True)
    if threshold is None:
        threshold = "gk2016" if distribution == "bernoulli" else "ls2020"
    threshold = check.choice("threshold", threshold, THRESHOLDS)
    if stopping == "glr" and threshold == "gk2016" and distribution != "bernoulli":
        raise ValueError("threshold='gk2016' is GK 2016 Theorem 10's, proved for Bernoulli arms only; with "
                         "distribution='gaussian' use 'ls2020' (proved) or 'heuristic' (outside the theory)")
    return stopping, threshold


#: the ``stopping`` values of an agent with a rule of its own paper: that rule, or a component (not ``"lil"``)
PAPER_STOPPING_RULES = ("own", "glr", "lucb", "kllucb")


@dataclass(frozen=True)
class Stopping:
    """A fixed-confidence agent's stopping rule, the component it stops by: ``rule`` one of ``STOPPING_RULES``,
    or ``"own"`` for the rule of the agent's own paper (``LUCB``, ``UGapEc``), with the GLR ``threshold``, the
    confidence ``delta`` and the arms' family (``distribution``, ``sigma``) whose divergence the rule reads.

    Build it with ``Stopping.component`` (a sampling rule of the package's fixed-confidence agents) or
    ``Stopping.paper`` (an agent whose paper has a rule of its own); a ``BestArmAgent`` given one
    (``stopping=``) writes its constants at each episode start (``begin``), checks the env's arms
    (``check_env``) and the rewards it is given (``check_rewards``)."""

    rule: str
    threshold: str
    delta: float
    distribution: str
    sigma: float

    @classmethod
    def component(cls, agent: str, delta: float, stopping: str, threshold: str | None, distribution: str,
                  sigma: float, *, own: str | None = None) -> Stopping:
        """Validate a sampling rule's stopping parameters (``check_stopping``); ``"lil"`` is allowed only as the
        agent's ``own`` rule (lil'UCB's)."""
        delta = check.real("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)
        stopping, threshold = check_stopping(stopping, threshold, distribution, sigma)
        if stopping == "lil" and own != "lil":
            raise ValueError(f"stopping='lil' is lil'UCB's own rule (it answers the most pulled arm), not "
                             f"{agent}'s; allowed: 'glr', 'lucb', 'kllucb'")
        return cls(stopping, threshold, delta, distribution, float(sigma))

    @classmethod
    def paper(cls, agent: str, delta: float, stopping: str, threshold: str | None, distribution: str,
              sigma: float) -> Stopping:
        """Validate the stopping rule of ``agent``, a sampling rule with a stopping rule of its own paper
        (``LUCB``, ``UGapEc``): ``"own"`` (that rule) or a component (``check_stopping``; ``"lil"``, lil'UCB's own
        rule, is refused). The threshold's default is filled in as ``check_stopping`` does."""
        delta = check.real("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)
        if stopping == "lil":
            raise ValueError(f"stopping='lil' is lil'UCB's own rule (it answers the most pulled arm), not "
                             f"{agent}'s; allowed: {', '.join(map(repr, PAPER_STOPPING_RULES))}")
        stopping = check.choice("stopping", stopping, PAPER_STOPPING_RULES)
        # the own rule reads none of the component's parameters: they are only checked (as for the "lucb"
        # component, which reads no threshold)
        _, threshold = check_stopping("lucb" if stopping == "own" else stopping, threshold, distribution, sigma)
        return cls(stopping, threshold, delta, distribution, float(sigma))

    @property
    def scale(self) -> float:
        """The arms' sub-Gaussian scale: 1/2 for Bernoulli arms (Hoeffding), sigma for Gaussian ones."""
        return 0.5 if self.distribution == "bernoulli" else self.sigma

    @property
    def field(self) -> str:
        """The field of a copy's constants record that names this rule's kind (``_stop.kind``): the agent's
        ``constant_fields`` (``FIELDS`` among them) and this one are the record's."""
        return kind_field(self.rule, self.threshold)

    def params(self) -> dict[str, Any]:
        """The agent's constructor arguments that built this rule."""
        return {"delta": self.delta, "stopping": self.rule, "threshold": self.threshold,
                "distribution": self.distribution, "sigma": self.sigma}

    def begin(self, constants: np.ndarray, rows: np.ndarray, obs: Any, k: int) -> None:
        """Write the rule's constants into the records ``constants[rows]`` (with the field ``self.field``) of the
        copies that begin an episode (``set_constants``, per answer size m of the observation ``obs``); ``delta``
        alone for the agent's own rule."""
        if self.rule == "own":
            constants["delta"][rows] = self.delta
            return
        sizes, epsilons = np.asarray(obs["m"])[rows, 0].astype(np.int64), np.asarray(obs["epsilon"])[rows, 0]
        for m in np.unique(sizes):
            same = sizes == m
            set_constants(constants, rows[same], self.rule, self.threshold, self.delta, self.distribution,
                          self.sigma, k, int(m), float(np.max(epsilons[same])))

    def check_env(self, agent: str, env: Any) -> None:
        """Refuse an env whose arms are not the family of the rule's divergence (``check_arms``)."""
        engine = getattr(env.unwrapped, "engine", None)
        arms = getattr(engine, "arm_distribution", None)
        if engine is not None and arms is not None:
            check_arms(agent, arms, getattr(engine, "sigma", math.nan), self.rule, self.distribution, self.sigma)

    def check_rewards(self, obs: Any) -> None:
        """Refuse the statistics of a batched observation whose empirical means lie outside [0, 1] when the rule
        reads them as Bernoulli means (``distribution="bernoulli"``; not for an agent's own rule)."""
        if self.rule != "own" and self.distribution == "bernoulli":
            counts, sums = obs["counts"], obs["sums"]
            if np.any(sums < 0.0) or np.any(sums > counts):
                raise ValueError(f"an empirical mean lies outside [0, 1]: the rewards are not Bernoulli; with "
                                 f"stopping={self.rule!r} build the agent with distribution='gaussian' (and sigma) "
                                 f"for Gaussian arms")


def check_arms(agent: str, arms: str, env_sigma: Any, stopping: str, distribution: str, sigma: float) -> None:
    """Refuse arms ``arms`` (``"bernoulli"``, ``"gaussian"``, ...) of standard deviation ``env_sigma`` (one, or one
    per arm) that are not the family of a stopping component's divergence (``Stopping.check_env``; the JAX envs'
    check too); nothing for an agent's own rule (``stopping="own"``)."""
    if stopping == "own":
        return
    if distribution == "bernoulli" and arms != "bernoulli":
        raise ValueError(f"{agent}(stopping={stopping!r}, distribution='bernoulli') reads Bernoulli arms; the env's "
                         f"arms are {arms!r}: use distribution='gaussian' and sigma")
    scales = np.atleast_1d(np.asarray(env_sigma, dtype=np.float64))
    if arms == "gaussian" and distribution == "gaussian" and np.any(scales != scales[0]):
        raise ValueError(f"{agent}(distribution='gaussian') assumes one known sigma; the env's arms have different "
                         f"ones, sigma={scales.tolist()}: an agent for unknown variances reads them "
                         "(EBTCIUnknownVariances, best arm)")
    if arms == "gaussian" and distribution == "gaussian" and sigma != scales[0]:
        raise ValueError(f"{agent}(sigma={sigma}) is not the env's sigma={float(scales[0])!s}")


@functools.cache
def ls2020_offset(delta: float, pairs: int) -> float:
    """x_P >= 2 with ``(x / 2)^2 e^(2 - x) = delta / P`` (Lattimore and Szepesvári 2020, Lemma 33.7's f^-1 at
    k = 2 arms)."""
    target = math.log(delta / pairs)
    def f(x: float) -> float:
        return 2.0 * math.log(x / 2.0) + 2.0 - x - target
    high = 4.0
    while f(high) > 0.0:
        high *= 2.0
    return float(scipy.optimize.brentq(f, 2.0, high, xtol=1e-14))


def kind_of(stopping: str, threshold: str) -> str:
    """The kind (``KINDS``) of the rule ``stopping`` (``"own"`` too) with ``threshold``."""
    return "mixture" if stopping == "glr" and threshold == "mixture" else stopping


def kind_field(stopping: str, threshold: str) -> str:
    """The field that names the kind of the rule ``stopping`` with ``threshold`` in a constants record:
    ``KIND_FIELD`` and the kind (``kind_of``)."""
    return KIND_FIELD + kind_of(stopping, threshold)


def fields(stopping: str, threshold: str, more: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The fields of a constants record stopped by ``stopping`` with ``threshold``: ``FIELDS``, the field that
    names its kind (``kind_field``) and ``more`` (the agent's own)."""
    return (*FIELDS, kind_field(stopping, threshold), *more)


def kind_named_by(names: Any) -> int:
    """The kind (an index of ``KINDS``) that a constants record's field names ``names`` name: its one field
    ``KIND_FIELD`` + a kind (``_stop.kind``)."""
    named = [name[len(KIND_FIELD):] for name in names if name.startswith(KIND_FIELD)]
    if len(named) != 1 or named[0] not in KINDS:
        raise TypeError(f"a stopping rule's constants record names its kind by one field {KIND_FIELD}<kind>, kind "
                        f"one of {KINDS}; its fields are {list(names)}")
    return KINDS.index(named[0])


def set_constants(constants: np.ndarray, rows: np.ndarray, stopping: str, threshold: str, delta: float,
                  distribution: str, sigma: float, k: int, m: int, epsilon: float) -> None:
    """Write a stopping rule's constants into the records ``constants[rows]`` (of the fields ``fields(stopping,
    threshold)``) for K arms and answer size m."""
    if kind_named_by(constants.dtype.names) != KINDS.index(kind_of(stopping, threshold)):
        raise TypeError(f"the constants record {constants.dtype.names} is not one of stopping={stopping!r}, "
                        f"threshold={threshold!r} (make it of the fields fields(stopping, threshold))")
    pairs = m * (k - m)
    constants["delta"][rows] = delta
    constants["threshold"][rows] = THRESHOLDS.index(threshold)
    constants["family"][rows] = DISTRIBUTIONS.index(distribution)
    constants["sigma"][rows] = sigma
    if threshold == "ls2020":
        constants["offset"][rows] = ls2020_offset(delta, pairs)
    else:  # the mixture boundaries' level ln(P / delta)
        constants["offset"][rows] = math.log(pairs / delta) if threshold == "mixture" else 0.0


# The compiled stopping rules (numba), module-level helpers called by the rules. A copy's
# ``constants`` record names its threshold and its arms' family by these ints (the index of the choice in its
# tuple above, in the int64 fields ``CHOICES``), and its kind by the name of one of its fields (``kind``):
#: ``constants["threshold"]``: the GLR thresholds
GK2016, LS2020, HEURISTIC, MIXTURE = range(len(THRESHOLDS))
#: ``constants["family"]``: the arms' family, whose divergence the rules use
BERNOULLI, GAUSSIAN = range(len(DISTRIBUTIONS))


@called
def divergence(p: float, q: float, family: int, sigma: float) -> float:
    """d(p, q): Bernoulli (``0 ln 0 = 0``; q strictly inside (0, 1)), or Gaussian of standard deviation
    sigma."""
    if family == GAUSSIAN:
        return (p - q) ** 2 / (2.0 * sigma * sigma)
    value = 0.0
    if p > 0.0:
        value += p * math.log(p / q)
    if p < 1.0:
        value += (1.0 - p) * math.log((1.0 - p) / (1.0 - q))
    return value


@called
def transportation_cost(counts: np.ndarray, mean: np.ndarray, i: int, j: int, family: int,
                        sigma: float) -> float:
    """``Z_ij = N_i d(mu_i, mu_ij) + N_j d(mu_j, mu_ij)`` if ``mu_i > mu_j``, else 0 (also when an arm was never
    pulled): the GLR statistic of "i beats j", the Top Two rules' transportation cost W(i, j)."""
    ni, nj = np.float64(counts[i]), np.float64(counts[j])
    if ni == 0.0 or nj == 0.0 or mean[i] <= mean[j]:
        return 0.0
    mid = (ni * mean[i] + nj * mean[j]) / (ni + nj)
    return ni * divergence(mean[i], mid, family, sigma) + nj * divergence(mean[j], mid, family, sigma)


@called
def shifted_cost(counts: np.ndarray, mean: np.ndarray, i: int, j: int, epsilon: float, family: int,
                 sigma: float) -> float:
    """``inf_{lambda_j >= lambda_i + epsilon} N_i d(mu_i, lambda_i) + N_j d(mu_j, lambda_j)`` if ``mu_i + epsilon >
    mu_j``, else 0 (also when an arm was never pulled); ``transportation_cost`` at epsilon = 0. Gaussian: ``(mu_i
    - mu_j + epsilon)^2 / (2 sigma^2 (1 / N_i + 1 / N_j))``; Bernoulli: the convex cost along ``lambda_j =
    lambda_i + epsilon`` minimised by bisection on its derivative, lambda_i between ``mu_j - epsilon`` and
    ``mu_i`` (within ``[0, 1 - epsilon]``)."""
    if epsilon == 0.0:
        return transportation_cost(counts, mean, i, j, family, sigma)
    ni, nj = np.float64(counts[i]), np.float64(counts[j])
    if ni == 0.0 or nj == 0.0 or mean[i] + epsilon <= mean[j]:
        return 0.0
    if family == GAUSSIAN:
        gap = mean[i] - mean[j] + epsilon
        return gap * gap / (2.0 * sigma * sigma * (1.0 / ni + 1.0 / nj))
    low, high = max(mean[j] - epsilon, 0.0), min(mean[i], 1.0 - epsilon)
    for _ in range(80):  # the derivative N_i (x - mu_i) / (x (1 - x)) + N_j (y - mu_j) / (y (1 - y)), y = x + eps
        x = 0.5 * (low + high)
        y = x + epsilon
        slope = ni * (x - mean[i]) / (x * (1.0 - x)) + nj * (y - mean[j]) / (y * (1.0 - y))
        if slope > 0.0:
            high = x
        else:
            low = x
    x = min(max(0.5 * (low + high), 1e-300), 1.0 - epsilon - 1e-16)
    return ni * divergence(mean[i], x, family, sigma) + nj * divergence(mean[j], x + epsilon, family, sigma)


@called
def least_excess(counts: np.ndarray, mean: np.ndarray, answer: np.ndarray, epsilon: float, family: int,
                 sigma: float, level: float) -> float:
    """The least, over the pairs (i in the answer, j outside it), of the shifted statistic ``shifted_cost`` minus
    the pair's ``"mixture"`` boundary at ``level`` = ln(P / delta), or of the statistic itself when ``level`` is
    NaN; 0 as soon as some arm was never pulled or some j is at least epsilon above some i (no evidence: no rule
    stops)."""
    k = counts.shape[0]
    least = math.inf
    for i in range(k):
        if not answer[i]:
            continue
        for j in range(k):
            if answer[j]:
                continue
            if counts[i] == 0 or counts[j] == 0 or mean[i] + epsilon <= mean[j]:
                return 0.0
            excess = shifted_cost(counts, mean, i, j, epsilon, family, sigma)
            if not math.isnan(level):
                excess -= mixture_boundary(np.float64(counts[i]), np.float64(counts[j]), level, family)
            least = min(least, excess)
    return least


@called
def shifted_glr(counts: np.ndarray, mean: np.ndarray, answer: np.ndarray, epsilon: float, family: int,
                sigma: float) -> float:
    """Z(t) = min over i in the answer and j outside it of the shifted statistic ``shifted_cost`` (0 as soon as
    some arm was never pulled or some j is at least epsilon above some i)."""
    return least_excess(counts, mean, answer, epsilon, family, sigma, math.nan)


@called
def glr(counts: np.ndarray, mean: np.ndarray, answer: np.ndarray, family: int, sigma: float) -> float:
    """Z(t) = min over i in the answer and j outside it of Z_ij(t) (0 on a tie or an arm never pulled): the
    exact answer's statistic, ``shifted_glr`` at epsilon = 0."""
    return shifted_glr(counts, mean, answer, 0.0, family, sigma)


@called
def mixture_boundary(ni: float, nj: float, level: float, family: int) -> float:
    """The pair (i, j)'s ``"mixture"`` threshold at ``level`` = ln(P / delta) (``bandit_gym.divergences.
    mixture_boundary``): Bernoulli ``level + ln(N_i N_j) / 2 + 2 ln 2``; Gaussian ``(level + ln((1 + N_i)(1 +
    N_j)) / 2) / min(N_i / (1 + N_i), N_j / (1 + N_j))``."""
    if family == GAUSSIAN:
        return (level + 0.5 * (math.log1p(ni) + math.log1p(nj))) / min(ni / (1.0 + ni), nj / (1.0 + nj))
    return level + 0.5 * (math.log(ni) + math.log(nj)) + 2.0 * math.log(2.0)


@called
def arm_mixture_boundary(n: float, level: float, family: int) -> float:
    """One arm's ``"mixture"`` boundary at ``level`` (``bandit_gym.divergences.mixture_boundary`` with one count):
    Bernoulli ``level + ln(n) / 2 + ln 2``; Gaussian ``(level + ln(1 + n) / 2) (1 + n) / n``."""
    if family == GAUSSIAN:
        return (level + 0.5 * math.log1p(n)) * (1.0 + n) / n
    return level + 0.5 * math.log(n) + math.log(2.0)


@called
def mixture_stops(counts: np.ndarray, mean: np.ndarray, answer: np.ndarray, epsilon: float,
                  constants: Any) -> bool:
    """Whether every pair (i in the answer, j outside) has its statistic above its ``"mixture"`` threshold."""
    return least_excess(counts, mean, answer, epsilon, constants["family"], constants["sigma"],
                        constants["offset"]) > 0.0


@called
def beta(t: float, k: int, m: int, constants: Any) -> float:
    """The GLR threshold beta(t, delta) named by ``constants["threshold"]``; for ``"mixture"``, whose thresholds
    are per pair (``mixture_stops``), the largest of them after t pulls (N_i = N_j = t / 2)."""
    pairs = np.float64(m * (k - m))
    if constants["threshold"] == GK2016:
        return math.log(2.0 * t * pairs / constants["delta"])
    if constants["threshold"] == LS2020:
        c = 2.0 if constants["family"] == BERNOULLI else 1.0
        return 2.0 * math.log(c * t * (t + 1.0)) + constants["offset"]
    if constants["threshold"] == MIXTURE:
        half = max(0.5 * t, 1.0)
        return mixture_boundary(half, half, constants["offset"], constants["family"])
    return math.log((1.0 + math.log(t)) / constants["delta"])  # HEURISTIC


@called
def lucb_gap(counts: np.ndarray, mean: np.ndarray, answer: np.ndarray, t: float, constants: Any) -> float:
    """``max_{j not in S} UCB_j - min_{i in S} LCB_i`` with LUCB1's widths (t the pulls made)."""
    k = counts.shape[0]
    scale = 0.5 if constants["family"] == BERNOULLI else constants["sigma"]
    log_term = math.log(1.25 * k * t**4 / constants["delta"])
    top, bottom = -math.inf, math.inf
    for i in range(k):
        width = scale * math.sqrt(2.0 * log_term / max(np.float64(counts[i]), 1.0))
        if answer[i]:
            bottom = min(bottom, mean[i] - width)
        else:
            top = max(top, mean[i] + width)
    return top - bottom


@called
def kl_bound(mean: float, n: float, level: float, upper: bool, family: int, sigma: float) -> float:
    """The KL confidence bound: the largest (``upper``) or smallest q on mean's side with ``n d(mean, q) <=
    level`` (Gaussian: ``mean +- sigma sqrt(2 level / n)``; Bernoulli: 60 bisections in [0, 1])."""
    n = max(n, 1.0)
    if family == GAUSSIAN:
        width = sigma * math.sqrt(2.0 * level / n)
        return mean + width if upper else mean - width
    inside, outside = mean, 1.0 if upper else 0.0
    if n * divergence(mean, outside, family, sigma) <= level:
        return outside
    for _ in range(60):
        q = 0.5 * (inside + outside)
        if n * divergence(mean, q, family, sigma) <= level:
            inside = q
        else:
            outside = q
    return inside


@called
def kl_lucb_rate(t: float, k: int, delta: float) -> float:
    """b(t) = ln(k1 K t^alpha / delta) + ln ln(k1 K t^alpha / delta)."""
    inner = math.log(KL_LUCB_K1 * k * t**KL_LUCB_ALPHA / delta)
    return inner + math.log(inner)


@called
def kl_lucb_gap(counts: np.ndarray, mean: np.ndarray, answer: np.ndarray, t: float, constants: Any) -> float:
    """``max_{j not in S} U_j - min_{i in S} L_i`` with KL-LUCB's bounds at rate b(t)."""
    k = counts.shape[0]
    level = kl_lucb_rate(t, k, constants["delta"])
    top, bottom = -math.inf, math.inf
    for i in range(k):
        inside = answer[i] != 0  # a lower bound inside the answer, an upper one outside (one compilation of both)
        bound = kl_bound(mean[i], np.float64(counts[i]), level, not inside, constants["family"], constants["sigma"])
        if inside:
            bottom = min(bottom, bound)
        else:
            top = max(top, bound)
    return top - bottom
