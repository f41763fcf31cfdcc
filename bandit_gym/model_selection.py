"""Automatic machine learning as a best-arm bandit (hoffman2014 §6.2): 160 arms that are scikit-learn regressors.

Pulling an arm trains its model on a random 10% of the data and scores it on another, disjoint, random 10%; the
reward is minus the test RMSE (the paper reports the RMSE; the sign, so that larger is better, is ours). The paper
used the Wine Quality data, which is not available offline: we use scikit-learn's bundled diabetes data (442 x 10,
``load_diabetes``) instead. Training live is slow, so a table of pre-computed rewards ships in
``bandit_gym/data/`` (``load_table``), made by ``scripts/make_model_selection_table.py``.

Importing this module does not import scikit-learn; the functions that train models do, lazily
(``pip install "pure-exploration-gym[automl]"``).
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass
from importlib import resources
from types import MappingProxyType
from typing import Any

import numpy as np

__all__ = [
    "FAMILIES", "GRIDS", "MODELS", "TABLE_FILE", "ModelArm", "family_of_arms", "load_data", "load_table",
    "make_estimator", "model_kernel", "pull", "pull_split", "split_seeds", "table_metadata",
]

FAMILIES: tuple[str, ...] = ("lasso", "random_forest", "linear_svr", "rbf_svr", "knn")
"""The five families of regressors, in the order of the arms."""
_C, _EPSILON = (0.001, 0.01, 0.1, 1), (0.0001, 0.001, 0.01, 0.1)
GRIDS: MappingProxyType[str, tuple[tuple[str, tuple[float, ...]], ...]] = MappingProxyType({
    "lasso": (("alpha", (0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5)),),
    "random_forest": (("n_estimators", (1, 10, 100, 1000)), ("min_samples_split", (1, 3, 5, 7)),
                      ("min_samples_leaf", (2, 6, 10, 14))),
    "linear_svr": (("C", _C), ("epsilon", _EPSILON)),
    "rbf_svr": (("C", _C), ("epsilon", _EPSILON), ("gamma", (0.025, 0.05, 0.1, 0.2))),
    "knn": (("n_neighbors", (1, 3, 5, 7, 9, 11, 13, 15)),),
})
"""The paper's hyper-parameter grid of each family: (name, values) pairs, outer loop first."""
TABLE_FILE = "model_selection_diabetes.npz"
"""The pre-computed table of pulls (package data, `bandit_gym/data/`) that `ModelSelection-v0` samples from."""
_TRAIN_FRACTION = 0.1
_SKLEARN_HINT = 'this needs scikit-learn: pip install "pure-exploration-gym[automl]" (or pip install scikit-learn)'


@dataclass(frozen=True)
class ModelArm:
    """One arm: a model ``family``, its hyper-parameters ``params`` ((name, value) pairs, the paper's values) and
    ``coords``, the normalised grid index of each value (the i-th of n values is at i / (n - 1))."""

    family: str
    params: tuple[tuple[str, float], ...]
    coords: tuple[float, ...]

    @property
    def kwargs(self) -> dict[str, float]:
        """The hyper-parameters as a dict."""
        return dict(self.params)

    @property
    def label(self) -> str:
        """E.g. ``"rbf_svr(C=0.1, epsilon=0.01, gamma=0.05)"``."""
        return f"{self.family}({', '.join(f'{name}={value}' for name, value in self.params)})"


def _build_models() -> tuple[ModelArm, ...]:
    arms = []
    for family in FAMILIES:
        grid = GRIDS[family]
        for index in itertools.product(*(range(len(values)) for _, values in grid)):
            params = tuple((name, values[i]) for (name, values), i in zip(grid, index, strict=True))
            coords = tuple(i / (len(values) - 1) for (_, values), i in zip(grid, index, strict=True))
            arms.append(ModelArm(family, params, coords))
    return tuple(arms)


