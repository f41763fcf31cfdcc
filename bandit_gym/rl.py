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

``docs/rl.md`` has the recipes' settings and how the trained policies do next to the papers' agents.

``ARMWISE_RECIPES`` / ``train_armwise`` train the arm-wise policy (``bandit_gym.armwise``: one network for any
K and budget) on envs that draw a new instance and budget every episode, with the dense reward of
``ShapedLossVector`` on the pure-exploration envs. A recipe with ``candidates`` > 1 trains that many policies per
seed and keeps the one with the lowest regret on its own training distribution (``select_candidate``).

Training on a fixed instance teaches the policy that instance (a thresholding policy can answer without
pulling); train on an id that draws its instance per episode (``ThresholdingBandit-v0``,
``CorrelatedBestArm-v0``) to learn a bandit algorithm, and evaluate elsewhere.
"""

from __future__ import annotations

import inspect
import io
import json
import os
import pickle
import re
import zipfile
import zlib
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
    raise ImportError('bandit_gym.rl needs stable-baselines3: pip install -e ".[rl]"') from error

from bandit_gym import _validation as check
from bandit_gym.agents.sb3_agent import ALGORITHMS
from bandit_gym.envs._base import engine_of
from bandit_gym.families import Family
from bandit_gym.instances import BudgetRange, RandomSurvival, UniformMeans
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


def family_of_id(env_id: str, **env_kwargs: Any) -> Family:
    """The env family of a registered id (``Family``), as its engine names it."""
    return engine_of(gym.make(env_id, **env_kwargs)).family


def recipe_for(env_id: str, algo: str = "PPO", **overrides: Any) -> Recipe:
    """The recipe of ``env_id``'s family for ``algo`` (``"PPO"`` or ``"DQN"``), with ``overrides`` replacing
    fields (``algo_kwargs`` is merged)."""
    algo = check.choice("algo", algo, ALGORITHMS[:2])
    recipe = RECIPES[(family_of_id(env_id), algo)]
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


# ----------------------------------------------------------------------------------------------- loading
# A stable-baselines3 ``.zip`` holds a JSON ``data`` entry (the algorithm's settings, SB3's ``data_to_json``) and
# torch weights (``*.pth``). SB3 stores every setting that is not plain JSON as a cloudpickle blob (an entry with a
# ``":serialized:"`` key: the policy class, the spaces, the schedules, ...) and ``BaseAlgorithm.load`` unpickles
# each, which runs any code the file holds; ``VecNormalize.save`` writes one pickle. By default the loaders below
# unpickle nothing: the blobs are replaced (SB3's ``custom_objects``) by objects rebuilt from the readable text
# that ``data_to_json`` writes beside each blob, and the observation statistics are read from an ``.npz``.

TRUST_PICKLES = "trust_pickles=True"
"""The opt-in that lets the loaders unpickle (run code from) a file, as SB3 does."""

NORMALIZE_FILE = "vecnormalize.npz"
"""The observation statistics without pickles, written by ``TrainedPolicy.save`` (``save_normalize``)."""

NORMALIZE_PICKLE = "vecnormalize.pkl"
"""The observation statistics as SB3 saves them (``VecNormalize.save``, a pickle), read only with the opt-in."""

NORMALIZE_FORMAT = 1
"""Version of the ``.npz`` statistics files written by ``save_normalize``."""

_NUMBER = r"-?(?:inf|nan|\d+(?:\.\d*)?(?:e[+-]?\d+)?)"
_BOUND = rf"(?:{_NUMBER}|\[[\[\]\s0-9.+\-einfa]*\])"
_BOX = (rf"'(?P<key>[A-Za-z_][A-Za-z0-9_]*)': Box\((?P<low>{_BOUND}), (?P<high>{_BOUND}), "
        r"\((?P<shape>[0-9, ]*)\), (?P<dtype>[a-z]+[0-9]*)\)")
_BOXES = re.compile(_BOX)
_DICT_OF_BOXES = re.compile(r"\{(?:%s(?:, %s)*)?\}" % ((re.sub(r"\?P<\w+>", "", _BOX),) * 2))
_INIT = re.compile(r"<function ([A-Za-z_][\w.]*)\.__init__ at 0x[0-9a-fA-F]+>")
_CONSTANT = re.compile(rf"ConstantSchedule\(val=({_NUMBER})\)")
_ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError,
               UnicodeDecodeError, OSError, KeyError)


class _EntryError(Exception):
    """A pickled entry of a model's ``data`` that the default loader does not rebuild."""


