"""Training stable-baselines3 on the package's envs: the native vector envs as SB3 ``VecEnv``s
(``SB3VecEnv``, ``make_vec_env``), a recipe per family and algorithm (``RECIPES``, ``recipe_for``), ``train``,
the saved policy (``TrainedPolicy``, ``load``) and the training callbacks. Imported from ``bandit_gym.rl``
(whose docstring is the how-to)."""

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
from bandit_gym.envs._base import engine_of
from bandit_gym.families import Family
from bandit_gym.registration import family_of_env
from bandit_gym.rl.saved import ALGORITHMS, METADATA, saved_algo, trained_budget
from bandit_gym.rl.sb3_files import NORMALIZE_FILE, NORMALIZE_PICKLE, _load_model, _normalize_beside, save_normalize
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
    envs record). ``file`` is where the bar is drawn (standard error by default). Its total is the steps the
    training will take: an on-policy algorithm (PPO, A2C) plays whole rollouts of ``n_steps`` per env, the last
    one past ``total_timesteps``, so the bar counts to the end of that rollout and never runs past 100%."""

    def __init__(self, window: int = 100, file: Any = None) -> None:
        super().__init__()
        self.window = check.integer("window", window, minimum=1)
        self.file = file
        self.recent: deque[dict[str, float]] = deque(maxlen=self.window)
        self.bar: Any = None

    def _on_training_start(self) -> None:
        from tqdm.auto import tqdm

        total = self.locals.get("total_timesteps", 0) - self.model.num_timesteps
        rollout = getattr(self.model, "n_steps", None)
        if isinstance(rollout, int) and rollout > 0:  # PPO, A2C: whole rollouts, the last one past the total
            chunk = rollout * self.training_env.num_envs
            total = -(-total // chunk) * chunk
        self.bar = tqdm(total=total, unit="step", unit_scale=True, file=self.file, dynamic_ncols=True,
                        desc="training")

    def _on_step(self) -> bool:
        steps = self.training_env.num_envs
        if self.bar.n + steps > self.bar.total:  # an algorithm that runs past the total (its last steps)
            self.bar.total = self.bar.n + steps
        self.bar.update(steps)
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


