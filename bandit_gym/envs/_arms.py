"""The arms of an engine, a part every engine holds: the instance they play (fixed, drawn per episode, or pinned by
a reset), and, for arms of means, their law and support."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from bandit_gym import _validation as check
from bandit_gym.envs import _render
from bandit_gym.instances import Preset

MeansSampler = Callable[[np.random.Generator, int], np.ndarray]
ARM_DISTRIBUTIONS = ("bernoulli", "gaussian", "custom")


def check_custom_distributions(distributions: Any, means: Any, arm_distribution: str | None) -> list[Any]:
    """The arms' distributions passed by the user: frozen ``scipy.stats`` distributions (or anything with
    ``ppf``, ``mean`` and ``support``) of bounded support; an empty list when none are passed."""
    if distributions is None:
        if arm_distribution == "custom":
            raise ValueError("arm_distribution='custom' needs distributions=[...], one bounded distribution per arm")
        return []
    if means is not None:
        raise ValueError("pass either means= or distributions= (the means of custom arms are their distributions' "
                         "means), not both")
    if arm_distribution not in (None, "custom"):
        raise ValueError(f"distributions= makes the arms custom, but arm_distribution={arm_distribution!r}")
    try:
        arms = list(distributions)
    except TypeError:
        raise TypeError(f"distributions must be a list of frozen scipy.stats distributions, one per arm (K >= 2), "
                        f"e.g. [scipy.stats.beta(2, 5), scipy.stats.uniform(0, 1)]; got {distributions!r} of type "
                        f"{type(distributions).__name__}") from None
    check.arm_count("distributions", len(arms))
    for i, arm in enumerate(arms):
        if not all(callable(getattr(arm, name, None)) for name in ("ppf", "mean", "support")):
            raise TypeError(f"distributions[{i}] must be a frozen scipy.stats distribution (with ppf, mean and "
                            f"support), got {arm!r}")
        low, high = (float(v) for v in arm.support())
        if not (np.isfinite(low) and np.isfinite(high)):
            raise ValueError(f"distributions[{i}] has support [{low}, {high}]; arms must be bounded (e.g. "
                             "scipy.stats.beta(2, 5), scipy.stats.uniform(0, 1))")
    return arms


class Instance:
    """The true instance of the arms: one array every episode plays (``fixed``), or one drawn per episode by a
    ``sampler`` ``(rng, n) -> (n, *dims)``; an explicit ``reset`` may pin another (``pinned``) until the next.

    ``value`` is the sampler (a callable) or the fixed instance, already checked. ``check(name, value)`` checks
    one instance, here each drawn one; ``what`` names the instance in the sampler's errors (``"means"``,
    ``"survival"``) and ``dims`` its axes there (``("K",)``, ``("K", "m")``)."""

    def __init__(self, value: Any, check: Callable[[str, Any], np.ndarray], what: str, dims: Sequence[str]) -> None:
        self.check, self.what, self.dims = check, what, tuple(dims)
        #: the sampler of an instance per episode, or None
        self.sampler: Callable[[np.random.Generator, int], Any] | None = value if callable(value) else None
        #: the instance of every episode, or None when the sampler draws one per episode
        self.fixed: np.ndarray | None = None if self.sampler is not None else value
        #: the instance pinned by ``reset(options=...)`` until the next explicit reset, or None
        self.pinned: np.ndarray | None = None
        #: the fixed instance, or a first draw of the sampler from a generator of its own (its shape)
        self.default: np.ndarray = value if self.fixed is not None else self.draw(np.random.default_rng(0), 1)[0]

    @property
    def current(self) -> np.ndarray | None:
        """The instance every episode plays (pinned, else fixed), or None when the sampler draws one per episode."""
        return self.pinned if self.pinned is not None else self.fixed

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` instances drawn by the sampler with ``rng`` (shape ``(n, *dims)``), each checked."""
        assert self.sampler is not None
        drawn = np.asarray(self.sampler(rng, n), dtype=np.float64)
        if drawn.ndim != len(self.dims) + 1 or drawn.shape[0] != n:
            raise ValueError(f"the {self.what} sampler must return an array of shape ({n}, {', '.join(self.dims)}), "
                             f"got {drawn.shape}")
        for one in drawn:
            self.check(f"{self.what} (drawn by the sampler)", one)
        return drawn

    def episodes(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """The instances of ``n`` episodes that start now: the current one (broadcast), or ``n`` draws."""
        current = self.current
        return self.draw(rng, n) if current is None else current


class Arms:
    """K arms of one law and the instance of their means.

    The law is ``"bernoulli"`` (means in [0, 1]), ``"gaussian"`` (standard deviation ``sigma``) or ``"custom"``:
    bounded ``distributions`` (frozen ``scipy.stats`` laws, or anything with ``ppf``, ``mean`` and ``support``),
    whose means are the instance. ``argument`` is the constructor argument that names the law
    (``arm_distribution``, the multi-armed env's ``distribution``) and ``choices`` the laws it takes. The means
    (``means``: K of them or a sampler ``(rng, n) -> (n, K)``; ``default_means`` when None) are an ``Instance``.
    """

    def __init__(self, means: Any, distribution: str | None = None, sigma: float = 1.0, distributions: Any = None,
                 *, default_means: Any = None, argument: str = "arm_distribution",
                 choices: Sequence[str] = ARM_DISTRIBUTIONS) -> None:
        #: the custom arms' distributions (an empty list unless the arms are custom)
        self.distributions: list[Any] = []
        if "custom" in choices:  # a preset's means give way to the user's distributions
            means = Preset.resolve(means, replaced=distributions is not None)
            self.distributions = check_custom_distributions(distributions, means, distribution)
        #: the law: ``"bernoulli"``, ``"gaussian"`` or ``"custom"``
        self.distribution = check.choice(
            argument, distribution if distribution is not None else ("custom" if self.distributions else "bernoulli"),
            choices,
        )
        self.bernoulli = self.distribution == "bernoulli"
        self.custom = self.distribution == "custom"
        if self.custom:
            means = np.array([float(d.mean()) for d in self.distributions])
        elif means is None:
            means = default_means
        #: the Gaussian arms' standard deviation: one for every arm (a float), or one per arm (K floats)
        self.sigma: float | np.ndarray = self._check_sigma(sigma)
        #: the interval the samples lie in: [0, 1] (Bernoulli), the real line (Gaussian), the custom laws' hull
        self.support = self._support()
        #: the means: fixed, drawn per episode, or pinned by a reset
        self.instance = Instance(means if callable(means) else self.check_means("means", means), self.check_means,
                                 "means", ("K",))
        self.num_arms: int = self.instance.default.shape[0]
        if isinstance(self.sigma, np.ndarray) and self.sigma.shape[0] != self.num_arms:
            raise ValueError(f"sigma has {self.sigma.shape[0]} standard deviations but {self.source} (K="
                             f"{self.num_arms}): give one per arm, or one float for every arm")
        #: each arm's standard deviation, ``(K,)`` float64 (Gaussian arms; ``sigma`` broadcast)
        self.scales = np.broadcast_to(np.asarray(self.sigma, dtype=np.float64), (self.num_arms,)).copy()
        #: whether the Gaussian arms' standard deviations differ
        self.per_arm_sigma = isinstance(self.sigma, np.ndarray)

    def _check_sigma(self, sigma: Any) -> float | np.ndarray:
        """One standard deviation > 0 (a float), or K of them for Gaussian arms of different variances."""
        if np.ndim(sigma) == 0:
            return check.real("sigma", sigma, low=0.0, low_open=True)
        if self.distribution != "gaussian":
            raise ValueError(f"sigma: one standard deviation per arm is for arm_distribution='gaussian'; the arms "
                             f"are {self.distribution!r}")
        scales = check.real_array("sigma", sigma, ndim=1)
        if np.any(scales <= 0.0):
            raise ValueError(f"sigma must hold standard deviations > 0, got {scales[scales <= 0.0][0]}")
        return scales

    def _support(self) -> tuple[float, float]:
        if self.custom:
            supports = np.array([d.support() for d in self.distributions], dtype=np.float64)
            return float(supports[:, 0].min()), float(supports[:, 1].max())
        return (0.0, 1.0) if self.bernoulli else (-np.inf, np.inf)

    @property
    def bounded(self) -> bool:
        """The samples lie in a bounded interval (Bernoulli and custom arms)."""
        return bool(np.isfinite(self.support).all())

    @property
    def source(self) -> str:
        """Where the number of arms comes from, for the errors that name it."""
        k = self.num_arms
        if self.custom:
            return f"distributions= gives {k} arms"
        if self.instance.sampler is not None:
            return f"the means sampler draws {k} means per episode"
        return f"means= gives {k} means"

    def check_means(self, name: str, value: Any) -> np.ndarray:
        """``value`` as K means of this law (in [0, 1] for Bernoulli arms), or an error naming ``name``."""
        if self.bernoulli:
            means = check.real_array(name, value, ndim=1, low=0.0, high=1.0)
        elif self.custom and name != "means":
            raise ValueError(f"{name}: the means of custom arms come from their distributions and cannot be set")
        else:
            means = check.real_array(name, value, ndim=1)
        check.arm_count(name, means.shape[0])
        if getattr(self, "num_arms", means.shape[0]) != means.shape[0]:
            raise ValueError(f"{name} has {means.shape[0]} arms but this env has K={self.num_arms}")
        return means

    def pin(self, options: Mapping[str, Any]) -> None:
        """Pin the means of reset ``options`` (``options["means"]``), or unpin them when it has none."""
        self.instance.pinned = self.check_means("options['means']", options["means"]) if "means" in options else None

    @property
    def sampler(self) -> Any:
        """The sampler of the means per episode, or None when they are fixed."""
        return self.instance.sampler

    @property
    def fixed_means(self) -> np.ndarray | None:
        """The instance every episode plays (pinned by ``reset(options=...)``, else ``means=``), or None when
        a sampler draws one per episode."""
        return self.instance.current

    def episode_means(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """The means of ``n`` episodes that start now (``Instance.episodes``): drawn with ``rng`` by the sampler,
        or the fixed or pinned means."""
        return self.instance.episodes(rng, n)

    def quantiles(self, arms: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Samples of custom arms: ``F_a^{-1}(u)`` for the arm ``a`` of each uniform (one quantile call per arm)."""
        x = np.empty(u.shape)
        for a in np.unique(arms):
            chosen = arms == a
            x[chosen] = self.distributions[a].ppf(u[chosen])
        return x

    def halfwidths(self, counts: np.ndarray) -> np.ndarray:
        """Half-widths of 95% intervals on the means after ``counts`` pulls (float64): Hoeffding's on the support
        of bounded arms, the normal one of ``sigma`` otherwise; infinite for arms never pulled."""
        if self.bounded:
            return _render.hoeffding_halfwidth(counts) * (self.support[1] - self.support[0])
        with np.errstate(divide="ignore"):
            return 1.959964 * self.scales / np.sqrt(counts)
