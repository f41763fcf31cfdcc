"""The GIF helper: frames of an rgb_array episode saved as an animation."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from PIL import Image

from bandit_gym.agents import LSA
from bandit_gym.animation import record_episode, record_gif, save_gif


def test_record_gif_keeps_the_first_every_kth_and_last_frame(tmp_path: Path) -> None:
    env = gym.make("ThresholdingBandit-Tao2019Setup1-v0", budget=25, render_mode="rgb_array")
    frames = record_episode(env, LSA(), seed=0, every=10)
    assert len(frames) == 1 + 2 + 1  # after reset, after steps 10 and 20, the answer step (26)
    assert all(frame.dtype == np.uint8 and frame.ndim == 3 for frame in frames)
    path = record_gif(env, LSA(), tmp_path / "sub" / "lsa.gif", seed=0, every=10, fps=5)
    with Image.open(path) as image:
        assert image.format == "GIF" and image.n_frames >= 3 and image.info["duration"] == 200
        assert image.size == frames[0].shape[1::-1]


def test_bad_input_names_the_argument(tmp_path: Path) -> None:
    frame = np.zeros((4, 5, 3), dtype=np.uint8)
    with pytest.raises(ValueError, match="fps"):
        save_gif([frame], tmp_path / "a.gif", fps=0)
    with pytest.raises(ValueError, match=r"frames\[1\]"):
        save_gif([frame, frame.astype(float)], tmp_path / "a.gif")
    with pytest.raises(ValueError, match="empty"):
        save_gif([], tmp_path / "a.gif")
    with pytest.raises(ValueError, match="render_mode='rgb_array'"):
        record_episode(gym.make("ThresholdBandit-v0"), LSA())
    with pytest.raises(ValueError, match="every"):
        record_episode(gym.make("ThresholdBandit-v0", render_mode="rgb_array"), LSA(), every=0)
