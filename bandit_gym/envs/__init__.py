"""The environments: one batched engine per problem, each as a single env and a native vector env."""

from bandit_gym.envs.multi_armed import MultiArmedBanditEnv, MultiArmedBanditVectorEnv
from bandit_gym.envs.threshold import ThresholdBanditEnv, ThresholdBanditVectorEnv
from bandit_gym.envs.thresholding import ThresholdingBanditEnv, ThresholdingBanditVectorEnv

__all__ = [
    "MultiArmedBanditEnv",
    "MultiArmedBanditVectorEnv",
    "ThresholdBanditEnv",
    "ThresholdBanditVectorEnv",
    "ThresholdingBanditEnv",
    "ThresholdingBanditVectorEnv",
]
