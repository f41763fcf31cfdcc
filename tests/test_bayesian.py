"""hoffman2014's Gaussian posterior over correlated arms (issue 7, in progress)."""

from __future__ import annotations

import numpy as np
import pytest

from bandit_gym.agents.bayesian._posterior import GaussianPosterior


def squared_exponential(x: np.ndarray, length: float) -> np.ndarray:
    return np.exp(-0.5 * ((x[:, None] - x[None, :]) / length) ** 2)


def dense_posterior(kernel: np.ndarray, eta: float, sigma: float, arms: list[int], ys: list[float]):
    """The GP posterior written directly: prior N(0, eta^2 G), noisy observations of the arms."""
    prior = eta**2 * kernel
    a = np.asarray(arms)
    gram = prior[np.ix_(a, a)] + sigma**2 * np.eye(len(a))
    cross = prior[:, a]
    return cross @ np.linalg.solve(gram, np.asarray(ys)), prior - cross @ np.linalg.solve(gram, cross.T)


def regression_posterior(kernel: np.ndarray, eta: float, sigma: float, arms: list[int], ys: list[float]):
    """hoffman2014 eq. 4-5: Bayesian linear regression on the features X = V D^(1/2) of G = V D V^T."""
    d, v = np.linalg.eigh(kernel)
    x = v * np.sqrt(np.maximum(d, 0.0))
    design = x[np.asarray(arms)]
    precision = design.T @ design / sigma**2 + np.eye(len(d)) / eta**2
    cov_theta = np.linalg.inv(precision)
    theta = cov_theta @ design.T @ np.asarray(ys) / sigma**2
    return x @ theta, x @ cov_theta @ x.T


def test_rank_one_updates_give_the_dense_gp_posterior() -> None:
    # 6 arms on a line, squared-exponential kernel; three copies with their own observation sequences (repeats)
    kernel = squared_exponential(np.linspace(0.0, 1.0, 6), 0.3)
    eta, sigma = 2.0, 0.5
    sequences = [([0, 3, 3, 5], [0.4, -1.0, -0.7, 2.0]), ([2, 2, 2, 1], [1.0, 1.5, 0.5, 0.0]),
                 ([5, 0, 4, 1], [0.3, 0.1, -0.2, 0.9])]
    posterior = GaussianPosterior(kernel, eta, sigma, num=3)
    for step in range(4):
        posterior.update(np.arange(3), np.array([s[0][step] for s in sequences]),
                         np.array([s[1][step] for s in sequences]))
    for row, (arms, ys) in enumerate(sequences):
        mean, cov = dense_posterior(kernel, eta, sigma, arms, ys)
        np.testing.assert_allclose(posterior.mean[row], mean, atol=1e-10)
        np.testing.assert_allclose(posterior.cov[row], cov, atol=1e-10)
        np.testing.assert_allclose(posterior.std()[row], np.sqrt(np.diag(cov)), atol=1e-10)
        r_mean, r_cov = regression_posterior(kernel, eta, sigma, arms, ys)
        np.testing.assert_allclose(posterior.mean[row], r_mean, atol=1e-8)
        np.testing.assert_allclose(posterior.cov[row], r_cov, atol=1e-8)
    # an observation moves its neighbours (correlation) and shrinks their variance, not a far arm's much
    assert posterior.std()[1, 2] < posterior.std()[1, 4] < eta


def test_singular_kernel_and_reset() -> None:
    # rank-one kernel (all arms equal up to scale): one observation informs every arm
    features = np.array([1.0, 2.0, -1.0])
    posterior = GaussianPosterior(np.outer(features, features), eta=1.0, sigma=0.1, num=2)
    posterior.update(np.array([0]), np.array([0]), np.array([1.0]))
    mean, cov = dense_posterior(np.outer(features, features), 1.0, 0.1, [0], [1.0])
    np.testing.assert_allclose(posterior.mean[0], mean, atol=1e-12)
    np.testing.assert_allclose(posterior.cov[0], cov, atol=1e-12)
    assert posterior.mean[0, 1] == pytest.approx(2 * posterior.mean[0, 0]) and posterior.mean[1].tolist() == [0, 0, 0]
    posterior.reset(np.array([0]))
    np.testing.assert_array_equal(posterior.cov[0], np.outer(features, features))


@pytest.mark.parametrize(("kernel", "match"), [
    (np.ones((2, 3)), "square"),
    (np.array([[1.0, 0.5], [0.4, 1.0]]), "symmetric"),
    (np.array([[1.0, 2.0], [2.0, 1.0]]), "positive semi-definite"),
    (np.array([[1.0, np.nan], [np.nan, 1.0]]), "finite"),
])
def test_bad_kernels_are_refused(kernel: np.ndarray, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        GaussianPosterior(kernel, eta=1.0, sigma=1.0)


def test_bad_scales_are_refused() -> None:
    with pytest.raises(ValueError, match="eta"):
        GaussianPosterior(np.eye(2), eta=0.0, sigma=1.0)
    with pytest.raises(ValueError, match="sigma"):
        GaussianPosterior(np.eye(2), eta=1.0, sigma=-1.0)
