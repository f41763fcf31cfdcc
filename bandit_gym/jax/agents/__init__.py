"""The JAX agents: pure functions of one copy (``bandit_gym.jax.agents._base`` states the protocol), each equal in
distribution to the numpy agent of the same name."""

from __future__ import annotations

from bandit_gym.jax.agents._base import ArmOrder, JaxAgent, act
from bandit_gym.jax.agents.adaptive_top_k import AdaptiveTopK
from bandit_gym.jax.agents.apt import APT
from bandit_gym.jax.agents.clucb_pac import CLUCBPAC
from bandit_gym.jax.agents.eb_tci import EBTCI
from bandit_gym.jax.agents.kl_ucb import KLUCB
from bandit_gym.jax.agents.lsa import LSA
from bandit_gym.jax.agents.optkg import OptKG
from bandit_gym.jax.agents.sar import SAR
from bandit_gym.jax.agents.successive_rejects import SuccessiveRejects
from bandit_gym.jax.agents.thompson import Thompson
from bandit_gym.jax.agents.track_and_stop import TrackAndStop
from bandit_gym.jax.agents.ucb1 import UCB1
from bandit_gym.jax.agents.ucb_e import UCBEBestArm
from bandit_gym.jax.agents.ucbe import UCBE
from bandit_gym.jax.agents.uniform import Uniform

JAX_AGENTS: dict[str, type[JaxAgent]] = {
    cls.__name__: cls
    for cls in (AdaptiveTopK, APT, CLUCBPAC, EBTCI, KLUCB, LSA, OptKG, SAR, SuccessiveRejects, Thompson, TrackAndStop,
                UCB1, UCBE, UCBEBestArm, Uniform)
}
"""Name -> JAX agent class (the name of the numpy agent it equals in distribution)."""

__all__ = ["APT", "CLUCBPAC", "EBTCI", "JAX_AGENTS", "KLUCB", "LSA", "SAR", "UCB1", "UCBE", "AdaptiveTopK", "ArmOrder",
           "JaxAgent", "OptKG", "SuccessiveRejects", "Thompson", "TrackAndStop", "UCBEBestArm", "Uniform", "act"]