def _named(subject: str, path: Path) -> str:
    """The argument a caller was given (``subject``), and the file read when it is not that argument itself."""
    return subject if str(path) in subject else f"{subject} ({path})"


def _refusal(subject: str, path: Path, key: str, why: str) -> ValueError:
    return ValueError(f"{_named(subject, path)}: its entry {key!r} is pickled (cloudpickle, read by SB3's load) and "
                      f"is not one that bandit_gym rebuilds without unpickling: {why}. Unpickling runs any code the "
                      f"file holds; pass {TRUST_PICKLES} only if you trust the file")


def _read_zip(path: Path, subject: str) -> tuple[bytes, dict[str, Any]]:
    """The bytes of an SB3 ``.zip`` (read once: what SB3 then loads is what was checked) and its ``data`` JSON."""
    not_sb3 = ("a stable-baselines3 model is the .zip that model.save or bandit_gym.rl.TrainedPolicy.save "
               "writes")
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise ValueError(f"{_named(subject, path)} cannot be read ({error})") from error
    try:
        with zipfile.ZipFile(io.BytesIO(raw)) as archive:
            text = archive.read("data").decode() if "data" in archive.namelist() else None
    except _ZIP_ERRORS as error:
        raise ValueError(f"{_named(subject, path)} is not a zip file ({type(error).__name__}: {error}); "
                         f"{not_sb3}") from error
    if text is None:
        raise ValueError(f"{_named(subject, path)} holds no 'data' entry; {not_sb3}")
    try:
        data = json.loads(text)
    except ValueError as error:
        raise ValueError(f"{_named(subject, path)}: its 'data' entry is not JSON ({error}); {not_sb3}") from error
    if not isinstance(data, dict):
        raise ValueError(f"{_named(subject, path)}: its 'data' entry is not a JSON object; {not_sb3}")
    return raw, data


def _saved_by(data: dict[str, Any]) -> str | None:
    """The SB3 class that saved ``data``, as its policy class's module and its settings tell (None if unclear)."""
    entry = data.get("policy_class")
    module = entry.get("__module__") if isinstance(entry, dict) else None
    match = re.fullmatch(r"stable_baselines3\.(\w+)\.policies", module) if isinstance(module, str) else None
    if match is not None and match[1] != "common":
        return match[1].upper()
    if module in ("stable_baselines3.common.policies", "bandit_gym.armwise") or (module is None and
                                                                                 "gae_lambda" in data):
        return "PPO" if "clip_range" in data else "A2C"  # the on-policy classes share their policies
    if module is None and "exploration_rate" in data and "target_update_interval" in data:
        return "DQN"
    return None  # another library's policy: SB3's own load tells


def _class_of(entry: dict[str, Any], candidates: Any) -> type:
    """The one class of ``candidates`` that the readable text of a pickled class names (module and qualified
    name, which SB3 writes as the class's ``__module__`` and its ``__init__``)."""
    module, init = entry.get("__module__"), entry.get("__init__")
    match = _INIT.fullmatch(init) if isinstance(init, str) else None
    for candidate in candidates:
        if candidate.__module__ != module:
            continue
        if "__init__" in vars(candidate):
            if match is not None and match[1] == candidate.__qualname__:
                return candidate
        elif init is None and entry.get("__doc__") == candidate.__doc__:
            return candidate
    name = f"{module}.{match[1]}" if match is not None else str(module)
    allowed = ", ".join(sorted({f"{c.__module__}.{c.__qualname__}" for c in candidates}))
    raise _EntryError(f"it names the class {name}, not one of {allowed}")


def _policy_classes(cls: Any) -> list[type]:
    from stable_baselines3.common.on_policy_algorithm import OnPolicyAlgorithm

    classes = list(dict.fromkeys(cls.policy_aliases.values()))
    if issubclass(cls, OnPolicyAlgorithm):
        from bandit_gym.armwise import ArmwisePolicy

        classes.append(ArmwisePolicy)
    return classes


