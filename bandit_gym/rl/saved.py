"""What a saved policy's folder says without stable-baselines3: the SB3 classes a model may be loaded with, the
metadata file of ``TrainedPolicy.save`` and what it names (the SB3 class, the budget trained on). Read by the
training, the file readers and ``SB3Agent`` alike, so that none of them imports another for it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from bandit_gym import _validation as check

ALGORITHMS = ("PPO", "DQN", "A2C")
"""SB3 classes a saved model may be loaded with."""

METADATA = "metadata.json"
"""The file of ``TrainedPolicy.save`` that names the SB3 class and the budget the policy was trained on."""


def trained_budget(observation_space: Any) -> int | None:
    """The budget (or horizon) a policy was trained on: the upper bound of ``budget_left`` in its observation
    space (None if the space has no such entry or leaves it unbounded)."""
    box = getattr(observation_space, "spaces", {}).get("budget_left")
    high = None if box is None else float(np.max(box.high))
    return None if high is None or not np.isfinite(high) else round(high)


def saved_algo(folder: str | Path, algo: str | None = None) -> str:
    """The SB3 class of the policy saved in ``folder``: ``algo`` if given (it must agree with the folder's
    ``metadata.json``), else the metadata's, else ``"PPO"`` (a folder saved before the metadata existed)."""
    path = Path(folder) / METADATA
    saved = json.loads(path.read_text()).get("algo") if path.is_file() else None
    if algo is not None and saved is not None and algo != saved:
        raise ValueError(f"algo={algo!r}, but the policy in {folder} is a {saved} ({path}); pass algo={saved!r} or "
                         "leave it out")
    return check.choice("algo", algo or saved or "PPO", ALGORITHMS)
