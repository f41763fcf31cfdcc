"""stable-baselines3 on bandit_gym: the native vector envs as SB3 ``VecEnv``s, and a training recipe per family.

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
entry: counts and sums grow with the budget, means stay in [0, 1]; rewards scaled by the running deviation of the
return).

Recipes (``RECIPES``, one per env family and algorithm; every value can be overridden):

- ``threshold`` and ``multi_armed`` (online: ``Discrete(K)``, a reward at every round, 1{X >= c_t} on the
  threshold bandit): gamma = 0.9 (on the threshold bandit the optimal arm for c_t does not depend on the
  future; on the multi-armed bandit a short horizon values exploration little, a known limit of this recipe);
  PPO on 16 copies, DQN on one.
- ``thresholding`` / ``best_arm`` / ``top_k`` (pure exploration: the loss is paid once, on the answer step):
  the policy only chooses arms and the answer is the empirical rule (``EmpiricalAnswerVector``,
  ``Discrete(K)``), gamma = 1 (the episode's loss is not discounted); PPO on 16 copies, DQN on one. PPO can
  also be trained on the full ``MultiDiscrete`` action (``discrete=False``), where it must learn the answer
  bits too.

``docs/rl.md`` is the five-minute how-to; ``docs/rl-reference.md`` has the recipes' settings and how the trained
policies do next to the papers' agents.

``ARMWISE_RECIPES`` / ``train_armwise`` train the arm-wise policy (``bandit_gym.armwise``: one network for any
K and budget) on envs that draw a new instance and budget every episode, with the dense reward of
``ShapedLossVector`` on the pure-exploration envs. A recipe with ``candidates`` > 1 trains that many policies per
seed and keeps the one with the lowest regret on its own training distribution (``select_candidate``).

Training on a fixed instance teaches the policy that instance (a thresholding policy can answer without
pulling); train on an id that draws its instance per episode (``ThresholdingBandit-v0``,
``CorrelatedBestArm-v0``) to learn a bandit algorithm, and evaluate elsewhere.
"""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv

try:
    import stable_baselines3
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.vec_env import VecEnv, VecMonitor, VecNormalize
except ImportError as error:  # pragma: no cover - the rl extra is missing
    raise ImportError('bandit_gym.rl needs stable-baselines3: pip install "pure-exploration-gym[rl]"') from error

from bandit_gym import _validation as check
from bandit_gym.agents.sb3_agent import ALGORITHMS
from bandit_gym.envs._base import engine_of
from bandit_gym.families import Family
from bandit_gym.instances import BudgetRange, RandomSurvival, UniformMeans
from bandit_gym.registration import family_of_env
from bandit_gym.sb3_files import (  # noqa: F401 - the loaders are part of bandit_gym.rl's API too
    NORMALIZE_FILE,
    NORMALIZE_PICKLE,
    TRUST_PICKLES,
    _load_model,
    _normalize_beside,
    load_model,
    load_normalize,
    save_normalize,
)
from bandit_gym.wrappers import EmpiricalAnswerVector, RecordEpisodeRegretVector, ShapedLossVector


