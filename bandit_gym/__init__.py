"""bandit_gym: Gymnasium environments and agents for pure-exploration and threshold bandits.

Importing the package registers every env id with Gymnasium; ``gym.make("bandit_gym:ThresholdBandit-v0")``
imports it for you.
"""

from bandit_gym._version import __version__
from bandit_gym.registration import ENV_SPECS, register_envs

register_envs()

__all__ = ["ENV_SPECS", "__version__", "register_envs"]
