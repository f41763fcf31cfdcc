"""Argument checks shared by every constructor: each error names the argument, its value and what is allowed.

Sizes are checked here, up front, before an env or a sampler allocates anything, each error naming the argument,
its value and the limit:

- ``MAX_ARMS`` (2^16 = 65,536) arms K, in every env family and sampler. The presets need at most 1000
  (chen2017's n = 1000; hoffman2014's traffic presets 357 and its model selection 160): a margin of 65 times.
  At K = 2^16 an agent's step costs about 2 ms per copy (LSA), a pure-exploration action is a ``MultiDiscrete``
  of K + 1 entries; at K = 10^7, which was accepted, one step of LSA took 57 s. (A correlated env's K x K
  kernel, 32 GiB at this K, is bounded further by the memory check.)
- ``MAX_LEVELS`` (2^12 = 4096) threshold levels m of the threshold bandit (values 0..m); the presets use 5 and
  6, abernethy2016's studies here at most 32. The env keeps ``K * m`` counts per copy, in its observation too.
- ``MAX_BUDGET`` (2^24 = 16,777,216) pulls per episode, the budget or horizon T of every family: counts are kept
  in float32 observation buffers, exact for integers up to 2^24.
- memory: ``env_bytes`` estimates the bytes of the arrays that ``num_envs`` copies of a problem with K arms and
  m levels need (the env's state and observation buffers, its batched spaces, and the arrays of an agent that
  plays it: ``BYTES_PER_COPY``, ``BYTES_PER_ARM``, ``BYTES_PER_ARM_LEVEL``, ``BYTES_PER_LEVEL``, measured with
  ``tracemalloc`` on the built-in envs and agents and rounded up), and ``check_env_memory`` refuses, naming
  ``num_envs``, K, m, the estimate and the limit, an env (a single env is one copy) whose estimate exceeds
  ``memory_limit()``: ``MEMORY_FRACTION`` (half) of the machine's physical memory where the system tells it
  (``os.sysconf``), else ``FALLBACK_MEMORY_LIMIT`` (8 GiB). ``check_memory`` does the same for other large
  arrays (a K x K kernel, a Bayesian agent's posterior). The limit is read at every check, so a test or a user
  may change these constants (or replace ``memory_limit`` or ``physical_memory``) at run time.

The checks run once per construction (or per agent allocation), never per step.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

MAX_ARMS = 2**16
"""The most arms K an env or a sampler accepts (see the module's docstring)."""
MAX_LEVELS = 2**12
"""The most threshold levels m (values 0..m) a threshold-bandit env or sampler accepts."""
MAX_BUDGET = 2**24
"""The longest episode, in pulls (a budget or a horizon T): counts are kept in float32 observation buffers, exact
for integers up to 2^24."""

#: bytes per copy of an env, whatever its size (flags, counters, scalar observations and their spaces)
BYTES_PER_COPY = 256
#: bytes per copy and arm: float64 state (means, sums, stream seeds), float32 observations (counts, sums, means)
#: and their batched Box bounds, the action's entry, and an agent's per-arm arrays (measured: 147 at K = 100)
BYTES_PER_ARM = 160
#: bytes per copy, arm and threshold level (threshold bandit): its survival function, the int64 level counts,
#: their float32 observations (measured: 60 to 70)
BYTES_PER_ARM_LEVEL = 80
#: bytes per copy and threshold level: the best arm's survival, the cyclic order of the levels
BYTES_PER_LEVEL = 32
MEMORY_FRACTION = 0.5
"""The share of the machine's physical memory that one env's arrays may take (``memory_limit``)."""
FALLBACK_MEMORY_LIMIT = 8 * 2**30
"""The memory limit (bytes) where the physical memory is not known (no ``os.sysconf``, as on Windows)."""


def physical_memory() -> int | None:
    """The machine's physical memory in bytes (``SC_PAGE_SIZE x SC_PHYS_PAGES``), or None where unknown."""
    try:
        pages = os.sysconf("SC_PHYS_PAGES")
        size = os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None
    if pages <= 0 or size <= 0:
        return None
    return int(pages) * int(size)


def memory_limit() -> int:
    """The bytes one env's arrays may take: ``MEMORY_FRACTION`` of the physical memory, or
    ``FALLBACK_MEMORY_LIMIT`` where it is unknown."""
    total = physical_memory()
    return FALLBACK_MEMORY_LIMIT if total is None else int(MEMORY_FRACTION * total)


def _describe_limit(limit: int) -> str:
    total = physical_memory()
    if total is None and limit == FALLBACK_MEMORY_LIMIT:
        where = ": FALLBACK_MEMORY_LIMIT, the physical memory being unknown"
    elif total is not None and limit == int(MEMORY_FRACTION * total):
        where = f": MEMORY_FRACTION = {MEMORY_FRACTION:g} of this machine's {nbytes(total)} of physical memory"
    else:
        where = ""  # a limit set by replacing memory_limit
    return f"the limit of {nbytes(limit)} (bandit_gym._validation.memory_limit(){where})"


def nbytes(count: float) -> str:
    """A number of bytes for a message: ``"7.5 GiB"``."""
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if count >= size:
            return f"{count / size:.3g} {unit}"
    return f"{int(count)} bytes"


def env_bytes(num: int, arms: int, levels: int = 0, shared: int = 0) -> int:
    """The estimated bytes of ``num`` copies of an env with ``arms`` arms and ``levels`` threshold levels (0: none),
    plus ``shared`` bytes held once for all copies (a correlated env's kernel): ``num * (BYTES_PER_COPY + K *
    BYTES_PER_ARM + K * m * BYTES_PER_ARM_LEVEL + m * BYTES_PER_LEVEL) + shared``."""
    per_copy = BYTES_PER_COPY + arms * BYTES_PER_ARM + arms * levels * BYTES_PER_ARM_LEVEL + levels * BYTES_PER_LEVEL
    return num * per_copy + shared


def check_env_memory(num: int, arms: int, levels: int = 0, shared: int = 0) -> None:
    """Raise a ValueError naming ``num_envs``, K (and m), the estimated bytes (``env_bytes``) and the limit
    (``memory_limit()``) if ``num`` copies of the env would need more; called by every env before it allocates
    its per-copy arrays (once per construction, never per step)."""
    limit = memory_limit()
    need = env_bytes(num, arms, levels, shared)
    if need <= limit:
        return
    per_copy = env_bytes(1, arms, levels)
    size = f"K={arms} arms" + (f" and m={levels} threshold levels" if levels else "")
    fits = (limit - shared) // per_copy
    if fits >= 1:
        advice = f"use num_envs <= {fits} copies of this problem, or fewer arms" + (" or levels" if levels else "")
    else:
        advice = "even one copy does not fit: use fewer arms" + (" or levels" if levels else "")
    extra = f" plus {nbytes(shared)} shared by the copies" if shared else ""
    copies = "copy" if num == 1 else "copies"
    raise ValueError(
        f"num_envs={num} {copies} of a problem with {size} need about {nbytes(need)} of memory "
        f"({nbytes(per_copy)} per copy{extra}), above {_describe_limit(limit)}; {advice}"
    )


def check_memory(name: str, value: Any, need: int, what: str) -> None:
    """Raise a ValueError naming ``name=value`` if ``need`` bytes (for ``what``) exceed ``memory_limit()``."""
    limit = memory_limit()
    if need > limit:
        raise ValueError(f"{name}={value} would need about {nbytes(need)} of memory for {what}, above "
                         f"{_describe_limit(limit)}")


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
    """Check that a problem has at least two arms and at most ``MAX_ARMS``."""
    if k < 2:
        raise ValueError(f"{name} describes {k} arm(s); a bandit needs K >= 2 arms")
    if k > MAX_ARMS:
        raise ValueError(f"{name} describes K={k} arms, above the maximum MAX_ARMS = {MAX_ARMS} "
                         "(bandit_gym._validation.MAX_ARMS); use at most that many arms")
    return k


def level_count(name: str, m: int) -> int:
    """Check that a threshold-bandit instance has at most ``MAX_LEVELS`` threshold levels."""
    if m > MAX_LEVELS:
        raise ValueError(f"{name} describes m={m} threshold levels, above the maximum MAX_LEVELS = {MAX_LEVELS} "
                         "(bandit_gym._validation.MAX_LEVELS); use at most that many levels")
    return m