class SB3VecEnv(VecEnv):
    """A native bandit_gym vector env with ``SAME_STEP`` autoreset seen through stable-baselines3's ``VecEnv``
    API (possibly wrapped, e.g. by ``EmpiricalAnswerVector``): observations are fresh arrays each step,
    ``dones = terminated | truncated``, the per-copy ``infos`` hold ``terminal_observation`` and
    ``TimeLimit.truncated`` for the copies that ended, and their ``info["bandit"]`` metrics (one dict each) when
    ``RecordEpisodeRegretVector`` is in the stack (the list of dicts is SB3's API; the step itself is one array
    operation for all copies). The adapter copies the observations it returns, so the env under it may hand out
    its buffers (``copy=False``).
    The env draws for all copies from one generator, so ``seed(s)`` seeds the whole batch with ``s`` (SB3's
    per-copy seeds ``s + i`` do not apply)."""

    def __init__(self, env: VectorEnv) -> None:
        mode = env.metadata.get("autoreset_mode")
        if mode != AutoresetMode.SAME_STEP:
            raise ValueError(f"env must reset its copies within the step (autoreset_mode='SameStep', what "
                             f"stable-baselines3 expects), got {mode}; make it with gym.make_vec(..., "
                             "vectorization_mode='vector_entry_point', autoreset_mode='SameStep')")
        engine_of(env)  # a bandit_gym env, or a TypeError naming the problem
        self.env = env
        self._actions: np.ndarray | None = None
        super().__init__(env.num_envs, env.single_observation_space, env.single_action_space)

    def reset(self) -> dict[str, np.ndarray]:
        obs, _ = self.env.reset(seed=self._seeds[0])
        self._reset_seeds()
        return {key: np.array(value) for key, value in obs.items()}

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions)

    def step_wait(self) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, list[dict[str, Any]]]:
        obs, rewards, terminated, truncated, info = self.env.step(self._actions)
        dones = terminated | truncated
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        metrics = info.get("bandit")
        for row in np.flatnonzero(dones):  # only the copies that ended this step
            infos[row]["terminal_observation"] = info["final_obs"][row]
            infos[row]["TimeLimit.truncated"] = bool(truncated[row] and not terminated[row])
            if metrics is not None:
                infos[row]["bandit"] = {key: value[row].item() if value.ndim == 1 else value[row].copy()
                                        for key, value in metrics.items()}
        return ({key: np.array(value) for key, value in obs.items()}, np.asarray(rewards, dtype=np.float32),
                dones, infos)

    def close(self) -> None:
        self.env.close()

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        value = None if attr_name == "render_mode" else getattr(self.env, attr_name)
        return [value] * len(list(self._get_indices(indices)))

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        raise AttributeError(f"set_attr({attr_name!r}): the copies of a native vector env share one object")

    def env_method(self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any) -> list:
        raise AttributeError(f"env_method({method_name!r}): the copies of a native vector env share one object; "
                             "call it on env.env")

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        return [False] * len(list(self._get_indices(indices)))


@dataclass(frozen=True)
class Recipe:
    """How to train one algorithm on one env family: the SB3 class, its keyword arguments, the number of copies,
    whether the policy only chooses arms (``discrete``: ``EmpiricalAnswerVector`` fills the answer), the
    ``VecNormalize`` settings and a default number of steps."""

    algo: str
    algo_kwargs: dict[str, Any] = field(default_factory=dict)
    num_envs: int = 16
    discrete: bool = True
    normalize: dict[str, Any] | None = field(default_factory=lambda: {"norm_obs": True, "norm_reward": True})
    total_timesteps: int = 100_000


_PURE_PPO = Recipe("PPO", {"n_steps": 256, "batch_size": 512, "n_epochs": 4, "gamma": 1.0, "gae_lambda": 0.95,
                           "ent_coef": 0.01, "learning_rate": 3e-4},
                   normalize={"norm_obs": True, "norm_reward": True, "gamma": 1.0})
_PURE_DQN = Recipe("DQN", {"gamma": 1.0, "learning_starts": 1000, "buffer_size": 50_000, "train_freq": 4,
                           "target_update_interval": 1000, "exploration_fraction": 0.3},
                   num_envs=1, normalize={"norm_obs": True, "norm_reward": False})

# online envs (a reward at every pull): a short discount, no answer to learn
_ONLINE_PPO = Recipe("PPO", {"n_steps": 128, "batch_size": 256, "n_epochs": 4, "gamma": 0.9, "gae_lambda": 0.9,
                             "ent_coef": 0.0, "learning_rate": 1e-3},
                     discrete=False, normalize={"norm_obs": True, "norm_reward": True, "gamma": 0.9},
                     total_timesteps=50_000)
_ONLINE_DQN = Recipe("DQN", {"gamma": 0.9, "learning_starts": 500, "buffer_size": 20_000,
                             "exploration_fraction": 0.2}, num_envs=1, discrete=False,
                     normalize={"norm_obs": True, "norm_reward": False}, total_timesteps=50_000)

RECIPES: dict[tuple[Family, str], Recipe] = {
    **{(family, "PPO"): _PURE_PPO if family.pure_exploration else _ONLINE_PPO for family in Family},
    **{(family, "DQN"): _PURE_DQN if family.pure_exploration else _ONLINE_DQN for family in Family},
}
"""The recipes, by (env family, algorithm): one pair for the online families, one for the pure-exploration ones."""


