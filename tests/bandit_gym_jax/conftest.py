"""The JAX tests need the ``jax`` extra: skipped without it on a contributor's machine, required where the suite
tests an installed wheel (``BANDIT_GYM_TESTED=installed``, what ``.ci/run`` sets after installing the extra)."""

from __future__ import annotations

import os

import pytest

if os.environ.get("BANDIT_GYM_TESTED") == "installed":
    import jax  # noqa: F401  (CI installs the extra: a missing JAX fails the run instead of skipping it)
else:
    pytest.importorskip("jax")
