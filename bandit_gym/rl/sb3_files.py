"""Reading stable-baselines3 files without unpickling them: a model's ``.zip`` and the observation statistics of
``VecNormalize``. ``bandit_gym.rl.load`` and ``SB3Agent`` read policies through these functions.

A stable-baselines3 ``.zip`` holds a JSON ``data`` entry (the algorithm's settings, SB3's ``data_to_json``) and
torch weights (``*.pth``). SB3 stores every setting that is not plain JSON as a cloudpickle blob (an entry with a
``":serialized:"`` key: the policy class, the spaces, the schedules, ...) and ``BaseAlgorithm.load`` unpickles
each, which runs any code the file holds; ``VecNormalize.save`` writes one pickle. By default the loaders below
unpickle nothing: the blobs are replaced (SB3's ``custom_objects``) by objects rebuilt from the readable text that
``data_to_json`` writes beside each blob, and the observation statistics are read from an ``.npz``
(``save_normalize``). ``trust_pickles=True`` reads the files as SB3 does. The entries are rebuilt in
``bandit_gym.rl._sb3_entries``.
"""

from __future__ import annotations

import inspect
import io
import json
import os
import pickle
import zipfile
import zlib
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import stable_baselines3
from stable_baselines3.common.vec_env import VecNormalize

from bandit_gym import _validation as check
from bandit_gym.rl._sb3_entries import (
    _buffer_classes,
    _class_of,
    _constant,
    _default,
    _dtype,
    _EntryError,
    _policy_classes,
    _policy_kwargs,
    _saved_by,
    _space,
)
from bandit_gym.rl.saved import ALGORITHMS

TRUST_PICKLES = "trust_pickles=True"
"""The opt-in that lets the loaders unpickle (run code from) a file, as SB3 does."""

NORMALIZE_FILE = "vecnormalize.npz"
"""The observation statistics without pickles, written by ``TrainedPolicy.save`` (``save_normalize``)."""

NORMALIZE_PICKLE = "vecnormalize.pkl"
"""The observation statistics as SB3 saves them (``VecNormalize.save``, a pickle), read only with the opt-in."""

NORMALIZE_FORMAT = 1
"""Version of the ``.npz`` statistics files written by ``save_normalize``."""

_ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError,
               UnicodeDecodeError, OSError, KeyError)


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
    ``MultiInputPolicy`` etc., or ``bandit_gym.rl.armwise.ArmwisePolicy``), the policy's keyword arguments (JSON
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
