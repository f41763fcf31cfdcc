"""Agents for (epsilon, m)-best arm identification (gabillon2012)."""

from bandit_gym.agents.best_arm.eb_tci import EBTCI
from bandit_gym.agents.best_arm.fw_sampling import FWSampling
from bandit_gym.agents.best_arm.kl_lucb import KLLUCB
from bandit_gym.agents.best_arm.lil_ucb import LilUCB
from bandit_gym.agents.best_arm.lucb import LUCB
from bandit_gym.agents.best_arm.sar import SAR
from bandit_gym.agents.best_arm.successive_rejects import SuccessiveRejects
from bandit_gym.agents.best_arm.track_and_stop import TrackAndStop
from bandit_gym.agents.best_arm.tt_ucb import TTUCB
from bandit_gym.agents.best_arm.ttts import TTTS
from bandit_gym.agents.best_arm.ucbe import UCBEBestArm
from bandit_gym.agents.best_arm.ugapeb import UGapEb
from bandit_gym.agents.best_arm.ugapec import UGapEc

__all__ = [
    "EBTCI", "KLLUCB", "LUCB", "SAR", "TTTS", "TTUCB", "FWSampling", "LilUCB", "SuccessiveRejects", "TrackAndStop",
    "UCBEBestArm", "UGapEb", "UGapEc",
]