def recipe_for(env_id: str, algo: str = "PPO", **overrides: Any) -> Recipe:
    """The recipe of ``env_id``'s family for ``algo`` (``"PPO"`` or ``"DQN"``), with ``overrides`` replacing
    fields (``algo_kwargs`` is merged)."""
    algo = check.choice("algo", algo, ALGORITHMS[:2])
    recipe = RECIPES[(family_of_env(env_id), algo)]
    if "algo_kwargs" in overrides:
        overrides = {**overrides, "algo_kwargs": {**recipe.algo_kwargs, **overrides["algo_kwargs"]}}
    unknown = set(overrides) - set(Recipe.__dataclass_fields__)
    if unknown:
        raise ValueError(f"unknown recipe fields {sorted(unknown)}; allowed: {sorted(Recipe.__dataclass_fields__)}")
    return replace(recipe, **overrides)


def make_vec_env(env_id: str, num_envs: int = 16, discrete: bool = False, normalize: dict[str, Any] | None = None,
                 shaped: bool = False, **env_kwargs: Any) -> Any:
    """An SB3 ``VecEnv`` of ``num_envs`` copies of ``env_id`` (the native vector env, ``SAME_STEP``, its buffers
    handed out without a copy: the adapter copies), with ``RecordEpisodeRegretVector`` (the ``info["bandit"]``
    that ``BanditMetricsCallback`` logs), ``EmpiricalAnswerVector`` when ``discrete`` (pure-exploration
    envs), ``ShapedLossVector`` when ``shaped`` (pure-exploration envs: the dense, potential-based reward),
    ``VecMonitor``, and ``VecNormalize`` with the keyword arguments ``normalize`` (None: no normalisation)."""
    if not isinstance(shaped, bool):
        raise TypeError(f"shaped must be True or False, got {shaped!r}")
    env: Any = gym.make_vec(env_id, num_envs=check.integer("num_envs", num_envs, minimum=1),
                            vectorization_mode="vector_entry_point", autoreset_mode="SameStep",
                            **{"copy": False, **env_kwargs})
    env = RecordEpisodeRegretVector(env)
    if shaped:
        env = ShapedLossVector(env)
    if discrete:
        env = EmpiricalAnswerVector(env)
    venv = VecMonitor(SB3VecEnv(env))
    return venv if normalize is None else VecNormalize(venv, **normalize)


METADATA = "metadata.json"
"""The file of ``TrainedPolicy.save`` that names the SB3 class and the budget the policy was trained on."""


def trained_budget(observation_space: Any) -> int | None:
    """The budget (or horizon) a policy was trained on: the upper bound of ``budget_left`` in its observation
    space (None if the space has no such entry or leaves it unbounded)."""
    box = getattr(observation_space, "spaces", {}).get("budget_left")
    high = None if box is None else float(np.max(box.high))
    return None if high is None or not np.isfinite(high) else round(high)


@dataclass
class TrainedPolicy:
    """A trained SB3 model with the ``VecNormalize`` statistics it was trained with (None without)."""

    model: Any
    normalize: Any = None
    #: how ``train_armwise`` chose this policy among its candidates (``select_candidate``), or None
    selection: dict[str, Any] | None = None

    def save(self, folder: str | Path) -> Path:
        """Write ``model.zip``, the observation statistics when normalising (``vecnormalize.npz``, without
        pickles, which ``load`` and ``SB3Agent`` read; and ``vecnormalize.pkl``, SB3's own ``VecNormalize.save``,
        for SB3's ``VecNormalize.load``) and ``metadata.json`` (the SB3 class, read back by ``load`` and
        ``SB3Agent``, the budget trained on, and the ``selection`` if any) into ``folder``; return it."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        self.model.save(folder / "model.zip")
        if self.normalize is not None:
            self.normalize.save(str(folder / NORMALIZE_PICKLE))
            save_normalize(self.normalize, folder / NORMALIZE_FILE)
        meta: dict[str, Any] = {"algo": type(self.model).__name__,
                                "budget": trained_budget(self.model.observation_space)}
        if self.selection is not None:
            meta["selection"] = self.selection
        (folder / METADATA).write_text(json.dumps(meta, indent=1) + "\n")
        return folder


def saved_algo(folder: str | Path, algo: str | None = None) -> str:
    """The SB3 class of the policy saved in ``folder``: ``algo`` if given (it must agree with the folder's
    ``metadata.json``), else the metadata's, else ``"PPO"`` (a folder saved before the metadata existed)."""
    path = Path(folder) / METADATA
    saved = json.loads(path.read_text()).get("algo") if path.is_file() else None
    if algo is not None and saved is not None and algo != saved:
        raise ValueError(f"algo={algo!r}, but the policy in {folder} is a {saved} ({path}); pass algo={saved!r} or "
                         "leave it out")
    return check.choice("algo", algo or saved or "PPO", ALGORITHMS)


