"""Agents for the classic stochastic K-armed bandit (regret minimisation, ``MultiArmedBandit-v0``).

The agents are imported from their own modules, or from ``bandit_gym.agents`` (whose ``AGENTS`` lists them all).
"""
