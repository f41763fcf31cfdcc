"""Agents for the threshold bandit (abernethy2016).

The agents are imported from their own modules, or from ``bandit_gym.agents`` (whose ``AGENTS`` lists them all).
"""
