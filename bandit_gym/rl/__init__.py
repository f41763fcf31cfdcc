r"""stable-baselines3 on bandit_gym: the native vector envs as SB3 ``VecEnv``s, and a training recipe per family.

```python
from bandit_gym.rl import train
policy = train("ThresholdBandit-v0", total_timesteps=50_000, seed=0)   # PPO, the threshold-bandit recipe
policy.save("runs/ppo-threshold")                     # model.zip + vecnormalize.npz (and .pkl)
```

and the trained policy plays like any agent: ``SB3Agent("runs/ppo-threshold")`` (also in experiment specs).
``BanditMetricsCallback`` logs the episodes' regret, error and return during training (TensorBoard and the
other SB3 logger outputs), from the ``info["bandit"]`` that ``RecordEpisodeRegretVector`` writes under the
adapter.

SB3 has its own vector-env API (``VecEnv``: auto-reset within the step, the last observation in
``infos[i]["terminal_observation"]``) and does not take Gymnasium ``VectorEnv``s (stable-baselines3 issue
#1745: wrap them yourself). ``SB3VecEnv`` is that wrapper: the native vector env (one generator, array
operations for all copies) made with ``autoreset_mode="SameStep"``. On top, the recipes put SB3's own
``VecMonitor`` (episode returns in the logs) and ``VecNormalize`` (running mean / variance of every observation
entry: counts and sums grow with the budget, means stay in \([0, 1]\); rewards scaled by the running deviation of the
return).

Recipes (``RECIPES``, one per env family and algorithm; every value can be overridden):

- ``threshold`` and ``multi_armed`` (online: ``Discrete(K)``, a reward at every round, \(\mathbb{1}\{X \ge c_t\}\) on
  the threshold bandit): \(\gamma = 0.9\) (on the threshold bandit the optimal arm for \(c_t\) does not depend on the
  future; on the multi-armed bandit a short horizon values exploration little, a known limit of this recipe);
  PPO on 16 copies, DQN on one.
- ``thresholding`` / ``best_arm`` / ``top_k`` (pure exploration: the loss is paid once, on the answer step):
  the policy only chooses arms and the answer is the empirical rule (``EmpiricalAnswerVector``,
  ``Discrete(K)``), \(\gamma = 1\) (the episode's loss is not discounted); PPO on 16 copies, DQN on one. PPO can
  also be trained on the full ``MultiDiscrete`` action (``discrete=False``), where it must learn the answer
  bits too.

``docs/rl.md`` is the five-minute how-to; ``docs/rl-reference.md`` has the recipes' settings and how the trained
policies do next to the papers' agents.

``ARMWISE_RECIPES`` / ``train_armwise`` train the arm-wise policy (``bandit_gym.rl.armwise``: one network for any
\(K\) and budget) on envs that draw a new instance and budget every episode, with the dense reward of
``ShapedLossVector`` on the pure-exploration envs. A recipe with ``candidates`` > 1 trains that many policies per
seed and keeps the one with the lowest regret on its own training distribution (``select_candidate``).

Training on a fixed instance teaches the policy that instance (a thresholding policy can answer without
pulling); train on an id that draws its instance per episode (``ThresholdingBandit-v0``,
``CorrelatedBestArm-v0``) to learn a bandit algorithm, and evaluate elsewhere.

The RL study lives in this package, one concern per module: ``training`` (the SB3 adapter, the recipes,
``train``, ``load``), ``armwise_training`` (the arm-wise recipes and ``train_armwise``), ``armwise`` (the
arm-wise policy), ``saved`` (what a saved policy's folder names), ``sb3_files`` (reading SB3's files without
unpickling them), and the learned agents ``sb3_agent`` (``SB3Agent``) and ``armwise_ppo`` (``ArmwisePPO``, the
shipped policies and their regimes). The learned agents register through the ``bandit_gym.agents`` entry
point, as a user's agents do. Every name of ``__all__`` is imported from its module at first use, so that
importing the learned agents (``bandit-gym list``) loads nothing of stable-baselines3 or torch; training and
playing a policy need the ``rl`` extra.
"""

from __future__ import annotations

import importlib
from typing import Any

_HOMES = {
    "training": ("SB3VecEnv", "Recipe", "RECIPES", "recipe_for", "make_vec_env", "TrainedPolicy", "load",
                 "BanditMetricsCallback", "BanditProgressBar", "quiet_logger", "train"),
    "armwise_training": ("ArmwiseRecipe", "ARMWISE_RECIPES", "CANDIDATE_STRIDE", "VALIDATION_SEED",
                         "armwise_recipe", "candidate_seeds", "validate_armwise", "select_candidate",
                         "train_armwise"),
    "saved": ("ALGORITHMS", "METADATA", "saved_algo", "trained_budget"),
    "sb3_files": ("NORMALIZE_FILE", "NORMALIZE_PICKLE", "TRUST_PICKLES", "load_model", "load_normalize",
                  "save_normalize"),
    "sb3_agent": ("SB3Agent",),
    "armwise_ppo": ("ArmwisePPO",),
}
_HOME_OF = {name: module for module, names in _HOMES.items() for name in names}

__all__ = sorted(_HOME_OF)


def __getattr__(name: str) -> Any:
    """A name of ``__all__``, from its module at first use (``from bandit_gym.rl import train`` imports
    ``bandit_gym.rl.training`` then)."""
    if name not in _HOME_OF:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_HOME_OF[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
