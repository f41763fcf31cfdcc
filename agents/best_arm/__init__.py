"""Agents for (epsilon, m)-best arm identification (gabillon2012).

The agents are imported from their own modules, or from ``bandit_gym.agents`` (whose ``AGENTS`` lists them all).
"""
