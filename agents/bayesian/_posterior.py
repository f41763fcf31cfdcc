r"""The Gaussian posterior over \(K\) correlated arm means, for \(N\) copies at once (hoffman2014 §4, eq. 2-5).

Prior \(\mu \sim \mathcal{N}(m_0, \eta^2 G)\) (\(m_0 = 0\) in the paper; ``prior_mean``, ours) for a positive
semi-definite kernel matrix \(G\); an observation \(y \sim \mathcal{N}(\mu_a, \sigma^2)\) of arm \(a\) updates the
mean \(m\) and the covariance \(C\) of every copy by one rank-one step:

$$
s = C_{aa} + \sigma^2, \qquad m \leftarrow m + C_{:,a} (y - m_a) / s, \qquad C \leftarrow C - C_{:,a} C_{a,:} / s
$$

which is the paper's Bayesian linear regression (eq. 4-5) on the features \(X = V D^{1/2}\) of
\(G = V D V^\top\), without forming them (\(G\) may be singular). \(O(K^2)\) per observation and copy, in one
compiled pass over the copies.

Two storage forms give the same posterior: ``"covariance"`` keeps \(C\), (N, K, K); ``"factor"`` keeps a square
root \(C = F F^\top\), (N, K, r) with \(r\) the rank of \(G\), updated in Potter's form (\(O(K r)\)), from which a
joint posterior sample is \(m + F z\) at \(O(K r)\) (Thompson sampling needs one per step).
"""

from __future__ import annotations

import numpy as np

from bandit_gym import _validation as check
from bandit_gym.covariances import check_kernel, prior_factor

FORMS = ("covariance", "factor")
SCALE_RANGE = (1e-75, 1e75)
r"""The allowed interval of the model's scales ``eta`` and ``sigma``. Their squares are the prior and noise
variances; the posterior update multiplies two variances and divides by a third, and BayesGap divides by
\(\eta^2\) and \(\sigma^2\): within this interval every such product or ratio stays between \(10^{-300}\) and
\(10^{300}\), a finite and nonzero float64 (outside it, ``eta=1e-300`` made \(\eta^2\) 0 and BayesGap divide by
zero, and ``eta=1e100`` made the posterior NaN)."""
PRIOR_VARIANCE_MAX = 1e154
r"""The largest prior variance \(\eta^2 G_{kk}\) allowed: the update multiplies two prior covariances, whose product
must stay below float64's largest number (\(1.8 \times 10^{308}\))."""


def check_scale(name: str, value: object) -> float:
    """``eta`` or ``sigma`` as a float in ``SCALE_RANGE``, or a TypeError/ValueError naming it and the range."""
    low, high = SCALE_RANGE
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a real number in [{low:g}, {high:g}], got {value!r} of type "
                        f"{type(value).__name__}")
    value = float(value)
    if not low <= value <= high:  # NaN fails it too
        raise ValueError(f"{name}={value!r} is outside the allowed interval [{low:g}, {high:g}]: {name}^2 is a "
                         "variance of the model, and the posterior multiplies and divides such variances, which "
                         "must stay finite and nonzero float64 numbers")
    return value


def check_prior_variance(kernel: np.ndarray, eta: float) -> None:
    r"""Refuse an ``eta`` whose prior variances \(\eta^2 G_{kk}\) exceed ``PRIOR_VARIANCE_MAX``."""
    top = float(np.max(np.diag(kernel))) if kernel.size else 0.0
    if eta**2 * top > PRIOR_VARIANCE_MAX:
        raise ValueError(f"eta={eta!r} is too large for this kernel: its prior variances eta^2 G_kk reach "
                         f"{eta**2 * top:.3g}, above {PRIOR_VARIANCE_MAX:g} (the posterior update multiplies two of "
                         f"them); use eta <= {np.sqrt(PRIOR_VARIANCE_MAX / top):.3g}")


