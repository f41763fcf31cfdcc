"""Agents of epsilon-top-K identification (chen2017)."""

from bandit_gym.agents.top_k.adaptive_top_k import AdaptiveTopK

__all__ = ["AdaptiveTopK"]