def load(folder: str | Path, algo: str | None = None, trust_pickles: bool = False) -> TrainedPolicy:
    """Read a ``TrainedPolicy`` saved by ``TrainedPolicy.save`` (``algo`` names the SB3 class; by
    default the one the folder's ``metadata.json`` names).

    By default nothing is unpickled: ``model.zip`` is read as ``load_model`` reads it (its pickled settings
    rebuilt from their readable text, its weights with ``weights_only=True``), and the observation statistics
    from ``vecnormalize.npz``; a folder whose statistics are only ``vecnormalize.pkl`` (saved before the
    ``.npz`` existed, or by ``VecNormalize.save``) is a ValueError saying how to re-save it.
    ``trust_pickles=True`` loads the model as SB3 does and reads ``vecnormalize.pkl`` when there is no ``.npz``:
    it runs any code the files hold, so pass it only for folders you trust."""
    folder = Path(folder)
    if not (folder / "model.zip").is_file():
        raise FileNotFoundError(f"{folder / 'model.zip'} does not exist: pass the folder given to TrainedPolicy.save")
    subject = f"folder={str(folder)!r}"
    model = _load_model(folder / "model.zip", saved_algo(folder, algo), trust_pickles, subject)
    normalize = _normalize_beside(folder / "model.zip", trust_pickles, subject, named_alone=False)
    meta = folder / METADATA
    selection = json.loads(meta.read_text()).get("selection") if meta.is_file() else None
    return TrainedPolicy(model, normalize, selection)


class BanditMetricsCallback(BaseCallback):
    """Log the bandit metrics of the episodes that end during SB3 training: ``bandit/regret``, ``bandit/error``
    (pure-exploration envs) and ``bandit/return``, each the mean over the last ``window`` episodes (SB3's own
    ``rollout/ep_rew_mean`` convention, ``stats_window_size = 100``), and ``bandit/episodes`` (episodes ended
    so far), with ``self.logger.record``: they appear with SB3's other keys in every logger output
    (TensorBoard with ``tensorboard_log=...``, csv, stdout).

    The metrics are read from the ``info["bandit"]`` of the episodes that end (``infos`` of each step):
    ``make_vec_env`` and ``train`` put ``RecordEpisodeRegretVector`` under the adapter; with SB3's own
    vector envs, wrap each env in ``RecordEpisodeRegret``. Recorded at the steps where episodes end, so a
    dump shows the window as of the last episode ended.

    ```python
    model = PPO("MultiInputPolicy", make_vec_env("ThresholdBandit-v0"), tensorboard_log="runs/tb")
    model.learn(50_000, callback=BanditMetricsCallback())   # tensorboard --logdir runs/tb: bandit/regret
    ```
    """

    #: the metrics logged, under ``bandit/<name>``
    METRICS = ("regret", "error", "return")

    def __init__(self, window: int = 100, verbose: int = 0) -> None:
        super().__init__(verbose)
        self.window = check.integer("window", window, minimum=1)
        self.recent: deque[dict[str, float]] = deque(maxlen=self.window)
        #: episodes ended since training began
        self.episodes = 0

    def _on_step(self) -> bool:
        ended = [info["bandit"] for info in self.locals.get("infos", ()) if "bandit" in info]
        if ended:
            self.recent.extend(ended)
            self.episodes += len(ended)
            for name in self.METRICS:
                values = [episode[name] for episode in self.recent if name in episode]
                if values:
                    self.logger.record(f"bandit/{name}", float(np.mean(values)))
            self.logger.record("bandit/episodes", self.episodes)
        return True


