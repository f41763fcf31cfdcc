"""Compiled code (numba) and its disk cache: every rule compiled once, not in every process, never served stale.

The package's compiled functions are module-level functions decorated here:

- ``called``: a function compiled on its own and called (an agent's rule, most helpers), cached on disk like the
  entry points: compiled once on a machine however many rules and processes call it (numba's IR inlining, which
  the two below use, is what costs compilation time);
- ``inline``: the few small helpers on a rule's per-pull path where a call measurably costs more than the helper
  (Successive Rejects' phase end and step), compiled into their callers (``inline="always"``);
- ``driver``: a driver that takes a compiled function as an argument (a rule, an index), inlined into its
  caller by numba (``inline="always"``) so that the function it calls becomes a global of the caller;
- ``kernel`` / ``parallel_kernel``: an *entry point*, called from Python, cached on disk (``cache=True``), serial or
  with ``numba.prange`` loops run on all cores (``parallel_called`` for a parallel twin of a cached serial kernel:
  numba's cache would file both compilations of one Python function under one name).

No compiled function is made inside another function (a test scans the package): numba keys a closure's cache entry
by its cells, and a dispatcher in a cell pickles with a per-process id, so a closure is compiled again in every
process. A driver that runs any rule (over a batch, over whole episodes) takes the rule as its first argument, and
each rule has its own entry points that name it as a global.

Literals. numba types a constant handed to a compiled function as a literal (``Literal[int](0)``) and compiles the
function, and everything it calls, for that value, then again for ``int64`` when the variable is later assigned
another value: ``leader = 0`` followed by ``leader = a`` in a loop compiled Frank-Wolfe Sampling's direction twice
(about 1.5 CPU-seconds of its first decision). An index that starts at a constant and reaches a ``called`` function
is written ``np.int64(0)``, and a flag is passed as a computed ``bool``, not ``True`` / ``False`` at two call
sites; the slow test of every compiled rule (``tests/agents/test_dispatch_isolation.py``) fails on a function of the
package compiled both for a literal argument and for its type.

The cache. numba checks only the file of the function it caches, not the files of the functions that function
calls, so a changed helper in another module would be served stale. Entry points of this package are therefore
cached by ``PackageCacheLocator``, which keys them by the fingerprint of the whole package's source
(``source_fingerprint``: every ``.py`` file of ``bandit_gym``, its agents and wrappers): a change in any module
compiles everything again, in a folder of its own. The folder (``cache_dir``):

- ``$NUMBA_CACHE_DIR/bandit-gym/<fingerprint>`` where ``NUMBA_CACHE_DIR`` is set (a name Python cannot import,
  so that the folder never shadows the package);
- otherwise the user's cache folder: ``~/.cache/bandit_gym/numba/<fingerprint>`` on Linux (``$XDG_CACHE_HOME``
  honoured), the platform's equivalent elsewhere;
- if that folder cannot be written, a folder of this process under the system's temporary folder (nothing is
  shared then).

Never the working directory, the output folder of an experiment or the installed package (which may be read-only).
Processes and workers on one machine (``--jobs``, Dask, Ray) share it: numba writes each file under a temporary
name and renames it, so two writers at once never leave a damaged file (at worst one of them compiles again next
time). Clear it with ``bandit-gym cache --clear`` or ``bandit_gym.jit.clear_cache()``; old fingerprints' folders
are not removed by themselves.

The JAX path. ``bandit_gym.jax`` turns on JAX's persistent compilation cache, in ``jax_cache_dir()`` (the user's
cache folder, ``~/.cache/bandit_gym/jax`` on Linux), unless the user gave JAX one (``JAX_COMPILATION_CACHE_DIR`` or
``jax.config.update("jax_compilation_cache_dir", ...)`` before the import); ``jax.config.update(
"jax_enable_compilation_cache", False)`` turns it off. JAX keys each entry by the compiled computation itself,
the JAX version and the device, so a change in this package's source is a different computation, never a stale
entry; JAX caches what took at least ``jax_persistent_cache_min_compile_time_secs`` (1 s by default) to compile.
Note that the setting is JAX's, for the whole process: the user's own JAX functions are cached there too.

Importing this module imports numba (about 0.3 CPU-seconds): the modules that compile import it, not
``import bandit_gym``.

Records. The agents' per-copy records differ by agent (each declares its fields), and a helper compiled for one
record is then called with a longer one that begins with the same fields (TTTS's state: the fields of every
fixed-confidence state, then ``draws``). numba plays the helper's compiled code for the longer record ("width
subtyping"), which reads and writes every field it knows at the same offset, and warns that the subtyping is an
experimental feature. Importing this module hides that one warning (``hide_record_subtyping``: a
``NumbaExperimentalFeatureWarning`` whose message says a record "has been considered a subtype of" another): it
says nothing a user can act on, and numba subtypes a single record only, never an array of records, whose stride
would differ.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import tempfile
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numba
from numba.core import caching
from numba.core.errors import NumbaExperimentalFeatureWarning
from numba.misc.appdirs import AppDirs

#: the top-level package whose compiled functions the locator caches
PACKAGE = "bandit_gym"



def hide_record_subtyping() -> None:
    """Hide numba's warning that a record was played as a shorter record it extends (see "Records" above); called
    when this module is imported."""
    warnings.filterwarnings("ignore", message=r"(?s).*has been considered a subtype of Record",
                            category=NumbaExperimentalFeatureWarning)


hide_record_subtyping()


def driver(function: Callable[..., Any]) -> Any:
    """A driver that takes a compiled function as an argument, compiled into its callers (numba's IR inlining:
    ``numba.njit(inline="always", error_model="numpy")``), so that the function it calls is a global of the
    caller's code, which numba can cache, not an address of the process."""
    return numba.njit(inline="always", error_model="numpy")(function)


