"""What made a stored result: the fingerprints of an agent's code and of its env's code, recorded in every cell of
an experiment.

A cell of ``bandit_gym.experiments`` stores, beside its numbers, the fingerprint of the agent class that played it
(``code_fingerprint``), the fingerprint of the env it played (``env_fingerprint``) and the package version. A run
over a folder recomputes the cells whose agent's code, env's code or package version changed and says so; reading a
folder reports the cells made by code other than what is installed now (``stale_reason``), and imports nothing to
find out.

The fingerprint is a SHA-256 digest of the source of every module the agent's code lives in: the modules of the
classes of its MRO (``object`` aside), and the modules that those import from their own top-level package,
followed through (``import`` statements read from the source, lazy ones inside functions included; for a built-in
agent, its family's helpers and compiled kernels under ``bandit_gym.agents``, say). A class with no source file (a
notebook cell, ``python -c``) is fingerprinted by its own source where ``inspect`` finds it, else by the compiled
code of its methods. Code that an agent reaches otherwise (a package other than its own, a function passed as a
parameter) is not covered; ``--force`` (``run_experiment(force=True)``) recomputes every cell.

An agent that reads its decisions from files (a trained policy's weights: ``Agent.data_files``) is fingerprinted
by its code and the bytes of those files (``agent_fingerprint``): a policy saved again under the same path is
another agent, and its cells are recomputed ("its data files changed").

An env is fingerprinted by its registration (``gymnasium.spec(id)``): its entry points (single and vector), the
keyword arguments registered with it, and the source of the modules its entry points live in, followed through
their imports as an agent's are (a built-in env, or a user's registered one: "the env ... changed" when a user
edits the module of a registered env or registers it again with other arguments).
"""

from __future__ import annotations

import ast
import functools
import hashlib
import inspect
import json
import marshal
import sys
import threading
import types
from collections.abc import Iterable, Iterator, Mapping
from importlib import util
from typing import Any, NamedTuple

import numpy as np

from bandit_gym._version import __version__

#: the arrays a cell stores beside its metrics (0-d string arrays, read without pickle)
CODE_KEY = "code"
VERSION_KEY = "version"
ENV_KEY = "env"
_PARSING = threading.Lock()


def code_fingerprint(cls: type) -> str:
    """The fingerprint (16 hex digits) of the code of agent class ``cls``: the same for the same source, different
    when a module it is made of changes (see the module docstring)."""
    return _fingerprint(cls)


def agent_fingerprint(cls: type, params: Mapping[str, Any]) -> str:
    """What made a cell of agent class ``cls`` built with ``params``: ``code_fingerprint(cls)``, then, for an
    agent that reads data files (``cls.data_files(params)``), ``+`` and a digest (16 hex digits) of their bytes
    (a missing file, or anything but a regular file, counts as missing: a results folder's spec naming a device
    reads nothing). Read afresh at every call: a file may change between two runs."""
    code = code_fingerprint(cls)
    data_files = getattr(cls, "data_files", None)
    files = data_files(params) if data_files is not None else ()
    if not files:
        return code
    digest = hashlib.sha256()
    for file in files:
        try:
            regular = file.is_file()  # a Path or a package resource
            digest.update(b"file\0" + file.read_bytes() if regular else b"missing\0")
        except OSError:
            digest.update(b"missing\0")
    return f"{code}+{digest.hexdigest()[:16]}"


@functools.lru_cache(maxsize=256)
def _fingerprint(cls: type) -> str:
    return _digest(_sources(cls))


def _digest(pieces: Iterable[tuple[str, bytes]]) -> str:
    digest = hashlib.sha256()
    for name, text in pieces:
        digest.update(name.encode())
        digest.update(b"\0")
        digest.update(text)
        digest.update(b"\0")
    return digest.hexdigest()[:16]


def _sources(cls: type) -> Iterator[tuple[str, bytes]]:
    """(name, bytes) of every piece of source the fingerprint covers, in a fixed order."""
    pieces = _module_sources([klass.__module__ for klass in cls.__mro__ if klass is not object])
    for klass in cls.__mro__:  # classes without a module file: their own code
        if klass is not object and klass.__module__ not in pieces:
            pieces[f"{klass.__module__}.{klass.__qualname__}"] = _class_code(klass)
    yield from sorted(pieces.items())


def _module_sources(modules: list[str]) -> dict[str, bytes]:
    """The source of each module of ``modules`` and of the modules of its own package that it imports, followed
    through, by module name (modules without a source file left out)."""
    seen: set[str] = set()
    todo = list(modules)
    pieces: dict[str, bytes] = {}
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        text = _module_source(name)
        if text is None:
            continue
        pieces[name] = text
        todo.extend(_imports(name, text))
    return pieces


def env_fingerprint(env_id: str, imported_only: bool = False) -> str | None:
    """The fingerprint (16 hex digits) of registered env ``env_id``: its entry points, registered keyword arguments
    and the source of the modules its entry points live in, followed through their imports (see the module
    docstring). With ``imported_only`` (reading a folder, which imports no code but this package's), None unless
    every entry point's module is already imported or is this package's own (its JAX twins aside: reading imports
    no JAX)."""
    import gymnasium as gym

    spec = gym.spec(env_id)
    pieces: dict[str, bytes] = {}
    for role, point in (("entry_point", spec.entry_point), ("vector_entry_point", spec.vector_entry_point)):
        if point is None:
            continue
        if isinstance(point, str):
            module, named = point.partition(":")[0], point.encode()
        else:
            module = getattr(point, "__module__", None) or ""
            named = f"{module}:{getattr(point, '__qualname__', repr(point))}".encode()
        if imported_only and module not in sys.modules and not _built_in(module):
            return None
        pieces[f"({role})"] = named
        found = _module_sources([module])
        if module not in found and not isinstance(point, str):  # a function or class without a module file
            found[f"{module}.{getattr(point, '__qualname__', '')}"] = _callable_code(point)
        pieces.update(found)
    pieces["(kwargs)"] = json.dumps(spec.kwargs, sort_keys=True, default=repr).encode()
    return _digest(sorted(pieces.items()))


