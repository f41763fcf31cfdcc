"""Export the arm-wise policies trained by ``scripts/rl_armwise.py`` (``OUT/policies/PROBLEM-seedS``, SB3 folders
with the optimiser's state) to the package data the ``ArmwisePPO`` agent reads: weights only, one ``.npz`` each.

    python scripts/ship_armwise.py --policies docs/rl-armwise/policies threshold thresholding

Where the recipe chose among candidates (``OUT/PROBLEM_validation.csv`` beside the policies folder), seed s ships
the chosen candidate, and its header records the candidate's training seed and the validation of every
candidate; a chosen candidate with no folder is read from its weights beside them (``PROBLEM-seedS.npz``) or is
the policy the package ships now for that seed (kept, its header brought up to date).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pandas as pd

from bandit_gym.rl import ARMWISE_RECIPES, load
from bandit_gym.rl.armwise import load_weights, save_weights
from bandit_gym.rl.armwise_ppo import SHIPPED_PROBLEMS, SHIPPED_SEEDS, shipped_path


def selection(policies: Path, problem: str) -> dict[int, dict[str, Any]]:
    """Seed -> the chosen candidate's seed and every candidate's validation regret, from
    ``PROBLEM_validation.csv`` beside the policies folder (empty when the recipe did not choose)."""
    path = policies.parent / f"{problem}_validation.csv"
    if not path.is_file():
        return {}
    table = pd.read_csv(path)
    return {int(seed): {"candidate_seed": int(rows.loc[rows.chosen, "candidate_seed"].iloc[0]),
                        "validation_regret": dict(zip(rows.candidate_seed.astype(int).astype(str),
                                                      rows["mean"].astype(float), strict=True))}
            for seed, rows in table.groupby("seed")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("problems", nargs="+", choices=sorted(SHIPPED_PROBLEMS))
    parser.add_argument("--policies", type=Path, default=Path("docs/rl-armwise/policies"))
    parser.add_argument("--out", type=Path, default=Path("bandit_gym/data/armwise"))
    args = parser.parse_args(argv)
    for problem in args.problems:
        recipe = ARMWISE_RECIPES[problem]
        chosen = selection(args.policies, problem)
        for seed in SHIPPED_SEEDS:
            picked = chosen.get(seed, {})
            candidate = picked.get("candidate_seed", seed)
            folder = args.policies / f"{problem}-seed{candidate}"
            if (folder / "model.zip").is_file():
                model = load(folder).model
                policy, steps = model.policy, int(model.num_timesteps)
            else:  # its weights beside the folders, or the candidate shipped now for this seed
                weights = folder.with_suffix(".npz")
                policy, header = load_weights(weights if weights.is_file() else shipped_path(problem, seed))
                if header.get("candidate_seed", header["seed"]) != candidate:
                    raise SystemExit(f"{problem} seed {seed}: candidate {candidate} has no folder or weights under "
                                     f"{args.policies}, and the package ships candidate {header['candidate_seed']}")
                steps = int(header["total_timesteps"])
            path = save_weights(policy, args.out / f"{problem}-seed{seed}.npz", problem=problem, seed=seed,
                                env_id=recipe.env_id, env_kwargs=repr(recipe.env_kwargs), total_timesteps=steps,
                                **picked)
            print(f"wrote {path} ({path.stat().st_size / 1000:.0f} kB), candidate {candidate}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
