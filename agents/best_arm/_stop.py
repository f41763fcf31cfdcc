"""A copy's stopping rule in compiled code, chosen by its kind when the rule that calls it is compiled: ``stopped``
(does the copy's stopping rule stop now?) and ``kind`` (which rule is it?), for the best-arm rules of
``bandit_gym.agents.best_arm`` stopped by a component (``_stopping.Stopping``).

The kind (``_stopping.KINDS``) is the type of the copy's constants record, not a value in it: the record has one
field ``_stopping.KIND_FIELD`` + the kind's name (``"stops_by_glr"``: ``Stopping.field``). numba compiles a rule
once per record type, and caches each, so an agent's compiled step holds the test of its own kind alone (the GLR
statistic, the LUCB or KL-LUCB bounds, the mixture thresholds), and a branch on ``kind`` is a constant there: LUCB1
with its own rule compiles none of the components. In Python (and with compilation disabled) the same functions
read the kind from the record's ``dtype``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba.extending import overload

from bandit_gym.agents.best_arm._stopping import (
    KINDS,
    beta,
    kind_named_by,
    kl_lucb_gap,
    lucb_gap,
    mixture_stops,
    shifted_glr,
)

#: the kinds by name, as compiled code compares them (``kind(constants) == OWN``)
GLR, GLR_MIXTURE, LUCB, KLLUCB, LIL, OWN = range(len(KINDS))


def kind(constants: Any) -> int:
    """The kind of stopping rule (an index of ``_stopping.KINDS``: ``GLR``, ..., ``OWN``) of a copy's constants
    record, read from its type (a constant in compiled code: ``_compiled_kind``)."""
    return kind_named_by(constants.dtype.names)


# The tests of the kinds, which ``stopped`` calls in Python and numba compiles into the caller (``_compiled_stopped``).
# They have no annotations: numba refuses an overload's implementation whose signature differs from the typing
# function's, annotations included. Their arguments are ``stopped``'s.
def glr_stops(counts, mean, answer, made, m, epsilon, constants):
    """The GLR rule with a threshold beta(t, delta) (``"gk2016"``, ``"ls2020"``, ``"heuristic"``): Z(t) > beta."""
    t = max(np.float64(made), 1.0)
    statistic = shifted_glr(counts, mean, answer, epsilon, constants["family"], constants["sigma"])
    return statistic > beta(t, counts.shape[0], m, constants)


def mixture_glr_stops(counts, mean, answer, made, m, epsilon, constants):
    """The GLR rule with the ``"mixture"`` thresholds, one per pair (``mixture_stops``)."""
    return mixture_stops(counts, mean, answer, epsilon, constants)


def lucb_stops(counts, mean, answer, made, m, epsilon, constants):
    """LUCB1's rule: ``lucb_gap`` < epsilon."""
    return lucb_gap(counts, mean, answer, max(np.float64(made), 1.0), constants) < epsilon


def kl_lucb_stops(counts, mean, answer, made, m, epsilon, constants):
    """KL-LUCB's rule: ``kl_lucb_gap`` < epsilon."""
    return kl_lucb_gap(counts, mean, answer, max(np.float64(made), 1.0), constants) < epsilon


def no_component(counts, mean, answer, made, m, epsilon, constants):
    """An agent stopped by its own rule (``OWN``, ``LIL``) has no component: False (its rule never asks)."""
    return False


#: the test of each kind, in the order of ``KINDS``
TESTS = (glr_stops, mixture_glr_stops, lucb_stops, kl_lucb_stops, no_component, no_component)


def stopped(counts: np.ndarray, mean: np.ndarray, answer: np.ndarray, made: int, m: int, epsilon: float,
            constants: Any) -> bool:
    """Whether the stopping rule that ``constants`` names (``kind``) stops now, with ``answer`` (the m largest of
    ``mean``, the empirical means, for most rules; UGapEc's J(t), which the GLR statistic reads as 0 unless it is
    those) as its answer, ``made`` pulls made. In compiled code the rule is chosen when the caller is compiled
    (``_compiled_stopped``): only that rule is compiled into it."""
    return TESTS[kind(constants)](counts, mean, answer, made, m, epsilon, constants)


# numba's typing of an overload reads its arguments' annotations, so these two have none
@overload(kind)
def _compiled_kind(constants):
    """``kind`` in compiled code: a constant, read from the record's type."""
    named = kind_named_by(constants.fields)
    return lambda constants: named


@overload(stopped)
def _compiled_stopped(counts, mean, answer, made, m, epsilon, constants):
    """``stopped`` in compiled code: the test of the kind the record's type names, alone."""
    return TESTS[kind_named_by(constants.fields)]