class BanditProgressBar(BaseCallback):
    """A progress bar over the training steps (``tqdm``) whose postfix is the mean regret (and, on
    pure-exploration envs, the error rate) of the last ``window`` episodes: the policy learning, as it happens.
    ``train`` shows it by default where a terminal is attached; with SB3 directly,
    ``model.learn(n, callback=BanditProgressBar())`` (it reads the ``info["bandit"]`` that ``make_vec_env``'s
    envs record). ``file`` is where the bar is drawn (standard error by default)."""

    def __init__(self, window: int = 100, file: Any = None) -> None:
        super().__init__()
        self.window = check.integer("window", window, minimum=1)
        self.file = file
        self.recent: deque[dict[str, float]] = deque(maxlen=self.window)
        self.bar: Any = None

    def _on_training_start(self) -> None:
        from tqdm.auto import tqdm

        total = self.locals.get("total_timesteps", 0) - self.model.num_timesteps
        self.bar = tqdm(total=total, unit="step", unit_scale=True, file=self.file, dynamic_ncols=True,
                        desc="training")

    def _on_step(self) -> bool:
        self.bar.update(self.training_env.num_envs)
        ended = [info["bandit"] for info in self.locals.get("infos", ()) if "bandit" in info]
        if ended:
            self.recent.extend(ended)
            shown: dict[str, Any] = {"episodes": len(self.recent)}
            shown.update({name: f"{np.mean([e[name] for e in self.recent if name in e]):.4g}"
                          for name in ("regret", "error") if any(name in e for e in self.recent)})
            self.bar.set_postfix(ordered_dict=shown, refresh=False)
        return True

    def _on_training_end(self) -> None:
        self.bar.close()


def quiet_logger(model: Any) -> None:
    """Give an SB3 ``model`` without ``tensorboard_log`` the logger its ``learn`` would configure (SB3's table on
    standard output at ``verbose >= 1``, nothing otherwise) less the folder: SB3 makes an empty ``SB3-<time>``
    folder in the system's temporary folder at every ``learn`` whose logger it configures, a write outside the
    folder the user named. A model with ``tensorboard_log`` keeps SB3's own logger, which writes there."""
    import sys

    from stable_baselines3.common.logger import HumanOutputFormat, Logger

    if model.tensorboard_log is None:
        model.set_logger(Logger(folder=None, output_formats=[HumanOutputFormat(sys.stdout)] if model.verbose >= 1
                                else []))


def train(env_id: str, algo: str = "PPO", total_timesteps: int | None = None, seed: int | None = 0,
          verbose: int = 0, env_kwargs: dict[str, Any] | None = None, progress: bool | None = None,
          callback: Any = None, **overrides: Any) -> TrainedPolicy:
    """Train ``algo`` on ``env_id`` with its family's recipe (``overrides`` replace recipe fields, e.g.
    ``num_envs=8``, ``algo_kwargs={"learning_rate": 1e-3}``, ``discrete=False``), for ``total_timesteps``
    steps (the recipe's default if None). ``env_kwargs`` go to ``gym.make_vec`` (e.g. ``{"budget": 100}``).
    Returns the model and its observation statistics, ready for ``SB3Agent``.

    ``progress`` draws a ``BanditProgressBar`` (the steps done and the recent episodes' mean regret and error);
    None, the default, draws it where standard error is a terminal, so that a script in a terminal shows it and a
    log or a test does not. ``BanditMetricsCallback`` always runs (``bandit/regret`` ... in SB3's logger:
    ``verbose=1`` prints them with SB3's table every rollout; ``tensorboard_log=`` in ``algo_kwargs`` plots
    them); ``callback`` adds SB3 callbacks of your own."""
    import sys

    recipe = recipe_for(env_id, algo, **overrides)
    steps = recipe.total_timesteps if total_timesteps is None else check.integer("total_timesteps",
                                                                                 total_timesteps, minimum=1)
    if progress is None:
        progress = sys.stderr.isatty()
    elif not isinstance(progress, (bool, np.bool_)):
        raise TypeError(f"progress must be True, False or None (a terminal decides), got {progress!r}")
    venv = make_vec_env(env_id, recipe.num_envs, recipe.discrete, recipe.normalize, **(env_kwargs or {}))
    venv.seed(seed)
    cls = getattr(stable_baselines3, recipe.algo)
    model = cls("MultiInputPolicy", venv, seed=seed, verbose=verbose, device="cpu", **recipe.algo_kwargs)
    quiet_logger(model)
    callbacks = [BanditMetricsCallback(), *([BanditProgressBar()] if progress else []),
                 *(callback if isinstance(callback, (list, tuple)) else [callback] if callback is not None else [])]
    model.learn(total_timesteps=steps, callback=callbacks)
    normalize = venv if recipe.normalize is not None else None
    if normalize is not None:
        normalize.training, normalize.norm_reward = False, False
    return TrainedPolicy(model, normalize)