def _module_source(name: str) -> bytes | None:
    """The source of module ``name`` as bytes, or None if it has no source file (``__main__`` of a notebook)."""
    module = sys.modules.get(name)
    path = getattr(module, "__file__", None)
    if path is None and module is None:
        try:
            spec = util.find_spec(name) if not name.startswith("__") else None
        except (ImportError, ValueError):
            spec = None
        path = None if spec is None else spec.origin
    if not isinstance(path, str) or not path.endswith(".py"):
        return None
    try:
        with open(path, "rb") as stream:
            return stream.read()
    except OSError:
        return None


@functools.lru_cache(maxsize=1024)
def _parsed(text: bytes) -> ast.Module | None:
    """The syntax tree of a module's source (None if it does not parse), parsed once per process per source: a
    folder read over and over (a reader beside a run) parses nothing again, and ``ast.parse`` in two threads at
    once can fail (CPython 3.11: "AST constructor recursion depth mismatch"), hence the lock."""
    try:
        with _PARSING:
            return ast.parse(text)
    except SyntaxError:
        return None


def _imports(name: str, text: bytes) -> list[str]:
    """The modules of ``name``'s own top-level package that its source imports (anywhere in the file)."""
    top = name.split(".")[0]
    package = name if _is_package(name) else name.rpartition(".")[0]
    tree = _parsed(text)
    if tree is None:
        return []
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1] + ([base] if base else []))
            for alias in node.names:  # ``from package import module`` reads the module, else the package
                found.append(f"{base}.{alias.name}" if _is_module(f"{base}.{alias.name}") else base)
    return [module for module in found if module == top or module.startswith(top + ".")]


def _is_module(name: str) -> bool:
    if name in sys.modules:
        return isinstance(sys.modules[name], types.ModuleType)
    try:
        return util.find_spec(name) is not None
    except (ImportError, ValueError):  # a parent that is not a package, or no such module
        return False


def _is_package(name: str) -> bool:
    module = sys.modules.get(name)
    return module is not None and hasattr(module, "__path__")


def _built_in(module: str) -> bool:
    """Whether ``module`` is one of this package's, whose source is read without importing JAX."""
    return module.startswith("bandit_gym.") and not module.startswith("bandit_gym.jax")


def _callable_code(point: Any) -> bytes:
    """The code of an entry point without a module file: a class's (``_class_code``), or a function's source or
    compiled code."""
    if isinstance(point, type):
        return _class_code(point)
    try:
        return inspect.getsource(point).encode()
    except (OSError, TypeError):
        code = getattr(point, "__code__", None)
        return marshal.dumps(code) if code is not None else repr(point).encode()


def _class_code(cls: type) -> bytes:
    """The source of a class without a module file, or the compiled code of its methods."""
    try:
        return inspect.getsource(cls).encode()
    except (OSError, TypeError):
        pass
    parts = [cls.__qualname__.encode()]
    for key, value in sorted(vars(cls).items()):
        function = getattr(value, "__func__", value)
        if isinstance(function, types.FunctionType):
            parts.append(key.encode() + marshal.dumps(function.__code__))
    return b"\0".join(parts)


def stored(arrays: Mapping[str, np.ndarray]) -> Recorded:
    """What a cell's arrays record of the code that made it; None for what it does not record (a cell written before
    cells recorded it) or records as anything but one string."""
    def text(key: str) -> str | None:
        value = arrays.get(key)
        return str(value[()]) if value is not None and value.shape == () and value.dtype.kind == "U" else None
    return Recorded(text(CODE_KEY), text(VERSION_KEY), text(ENV_KEY))


class Recorded(NamedTuple):
    """What a stored cell records of the code that made it (None: not recorded)."""

    code: str | None
    version: str | None
    env: str | None


def stale_reason(label: str, recorded: Recorded, code: str, env_id: str, env: str | None) -> str | None:
    """Why a cell of agent ``label`` on env ``env_id`` that recorded ``recorded`` (``stored``) is not what agent code
    ``code`` and env code ``env`` (None: not compared) of this package version would make, or None if it is."""
    if recorded.code is None:
        return f"{label}'s cells were made before cells recorded their code"
    if recorded.code != code:
        same_code = recorded.code.partition("+")[0] == code.partition("+")[0]
        return f"{label}'s data files changed" if same_code else f"{label}'s code changed"
    if recorded.version != __version__:
        return f"{label}'s cells were made by bandit_gym {recorded.version}, not {__version__}"
    if env is not None and recorded.env is None:
        return f"cells made before cells recorded their env's code ({env_id})"
    if env is not None and recorded.env != env:
        return f"the env {env_id}'s code or registration changed"
    return None


def record(code: str, env: str) -> dict[str, np.ndarray]:
    """The arrays a cell stores to record that agent code ``code`` on env code ``env`` of this package version
    made it."""
    return {CODE_KEY: np.asarray(code), VERSION_KEY: np.asarray(__version__), ENV_KEY: np.asarray(env)}
