"""abernethy2016's claims (Theorems 2-5 and the messages of §5), from ``results.csv`` of ``bandit-gym reproduce
abernethy2016``. The paper has no experiments; its bounds are evaluated on the study's instances (the
theorems' constants as printed; where the text we have is garbled the reading is stated in the row)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from bandit_gym.claims import Claim, Loss, fmt, read_csv, upper_bound_verdict
from bandit_gym.claims._stats import ALPHA, holm

PAPER = "abernethy2016"


def claims(folder: Path) -> tuple[list[Claim], list[Loss]]:
    """The ledger's rows for abernethy2016 (the claims this module's docstring lists), tested on the files of
    ``folder``, and the tests in which the paper's algorithm did significantly worse than another."""
    results = read_csv(folder, "results.csv")
    regret = results[results["metric"] == "regret"]
    runs = int(regret["runs"].iloc[0])
    a = regret[regret["feedback"] == "uncensored"]
    b = regret[regret["feedback"] == "censored"]
    rows = [_theorem2(a, runs), _theorem2_levels(a, runs), _theorem3(b, runs), _theorem4(b, runs),
            _optimistic_vs_adversarial(b, runs), _theorem5(b, runs), _cyclic(b, runs)]
    return rows, _losses(a, b)


# ------------------------------------------------------------------------------------------------ instances
def survival(distributions: np.ndarray) -> np.ndarray:
    """``F_i(j) = P(X_i >= j)`` for j = 1..m from the (K, m + 1) probability vectors."""
    p = np.asarray(distributions, dtype=np.float64)
    return 1.0 - np.cumsum(p, axis=1)[:, :-1]


def instance(part: str, levels: int) -> np.ndarray:
    """The survival matrix of the study's instance: part (a) the fixed-gap family, part (b) the two-arm staircase."""
    from bandit_gym.instances import fixed_gap_distributions, staircase_distributions

    return survival(fixed_gap_distributions(levels) if part == "a" else staircase_distributions(2, levels))


def gaps(f: np.ndarray) -> np.ndarray:
    """``Delta_i(j) = F_{i*(j)}(j) - F_i(j)``, (K, m)."""
    return f.max(axis=0)[None, :] - f


def smallest_positive_gap(f: np.ndarray) -> np.ndarray:
    """``min_j Delta_i(j)`` over the levels where arm i is suboptimal (inf for an arm best everywhere): the
    reading of Theorems 2 and 4, whose ``min_j`` over all levels would be 0 for any arm best somewhere."""
    d = gaps(f)
    return np.where(d > 0, d, np.inf).min(axis=1)


def ucb_type_bound(f: np.ndarray, horizon: int, constant: float) -> float:
    """``constant * sum_i log T / min_j Delta_i(j)`` (Theorem 2: 8, Theorem 4: 32; without the O(1))."""
    return float(constant * np.sum(np.log(horizon) / smallest_positive_gap(f)))


def kmucb_bound(f: np.ndarray, horizon: int) -> float:
    """Theorem 5 without the O(1): ``sum_i 128 max_j Delta_i(j) log T log m / min_{i,j} Delta_i(j)^2`` (the min
    over suboptimal pairs, arms best everywhere contributing nothing)."""
    d = gaps(f)
    smallest = d[d > 0].min()
    suboptimal = (d > 0).any(axis=1)
    m = f.shape[1]
    return float(np.sum(128.0 * d.max(axis=1)[suboptimal] * np.log(horizon) * np.log(m) / smallest**2))