MODELS: tuple[ModelArm, ...] = _build_models()
"""The 160 arms, one `ModelArm` each: 8 lasso, 64 random_forest, 16 linear_svr, 64 rbf_svr, 8 knn, in this order."""


def family_of_arms() -> np.ndarray:
    """(160,) int: the index in ``FAMILIES`` of each arm's family."""
    return np.array([FAMILIES.index(arm.family) for arm in MODELS], dtype=np.int64)


def model_kernel(length_scale: float = 1.0) -> np.ndarray:
    r"""(160, 160) kernel over the arms: the paper's squared exponential within a family (unit length scale by default),
    \(\exp\big(-\lVert x - x' \rVert^2 / \ell^2\big)\) (\(\ell\) = ``length_scale``), 0 across families (block
    diagonal); ones on the diagonal. The inputs \(x\) are the arms' normalised grid coordinates (``ModelArm.coords``):
    our reading, since the paper does not say how a hyper-parameter value becomes a kernel input."""
    if not (np.isfinite(length_scale) and length_scale > 0):
        raise ValueError(f"length_scale must be > 0, got {length_scale!r}")
    family = family_of_arms()
    kernel = np.zeros((len(MODELS), len(MODELS)))
    for f in range(len(FAMILIES)):
        idx = np.flatnonzero(family == f)
        x = np.array([MODELS[i].coords for i in idx])
        squared = ((x[:, None, :] - x[None, :, :]) ** 2).sum(axis=-1)
        kernel[np.ix_(idx, idx)] = np.exp(-squared / length_scale**2)
    return kernel


def _sklearn() -> Any:
    try:
        import sklearn
    except ImportError as error:
        raise ImportError(_SKLEARN_HINT) from error
    return sklearn


@functools.lru_cache(maxsize=1)
def load_data() -> tuple[np.ndarray, np.ndarray]:
    """The diabetes data of scikit-learn: X (442, 10) float64 (scikit-learn's scaled features) and y (442,), the
    raw target (not rescaled). Cached; read-only arrays."""
    _sklearn()
    from sklearn.datasets import load_diabetes

    X, y = load_diabetes(return_X_y=True)
    X, y = np.asarray(X, dtype=np.float64), np.asarray(y, dtype=np.float64)
    X.setflags(write=False)
    y.setflags(write=False)
    return X, y


def make_estimator(arm: int, random_state: int) -> Any:
    r"""A fresh, unfitted scikit-learn regressor for arm ``arm`` (random forests are seeded by ``random_state`` and
    use one thread, ``n_jobs=1``).

    Modern scikit-learn rejects the paper's ``min_samples_split=1``: it is built with 2 (the arm keeps 1 in its
    params and label). Either is a no-op here, since ``min_samples_leaf >= 2`` already needs 4 samples to split.
    Lasso gets ``max_iter=10_000`` (the default 1000 is barely enough at \(\alpha = 10^{-4}\) on 44 samples).

    Every model sees standardised features and a standardised target (``StandardScaler`` in a pipeline and a
    ``TransformedTargetRegressor``, both fitted on the training rows; predictions come back in the target's
    units). The paper's grid presumes inputs of unit scale (Wine Quality's target spans 3-9): on the raw
    diabetes target (standard deviation 77) every SVR with \(C \le 1\) predicts a near-constant, and on its raw
    features (columns of norm 1) the RBF kernel is flat for every gamma of the grid.
    """
    _sklearn()
    from sklearn.compose import TransformedTargetRegressor
    from sklearn.ensemble import RandomForestRegressor
    from sklearn.linear_model import Lasso
    from sklearn.neighbors import KNeighborsRegressor
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVR

    model = MODELS[arm]
    p = model.kwargs
    if model.family == "lasso":
        regressor = Lasso(alpha=p["alpha"], max_iter=10_000)
    elif model.family == "random_forest":
        regressor = RandomForestRegressor(
            n_estimators=p["n_estimators"], min_samples_split=max(2, p["min_samples_split"]),
            min_samples_leaf=p["min_samples_leaf"], random_state=random_state, n_jobs=1)
    elif model.family == "linear_svr":
        regressor = SVR(kernel="linear", C=p["C"], epsilon=p["epsilon"])
    elif model.family == "rbf_svr":
        regressor = SVR(kernel="rbf", C=p["C"], epsilon=p["epsilon"], gamma=p["gamma"])
    else:
        regressor = KNeighborsRegressor(n_neighbors=p["n_neighbors"])
    return TransformedTargetRegressor(regressor=make_pipeline(StandardScaler(), regressor),
                                      transformer=StandardScaler())


