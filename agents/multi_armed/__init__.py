"""Agents for the classic stochastic K-armed bandit (regret minimisation, ``MultiArmedBandit-v0``)."""

from bandit_gym.agents.multi_armed.epsilon_greedy import EpsilonGreedy
from bandit_gym.agents.multi_armed.kl_ucb import KLUCB
from bandit_gym.agents.multi_armed.thompson import Thompson
from bandit_gym.agents.multi_armed.ucb1 import UCB1

__all__ = ["KLUCB", "UCB1", "EpsilonGreedy", "Thompson"]
