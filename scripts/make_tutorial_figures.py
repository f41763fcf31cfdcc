"""Make the pictures of ``docs/tutorial.md`` in ``docs/tutorial/`` (PNG frames and one GIF), from fixed seeds.

Every picture is an ``env.render()`` frame of an env made with ``render_mode="rgb_array"`` (a bar chart of the
per-arm estimates with 95% Hoeffding intervals, the threshold line on the thresholding bandit, the pull counts
under the arm indices, the true means as green ticks, and the agent's current answer in orange: the arms it
classifies above the threshold, the arm it recommends, or the empirical best arm at c_t), or two such frames one
above the other (side by side they would be shown at 0.7 of their size in the docs' column, their legends too
small to read). Each PNG records the height of its smallest text in pixels (``SMALLEST_TEXT_KEY``), as the
package's figures do. Run from anywhere::

    python scripts/make_tutorial_figures.py            # writes docs/tutorial/*.png and docs/tutorial/lsa.gif
    python scripts/make_tutorial_figures.py --out DIR  # somewhere else

Needs matplotlib and Pillow (``pip install -e ".[plot]"``). Takes a few seconds.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

import gymnasium as gym
import numpy as np
from PIL import Image

import bandit_gym  # noqa: F401  (registers the envs)
from bandit_gym._canvas import SMALLEST_TEXT_KEY, recording_text_sizes
from bandit_gym.agents import APT, DKWUCB, LSA, UGapEb, Uniform
from bandit_gym.animation import record_episode, record_gif

OUT = Path(__file__).resolve().parents[1] / "docs" / "tutorial"

#: the thresholding pictures: tao2019 Setup 1 at a small budget, one episode from this seed
SETUP1 = "ThresholdingBandit-Tao2019Setup1-v0"
BUDGET = 200
SEED = 0
#: the best-arm picture: five Bernoulli arms, UGapEb after half of its budget (also used in docs/tutorial.md)
BEST_ARM_MEANS = (0.75, 0.55, 0.45, 0.35, 0.25)
BEST_ARM_BUDGET = 200
BEST_ARM_SHOWN = 100
UGAPE_A = 2.7  # 16 (n - K) / (4 H_epsilon), H_epsilon = 285.4 for these means: the README's "16 x" tuning
#: the threshold-bandit picture: DKWUCB after this many rounds, then the first rounds with c_t = 2 and c_t = 5
DKW_ROUNDS = 300


#: a frame and the height in pixels of its smallest text (``recording_text_sizes``)
Frame = tuple[np.ndarray, float]


def rendered(render: Callable[[], np.ndarray]) -> Frame:
    """The frame ``render()`` returns (the last one it renders) and its smallest text."""
    with recording_text_sizes() as sizes:
        frame = render()
    return frame, sizes[-1]


def save_png(frames: list[Frame], path: Path) -> Path:
    """Save the frames one above the other, 8 white rows between them (side by side they would be shown at 0.7 of
    their size in the docs' column), as a PNG that records their smallest text (``SMALLEST_TEXT_KEY``)."""
    from PIL.PngImagePlugin import PngInfo

    gap = np.full((8, frames[0][0].shape[1], 3), 255, dtype=np.uint8)
    image = np.concatenate([part for i, (frame, _) in enumerate(frames) for part in ([gap, frame] if i else [frame])])
    info = PngInfo()
    info.add_text(SMALLEST_TEXT_KEY, f"{min(size for _, size in frames):.1f}")
    Image.fromarray(image).save(path, format="PNG", optimize=True, pnginfo=info)
    return path


def final_frame(env_id: str, agent: object, seed: int, **kwargs: object) -> Frame:
    """The frame after a whole episode (the answer step) of ``agent`` from ``seed``."""
    env = gym.make(env_id, render_mode="rgb_array", **kwargs)
    return rendered(lambda: record_episode(env, agent, seed=seed, every=10**9)[-1])


def thresholding_frames(out: Path) -> list[Path]:
    uniform = final_frame(SETUP1, Uniform(), SEED, budget=BUDGET)
    lsa = final_frame(SETUP1, LSA(), SEED, budget=BUDGET)
    apt = final_frame(SETUP1, APT(epsilon=0.05), SEED, budget=BUDGET)
    return [save_png([uniform], out / "uniform.png"), save_png([apt], out / "apt.png"),
            save_png([uniform, lsa], out / "uniform_vs_lsa.png")]


def ugape_frame(out: Path) -> list[Path]:
    env = gym.make("BestArmIdentification-v0", means=BEST_ARM_MEANS, budget=BEST_ARM_BUDGET, render_mode="rgb_array")
    agent = UGapEb(a=UGAPE_A)
    agent.reset(seed=SEED)
    obs, _ = env.reset(seed=SEED)
    for _ in range(BEST_ARM_SHOWN):
        obs, *_ = env.step(agent.act(obs))
    return [save_png([rendered(env.render)], out / "ugape.png")]


def dkwucb_frames(out: Path) -> list[Path]:
    env = gym.make("ThresholdBandit-v0", render_mode="rgb_array")
    agent = DKWUCB()
    agent.reset(seed=SEED)
    obs, _ = env.reset(seed=SEED)
    frames: dict[int, Frame] = {}
    for t in range(env.unwrapped.engine.horizon):
        level = int(obs["threshold"][0])
        if t >= DKW_ROUNDS and level in (2, 5) and level not in frames:
            frames[level] = rendered(env.render)
            if len(frames) == 2:
                break
        obs, *_ = env.step(agent.act(obs))
    return [save_png([frames[2], frames[5]], out / "dkwucb.png")]


def lsa_gif(out: Path) -> list[Path]:
    env = gym.make(SETUP1, budget=BUDGET, render_mode="rgb_array")
    return [record_gif(env, LSA(), out / "lsa.gif", seed=SEED, every=10, fps=4)]


def main(argv: list[str] | None = None) -> list[Path]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT, help=f"output folder (default {OUT})")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    paths = thresholding_frames(args.out) + ugape_frame(args.out) + dkwucb_frames(args.out) + lsa_gif(args.out)
    for path in paths:
        print(f"{path}  {path.stat().st_size / 1024:.0f} kB")
    return paths


if __name__ == "__main__":
    main()
