"""Agents of epsilon-top-K identification (chen2017)."""

from bandit_gym.agents.top_k.adaptive_top_k import AdaptiveTopK
from bandit_gym.agents.top_k.clucb_pac import CLUCBPAC
from bandit_gym.agents.top_k.opt_mai import OptMAI

__all__ = ["CLUCBPAC", "AdaptiveTopK", "OptMAI"]
