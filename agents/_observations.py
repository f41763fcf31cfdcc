"""The observation an agent acts on: ``as_batch`` checks a bandit_gym env's dict observation (its family's keys,
shapes and dtypes) and gives it a leading axis of copies, and ``check_values`` checks the values the compiled
agents index or count with, at every call (``Agent._as_batch``, ``Agent._check_values``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn

import numpy as np

from bandit_gym.families import COMMON_ARM_KEYS, CONTRACTS, Family, family_of
from bandit_gym.families._checks import require
from bandit_gym.families.threshold import LEVEL_KEYS

Obs = dict[str, np.ndarray]

_NUMERIC_KINDS = "iuf"  # integer, unsigned, float: the kinds an observation's arrays may have


def family_names(families: tuple[str, ...]) -> tuple[str, ...]:
    """Families as plain strings, for messages: ``('thresholding',)``."""
    return tuple(str(family) for family in families)


def refuse_keys(obs: Obs, family: Family, families: tuple[str, ...], agent: str) -> NoReturn:
    """Raise the ValueError of an observation whose family (``family``, by ``family_of``) agent ``agent`` does not
    play, or that lacks some of its agents' keys: that it is another family's observation, where it holds every key
    of that family's agents and no key that only the observations of ``families`` hold; else that it lacks the keys
    of the family of ``families`` whose observation's keys differ least from its own (``family`` first on a tie, then
    in the order of ``families``; ``family``, if it is played and that family lacks none: the marker key decides)."""
    keys, contract = set(obs), CONTRACTS[family]

    def distance(name: str) -> tuple[int, bool]:  # keys of its observation missing, and keys of obs outside it
        own = set(CONTRACTS[Family(name)].observation_keys)
        return len(own - keys) + len(keys - own), name != family

    closest = Family(min(families, key=distance)) if families else family
    lacking = [key for key in CONTRACTS[closest].agent_keys if key not in keys]
    theirs = {key for name in families for key in CONTRACTS[Family(name)].observation_keys}
    another = set(contract.agent_keys) <= keys and not keys & (theirs - set(contract.observation_keys))
    if family in families or (lacking and not another):
        closest = closest if lacking else family
        plays = f" (it plays {family_names(families)} envs)" if len(families) > 1 else ""
        raise ValueError(f"obs lacks the keys {[key for key in CONTRACTS[closest].agent_keys if key not in keys]} "
                         f"of a {closest.value!r} env's observation; {agent} needs "
                         f"{list(CONTRACTS[closest].agent_keys)}{plays}")
    wanted = {str(name): list(CONTRACTS[Family(name)].agent_keys) for name in families}
    raise ValueError(f"{agent} plays {family_names(families)} envs, not a {family.value!r} env: obs has the keys "
                     f"{sorted(obs)}; the observations it plays have the keys {wanted}"
                     + (f" (obs lacks {lacking} of a {closest.value!r} env's)" if lacking else ""))


def as_batch(obs: Obs, families: tuple[str, ...], agent: str, reads_levels: Callable[[], bool]) -> tuple[Obs, bool]:
    """Validate the observation's keys and shapes for an agent of class name ``agent`` that plays ``families``
    (and reads the threshold bandit's per-level counts if ``reads_levels()``, asked once the rest is checked); add
    a leading axis to an unbatched observation."""
    if not isinstance(obs, dict):
        raise TypeError(f"obs must be the dict observation of a bandit_gym env, got {type(obs).__name__}")
    family = family_of(obs)
    keys = CONTRACTS[family].agent_keys
    if family not in families or not all(key in obs for key in keys):
        refuse_keys(obs, family, families, agent)  # another family's observation, or keys missing
    counts = np.asarray(obs["counts"])
    if counts.ndim not in (1, 2):
        raise ValueError(f"obs['counts'] must have shape (K,) or (N, K), got {counts.shape}")
    single = counts.ndim == 1
    if single:
        batch = {key: np.asarray(value)[None] for key, value in obs.items()}
    elif all(isinstance(value, np.ndarray) for value in obs.values()):
        batch = obs
    else:
        batch = {key: np.asarray(value) for key, value in obs.items()}
    n, k = batch["counts"].shape
    if reads_levels():
        keys += LEVEL_KEYS
        missing = [key for key in LEVEL_KEYS if key not in batch]
        if missing:
            raise ValueError(f"obs lacks the keys {missing}; {agent} needs {list(keys)}")
    for key in keys:
        kind = batch[key].dtype.kind
        if kind not in _NUMERIC_KINDS:
            raise TypeError(f"obs[{key!r}] must hold real numbers (integer or float dtype), got dtype "
                            f"{batch[key].dtype}")
        want = (n, k) if key in COMMON_ARM_KEYS else (n, 1)
        if key in LEVEL_KEYS:  # (N, K * m): m threshold levels per arm, read from level_exceed
            width = batch["level_exceed"].shape[-1] if batch["level_exceed"].ndim else 0
            want = (n, k * max(width // max(k, 1), 1))
        if batch[key].shape != want:
            shape: Any = want[1:] if single else want
            if key in LEVEL_KEYS:
                shape = f"{'(K * m,)' if single else '(N, K * m)'} with m >= 1 threshold levels per arm, K = {k}"
            raise ValueError(f"obs[{key!r}] must have shape {shape} to match obs['counts'], got "
                             f"{np.shape(obs[key])}")
    if n == 0 or k < 2:
        raise ValueError(f"obs['counts'] must have shape (K,) or (N, K) with N >= 1 copies and K >= 2 arms, got "
                         f"{np.shape(obs['counts'])}")
    other = [key for key in keys if batch[key].dtype != np.float32]
    if other:  # read as an env's observation (float32 arrays), which the compiled code is made for
        batch = {**batch, **{key: batch[key].astype(np.float32) for key in other}}
    return batch, single


_NO_START = np.zeros(0, dtype=np.int64)
LEVEL_SCAN_WIDTH = 512
"""Up to this many level counts per copy (K * m), the level screen reads every entry at every call: a streamed pass
over a row of up to 2 KiB costs no more than reading the pulled arm's m entries at scattered places in memory
(measured with DKWUCB at 5000 copies, m = 20: the screen of every entry added 0.2-0.7 ms a step at K = 10 and 5.7 ms
at K = 100, that of the pulled arm's 1.0-1.5 ms at K = 10 and 1.1 to 2.4 ms at K = 100, in two runs)."""
#: the failures of the compiled check, by its code (``_checks.LAST_ARM`` ... ``_checks.SUMS``): the key and what
#: it allows
_CHECK_FAILURES = {
    0: ("last_arm", "an arm index 0..{last}, or -1 at an episode's start, -2 after a batched allocation"),
    1: ("budget_left", "a whole number of pulls from 0 to 2**53"),
    2: ("budget_left", "at most the budget the episode began with (a new episode begins with last_arm = -1)"),
    3: ("counts", "a whole number of pulls from 0 to 2**53"),
    4: ("sums", "finite"),
}


def check_values(batch: Obs, family: Family, single: bool, start: np.ndarray | None, reads_every_value: bool,
                 reads_levels: bool = False) -> None:
    """Check the values the compiled code indexes or counts with, at every call, before any of it runs.

    A compiled pass over the N copies (``bandit_gym.agents._checks.first_bad_copy``, after a branch-free
    pass that tells whether any copy needs that closer look): ``last_arm`` and
    ``budget_left``, within an episode a budget left no larger than the episode's starting budget, and the
    counts and sums of the arm each copy pulled last, the only entries an env changes between two steps;
    every arm's statistics in the copies that begin an episode (``last_arm == -1``) or had a batched
    allocation (``-2``), the only steps at which the agents read every arm. The branch-free pass also screens
    the family's constants (threshold, epsilon, delta, the last reward: ``Contract.constants``, one value per copy)
    at every call. Then the family's checks (``Contract``): whenever some copy begins an episode or some value was
    screened out, ``check_start`` (m, the threshold bandit's level c_t) and ``check_constants``, which name the
    first bad value; at every other call ``check_step`` alone (the values the agents index with: ``m``, ``c_t``);
    all of them at every call for an agent that feeds every value to a network (``reads_every_value``). For an
    agent that reads the threshold bandit's level counts (``reads_levels``), a compiled screen of them at every
    call (the m entries of the arm each copy pulled last, every entry when the family's checks above run whole or
    a copy holds at most ``LEVEL_SCAN_WIDTH`` of them), and
    the contract's ``check_levels``, which names the first bad entry, if one is out."""
    from bandit_gym.agents import _checks

    contract = CONTRACTS[family]
    k = batch["counts"].shape[1]
    going = start is not None  # copies seen before: their episodes' starting budgets are known
    arrays = (batch["last_arm"], batch["budget_left"], batch["counts"], batch["sums"],
              start if start is not None else _NO_START, going)
    constants = tuple([batch[key] for key in contract.constants])
    look = _checks.needs_a_closer_look(*arrays, constants, contract.constant_table)
    copy, code, arm = _checks.first_bad_copy(*arrays) if look else (-1, -1, -1)
    if copy >= 0:
        key, allowed = _CHECK_FAILURES[code]
        value = batch[key][copy, 0 if arm < 0 else arm]
        where = "" if single else f" (copy {copy})"
        at = "" if arm < 0 else f"[{arm}]"
        raise ValueError(f"obs[{key!r}]{at} must be {allowed.format(last=k - 1)}; got {value!r}{where}")
    if reads_every_value:
        for key, values in batch.items():
            require(batch, key, single, values, np.isfinite(values), "finite")
    closer = look or not going or reads_every_value  # an episode begins, a value was screened out, a first sight
    if closer:
        contract.check_start(batch, single, k)
        contract.check_constants(batch, single)
    else:  # within episodes, the values the agents index with (the constants were screened)
        contract.check_step(batch, single, k)
    if reads_levels and contract.level_bounds:
        blocks = tuple([batch[key] for key in contract.level_bounds])
        every = closer or blocks[0].shape[1] <= LEVEL_SCAN_WIDTH
        if _checks.levels_need_a_look(blocks, contract.level_table, batch["last_arm"], k, every):
            contract.check_levels(batch, single, k)