def _buffer_classes(cls: Any) -> list[type]:
    from stable_baselines3.common import buffers

    names = ("RolloutBuffer", "DictRolloutBuffer", "ReplayBuffer", "DictReplayBuffer", "NStepReplayBuffer")
    return [getattr(buffers, name) for name in names if hasattr(buffers, name)]


def _kwarg_classes() -> dict[str, tuple[type, ...]]:
    """The classes a policy's keyword arguments may name in a file read without unpickling."""
    import torch
    from stable_baselines3.common import torch_layers

    from bandit_gym.armwise import ArmFeatures

    extractors = tuple(getattr(torch_layers, name) for name in ("CombinedExtractor", "FlattenExtractor", "NatureCNN")
                       if hasattr(torch_layers, name))
    return {"optimizer_class": (torch.optim.Adam, torch.optim.AdamW, torch.optim.RMSprop, torch.optim.SGD),
            "activation_fn": (torch.nn.Tanh, torch.nn.ReLU, torch.nn.LeakyReLU, torch.nn.ELU, torch.nn.GELU,
                              torch.nn.SiLU, torch.nn.Sigmoid),
            "features_extractor_class": (*extractors, ArmFeatures)}


def _policy_kwargs(entry: dict[str, Any]) -> dict[str, Any]:
    """A policy's keyword arguments from their readable text: JSON values as they are, and classes named among
    ``_kwarg_classes`` (SB3's A2C stores ``optimizer_class=RMSprop`` there by default)."""
    if entry.get(":type:") != "<class 'dict'>":
        raise _EntryError(f"it is a {entry.get(':type:')}, not a dict")
    allowed = _kwarg_classes()
    kwargs: dict[str, Any] = {}
    for name, value in entry.items():
        if name in (":type:", ":serialized:"):
            continue
        if isinstance(value, str):  # the text of an object that is not JSON
            found = [candidate for candidate in allowed.get(name, ()) if str(candidate) == value]
            if not found:
                raise _EntryError(f"its {name!r} is {value[:100]!r}, not a JSON value nor one of the classes allowed "
                              f"there ({', '.join(str(c) for c in allowed.get(name, ())) or 'none'})")
            value = found[0]
        kwargs[name] = value
    return kwargs


def _dtype(text: Any, kinds: str) -> np.dtype:
    if not isinstance(text, str) or not re.fullmatch(r"[a-z]+[0-9]*", text):
        raise _EntryError(f"its dtype {text!r} is not a numeric dtype name")
    dtype = np.dtype(text)
    if dtype.kind not in kinds:
        raise _EntryError(f"its dtype {text!r} is not one of the kinds {kinds!r}")
    return dtype


