"""PPO training steps per second of the arm-wise policy (``bandit_gym.rl.armwise.ArmwisePolicy``) with the shared
per-arm embedding computed once for the policy and value heads (``ArmwiseNetwork.forward``, what SB3 calls in
every rollout step and minibatch update) against computing it once per head, side by side in one run.

The workload is the ``top_k`` recipe of ``bandit_gym.rl.ARMWISE_RECIPES`` (n = 30 arms, 64 copies, PPO with
64-step rollouts, minibatches of 1024, 4 epochs) on one torch thread, the way each candidate trains; each variant
trains for ``--rollouts`` rollouts from the same seed, alternating A B A B, and the median rate is kept.

    python -m benchmarks.bench_armwise [--rollouts 6] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import torch
from stable_baselines3 import PPO

from bandit_gym.rl import ARMWISE_RECIPES, make_vec_env, quiet_logger
from bandit_gym.rl.armwise import ArmwiseNetwork, ArmwisePolicy


class _EmbeddedPerHead(ArmwiseNetwork):
    """The network before the shared embedding: each head embeds the arms itself."""

    def forward(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.forward_actor(features), self.forward_critic(features)


class _PolicyEmbeddedPerHead(ArmwisePolicy):
    def _build_mlp_extractor(self) -> None:
        extractor: Any = self.features_extractor
        network: Any = _EmbeddedPerHead(extractor.num_features, int(self.action_space.n),  # type: ignore[attr-defined]
                                        self.hidden)
        self.mlp_extractor = network


def steps_per_second(policy: type[ArmwisePolicy], rollouts: int) -> float:
    """PPO steps per second of ``rollouts`` rollouts and their updates with ``policy`` on the top K recipe."""
    recipe = ARMWISE_RECIPES["top_k"]
    venv = make_vec_env(recipe.env_id, recipe.num_envs, discrete=True, shaped=True,
                        normalize={"norm_obs": False, "norm_reward": True, "gamma": 1.0}, **recipe.env_kwargs)
    venv.seed(0)
    model = PPO(policy, venv, seed=0, device="cpu", **recipe.algo_kwargs)
    quiet_logger(model)
    steps = rollouts * recipe.num_envs * recipe.algo_kwargs["n_steps"]
    start = time.perf_counter()
    model.learn(total_timesteps=steps)
    return model.num_timesteps / (time.perf_counter() - start)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rollouts", type=int, default=6, help="rollouts (and their updates) per measurement")
    parser.add_argument("--repeats", type=int, default=3, help="measurements of each variant, alternating")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    variants = {"embedding once (shipped)": ArmwisePolicy, "embedding per head": _PolicyEmbeddedPerHead}
    rates: dict[str, list[float]] = {name: [] for name in variants}
    steps_per_second(ArmwisePolicy, 1)  # warm up
    for _ in range(args.repeats):
        for name, policy in variants.items():
            rates[name].append(steps_per_second(policy, args.rollouts))
    once, per_head = (statistics.median(rates[name]) for name in variants)
    print(f"{'variant':<26} {'steps/s (median)':>16}   every measurement")
    for name, values in rates.items():
        print(f"{name:<26} {statistics.median(values):>16,.0f}   {', '.join(f'{v:,.0f}' for v in values)}")
    print(f"ratio, once / per head: {once / per_head:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
