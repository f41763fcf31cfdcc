"""Opt-KG, the optimistic knowledge-gradient policy (Chen, Lin, Zhou 2015), a tao2019 baseline."""

from __future__ import annotations

import ctypes
import math
from typing import Any

import llvmlite.binding as llvm
import numpy as np
from numba import types
from numba.extending import get_cython_function_address, overload

from bandit_gym import _validation as check
from bandit_gym._dispatch import EntryPoints
from bandit_gym.agents._kernels import arm_play, arm_step, no_index_compiled
from bandit_gym.agents.thresholding._base import ThresholdingAgent
from bandit_gym.jit import called, driver, kernel, parallel_kernel


def log_optimistic_gain(a: float, b: float, p: float, logc: float) -> float:
    r"""\(\log R^+(a, b)\) from \(p = I(a, b) = P(\vartheta \ge \theta \mid \mathrm{Beta}(a, b))\) and
    \(\log c(a, b)\), where \(c(a, b) = \theta^a (1 - \theta)^b / B(a, b)\) gives the exact increments
    \(I(a+1, b) = I(a, b) + c / a\) and \(I(a, b+1) = I(a, b) - c / b\).

    With \(\delta_1 = c / a\), \(\delta_2 = c / b\) and \(h(x) = \max(x, 1 - x)\):

    $$
    R_1 = h(I + \delta_1) - h(I), \qquad R_2 = h(I - \delta_2) - h(I), \qquad R^+ = \max(R_1, R_2)
    $$

    Away from the crossing of 1/2, \(R^+\) is \(\delta_1\) (\(I > 1/2\)), \(\delta_2\) (\(I < 1/2\)) or their
    maximum (\(I = 1/2\)), whose logarithms are exact even where \(c\) underflows (counts of \(10^4\) give \(c\)
    near \(2^{-20000}\)); at a crossing the deltas are not negligible and \(R^+\) is evaluated directly.
    Plain Python on floats, compiled into the kernels.
    """
    log_d1, log_d2 = logc - math.log(a), logc - math.log(b)
    d1, d2 = math.exp(log_d1), math.exp(log_d2)
    if p > 0.5:
        gain, crossing = log_d1, p - d2 < 0.5
    elif p < 0.5:
        gain, crossing = log_d2, p + d1 > 0.5
    else:
        gain, crossing = max(log_d1, log_d2), False
    if crossing:
        h = max(p, 1.0 - p)
        gain = math.log(max(max(p + d1, 1.0 - p - d1) - h, max(p - d2, 1.0 - p + d2) - h))
    return gain


def double_version(name: str) -> str:
    """The name under which ``scipy.special.cython_special`` exports the float64 version of the function ``name``:
    ``name`` itself, or a fused specialisation ``__pyx_fuse_<i><name>`` (a name Cython makes up, which can change
    from one scipy release to the next), found by the C signature of its capsule, ``double (double, ...``."""
    import ctypes

    from scipy.special import cython_special

    signature = ctypes.pythonapi.PyCapsule_GetName
    signature.restype, signature.argtypes = ctypes.c_char_p, [ctypes.py_object]
    for key, capsule in cython_special.__pyx_capi__.items():
        fused = key.startswith("__pyx_fuse_") and key.endswith(name) and key[len("__pyx_fuse_"):-len(name)].isdigit()
        if (key == name or fused) and signature(capsule).startswith(b"double (double"):
            return key
    raise ImportError(f"scipy.special.cython_special exports no float64 {name}; Opt-KG needs it")


def _scipy_special(name: str, arity: int) -> tuple[Any, Any]:
    """scipy.special's compiled float64 ``name`` (``cython_special``) twice: a ctypes function (for Python, and
    numba with compilation disabled) and numba's declaration of the same C function under the symbol
    ``bandit_gym_<name>``, which this registers with LLVM. Compiled code calls the function by that symbol, not by
    an address of this process, so it is cached on disk like every entry point and linked again in each process."""
    address = get_cython_function_address("scipy.special.cython_special", double_version(name))
    symbol = f"bandit_gym_{name}"
    llvm.add_symbol(symbol, address)
    signature = types.float64(*[types.float64] * arity)
    return ctypes.CFUNCTYPE(ctypes.c_double, *[ctypes.c_double] * arity)(address), types.ExternalFunction(symbol,
                                                                                                          signature)


_betaincc, _betaincc_symbol = _scipy_special("betaincc", 3)
_betaln, _betaln_symbol = _scipy_special("betaln", 2)


def betaincc(a: float, b: float, x: float) -> float:
    r"""``scipy.special.betaincc(a, b, x)`` in float64: \(P(\vartheta \ge x)\) under \(\mathrm{Beta}(a, b)\)."""
    return float(_betaincc(a, b, x))