@dataclass(frozen=True)
class ArmwiseRecipe:
    """How the arm-wise policy (``bandit_gym.armwise.ArmwisePolicy``) trains on one problem: on ``env_id`` with
    ``env_kwargs`` that draw the instance (and on pure-exploration envs the budget) per episode, so that the
    policy learns to explore rather than one instance; PPO with ``algo_kwargs`` on ``num_envs`` copies for
    ``total_timesteps`` steps; the dense reward of ``ShapedLossVector`` when ``shaped`` (pure exploration); the
    reward scaled by ``VecNormalize`` (the observation is scaled by the policy's features, not normalised).

    ``candidates`` > 1: a seed trains that many policies (``candidate_seeds``) and keeps the one with the lowest
    mean regret on ``validation_runs`` episodes of the training distribution itself (``select_candidate``):
    a rule fixed before any held-out instance is played, which guards against a run that settles on a poor
    policy. The candidates train in parallel (``train_armwise``'s ``jobs``). ``validation_env_kwargs`` replace
    env arguments for those episodes only (e.g. another law of the means): the candidates are then chosen on
    that distribution instead (none by default)."""

    env_id: str
    env_kwargs: dict[str, Any]
    algo_kwargs: dict[str, Any] = field(default_factory=dict)
    num_envs: int = 64
    total_timesteps: int = 3_000_000
    shaped: bool = True
    candidates: int = 1
    validation_runs: int = 1000
    validation_env_kwargs: dict[str, Any] = field(default_factory=dict)

    @property
    def features(self) -> dict[str, Any]:
        """The policy's feature options (``ArmFeatures``' keyword arguments: ``standardize``, ``k_invariant``)."""
        return dict(self.algo_kwargs.get("policy_kwargs", {}).get("features_extractor_kwargs", {}))


def _armwise_recipes() -> dict[str, ArmwiseRecipe]:
    pure = {"n_steps": 64, "batch_size": 1024, "n_epochs": 4, "gamma": 1.0, "gae_lambda": 0.95,
            "learning_rate": 3e-4, "ent_coef": 0.0}
    online = {**pure, "gamma": 0.9, "gae_lambda": 0.9}
    best_arm = ArmwiseRecipe("BestArmIdentification-v0", {"means": UniformMeans(num_arms=15, low=0.1, high=0.6),
                                                          "m": 1, "budget": BudgetRange(100, 1000, log=True)},
                             pure, total_timesteps=4_000_000, candidates=3)
    near_ties = {"means": UniformMeans(num_arms=15, low=0.35, high=0.5), "budget": BudgetRange(600, 2000, log=True)}
    return {
        "thresholding": ArmwiseRecipe("ThresholdingBandit-v0", {"means": UniformMeans(num_arms=10),
                                                                "budget": BudgetRange(50, 400, log=True)}, pure),
        "best_arm": best_arm,
        "best_arm_dev_select": replace(best_arm, total_timesteps=2_000_000, candidates=4,
                                       validation_env_kwargs=near_ties),
        "top_k": ArmwiseRecipe("TopKIdentification-v0", {"means": UniformMeans(num_arms=30), "k": 3,
                                                         "budget": BudgetRange(300, 3000, log=True)},
                               {**pure, "policy_kwargs": {"features_extractor_kwargs": {"k_invariant": True}}},
                               total_timesteps=3_000_000, candidates=2),
        "correlated": ArmwiseRecipe("CorrelatedBestArm-v0", {"budget": BudgetRange(20, 120, log=True)},
                                    {**pure, "policy_kwargs": {"features_extractor_kwargs": {"standardize": True}}},
                                    total_timesteps=750_000),
        "threshold": ArmwiseRecipe("ThresholdBandit-v0", {"survival": RandomSurvival(4, 6), "horizon": 500},
                                   online, total_timesteps=1_000_000, shaped=False),
        "multi_armed": ArmwiseRecipe("MultiArmedBandit-v0", {"budget": 500}, online, shaped=False),
    }


