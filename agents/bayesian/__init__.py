"""Bayesian agents of best-arm identification with correlated arms (hoffman2014): BayesGap and the Bayesian
baselines of its experiments, all on one Gaussian posterior over the arms (``._posterior``).

The agents are imported from their own modules, or from ``bandit_gym.agents`` (whose ``AGENTS`` lists them all).
"""
