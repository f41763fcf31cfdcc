"""The functional JAX envs (``FuncEnv``) of the families and their Gymnasium shells.

``ThresholdingFunctional``, ``BestArmFunctional``, ``TopKFunctional`` (and the online families in their own
modules) hold the pure functions; ``*JaxEnv`` and ``*JaxVectorEnv`` are what ``gym.make("jax/<id>")`` and
``gym.make_vec("jax/<id>", num_envs=N, vectorization_mode="vector_entry_point")`` build.
"""

from __future__ import annotations

from bandit_gym.jax.envs._base import ArmState, BanditFunctional
from bandit_gym.jax.envs._shells import BanditJaxEnv, BanditJaxVectorEnv
from bandit_gym.jax.envs.multi_armed import (
    MultiArmedBanditJaxEnv,
    MultiArmedBanditJaxVectorEnv,
    MultiArmedFunctional,
    MultiArmedParams,
)
from bandit_gym.jax.envs.pure_exploration import (
    BestArmFunctional,
    SetParams,
    ThresholdingFunctional,
    ThresholdingParams,
    TopKFunctional,
)
from bandit_gym.jax.envs.threshold import (
    ThresholdBanditJaxEnv,
    ThresholdBanditJaxVectorEnv,
    ThresholdFunctional,
    ThresholdParams,
    ThresholdState,
)

__all__ = [
    "ArmState",
    "BanditFunctional",
    "BanditJaxEnv",
    "BanditJaxVectorEnv",
    "BestArmFunctional",
    "BestArmIdentificationJaxEnv",
    "BestArmIdentificationJaxVectorEnv",
    "MultiArmedBanditJaxEnv",
    "MultiArmedBanditJaxVectorEnv",
    "MultiArmedFunctional",
    "MultiArmedParams",
    "SetParams",
    "ThresholdBanditJaxEnv",
    "ThresholdBanditJaxVectorEnv",
    "ThresholdFunctional",
    "ThresholdParams",
    "ThresholdState",
    "ThresholdingBanditJaxEnv",
    "ThresholdingBanditJaxVectorEnv",
    "ThresholdingFunctional",
    "ThresholdingParams",
    "TopKFunctional",
    "TopKIdentificationJaxEnv",
    "TopKIdentificationJaxVectorEnv",
]


class ThresholdingBanditJaxEnv(BanditJaxEnv):
    """The thresholding bandit (tao2019), one copy, JAX arrays; the arguments of ``ThresholdingBanditEnv``."""

    functional = ThresholdingFunctional


class ThresholdingBanditJaxVectorEnv(BanditJaxVectorEnv):
    """The thresholding bandit (tao2019), ``num_envs`` copies stepped by one compiled function."""

    functional = ThresholdingFunctional


class BestArmIdentificationJaxEnv(BanditJaxEnv):
    r"""\((\epsilon, m)\)-best arm identification (gabillon2012), one copy; the arguments of
    ``BestArmIdentificationEnv``."""

    functional = BestArmFunctional


class BestArmIdentificationJaxVectorEnv(BanditJaxVectorEnv):
    r"""\((\epsilon, m)\)-best arm identification (gabillon2012), ``num_envs`` copies."""

    functional = BestArmFunctional


class TopKIdentificationJaxEnv(BanditJaxEnv):
    r"""\(\epsilon\)-top-\(K\) identification (chen2017), one copy; the arguments of ``TopKIdentificationEnv``."""

    functional = TopKFunctional


class TopKIdentificationJaxVectorEnv(BanditJaxVectorEnv):
    r"""\(\epsilon\)-top-\(K\) identification (chen2017), ``num_envs`` copies."""

    functional = TopKFunctional
