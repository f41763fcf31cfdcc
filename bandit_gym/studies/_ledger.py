"""The ledger's row types, which every paper's claims module builds (``Claim``, ``Loss``), and the helpers they
share to read a reproduction's CSV files and print numbers as the ledger prints them. ``bandit_gym.claims``
assembles the rows of every paper into the ledger."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bandit_gym.studies._verdict import Decision

__all__ = ["Claim", "Loss", "fmt", "read_csv"]


@dataclass(frozen=True)
class Claim:
    """One row of the ledger: what the paper claims, where we test it and what we observe, and the ``decision``
    that ``_verdict.decide`` made from the test (its verdict, test, statistic, correction, Holm-corrected
    p-value, decision rule and reason, read through the properties of the same names)."""

    id: str
    paper: str
    source: str
    claim: str
    setting: str
    observed: str
    decision: Decision

    def __post_init__(self) -> None:
        if not isinstance(self.decision, Decision):
            raise TypeError(f"claim {self.id}: decision={self.decision!r} is not a Decision; build it with "
                            "bandit_gym.studies._verdict.decide")

    @property
    def verdict(self) -> str:
        return self.decision.verdict

    @property
    def p_value(self) -> float | None:
        return self.decision.p_value

    @property
    def test(self) -> str:
        return self.decision.test

    @property
    def statistic(self) -> str:
        return self.decision.statistic

    @property
    def correction(self) -> str:
        return self.decision.correction

    @property
    def rule(self) -> str:
        return self.decision.rule

    @property
    def why(self) -> str:
        return self.decision.why


@dataclass(frozen=True)
class Loss:
    """A test in which the paper's algorithm did significantly worse than another (p < 0.05 before correction)."""

    paper: str
    algorithm: str
    other: str
    setting: str
    metric: str
    difference: str
    p_value: float
    p_holm: float
    family: str


def fmt(value: float, digits: int = 3) -> str:
    """A number as the ledger prints it (``digits`` significant digits, no exponent for ordinary sizes)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{value:.{digits}g}"


def read_csv(folder: Path, name: str) -> Any:
    """The results file ``folder / name`` as a DataFrame; a missing file is a FileNotFoundError that says to
    re-run the paper's reproduction."""
    import pandas as pd

    path = folder / name
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: the claims need it; re-run the paper's reproduction")
    try:
        return pd.read_csv(path)
    except ValueError as error:  # pandas' EmptyDataError and ParserError, a binary file's UnicodeDecodeError
        raise ValueError(f"{path} is not a results table ({error}); re-run the paper's reproduction") from None
