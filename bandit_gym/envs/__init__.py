"""The environments: one batched engine per problem, each as a single env and a native vector env.

Every env is registered with Gymnasium (``gym.make(id)``, and ``gym.make_vec(id,
vectorization_mode="vector_entry_point")`` for the native vector env); the classes are here for subclassing and
``isinstance`` checks."""

from bandit_gym.envs.best_arm import BestArmIdentificationEnv, BestArmIdentificationVectorEnv
from bandit_gym.envs.correlated import CorrelatedBestArmEnv, CorrelatedBestArmVectorEnv
from bandit_gym.envs.model_selection import ModelSelectionEnv, ModelSelectionVectorEnv
from bandit_gym.envs.multi_armed import MultiArmedBanditEnv, MultiArmedBanditVectorEnv
from bandit_gym.envs.threshold import ThresholdBanditEnv, ThresholdBanditVectorEnv
from bandit_gym.envs.thresholding import ThresholdingBanditEnv, ThresholdingBanditVectorEnv
from bandit_gym.envs.top_k import TopKIdentificationEnv, TopKIdentificationVectorEnv

__all__ = [
    "BestArmIdentificationEnv",
    "BestArmIdentificationVectorEnv",
    "CorrelatedBestArmEnv",
    "CorrelatedBestArmVectorEnv",
    "ModelSelectionEnv",
    "ModelSelectionVectorEnv",
    "MultiArmedBanditEnv",
    "MultiArmedBanditVectorEnv",
    "ThresholdBanditEnv",
    "ThresholdBanditVectorEnv",
    "ThresholdingBanditEnv",
    "ThresholdingBanditVectorEnv",
    "TopKIdentificationEnv",
    "TopKIdentificationVectorEnv",
]
