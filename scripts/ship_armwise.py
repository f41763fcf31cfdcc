"""Export the arm-wise policies trained by ``scripts/rl_armwise.py`` (``OUT/policies/PROBLEM-seedS``, SB3 folders
with the optimiser's state) to the package data the ``ArmwisePPO`` agent reads: weights only, one ``.npz`` each.

    python scripts/ship_armwise.py --policies docs/rl-armwise/policies threshold thresholding
"""

from __future__ import annotations

import argparse
from pathlib import Path

from bandit_gym.agents.armwise_ppo import SHIPPED_PROBLEMS, SHIPPED_SEEDS
from bandit_gym.armwise import save_weights
from bandit_gym.rl import ARMWISE_RECIPES, load


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("problems", nargs="+", choices=sorted(SHIPPED_PROBLEMS))
    parser.add_argument("--policies", type=Path, default=Path("docs/rl-armwise/policies"))
    parser.add_argument("--out", type=Path, default=Path("bandit_gym/data/armwise"))
    args = parser.parse_args(argv)
    for problem in args.problems:
        recipe = ARMWISE_RECIPES[problem]
        for seed in SHIPPED_SEEDS:
            model = load(args.policies / f"{problem}-seed{seed}").model
            path = save_weights(model.policy, args.out / f"{problem}-seed{seed}.npz", problem=problem, seed=seed,
                                env_id=recipe.env_id, env_kwargs=repr(recipe.env_kwargs),
                                total_timesteps=int(model.num_timesteps))
            print(f"wrote {path} ({path.stat().st_size / 1000:.0f} kB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
