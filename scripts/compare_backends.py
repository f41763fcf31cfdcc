"""Compare two results tables of the same experiments row by row (``results.csv`` of a numba run and of a JAX
run, ``--backend jax``): for every (experiment, agent, budget, metric) the difference of the means over its
standard error (Welch's z from each row's ``se``), its two-sided p-value, and Holm's correction over all rows.
The tables are consistent when no row is significant at level 0.05 after Holm's correction.

    python scripts/compare_backends.py NUMBA/results.csv JAX/results.csv

Both runs draw their own random streams, so the rows are independent samples of the same quantities: under
equality each z is a standard normal draw.
"""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
from scipy import stats

KEYS = ["experiment", "agent", "budget", "metric"]


def compare(first: pd.DataFrame, second: pd.DataFrame) -> pd.DataFrame:
    """One row per row of both tables: the two means, z, p and Holm's adjusted p."""
    both = first.merge(second, on=KEYS, suffixes=("_a", "_b"), validate="one_to_one")
    if len(both) != len(first) or len(both) != len(second):
        raise ValueError(f"the tables differ in their rows: {len(first)} and {len(second)} rows, {len(both)} shared")
    se = np.sqrt(both["se_a"] ** 2 + both["se_b"] ** 2)
    diff = both["mean_a"] - both["mean_b"]
    both["z"] = np.where(se > 0, diff / se.where(se > 0, 1.0), np.where(diff == 0, 0.0, np.inf))
    both["p"] = 2 * stats.norm.sf(np.abs(both["z"]))
    order = np.argsort(both["p"].to_numpy())
    adjusted = np.minimum(1.0, np.maximum.accumulate(both["p"].to_numpy()[order] * (len(both) - np.arange(len(both)))))
    both.loc[both.index[order], "p_holm"] = adjusted
    return both[[*KEYS, "mean_a", "mean_b", "z", "p", "p_holm"]]


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python scripts/compare_backends.py A/results.csv B/results.csv", file=sys.stderr)
        return 2
    table = compare(pd.read_csv(argv[0]), pd.read_csv(argv[1]))
    worst = table.sort_values("p").head(5)
    print(f"{len(table)} rows; |z|: mean {table['z'].abs().mean():.2f} (0.80 expected under equality), "
          f"max {table['z'].abs().max():.2f}; rows with p < 0.05: {(table['p'] < 0.05).sum()} "
          f"({0.05 * len(table):.1f} expected); smallest Holm-adjusted p: {table['p_holm'].min():.3f}")
    print(worst.to_string(index=False))
    verdict = "consistent" if (table["p_holm"] >= 0.05).all() else "not consistent"
    print(f"verdict: {verdict} (no row significant at 0.05 after Holm's correction)" if verdict == "consistent"
          else f"verdict: {verdict}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
