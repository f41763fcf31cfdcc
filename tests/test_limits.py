"""Sizes are checked up front, before anything is allocated, and a user's mistake is a clear ValueError/TypeError
that names the argument, its value and what is allowed: never numpy's MemoryError, a raw Python error, or minutes
of work before a failure.

The limits live in ``bandit_gym._validation`` (``MAX_ARMS``, ``MAX_LEVELS``, ``MAX_BUDGET``, ``memory_limit``).
The memory tests set the machine's physical memory (``physical_memory``) or the limit (``memory_limit``) so that
they do not depend on the machine, and use ``tracemalloc`` to show that a refused env allocated nothing large."""

from __future__ import annotations

import tracemalloc
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import bandit_gym  # noqa: F401  (registers the envs)
from bandit_gym import _validation
from bandit_gym.envs import (
    BestArmIdentificationEnv,
    CorrelatedBestArmEnv,
    MultiArmedBanditEnv,
    ThresholdBanditEnv,
    ThresholdingBanditEnv,
    TopKIdentificationEnv,
)
from bandit_gym.instances import (
    BudgetRange,
    RandomSurvival,
    SpreadMeans,
    UniformMeans,
    fixed_gap_distributions,
    staircase_distributions,
)

MAX_ARMS, MAX_LEVELS, MAX_BUDGET = _validation.MAX_ARMS, _validation.MAX_LEVELS, _validation.MAX_BUDGET
GIB = 2**30

#: one registered id per family, with the arms it has
ONE_ID_PER_FAMILY = {
    "ThresholdingBandit-v0": 10,
    "ThresholdBandit-v0": 3,
    "BestArmIdentification-v0": 20,
    "TopKIdentification-v0": 100,
    "CorrelatedBestArm-v0": 50,
    "ModelSelection-v0": 160,
    "MultiArmedBandit-v0": 10,
}


@pytest.fixture
def machine_of_16_gib(monkeypatch: pytest.MonkeyPatch) -> None:
    """A machine of 16 GiB of physical memory, whatever this one has: the limit is then 8 GiB."""
    monkeypatch.setattr(_validation, "physical_memory", lambda: 16 * GIB)


def _peak_bytes(call: Callable[[], Any], error: type[Exception]) -> tuple[str, int]:
    """The message of the ``error`` that ``call`` raises, and the peak of memory traced while it ran."""
    tracemalloc.start()
    try:
        with pytest.raises(error) as caught:
            call()
        return str(caught.value), tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _make_vec(env_id: str, num_envs: int, **kwargs: Any) -> Callable[[], Any]:
    return lambda: gym.make_vec(env_id, num_envs=num_envs, vectorization_mode="vector_entry_point", **kwargs)


# ----------------------------------------------------------------------------------------------- memory
def test_make_vec_refuses_copies_beyond_the_memory_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """A machine of 4 MiB (limit 2 MiB): 2000 copies of K = 10 arms (about 3.6 MiB) are refused, naming num_envs,
    K, the estimate and the limit, and how many copies would fit; 100 copies are made."""
    monkeypatch.setattr(_validation, "physical_memory", lambda: 4 * 2**20)
    message, _ = _peak_bytes(_make_vec("ThresholdingBandit-v0", 2000), ValueError)
    estimate = _validation.nbytes(_validation.env_bytes(2000, 10))
    for piece in ("num_envs=2000", "K=10 arms", f"about {estimate}", "the limit of 2 MiB", "MEMORY_FRACTION = 0.5",
                  "4 MiB of physical memory", "num_envs <= 1129"):
        assert piece in message, (piece, message)
    assert gym.make_vec("ThresholdingBandit-v0", num_envs=100, vectorization_mode="vector_entry_point").num_envs == 100


def test_the_limit_can_be_replaced_and_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """``memory_limit`` is the documented hook: replaced by a test (or a user), its value is the one enforced."""
    monkeypatch.setattr(_validation, "memory_limit", lambda: 10**6)
    with pytest.raises(ValueError, match=r"num_envs=1000 copies .* above the limit of 977 KiB"):
        gym.make_vec("MultiArmedBandit-v0", num_envs=1000, vectorization_mode="vector_entry_point")