def inline(function: Callable[..., Any]) -> Any:
    """A small helper on a rule's per-pull path, compiled into its callers by numba (``inline="always"``), where a
    call measurably costs more than the helper (Successive Rejects' phase end and step)."""
    return numba.njit(inline="always", error_model="numpy")(function)


def called(function: Callable[..., Any]) -> Any:
    """A function compiled on its own and called (a rule, a helper), cached on disk: ``numba.njit(cache=True,
    nogil=True, error_model="numpy")``. An entry point's cached code holds what it calls, so a process that loads
    it loads nothing else; a rule compiled for the first time finds the helpers other rules compiled (the
    stopping rules, the rankings, the checks) in the cache instead of compiling them again."""
    return numba.njit(cache=True, nogil=True, error_model="numpy")(function)


def kernel(function: Callable[..., Any]) -> Any:
    """An entry point called from Python, cached on disk: ``numba.njit(cache=True, nogil=True,
    error_model="numpy")``."""
    return numba.njit(cache=True, nogil=True, error_model="numpy")(function)


def parallel_kernel(function: Callable[..., Any]) -> Any:
    """``kernel`` with its ``numba.prange`` loops run on all cores (``parallel=True``)."""
    return numba.njit(cache=True, nogil=True, error_model="numpy", parallel=True)(function)


def parallel_called(function: Callable[..., Any]) -> Any:
    """A function compiled on its own with its ``numba.prange`` loops run on all cores, not cached (unlike
    ``called``): the parallel twin of a serial ``kernel`` made from the same Python function (the env's kernels),
    which numba's cache would file under the same name."""
    return numba.njit(nogil=True, error_model="numpy", parallel=True)(function)


def package_folders() -> list[Path]:
    """The folders of the package's source: ``bandit_gym`` and, where they live elsewhere (an editable install),
    its ``agents`` and ``wrappers``."""
    import importlib.util

    folders: list[Path] = []
    for name in (PACKAGE, f"{PACKAGE}.agents", f"{PACKAGE}.wrappers"):
        spec = importlib.util.find_spec(name)
        for location in (spec.submodule_search_locations or []) if spec is not None else []:
            folder = Path(location).resolve()
            if not any(folder == known or known in folder.parents for known in folders):
                folders.append(folder)
    return folders


@functools.cache
def source_fingerprint() -> str:
    """SHA-256 (16 hex digits) of every ``.py`` file of the package, with its path inside its folder: the same for
    the same source, different as soon as any module changes."""
    digest = hashlib.sha256()
    for folder in package_folders():
        for path in sorted(folder.rglob("*.py")):
            digest.update(f"{folder.name}/{path.relative_to(folder).as_posix()}".encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def user_cache() -> Path:
    """The package's folder in the user's cache folder: ``~/.cache/bandit_gym`` on Linux (``$XDG_CACHE_HOME``
    honoured), the platform's equivalent elsewhere."""
    return Path(AppDirs(appname=PACKAGE, appauthor=False).user_cache_dir)


def cache_root() -> Path:
    """The folder of every fingerprint's cache: ``$NUMBA_CACHE_DIR/bandit-gym``, else the user's cache folder."""
    given = os.environ.get("NUMBA_CACHE_DIR")
    if given:
        return Path(given) / "bandit-gym"
    return user_cache() / "numba"


def jax_cache_dir() -> Path:
    """The folder of JAX's persistent compilation cache that ``bandit_gym.jax`` sets where the user set none:
    ``user_cache() / "jax"``."""
    return user_cache() / "jax"


def writable(folder: Path) -> bool:
    """Whether ``folder`` is (made and) writable."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=folder).close()
    except OSError:
        return False
    return True


@functools.cache
def cache_dir() -> Path:
    """This source's cache folder, ``cache_root() / source_fingerprint()`` (created); a folder of this process
    under the temporary folder if it cannot be written."""
    folder = cache_root() / source_fingerprint()
    if not writable(folder):
        folder = Path(tempfile.mkdtemp(prefix=f"{PACKAGE}-numba-")) / source_fingerprint()
        folder.mkdir()
    return folder


def clear_cache() -> list[Path]:
    """Remove every fingerprint's compiled code (``cache_root()``) and the JAX cache this package set
    (``jax_cache_dir()``; not a folder the user gave JAX); return the folders removed."""
    removed = [cache_root(), jax_cache_dir()]
    for folder in removed:
        shutil.rmtree(folder, ignore_errors=True)
    cache_dir.cache_clear()
    return removed


class PackageCacheLocator(caching._CacheLocator):
    """numba's cache locator for this package's functions: ``cache_dir() / <module>``, fresh while the package's
    source fingerprint is the one it was compiled from (numba's own locators check only the function's file)."""

    def __init__(self, py_func: Callable[..., Any], py_file: str) -> None:
        self._module, self._py_file = py_func.__module__, py_file
        self._lineno = py_func.__code__.co_firstlineno

    def get_cache_path(self) -> str:
        return str(cache_dir() / self._module)

    def get_source_stamp(self) -> str:
        return source_fingerprint()

    def get_disambiguator(self) -> str:
        return str(self._lineno)

    @classmethod
    def from_function(cls, py_func: Callable[..., Any], py_file: str) -> PackageCacheLocator | None:
        module = getattr(py_func, "__module__", None) or ""
        if module != PACKAGE and not module.startswith(PACKAGE + "."):
            return None
        return cls(py_func, py_file)


def install() -> None:
    """Put ``PackageCacheLocator`` first among numba's locators (once); it answers for this package only."""
    if PackageCacheLocator not in caching.CacheImpl._locator_classes:
        caching.CacheImpl._locator_classes.insert(0, PackageCacheLocator)


install()