def kl_bernoulli(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """The Kullback-Leibler divergence ``KL(Bernoulli(p), Bernoulli(q))``, elementwise (0 log 0 = 0)."""
    from scipy.special import xlogy

    return xlogy(p, p / q) + xlogy(1.0 - p, (1.0 - p) / (1.0 - q))


def adversarial_lower_bound(f: np.ndarray, horizon: int) -> float:
    """Theorem 3 read as Lai and Robbins' bound on each of the m stages:
    ``sum_j sum_{i suboptimal at j} Delta_i(j) log(T / m) / KL(F_i(j) || F_{i*(j)}(j))`` (the printed form has no
    ``Delta_i(j)`` in the numerator, which would make it a count of pulls rather than a regret)."""
    d = gaps(f)
    best = f.max(axis=0)[None, :].repeat(f.shape[0], axis=0)
    sub = d > 0
    m = f.shape[1]
    return float(np.sum(d[sub] * np.log(horizon / m) / kl_bernoulli(f[sub], best[sub])))


# ------------------------------------------------------------------------------------------------ helpers
def _row(table: Any, agent: str, **where: Any) -> Any:
    rows = table[table["agent"] == agent]
    for key, value in where.items():
        rows = rows[rows[key] == value]
    return rows.iloc[0]


def _welch(x: Any, y: Any) -> float:
    """Two-sided Welch t-test of equal means from two summary rows (mean, se, runs)."""
    from scipy import stats

    return float(stats.ttest_ind_from_stats(x["mean"], x["se"] * np.sqrt(x["runs"]), x["runs"], y["mean"],
                                            y["se"] * np.sqrt(y["runs"]), y["runs"], equal_var=False).pvalue)


def _exceeds(row: Any, bound: float) -> float:
    """One-sided z-test that the mean regret exceeds ``bound``."""
    from scipy import stats

    if row["se"] == 0:
        return 0.0 if row["mean"] > bound else 1.0
    return float(stats.norm.sf((row["mean"] - bound) / row["se"]))


SETTING_A = ("ThresholdBandit-v0 with fixed_gap_distributions(m) (four arms on 0..m, two never best, gaps .2-.4 for "
             "every m), uncensored feedback, i.i.d. thresholds, m in {levels}, T in {horizons}, {runs} runs per point")
SETTING_B = ("ThresholdBandit-v0 with staircase_distributions(2, m) (two arms, gaps 0.4 and 0.5 for every m), censored "
             "feedback, T = {horizon}, m in {levels}, {runs} runs per point")


def _setting_a(a: Any, runs: int) -> str:
    return SETTING_A.format(levels=sorted(set(a["levels"])), horizons=sorted(set(a["budget"])), runs=runs)


def _setting_b(b: Any, runs: int, orders: str) -> str:
    return SETTING_B.format(horizon=int(b["budget"].iloc[0]), levels=sorted(set(b["levels"])), runs=runs) + \
        f"; {orders}"


# ------------------------------------------------------------------------------------------------ claims
def _theorem2(a: Any, runs: int) -> Claim:
    rows = a[a["agent"] == "DKWUCB"]
    bounds = np.array([ucb_type_bound(instance("a", int(r["levels"])), int(r["budget"]), 8.0)
                       for _, r in rows.iterrows()])
    p = holm([_exceeds(r, b) for (_, r), b in zip(rows.iterrows(), bounds, strict=True)])
    ratio = (rows["mean"].to_numpy() / bounds).max()
    growth = {m: g.sort_values("budget")["mean"].to_numpy() for m, g in rows.groupby("levels")}
    observed = ("DKWUCB's regret against T: " + "; ".join(f"m = {m}: " + ", ".join(fmt(v) for v in g)
                                                          for m, g in growth.items())
                + f". The bound 8 sum_i log T / min_j Delta_i(j) is {fmt(bounds.min())} to {fmt(bounds.max())}; the "
                f"largest regret / bound is {fmt(ratio, 2)}")
    verdict, p_row, why = upper_bound_verdict(p, "the regret stays far below the bound at every m and T and grows "
                                              "about linearly in log T (the O(1) is unknown).")
    return Claim(f"{PAPER}.1", PAPER, "Theorem 2 (§4)",
                 "With delta = T^-2 / 2, DKWUCB's expected regret is at most 8 sum_i log T / min_j Delta_i(j) + O(1) "
                 "(uncensored feedback).",
                 _setting_a(a, runs) + "; min_j over the levels where arm i is suboptimal (the min over all levels is "
                 "0 for an arm best somewhere)", observed,
                 "one-sided z-test that the mean regret exceeds the bound (without the O(1)), per (m, T)",
                 f"Holm over the {len(rows)} (m, T) points", p_row, verdict, why)


def _theorem2_levels(a: Any, runs: int) -> Claim:
    rows = a[a["agent"] == "DKWUCB"]
    low, high = int(rows["levels"].min()), int(rows["levels"].max())
    pairs = [(_row(rows, "DKWUCB", levels=low, budget=t), _row(rows, "DKWUCB", levels=high, budget=t))
             for t in sorted(set(rows["budget"]))]
    p = holm([_welch(x, y) for x, y in pairs])
    up = [bool(q < ALPHA and y["mean"] > x["mean"]) for (x, y), q in zip(pairs, p, strict=True)]
    per = {int(r["levels"]): fmt(r["mean"]) for _, r in rows[rows["budget"] == rows["budget"].max()].iterrows()}
    ptu = a[(a["agent"] == "PerThresholdUCB") & (a["budget"] == a["budget"].max())].sort_values("levels")
    observed = (f"at T = {int(rows['budget'].max())}: DKWUCB " + ", ".join(f"{v} at m = {m}" for m, v in per.items())
                + "; PerThresholdUCB (each level learnt alone) " + ", ".join(
                    f"{fmt(r['mean'])} at m = {int(r['levels'])}" for _, r in ptu.iterrows())
                + f"; DKWUCB at m = {high} against m = {low}: " + ", ".join(
                    f"T = {int(x['budget'])} {fmt(y['mean'] - x['mean'])}" for x, y in pairs))
    verdict = "not supported" if any(up) else "consistent"
    return Claim(f"{PAPER}.2", PAPER, "Theorem 2 and its discussion (§4)",
                 "Arm i's contribution to DKWUCB's regret is identical to UCB's with the gap min_j Delta_i(j): the "
                 "regret does not grow with the number of thresholds m.",
                 _setting_a(a, runs), observed,
                 f"two-sided Welch t-tests of DKWUCB's mean regret at m = {high} against m = {low}, per T",
                 f"Holm over the {len(pairs)} horizons", float(p.min()), verdict,
                 f"with every gap the same for every m, DKWUCB's regret at m = {high} is not significantly above m = "
                 f"{low} at any T, while the per-level learner's grows with m; no growth cannot be confirmed by a "
                 "non-significant test." if verdict == "consistent" else
                 f"DKWUCB's regret grows significantly from m = {low} to m = {high} at fixed gaps.")


def _theorem3(b: Any, runs: int) -> Claim:
    inc = b[b["order"] == "increasing"]
    horizon = int(b["budget"].iloc[0])
    parts, ok = [], True
    for m in sorted(set(inc["levels"])):
        best = inc[inc["levels"] == m].sort_values("mean").iloc[0]
        bound = adversarial_lower_bound(instance("b", int(m)), horizon)
        ok &= bool(best["mean"] >= bound)
        parts.append(f"m = {m}: bound {fmt(bound)}, best observed {fmt(best['mean'])} ({best['agent']})")
    ptu = inc[inc["agent"] == "PerThresholdUCB"].sort_values("levels")
    slope = np.polyfit(np.log(ptu["levels"]), np.log(ptu["mean"]), 1)[0]
    return Claim(f"{PAPER}.3", PAPER, "Theorem 3 (§5.1)",
                 "Under the adversarial (increasing) order with censored feedback, no algorithm can achieve a regret "
                 "better than sum_j sum_i log(T/m) / KL(B(F_i(j)) || B(F_i*(j)(j))): the problem is m independent "
                 "bandits.",
                 _setting_b(b, runs, "increasing order, PerThresholdUCB and OPTIM") + "; the bound read as Lai and "
                 "Robbins' with Delta_i(j) in the numerator (the printed form counts pulls)",
                 "; ".join(parts) + f"; PerThresholdUCB's regret grows like m^{slope:.2f} (log-log slope over m)",
                 "none: an asymptotic lower bound holds for every algorithm, so the observed regret is compared with "
                 "its value", "none", None, "consistent" if ok else "not supported",
                 "every algorithm's regret is above the bound at every m and PerThresholdUCB's grows with m as the m "
                 "independent bandits of the proof; a lower bound for all algorithms cannot be confirmed by running "
                 "some of them." if ok else "an algorithm's regret is below the asymptotic bound at T = "
                 f"{horizon} (the bound is asymptotic in T).")


def _theorem4(b: Any, runs: int) -> Claim:
    dec = b[(b["order"] == "decreasing") & (b["agent"] == "OPTIM")].sort_values("levels")
    horizon = int(b["budget"].iloc[0])
    bounds = np.array([ucb_type_bound(instance("b", int(m)), horizon, 32.0) for m in dec["levels"]])
    p_bound = holm([_exceeds(r, bd) for (_, r), bd in zip(dec.iterrows(), bounds, strict=True)])
    low, high = dec.iloc[0], dec.iloc[-1]
    p_levels = _welch(low, high)
    observed = ("OPTIM under the decreasing order: " + ", ".join(f"{fmt(r['mean'])} at m = {int(r['levels'])}"
                                                                  for _, r in dec.iterrows())
                + f"; the bound 32 sum_i log T / min_j Delta_i(j) is {fmt(bounds.min())}; m = {int(high['levels'])} "
                f"against m = {int(low['levels'])}: Welch p = {fmt(p_levels, 2)}")
    verdict, p_row, why = upper_bound_verdict(p_bound, "the regret is far below the bound and flat in m.")
    return Claim(f"{PAPER}.4", PAPER, "Theorem 4 (§5.1)",
                 "Under the optimistic (non-increasing) order with censored feedback, OPTIM's regret is at most "
                 "32 sum_i log T / min_j Delta_i(j) + O(1), as with uncensored feedback (no m).",
                 _setting_b(b, runs, "decreasing order, OPTIM") + "; min_j over the levels where arm i is suboptimal",
                 observed, "one-sided z-test that the mean regret exceeds the bound (without the O(1)), per m",
                 f"Holm over the {len(dec)} values of m", p_row, verdict, why)


def _optimistic_vs_adversarial(b: Any, runs: int) -> Claim:
    levels = sorted(set(b["levels"]))
    tests, ratios = [], []
    for m in levels:
        optim = _row(b, "OPTIM", order="decreasing", levels=m)
        adversarial = b[(b["order"] == "increasing") & (b["levels"] == m)].sort_values("mean").iloc[0]
        tests.append((optim, adversarial))
        ratios.append(adversarial["mean"] / optim["mean"])
    p = holm([_welch(x, y) for x, y in tests])
    better = [bool(q < ALPHA and y["mean"] > x["mean"]) for (x, y), q in zip(tests, p, strict=True)]
    growing = bool(np.all(np.diff(ratios) > 0))
    observed = ("best regret under the increasing order / OPTIM's under the decreasing order: " + ", ".join(
        f"{r:.2f} at m = {m}" for m, r in zip(levels, ratios, strict=True)) + "; OPTIM significantly better at m = "
        + (", ".join(str(m) for m, ok in zip(levels, better, strict=True) if ok) or "none"))
    supported = better[-1] and growing
    worse = [m for (x, y), q, m in zip(tests, p, levels, strict=True) if q < ALPHA and y["mean"] < x["mean"]]
    return Claim(f"{PAPER}.5", PAPER, "§5.1",
                 "In the adversarial setting the regret scales with m; in the optimistic setting every earlier sample "
                 "is useful and the learner can perform significantly better.",
                 _setting_b(b, runs, "OPTIM under the decreasing order against the best algorithm under the "
                            "increasing order"), observed,
                 "two-sided Welch t-tests of mean regret, per m",
                 f"Holm over the {len(levels)} values of m", float(p[-1]),
                 "supported" if supported else "not supported",
                 ("the optimistic order's regret is flat in m while the adversarial order's grows, so the ratio grows "
                  f"with m and the optimistic order is significantly better from m = "
                  f"{min(m for m, ok in zip(levels, better, strict=True) if ok)} on"
                  + (f" (at m = {', '.join(map(str, worse))} the adversarial order is significantly better: with "
                     "few levels the m independent bandits are cheap)" if worse else "") + ".")
                 if supported else "the ratio does not grow with m, or the optimistic order is not significantly "
                 "better at the largest m.")


def _theorem5(b: Any, runs: int) -> Claim:
    cyc = b[(b["order"] == "cyclic") & (b["agent"] == "KMUCB")].sort_values("levels")
    horizon = int(b["budget"].iloc[0])
    parts, informative = [], []
    for _, r in cyc.iterrows():
        f = instance("b", int(r["levels"]))
        bound = kmucb_bound(f, horizon)
        ceiling = horizon * gaps(f).max()
        if bound < ceiling:
            informative.append((int(r["levels"]), r, bound))
        parts.append(f"m = {int(r['levels'])}: bound {fmt(bound)}, largest possible regret T max Delta = "
                     f"{fmt(ceiling)}, KMUCB {fmt(r['mean'])}")
    p = holm([_exceeds(r, bound) for _, r, bound in informative]) if informative else np.array([])
    observed = "; ".join(parts)
    if not informative:
        verdict, why, pv = "untested", "the bound exceeds the largest possible regret at every m.", None
    else:
        held = bool((p >= ALPHA).all())
        verdict = "consistent" if held else "not supported"
        pv = float(p.min())
        why = (f"the bound says something only at m = {', '.join(str(m) for m, *_ in informative)}, where KMUCB's "
               "regret is below it; at larger m it exceeds the largest possible regret, so its log m shape is not "
               f"observable at T = {horizon}: KMUCB's radius sqrt(16 log(T k) / ((m - j + 1) k)) resolves a level only "
               f"after thousands of epochs of K m rounds, so at this horizon it mostly explores.")
    return Claim(f"{PAPER}.6", PAPER, "Theorem 5 (§5.2)",
                 "Under the cyclic-permutation order, KMUCB's regret is at most sum_i 128 max_j Delta_i(j) log T log m "
                 "/ min_{i,j} Delta_i(j)^2 + O(1).",
                 _setting_b(b, runs, "cyclic order, KMUCB") + "; the min over the suboptimal (arm, level) pairs",
                 observed, "one-sided z-test that the mean regret exceeds the bound, where the bound is below the "
                 "largest possible regret", f"Holm over the {len(informative)} values of m where the bound is "
                 "informative", pv, verdict, why)


def _cyclic(b: Any, runs: int) -> Claim:
    levels = sorted(set(b["levels"]))
    tests = [(_row(b, "KMUCB", order="cyclic", levels=m),
              b[(b["order"] == "increasing") & (b["levels"] == m)].sort_values("mean").iloc[0]) for m in levels]
    p = holm([_welch(x, y) for x, y in tests])
    better = [bool(q < ALPHA and x["mean"] < y["mean"]) for (x, y), q in zip(tests, p, strict=True)]
    worse = [bool(q < ALPHA and x["mean"] > y["mean"]) for (x, y), q in zip(tests, p, strict=True)]
    ptu = b[(b["order"] == "cyclic") & (b["agent"] == "PerThresholdUCB")].sort_values("levels")
    observed = ("KMUCB (cyclic) against the best algorithm under the increasing order: " + ", ".join(
        f"{fmt(x['mean'])} vs {fmt(y['mean'])} at m = {m}" for (x, y), m in zip(tests, levels, strict=True))
        + "; PerThresholdUCB under the cyclic order: " + ", ".join(
            f"{fmt(r['mean'])} at m = {int(r['levels'])}" for _, r in ptu.iterrows()))
    verdict = "supported" if all(better) else "not supported"
    return Claim(f"{PAPER}.7", PAPER, "§5.2",
                 "If the threshold values come in a cyclic-permutation order, KMUCB performs significantly better "
                 "than is possible in the adversarial setting: its regret scales only with log m.",
                 _setting_b(b, runs, "KMUCB under the cyclic order against the best algorithm under the increasing "
                            "order"), observed, "two-sided Welch t-tests of mean regret, per m",
                 f"Holm over the {len(levels)} values of m", float(p.min()), verdict,
                 "KMUCB is significantly better at every m." if verdict == "supported" else
                 (f"at T = {int(b['budget'].iloc[0])} KMUCB is significantly worse at "
                  f"{sum(worse)} of {len(levels)} values of m: it is still exploring (Theorem 5's constants make the "
                  "claim one about much longer horizons), and its regret grows with m less than the per-level "
                  "learner's only because it explores at every m."))


def _losses(a: Any, b: Any) -> list[Loss]:
    """Every Welch test where a paper's algorithm (DKWUCB in part a; OPTIM and KMUCB in part b, in their order and
    the others) has significantly more regret than another algorithm run in the same setting."""
    rows = []
    for (m, t), g in a.groupby(["levels", "budget"]):
        me = _row(g, "DKWUCB")
        rows += [("DKWUCB", o["agent"], f"uncensored, m = {m}, T = {t}", me, o) for _, o in g.iterrows()
                 if o["agent"] != "DKWUCB"]
    for (order, m), g in b.groupby(["order", "levels"], sort=False):
        for mine in ("OPTIM", "KMUCB"):
            if mine in set(g["agent"]):
                me = _row(g, mine)
                rows += [(mine, o["agent"], f"censored, {order} order, m = {m}", me, o) for _, o in g.iterrows()
                         if o["agent"] != mine]
    p = [_welch(me, o) for *_, me, o in rows]
    q = holm(p)
    family = f"all {len(rows)} comparisons of the paper's algorithms"
    return [Loss(PAPER, mine, other, setting, "regret", f"{fmt(me['mean'])} vs {fmt(o['mean'])}", pv, float(qv), family)
            for (mine, other, setting, me, o), pv, qv in zip(rows, p, q, strict=True)
            if pv < ALPHA and me["mean"] > o["mean"]]