def test_the_default_limit_is_half_the_physical_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    total = _validation.physical_memory()
    if total is not None:
        assert _validation.memory_limit() == total // 2
    monkeypatch.setattr(_validation, "physical_memory", lambda: None)  # no os.sysconf (Windows)
    assert _validation.memory_limit() == _validation.FALLBACK_MEMORY_LIMIT == 8 * GIB


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("env_id", list(ONE_ID_PER_FAMILY))
def test_10_8_copies_are_refused_before_anything_is_allocated(machine_of_16_gib: None, env_id: str) -> None:
    """``num_envs=10**8`` failed inside numpy with a MemoryError after seconds: now a ValueError naming num_envs
    and the limit, raised while less than 32 MiB was ever allocated (the env would need over 100 GiB)."""
    message, peak = _peak_bytes(_make_vec(env_id, 10**8), ValueError)
    k = ONE_ID_PER_FAMILY[env_id]
    assert "num_envs=100000000" in message and f"K={k} arms" in message, message
    assert "the limit of 8 GiB" in message and "16 GiB of physical memory" in message, message
    assert peak < 32 * 2**20, peak


def test_a_single_env_counts_its_arms_in_the_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    """One copy of 60,000 arms (under MAX_ARMS) is refused on a machine where it does not fit."""
    monkeypatch.setattr(_validation, "memory_limit", lambda: 2**20)
    with pytest.raises(ValueError, match=r"num_envs=1 copy of a problem with K=60000 arms .* one copy does not fit"):
        ThresholdingBanditEnv(means=np.full(60000, 0.3))


@pytest.mark.filterwarnings("ignore")
def test_the_threshold_bandit_counts_levels_x_arms_x_copies(monkeypatch: pytest.MonkeyPatch) -> None:
    """K = 4 arms with m = 2048 levels need about 700 KiB per copy: 100 copies do not fit in 32 MiB, where 100
    copies of the same arms with 2 levels do; the error names m and how many copies fit."""
    monkeypatch.setattr(_validation, "memory_limit", lambda: 32 * 2**20)
    kwargs = {"thresholds": "cyclic", "horizon": 5000}
    message, peak = _peak_bytes(
        _make_vec("ThresholdBandit-v0", 100, distributions=fixed_gap_distributions(2048).tolist(), **kwargs),
        ValueError)
    assert "num_envs=100" in message and "K=4 arms and m=2048 threshold levels" in message, message
    assert f"num_envs <= {32 * 2**20 // _validation.env_bytes(1, 4, 2048)} copies" in message, message
    assert peak < 16 * 2**20, peak
    gym.make_vec("ThresholdBandit-v0", num_envs=100, vectorization_mode="vector_entry_point",
                 distributions=fixed_gap_distributions(2).tolist(), **kwargs)


def test_a_random_survival_sampler_is_sized_before_its_draws(monkeypatch: pytest.MonkeyPatch) -> None:
    """The sampler's size is known: too many copies are refused before its rejection draws run."""
    monkeypatch.setattr(_validation, "memory_limit", lambda: 2**20)
    with pytest.raises(ValueError, match=r"num_envs=1000 copies of a problem with K=50 arms and m=100 threshold"):
        gym.make_vec("ThresholdBandit-v0", num_envs=1000, vectorization_mode="vector_entry_point",
                     survival=RandomSurvival(num_arms=50, num_levels=100))


def test_a_correlated_kernel_is_sized_before_it_is_built(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_validation, "memory_limit", lambda: 2**20)
    with pytest.raises(ValueError, match=r"locations=<1000 points in 1 dimension\(s\)> would need about 38\.1 MiB"):
        CorrelatedBestArmEnv(locations=np.linspace(0.0, 1.0, 1000))
    with pytest.raises(ValueError, match=r"kernel=<1000 x 1000 matrix> would need about 30\.5 MiB"):
        CorrelatedBestArmEnv(kernel=np.eye(1000))


def test_a_bayesian_posterior_is_sized_before_it_is_made(monkeypatch: pytest.MonkeyPatch) -> None:
    from bandit_gym.agents.bayesian._posterior import GaussianPosterior

    monkeypatch.setattr(_validation, "memory_limit", lambda: 2**20)
    with pytest.raises(ValueError, match=r"num=1000 would need about 19.8 MiB .* posterior of 1000 copies over K=50"):
        GaussianPosterior(np.eye(50), 1.0, 1.0, num=1000)


# ----------------------------------------------------------------------------------------------- arms
def _too_many_means() -> np.ndarray:
    return np.full(MAX_ARMS + 1, 0.3)


