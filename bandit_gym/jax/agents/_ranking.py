"""Exact top-m selection by position, in O(K) passes without a sort (XLA's CPU sort of 1000 float32 costs about
200 comparison passes over them).

The JAX top-K agents keep their statistics by position in the copy's arm order, so "ties go to the smaller
position" is the package's tie rule (the numpy ``bandit_gym.agents.ranking.top_m_select``: the m largest values,
the smaller index first on ties). The m-th largest value is found by building its order-preserving 32-bit key bit
by bit (32 counting passes, the same number whatever K and m), and the arms tied at it are taken in position order
by a cumulative sum.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from bandit_gym.jax.agents._base import Array

_SIGN = jnp.uint32(0x80000000)


def ordered_keys(values: Array) -> Array:
    """Unsigned 32-bit keys in the order of the float32 ``values`` (-0.0 and 0.0 get one key; -inf the smallest
    of the finite and infinite values; NaN is not a value here)."""
    values = values.astype(jnp.float32)
    bits = jax.lax.bitcast_convert_type(jnp.where(values == 0.0, jnp.float32(0.0), values), jnp.uint32)
    return jnp.where(bits >= _SIGN, ~bits, bits | _SIGN)


def mth_largest_key(keys: Array, m: Array) -> Array:
    """The m-th largest of ``keys`` (1 <= m <= K): the largest v with ``#{keys >= v} >= m``, set bit by bit from
    the most significant."""

    def bit(i: Array, v: Array) -> Array:
        candidate = v | (jnp.uint32(1) << (jnp.uint32(31) - i.astype(jnp.uint32)))
        return jnp.where(jnp.sum(keys >= candidate) >= m, candidate, v)

    return jax.lax.fori_loop(0, 32, bit, jnp.uint32(0))


def top_positions(values: Array, m: Array) -> Array:
    """The bits of the m largest ``values`` (ties: the smaller position first), ``(K,)`` bool, for 0 <= m <= K
    (m = 0: none)."""
    keys = ordered_keys(values)
    m = jnp.asarray(m, dtype=jnp.int32)
    split = mth_largest_key(keys, jnp.maximum(m, 1))
    above = keys > split
    tied = keys == split
    room = m - jnp.sum(above).astype(jnp.int32)
    return (above | (tied & (jnp.cumsum(tied.astype(jnp.int32)) <= room))) & (m > 0)