def _numbers(text: Any, dtype: np.dtype, shape: tuple[int, ...], what: str) -> np.ndarray:
    """The array that numpy printed as ``text`` (a scalar for all entries, or every entry), of ``shape``."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        text = str(text)
    if not isinstance(text, str) or not re.fullmatch(rf"{_NUMBER}|\[[\[\]\s0-9.+\-einfa]*\]", text):
        raise _EntryError(f"its {what} {str(text)[:80]!r} is not a printed number or array")
    tokens = re.findall(_NUMBER, text)
    size = int(np.prod(shape, dtype=np.int64))
    if len(tokens) not in (1, size) or (len(tokens) == 1 and text.startswith("[") and size != 1):
        raise _EntryError(f"its {what} holds {len(tokens)} numbers for the shape {shape} (an array printed in part)")
    try:
        values = [int(token) for token in tokens] if dtype.kind in "iu" else [float(token) for token in tokens]
        array = np.array(values, dtype=dtype)
    except (ValueError, OverflowError) as error:
        raise _EntryError(f"its {what} {text[:80]!r} does not fit {dtype} ({error})") from error
    return np.full(shape, array[0], dtype=dtype) if len(tokens) == 1 else array.reshape(shape)


def _shape(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.replace(" ", "").split(",") if part)


def _space(entry: dict[str, Any]) -> Any:
    """A Gymnasium space from the readable text SB3 writes beside its pickle: a Dict of Boxes (from the text of its
    ``spaces``, ``{'key': Box(low, high, shape, dtype), ...}``), a Discrete or a MultiDiscrete."""
    from gymnasium import spaces

    kind = entry.get(":type:")
    if kind == "<class 'gymnasium.spaces.dict.Dict'>":
        text = entry.get("spaces")
        if not isinstance(text, str) or not _DICT_OF_BOXES.fullmatch(text):
            raise _EntryError("its text is not a dict of Boxes with numeric bounds printed in full")
        boxes: dict[str, Any] = {}
        for match in _BOXES.finditer(text):
            shape, dtype = _shape(match["shape"]), _dtype(match["dtype"], "fiub")
            boxes[match["key"]] = spaces.Box(_numbers(match["low"], dtype, shape, "low bound"),
                                             _numbers(match["high"], dtype, shape, "high bound"), shape, dtype)
        if not boxes:
            raise _EntryError("it is an empty Dict")
        return spaces.Dict(boxes)
    if kind == "<class 'gymnasium.spaces.discrete.Discrete'>":
        dtype = _dtype(entry.get("dtype", "int64"), "iu")
        n, start = (_numbers(entry.get(name, 0), dtype, (), name) for name in ("n", "start"))
        return spaces.Discrete(int(n), start=int(start), dtype=dtype.type)
    if kind == "<class 'gymnasium.spaces.multi_discrete.MultiDiscrete'>":
        dtype, sizes = _dtype(entry.get("dtype", "int64"), "iu"), entry.get("_shape")
        if not isinstance(sizes, list) or not all(isinstance(size, int) and size >= 0 for size in sizes):
            raise _EntryError(f"its shape {sizes!r} is not a list of sizes")
        nvec, start = (_numbers(entry.get(name, 0), dtype, tuple(sizes), name) for name in ("nvec", "start"))
        return spaces.MultiDiscrete(nvec, dtype=dtype.type, start=start)
    raise _EntryError(f"it is a {kind}; read without unpickling: a Dict of Boxes, a Discrete or a MultiDiscrete")


def _constant(entry: dict[str, Any], default: Any) -> Any:
    """The value of a constant schedule from its readable text (``FloatSchedule(ConstantSchedule(val=x))``), else
    ``default``: the schedules only steer training, not ``predict``."""
    text, value = entry.get("value_schedule"), entry.get("val")
    match = _CONSTANT.fullmatch(text) if isinstance(text, str) else None
    if match is not None:
        return float(match[1])
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return default


def _default(cls: Any, name: str) -> Any:
    """The SB3 class's default for the keyword ``name`` (None without one)."""
    parameter = inspect.signature(cls.__init__).parameters.get(name)
    return None if parameter is None or parameter.default is inspect.Parameter.empty else parameter.default


def _safe_objects(data: dict[str, Any], cls: Any, path: Path, subject: str) -> dict[str, Any]:
    """SB3's ``custom_objects`` for every pickled entry of ``data`` (so that SB3 unpickles none), each rebuilt
    without unpickling, or a ValueError naming the entry that cannot be."""
    rebuild: dict[str, Any] = {
        "policy_class": lambda entry: _class_of(entry, _policy_classes(cls)),
        "observation_space": _space,
        "action_space": _space,
        "policy_kwargs": _policy_kwargs,
        "rollout_buffer_class": lambda entry: _class_of(entry, _buffer_classes(cls)),
        "replay_buffer_class": lambda entry: _class_of(entry, _buffer_classes(cls)),
        # training settings only (predict never reads them): a constant, else the class's default
        "learning_rate": lambda entry: _constant(entry, _default(cls, "learning_rate")),
        "clip_range": lambda entry: _constant(entry, _default(cls, "clip_range")),
        "clip_range_vf": lambda entry: _constant(entry, _default(cls, "clip_range_vf")),
        "train_freq": lambda entry: _default(cls, "train_freq"),
        # rebuilt by SB3 itself when the model is set up (from learning_rate, the exploration settings)
        "lr_schedule": lambda entry: None,
        "exploration_schedule": lambda entry: None,
        # the state of an interrupted training run, which learn() starts afresh when it is None
        **{name: (lambda entry: None) for name in ("_last_obs", "_last_original_obs", "_last_episode_starts",
                                                   "ep_info_buffer", "ep_success_buffer")},
    }
    custom: dict[str, Any] = {"env": None} if "env" in data else {}  # SB3 would make an env named in the file
    for key, entry in data.items():
        if not (isinstance(entry, dict) and ":serialized:" in entry):
            continue
        if key not in rebuild:
            raise _refusal(subject, path, key, f"a {entry.get(':type:')}")
        try:
            custom[key] = rebuild[key](entry)
        except (_EntryError, ValueError, TypeError) as error:
            raise _refusal(subject, path, key, str(error)) from None
    return custom


