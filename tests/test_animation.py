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


#: the chart's colours as drawn: answer bars (orange at alpha 0.7 over white) and true-mean ticks (green)
ANSWER_RGB, TRUTH_RGB = (255, 166, 86), (44, 160, 44)


def _pixels(frame: np.ndarray, rgb: tuple[int, int, int], tolerance: int = 6) -> int:
    return int((np.abs(frame.astype(int) - np.array(rgb)).max(axis=-1) <= tolerance).sum())


def test_frames_show_the_truth_unless_toggled_off_and_restore_the_setting() -> None:
    env = gym.make("ThresholdingBandit-Tao2019Setup1-v0", budget=30, render_mode="rgb_array")
    shown = record_episode(env, LSA(), seed=0, every=10)
    hidden = record_episode(env, LSA(), seed=0, every=10, show_truth=False)
    assert len(shown) == len(hidden)
    assert all(_pixels(frame, TRUTH_RGB) > 200 for frame in shown)  # ten green ticks on every frame
    assert all(_pixels(frame, TRUTH_RGB) == 0 for frame in hidden)
    assert all(not np.array_equal(a, b) for a, b in zip(shown, hidden, strict=True))
    assert env.unwrapped.show_truth is True  # the env's own setting is back
    env.unwrapped.show_truth = False
    assert _pixels(env.render(), TRUTH_RGB) == 0
    with pytest.raises(TypeError, match="show_truth"):
        env.unwrapped.show_truth = "no"
    with pytest.raises(TypeError, match="show_truth"):
        record_episode(env, LSA(), show_truth=None)  # type: ignore[arg-type]


def test_frames_draw_the_current_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    from bandit_gym.envs import _render

    env = gym.make("ThresholdingBandit-Tao2019Setup1-v0", budget=30, render_mode="rgb_array")
    frames = record_episode(env, LSA(), seed=0, every=10)
    assert _pixels(frames[0], ANSWER_RGB) == 0  # after the reset: no answer yet
    assert _pixels(frames[-1], ANSWER_RGB) > 1000  # the arms answered "above" are orange bars
    calls: list[dict] = []
    original = _render.bar_chart
    monkeypatch.setattr(_render, "bar_chart", lambda *a, **kw: calls.append(kw) or original(*a, **kw))
    env.reset(seed=1)
    action = np.zeros(11, dtype=np.int64)
    action[1:] = [0, 1, 0, 1, 0, 0, 1, 1, 0, 1]
    env.step(action)
    frame = env.render()
    np.testing.assert_array_equal(calls[-1]["answer"], action[1:].astype(bool))  # the submitted answer
    np.testing.assert_allclose(calls[-1]["truth"], env.unwrapped.means)
    assert "misclassified" in _frame_title(env)
    assert _pixels(frame, ANSWER_RGB) > 0  # one pull so far, so no bar is tall yet: the legend's answer patch


def _frame_title(env: gym.Env) -> str:
    from bandit_gym.envs import _render

    seen: list[str] = []
    original = _render.bar_chart
    _render.bar_chart = lambda *a, **kw: seen.append(a[3]) or original(*a, **kw)  # type: ignore[assignment]
    try:
        env.render()
    finally:
        _render.bar_chart = original  # type: ignore[assignment]
    return seen[0]


@pytest.mark.parametrize(("env_id", "kwargs", "agent_name", "words"), [
    ("BestArmIdentification-v0", {"means": (0.75, 0.55, 0.45, 0.35, 0.25), "budget": 40}, "SuccessiveRejects",
     "simple regret"),
    ("TopKIdentification-v0", {"means": (0.9, 0.8, 0.5, 0.4, 0.3, 0.2), "k": 2, "budget": 60}, "Uniform",
     "aggregate regret"),
    ("ThresholdBandit-v0", {"horizon": 40}, "DKWUCB", "best arm at c_t"),
])
def test_every_family_draws_its_answer_and_truth(env_id: str, kwargs: dict, agent_name: str, words: str) -> None:
    from tests.conftest import AGENTS

    env = gym.make(env_id, render_mode="rgb_array", **kwargs)
    frames = record_episode(env, AGENTS[agent_name](), seed=0, every=10**6)
    assert _pixels(frames[-1], ANSWER_RGB) > 300 and _pixels(frames[-1], TRUTH_RGB) > 50
    assert words in _frame_title(env)
    blind = record_episode(env, AGENTS[agent_name](), seed=0, every=10**6, show_truth=False)
    assert _pixels(blind[-1], TRUTH_RGB) == 0 and _pixels(blind[-1], ANSWER_RGB) > 300
