"""Bayesian agents of best-arm identification with correlated arms (hoffman2014): BayesGap and the Bayesian
baselines of its experiments, all on one Gaussian posterior over the arms (``._posterior``)."""

from bandit_gym.agents.bayesian.bayes_ucb import BayesUCB
from bandit_gym.agents.bayesian.bayesgap import BayesGap
from bandit_gym.agents.bayesian.expected_improvement import EI
from bandit_gym.agents.bayesian.gp_ucb import GPUCB
from bandit_gym.agents.bayesian.probability_of_improvement import PI
from bandit_gym.agents.bayesian.thompson_sampling import ThompsonSampling

__all__ = ["EI", "GPUCB", "PI", "BayesGap", "BayesUCB", "ThompsonSampling"]