def _check_weights(raw: bytes, path: Path, subject: str) -> None:
    """Read every ``.pth`` of the zip with torch's ``weights_only=True`` (tensors and plain containers only).
    SB3 >= 2.8 (2.9 here) loads them that way itself; 2.3.2 to 2.7 did not (``weights_only=False``), and the
    ``rl`` extra allows them, so the default loader checks them first."""
    import torch

    with zipfile.ZipFile(io.BytesIO(raw)) as archive:
        for name in archive.namelist():
            if os.path.splitext(name)[1] != ".pth":  # the entries SB3 hands to torch.load
                continue
            try:
                with archive.open(name) as handle:
                    torch.load(handle, map_location="cpu", weights_only=True)
            except Exception as error:
                raise ValueError(f"{_named(subject, path)}: its entry {name!r} is not plain weights (torch.load with "
                                 f"weights_only=True: {type(error).__name__}: {str(error)[:300]}); loading it runs "
                                 f"code from the file: pass {TRUST_PICKLES} only if you trust the file") from error


def _load_model(path: Path, algo: str | None, trust_pickles: bool, subject: str) -> Any:
    """``load_model``, with errors that begin with ``subject`` (the argument the caller was given)."""
    algo = check.choice("algo", "PPO" if algo is None else algo, ALGORITHMS)
    if not isinstance(trust_pickles, bool):
        raise TypeError(f"trust_pickles must be True or False, got {trust_pickles!r}")
    raw, data = _read_zip(path, subject)
    saved = _saved_by(data)
    if saved is not None and saved != algo:
        advice = (f"pass algo={saved!r}" if saved in ALGORITHMS else
                  f"{saved} is not one of the classes read here")
        raise ValueError(f"{_named(subject, path)} could not be loaded as a {algo} (it was saved by {saved}, as its "
                         f"policy class and settings show); {advice} (algo= one of {', '.join(ALGORITHMS)})")
    cls = getattr(stable_baselines3, algo)
    custom = None
    if not trust_pickles:
        custom = _safe_objects(data, cls, path, subject)
        _check_weights(raw, path, subject)
    try:
        return cls.load(io.BytesIO(raw), device="cpu", custom_objects=custom)
    except Exception as error:
        raise ValueError(f"{_named(subject, path)} could not be loaded as a {algo} ({type(error).__name__}: "
                         f"{error}); pass the SB3 class that saved it: algo= one of {', '.join(ALGORITHMS)}") from error


def load_model(path: str | Path, algo: str | None = None, trust_pickles: bool = False) -> Any:
    """The SB3 model saved in the ``.zip`` at ``path`` (``model.save``), loaded on the CPU as the SB3 class
    ``algo`` (``"PPO"``, ``"DQN"`` or ``"A2C"``; None: ``"PPO"``).

    By default nothing in the file is unpickled: SB3 pickles (cloudpickle) every setting that is not plain JSON,
    and each of those is rebuilt from the readable text SB3 writes beside it instead: the observation space (a
    Dict of Boxes) and the action space (Discrete, MultiDiscrete), the policy class (one of ``algo``'s policies,
    ``MultiInputPolicy`` etc., or ``bandit_gym.armwise.ArmwisePolicy``), the policy's keyword arguments (JSON
    values, and a few torch and SB3 classes by name), the buffer classes; the schedules and other training-only
    settings become constants (the file's when it states one, else SB3's defaults: a model read this way predicts
    as saved, but training it further may differ); the weights are read with torch's ``weights_only=True``. A
    file with another pickled entry is refused (ValueError naming it). ``trust_pickles=True`` loads the file as
    SB3 does (``algo.load``), which unpickles it: it runs any code the file holds, so pass it only for files you
    trust. Errors (ValueError): not a zip, saved by another SB3 class than ``algo``."""
    return _load_model(Path(path), algo, trust_pickles, f"path={str(path)!r}")


