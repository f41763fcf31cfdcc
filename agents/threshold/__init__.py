"""Agents for the threshold bandit (abernethy2016)."""

from bandit_gym.agents.threshold.ucb import UCB

__all__ = ["UCB"]
