"""The one decision procedure of the ledger: ``decide(evidence)`` turns a typed description of how a claim was
tested into its verdict, the p-value that decides it, the test, the decisive statistic, the correction and the
decision rule, and a reason. No other code sets a verdict: every paper module builds an ``Evidence`` and calls
``decide``.

What a claim is (``Kind``) and what decides it:

- ``DIRECTION``, a difference in a stated direction ("A errs less than B", "LSA beats the others at almost all
  budgets"): a tree of two-sided tests (``Comparison`` leaves, ``Group`` nodes with a ``Reading`` such as *all*,
  *90% or more*, *more than half*, *at least one*), Holm-corrected over all its leaves. A leaf is *won* when its
  Holm p < ``ALPHA`` in the claimed direction, *lost* when significant the other way, a *well-powered null*
  when not significant although the test had power >= ``POWER`` to detect the effect it is sized for (the
  paper's effect, or the observed difference when the paper states none: then the power of a non-significant
  test is below 1/2 and the null is never well-powered), and *open* otherwise. A group of n members is lost when
  its lost members leave too few to meet its reading (with ``none_lost``: when any is lost), won when its won
  members meet it, open when its won and open members could meet it, and a well-powered null otherwise.
  Verdict: won -> **supported**; lost -> **not supported** (contradicted: significant the other way);
  well-powered null -> **not supported** (the test would have found the effect 80% of the time: its absence is
  evidence against the claimed effect, not against any smaller one); open -> **inconclusive**, with the runs the
  easiest open leaf would need for 80% power at Holm's strictest level.
- ``NO_DIFFERENCE`` ("A is not significantly different from B", "the regret does not grow with m"): a
  significant difference anywhere (Holm) -> **not supported**; none -> **consistent** (a non-significant
  difference cannot show equality by construction).
- ``AT_MOST``, an upper bound or an "at most" claim, one point per setting (``Bound``), each with the two
  one-sided p-values: every informative point significantly below the bound (Holm) -> **supported**; one
  significantly above -> **not supported**; else **inconclusive**. A point whose bound is at or above the
  largest value the quantity can take says nothing; no informative point -> **untested**.
- ``LOWER_BOUND``, a lower bound every algorithm respects: an algorithm significantly below it (one-sided,
  Holm) -> **not supported**; else **consistent** (running some algorithms cannot confirm a bound on all).
- ``ORDER``, a rate whose constant is not stated (``O(.)``): **consistent**, with the reason (no finite run
  confirms or contradicts it).
- ``OUT_OF_REACH``: **untested**, with the reason (the experiment does not reach the claim's regime). A
  ``DIRECTION`` tree whose every leaf is out of reach (``Comparison.out_of_reach``) is untested too.

Pairing: a ``Method`` whose runs are paired by design (common random numbers, the same instance in run r of
every agent) must use a paired test; ``decide`` refuses an unpaired one.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from bandit_gym.studies._stats import ALPHA, POWER, binomial_runs_needed, holm, power, runs_needed

VERDICTS = ("supported", "not supported", "consistent", "untested", "inconclusive")
"""The verdict vocabulary."""


class Kind(enum.Enum):
    """What a claim asserts, which fixes how it can be confirmed or contradicted."""

    DIRECTION = "a difference in a stated direction"
    NO_DIFFERENCE = "no difference"
    AT_MOST = "an upper bound (at most)"
    LOWER_BOUND = "a lower bound every algorithm respects"
    ORDER = "a rate with an unstated constant"
    OUT_OF_REACH = "out of the experiment's reach"


@dataclass(frozen=True)
class Method:
    """The test used: its name, whether it pairs runs, whether the runs are paired by design, and how they were
    made (said in the row)."""

    name: str
    paired: bool
    runs_paired: bool
    design: str

    def describe(self) -> str:
        return f"{self.name} ({'paired' if self.paired else 'unpaired'}: {self.design})"


@dataclass(frozen=True)
class Comparison:
    """One two-sided test of a difference, oriented so that ``effect > 0`` is the claim's direction. ``sd`` is
    the standard deviation of one run's contribution to ``effect`` (``effect``'s standard error times
    ``sqrt(runs)``), for the power; ``target`` the paper's effect (None: the paper states none, the observed
    ``effect`` stands in); ``out_of_reach`` says why the experiment cannot test this comparison (empty: it can)."""

    label: str
    p: float
    effect: float
    sd: float
    runs: int
    statistic: str
    target: float | None = None
    out_of_reach: str = ""

    def __post_init__(self) -> None:
        if not 0.0 <= self.p <= 1.0:
            raise ValueError(f"comparison {self.label!r}: p={self.p!r} is not in [0, 1]")
        if not self.sd >= 0.0 or self.runs < 1:
            raise ValueError(f"comparison {self.label!r}: sd={self.sd!r} must be >= 0 and runs={self.runs!r} >= 1")


@dataclass(frozen=True)
class Reading:
    """How many members of a group the claim needs won: a share (``strict``: more than it, else at least it),
    and whether one significant loss contradicts it (``none_lost``)."""

    text: str
    share: float
    strict: bool = False
    none_lost: bool = False

    def met(self, count: int, total: int) -> bool:
        return count / total > self.share if self.strict else count / total >= self.share


ALL = Reading("all", 1.0)
ANY = Reading("at least one (none lost)", 0.0, strict=True, none_lost=True)
MOST = Reading("more than half", 0.5, strict=True)
MOST_NONE_LOST = Reading("more than half (none lost)", 0.5, strict=True, none_lost=True)
ALMOST_ALL = Reading("90% or more", 0.9)
ALMOST_ALL_NONE_LOST = Reading("90% or more (none lost)", 0.9, none_lost=True)


@dataclass(frozen=True)
class Group:
    """Comparisons (or groups) of which the claim needs ``reading`` won; ``unit`` names the members."""

    unit: str
    members: tuple[Comparison | Group, ...]
    reading: Reading = ALL

    def __post_init__(self) -> None:
        if not self.members:
            raise ValueError(f"group of {self.unit}: members is empty; a group needs at least one comparison")


@dataclass(frozen=True)
class Bound:
    """One setting of a bound claim: the observed value, the bound, the one-sided p-values that the true value
    is below / above it, the per-run standard deviation and runs (for the runs a confirmation needs), and
    ``trivial``: the value the quantity cannot pass (its largest for ``AT_MOST``, smallest for ``LOWER_BOUND``;
    a bound at or beyond it says nothing). ``exact=False``: ``bound`` is only a lower value of the claim's
    bound, so exceeding it does not contradict the claim."""

    label: str
    observed: float
    bound: float
    p_below: float
    p_above: float
    sd: float
    runs: int
    statistic: str
    trivial: float | None = None
    exact: bool = True
    #: the failures were counted (``observed`` is their rate): the runs a confirmation needs are the exact
    #: binomial test's (``_stats.binomial_runs_needed``), not the normal approximation's
    counted: bool = False


@dataclass(frozen=True)
class Evidence:
    """A typed description of how a claim is tested: its ``kind``, the ``method``, the ``comparisons`` (a
    ``Group``: ``DIRECTION``, ``NO_DIFFERENCE``) or the ``bounds`` (``AT_MOST``, ``LOWER_BOUND``), the family
    the Holm correction runs over (``family``, in words), the ``reason`` (``ORDER``, ``OUT_OF_REACH``) and a
    ``note`` the row's reason ends with (the reading of the paper, what the numbers mean)."""

    kind: Kind
    method: Method | None = None
    comparisons: Group | None = None
    bounds: tuple[Bound, ...] = ()
    family: str = ""
    reason: str = ""
    note: str = ""

    def __post_init__(self) -> None:
        tested = self.kind not in (Kind.ORDER, Kind.OUT_OF_REACH)
        if tested and self.method is None:
            raise ValueError(f"kind={self.kind.name}: method is None; a tested claim names its test")
        if self.method is not None and self.method.runs_paired and not self.method.paired:
            raise ValueError(f"method={self.method.name!r} is unpaired but the runs are paired "
                             f"({self.method.design}); use a paired test")
        if self.kind in (Kind.DIRECTION, Kind.NO_DIFFERENCE) and self.comparisons is None:
            raise ValueError(f"kind={self.kind.name}: comparisons is None; a difference claim needs its tests")
        if self.kind in (Kind.AT_MOST, Kind.LOWER_BOUND) and not self.bounds:
            raise ValueError(f"kind={self.kind.name}: bounds is empty; a bound claim needs its settings")
        if not tested and not self.reason:
            raise ValueError(f"kind={self.kind.name}: reason is empty; say why the data cannot decide the claim")