class GaussianPosterior:
    r"""Posterior means ``mean`` (N, K) and variances ``var`` (N, K) of the arm means of \(N\) copies, with their
    covariance (``cov``, or the factor ``factor``), all under the prior
    \(\mathcal{N}(\text{prior\_mean}, \eta^2 G)\) and the noise variance \(\sigma^2\)."""

    def __init__(self, kernel: object, eta: float, sigma: float, num: int = 1, form: str = "covariance",
                 prior_mean: float = 0.0) -> None:
        self.kernel = check_kernel(kernel)
        eta, sigma = check_scale("eta", eta), check_scale("sigma", sigma)
        check_prior_variance(self.kernel, eta)
        if int(num) < 1:
            raise ValueError(f"num must be >= 1, got {num!r}")
        k = self.kernel.shape[0]
        # the posterior of num copies: (N, K, K) covariances (or (N, K, r) factors), checked before they are made
        check.check_memory("num", num, 8 * int(num) * k * (k + 2),
                           f"the Gaussian posterior of {num} copies over K={k} arms ((N, K, K) float64)")
        if form not in FORMS:
            raise ValueError(f"form={form!r} is not allowed; use one of {FORMS}")
        if not np.isfinite(prior_mean):
            raise ValueError(f"prior_mean must be finite, got {prior_mean!r}")
        self.eta, self.sigma, self.form, self.prior_mean = float(eta), float(sigma), form, float(prior_mean)
        n, k = int(num), self.kernel.shape[0]
        self.mean = np.zeros((n, k))
        self.var = np.zeros((n, k))
        self._prior_var = self.eta**2 * np.diag(self.kernel).copy()
        if form == "covariance":
            self._prior = self.eta**2 * self.kernel
            self.cov = np.empty((n, k, k))
        else:
            self._prior = prior_factor(self.kernel, self.eta)
            self.factor = np.empty((n, k, self._prior.shape[1]))
        self.reset()

    @property
    def state(self) -> np.ndarray:
        return self.cov if self.form == "covariance" else self.factor

    def reset(self, rows: np.ndarray | slice = slice(None)) -> None:
        """Back to the prior for the copies ``rows``."""
        self.mean[rows] = self.prior_mean
        self.var[rows] = self._prior_var
        self.state[rows] = self._prior

    def update(self, rows: np.ndarray, arms: np.ndarray, values: np.ndarray, noise: np.ndarray | None = None) -> None:
        r"""Copy ``rows[j]`` observed ``values[j]`` at arm ``arms[j]`` (with noise variance ``noise[j]``,
        \(\sigma^2\) by default): one rank-one step each, in order (a copy may appear several times)."""
        from bandit_gym.agents.bayesian import _kernels

        rows = np.ascontiguousarray(rows, dtype=np.int64)
        arms = np.ascontiguousarray(arms, dtype=np.int64)
        values = np.ascontiguousarray(values, dtype=np.float64)
        noise = np.full(rows.size, self.sigma**2) if noise is None else np.ascontiguousarray(noise, dtype=np.float64)
        kernel = _kernels.update_covariance if self.form == "covariance" else _kernels.update_factor
        kernel(self.state, self.mean, self.var, rows, arms, values, noise)

    def rebuild(self, rows: np.ndarray, counts: np.ndarray, sums: np.ndarray) -> None:
        r"""The posterior of the copies ``rows`` from their pull counts and reward sums ``(len(rows), K)``, which
        are sufficient for Gaussian rewards: \(c\) pulls of arm \(a\) averaging \(\bar y\) are one observation
        \(\bar y\) of noise variance \(\sigma^2 / c\)."""
        rows = np.asarray(rows, dtype=np.int64)
        self.reset(rows)
        which, arms = np.nonzero(np.asarray(counts) > 0)
        c = np.asarray(counts, dtype=np.float64)[which, arms]
        self.update(rows[which], arms, np.asarray(sums, dtype=np.float64)[which, arms] / c, self.sigma**2 / c)

    def std(self) -> np.ndarray:
        """Posterior standard deviations of the arm means, (N, K)."""
        return np.sqrt(np.maximum(self.var, 0.0))

    def covariance(self) -> np.ndarray:
        """Posterior covariances (N, K, K) (formed from the factor in the factor form)."""
        return self.cov if self.form == "covariance" else self.factor @ self.factor.transpose(0, 2, 1)

    def sample(self, rng: np.random.Generator) -> np.ndarray:
        """One joint posterior sample of the arm means per copy, (N, K) (factor form)."""
        if self.form != "factor":
            raise ValueError("joint samples need form='factor'")
        z = rng.standard_normal((self.factor.shape[0], self.factor.shape[2], 1))
        return self.mean + (self.factor @ z)[:, :, 0]
