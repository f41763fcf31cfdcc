"""Rebuilding the pickled entries of a stable-baselines3 model's ``data`` without unpickling them: SB3 writes
beside each cloudpickle blob a readable text (the class's module and ``__init__``, a space's bounds, a schedule's
constant), from which the spaces, the policy and buffer classes, the policy's keyword arguments and the constant
schedules are rebuilt here; ``bandit_gym.rl.sb3_files`` hands them to SB3 as its ``custom_objects``. An entry that
cannot be rebuilt is an ``_EntryError`` saying why."""

from __future__ import annotations

import inspect
import re
from typing import Any

import numpy as np

_NUMBER = r"-?(?:inf|nan|\d+(?:\.\d*)?(?:e[+-]?\d+)?)"
_BOUND = rf"(?:{_NUMBER}|\[[\[\]\s0-9.+\-einfa]*\])"
_BOX = (rf"'(?P<key>[A-Za-z_][A-Za-z0-9_]*)': Box\((?P<low>{_BOUND}), (?P<high>{_BOUND}), "
        r"\((?P<shape>[0-9, ]*)\), (?P<dtype>[a-z]+[0-9]*)\)")
_BOXES = re.compile(_BOX)
_DICT_OF_BOXES = re.compile(r"\{(?:%s(?:, %s)*)?\}" % ((re.sub(r"\?P<\w+>", "", _BOX),) * 2))
_INIT = re.compile(r"<function ([A-Za-z_][\w.]*)\.__init__ at 0x[0-9a-fA-F]+>")
_CONSTANT = re.compile(rf"ConstantSchedule\(val=({_NUMBER})\)")


class _EntryError(Exception):
    """A pickled entry of a model's ``data`` that the default loader does not rebuild."""


_MOVED = {"bandit_gym.armwise": "bandit_gym.rl.armwise"}
"""Modules of the package's policy classes that moved: the module a file saved before names -> the one now."""


def _current(module: Any) -> Any:
    """The module a saved file's class entry names, as it is called now (``_MOVED``)."""
    return _MOVED.get(module, module) if isinstance(module, str) else module


def _saved_by(data: dict[str, Any]) -> str | None:
    """The SB3 class that saved ``data``, as its policy class's module and its settings tell (None if unclear)."""
    entry = data.get("policy_class")
    module = _current(entry.get("__module__")) if isinstance(entry, dict) else None
    match = re.fullmatch(r"stable_baselines3\.(\w+)\.policies", module) if isinstance(module, str) else None
    if match is not None and match[1] != "common":
        return match[1].upper()
    if module in ("stable_baselines3.common.policies", "bandit_gym.rl.armwise") or (module is None and
                                                                                    "gae_lambda" in data):
        return "PPO" if "clip_range" in data else "A2C"  # the on-policy classes share their policies
    if module is None and "exploration_rate" in data and "target_update_interval" in data:
        return "DQN"
    return None  # another library's policy: SB3's own load tells


def _class_of(entry: dict[str, Any], candidates: Any) -> type:
    """The one class of ``candidates`` that the readable text of a pickled class names (module and qualified
    name, which SB3 writes as the class's ``__module__`` and its ``__init__``)."""
    module, init = _current(entry.get("__module__")), entry.get("__init__")
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
        from bandit_gym.rl.armwise import ArmwisePolicy

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

    from bandit_gym.rl.armwise import ArmFeatures

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