def _draw_split(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Train rows, test rows (disjoint, ``round(0.1 n)`` each, from one permutation) and the estimator seed."""
    order = rng.permutation(n)
    size = round(_TRAIN_FRACTION * n)
    return order[:size], order[size:2 * size], int(rng.integers(2**31 - 1))


def _score(arms: Any, split: tuple[np.ndarray, np.ndarray, int], data: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    (X, y), (train, test, seed) = data, split
    rewards = np.empty(len(arms))
    for j, arm in enumerate(arms):
        prediction = make_estimator(int(arm), seed).fit(X[train], y[train]).predict(X[test])
        rewards[j] = -np.sqrt(np.mean((prediction - y[test]) ** 2))
    return rewards


def pull(arm: int, rng: np.random.Generator, data: tuple[np.ndarray, np.ndarray] | None = None) -> float:
    """One pull of arm ``arm``: ``rng`` draws a permutation of the rows (the model trains on the first 10%, is tested
    on the next 10%) then the estimator's seed; returns minus the test RMSE. ``data``: (X, y), default
    ``load_data``."""
    data = load_data() if data is None else data
    return float(_score([arm], _draw_split(rng, len(data[1])), data)[0])


def pull_split(arms: Any, split_seed: int, data: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """The rewards of ``arms`` on one common split (common random numbers): entry j is
    ``pull(arms[j], np.random.default_rng(split_seed), data)``, the same train/test rows and estimator seed for all.
    Column j of the table is ``pull_split(range(160), split_seeds(seed, splits)[j])``."""
    data = load_data() if data is None else data
    return _score(np.atleast_1d(np.asarray(arms, dtype=np.int64)), _draw_split(np.random.default_rng(split_seed),
                                                                                 len(data[1])), data)


def split_seeds(seed: int, splits: int) -> list[int]:
    """The integer seed of each of the table's ``splits`` splits: ``SeedSequence(seed).spawn(splits)``, one 64-bit
    word each."""
    return [int(child.generate_state(1, dtype=np.uint64)[0]) for child in np.random.SeedSequence(seed).spawn(splits)]


@functools.lru_cache(maxsize=1)
def _read_table() -> tuple[np.ndarray, dict[str, Any]]:
    with resources.as_file(resources.files("bandit_gym") / "data" / TABLE_FILE) as path, np.load(path) as npz:
        fields = {key: npz[key] for key in npz.files}
    rewards = np.asarray(fields.pop("rewards"), dtype=np.float64)
    rewards.setflags(write=False)
    metadata = {key: value.item() if value.ndim == 0 else tuple(value.tolist()) for key, value in fields.items()}
    if "labels" in metadata and metadata["labels"] != tuple(arm.label for arm in MODELS):
        raise ValueError(f"{TABLE_FILE} was made for other arms than MODELS: re-run make_model_selection_table.py")
    return rewards, metadata


def load_table() -> np.ndarray:
    """The pre-computed rewards, (160, S) float64, read-only: entry (i, j) is arm i's reward on split j (every arm
    sees the same S splits, see ``pull_split``)."""
    return _read_table()[0]


def table_metadata() -> dict[str, Any]:
    """How the table was made: splits, seed, sklearn_version, seconds (wall time), created (UTC), dataset, labels."""
    return dict(_read_table()[1])
