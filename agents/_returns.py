"""The checks of what an agent's hooks return (``select``, ``stop``, ``answer``): one whole arm index, one bool, one
answer bit per arm and copy, refused otherwise with the agent's name and what was returned; nothing is rounded,
padded or cut."""

from __future__ import annotations

from typing import Any

import numpy as np

from bandit_gym.families import Family


def checked_arms(arms: Any, family: Family, agent: str, num: int, num_arms: int) -> np.ndarray:
    """What ``select`` returned (agent class ``agent``, ``num`` copies of ``num_arms`` arms), refused unless it is
    one whole arm index per copy (K, stop, on pure-exploration envs): integers, or floats that are whole numbers
    (the observation's arrays are float32, so ``(obs["last_arm"] + 1) % K`` is one); a fraction, NaN, a bool or a
    wrong shape is refused, nothing is rounded, padded or cut."""
    values = np.asarray(arms)
    last = num_arms if family.pure_exploration else num_arms - 1
    whole = values.dtype.kind in "iu" or (values.dtype.kind == "f" and bool(np.all(values == np.floor(values))))
    if values.shape != (num,) or not whole:
        raise ValueError(f"{agent}.select must return one whole arm index per copy, an array of "
                         f"shape (N,) = ({num},) of integers (or whole floats); got {values!r:.200} (dtype "
                         f"{values.dtype})")
    values = values.astype(np.int64, copy=False)
    if values.size and (values.min() < 0 or values.max() > last):
        bad = values[(values < 0) | (values > last)][0]
        raise ValueError(f"{agent}.select returned arm {bad}; allowed: 0..{last} (K = "
                         f"{num_arms}{', K: stop' if family.pure_exploration else ''})")
    return values


def checked_answer(bits: Any, agent: str, num: int, num_arms: int) -> np.ndarray:
    """What ``answer`` returned (arguments as in ``checked_arms``), refused unless it is one bit (0 or 1, integer or
    bool) per arm and copy: nothing is rounded, padded or cut."""
    values = np.asarray(bits)
    shape = (num, num_arms)
    if values.shape != shape or values.dtype.kind not in "biu" or (values.size and (
            values.min() < 0 or values.max() > 1)):
        raise ValueError(f"{agent}.answer must return one answer bit per copy and arm, an array "
                         f"of shape (N, K) = {shape} of 0/1 integers or bools; got {values!r:.200}")
    return values


def checked_stops(stops: Any, family: Family, agent: str, num: int) -> np.ndarray:
    """What ``stop`` returned (arguments as in ``checked_arms``), refused unless it is one bool per copy on a
    pure-exploration env."""
    values = np.asarray(stops)
    if values.shape != (num,) or values.dtype != np.bool_:
        raise ValueError(f"{agent}.stop must return one bool per copy, an array of shape (N,) = "
                         f"({num},) and dtype bool, or None (never stop); got {values!r:.200}")
    if values.any() and not family.pure_exploration:
        raise ValueError(f"{agent}.stop returned True on a {family.value!r} env, which has no stop "
                         "(only pure-exploration envs end with an answer); return None there")
    return values
