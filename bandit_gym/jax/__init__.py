"""The accelerator path: the families as pure JAX functions (Gymnasium's ``FuncEnv`` convention), agents as pure
functions, and whole episodes compiled into one function (``play``).

Needs the optional extra: ``pip install "pure-exploration-gym[jax]"``. Nothing else in the package imports this
module, so the default install and ``import bandit_gym`` never need JAX.
"""

from __future__ import annotations

try:
    import jax  # noqa: F401
except ImportError as error:  # pragma: no cover - the test environment has the extra
    raise ImportError('bandit_gym.jax needs JAX: pip install "pure-exploration-gym[jax]" (CPU), or JAX for your '
                      "accelerator (https://docs.jax.dev/en/latest/installation.html)") from error
