"""Registration of every env id with Gymnasium (idempotent), with a native ``vector_entry_point`` each."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, NamedTuple

import gymnasium as gym
import numpy as np

from bandit_gym.families import Family
from bandit_gym.instances import (
    AUDIBERT2010_PROBLEMS,
    CHEN2017_DATASETS,
    DELIVERY_DISTRIBUTIONS,
    TAO2019_BUDGETS,
    TAO2019_SETUPS,
    Preset,
    UniformMeans,
    best_arm_complexity,
    chen2017_means,
)

if TYPE_CHECKING:
    from bandit_gym.envs._base import Engine

TRAFFIC_ETA = 20.0
"""The prior scale of both traffic presets (hoffman2014 §6.1's "broad prior")."""
TRAFFIC_SIGMA = float(np.sqrt(0.05 * TRAFFIC_ETA**2))
r"""The noise of ``CorrelatedBestArm-TrafficSynthetic-v0``: \(\sigma^2\) = 5% of the prior variance (\(\eta = 20\), unit
mean diagonal of \(G\)).
"""
TRAFFIC_SPEEDS_NOISE_VARIANCE = 4.6201179742064555
r"""The noise variance of ``CorrelatedBestArm-TrafficSynthetic-v1`` (mph\(^2\)): 5% of the mean diagonal of \(G\), the
historical covariance of the synthetic speeds, as ``bandit_gym.covariances.traffic_noise_variance()`` computes it
(written out so that importing the package simulates nothing; a test checks the two agree).
"""
TRAFFIC_SPEEDS_SIGMA = float(np.sqrt(TRAFFIC_SPEEDS_NOISE_VARIANCE))

_THRESHOLDING = "bandit_gym.envs.thresholding:ThresholdingBandit"
_THRESHOLD = "bandit_gym.envs.threshold:ThresholdBandit"
_BEST_ARM = "bandit_gym.envs.best_arm:BestArmIdentification"
_TOP_K = "bandit_gym.envs.top_k:TopKIdentification"
_CORRELATED = "bandit_gym.envs.correlated:CorrelatedBestArm"
_MODEL_SELECTION = "bandit_gym.envs.model_selection:ModelSelection"
_MULTI_ARMED = "bandit_gym.envs.multi_armed:MultiArmedBandit"

class Registration(NamedTuple):
    """How an env id is registered: ``{stem}Env`` and ``{stem}VectorEnv`` with ``kwargs``, from ``paper``."""

    #: the module and class stem of the env, ``"bandit_gym.envs.thresholding:ThresholdingBandit"``
    stem: str
    #: the registered keyword arguments (a preset's instance)
    kwargs: dict[str, Any]
    #: the short name of the paper it comes from
    paper: str
    #: one line for ``bandit-gym list`` and the README's env table
    description: str

    @property
    def engine(self) -> type[Engine]:
        """The engine class of the env: the one its module defines (the module is imported; no env is made)."""
        from bandit_gym.envs._base import Engine

        module = importlib.import_module(self.stem.partition(":")[0])
        engines = [value for value in vars(module).values() if isinstance(value, type) and issubclass(value, Engine)
                   and value.__module__ == module.__name__]
        assert len(engines) == 1, f"{module.__name__} defines {len(engines)} engines"
        return engines[0]

    @property
    def family(self) -> Family:
        """The family of the env, as its engine names it."""
        return self.engine.family


ENV_SPECS: dict[str, Registration] = {
    "ThresholdBandit-v0": Registration(
        _THRESHOLD,
        {"feedback": "uncensored", "thresholds": "iid", "horizon": 1000},
        "abernethy2016",
        "3 arms on {0..5}, best arm changes with c_t; uncensored; i.i.d. thresholds",
    ),
    "ThresholdBanditCensored-v0": Registration(
        _THRESHOLD,
        {"feedback": "censored", "thresholds": "iid", "horizon": 1000},
        "abernethy2016",
        "same instance, censored feedback (X seen only when X < c_t)",
    ),
    "ThresholdBandit-Delivery-v0": Registration(
        _THRESHOLD,
        {"distributions": DELIVERY_DISTRIBUTIONS, "feedback": "uncensored", "thresholds": "iid", "horizon": 10000},
        "abernethy2016",
        "4 delivery routes, slack 0..6 against deadlines c_t; the best route changes with the deadline",
    ),
    "ThresholdingBandit-v0": Registration(
        _THRESHOLDING,
        {"means": UniformMeans(num_arms=10), "threshold": 0.5, "budget": 500},
        "tao2019",
        "10 Bernoulli arms with means drawn U(0, 1) each episode, theta = 0.5",
    ),
}
"""Id -> its ``Registration``; ``bandit-gym list`` and the README's env table are made from it."""
for _setup, _means in TAO2019_SETUPS.items():
    ENV_SPECS[f"ThresholdingBandit-Tao2019Setup{_setup}-v0"] = Registration(
        _THRESHOLDING,
        {"means": _means, "threshold": 0.5, "budget": TAO2019_BUDGETS[_setup]},
        "tao2019",
        f"Setup {_setup} of tao2019 §5 (K = {len(_means)}), theta = 0.5",
    )


ENV_SPECS["BestArmIdentification-v0"] = Registration(
    _BEST_ARM,
    {"m": 1, "epsilon": 0.0, "budget": 2000},  # means: problem 1 (the default), or distributions=[...]
    "gabillon2012",
    "(epsilon, m)-best arm identification, fixed budget or confidence; Audibert et al. problem 1 (K = 20)",
)
for _problem, _means in AUDIBERT2010_PROBLEMS.items():
    ENV_SPECS[f"BestArmIdentification-Audibert2010Problem{_problem}-v0"] = Registration(
        _BEST_ARM,
        {"means": _means, "m": 1, "epsilon": 0.0, "budget": round(best_arm_complexity(_means))},
        "gabillon2012",
        f"Audibert et al. (2010) problem {_problem} (K = {len(_means)}), budget n = H_1",
    )

ENV_SPECS["TopKIdentification-v0"] = Registration(
    _TOP_K,
    {"k": 10, "epsilon": 0.01, "delta": 0.01, "budget": 20000},  # means: UNIFORM with n = 100 (the default)
    "chen2017",
    "epsilon-top-K with aggregate regret, arms shuffled per episode; UNIFORM means 1 - i/n, n = 100, K = 10",
)
for _dataset in CHEN2017_DATASETS:
    for _k in (100, 250, 500):
        ENV_SPECS[f"TopKIdentification-Chen2017{_dataset}K{_k}-v0"] = Registration(
            _TOP_K,
            {"means": tuple(float(x) for x in chen2017_means(_dataset, 1000, _k)), "k": _k, "epsilon": 0.01,
             "delta": 0.01, "budget": 100000},
            "chen2017",
            f"chen2017 §3 dataset {_dataset}, n = 1000, K = {_k}, epsilon = 0.01",
        )

ENV_SPECS["CorrelatedBestArm-v0"] = Registration(
    _CORRELATED,
    {"eta": 1.0, "sigma": 0.2, "budget": 30},  # 50 arms on [0, 1], squared-exponential kernel of length 0.1
    "hoffman2014",
    "fixed-budget best arm, Gaussian arms with means ~ GP(0, eta^2 G) per episode; K = 50 > T = 30",
)
ENV_SPECS["CorrelatedBestArm-TrafficSynthetic-v0"] = Registration(
    _CORRELATED,
    # the well-specified setting (kept): means drawn from the agents' prior N(0, eta^2 G), unit mean diagonal G,
    # sigma^2 = 5% of the prior variance eta^2 mean(diag G)
    {"kernel": "traffic-synthetic", "eta": TRAFFIC_ETA, "sigma": TRAFFIC_SIGMA, "budget": 400},
    "hoffman2014",
    "SYNTHETIC traffic sensors, WELL-SPECIFIED (superseded by v1): K = 357, T = 400; means drawn from the agents' "
    "prior N(0, 20^2 G), G of unit mean diagonal, sigma^2 = 5% of the prior variance",
)
ENV_SPECS["CorrelatedBestArm-TrafficSynthetic-v1"] = Registration(
    _CORRELATED,
    # hoffman2014 §6.1's recipe on SYNTHETIC speeds: means = held-out profiles (data), G = the historical
    # profiles' covariance (mph^2, not rescaled), sigma^2 = 5% of mean(diag G), eta = 20, prior mean 0
    {"kernel": "traffic-speeds", "means": "traffic-held-out", "eta": TRAFFIC_ETA, "sigma": TRAFFIC_SPEEDS_SIGMA,
     "budget": 400},
    "hoffman2014",
    "SYNTHETIC traffic speeds, hoffman2014 §6.1's recipe: K = 357, T = 400; means = one of 840 held-out speed "
    "profiles per episode; G = covariance of 1680 historical ones, eta = 20, sigma^2 = 5% of mean diag G",
)

ENV_SPECS["ModelSelection-v0"] = Registration(
    _MODEL_SELECTION,
    {"budget": 10},
    "hoffman2014",
    "hoffman2014 §6.2 on scikit-learn's diabetes data: 160 regressors, reward -RMSE (pre-computed table), T = 10",
)

ENV_SPECS["MultiArmedBandit-v0"] = Registration(
    _MULTI_ARMED,
    {"budget": 1000, "distribution": "bernoulli"},  # means: 10 drawn U(0, 1) per episode, or means=[...]
    "auer2002",
    "the classic stochastic K-armed bandit, cumulative pseudo-regret; 10 Bernoulli arms drawn U(0, 1) per episode "
    "(means=[...] fixes them; distribution='gaussian')",
)


JAX_STEMS = {
    _THRESHOLDING: "bandit_gym.jax.envs:ThresholdingBanditJax",
    _BEST_ARM: "bandit_gym.jax.envs:BestArmIdentificationJax",
    _TOP_K: "bandit_gym.jax.envs:TopKIdentificationJax",
    _MULTI_ARMED: "bandit_gym.jax.envs:MultiArmedBanditJax",
    _THRESHOLD: "bandit_gym.jax.envs:ThresholdBanditJax",
}
"""The numpy env stems that have a functional JAX twin (``bandit_gym.jax.envs``), and the twin's stem."""
JAX_NAMESPACE = "jax"
"""The Gymnasium namespace of the JAX ids: ``jax/<id>`` is the JAX twin of ``<id>``, with the same arguments."""
JAX_ENV_IDS: dict[str, str] = {f"{JAX_NAMESPACE}/{env_id}": env_id for env_id, spec in ENV_SPECS.items()
                               if spec.stem in JAX_STEMS}
"""JAX id -> the numpy id it twins (registered by ``register_envs``; making one needs the ``jax`` extra)."""


def register_envs() -> None:
    """Register every id of ``ENV_SPECS`` that is not registered yet, and its JAX twin ``jax/<id>`` where it has
    one (``JAX_ENV_IDS``; registering imports nothing of JAX)."""
    for env_id, spec in ENV_SPECS.items():
        if env_id in gym.registry:
            continue
        gym.register(
            id=env_id,
            entry_point=f"{spec.stem}Env",
            vector_entry_point=f"{spec.stem}VectorEnv",
            kwargs=_presets(spec.stem, spec.kwargs),
        )
    for jax_id, env_id in JAX_ENV_IDS.items():
        if jax_id in gym.registry:
            continue
        spec = ENV_SPECS[env_id]
        stem = JAX_STEMS[spec.stem]
        # Gymnasium registers its own JAX envs (phys2d) without its passive checker, which reads numpy arrays
        gym.register(id=jax_id, entry_point=f"{stem}Env", vector_entry_point=f"{stem}VectorEnv",
                     kwargs=_presets(spec.stem, spec.kwargs), disable_env_checker=True)


#: entry point -> the instance argument of its presets, which the env's other instance argument replaces
_REPLACEABLE = {_THRESHOLDING: "means", _BEST_ARM: "means", _TOP_K: "means", _THRESHOLD: "distributions"}


def _presets(stem: str, kwargs: dict[str, Any]) -> dict[str, Any]:
    """The kwargs registered for an id: its instance marked as a ``Preset``, so that a
    user's ``distributions=`` (or ``survival=``) replaces it instead of clashing with it."""
    key = _REPLACEABLE.get(stem)
    if key is None or key not in kwargs:
        return kwargs
    return {**kwargs, key: Preset(kwargs[key])}


def family_of_env(env_id: str, **env_kwargs: Any) -> Family:
    """The family of a registered env id: from its registration for the package's own ids (nothing is built),
    else from its engine (the env is made with ``env_kwargs``)."""
    if env_id in ENV_SPECS:
        return ENV_SPECS[env_id].family
    from bandit_gym.envs._base import engine_of

    return engine_of(gym.make(env_id, **env_kwargs)).family
