"""Agents for the thresholding bandit (tao2019): LSA and its baselines APT, UCBE and Opt-KG (Uniform is shared).

The agents are imported from their own modules, or from ``bandit_gym.agents`` (whose ``AGENTS`` lists them all).
"""