def _normalize_space(space: Any, name: str, arrays: dict[str, np.ndarray]) -> dict[str, Any] | None:
    """The JSON description of a space (its bounds into ``arrays`` under ``name``), None if not one of ours."""
    from gymnasium import spaces

    if isinstance(space, spaces.Dict):
        parts = [_normalize_space(box, f"{name}/{i}", arrays) for i, box in enumerate(space.spaces.values())]
        return None if None in parts else {"type": "Dict", "keys": list(space.spaces), "spaces": parts}
    if isinstance(space, spaces.Box):
        arrays[f"{name}/low"], arrays[f"{name}/high"] = space.low, space.high
        return {"type": "Box", "dtype": str(space.dtype)}
    if isinstance(space, spaces.Discrete):
        return {"type": "Discrete", "n": int(space.n), "start": int(space.start), "dtype": str(space.dtype)}
    if isinstance(space, spaces.MultiDiscrete):
        arrays[f"{name}/nvec"], arrays[f"{name}/start"] = space.nvec, space.start
        return {"type": "MultiDiscrete", "dtype": str(space.dtype)}
    return None


def _space_of(spec: Any, name: str, data: Any) -> Any:
    from gymnasium import spaces

    if spec is None:
        return None
    kind = spec["type"]
    if kind == "Dict":
        return spaces.Dict({key: _space_of(part, f"{name}/{i}", data)
                            for i, (key, part) in enumerate(zip(spec["keys"], spec["spaces"], strict=True))})
    if kind == "Box":
        low, high = data[f"{name}/low"], data[f"{name}/high"]
        return spaces.Box(low, high, low.shape, _dtype(spec["dtype"], "fiub"))
    if kind == "Discrete":
        return spaces.Discrete(int(spec["n"]), start=int(spec["start"]), dtype=_dtype(spec["dtype"], "iu").type)
    if kind == "MultiDiscrete":
        return spaces.MultiDiscrete(data[f"{name}/nvec"], dtype=_dtype(spec["dtype"], "iu").type,
                                    start=data[f"{name}/start"])
    raise ValueError(f"unknown space type {kind!r}")


def save_normalize(normalize: Any, path: str | Path) -> Path:
    """Write ``VecNormalize`` statistics without pickles: one ``.npz`` of arrays (the running means, variances and
    counts; the observation space's bounds) and a JSON header (the settings, ``norm_obs_keys``, the spaces), which
    ``load_normalize`` reads back by default. Return the path."""
    from stable_baselines3.common.running_mean_std import RunningMeanStd

    if not isinstance(normalize, VecNormalize):
        raise TypeError(f"normalize must be a VecNormalize, got {type(normalize).__name__}")
    arrays: dict[str, np.ndarray] = {}
    observation = _normalize_space(normalize.observation_space, "observation_space", arrays)
    if observation is None:
        raise TypeError(f"save_normalize writes the statistics of a Box or Dict-of-Boxes observation, not of "
                        f"{normalize.observation_space}")
    stats: Any = getattr(normalize, "obs_rms", None)
    keys = list(stats) if isinstance(stats, dict) else None
    running = {f"obs_rms/{i}": stats[key] for i, key in enumerate(keys)} if keys is not None else (
        {"obs_rms": stats} if isinstance(stats, RunningMeanStd) else {})
    for name, rms in {**running, "ret_rms": normalize.ret_rms}.items():
        arrays.update({f"{name}/mean": np.asarray(rms.mean), f"{name}/var": np.asarray(rms.var),
                       f"{name}/count": np.asarray(rms.count)})
    header = {"format": NORMALIZE_FORMAT, "obs_rms": None if stats is None else keys if keys is not None else "all",
              "norm_obs_keys": normalize.norm_obs_keys, "num_envs": int(normalize.num_envs),
              "observation_space": observation,
              "action_space": _normalize_space(normalize.action_space, "action_space", arrays),
              **{name: getattr(normalize, name) for name in ("norm_obs", "norm_reward", "training")},
              **{name: float(getattr(normalize, name)) for name in ("clip_obs", "clip_reward", "gamma", "epsilon")}}
    path = Path(path)
    with open(path, "wb") as handle:  # an open file: np.savez would add .npz to another suffix
        np.savez(handle, header=np.array(json.dumps(header)), **arrays)  # type: ignore[arg-type]
    return path


