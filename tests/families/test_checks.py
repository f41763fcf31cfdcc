"""The checks of a family's observation values that its contract owns (``bandit_gym.families._checks``): the bounds
of each constant and of the threshold bandit's level counts, exactly at their edges in float32 and float64, and the
messages, which name the key (and for a level count its entry, arm and level), the value, the copy and what is
allowed."""

from __future__ import annotations

import numpy as np
import pytest

from bandit_gym.families import CONTRACTS, Family
from bandit_gym.families._checks import FINITE, NON_NEGATIVE, OPEN_UNIT, PULLS, Bounds
from bandit_gym.families.threshold import LEVEL_KEYS

F32_MAX, F64_MAX = float(np.finfo(np.float32).max), float(np.finfo(np.float64).max)
TINY32 = float(np.nextafter(np.float32(0), np.float32(1)))  # the smallest positive float32 (a denormal)
BELOW_ONE32 = float(np.nextafter(np.float32(1), np.float32(0)))
#: bounds -> (values allowed, values refused)
EDGES = {
    FINITE: ([-F32_MAX, F32_MAX, -F64_MAX, F64_MAX, 0.0, -0.0, 1e-45], [np.nan, np.inf, -np.inf]),
    NON_NEGATIVE: ([0.0, -0.0, TINY32, F32_MAX, F64_MAX], [-TINY32, -1.0, np.nan, np.inf, -np.inf]),
    OPEN_UNIT: ([TINY32, 5e-324, 0.5, BELOW_ONE32, float(np.nextafter(1.0, 0.0))],
                [0.0, -0.0, 1.0, 2.0, -1.0, np.nan, np.inf, float(np.nextafter(1.0, 2.0))]),
    PULLS: ([0.0, 1.0, 2.0**53, 2.0**24], [-1.0, 0.5, 2.0**53 + 2, np.nan, np.inf, -np.inf, -TINY32]),
}


@pytest.mark.parametrize("bounds", list(EDGES), ids=lambda bounds: bounds.allowed)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_bounds_hold_exactly_at_their_edges(bounds: Bounds, dtype: type) -> None:
    allowed, refused = EDGES[bounds]
    for verdict, values in ((True, allowed), (False, refused)):
        with np.errstate(over="ignore"):
            cast = [value for value in values if np.isnan(value) or float(dtype(value)) == value]  # held exactly
        assert cast, (bounds.allowed, dtype)
        for value in cast:
            assert bounds.holds(np.array([value], dtype=dtype))[0] == verdict, (bounds.allowed, value, dtype)


def test_every_contract_bounds_keys_of_its_observation() -> None:
    for family, contract in CONTRACTS.items():
        assert set(contract.constants) <= set(contract.keys), family
        assert set(contract.level_bounds) <= set(contract.more_keys), family
        assert contract.constant_table.shape == (len(contract.constants), 3)
        assert contract.level_table.shape == (len(contract.level_bounds), 3)
    assert tuple(CONTRACTS[Family.THRESHOLD].level_bounds) == LEVEL_KEYS
    # the constants the agents read beside the statistics: theta and epsilon, epsilon and delta, the last reward
    assert dict(CONTRACTS[Family.THRESHOLDING].constants) == {"threshold": FINITE, "epsilon": NON_NEGATIVE}
    assert dict(CONTRACTS[Family.TOP_K].constants) == {"epsilon": NON_NEGATIVE, "delta": OPEN_UNIT}


def batch(n: int = 3, k: int = 4, **values: float) -> dict[str, np.ndarray]:
    """A batch of ``n`` copies of a top-K observation's constants (valid), with ``values`` written into copy 1."""
    out = {"m": np.full((n, 1), 2, np.float32), "epsilon": np.full((n, 1), 0.1, np.float32),
           "delta": np.full((n, 1), 0.05, np.float32)}
    for key, value in values.items():
        out[key][1, 0] = value
    return out


@pytest.mark.parametrize(("key", "value", "message"), [
    ("epsilon", -1.0, r"obs\['epsilon'\] must be finite and >= 0; got np\.float32\(-1\.0\) \(copy 1\)"),
    ("delta", 0.0, r"obs\['delta'\] must be in \(0, 1\); got np\.float32\(0\.0\) \(copy 1\)"),
    ("delta", 2.0, r"obs\['delta'\] must be in \(0, 1\); got np\.float32\(2\.0\) \(copy 1\)"),
    ("delta", np.nan, r"obs\['delta'\] must be in \(0, 1\); got np\.float32\(nan\) \(copy 1\)"),
])
def test_a_constant_out_of_bounds_is_named_with_its_value_copy_and_what_is_allowed(key: str, value: float,
                                                                                      message: str) -> None:
    contract = CONTRACTS[Family.TOP_K]
    contract.check_constants(batch(), single=False)  # valid
    with pytest.raises(ValueError, match=message):
        contract.check_constants(batch(**{key: value}), single=False)
    with pytest.raises(ValueError, match=message.split(r" \(copy")[0] + "$"):
        contract.check_constants({name: array[1:2] for name, array in batch(**{key: value}).items()}, single=True)


def test_a_level_count_out_of_bounds_is_named_with_its_entry_arm_and_level() -> None:
    contract = CONTRACTS[Family.THRESHOLD]
    k, m = 3, 4
    counts = {key: np.zeros((2, k * m), np.float32) for key in LEVEL_KEYS}
    contract.check_levels(counts, single=False, k=k)
    counts["level_trials"][1, 1 * m + 2] = -5.0  # arm 1, level 3
    with pytest.raises(ValueError, match=r"obs\['level_trials'\]\[6\] \(arm 1, level 3\) must be a whole number of "
                                         r"pulls from 0 to 2\*\*53; got np\.float32\(-5\.0\) \(copy 1\)"):
        contract.check_levels(counts, single=False, k=k)
    counts["level_exceed"][0, k * m - 1] = np.nan  # the first key is checked first
    with pytest.raises(ValueError, match=r"obs\['level_exceed'\]\[11\] \(arm 2, level 4\) .*got np\.float32\(nan\)"):
        contract.check_levels(counts, single=False, k=k)
