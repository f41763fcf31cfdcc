"""The checks of a family's observation values that its contract owns (``Contract.constants``, ``level_bounds``,
``check_start``, ``check_step``): each raises a ValueError that names the key, its first bad value, the copy and
what is allowed. ``batch`` is a batched observation (every array ``(N, ...)``), ``single`` whether it came from one
env (the message then names no copy), ``k`` the number of arms."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

Obs = Mapping[str, np.ndarray]

_LARGEST = float(np.finfo(np.float64).max)


@dataclass(frozen=True)
class Bounds:
    """The values an observation key may hold: from ``low`` to ``high``, both included (so a finite key has the
    largest float64 at each end, and an open end is given as the next float64 inward: no float32 or float64 value
    lies between), whole numbers only if ``whole``; ``allowed`` says it in words, for the message. NaN is never
    allowed (it fails every comparison)."""

    low: float
    high: float
    whole: bool
    allowed: str

    def holds(self, values: np.ndarray) -> np.ndarray:
        """Where ``values`` are allowed (bools of their shape), compared as float64 (a float32 array would take the
        bounds as float32: the largest float64 as inf)."""
        values = np.asarray(values, dtype=np.float64)
        ok = (values >= self.low) & (values <= self.high)
        return ok & (values == np.floor(values)) if self.whole else ok

    def row(self) -> tuple[float, float, float]:
        """``(low, high, 1.0 if whole else 0.0)`` for float32 values, a row of the table that the agents' compiled
        pass reads (their observation's arrays are float32): ``low`` and ``high`` as float32, rounded inward, so that
        a float32 value lies within them exactly when it lies within the bounds (comparing float32 values with
        float32 bounds keeps the pass vectorised)."""
        with np.errstate(over="ignore"):
            low, high = np.float32(self.low), np.float32(self.high)
        if float(low) < self.low:
            low = np.nextafter(low, np.float32(np.inf))
        if float(high) > self.high:
            high = np.nextafter(high, np.float32(-np.inf))
        return float(low), float(high), float(self.whole)


FINITE = Bounds(-_LARGEST, _LARGEST, False, "finite")
NON_NEGATIVE = Bounds(0.0, _LARGEST, False, "finite and >= 0")
OPEN_UNIT = Bounds(float(np.nextafter(0.0, 1.0)), float(np.nextafter(1.0, 0.0)), False, "in (0, 1)")
PULLS = Bounds(0.0, 2.0**53, True, "a whole number of pulls from 0 to 2**53")
"""A count of pulls: 2**53 is the largest integer every float64 holds exactly (the agents' ``MAX_PULLS``)."""


def require(batch: Obs, key: str, single: bool, values: np.ndarray, ok: np.ndarray, allowed: str) -> None:
    """Raise a ValueError naming ``obs[key]``, its first bad value and ``allowed`` unless ``ok`` holds everywhere
    (NaN fails every comparison, so it never passes)."""
    if not ok.all():
        bad = np.flatnonzero(~ok)[0]
        where = "" if single else f" (copy {np.unravel_index(bad, ok.shape)[0]})"
        raise ValueError(f"obs[{key!r}] must be {allowed}; got {values.flat[bad]!r}{where}")


def within(batch: Obs, single: bool, bounds: Mapping[str, Bounds]) -> None:
    """Each key of ``bounds`` (one value per copy) within its bounds, in the order of ``bounds``."""
    for key, allowed in bounds.items():
        values = batch[key][:, 0]
        require(batch, key, single, values, allowed.holds(values), allowed.allowed)


def per_level(batch: Obs, single: bool, k: int, bounds: Mapping[str, Bounds]) -> None:
    """Each key of ``bounds``, ``(N, K * m)`` (arm i's level j at ``i * m + j - 1``), within its bounds at every arm
    and level; the message names the entry, its arm and its level."""
    for key, allowed in bounds.items():
        values = batch[key]
        ok = allowed.holds(values)
        if not ok.all():
            copy, entry = np.unravel_index(np.flatnonzero(~ok)[0], ok.shape)
            levels = values.shape[1] // k
            where = "" if single else f" (copy {copy})"
            raise ValueError(f"obs[{key!r}][{entry}] (arm {entry // levels}, level {entry % levels + 1}) must be "
                             f"{allowed.allowed}; got {values[copy, entry]!r}{where}")


def m(batch: Obs, single: bool, k: int) -> None:
    """``m`` a whole number from 1 to K - 1, the same in every copy of the batch."""
    values = batch["m"][:, 0]
    require(batch, "m", single, values, (values >= 1) & (values <= k - 1) & (values == np.floor(values)),
            f"a whole number from 1 to K - 1 = {k - 1}")
    if not (values == values[0]).all():
        raise ValueError("obs['m'] must be the same in every copy of a batch (one vector env plays one m)")