def betaln(a: float, b: float) -> float:
    r"""``scipy.special.betaln(a, b)`` in float64: \(\ln B(a, b)\)."""
    return float(_betaln(a, b))


# numba's typing of an overload reads its arguments' annotations, so these two have none
@overload(betaincc)
def _compiled_betaincc(a, b, x):
    """``betaincc`` in compiled code: a call of the C function by its symbol."""
    return lambda a, b, x: _betaincc_symbol(a, b, x)


@overload(betaln)
def _compiled_betaln(a, b):
    """``betaln`` in compiled code: a call of the C function by its symbol."""
    return lambda a, b: _betaln_symbol(a, b)


log_gain = called(log_optimistic_gain)


@called
def fresh(count: float, total: float, theta: float, a0: float, b0: float, q: float) -> tuple:
    r"""Opt-KG's arm rule (``bandit_gym.agents._kernels``), from the counts: posterior \(\mathrm{Beta}(a, b)\),
    \(I\) = ``betaincc(a, b, theta)`` and \(\log c = a \ln\theta + b \ln(1 - \theta) - \ln B(a, b)\)."""
    a, b = a0 + total, b0 + count - total
    p = betaincc(a, b, theta)
    logc = a * math.log(theta) + b * math.log1p(-theta) - betaln(a, b)
    return -log_gain(a, b, p, logc), p >= 0.5, p, logc


@called
def pulled(count: float, total: float, one: bool, p: float, logc: float, theta: float, a0: float, b0: float,
           q: float) -> tuple:
    r"""\(O(1)\): the exact recurrences \(I(a+1, b) = I + c/a\), \(c(a+1, b) = c\,\theta (a+b)/a\) (and their
    mirror for a 0) from the posterior before the pull. Where \(I\) lands within \(10^{-9}\) of 1/2, where its
    rounding could matter, it is recomputed with ``betaincc``."""
    a, b = a0 + total, b0 + count - total  # after the pull
    a_prev, b_prev = (a - 1.0, b) if one else (a, b - 1.0)
    step = math.exp(logc - math.log(a_prev if one else b_prev))
    p = p + step if one else p - step
    logc = logc + (math.log(theta) - math.log(a_prev) if one else math.log1p(-theta) - math.log(b_prev))
    logc += math.log(a_prev + b_prev)
    if abs(p - 0.5) < 1e-9:
        p = betaincc(a, b, theta)
    return -log_gain(a, b, p, logc), p >= 0.5, p, logc


@driver
def rule_fresh(index: Any, count: float, total: float, theta: float, a0: float, b0: float, q: float) -> tuple:
    """``fresh`` in the drivers' signature (``bandit_gym.agents._kernels``; Opt-KG has no index)."""
    return fresh(count, total, theta, a0, b0, q)


@driver
def rule_pulled(index: Any, count: float, total: float, one: bool, p: float, logc: float, theta: float, a0: float,
                b0: float, q: float) -> tuple:
    """``pulled`` in the drivers' signature."""
    return pulled(count, total, one, p, logc, theta, a0, b0, q)


@kernel
def step(args: tuple[Any, ...]) -> np.ndarray:
    r"""One ``act`` of Opt-KG over a batch (``_kernels.arm_step``; its state is the posterior's \(I\) and
    \(\log c\))."""
    return arm_step(rule_fresh, rule_pulled, no_index_compiled, True, args)


@parallel_kernel
def parallel_step(args: tuple[Any, ...]) -> np.ndarray:
    """``step`` with the copies on all cores."""
    return arm_step(rule_fresh, rule_pulled, no_index_compiled, True, args)


@kernel
def rollout(episodes: tuple[Any, ...]) -> None:
    """Whole episodes of Opt-KG (``_kernels.arm_play``)."""
    arm_play(rule_fresh, rule_pulled, no_index_compiled, episodes)


