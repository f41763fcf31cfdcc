"""The environments: one batched engine per problem, each as a single env and a native vector env."""

from bandit_gym.envs.threshold import ThresholdBanditEnv, ThresholdBanditVectorEnv
from bandit_gym.envs.thresholding import ThresholdingBanditEnv, ThresholdingBanditVectorEnv

__all__ = [
    "ThresholdBanditEnv",
    "ThresholdBanditVectorEnv",
    "ThresholdingBanditEnv",
    "ThresholdingBanditVectorEnv",
]
