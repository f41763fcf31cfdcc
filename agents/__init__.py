"""Agents: one algorithm per file, grouped by problem family, importable as ``bandit_gym.agents``.

``AGENTS`` maps each agent's name to its class; tests, the CLI and experiment specs look agents up there.
"""

from bandit_gym.agents.base import Agent
from bandit_gym.agents.bayesian import EI, GPUCB, PI, BayesGap, BayesUCB, ThompsonSampling
from bandit_gym.agents.best_arm import LUCB, SAR, SuccessiveRejects, UCBEBestArm, UGapEb, UGapEc
from bandit_gym.agents.sb3_agent import SB3Agent
from bandit_gym.agents.threshold_bandit import DKWUCB, KMUCB, OPTIM, UCB, PerThresholdUCB
from bandit_gym.agents.thresholding import APT, LSA, UCBE, OptKG
from bandit_gym.agents.top_k import CLUCBPAC, AdaptiveTopK, OptMAI
from bandit_gym.agents.uniform import Uniform

AGENTS: dict[str, type[Agent]] = {
    cls.__name__: cls
    for cls in (Uniform, LSA, APT, UCBE, OptKG, UCB, DKWUCB, OPTIM, KMUCB, PerThresholdUCB, UGapEb, UGapEc,
                UCBEBestArm, SuccessiveRejects, SAR, LUCB, AdaptiveTopK, CLUCBPAC, OptMAI, BayesGap, ThompsonSampling,
                BayesUCB, GPUCB, EI, PI, SB3Agent)
}

__all__ = [
    "AGENTS",
    "APT",
    "CLUCBPAC",
    "DKWUCB",
    "EI",
    "GPUCB",
    "KMUCB",
    "LSA",
    "LUCB",
    "OPTIM",
    "PI",
    "SAR",
    "UCB",
    "UCBE",
    "AdaptiveTopK",
    "Agent",
    "BayesGap",
    "BayesUCB",
    "OptKG",
    "OptMAI",
    "PerThresholdUCB",
    "SB3Agent",
    "SuccessiveRejects",
    "ThompsonSampling",
    "UCBEBestArm",
    "UGapEb",
    "UGapEc",
    "Uniform",
]