K_TOO_LARGE: dict[str, tuple[Callable[[], Any], str]] = {
    "thresholding": (lambda: ThresholdingBanditEnv(means=_too_many_means()), "means"),
    "thresholding sampler": (lambda: ThresholdingBanditEnv(means=lambda rng, n: np.full((n, MAX_ARMS + 1), 0.3)),
                             "means"),
    "threshold bandit": (lambda: ThresholdBanditEnv(survival=np.full((MAX_ARMS + 1, 1), 0.5)), "survival"),
    "threshold bandit distributions": (
        lambda: ThresholdBanditEnv(distributions=np.full((MAX_ARMS + 1, 2), 0.5)), "distributions"),
    "best arm": (lambda: BestArmIdentificationEnv(means=_too_many_means()), "means"),
    "top K": (lambda: TopKIdentificationEnv(means=_too_many_means(), k=1), "means"),
    "correlated": (lambda: CorrelatedBestArmEnv(locations=np.linspace(0.0, 1.0, MAX_ARMS + 1)), "locations"),
    "multi-armed": (lambda: MultiArmedBanditEnv(means=_too_many_means()), "means"),
    "multi-armed num_arms": (lambda: MultiArmedBanditEnv(num_arms=MAX_ARMS + 1), "num_arms"),
}


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("case", list(K_TOO_LARGE))
def test_more_arms_than_max_arms_are_refused_in_every_family(case: str) -> None:
    """K = 10^7 was accepted (an LSA step took 57 s); every family refuses K > MAX_ARMS by the argument's name.
    ModelSelection-v0 has its 160 arms, which no argument changes."""
    make, name = K_TOO_LARGE[case]
    with pytest.raises(ValueError) as caught:
        make()
    message = str(caught.value)
    assert message.startswith(name) and f"K={MAX_ARMS + 1}" in message, message
    assert f"MAX_ARMS = {MAX_ARMS}" in message, message


def test_env_kwargs_num_arms_10_12_is_the_num_arms_error() -> None:
    with pytest.raises(ValueError, match=r"num_arms describes K=1000000000000 arms, above the maximum MAX_ARMS"):
        gym.make("MultiArmedBandit-v0", num_arms=10**12)