def _read_normalize(path: Path, subject: str) -> Any:
    """The ``VecNormalize`` statistics of an ``.npz`` written by ``save_normalize`` (nothing unpickled)."""
    from stable_baselines3.common.running_mean_std import RunningMeanStd

    def running(name: str) -> RunningMeanStd:
        mean, var = data[f"{name}/mean"], data[f"{name}/var"]
        rms = RunningMeanStd(shape=mean.shape)
        rms.mean, rms.var = (value[()] if value.ndim == 0 else value for value in (mean, var))
        rms.count = float(data[f"{name}/count"])
        return rms

    try:
        with np.load(path, allow_pickle=False) as data:
            header = json.loads(str(data["header"]))
            if header.get("format") != NORMALIZE_FORMAT:
                raise ValueError(f"format {header.get('format')!r}, this version reads {NORMALIZE_FORMAT}")
            observation = _space_of(header["observation_space"], "observation_space", data)
            action = _space_of(header["action_space"], "action_space", data)
            keys = header["obs_rms"]
            stats = None if keys is None else running("obs_rms") if keys == "all" else {
                key: running(f"obs_rms/{i}") for i, key in enumerate(keys)}
            ret_rms = running("ret_rms")
    except (ValueError, KeyError, TypeError, OSError, zipfile.BadZipFile, _EntryError) as error:
        raise ValueError(f"{_named(subject, path)} is not observation statistics written by "
                         f"bandit_gym.rl.save_normalize (TrainedPolicy.save's {NORMALIZE_FILE}): "
                         f"{type(error).__name__}: {error}") from error
    num = int(header["num_envs"])
    state: dict[str, Any] = {
        "num_envs": num, "observation_space": observation, "action_space": action,
        "reset_infos": [{} for _ in range(num)], "_seeds": [None] * num, "_options": [{} for _ in range(num)],
        "render_mode": None, "metadata": {"render_modes": []}, "norm_obs_keys": header["norm_obs_keys"],
        "ret_rms": ret_rms, "old_reward": np.array([]),
        **{name: bool(header[name]) for name in ("norm_obs", "norm_reward", "training")},
        **{name: float(header[name]) for name in ("clip_obs", "clip_reward", "gamma", "epsilon")}}
    if stats is not None:
        state["obs_rms"] = stats
        if isinstance(observation, gym.spaces.Dict):
            state["obs_spaces"] = observation.spaces
    normalize = VecNormalize.__new__(VecNormalize)
    normalize.__setstate__(state)  # as unpickling a VecNormalize.save file does (no venv attached)
    return normalize


def _load_normalize(path: Path, trust_pickles: bool, subject: str) -> Any:
    """``load_normalize``, with errors that begin with ``subject``."""
    if not isinstance(trust_pickles, bool):
        raise TypeError(f"trust_pickles must be True or False, got {trust_pickles!r}")
    if not path.is_file():
        raise FileNotFoundError(f"{_named(subject, path)} does not exist")
    if path.suffix == ".npz" or zipfile.is_zipfile(path):
        normalize = _read_normalize(path, subject)
    elif not trust_pickles:
        raise ValueError(f"{_named(subject, path)} is not an .npz of statistics (bandit_gym.rl.save_normalize) but, as "
                         f"VecNormalize.save writes them, a pickle, and unpickling runs any code the file holds: pass "
                         f"{TRUST_PICKLES} only if you trust the file, or save the statistics once with "
                         f"bandit_gym.rl.save_normalize (TrainedPolicy.save writes {NORMALIZE_FILE})")
    else:
        try:
            with open(path, "rb") as handle:  # SB3's own file (VecNormalize.save)
                normalize = pickle.load(handle)
        except Exception as error:
            raise ValueError(f"{_named(subject, path)} is not VecNormalize statistics saved by VecNormalize.save "
                             f"({type(error).__name__}: {error})") from error
        if not isinstance(normalize, VecNormalize):
            raise ValueError(f"{_named(subject, path)} holds a {type(normalize).__name__}, not the VecNormalize "
                             "statistics that VecNormalize.save writes")
    normalize.training, normalize.norm_reward = False, False
    # what set_venv would add, without which VecNormalize.save (TrainedPolicy.save) fails on the loaded object
    vars(normalize).setdefault("class_attributes", dict(inspect.getmembers(type(normalize))))
    vars(normalize).setdefault("returns", np.zeros(normalize.num_envs))
    return normalize


