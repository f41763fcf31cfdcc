"""The accelerator path: the families as pure JAX functions (Gymnasium's ``FuncEnv`` convention), agents as pure
functions, and whole episodes compiled into one function (``play``).

Needs the optional extra: ``pip install "pure-exploration-gym[jax]"``. Nothing else in the package imports this
module, so the default install and ``import bandit_gym`` never need JAX.
"""

from __future__ import annotations

try:
    import jax
except ImportError as error:  # pragma: no cover - the test environment has the extra
    raise ImportError('bandit_gym.jax needs JAX: pip install "pure-exploration-gym[jax]" (CPU), or JAX for your '
                      "accelerator (https://docs.jax.dev/en/latest/installation.html)") from error


def _persistent_cache() -> None:
    """JAX's persistent compilation cache in the user's cache folder, unless the user gave JAX one (see
    ``bandit_gym.jit``: compiled once, not in every process)."""
    from bandit_gym.jit import jax_cache_dir, writable

    given = jax.config.jax_compilation_cache_dir  # type: ignore[attr-defined]
    if given is None and writable(jax_cache_dir()):
        jax.config.update("jax_compilation_cache_dir", str(jax_cache_dir()))


_persistent_cache()
