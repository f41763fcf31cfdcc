"""What moved between two versions of a reproduction's ``results.csv``: one row per (experiment, agent, budget,
metric) present in both, with the old and new means, their standard errors, the difference and its z-score
(the runs of the two versions are independent: ``z = (new - old) / sqrt(se_old^2 + se_new^2)``).

    python scripts/results_diff.py OLD.csv NEW.csv [--out moved.csv] [--z 0]

Reads the two files as data (nothing is executed); writes only ``--out`` when given. Rows whose z-score is at
least ``--z`` in absolute value are printed (all rows by default), sorted by |z|.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

KEYS = ["experiment", "agent", "budget", "metric"]


def moved(old: pd.DataFrame, new: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``old`` and ``new`` matched on ``KEYS``, with ``difference`` and ``z``."""
    columns = [*KEYS, "mean", "se", "runs"]
    both = old[columns].merge(new[columns], on=KEYS, suffixes=("_old", "_new"))
    both["difference"] = both["mean_new"] - both["mean_old"]
    spread = np.sqrt(both["se_old"] ** 2 + both["se_new"] ** 2)
    both["z"] = np.where(spread > 0, both["difference"] / spread.where(spread > 0, 1.0),
                         np.where(both["difference"] == 0, 0.0, np.inf))
    return both.sort_values("z", key=np.abs, ascending=False, ignore_index=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path)
    parser.add_argument("--out", type=Path, help="write the table as CSV here")
    parser.add_argument("--z", type=float, default=0.0, help="print rows with |z| at least this (default 0)")
    args = parser.parse_args(argv)
    for path in (args.old, args.new):
        if not path.is_file():
            parser.error(f"{path}: no such file")
    table = moved(pd.read_csv(args.old), pd.read_csv(args.new))
    if args.out is not None:
        table.to_csv(args.out, index=False)
    shown = table[table["z"].abs() >= args.z]
    with pd.option_context("display.width", 200, "display.max_rows", None):
        print(shown.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    print(f"{len(table)} rows matched; {int((table['difference'] != 0).sum())} changed; "
          f"{int((table['z'].abs() >= 3).sum())} with |z| >= 3")
    return 0


if __name__ == "__main__":
    sys.exit(main())
