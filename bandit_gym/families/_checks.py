"""The checks of a family's observation values that its contract owns (``Contract.check_start``,
``Contract.check_step``): each raises a ValueError that names the key, its first bad value, the copy and what is
allowed. ``batch`` is a batched observation (every array ``(N, ...)``), ``single`` whether it came from one env (the
message then names no copy), ``k`` the number of arms."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

Obs = Mapping[str, np.ndarray]


def require(batch: Obs, key: str, single: bool, values: np.ndarray, ok: np.ndarray, allowed: str) -> None:
    """Raise a ValueError naming ``obs[key]``, its first bad value and ``allowed`` unless ``ok`` holds everywhere
    (NaN fails every comparison, so it never passes)."""
    if not ok.all():
        bad = np.flatnonzero(~ok)[0]
        where = "" if single else f" (copy {np.unravel_index(bad, ok.shape)[0]})"
        raise ValueError(f"obs[{key!r}] must be {allowed}; got {values.flat[bad]!r}{where}")


def finite(batch: Obs, single: bool, *keys: str) -> None:
    """Each of ``keys`` (one value per copy) finite."""
    for key in keys:
        values = batch[key][:, 0]
        require(batch, key, single, values, np.isfinite(values), "finite")


def epsilon(batch: Obs, single: bool) -> None:
    """``epsilon`` finite and >= 0."""
    values = batch["epsilon"][:, 0]
    require(batch, "epsilon", single, values, (values >= 0) & np.isfinite(values), "finite and >= 0")


def m(batch: Obs, single: bool, k: int) -> None:
    """``m`` a whole number from 1 to K - 1, the same in every copy of the batch."""
    values = batch["m"][:, 0]
    require(batch, "m", single, values, (values >= 1) & (values <= k - 1) & (values == np.floor(values)),
            f"a whole number from 1 to K - 1 = {k - 1}")
    if not (values == values[0]).all():
        raise ValueError("obs['m'] must be the same in every copy of a batch (one vector env plays one m)")


def delta(batch: Obs, single: bool) -> None:
    """``delta`` in (0, 1)."""
    values = batch["delta"][:, 0]
    require(batch, "delta", single, values, (values > 0) & (values < 1), "in (0, 1)")
