"""Argument checks shared by every constructor: each error names the argument, its value and what is allowed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


def choice(name: str, value: Any, allowed: Sequence[str]) -> str:
    """Return ``value`` if it is one of ``allowed``, else raise a ValueError naming ``name``."""
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(f"{name}={value!r} is not allowed; use one of {', '.join(map(repr, allowed))}")
    return value


def integer(name: str, value: Any, *, minimum: int | None = None, maximum: int | None = None) -> int:
    """Return ``value`` as an int after checking its type and range."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, got {value!r} of type {type(value).__name__}")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"{name}={value} is too small; it must be >= {minimum}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name}={value} is too large; it must be <= {maximum}")
    return value


def real(
    name: str,
    value: Any,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
) -> float:
    """Return ``value`` as a finite float inside the given (closed unless marked open) interval."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a real number, got {value!r} of type {type(value).__name__}")
    value = float(value)
    lo = "(" if low_open else "["
    hi = ")" if high_open else "]"
    interval = f"{lo}{'-inf' if low is None else low}, {'inf' if high is None else high}{hi}"
    bad = not np.isfinite(value)
    if low is not None:
        bad |= value <= low if low_open else value < low
    if high is not None:
        bad |= value >= high if high_open else value > high
    if bad:
        raise ValueError(f"{name}={value} is outside the allowed interval {interval}")
    return value


def real_array(name: str, value: Any, *, ndim: int, low: float | None = None, high: float | None = None) -> np.ndarray:
    """Return ``value`` as a float64 array of the given rank whose entries lie in [low, high]."""
    try:
        array = np.array(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be an array of real numbers, got {value!r}") from exc
    if array.ndim != ndim:
        raise ValueError(f"{name} must be a {ndim}-D array, got shape {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be finite, got {array}")
    if low is not None and np.any(array < low):
        raise ValueError(f"{name} has entries below {low}: {array[array < low]}; allowed range is [{low}, {high}]")
    if high is not None and np.any(array > high):
        raise ValueError(f"{name} has entries above {high}: {array[array > high]}; allowed range is [{low}, {high}]")
    return array


def arm_count(name: str, k: int) -> int:
    """Check that a problem has at least two arms."""
    if k < 2:
        raise ValueError(f"{name} describes {k} arm(s); a bandit needs K >= 2 arms")
    return k
