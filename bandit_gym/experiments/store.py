"""The results folder a run writes, cell by cell: ``CellStore`` (atomic writes, the lock that keeps a second run out,
the provenance of every cell)."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import os
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from bandit_gym.agents.registry import loaded_class
from bandit_gym.experiments.cells import Cell
from bandit_gym.experiments.spec import LAYOUT_FILE, LOCK_FILE, ExperimentSpec
from bandit_gym.provenance import Recorded, agent_fingerprint, env_fingerprint, record, stale_reason, stored
from bandit_gym.registration import JAX_NAMESPACE


class CellStore:
    """Where finished cells live: a folder of ``.npz`` files (written atomically), or memory.

    Every stored cell is verified when it is first looked at (``damage``): a file that does not load, lacks
    a metric or holds arrays of the wrong shape, type or values is damaged. With ``heal=True`` (a run) a damaged
    cell is moved aside into ``cells/damaged/`` (never deleted, never over an earlier one), reported in
    ``damaged`` and counts as missing, so that the run recomputes it; with ``heal=False`` (reading a folder) it is
    a ValueError that names the file.

    A store that heals is a run's: it takes the folder's lock (a second run on the folder is refused while it
    holds it), refuses a folder of files it did not write, and writes ``spec.json`` and ``layout.json``; call
    ``close`` when done. A store that does not heal only reads: it creates, moves and deletes nothing.

    Provenance. Every cell written to a folder records the fingerprints of its agent's code and of its env's code
    and the package version (``bandit_gym.provenance``). A run's store counts a cell whose agent's code, env's code
    or version changed as missing, so the run recomputes it (``stale`` says why; ``force=True`` counts every stored
    cell as missing); a reading store reports such cells in ``stale`` and serves them. Reading compares only agents
    whose class it can find without importing anything (built-in and registered names, import paths of modules
    already imported), and the env only where its entry point's module is imported or built in."""

    def __init__(self, spec: ExperimentSpec, out: str | Path | None, heal: bool = True, force: bool = False) -> None:
        self.spec = spec
        self.memory: dict[str, dict[str, np.ndarray]] = {}
        self.heal = heal
        self.force = force
        #: the damaged cells moved aside by this store: "cells/NAME.npz (why) -> cells/damaged/NAME.npz"
        self.damaged: list[str] = []
        #: why stored cells were not made by the code installed now -> how many cells
        self.stale: dict[str, int] = {}
        #: stored cells found sound and current (a run reuses them)
        self.reused = 0
        self._verified: set[str] = set()
        self._codes: dict[int, str | None] = {}
        self._recorded: dict[str, Recorded] = {}
        self._lock: Any = None
        self.folder = None if out is None else Path(out)
        if self.folder is not None and heal:
            self._open_for_writing(self.folder)

    def _open_for_writing(self, folder: Path) -> None:
        spec_file = folder / "spec.json"
        written = json.dumps(self.spec.to_dict(), indent=2, sort_keys=True)
        if spec_file.exists() and spec_file.read_text() != written:
            raise ValueError(f"{folder} holds the results of a different spec; use another output folder")
        if not spec_file.exists():
            foreign = [name for name in ("results.csv", LAYOUT_FILE) if (folder / name).exists()]
            foreign += ["cells/*.npz"] if any((folder / "cells").glob("*.npz")) else []
            if foreign:
                raise ValueError(f"{folder} holds {', '.join(foreign)} but no spec.json: files that no run of a spec "
                                 "wrote there, which a run would overwrite; give an empty or new output folder")
        (folder / "cells").mkdir(parents=True, exist_ok=True)
        self._lock = _lock(folder)
        for stale in (folder / "cells").glob("*.npz.tmp"):  # half-written by a killed run (we hold the lock)
            stale.unlink()
        _write_atomic(spec_file, written)
        layout = [dataclasses.asdict(entry) for entry in self.spec.layout]
        _write_atomic(folder / LAYOUT_FILE, json.dumps({"agents": layout}, indent=2))

    def close(self) -> None:
        """Release the folder's lock (a run's store)."""
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    def _path(self, cell: Cell) -> Path:
        assert self.folder is not None
        return self.folder / "cells" / f"{cell.key(self.spec)}.npz"

    def has(self, cell: Cell) -> bool:
        """Whether the cell is stored and sound (see the class docstring for a damaged one), and, in a run, made
        by the agent's code installed now (else it is counted in ``stale`` and recomputed)."""
        key = cell.key(self.spec)
        if key in self.memory or key in self._verified:
            return True
        if self.folder is None or not self._path(cell).exists():
            return False
        why = self.damage(cell)
        if why is None:
            current = self._current(cell)
            if current is not None:
                self.stale[current] = self.stale.get(current, 0) + 1
                if self.heal:
                    return False
            self._verified.add(key)
            self.reused += 1
            return True
        path = self._path(cell)
        if not self.heal:
            raise ValueError(f"{path} is damaged ({why}); run the same spec with out={str(self.folder)!r} to "
                             "recompute it (the damaged file is moved aside, not deleted)")
        aside = _free_name(path.parent / "damaged" / path.name)
        aside.parent.mkdir(exist_ok=True)
        os.replace(path, aside)
        self.damaged.append(f"{path.relative_to(self.folder)} ({why}) -> {aside.relative_to(self.folder)}")
        warnings.warn(f"{path} was damaged ({why}); moved to {aside} and recomputed", stacklevel=2)
        return False

    def _current(self, cell: Cell) -> str | None:
        """Why the stored ``cell`` was not made by the agent's code installed now (``--force``: "recomputed on
        request"), or None if it was, or if that cannot be known without importing code (a reading store)."""
        recorded = self._recorded.pop(cell.key(self.spec), Recorded(None, None, None))
        if self.force:
            return "recomputed on request (force)"
        code = self._code(cell.agent)
        if code is None:
            return None
        return stale_reason(self.spec.agents[cell.agent].display, recorded, code, self._env_id(), self._env)

    def _env_id(self) -> str:
        """The id of the registered env that plays the cells (the JAX twin's for a JAX spec)."""
        return f"{JAX_NAMESPACE}/{self.spec.env}" if self.spec.backend == "jax" else self.spec.env

    @functools.cached_property
    def _env(self) -> str | None:
        """The fingerprint of the env's code as installed and registered now (read once per store); None for a
        reading store that cannot read it without importing code."""
        return env_fingerprint(self._env_id(), imported_only=not self.heal)

    def _code(self, index: int) -> str | None:
        """The fingerprint of agent ``index``'s code as installed now; None for a reading store that cannot find
        its class without importing code."""
        if index not in self._codes:
            agent = self.spec.agents[index]
            cls = agent.cls if self.heal else loaded_class(agent.name)
            if self.spec.backend == "jax":  # the JAX twin's code made the cells (reading imports no JAX)
                jax_agents = sys.modules.get("bandit_gym.jax.agents")
                cls = None if jax_agents is None else jax_agents.JAX_AGENTS.get(agent.name)
            self._codes[index] = None if cls is None else agent_fingerprint(cls, agent.params)
        return self._codes[index]

    def damage(self, cell: Cell) -> str | None:
        """What is wrong with the stored file of ``cell``, or None if it is sound: it loads, and holds exactly
        the arrays the cell wrote (its budgets, its first run, and each metric as finite numbers of shape
        ``(runs of the chunk, budgets of the cell)``)."""
        budgets = list(self.spec.budgets) if cell.budget is None else [cell.budget]
        try:
            with np.load(self._path(cell), allow_pickle=False) as data:
                arrays = {key: data[key] for key in data.files}
        except Exception as error:  # any failure to read the file is damage, named in the report
            return f"unreadable: {type(error).__name__}: {error}"
        self._recorded[cell.key(self.spec)] = stored(arrays)
        want = {"budgets", "first_run", *self.spec.metrics}
        if not want <= arrays.keys():
            return f"lacks {sorted(want - arrays.keys())}"
        if arrays["budgets"].tolist() != budgets or arrays["first_run"].tolist() != cell.runs(self.spec).start:
            return "budgets or first run differ from the cell's"
        shape = (len(cell.runs(self.spec)), len(budgets))
        for metric in want - {"budgets", "first_run"}:
            values = arrays[metric]
            if values.shape != shape:
                return f"{metric} has shape {values.shape}, not {shape}"
            if values.dtype.kind not in "biuf" or not np.isfinite(values).all():
                return f"{metric} holds non-numbers or non-finite values"
        return None

    def put(self, cell: Cell, data: dict[str, np.ndarray]) -> None:
        if self.folder is None:
            self.memory[cell.key(self.spec)] = data
            return
        code, env = self._code(cell.agent), self._env
        assert code is not None and env is not None  # a run's store finds every agent's class and its env
        handle, tmp = tempfile.mkstemp(dir=self._path(cell).parent, suffix=".npz.tmp")
        with os.fdopen(handle, "wb") as stream:
            np.savez(stream, **data, **record(code, env))  # type: ignore[arg-type]
        os.replace(tmp, self._path(cell))
        self._verified.add(cell.key(self.spec))  # sound and current: written by this run

    def get(self, cell: Cell) -> dict[str, np.ndarray]:
        if cell.key(self.spec) in self.memory:
            return self.memory[cell.key(self.spec)]
        if not self.has(cell):  # verified (and, in a run, moved aside if damaged)
            raise ValueError(f"{self._path(cell)} is missing; run the same spec with out={str(self.folder)!r}")
        with np.load(self._path(cell), allow_pickle=False) as data:
            return {key: data[key] for key in data.files}


def _write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file beside it: a reader sees the old file or the new one."""
    handle, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w") as stream:
            stream.write(text)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _lock(folder: Path) -> Any:
    """Hold the run lock of ``folder`` (``LOCK_FILE``, an advisory ``flock``) and return its open file, or refuse
    if another run holds it. Where ``fcntl`` does not exist (Windows) there is no lock."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        return None
    stream = open(folder / LOCK_FILE, "a")  # noqa: SIM115 - held open until the run ends
    try:
        fcntl.flock(stream.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        stream.close()
        raise ValueError(f"{folder} is being written by another run (it holds {folder / LOCK_FILE}); wait for it "
                         "to finish, or give another output folder") from None
    return stream



def _free_name(path: Path) -> Path:
    """``path``, or ``path`` with ``.1``, ``.2``, ... appended if taken: a moved-aside file never replaces another."""
    candidate, number = path, 0
    while candidate.exists():
        number += 1
        candidate = path.with_name(f"{path.name}.{number}")
    return candidate