ARMWISE_RECIPES: dict[str, ArmwiseRecipe] = _armwise_recipes()
"""The arm-wise recipes, by problem: the training env draws a new instance (and budget) every episode.
``best_arm_dev_select`` trains as ``best_arm`` does (2M steps per candidate) and chooses among 4 candidates on
instances whose arms are all close to the best (means U(0.35, 0.5), budgets 600..2000), not on its training
distribution."""

CANDIDATE_STRIDE = 1000
"""Candidate j of seed s trains with seed ``s + 1000 j`` (``candidate_seeds``); candidate 0 is seed s itself."""

VALIDATION_SEED = 123_456_789
"""The env seed of the validation episodes (``validate_armwise``): one fixed set of training-distribution
instances, shared by every candidate, and no training seed's."""


def armwise_recipe(problem: str | ArmwiseRecipe, **overrides: Any) -> ArmwiseRecipe:
    """The recipe of ``problem`` (a key of ``ARMWISE_RECIPES``, or a recipe) with ``overrides`` replacing its
    fields (``algo_kwargs``, ``env_kwargs`` and ``validation_env_kwargs`` are merged)."""
    recipe = problem if isinstance(problem, ArmwiseRecipe) else ARMWISE_RECIPES[
        check.choice("problem", problem, tuple(ARMWISE_RECIPES))]
    unknown = set(overrides) - set(ArmwiseRecipe.__dataclass_fields__)
    if unknown:
        raise ValueError(f"unknown recipe fields {sorted(unknown)}; allowed: "
                         f"{sorted(ArmwiseRecipe.__dataclass_fields__)}")
    for merged in ("algo_kwargs", "env_kwargs", "validation_env_kwargs"):
        if merged in overrides:
            overrides[merged] = {**getattr(recipe, merged), **overrides[merged]}
    if "candidates" in overrides:
        check.integer("candidates", overrides["candidates"], minimum=1)
    if "validation_runs" in overrides:
        check.integer("validation_runs", overrides["validation_runs"], minimum=2)
    return replace(recipe, **overrides)


def candidate_seeds(seed: int | None, candidates: int) -> tuple[int | None, ...]:
    """The training seeds of seed ``seed``'s ``candidates`` candidates: ``seed, seed + 1000, seed + 2000, ...``
    (all None when ``seed`` is None)."""
    check.integer("candidates", candidates, minimum=1)
    return tuple(None if seed is None else seed + CANDIDATE_STRIDE * j for j in range(candidates))


def validate_armwise(problem: str | ArmwiseRecipe, policy: Any, runs: int | None = None,
                     seed: int = VALIDATION_SEED) -> np.ndarray:
    """Per-episode regret of ``policy`` on ``runs`` episodes (the recipe's ``validation_runs`` if None) of the
    recipe's own training distribution (its env and ``env_kwargs``, with its ``validation_env_kwargs`` replacing
    some: new instances and budgets, never a held-out instance), the env seeded with ``seed``. ``policy`` is an
    agent, or anything ``SB3Agent`` plays (played at any budget; sampled, as in training)."""
    from bandit_gym.agents.base import Agent
    from bandit_gym.agents.sb3_agent import SB3Agent
    from bandit_gym.rollout import play_vector

    recipe = armwise_recipe(problem)
    runs = recipe.validation_runs if runs is None else check.integer("runs", runs, minimum=2)
    agent = policy if isinstance(policy, Agent) else SB3Agent(policy, any_budget=True)
    env = gym.make_vec(recipe.env_id, num_envs=runs, vectorization_mode="vector_entry_point",
                       **{**recipe.env_kwargs, **recipe.validation_env_kwargs})
    try:
        return play_vector(env, agent, seed=seed)["regret"]
    finally:
        env.close()