class OptKG(ThresholdingAgent):
    r"""Optimistic knowledge gradient for Bernoulli arms with Beta priors.

    Paper: X. Chen, Q. Lin, D. Zhou, JMLR 16 (2015); baseline of tao2019 §5, which states only the model (a
    Bayesian Markov decision process with a known Beta prior on each \(\theta_i\)) and the priors: the rule, \(I\),
    \(h\) and the answer below rest on Chen et al.

    State: posterior \(\mathrm{Beta}(a_i, b_i)\) with \(a_i = a_0 + \#\text{ones}\), \(b_i = b_0 + \#\text{zeros}\).
    Rule:

    $$
    \begin{aligned}
    i_t &= \operatorname*{arg\,max}_i R^+(a_i, b_i), \\
    R^+ &= \max\big(h(I(a+1, b)) - h(I(a, b)),\ h(I(a, b+1)) - h(I(a, b))\big)
    \end{aligned}
    $$

    with \(I(a, b) = P(\vartheta \ge \theta)\) under \(\mathrm{Beta}(a, b)\) and \(h(x) = \max(x, 1 - x)\); compared
    on \(\log R^+\) (see ``log_optimistic_gain``) so that Setups 2-3 do not underflow into index-order ties.
    Answer (Bayes decision): \(d_i = \mathbb{1}\{I(a_i, b_i) \ge 1/2\}\); for \(\theta = 1/2\) that is
    \(a_i \ge b_i\). \(I\) and \(\log c\) of each arm are kept (``self.p``, ``self.logc``) and updated by exact
    \(O(1)\) recurrences (see ``pulled``).

    Parameters: prior \((a_0, b_0)\) (``a0``, ``b0``); tao2019 uses Beta(1, 1) (uniform) and Beta(0.5, 0.5)
    (Jeffreys); the default (1, 1) is ours.
    Anytime. Bernoulli arms only (the observation's sums must count ones). Deviations: none.

    Readings where the papers are silent:

    - threshold: Chen et al.'s crowd labelling has \(\theta = 1/2\) (as have all of tao2019's experiments); for
      another \(\theta\) we take \(I(a, b) = P(\vartheta \ge \theta)\) (ours).
    - initialisation: Chen et al.'s policy starts from the prior with no forced pulls; tao2019 does not say
      whether it added "pull each arm once" (some later public implementations do). We add none: at \(t = 1\)
      every arm ties.
    - ties in the \(\operatorname{arg\,max}\): tao2019 gives no rule, and with the uniform prior exact ties are frequent
      early on; the agent's tie rule (random arm order per copy and episode by default; ``tie_break="index"`` keeps the
      first maximiser, as a public third-party implementation does). Ties are those of the computed \(\log R^+\): at
      \(\theta = 1/2\) mirrored posteriors \((a, b)\) and \((b, a)\) tie exactly in theory, but the \(O(1)\)
      recurrences can leave their values a few units in the last place apart, so such a tie need not go to the smaller
      index.
    - answer: tao2019 does not say how Opt-KG's output was formed; we use the Bayes decision of the posterior
      (Chen et al.'s final classification), with \(I = 1/2\) exactly answered 1, so an arm never pulled under a
      symmetric prior and \(\theta = 1/2\) is answered 1 (the empirical rule of the other agents would answer 0).
    - answer before the end: the Bayes decision of the current posterior, submitted at every step; only the one
      after the \(T\)-th pull is scored.
    - numerics (ours): \(\log R^+\) instead of \(R^+\), because \(c(a, b)\) underflows at counts of \(10^4\); where
      a recurrence leaves \(I\) within \(10^{-9}\) of 1/2 it is recomputed with ``betaincc``. A pull counts as a one
      when its value exceeds 1/2.

    Examples:
        One seeded episode (thresholding bandit, tao2019 Setup 1) and the record of
        ``RecordEpisodeRegret`` that ``play_episode`` returns:

        >>> import gymnasium as gym
        >>> from bandit_gym.agents import OptKG
        >>> from bandit_gym.rollout import play_episode
        >>> env = gym.make("ThresholdingBandit-Tao2019Setup1-v0", budget=200)
        >>> result = play_episode(env, OptKG(), seed=0)
        >>> result["pulls"], round(result["regret"], 3)
        (200, 1.0)
    """

    init_pulls = False
    anytime = True  # never reads the horizon T

    def __init__(self, a0: float = 1.0, b0: float = 1.0, *, tie_break: str = "random") -> None:
        self.a0 = check.real("a0", a0, low=0.0, low_open=True)
        self.b0 = check.real("b0", b0, low=0.0, low_open=True)
        super().__init__(tie_break=tie_break)

    def params(self) -> dict[str, object]:
        return {"a0": self.a0, "b0": self.b0, **super().params()}

    kernels = EntryPoints(step, parallel_step, rollout)

    def rule_constants(self) -> tuple[float, float]:
        return self.a0, self.b0

    @property
    def p(self) -> np.ndarray:
        r"""\(I(a_i, b_i) = P(\vartheta_i \ge \theta)\) of every arm, ``(N, K)``."""
        return self.state.s1

    @property
    def logc(self) -> np.ndarray:
        r"""\(\log c(a_i, b_i)\) of every arm, ``(N, K)``."""
        return self.state.s2
