"""Wrappers, importable as ``bandit_gym.wrappers``: one concern each, each with a vector twin."""

from bandit_gym.wrappers.anytime import RecordAnytimeRegret, RecordAnytimeRegretVector
from bandit_gym.wrappers.empirical_answer import EmpiricalAnswer, EmpiricalAnswerVector
from bandit_gym.wrappers.record import RecordEpisodeRegret, RecordEpisodeRegretVector
from bandit_gym.wrappers.shaping import ShapedLoss, ShapedLossVector

__all__ = [
    "EmpiricalAnswer",
    "EmpiricalAnswerVector",
    "RecordAnytimeRegret",
    "RecordAnytimeRegretVector",
    "RecordEpisodeRegret",
    "RecordEpisodeRegretVector",
    "ShapedLoss",
    "ShapedLossVector",
]
