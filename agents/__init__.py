"""Agents: one algorithm per file, grouped by problem family, importable as ``bandit_gym.agents``.

``AGENTS`` maps each algorithm's name to its class: every agent class imported below, in the order of the
imports (grouped by family), so that a new algorithm is one import line; ``__all__`` follows. The learned agents
(``SB3Agent``, ``ArmwisePPO``) belong to the RL study, ``bandit_gym.rl``, and register through the package's
entry point; ``registry.shipped_agents()`` lists them with ``AGENTS``. Experiment specs
and the CLI also accept a name given to ``register``, a name from an installed package's ``bandit_gym.agents``
entry point, and an import path ``package.module:Class`` (see ``agent_class``).
"""

from bandit_gym.agents.base import Agent
from bandit_gym.agents.bayesian.bayes_ucb import BayesUCB
from bandit_gym.agents.bayesian.bayesgap import BayesGap
from bandit_gym.agents.bayesian.expected_improvement import EI
from bandit_gym.agents.bayesian.gp_ucb import GPUCB
from bandit_gym.agents.bayesian.probability_of_improvement import PI
from bandit_gym.agents.bayesian.thompson_sampling import ThompsonSampling
from bandit_gym.agents.best_arm.eb_tc_epsilon import EBTCEpsilon
from bandit_gym.agents.best_arm.eb_tci import EBTCI
from bandit_gym.agents.best_arm.eb_tci_unknown_variances import EBTCIUnknownVariances
from bandit_gym.agents.best_arm.fw_sampling import FWSampling
from bandit_gym.agents.best_arm.kl_lucb import KLLUCB
from bandit_gym.agents.best_arm.lil_ucb import LilUCB
from bandit_gym.agents.best_arm.lucb import LUCB
from bandit_gym.agents.best_arm.sar import SAR
from bandit_gym.agents.best_arm.sequential_halving import SequentialHalving
from bandit_gym.agents.best_arm.successive_rejects import SuccessiveRejects
from bandit_gym.agents.best_arm.track_and_stop import TrackAndStop
from bandit_gym.agents.best_arm.ts_kkt import TSKKT
from bandit_gym.agents.best_arm.tt_ucb import TTUCB
from bandit_gym.agents.best_arm.ttts import TTTS
from bandit_gym.agents.best_arm.ucbe import UCBEBestArm
from bandit_gym.agents.best_arm.ugapeb import UGapEb
from bandit_gym.agents.best_arm.ugapec import UGapEc
from bandit_gym.agents.multi_armed.epsilon_greedy import EpsilonGreedy
from bandit_gym.agents.multi_armed.kl_ucb import KLUCB
from bandit_gym.agents.multi_armed.thompson import Thompson
from bandit_gym.agents.multi_armed.ucb1 import UCB1
from bandit_gym.agents.registry import agent_class, register
from bandit_gym.agents.threshold_bandit.dkwucb import DKWUCB
from bandit_gym.agents.threshold_bandit.kmucb import KMUCB
from bandit_gym.agents.threshold_bandit.optim import OPTIM
from bandit_gym.agents.threshold_bandit.per_threshold_ucb import PerThresholdUCB
from bandit_gym.agents.threshold_bandit.ucb import UCB
from bandit_gym.agents.thresholding.apt import APT
from bandit_gym.agents.thresholding.apt_glr import ThresholdingAPT
from bandit_gym.agents.thresholding.lsa import LSA
from bandit_gym.agents.thresholding.optkg import OptKG
from bandit_gym.agents.thresholding.racing import ThresholdingRacing
from bandit_gym.agents.thresholding.track_and_stop import ThresholdingTaS
from bandit_gym.agents.thresholding.ucbe import UCBE
from bandit_gym.agents.thresholding.uniform_glr import ThresholdingUniform
from bandit_gym.agents.top_k.adaptive_top_k import AdaptiveTopK
from bandit_gym.agents.top_k.clucb_pac import CLUCBPAC
from bandit_gym.agents.top_k.opt_mai import OptMAI
from bandit_gym.agents.uniform import Uniform

AGENTS: dict[str, type[Agent]] = {
    value.__name__: value for value in list(globals().values())
    if isinstance(value, type) and issubclass(value, Agent) and value is not Agent
}
"""Every built-in agent, by name (the class's name): what experiment specs, the CLI and the tests look up."""

__all__ = ["AGENTS", "Agent", "agent_class", "register", *AGENTS]
