"""ArmScores: per-copy argmin/argmax with the tie rule, against plain numpy."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from bandit_gym.agents.scores import ArmScores


@settings(max_examples=50, deadline=None)
@given(n=st.integers(1, 7), k=st.integers(2, 9), seed=st.integers(0, 1000))
def test_argmin_argmax_match_numpy_with_index_order(n: int, k: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    values = rng.integers(0, 3, size=(n, k)).astype(float)  # many ties
    scores = ArmScores(n, k)
    scores.set_rows(np.arange(n), values)
    np.testing.assert_array_equal(scores.argmin(), values.argmin(axis=1))
    np.testing.assert_array_equal(scores.argmax(), values.argmax(axis=1))
    np.testing.assert_array_equal(scores.table(), values)


@settings(max_examples=50, deadline=None)
@given(n=st.integers(1, 7), k=st.integers(2, 9), seed=st.integers(0, 1000))
def test_shuffled_order_keeps_scores_by_arm(n: int, k: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    scores = ArmScores(n, k)
    scores.shuffle(rng, np.arange(n))
    values = rng.random((n, k))
    scores.set_rows(np.arange(n), values)
    arms = rng.integers(0, k, n)
    scores.set_arms(slice(None), arms, np.full(n, -1.0))
    values[np.arange(n), arms] = -1.0
    np.testing.assert_array_equal(scores.table(), values)
    np.testing.assert_array_equal(scores.get_arms(slice(None), arms), np.full(n, -1.0))
    np.testing.assert_array_equal(scores.argmin(), arms)


def test_random_order_breaks_ties_uniformly() -> None:
    n, k = 20_000, 4
    scores = ArmScores(n, k)
    scores.shuffle(np.random.default_rng(0), np.arange(n))
    scores.set_rows(np.arange(n), np.zeros((n, k)))
    counts = np.bincount(scores.argmin(), minlength=k)
    expected = n / k
    assert np.all(np.abs(counts - expected) < 4 * np.sqrt(expected * (1 - 1 / k)))