@dataclass(frozen=True)
class Decision:
    """What ``decide`` returns: the verdict, the Holm-corrected p-value that decides it (None: no test), the
    test, the decisive statistic, the correction, the decision rule and the reason."""

    verdict: str
    p_value: float | None
    test: str
    statistic: str
    correction: str
    rule: str
    why: str

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict={self.verdict!r} is not one of {VERDICTS}")


# ------------------------------------------------------------------------------------------------ decide
def decide(evidence: Evidence) -> Decision:
    """The verdict of one claim from its ``evidence`` (the rules of this module's docstring)."""
    rules = {Kind.DIRECTION: _direction, Kind.NO_DIFFERENCE: _no_difference, Kind.AT_MOST: _at_most,
             Kind.LOWER_BOUND: _lower_bound, Kind.ORDER: _untested_or_order, Kind.OUT_OF_REACH: _untested_or_order}
    return rules[evidence.kind](evidence)


def _finish(e: Evidence, verdict: str, p: float | None, statistic: str, correction: str, rule: str,
            why: str) -> Decision:
    test = "none" if e.method is None else e.method.describe()
    why = why[0].upper() + why[1:] if why else why
    return Decision(verdict, p, test, statistic or "-", correction, rule,
                    why + (f" {e.note}" if e.note else ""))