def test_an_experiment_spec_with_num_arms_10_12_is_one_clear_line(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """``env_kwargs = {num_arms = 10**12}`` was an internal MemoryError; now the user's error, in one line."""
    from bandit_gym.cli import main

    spec = tmp_path / "spec.toml"
    spec.write_text('env = "MultiArmedBandit-v0"\nenv_kwargs = { num_arms = 1000000000000 }\nbudgets = [100]\n'
                    'runs = 2\nagents = ["UCB1"]\n')
    code = main(["run", str(spec), "--quiet", "--jobs", "1", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err and "MemoryError" not in err, err
    assert "num_arms describes K=1000000000000 arms" in err and f"MAX_ARMS = {MAX_ARMS}" in err, err


# ----------------------------------------------------------------------------------------------- budget, levels
def test_the_threshold_bandit_has_the_same_maximum_budget_as_every_family() -> None:
    """horizon=10**12 was accepted; now refused above the one shared MAX_BUDGET = 2^24."""
    from bandit_gym.envs import multi_armed, threshold, thresholding

    assert thresholding.MAX_BUDGET is multi_armed.MAX_BUDGET is threshold.MAX_BUDGET is MAX_BUDGET == 2**24
    for horizon in (10**12, MAX_BUDGET + 1):
        with pytest.raises(ValueError, match=rf"horizon={horizon} is too large; it must be <= 16777216"):
            gym.make("ThresholdBandit-v0", horizon=horizon)
    with pytest.raises(ValueError, match=r"BudgetRange high=16777217 is too large; it must be <= 16777216"):
        BudgetRange(1, MAX_BUDGET + 1)
    assert gym.make("ThresholdBandit-v0", horizon=MAX_BUDGET).unwrapped.horizon == MAX_BUDGET


@pytest.mark.parametrize(("kwargs", "name"), [
    ({"survival": np.full((2, MAX_LEVELS + 1), 0.5)}, "survival"),
    ({"distributions": np.full((2, MAX_LEVELS + 2), 1.0 / (MAX_LEVELS + 2))}, "distributions"),
])
def test_more_levels_than_max_levels_are_refused(kwargs: dict[str, Any], name: str) -> None:
    """10^7 levels ran for minutes before failing; m > MAX_LEVELS is refused at once, by the argument's name."""
    with pytest.raises(ValueError) as caught:
        ThresholdBanditEnv(**kwargs)
    message = str(caught.value)
    assert message.startswith(name) and f"m={MAX_LEVELS + 1} threshold levels" in message, message
    assert f"MAX_LEVELS = {MAX_LEVELS}" in message, message


# ----------------------------------------------------------------------------------------------- samplers
@pytest.mark.parametrize(("make", "error", "pieces"), [
    (lambda: UniformMeans(num_arms=MAX_ARMS + 1), ValueError, ("UniformMeans num_arms=65537", "<= 65536")),
    (lambda: UniformMeans(num_arms=10**7), ValueError, ("UniformMeans num_arms=10000000", "<= 65536")),
    (lambda: UniformMeans(num_arms=-3), ValueError, ("UniformMeans num_arms=-3 is too small", ">= 2")),
    (lambda: UniformMeans(num_arms=2.5), TypeError, ("UniformMeans num_arms must be an integer",)),
    (lambda: UniformMeans(low=float("nan")), ValueError, ("UniformMeans low=nan",)),
    (lambda: UniformMeans(high=float("inf")), ValueError, ("UniformMeans high=inf",)),
    (lambda: UniformMeans(low=0.6, high=0.5), ValueError, ("UniformMeans high=0.5", "[0.6, inf]")),
    (lambda: UniformMeans(low=-1e308, high=1e308), ValueError, ("high - low must be a finite float",)),
    (lambda: SpreadMeans(num_arms=MAX_ARMS + 1), ValueError, ("SpreadMeans num_arms=65537", "<= 65536")),
    (lambda: RandomSurvival(num_arms=10**7), ValueError, ("RandomSurvival num_arms=10000000", "<= 65536")),
    (lambda: RandomSurvival(num_levels=10**7), ValueError, ("RandomSurvival num_levels=10000000", "<= 4096")),
    (lambda: staircase_distributions(MAX_ARMS + 1, 2), ValueError, ("num_arms describes K=65537", "MAX_ARMS")),
    (lambda: staircase_distributions(2, 10**7), ValueError, ("num_levels describes m=10000000", "MAX_LEVELS")),
    (lambda: fixed_gap_distributions(10**7), ValueError, ("num_levels describes m=10000000", "MAX_LEVELS")),
])
def test_samplers_check_their_sizes_and_values(make: Callable[[], Any], error: type[Exception],
                                               pieces: tuple[str, ...]) -> None:
    """``UniformMeans(num_arms=-3)`` raised numpy's "negative dimensions" at its first draw, ``low=nan`` an
    OverflowError, and ``RandomSurvival(num_arms=10**7)`` ran for minutes: now each is refused when it is
    made, naming the argument and what is allowed."""
    with pytest.raises(error) as caught:
        make()
    for piece in pieces:
        assert piece in str(caught.value), (piece, str(caught.value))


# ----------------------------------------------------------------------------------------------- raw errors
def test_distributions_that_are_not_a_list_name_the_argument() -> None:
    """``distributions=0.0`` on a best-arm preset raised "'float' object is not iterable"."""
    for env_id in ("BestArmIdentification-Audibert2010Problem1-v0", "ThresholdingBandit-Tao2019Setup1-v0"):
        with pytest.raises(TypeError, match=r"distributions must be a list of frozen scipy.stats distributions, "
                                            r"one per arm .* got 0.0 of type float"):
            gym.make(env_id, distributions=0.0)
    with pytest.raises(TypeError, match="distributions must be a list"):
        BestArmIdentificationEnv(distributions=np.float64(0.5))


def test_a_top_k_preset_given_too_few_means_says_so() -> None:
    """Three means on a preset of k = 100 said only "k=100 is too large" although k was not passed."""
    with pytest.raises(ValueError) as caught:
        gym.make("TopKIdentification-Chen2017TwoGroupK100-v0", means=[0.1, 0.2, 0.3])
    message = str(caught.value)
    for piece in ("k=100 is too large; it must be <= 2", "means= gives 3 means (K=3)", "the id's preset value",
                  "pass k from 1 to K - 1 = 2", "more than 100 arms"):
        assert piece in message, (piece, message)
    with pytest.raises(ValueError, match=r"m=3 is too large; it must be <= 2: distributions= gives 3 arms"):
        from scipy import stats

        BestArmIdentificationEnv(distributions=[stats.uniform(0, 1)] * 3, m=3)


@pytest.mark.parametrize("agent", ["DKWUCB", "KMUCB", "OPTIM", "PerThresholdUCB"])
def test_a_scalar_level_exceed_is_a_named_error(agent: str) -> None:
    """A scalar ``level_exceed`` in a batch of observations raised an IndexError ("tuple index out of range"); the
    base class's check of the observation (``Agent._as_batch``) refuses it by its name before the agents' own
    code reads it, in a batch and in a single observation."""
    from tests.conftest import AGENTS

    envs = gym.make_vec("ThresholdBandit-v0", num_envs=2, vectorization_mode="vector_entry_point", horizon=20)
    env = gym.make("ThresholdBandit-v0", horizon=20)
    for obs in (envs.reset(seed=0)[0], env.reset(seed=0)[0]):
        player = AGENTS[agent]()
        player.reset(seed=0)
        with pytest.raises(ValueError, match=r"obs\['level_exceed'\] must have shape"):
            player.act({**obs, "level_exceed": np.float32(0.0)})


@pytest.mark.parametrize("agent", ["BayesGap", "BayesUCB", "GPUCB", "EI", "PI", "ThompsonSampling"])
@pytest.mark.parametrize("kwargs", [{"eta": 1e-300}, {"eta": 1e100}, {"sigma": 1e-300}, {"sigma": 1e200},
                                    {"eta": float("nan")}, {"sigma": 0.0}])
def test_bayesian_scales_that_break_the_posterior_are_refused(agent: str, kwargs: dict[str, float]) -> None:
    """``BayesGap(eta=1e-300)`` raised a ZeroDivisionError at ``act`` (eta^2 is 0), eta = 1e100 made every
    agent's posterior NaN, sigma = 1e200 an OverflowError: the constructor refuses them with the interval."""
    from tests.conftest import AGENTS

    (name, value), = kwargs.items()
    with pytest.raises(ValueError) as caught:
        AGENTS[agent](**kwargs)
    assert str(caught.value).startswith(f"{name}={value!r} is outside the allowed interval [1e-75, 1e+75]"), \
        str(caught.value)


def test_bayesian_scales_at_the_ends_of_the_interval_play_cleanly() -> None:
    from bandit_gym.agents import BayesGap, ThompsonSampling
    from bandit_gym.rollout import play_episode

    env = gym.make("CorrelatedBestArm-v0", budget=20)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow, no division by zero, no NaN
        for eta in (1e-75, 1e75):
            for sigma in (1e-75, 1e75):
                for agent in (BayesGap(eta=eta, sigma=sigma), ThompsonSampling(eta=eta, sigma=sigma)):
                    assert play_episode(env, agent, seed=0)["pulls"] == 20


def test_a_bayesian_eta_too_large_for_its_kernel_is_refused() -> None:
    from bandit_gym.agents import BayesGap

    """eta^2 G_kk = 1e156 would overflow the update's products of two prior covariances."""
    with pytest.raises(ValueError, match=r"eta=1e\+75 is too large for this kernel: .* use eta <= 1e\+74"):
        BayesGap(eta=1e75, kernel=np.eye(3) * 1e6)
    BayesGap(eta=1e74, kernel=np.eye(3) * 1e6)


# ----------------------------------------------------------------------------------------------- documentation
@pytest.mark.parametrize("env_class", [ThresholdingBanditEnv, ThresholdBanditEnv, BestArmIdentificationEnv,
                                       TopKIdentificationEnv, CorrelatedBestArmEnv, MultiArmedBanditEnv])
def test_the_maxima_are_in_the_arguments_tables(env_class: type) -> None:
    doc = env_class.__doc__ or ""
    arguments = doc[doc.index("## Arguments"):]
    assert "MAX_BUDGET" in arguments and "MAX_ARMS" in arguments, env_class
    if env_class is ThresholdBanditEnv:
        assert "MAX_LEVELS" in arguments


def test_the_limits_are_documented_in_the_module() -> None:
    doc = _validation.__doc__ or ""
    for name in ("MAX_ARMS", "MAX_LEVELS", "MAX_BUDGET", "memory_limit()", "MEMORY_FRACTION",
                 "FALLBACK_MEMORY_LIMIT"):
        assert name in doc, name
