r"""The arm-wise policy (``bandit_gym.rl.armwise``) as pure JAX functions: the same features, the same network and the
same weights file, so that a policy trained in JAX (``bandit_gym.rl.jax_ppo``) plays through ``SB3Agent`` and the
experiment engine exactly as a stable-baselines3 one does, and a shipped policy's weights evaluate in JAX.

- ``arm_features(obs, family, standardize, k_invariant)``: ``(K, F)`` raw per-arm statistics of one observation, the
  columns of ``bandit_gym.rl.armwise.arm_features`` (thresholding, best arm and top K).
- The network: \(h_i = \phi(x_i)\) (two tanh layers), the logit of arm \(i\) \(\rho([h_i, \operatorname{mean}_j h_j])\),
  the value \(v(\mathrm{critic}([\operatorname{mean}_i h_i, \max_i h_i]))\). Its parameters are a dict keyed by the
  torch module names of ``ArmwisePolicy`` (``mlp_extractor.phi.0.0``, ..., ``value_net``), each
  ``{"weight": (out, in), "bias": (out,)}``, so the weights file is the torch policy's state dict, written without torch
  (``save_weights``).
- ``init_params``: SB3's initialisation of that policy (orthogonal, gain \(\sqrt{2}\); the last logit layer 0.01, the
  value layer 1; zero biases).

Permuting the arms permutes the logits and leaves the value unchanged.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from bandit_gym import _weights_file as weights_file
from bandit_gym.families import Family

Array = jax.Array
Params = dict[str, dict[str, Array]]

FAMILIES = (Family.THRESHOLDING, Family.BEST_ARM, Family.TOP_K)
"""The families whose features are written here (the threshold bandit's level features and the multi-armed
bandit's are not)."""
NUM_FEATURES = 10
"""Columns of ``arm_features`` for these families (one fewer with ``k_invariant``)."""


def _pull_scales(counts: Array, total: Array, k_invariant: bool) -> list[Array]:
    """``n / T`` and ``ln(1 + n) / ln(1 + T)``, or relative to the even share ``T / K`` (``k_invariant``)."""
    if not k_invariant:
        return [counts / total, jnp.log1p(counts) / jnp.log1p(total)]
    share = total / counts.shape[-1]
    return [counts / (counts + share), jnp.log1p(counts) / jnp.log1p(share)]


def _boundary(means: Array, pulled: Array, m: Array) -> Array:
    """The midpoint of the m-th and (m+1)-th largest empirical means of the pulled arms (the m-th when exactly m
    are pulled; 0 when fewer are)."""
    k = means.shape[-1]
    ranked = -jnp.sort(-jnp.where(pulled, means, -jnp.inf))
    index = jnp.clip(m.astype(jnp.int32), 1, k - 1)
    upper = ranked[index - 1]
    lower = ranked[index]
    lower = jnp.where(jnp.isfinite(lower), lower, upper)
    mid = (upper + lower) / 2
    return jnp.where(jnp.isfinite(mid), mid, 0.0)


def _standardized(means: Array, pulled: Array, centre: Array) -> tuple[Array, Array]:
    """``(mu_i - mean_j mu_j) / s`` and ``(mu_i - c) / s`` over the pulled arms (0 elsewhere), ``s`` their standard
    deviation (1 while fewer than two are pulled or their means agree)."""
    weight = pulled.astype(jnp.float32)
    n = jnp.sum(weight)
    mean = jnp.sum(means * weight) / jnp.maximum(n, 1.0)
    var = jnp.sum((means - mean) ** 2 * weight) / jnp.maximum(n, 1.0)
    spread = jnp.where((n >= 2) & (var > 0), jnp.sqrt(jnp.maximum(var, 1e-30)), 1.0)
    return (jnp.where(pulled, (means - mean) / spread, 0.0), jnp.where(pulled, (means - centre) / spread, 0.0))


def arm_features(obs: dict[str, Array], family: Family, standardize: bool = False,
                 k_invariant: bool = False) -> Array:
    r"""The per-arm features of one observation, ``(K, F)``: the columns of ``bandit_gym.rl.armwise.arm_features``
    (every family: \(n_i / T\), \(\ln(1 + n_i) / \ln(1 + T)\), \(\mathbb{1}\{n_i = 0\}\), \(\mu_i\), \(\mu_i - c\),
    then the globals \(\text{budget\_left} / T\), \(\ln(1 + T) / \ln(1 + 10^5)\), \(\ln K / \ln 10^3\); thresholding:
    \(c = \theta\), globals \(\theta\) and \(\epsilon\); best arm and top \(K\): \(c\) = the empirical boundary of the
    top \(m\), globals \(m / K\) and \(\epsilon\))."""
    if family not in FAMILIES:
        raise ValueError(f"family={family.value!r}: the JAX arm-wise features cover "
                         f"{', '.join(f.value for f in FAMILIES)}")
    counts = obs["counts"].astype(jnp.float32)
    k = counts.shape[-1]
    budget_left = obs["budget_left"][0].astype(jnp.float32)
    total = jnp.maximum(jnp.sum(counts) + budget_left, 1.0)
    pulled = counts > 0
    means = jnp.where(pulled, obs["means"].astype(jnp.float32), 0.0)
    glob = [budget_left / total]
    if k_invariant:
        glob.append(jnp.log1p(total / k) / math.log1p(1e5))
    else:
        glob += [jnp.log1p(total) / math.log1p(1e5), jnp.float32(math.log(k) / math.log(1e3))]
    epsilon = jnp.minimum(obs["epsilon"][0], 1.0)
    if family is Family.THRESHOLDING:
        centre = obs["threshold"][0]
        glob += [obs["threshold"][0], epsilon]
    else:
        centre = _boundary(means, pulled, obs["m"][0])
        glob += [obs["m"][0] / k, epsilon]
    level, distance = _standardized(means, pulled, centre) if standardize else (means, means - centre)
    per_arm = [*_pull_scales(counts, total, k_invariant), (~pulled).astype(jnp.float32), level, distance]
    columns = per_arm + [jnp.broadcast_to(jnp.asarray(g, dtype=jnp.float32), (k,)) for g in glob]
    return jnp.stack(columns, axis=-1)


# --------------------------------------------------------------------------------------------------- the network
LAYERS: dict[str, tuple[str, float]] = {
    "mlp_extractor.phi.0.0": ("features", math.sqrt(2)),
    "mlp_extractor.phi.0.2": ("hidden", math.sqrt(2)),
    "mlp_extractor.rho.0": ("pair", math.sqrt(2)),
    "mlp_extractor.rho.2": ("logit", 0.01),
    "mlp_extractor.critic.0.0": ("pair", math.sqrt(2)),
    "value_net": ("value", 1.0),
}
"""The layers of ``ArmwisePolicy`` by their torch names, with their input kind and SB3's orthogonal gain."""


def _shape(kind: str, num_features: int, hidden: int) -> tuple[int, int]:
    """``(out, in)`` of a layer (torch's layout)."""
    return {"features": (hidden, num_features), "hidden": (hidden, hidden), "pair": (hidden, 2 * hidden),
            "logit": (1, hidden), "value": (1, hidden)}[kind]


def init_params(key: Array, num_features: int, hidden: int = 64) -> Params:
    """Fresh weights, initialised as stable-baselines3 initialises ``ArmwisePolicy``."""
    params: Params = {}
    for name, layer_key in zip(LAYERS, jax.random.split(key, len(LAYERS)), strict=True):
        kind, gain = LAYERS[name]
        out, inp = _shape(kind, num_features, hidden)
        params[name] = {"weight": jax.nn.initializers.orthogonal(gain)(layer_key, (out, inp), jnp.float32),
                        "bias": jnp.zeros(out, jnp.float32)}
    return params


def _linear(layer: dict[str, Array], x: Array) -> Array:
    return x @ layer["weight"].T + layer["bias"]


def embed(params: Params, features: Array) -> Array:
    r"""\(h_i = \phi(x_i)\), ``(..., K, hidden)``."""
    h = jnp.tanh(_linear(params["mlp_extractor.phi.0.0"], features))
    return jnp.tanh(_linear(params["mlp_extractor.phi.0.2"], h))


def logits_and_value(params: Params, features: Array) -> tuple[Array, Array]:
    """One logit per arm ``(..., K)`` and the value ``(...)`` of features ``(..., K, F)``."""
    h = embed(params, features)
    g = jnp.broadcast_to(jnp.mean(h, axis=-2, keepdims=True), h.shape)
    logits = _linear(params["mlp_extractor.rho.2"],
                     jnp.tanh(_linear(params["mlp_extractor.rho.0"], jnp.concatenate([h, g], axis=-1))))[..., 0]
    pooled = jnp.concatenate([jnp.mean(h, axis=-2), jnp.max(h, axis=-2)], axis=-1)
    latent = jnp.tanh(_linear(params["mlp_extractor.critic.0.0"], pooled))
    return logits, _linear(params["value_net"], latent)[..., 0]


# --------------------------------------------------------------------------------------------------- the file
def save_weights(params: Params, path: str | Path, shapes: dict[str, list[int]], *, standardize: bool = False,
                 k_invariant: bool = False, **meta: Any) -> Path:
    """Write ``params`` as ``bandit_gym.rl.armwise.save_weights`` writes a policy (its format, float32 arrays named by
    the torch state dict, a JSON header with the hidden size, the feature options and ``shapes``, the observation
    entries' shapes of the training env), so that ``bandit_gym.rl.armwise.load_weights`` reads it. ``meta`` is added
    to the header (JSON values)."""
    hidden = int(np.shape(params["mlp_extractor.phi.0.2"]["weight"])[0])
    header = {"hidden": hidden, "standardize": bool(standardize), "k_invariant": bool(k_invariant),
              "shapes": shapes, **meta}
    arrays = {f"{name}.{part}": value for name, layer in params.items() for part, value in layer.items()}
    return weights_file.write(path, header, arrays)


def load_weights(path: str | Path) -> tuple[Params, dict[str, Any]]:
    """The parameters and header of a weights file (``save_weights`` here or in ``bandit_gym.rl.armwise``)."""
    arrays, header = weights_file.read(path)
    params: Params = {name: {part: jnp.asarray(arrays[f"{name}.{part}"]) for part in ("weight", "bias")}
                      for name in LAYERS}
    return params, header
