"""Problem instances of the papers, and samplers that draw an instance per episode."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: tao2019 §5 (ALGORITHMS.md §A.8): Bernoulli means, threshold 0.5.
TAO2019_SETUPS: dict[int, tuple[float, ...]] = {
    1: (0.2, 0.25, 0.3, 0.35, 0.45, 0.55, 0.65, 0.7, 0.75, 0.8),
    2: tuple(round(0.405 + i / 100, 3) for i in range(20)),
    3: (0.45,) * 5 + (0.505,) * 5,
}

#: The largest budget of each setup's figure (x-axis of tao2019 Figure 1): the presets' default budgets.
TAO2019_BUDGETS: dict[int, int] = {1: 1000, 2: 40000, 3: 100000}


def complexity(means: np.ndarray, threshold: float) -> float:
    """``H = sum_i 1 / Delta_i^2`` with ``Delta_i = |theta_i - theta|`` (tao2019, used by UCBE's oracle ``a``)."""
    gaps = np.abs(np.asarray(means, dtype=np.float64) - threshold)
    return float(np.sum(1.0 / gaps**2))


@dataclass(frozen=True)
class UniformMeans:
    """Sampler of Bernoulli means drawn i.i.d. uniform on ``[low, high]`` for ``num_arms`` arms, per episode.

    Pass it as ``means=`` to a thresholding env; it draws with the env's ``np_random``."""

    num_arms: int = 10
    low: float = 0.0
    high: float = 1.0

    def __call__(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return rng.uniform(self.low, self.high, size=(n, self.num_arms))


def oracle_values(means: np.ndarray, threshold: float) -> dict[str, float]:
    """Oracle parameters that some agents take from the true instance (named in their ``oracle_parameters``):
    ``H`` for UCBE."""
    return {"H": complexity(means, threshold)}