def select_candidate(problem: str | ArmwiseRecipe, policies: list[Any], runs: int | None = None,
                     seed: int = VALIDATION_SEED) -> tuple[int, np.ndarray]:
    """The index of the policy with the lowest mean regret on the same validation episodes
    (``validate_armwise``; the first on a tie), and every policy's per-episode regret there, ``(policies, runs)``."""
    if not policies:
        raise ValueError("policies must hold at least one candidate")
    regrets = np.stack([validate_armwise(problem, policy, runs, seed) for policy in policies])
    return int(np.argmin(regrets.mean(axis=1))), regrets


def _train_candidate(recipe: ArmwiseRecipe, seed: int | None, steps: int, verbose: int,
                     folder: Path | None = None) -> TrainedPolicy | Path:
    """One PPO run of ``recipe``; saved to ``folder`` (and the folder returned) when given, on one torch thread
    (a parallel worker's share of the cores)."""
    from stable_baselines3 import PPO

    from bandit_gym.armwise import ArmwisePolicy

    if folder is not None:
        import torch

        torch.set_num_threads(1)
    pure = family_of_env(recipe.env_id, **recipe.env_kwargs).pure_exploration
    gamma = recipe.algo_kwargs.get("gamma", 0.99)
    venv = make_vec_env(recipe.env_id, recipe.num_envs, discrete=pure, shaped=recipe.shaped and pure,
                        normalize={"norm_obs": False, "norm_reward": True, "gamma": gamma}, **recipe.env_kwargs)
    venv.seed(seed)
    model = PPO(ArmwisePolicy, venv, seed=seed, verbose=verbose, device="cpu", **recipe.algo_kwargs)
    quiet_logger(model)
    model.learn(total_timesteps=steps)
    trained = TrainedPolicy(model, None)
    return trained if folder is None else trained.save(folder)


def train_armwise(problem: str | ArmwiseRecipe, seed: int | None = 0, total_timesteps: int | None = None,
                  verbose: int = 0, jobs: int = 1, **overrides: Any) -> TrainedPolicy:
    """Train the arm-wise policy on ``problem`` (a key of ``ARMWISE_RECIPES``: ``"thresholding"``,
    ``"best_arm"``, ``"best_arm_dev_select"``, ``"top_k"``, ``"correlated"``, ``"threshold"``, ``"multi_armed"``;
    or a recipe, e.g. of ``armwise_recipe``) with PPO, for ``total_timesteps`` steps (the recipe's if None);
    ``overrides`` replace recipe fields (``algo_kwargs``, ``env_kwargs`` and ``validation_env_kwargs`` are
    merged). The policy plays any K and budget of its family through ``SB3Agent``.

    A recipe with ``candidates`` > 1 trains one policy per seed of ``candidate_seeds(seed, candidates)`` (with
    ``jobs`` > 1, that many at once, each in its own process on one torch thread; with ``jobs=1``, one after the
    other in this process) and returns the one ``select_candidate`` keeps, with the validation in its
    ``selection``."""
    recipe = armwise_recipe(problem, **overrides)
    steps = recipe.total_timesteps if total_timesteps is None else check.integer("total_timesteps",
                                                                                 total_timesteps, minimum=1)
    jobs = check.integer("jobs", jobs, minimum=1)
    if recipe.candidates == 1:
        result = _train_candidate(recipe, seed, steps, verbose)
        assert isinstance(result, TrainedPolicy)
        return result
    seeds = candidate_seeds(seed, recipe.candidates)
    if jobs == 1:
        trained = [_train_candidate(recipe, s, steps, verbose) for s in seeds]
    else:
        import tempfile

        from joblib import Parallel, delayed

        with tempfile.TemporaryDirectory() as tmp:
            folders = Parallel(n_jobs=jobs)(delayed(_train_candidate)(recipe, s, steps, verbose, Path(tmp) / str(j))
                                            for j, s in enumerate(seeds))
            trained = [load(folder) for folder in folders]
    best, regrets = select_candidate(recipe, trained)
    chosen = trained[best]
    assert isinstance(chosen, TrainedPolicy)
    chosen.selection = {"seed": seed, "candidate_seeds": list(seeds), "chosen": seeds[best],
                        "validation_regret": regrets.mean(axis=1).tolist(), "validation_runs": recipe.validation_runs,
                        "validation_seed": VALIDATION_SEED,
                        "validation_env_kwargs": {k: repr(v) for k, v in recipe.validation_env_kwargs.items()}}
    return chosen
