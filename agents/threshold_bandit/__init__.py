"""Agents for the threshold bandit (abernethy2016)."""

from bandit_gym.agents.threshold_bandit.dkwucb import DKWUCB
from bandit_gym.agents.threshold_bandit.kmucb import KMUCB
from bandit_gym.agents.threshold_bandit.optim import OPTIM
from bandit_gym.agents.threshold_bandit.per_threshold_ucb import PerThresholdUCB
from bandit_gym.agents.threshold_bandit.ucb import UCB

__all__ = ["DKWUCB", "KMUCB", "OPTIM", "UCB", "PerThresholdUCB"]