def _untested_or_order(e: Evidence) -> Decision:
    if e.kind is Kind.ORDER:
        return _finish(e, "consistent", None, "", "none", "a rate whose constant is not stated is consistent: "
                       "no finite run confirms or contradicts it", e.reason)
    return _finish(e, "untested", None, "", "none", "untested: the experiment does not reach the claim's regime",
                   e.reason)


def _leaves(node: Comparison | Group) -> Iterator[Comparison]:
    if isinstance(node, Comparison):
        yield node
    else:
        for member in node.members:
            yield from _leaves(member)


def _correction(count: int, family: str, what: str = "tests") -> str:
    return f"Holm over the {count} {what}" + (f" ({family})" if family else "")


def _shown(c: Comparison | Bound, q: float) -> str:
    """The decisive test's statistic (its Holm p is the row's p-value)."""
    return f"{c.label}: {c.statistic}"


def _labels(items: Sequence[Comparison | Bound], limit: int = 4) -> str:
    names = [c.label for c in items[:limit]]
    return "; ".join(names) + (f" and {len(items) - limit} more" if len(items) > limit else "")


# ------------------------------------------------------------------------------------------------ direction
WON, LOST, NULL, OPEN, OUT = "won", "lost", "well-powered null", "open", "out of reach"


@dataclass(frozen=True)
class _Scored:
    comparison: Comparison
    q: float
    power: float
    needed: float
    outcome: str


def _score(c: Comparison, q: float, family: int) -> _Scored:
    target = abs(c.effect) if c.target is None else abs(c.target)
    pw = power(target, c.sd, c.runs, family)
    needed = runs_needed(target, c.sd, family)
    significant = WON if c.effect > 0 else LOST
    return _Scored(c, q, pw, needed, significant if q < ALPHA else NULL if pw >= POWER else OPEN)


def _outcome(node: Comparison | Group, scores: dict[int, _Scored]) -> str:
    if isinstance(node, Comparison):
        return OUT if node.out_of_reach else scores[id(node)].outcome
    outcomes = [o for o in (_outcome(m, scores) for m in node.members) if o != OUT]
    if not outcomes:
        return OUT
    n, won, lost, open_ = len(outcomes), outcomes.count(WON), outcomes.count(LOST), outcomes.count(OPEN)
    reading = node.reading
    if (lost and reading.none_lost) or not reading.met(n - lost, n):
        return LOST
    if reading.met(won, n):
        return WON
    return OPEN if reading.met(won + open_, n) else NULL


def _needed_count(reading: Reading, n: int) -> int:
    """The fewest won members of n that meet ``reading``."""
    return next(k for k in range(n + 1) if reading.met(k, n))


def _decisive(node: Comparison | Group, scores: dict[int, _Scored], outcome: str) -> _Scored:
    """The leaf whose Holm p decides ``node``'s ``outcome`` (won or lost): in a won group the k-th smallest p of
    its won members, k the fewest its reading needs; in a lost group the smallest p of its lost members that makes
    the reading impossible."""
    if isinstance(node, Comparison):
        return scores[id(node)]
    members = [m for m in node.members if _outcome(m, scores) != OUT]
    chosen = sorted((_decisive(m, scores, outcome) for m in members if _outcome(m, scores) == outcome),
                    key=lambda s: s.q)
    need = _needed_count(node.reading, len(members))
    if outcome == WON:
        return chosen[max(need, 1) - 1]
    return chosen[0 if node.reading.none_lost else min(len(members) - need, len(chosen) - 1)]


def _under(node: Comparison | Group, scores: dict[int, _Scored], outcome: str) -> list[Comparison]:
    """The leaves with ``outcome`` under the members of ``node`` that have it."""
    if isinstance(node, Comparison):
        return [node] if _outcome(node, scores) == outcome else []
    return [c for m in node.members if _outcome(m, scores) == outcome for c in _under(m, scores, outcome)]


