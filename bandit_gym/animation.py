r"""Animations for teaching: play an episode, keep its ``rgb_array`` frames, and save them as a GIF.

```python
env = gym.make("ThresholdingBandit-Tao2019Setup1-v0", budget=200, render_mode="rgb_array")
record_gif(env, LSA(), "lsa.gif", seed=0, every=10)                     # the true means drawn
record_gif(env, LSA(), "lsa-blind.gif", seed=0, every=10, show_truth=False)  # only what the agent sees
```

Each frame is the env's ``rgb_array`` rendering: per arm the empirical mean (a bar) with its 95% interval and
its pull count, the threshold, the agent's current answer (the bars' colour: on the thresholding bandit the arms
it classifies above the threshold, on best-arm and top-K envs the arms it recommends, on the threshold bandit
the empirical best arm at the current \(c_t\)) and, with ``show_truth`` (the default), the true means as green ticks
with the answer's loss in the title. ``env.unwrapped.show_truth = False`` hides them in ``env.render()`` too.

The GIF is written by Pillow (``pip install ".[plot]"``; matplotlib draws the frames and needs it too). For
a video file, Gymnasium's own ``gymnasium.wrappers.RecordVideo`` works on the same envs (it needs moviepy).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from bandit_gym import _validation as check


def save_gif(frames: Iterable[np.ndarray], path: str | Path, fps: float = 4.0, loop: int = 0) -> Path:
    """Save ``(H, W, 3)`` uint8 frames (``env.render()`` of an ``rgb_array`` env) as an animated GIF.

    ``fps`` frames per second; ``loop=0`` repeats forever (the GIF convention), ``loop=n`` plays n + 1 times.
    Returns the path written."""
    from PIL import Image

    fps = check.real("fps", fps, low=0.0, low_open=True)
    loop = check.integer("loop", loop, minimum=0)
    images = []
    for index, frame in enumerate(frames):
        array = np.asarray(frame)
        if array.ndim != 3 or array.shape[2] not in (3, 4) or array.dtype != np.uint8:
            raise ValueError(f"frames[{index}] must be an (H, W, 3) or (H, W, 4) uint8 image (an rgb_array render), "
                             f"got shape {array.shape} and dtype {array.dtype}")
        images.append(Image.fromarray(array))
    if not images:
        raise ValueError("frames is empty: nothing to save")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    images[0].save(path, format="GIF", save_all=True, append_images=images[1:], duration=round(1000 / fps),
                   loop=loop)
    return path


def record_episode(
    env: gym.Env, agent: Any, seed: int | None = None, every: int = 1, show_truth: bool = True
) -> list[np.ndarray]:
    """Play one episode of ``env`` (made with ``render_mode="rgb_array"``) with ``agent`` (an agent of
    ``bandit_gym.agents``, or anything with ``act(obs)``; reset with ``seed`` when it has ``reset``) and return
    the frame after the reset, after every ``every``-th step, and the last one. ``show_truth`` draws the true
    means on the frames (True, for teaching) or hides them (False); the env's own setting is restored after."""
    if getattr(env, "render_mode", None) != "rgb_array":
        raise ValueError(f"env must be made with render_mode='rgb_array' to record frames, got "
                         f"render_mode={getattr(env, 'render_mode', None)!r}")
    every = check.integer("every", every, minimum=1)
    if not isinstance(show_truth, (bool, np.bool_)):
        raise TypeError(f"show_truth must be True or False, got {show_truth!r}")
    base = env.unwrapped
    if not hasattr(type(base), "show_truth"):  # not a bandit_gym env: its frames are its own
        if not show_truth:
            raise ValueError(f"show_truth=False needs a bandit_gym env; {type(base).__name__} draws its own frames")
        return _play(env, agent, seed, every)
    before = base.show_truth  # type: ignore[attr-defined]
    base.show_truth = bool(show_truth)  # type: ignore[attr-defined]
    try:
        return _play(env, agent, seed, every)
    finally:
        base.show_truth = before  # type: ignore[attr-defined]


def _play(env: gym.Env, agent: Any, seed: int | None, every: int) -> list[np.ndarray]:
    if hasattr(agent, "reset"):
        agent.reset(seed=seed)
    obs, _ = env.reset(seed=seed)
    frames = [np.asarray(env.render())]
    step, done = 0, False
    while not done:
        obs, _, terminated, truncated, _ = env.step(agent.act(obs))
        step += 1
        done = terminated or truncated
        if step % every == 0 or done:
            frames.append(np.asarray(env.render()))
    return frames


def record_gif(
    env: gym.Env, agent: Any, path: str | Path, seed: int | None = None, every: int = 1, fps: float = 4.0,
    show_truth: bool = True,
) -> Path:
    """Play one episode (see ``record_episode``, which draws the true means unless ``show_truth=False``) and
    save its frames as a GIF (see ``save_gif``)."""
    return save_gif(record_episode(env, agent, seed=seed, every=every, show_truth=show_truth), path, fps=fps)
