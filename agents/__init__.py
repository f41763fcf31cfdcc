"""Agents: one algorithm per file, grouped by problem family, importable as ``bandit_gym.agents``.

``AGENTS`` maps each built-in agent's name to its class. Experiment specs and the CLI also accept a name given to
``register``, a name from an installed package's ``bandit_gym.agents`` entry point, and an import path
``package.module:Class`` (see ``agent_class``).
"""

from bandit_gym.agents.armwise_ppo import ArmwisePPO
from bandit_gym.agents.base import Agent
from bandit_gym.agents.bayesian import EI, GPUCB, PI, BayesGap, BayesUCB, ThompsonSampling
from bandit_gym.agents.best_arm import LUCB, SAR, SuccessiveRejects, UCBEBestArm, UGapEb, UGapEc
from bandit_gym.agents.multi_armed import KLUCB, UCB1, EpsilonGreedy, Thompson
from bandit_gym.agents.registry import agent_class, register
from bandit_gym.agents.sb3_agent import SB3Agent
from bandit_gym.agents.threshold_bandit import DKWUCB, KMUCB, OPTIM, UCB, PerThresholdUCB
from bandit_gym.agents.thresholding import APT, LSA, UCBE, OptKG
from bandit_gym.agents.top_k import CLUCBPAC, AdaptiveTopK, OptMAI
from bandit_gym.agents.uniform import Uniform

AGENTS: dict[str, type[Agent]] = {
    cls.__name__: cls
    for cls in (Uniform, LSA, APT, UCBE, OptKG, UCB, DKWUCB, OPTIM, KMUCB, PerThresholdUCB, UGapEb, UGapEc,
                UCBEBestArm, SuccessiveRejects, SAR, LUCB, AdaptiveTopK, CLUCBPAC, OptMAI, BayesGap, ThompsonSampling,
                BayesUCB, GPUCB, EI, PI, EpsilonGreedy, UCB1, KLUCB, Thompson, SB3Agent, ArmwisePPO)
}

__all__ = [
    "AGENTS",
    "APT",
    "CLUCBPAC",
    "DKWUCB",
    "EI",
    "GPUCB",
    "KLUCB",
    "KMUCB",
    "LSA",
    "LUCB",
    "OPTIM",
    "PI",
    "SAR",
    "UCB",
    "UCB1",
    "UCBE",
    "AdaptiveTopK",
    "Agent",
    "ArmwisePPO",
    "BayesGap",
    "BayesUCB",
    "EpsilonGreedy",
    "OptKG",
    "OptMAI",
    "PerThresholdUCB",
    "SB3Agent",
    "SuccessiveRejects",
    "Thompson",
    "ThompsonSampling",
    "UCBEBestArm",
    "UGapEb",
    "UGapEc",
    "Uniform",
    "agent_class",
    "register",
]
