"""The arm-wise policy's weights file, one format for its two writers: ``bandit_gym.rl.armwise`` (torch) and
``bandit_gym.rl.jax_armwise`` (JAX, without torch). An ``.npz`` without pickles: a JSON ``header`` (the format
version first, then the writer's fields: the hidden size, the feature options, the training env's observation
shapes, and the caller's metadata) and one float32 array ``w/<name>`` per entry of the torch policy's state dict.
Imports neither torch nor JAX."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

FORMAT = 1
"""The version written; ``read`` refuses another."""


def write(path: str | Path, header: Mapping[str, Any], arrays: Mapping[str, Any]) -> Path:
    """Write ``arrays`` (state-dict name -> array, stored as float32) with ``header`` (JSON values) to ``path``,
    creating its folder; return the path."""
    if "format" in header:
        raise ValueError("the header's 'format' is the file's version, set by the writer: choose another key")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    stored = {f"w/{name}": np.asarray(value, dtype=np.float32) for name, value in arrays.items()}
    np.savez_compressed(path, header=np.array(json.dumps({"format": FORMAT, **header})), **stored)  # type: ignore[arg-type]
    return path


def read(path: str | Path) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """The arrays (state-dict name -> float32 array) and the header of a weights file; a file of another format
    version is refused, naming both versions."""
    with np.load(Path(path), allow_pickle=False) as data:
        header = json.loads(str(data["header"]))
        if header.get("format") != FORMAT:
            raise ValueError(f"{path}: weights format {header.get('format')!r}, this version reads {FORMAT}")
        arrays = {key[2:]: data[key].copy() for key in data.files if key.startswith("w/")}
    return arrays, header
