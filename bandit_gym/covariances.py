r"""Covariances over arms for correlated best-arm identification (hoffman2014): the prior
\(\mu \sim \mathcal{N}(0, \eta^2 G)\) of the arm means, for the env's generating model and for a Bayesian agent's own
model; and the synthetic traffic speed data of ``CorrelatedBestArm-TrafficSynthetic-v1`` with its samplers of arm
means.

A covariance \(G\) is a \(K \times K\) symmetric positive semi-definite matrix, or the name of one of ``KERNELS``;
the envs' and agents' argument keeps the paper's word, ``kernel=``. (Elsewhere in the code, "kernel" means a
compiled numba function: the ``_kernels`` modules.) A means
sampler ``(rng, n) -> (n, K)`` may be named by a string of ``resolve_means``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from bandit_gym import _validation as check

KERNEL_COPIES = 4
"""The K x K float64 arrays a kernel takes at its construction and checks (the matrix, its transpose's comparison,
the eigendecomposition's vectors and workspace): the memory checked against ``bandit_gym._validation.memory_limit``
before a kernel of K arms is built or factored."""

#: arms (sensor locations) of the synthetic stand-ins for hoffman2014's traffic data, and their historical readings
TRAFFIC_SENSORS, TRAFFIC_HISTORY = 357, 1680
#: the synthetic speed data (v1): working days, readings per day (every 2.5 minutes from 6:00 to 11:00), and the
#: held-out readings (the last third: 7 days, the paper's 840 signals)
TRAFFIC_DAYS, TRAFFIC_READINGS_PER_DAY, TRAFFIC_HELD_OUT = 21, 120, 840


def check_kernel(kernel: object, name: str = "kernel") -> np.ndarray:
    """``kernel`` as a symmetric positive semi-definite float matrix, or a ValueError naming what is wrong."""
    g = np.asarray(kernel, dtype=np.float64)
    if g.ndim != 2 or g.shape[0] != g.shape[1] or g.shape[0] < 1:
        raise ValueError(f"{name} must be a square K x K matrix, got shape {g.shape}")
    if g.shape[0] > check.MAX_ARMS:
        check.arm_count(name, g.shape[0])
    k = g.shape[0]
    check.check_memory(name, f"<{k} x {k} matrix>", KERNEL_COPIES * 8 * k * k,
                       "the checks and factorisation of a K x K kernel (a few K x K float64 arrays)")
    if not np.all(np.isfinite(g)):
        raise ValueError(f"{name} must be finite")
    if not np.allclose(g, g.T, rtol=1e-10, atol=1e-12):
        raise ValueError(f"{name} must be symmetric (max |G - G^T| = {np.abs(g - g.T).max():.3g})")
    lowest = np.linalg.eigvalsh(g).min()
    if lowest < -1e-9 * max(1.0, np.abs(g).max()):
        raise ValueError(f"{name} must be positive semi-definite, its smallest eigenvalue is {lowest:.3g}")
    return g


def squared_exponential(locations: Any, length_scale: float = 1.0) -> np.ndarray:
    r"""\(G_{ij} = \exp\big(-\lVert x_i - x_j \rVert^2 / \ell^2\big)\) (\(\ell\) = ``length_scale``) for arm
    locations ``(K,)`` or ``(K, d)`` (hoffman2014 §6.2 writes the unit-length-scale kernel
    \(\exp\big(-(x - x')^2\big)\))."""
    x = np.asarray(locations, dtype=np.float64)
    if x.ndim == 1:
        x = x[:, None]
    if x.ndim != 2 or x.shape[0] < 2 or not np.all(np.isfinite(x)):
        raise ValueError(f"locations must be finite, of shape (K,) or (K, d) with K >= 2, got shape {x.shape}")
    k, d = x.shape
    check.arm_count("locations", k)
    check.check_memory("locations", f"<{k} points in {d} dimension(s)>", 8 * k * k * (d + KERNEL_COPIES),
                       "the K x K squared-exponential kernel (its K x K x d differences, then a few K x K arrays)")
    if not (np.isfinite(length_scale) and length_scale > 0):
        raise ValueError(f"length_scale={length_scale!r} must be a positive real number")
    sq = ((x[:, None, :] - x[None, :, :]) ** 2).sum(axis=2)
    return np.exp(-sq / length_scale**2)


@functools.lru_cache(maxsize=1)
def traffic_synthetic() -> np.ndarray:
    r"""The kernel of ``CorrelatedBestArm-TrafficSynthetic-v0``: a **synthetic** stand-in for the empirical
    covariance of hoffman2014's traffic data (\(K = 357\) sensors on I-880 South; the data is not available
    offline), rescaled to a unit mean diagonal. (v1 uses ``traffic_speeds_kernel``, the unscaled covariance of
    simulated speeds.)

    357 sensor positions drawn uniformly on a 40-mile road (fixed seed); 1680 "historical" speed profiles
    (two thirds of the paper's 2520 readings), each a draw of a Gaussian process over the positions: a
    squared-exponential component of length 3 miles (congestion waves), one of 0.5 mile (local bottlenecks,
    variance 0.5) and independent sensor noise (variance 0.2). \(G\) is their empirical covariance, as in the
    paper, scaled to a unit mean diagonal. Deterministic; read-only."""
    rng = np.random.default_rng(2014)
    positions = np.sort(rng.uniform(0.0, 40.0, TRAFFIC_SENSORS))
    truth = squared_exponential(positions, 3.0) + 0.5 * squared_exponential(positions, 0.5)
    truth += 0.2 * np.eye(TRAFFIC_SENSORS)
    history = rng.standard_normal((TRAFFIC_HISTORY, TRAFFIC_SENSORS)) @ np.linalg.cholesky(truth).T
    g = np.cov(history, rowvar=False)
    g = (g + g.T) / 2.0 / np.mean(np.diag(g))
    g.flags.writeable = False
    return g


@dataclass(frozen=True, eq=False)
class TrafficSpeeds:
    """Simulated traffic speeds (mph) at ``TRAFFIC_SENSORS`` sensors, one reading per sensor every 2.5
    minutes from 6:00 to 11:00 on ``TRAFFIC_DAYS`` working days (``traffic_speeds``). Read-only."""

    #: sensor positions along the road (miles, increasing downstream), (K,)
    positions: np.ndarray
    #: time of day of each reading of a day (hours), (120,)
    hours: np.ndarray
    #: each sensor's free-flow speed, (K,)
    free_flow: np.ndarray
    #: all readings, day after day, (2520, K)
    speeds: np.ndarray

    @property
    def historical(self) -> np.ndarray:
        """The first two thirds (days 1-14, 1680 readings): the data the agents' model is fitted to."""
        return self.speeds[: len(self.speeds) - TRAFFIC_HELD_OUT]

    @property
    def held_out(self) -> np.ndarray:
        """The last third (days 15-21, 840 readings): each is the true mean vector of one run."""
        return self.speeds[len(self.speeds) - TRAFFIC_HELD_OUT:]

    def when(self, reading: int) -> tuple[int, float]:
        """(day, hour) of reading ``reading`` of ``speeds`` (day 1 first)."""
        day, step = divmod(int(reading), TRAFFIC_READINGS_PER_DAY)
        return day + 1, float(self.hours[step])


def _road_factor(positions: np.ndarray, length: float) -> np.ndarray:
    """A Cholesky factor of the squared-exponential covariance of ``length`` miles along the road (jittered)."""
    return np.linalg.cholesky(squared_exponential(positions, length) + 1e-8 * np.eye(positions.size))


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * z))


def _day_events(days: np.random.Generator, sites: tuple[np.ndarray, ...]) -> list[tuple[Any, ...]]:
    """One day's congestion events ``(where, depth, start, length, reach)`` for ``traffic_speeds``, drawn from
    ``days``: the recurrent bottlenecks ``sites`` (their places, severities, onsets, durations and reaches), each
    active with probability 0.85 and scaled by the day's demand and per-day noise, then the incidents (Poisson,
    0.7 a day)."""
    at, severity, onset, duration, reach = sites
    demand = days.lognormal(0.0, 0.15)
    events = [(at[j], severity[j] * demand * days.lognormal(0.0, 0.2), onset[j] + days.normal(0.0, 0.25),
               duration[j] * demand * days.lognormal(0.0, 0.2), reach[j] * demand * days.lognormal(0.0, 0.3))
              for j in np.flatnonzero(days.random(at.size) < 0.85)]
    events += [(days.uniform(0.0, 40.0), days.uniform(10.0, 30.0), days.uniform(6.0, 10.5),
                days.uniform(0.3, 1.0), days.uniform(0.5, 2.0)) for _ in range(days.poisson(0.7))]
    return events


def _congestion(events: list[tuple[Any, ...]], hours: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """The speed drop (readings, sensors) of one day's ``events``: each a queue growing upstream from its place
    and onset and clearing after its length; overlapping drops add up to at most 55 mph."""
    drop = np.zeros((TRAFFIC_READINGS_PER_DAY, TRAFFIC_SENSORS))
    for where, depth, start, length, queue_reach in events:
        grow = np.sin(np.pi * np.clip((hours - start) / length, 0.0, 1.0))  # 0 before onset, after clearing
        upstream = where - positions
        inside = (_sigmoid((queue_reach * grow[:, None] - upstream[None, :]) / 0.2)
                  * _sigmoid((upstream[None, :] + 0.1) / 0.1))
        drop += depth * np.sqrt(grow)[:, None] * inside
    return np.minimum(drop, 55.0)


def _fluctuations(noise: np.random.Generator, local: np.ndarray, steps: int) -> np.ndarray:
    """One day's fluctuation field (steps, sensors): smooth along the road (``local``, the road factor) and
    autoregressive in time (0.9 per reading), of unit sd."""
    innovations = noise.standard_normal((steps, TRAFFIC_SENSORS)) @ local.T
    wave = np.empty_like(innovations)
    wave[0] = innovations[0]
    for t in range(1, steps):
        wave[t] = 0.9 * wave[t - 1] + np.sqrt(1.0 - 0.9**2) * innovations[t]
    return wave


@functools.lru_cache(maxsize=1)
def traffic_speeds() -> TrafficSpeeds:
    r"""**Synthetic** traffic speeds following the recipe of hoffman2014 §6.1 (whose sensor data, I-880 South,
    is not available offline): 357 sensors on a 40-mile road (the positions of ``traffic_synthetic``), a
    reading every 2.5 minutes from 6:00 to 11:00 on 21 working days, 2520 speed profiles in all. Deterministic
    (seed 2014); about half a second, once per process.

    Speed = free-flow speed - congestion + fluctuations + sensor noise, floored at 3 mph:

    - free flow: 63 mph plus a smooth profile along the road (length 3 miles, sd 2 mph) and a per-sensor offset
      (sd 1 mph);
    - congestion: 8 recurrent bottlenecks at fixed places, each active on a day with probability 0.85, with a
      queue that grows upstream from its onset (around 7:00) and clears within 1.5-3 hours, reaching 1.5-5 miles
      and cutting speeds by 12-29 mph (scaled by a day's demand and by per-day noise), plus incidents (Poisson,
      0.7 a day) at random places and times; overlapping drops add up to at most 55 mph;
    - fluctuations: a field smooth along the road (length 1 mile) and autoregressive in time (0.9 per reading),
      of sd 1 mph plus 15% of the congestion drop (stop-and-go inside queues);
    - sensor noise: independent, sd 1.5 mph.

    The first 14 days are the historical data (``TrafficSpeeds.historical``), the last 7 the held-out
    profiles (``TrafficSpeeds.held_out``). The scales were set so that the mean per-sensor variance of the
    historical readings is near the paper's (\(\sigma^2 = 4.78\) is 5% of it: 95.6 \(\text{mph}^2\))."""
    seeds = np.random.SeedSequence(2014).spawn(4)
    positions = np.sort(np.random.default_rng(2014).uniform(0.0, 40.0, TRAFFIC_SENSORS))  # as traffic_synthetic
    hours = 6.0 + np.arange(TRAFFIC_READINGS_PER_DAY) * 2.5 / 60.0
    road = np.random.default_rng(seeds[0])
    free = 63.0 + 2.0 * _road_factor(positions, 3.0) @ road.standard_normal(TRAFFIC_SENSORS)
    free += road.standard_normal(TRAFFIC_SENSORS)
    places = np.random.default_rng(seeds[1])
    bottlenecks = 8
    at, severity = places.uniform(2.0, 40.0, bottlenecks), places.uniform(12.0, 29.0, bottlenecks)
    onset, duration = places.uniform(6.6, 7.4, bottlenecks), places.uniform(1.5, 3.0, bottlenecks)
    reach = places.uniform(1.5, 5.0, bottlenecks)
    days = np.random.default_rng(seeds[2])
    noise = np.random.default_rng(seeds[3])
    steps = TRAFFIC_READINGS_PER_DAY
    local = _road_factor(positions, 1.0)
    speeds = np.empty((TRAFFIC_DAYS, steps, TRAFFIC_SENSORS))
    for day in range(TRAFFIC_DAYS):
        drop = _congestion(_day_events(days, (at, severity, onset, duration, reach)), hours, positions)
        wave = _fluctuations(noise, local, steps)
        speed = free - drop + (1.0 + 0.15 * drop) * wave + 1.5 * noise.standard_normal((steps, TRAFFIC_SENSORS))
        speeds[day] = np.maximum(speed, 3.0)
    data = TrafficSpeeds(positions, hours, free, speeds.reshape(-1, TRAFFIC_SENSORS))
    for array in (data.positions, data.hours, data.free_flow, data.speeds):
        array.flags.writeable = False
    return data


@functools.lru_cache(maxsize=1)
def traffic_speeds_kernel() -> np.ndarray:
    r"""\(G\) of ``CorrelatedBestArm-TrafficSynthetic-v1``: the empirical covariance (\(\text{mph}^2\), not
    rescaled) of the 1680 historical profiles of ``traffic_speeds``, as hoffman2014 §6.1 builds it. Read-only."""
    g = np.cov(traffic_speeds().historical, rowvar=False)
    g = (g + g.T) / 2.0
    g.flags.writeable = False
    return g


def traffic_noise_variance() -> float:
    r"""\(\sigma^2\) of ``CorrelatedBestArm-TrafficSynthetic-v1``: 5% of the average per-sensor variance of the
    historical data (the mean of \(\mathrm{diag}\, G\)), hoffman2014 §6.1's rule."""
    return 0.05 * float(np.mean(np.diag(traffic_speeds_kernel())))


TRAFFIC_PARTS = ("held-out", "historical")
"""The parts of ``traffic_speeds`` a ``TrafficProfiles`` sampler draws from."""
TRAFFIC_RUN_ORDER_SEED = 0
"""Seed of the fixed order in which ``TrafficProfiles`` with ``first_run`` deals the profiles out."""


@functools.lru_cache(maxsize=len(TRAFFIC_PARTS))
def traffic_run_order(part: str) -> np.ndarray:
    """The fixed shuffled order in which runs take the profiles of ``part`` one each (seed
    ``TRAFFIC_RUN_ORDER_SEED``): run r plays profile ``traffic_run_order(part)[r % size]`` of the part."""
    size = len(_traffic_part(part))
    order = np.random.default_rng(TRAFFIC_RUN_ORDER_SEED).permutation(size)
    order.flags.writeable = False
    return order


def _traffic_part(part: str) -> np.ndarray:
    data = traffic_speeds()
    return data.held_out if part == "held-out" else data.historical


class TrafficProfiles:
    """Sampler of arm means from the synthetic traffic speeds (``traffic_speeds``), one speed profile per
    episode (pass it as ``means=``, or name it: ``resolve_means``): the data are the true means, not draws
    from any prior.

    ``part``: ``"held-out"`` (the 840 profiles the paper evaluates on) or ``"historical"`` (the 1680 the agents'
    model is fitted to; a tuning set). ``first_run=None`` (default): each episode draws one profile uniformly
    with the rng it is given. ``first_run=s``: the n copies of a reset play the profiles of runs s, ..., s + n - 1
    of ``traffic_run_order`` (the rng is not used), so that a study of R runs in blocks takes every profile
    once when R is the part's size. Holds no data (picklable, small)."""

    def __init__(self, part: str = "held-out", first_run: int | None = None) -> None:
        if part not in TRAFFIC_PARTS:
            raise ValueError(f"part={part!r} is not allowed; use one of {', '.join(map(repr, TRAFFIC_PARTS))}")
        if first_run is not None and (isinstance(first_run, bool) or not isinstance(first_run, (int, np.integer))
                                      or first_run < 0):
            raise ValueError(f"first_run={first_run!r} must be None or an integer >= 0")
        self.part = part
        self.first_run = None if first_run is None else int(first_run)

    def __repr__(self) -> str:
        how = "uniform" if self.first_run is None else f"first_run={self.first_run}"
        return f"TrafficProfiles({self.part!r}, {how})"

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, TrafficProfiles) and (self.part, self.first_run) == (other.part, other.first_run))

    def __hash__(self) -> int:
        return hash((TrafficProfiles, self.part, self.first_run))

    @property
    def profiles(self) -> np.ndarray:
        """The profiles of the part, (size, K), read-only."""
        return _traffic_part(self.part)

    def indices(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """The profile indices (into ``profiles``) that a call with ``rng`` and ``n`` plays."""
        size = len(self.profiles)
        if self.first_run is None:
            return rng.integers(0, size, size=n)
        return traffic_run_order(self.part)[(self.first_run + np.arange(n)) % size]

    def __call__(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return self.profiles[self.indices(rng, n)].copy()


MEANS: dict[str, str] = {"traffic-held-out": "held-out", "traffic-historical": "historical"}
"""Named means samplers (``TrafficProfiles``): name -> part."""


def resolve_means(name: str) -> TrafficProfiles:
    """The sampler a string names (plain data, for registry and experiment kwargs): ``"traffic-held-out"`` or
    ``"traffic-historical"`` draw a profile uniformly per episode; ``"traffic-held-out@s"`` deals the profiles
    one each from run s on (``TrafficProfiles`` ``first_run=s``)."""
    base, _, start = name.partition("@")
    if base not in MEANS or (start and not start.isdigit()):
        raise ValueError(f"means={name!r} is not a known means sampler; use one of {', '.join(map(repr, MEANS))}, "
                         "optionally followed by @FIRST_RUN (an integer >= 0)")
    return TrafficProfiles(MEANS[base], int(start) if start else None)


def _model_selection() -> np.ndarray:
    from bandit_gym.model_selection import model_kernel

    return model_kernel()


KERNELS: dict[str, Callable[[], np.ndarray]] = {"traffic-synthetic": traffic_synthetic,
                                                "traffic-speeds": traffic_speeds_kernel,
                                                "model-selection": _model_selection}
r"""Named kernels: ``"traffic-synthetic"`` (357 arms, v0's, unit mean diagonal), ``"traffic-speeds"`` (357 arms,
v1's: the historical covariance of ``traffic_speeds``, \(\text{mph}^2\)), ``"model-selection"`` (hoffman2014
§6.2's 160 models).
"""


def resolve_kernel(kernel: object, name: str = "kernel") -> np.ndarray:
    """A kernel given as a matrix or as the name of one of ``KERNELS``, checked, as a float matrix."""
    if isinstance(kernel, str):
        if kernel not in KERNELS:
            raise ValueError(f"{name}={kernel!r} is not a known kernel; use a K x K matrix or one of "
                             f"{', '.join(map(repr, KERNELS))}")
        return KERNELS[kernel]()
    return check_kernel(kernel, name)


def prior_factor(kernel: np.ndarray, eta: float, tolerance: float = 1e-10) -> np.ndarray:
    r"""A factor \(F\) \((K, r)\) with \(F F^\top = \eta^2 G\), \(r\) the numerical rank of \(G\) (eigenvalues below
    ``tolerance`` times the largest are dropped): \(X = V D^{1/2}\) of hoffman2014 §4, scaled by \(\eta\)."""
    d, v = np.linalg.eigh(kernel)
    keep = d > tolerance * max(d.max(), 0.0)
    return eta * v[:, keep] * np.sqrt(d[keep])


class GaussianProcessMeans:
    r"""Sampler of arm means from the prior \(\mathcal{N}(0, \eta^2 G)\), one vector per episode (pass it as
    ``means=``): \(F z\) with \(F F^\top = \eta^2 G\) (``prior_factor``) and \(z\) standard normal."""

    def __init__(self, kernel: np.ndarray, eta: float = 1.0) -> None:
        self.kernel, self.eta = kernel, float(eta)
        self.factor = prior_factor(kernel, self.eta)

    def __repr__(self) -> str:
        return f"GaussianProcessMeans(K={self.kernel.shape[0]}, eta={self.eta:g})"

    def __call__(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return rng.standard_normal((n, self.factor.shape[1])) @ self.factor.T
