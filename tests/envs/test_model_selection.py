"""The automatic-machine-learning arms (hoffman2014 §6.2): grid, kernel, pre-computed table, live pulls."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from bandit_gym import model_selection as ms

CHEAP_ARMS = (3, 72, 155)  # lasso(alpha=0.005), linear_svr(C=0.001, epsilon=0.0001), knn(n_neighbors=7)


def test_importing_does_not_import_sklearn():
    code = "import sys, bandit_gym.model_selection; assert 'sklearn' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_arms_order_and_counts():
    assert len(ms.MODELS) == 160
    families = [arm.family for arm in ms.MODELS]
    assert families == [f for f, n in zip(ms.FAMILIES, (8, 64, 16, 64, 8), strict=True) for _ in range(n)]
    assert np.array_equal(np.bincount(ms.family_of_arms()), [8, 64, 16, 64, 8])
    assert ms.MODELS[0].label == "lasso(alpha=0.0001)"
    assert ms.MODELS[9].label == "random_forest(n_estimators=1, min_samples_split=1, min_samples_leaf=6)"
    assert ms.MODELS[72].label == "linear_svr(C=0.001, epsilon=0.0001)"
    assert ms.MODELS[88 + 4 * 4 * 2 + 4 * 3 + 1].label == "rbf_svr(C=0.1, epsilon=0.1, gamma=0.05)"
    assert ms.MODELS[159].label == "knn(n_neighbors=15)"
    assert ms.MODELS[159].coords == (1.0,) and ms.MODELS[72 + 4 + 2].coords == (1 / 3, 2 / 3)
    assert len(set(ms.MODELS)) == 160  # frozen, hashable


def test_min_samples_split_one_is_built_as_two():
    pytest.importorskip("sklearn")
    arm = next(i for i, a in enumerate(ms.MODELS) if a.kwargs.get("min_samples_split") == 1)
    assert ms.MODELS[arm].kwargs["min_samples_split"] == 1
    estimator = ms.make_estimator(arm, random_state=3).regressor[-1]  # the forest, after the feature scaler
    assert estimator.min_samples_split == 2 and estimator.random_state == 3 and estimator.n_jobs == 1
    assert ms.make_estimator(arm + 4, random_state=3).regressor[-1].min_samples_split == 3


def test_features_and_target_are_standardised_on_the_training_rows():
    pytest.importorskip("sklearn")
    estimator = ms.make_estimator(0, random_state=0)  # a Lasso
    X, y = ms.load_data()
    estimator.fit(X[:44], y[:44])
    assert abs(estimator.transformer_.mean_[0] - y[:44].mean()) < 1e-9
    np.testing.assert_allclose(estimator.regressor_[0].mean_, X[:44].mean(axis=0))
    assert abs(estimator.predict(X[44:88]).mean() - y[:44].mean()) < 0.5 * y.std()  # back in the target's units


def test_kernel():
    kernel = ms.model_kernel()
    family = ms.family_of_arms()
    assert kernel.shape == (160, 160)
    np.testing.assert_array_equal(kernel, kernel.T)
    np.testing.assert_array_equal(np.diag(kernel), 1.0)
    assert np.linalg.eigvalsh(kernel).min() >= -1e-9
    assert np.all(kernel[family[:, None] != family[None, :]] == 0)
    assert np.all(kernel[family[:, None] == family[None, :]] > 0)
    assert kernel[0, 1] == pytest.approx(np.exp(-((1 / 7) ** 2)))
    assert kernel[0, 7] == pytest.approx(np.exp(-1.0))
    assert ms.model_kernel(2.0)[0, 7] == pytest.approx(np.exp(-1 / 4))
    with pytest.raises(ValueError, match="length_scale"):
        ms.model_kernel(0.0)


def test_table():
    table = ms.load_table()
    assert table.shape[0] == 160 and table.shape[1] >= 100 and table.dtype == np.float64
    assert np.all(np.isfinite(table)) and np.all(table < 0)
    assert not table.flags.writeable
    meta = ms.table_metadata()
    assert meta["splits"] == table.shape[1] and isinstance(meta["seed"], int) and meta["seconds"] > 0
    assert {"sklearn_version", "created"} <= set(meta)


def test_split_seeds():
    seeds = ms.split_seeds(0, 5)
    assert seeds[:3] == ms.split_seeds(0, 3) and len(set(seeds)) == 5 and seeds != ms.split_seeds(1, 5)


def test_pull_reproducible():
    pytest.importorskip("sklearn")
    for arm in (2, 157):
        first = ms.pull(arm, np.random.default_rng(7))
        assert isinstance(first, float) and first < 0
        assert ms.pull(arm, np.random.default_rng(7)) == first
        assert ms.pull(arm, np.random.default_rng(8)) != first


def test_pull_split_is_pull_with_its_seed():
    pytest.importorskip("sklearn")
    rewards = ms.pull_split(CHEAP_ARMS, 11)
    assert rewards.shape == (3,)
    assert [ms.pull(arm, np.random.default_rng(11)) for arm in CHEAP_ARMS] == rewards.tolist()


def test_pull_split_matches_table():
    pytest.importorskip("sklearn")
    table, meta = ms.load_table(), ms.table_metadata()
    seeds = ms.split_seeds(meta["seed"], meta["splits"])
    for column in (0, table.shape[1] - 1):
        np.testing.assert_allclose(ms.pull_split(CHEAP_ARMS, seeds[column]), table[CHEAP_ARMS, column], rtol=1e-6)


def test_pull_split_matches_table_for_a_forest():
    pytest.importorskip("sklearn")
    table, meta = ms.load_table(), ms.table_metadata()
    arms = [i for i, a in enumerate(ms.MODELS) if a.kwargs.get("n_estimators") == 100][:2]
    np.testing.assert_allclose(ms.pull_split(arms, ms.split_seeds(meta["seed"], 1)[0]), table[arms, 0], rtol=1e-6)