def _condition(node: Group) -> str:
    text = f"{node.reading.text} of the {len(node.members)} {node.unit} won"
    inner = next((m for m in node.members if isinstance(m, Group)), None)
    return text + (f" (each won when {_condition(inner)})" if inner is not None else "")


def _target(s: _Scored) -> str:
    c = s.comparison
    if c.target is not None:
        return f"the paper's effect {c.target:.3g}"
    return f"the observed difference {abs(c.effect):.3g} (the paper states no effect size)"


def _direction(e: Evidence) -> Decision:
    assert e.comparisons is not None
    leaves = [c for c in _leaves(e.comparisons) if not c.out_of_reach]
    rule = (rf"a comparison is won (lost) when its Holm \(p < {ALPHA}\) in (against) the claimed direction, a "
            rf"well-powered null when not significant with power \(\ge {POWER}\) to detect the effect it is sized for; "
            f"the claim needs {_condition(e.comparisons)}: supported when met, not supported when losses or "
            "well-powered nulls make it impossible, otherwise inconclusive")
    if not leaves:
        reasons = "; ".join(dict.fromkeys(c.out_of_reach for c in _leaves(e.comparisons)))
        return _finish(e, "untested", None, "", "none", "untested: no comparison the claim needs is in the "
                       "experiment's reach", f"no comparison is in the experiment's reach: {reasons}.")
    q = holm([c.p for c in leaves])
    scores = {id(c): _score(c, float(qc), len(leaves)) for c, qc in zip(leaves, q, strict=True)}
    outcome = _outcome(e.comparisons, scores)
    by = {k: [s for s in scores.values() if s.outcome == k] for k in (WON, LOST, NULL, OPEN)}  # the leaves
    counts = (f"{len(by[WON])} of {len(leaves)} comparisons significant in the claimed direction, "
              f"{len(by[LOST])} the other way, {len(by[NULL]) + len(by[OPEN])} not significant")
    correction = _correction(len(leaves), e.family)
    if outcome in (WON, LOST):
        s = _decisive(e.comparisons, scores, outcome)
        if outcome == WON:
            return _finish(e, "supported", s.q, _shown(s.comparison, s.q), correction, rule,
                           f"{counts}: the claim's condition is met.")
        return _finish(e, "not supported", s.q, _shown(s.comparison, s.q), correction, rule,
                       f"{counts}; significantly the other way where it decides: "
                       f"{_labels(_under(e.comparisons, scores, LOST))}.")
    if outcome == NULL:
        s = max((scores[id(c)] for c in _under(e.comparisons, scores, NULL)), key=lambda x: x.power)
        return _finish(e, "not supported", s.q, _shown(s.comparison, s.q), correction, rule,
                       f"{counts}; {s.comparison.label} is not significant although the test had power "
                       f"{s.power:.2f} to detect {_target(s)}: evidence against the claimed effect.")
    undecided = [scores[id(c)] for c in _under(e.comparisons, scores, OPEN)]
    s = min(undecided, key=lambda x: x.needed)
    nearest = min(undecided, key=lambda x: x.q)
    return _finish(e, "inconclusive", nearest.q, _shown(nearest.comparison, nearest.q), correction, rule,
                   f"{counts}, with low power; " + _needed(s) + ".")


def _needed(s: _Scored) -> str:
    if s.needed == float("inf"):
        return f"the undecided comparisons show no difference at all ({s.comparison.label})"
    return (f"the easiest undecided comparison ({s.comparison.label}) would need about {s.needed:.2g} runs (it has "
            f"{s.comparison.runs}) for {POWER:.0%} power at Holm's strictest level to detect {_target(s)}")


# ------------------------------------------------------------------------------------------------ no difference
def _no_difference(e: Evidence) -> Decision:
    assert e.comparisons is not None
    leaves = [c for c in _leaves(e.comparisons) if not c.out_of_reach]
    rule = (rf"not supported when some difference is significant (Holm \(p < {ALPHA}\)); otherwise consistent: a "
            "non-significant difference cannot show equality")
    if not leaves:
        return _finish(e, "untested", None, "", "none", rule, "no comparison is in the experiment's reach.")
    q = holm([c.p for c in leaves])
    i = int(q.argmin())
    significant = [c for c, qc in zip(leaves, q, strict=True) if qc < ALPHA]
    correction = _correction(len(leaves), e.family)
    if significant:
        return _finish(e, "not supported", float(q[i]), _shown(leaves[i], float(q[i])), correction, rule,
                       f"significant differences in {len(significant)} of {len(leaves)} comparisons: "
                       f"{_labels(significant)}.")
    return _finish(e, "consistent", float(q[i]), _shown(leaves[i], float(q[i])), correction, rule,
                   f"none of the {len(leaves)} comparisons is significant; a non-significant test cannot show "
                   "equality (an equivalence test with a stated margin would).")