def load_normalize(path: str | Path, trust_pickles: bool = False) -> Any:
    """The ``VecNormalize`` statistics at ``path`` (no venv attached), frozen for play (``training`` and
    ``norm_reward`` off). By default ``path`` must be an ``.npz`` written by ``save_normalize`` (as
    ``TrainedPolicy.save`` writes ``vecnormalize.npz``), read without unpickling; a ``.pkl`` of
    ``VecNormalize.save`` is a pickle, read only with ``trust_pickles=True``, which runs any code the file holds
    (else a ValueError). A file that is neither is a ValueError naming it."""
    return _load_normalize(Path(path), trust_pickles, f"path={str(path)!r}")


def _normalize_beside(model: Path, trust_pickles: bool, subject: str, named_alone: bool) -> Any:
    """The statistics saved beside the model ``.zip`` ``model``: its folder's ``vecnormalize.npz``, else its
    ``vecnormalize.pkl`` with ``trust_pickles`` (else a ValueError that names the file and the choices), else
    None. ``named_alone``: the caller was given the ``.zip`` itself, not the folder (the choices then include
    ``normalize=``)."""
    safe, pickled = model.parent / NORMALIZE_FILE, model.parent / NORMALIZE_PICKLE
    if safe.is_file():
        return _load_normalize(safe, trust_pickles, subject)
    if not pickled.is_file():
        return None
    if trust_pickles:
        return _load_normalize(pickled, trust_pickles, subject)
    if named_alone:
        raise ValueError(f"{subject}: {pickled} lies beside {model.name}, observation statistics as a pickle "
                         f"(VecNormalize.save), which is not read without the opt-in since unpickling runs any code "
                         f"the file holds; choose the statistics: normalize= (a VecNormalize, or the path of an .npz "
                         f"of bandit_gym.rl.save_normalize), or {TRUST_PICKLES} to read {pickled} if you trust it")
    folder = str(model.parent)
    raise ValueError(f"{subject}: {pickled} holds the observation statistics as a pickle (VecNormalize.save) and "
                     f"there is no {NORMALIZE_FILE} beside it; unpickling runs any code the file holds: pass "
                     f"{TRUST_PICKLES} only if you trust the file, or re-save the folder once: "
                     f"bandit_gym.rl.load({folder!r}, trust_pickles=True).save({folder!r}) writes {NORMALIZE_FILE}")


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


def train(env_id: str, algo: str = "PPO", total_timesteps: int | None = None, seed: int | None = 0,
          verbose: int = 0, env_kwargs: dict[str, Any] | None = None, **overrides: Any) -> TrainedPolicy:
    """Train ``algo`` on ``env_id`` with its family's recipe (``overrides`` replace recipe fields, e.g.
    ``num_envs=8``, ``algo_kwargs={"learning_rate": 1e-3}``, ``discrete=False``), for ``total_timesteps``
    steps (the recipe's default if None). ``env_kwargs`` go to ``gym.make_vec`` (e.g. ``{"budget": 100}``).
    Returns the model and its observation statistics, ready for ``SB3Agent``."""
    recipe = recipe_for(env_id, algo, **overrides)
    venv = make_vec_env(env_id, recipe.num_envs, recipe.discrete, recipe.normalize, **(env_kwargs or {}))
    venv.seed(seed)
    cls = getattr(stable_baselines3, recipe.algo)
    model = cls("MultiInputPolicy", venv, seed=seed, verbose=verbose, device="cpu", **recipe.algo_kwargs)
    steps = recipe.total_timesteps if total_timesteps is None else check.integer("total_timesteps",
                                                                                 total_timesteps, minimum=1)
    model.learn(total_timesteps=steps)
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
    pure = family_of_id(recipe.env_id, **recipe.env_kwargs).pure_exploration
    gamma = recipe.algo_kwargs.get("gamma", 0.99)
    venv = make_vec_env(recipe.env_id, recipe.num_envs, discrete=pure, shaped=recipe.shaped and pure,
                        normalize={"norm_obs": False, "norm_reward": True, "gamma": gamma}, **recipe.env_kwargs)
    venv.seed(seed)
    model = PPO(ArmwisePolicy, venv, seed=seed, verbose=verbose, device="cpu", **recipe.algo_kwargs)
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
