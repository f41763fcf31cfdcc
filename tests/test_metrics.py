"""The pure metric functions, on hand-computed cases."""

from __future__ import annotations

import numpy as np
import pytest

from bandit_gym import metrics


def test_aggregate_regret_and_error_indicator() -> None:
    means = np.array([0.1, 0.45, 0.5, 0.9])
    assert metrics.aggregate_regret([0, 0, 1, 1], means, 0.5) == 0
    assert metrics.aggregate_regret([1, 1, 0, 0], means, 0.5) == 4
    assert metrics.aggregate_regret([0, 1, 1, 1], means, 0.5, epsilon=0.1) == 0  # 0.45 and 0.5 in the zone
    assert metrics.aggregate_regret([1, 1], [0.25, 0.75], 0.5, epsilon=0.25) == 1  # a gap of exactly epsilon counts
    batch = metrics.aggregate_regret([[0, 0, 1, 1], [1, 0, 1, 1]], means, 0.5)
    assert batch.tolist() == [0, 1]
    assert metrics.error_indicator([[0, 0, 1, 1], [1, 0, 1, 1]], means, 0.5).tolist() == [0, 1]


def test_simple_regret_and_survival() -> None:
    assert metrics.simple_regret(1, [0.2, 0.5, 0.9]) == pytest.approx(0.4)
    assert metrics.simple_regret([2, 0], [[0.2, 0.5, 0.9], [0.3, 0.1, 0.0]]).tolist() == [0.0, 0.0]
    np.testing.assert_allclose(metrics.survival_from_distribution([[0.2, 0.3, 0.5]]), [[0.8, 0.5]])


def test_pseudo_regret() -> None:
    F = np.array([[0.9, 0.1], [0.5, 0.5]])
    assert metrics.threshold_pseudo_regret(F, [0, 0, 1], [1, 2, 1]) == pytest.approx(0.4 + 0.4)
    assert metrics.pseudo_regret([0.5, 0.5], [0.9, 0.5]) == pytest.approx(0.4)