# ------------------------------------------------------------------------------------------------ bounds
def _informative(e: Evidence, upper: bool) -> tuple[list[Bound], list[Bound]]:
    def says_something(b: Bound) -> bool:
        return b.trivial is None or (b.bound < b.trivial if upper else b.bound > b.trivial)

    return [b for b in e.bounds if says_something(b)], [b for b in e.bounds if not says_something(b)]


def _vacuous(e: Evidence, vacuous: list[Bound], upper: bool) -> str:
    if not vacuous:
        return ""
    side = "largest" if upper else "smallest"
    limits = ", ".join(dict.fromkeys(f"{b.trivial:.3g}" for b in vacuous))
    return (f"the bound is at or beyond the {side} value the quantity can take ({limits}) at {len(vacuous)} of "
            f"{len(e.bounds)} settings ({_labels(vacuous)}), so it says nothing there")


def _at_most(e: Evidence) -> Decision:
    points, vacuous = _informative(e, upper=True)
    rule = (r"supported when every informative setting is significantly below the bound (one-sided, Holm \(p < "
            rf"{ALPHA}\)), not supported when one is significantly above it, otherwise inconclusive; untested when "
            "the bound is at or above the largest possible value everywhere")
    if not points:
        return _finish(e, "untested", None, "", "none", rule, _vacuous(e, vacuous, True) + ".")
    q_below, q_above = holm([b.p_below for b in points]), holm([b.p_above for b in points])
    correction = _correction(len(points), e.family, "informative settings, each direction")
    skipped = _vacuous(e, vacuous, True)
    skipped = f" ({skipped})" if skipped else ""
    above = [(b, float(q)) for b, q in zip(points, q_above, strict=True) if q < ALPHA and b.exact]
    if above:
        b, q = min(above, key=lambda x: x[1])
        return _finish(e, "not supported", q, _shown(b, q), correction, rule,
                       f"significantly above the bound at {_labels([x for x, _ in above])}{skipped}.")
    if (q_below < ALPHA).all():
        i = int(q_below.argmax())
        return _finish(e, "supported", float(q_below[i]), _shown(points[i], float(q_below[i])), correction, rule,
                       f"significantly below the bound at all {len(points)} informative settings{skipped}.")
    open_ = [(b, float(q)) for b, q in zip(points, q_below, strict=True) if q >= ALPHA]
    b, q = max(open_, key=lambda x: x[1])
    gap = b.bound - b.observed
    if gap <= 0:
        need = float("inf")
    elif b.counted:
        need = binomial_runs_needed(b.observed, b.bound, len(points))
    else:
        need = runs_needed(gap, b.sd, len(points), sides=1)
    what = (f"{b.label} would need about {need:.2g} runs (it has {b.runs}) to confirm it at the observed value "
            f"with {POWER:.0%} power" if need < float("inf") else f"at {b.label} the observed value is not below it")
    return _finish(e, "inconclusive", q, _shown(b, q), correction, rule,
                   f"not significantly below the bound at {len(open_)} of {len(points)} informative settings; "
                   f"{what}{skipped}.")


def _lower_bound(e: Evidence) -> Decision:
    points, vacuous = _informative(e, upper=False)
    rule = (rf"not supported when some algorithm is significantly below the bound (one-sided, Holm \(p < {ALPHA}\)); "
            "otherwise consistent: running some algorithms cannot confirm a bound on all of them")
    if not points:
        return _finish(e, "untested", None, "", "none", rule, _vacuous(e, vacuous, False) + ".")
    q = holm([b.p_below for b in points])
    i = int(q.argmin())
    correction = _correction(len(points), e.family, "settings")
    below = [b for b, qb in zip(points, q, strict=True) if qb < ALPHA]
    if below:
        return _finish(e, "not supported", float(q[i]), _shown(points[i], float(q[i])), correction, rule,
                       f"significantly below the bound at {_labels(below)}.")
    return _finish(e, "consistent", float(q[i]), _shown(points[i], float(q[i])), correction, rule,
                   f"no setting is significantly below the bound ({len(points)} tested); a lower bound on every "
                   "algorithm cannot be confirmed by running some of them.")
