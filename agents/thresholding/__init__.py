"""Agents for the thresholding bandit (tao2019): LSA and its baselines APT, UCBE and Opt-KG (Uniform is shared)."""

from bandit_gym.agents.thresholding.apt import APT
from bandit_gym.agents.thresholding.lsa import LSA
from bandit_gym.agents.thresholding.optkg import OptKG
from bandit_gym.agents.thresholding.ucbe import UCBE

__all__ = ["APT", "LSA", "UCBE", "OptKG"]
