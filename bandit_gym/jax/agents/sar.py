r"""Successive Accepts and Rejects (Bubeck, Wang, Viswanathan 2013), fixed-budget \(m\)-best identification, as a pure
function."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import jax.numpy as jnp

from bandit_gym.jax.agents._base import Array
from bandit_gym.jax.agents.successive_rejects import PhaseState, SuccessiveRejects


@dataclass(frozen=True)
class SAR(SuccessiveRejects):
    r"""Successive Accepts and Rejects: SR's phases, but each phase removes the active arm of largest empirical
    gap, accepting it if it is among the active top ones, rejecting it otherwise.

    Paper: S. Bubeck, T. Wang, N. Viswanathan, Multiple Identifications in Multi-Armed Bandits, ICML 2013 (cited
    by gabillon2012 §1). Phase lengths as ``SuccessiveRejects``. At the end of phase \(k\), with the active arms
    sorted by empirical mean \(\sigma_1 \ge \sigma_2 \ge \dots\) and \(l\) arms still to accept:

    $$
    \hat\Delta_r = \hat\mu_{\sigma_r} - \hat\mu_{\sigma_{l+1}} \ (r \le l), \qquad
    \hat\mu_{\sigma_l} - \hat\mu_{\sigma_r} \ (r > l)
    $$

    the arm of largest \(\hat\Delta\) leaves: accepted if \(r \le l\) (then \(l \leftarrow l - 1\)), rejected
    otherwise; the largest gap is that of the first or of the last rank. Output: the accepted arms and, after the
    last phase, the active arm if one is still to accept. Defaults: none (no parameter but ``tie_break``); any
    \(m\).

    Equal in distribution to ``bandit_gym.agents.SAR``: the numpy twin's readings where the paper is silent (its
    docstring), played by position in the copy's arm order: ranking ties go to the first arm in the order; on
    equal largest gaps the higher-ranked arm leaves (the best active arm before the worst; among arms of equal
    lowest mean, the first); with \(l = 0\) the last-ranked active arm is rejected (lowest mean, the last in the
    order among equal means); with \(l\) = the number of active arms the best one is accepted; a single active arm
    left is accepted if one is still missing; the same answer before the end (``SuccessiveRejects.answer``).

    Difference: the gap comparison. At a removal every active arm has the same count (the phase's \(n_k\)), and the
    gaps are compared exactly, on differences of sums, so that equal gaps tie as the rule above says (the
    higher-ranked arm leaves). The numpy rule compares float64 differences of float64 means, so a tie of the
    exact gaps (common with Bernoulli arms, e.g. sums 5, 4, 3, 2 for \(m = 2\)) goes either way with its rounding
    (about one exact tie in seven goes to the lowest arm there), against its own stated tie rule. Float32 has
    no faithful way to replay float64 rounding. Played on the same samples the two rules end on different
    answers in 1-7% of episodes on small instances with \(m \ge 2\) (a simulation of the phases), but neither the
    error, the regret nor the frequencies of the answer sets differ measurably (the tests: \(\lvert z \rvert < 4\)
    with 20,000 episodes; 200,000 episodes on three \(m \ge 2\) instances gave \(\lvert z \rvert \le 0.6\)). Other
    comparisons of means are in float32, as in ``SuccessiveRejects``.
    """

    numpy_agent: ClassVar[str] = "SAR"
    accepts: ClassVar[bool] = True

    def remove(self, state: PhaseState, counts: Array, sums: Array, m: Array) -> PhaseState:
        """SAR's removal (``bandit_gym.agents.ranking.accept_or_reject``) by position."""
        k = counts.shape[-1]
        positions = jnp.arange(k)
        alive, accepted = state.alive, state.accepted
        mean = sums / jnp.maximum(counts, 1.0)
        active = jnp.sum(alive).astype(jnp.int32)
        left = m - jnp.sum(accepted).astype(jnp.int32)
        # ranks 0..active-1 of the active positions by (mean desc, position asc); the others after them
        ranked = jnp.lexsort((positions, -mean, ~alive))
        at = jnp.clip(left, 1, k - 1)
        top, kth_arm, after_arm = ranked[0], ranked[at - 1], ranked[at]
        low_arm = ranked[jnp.maximum(active - 1, 0)]  # the last rank: the lowest mean (its last position)
        lows = jnp.sum(alive & (mean == mean[low_arm])).astype(jnp.int32)
        # equal counts at a removal (n_k for every active arm): compare the gaps on sums, exactly
        common = jnp.all(~alive | (counts == counts[top]))
        top_gap = jnp.where(common, sums[top] - sums[after_arm], mean[top] - mean[after_arm])
        bottom_gap = jnp.where(common, sums[kth_arm] - sums[low_arm], mean[kth_arm] - mean[low_arm])
        first_low = jnp.maximum(active - lows, left)  # the first rank >= l of the lowest mean
        rank = jnp.where(top_gap >= bottom_gap, 0, first_low)
        rank = jnp.where(left >= active, 0, rank)
        rank = jnp.where(left <= 0, active - 1, rank)
        arm = ranked[jnp.clip(rank, 0, k - 1)]
        removing = active > 0
        alive = alive.at[arm].set(alive[arm] & ~removing)
        accepted = accepted.at[arm].set(accepted[arm] | (removing & (rank < left)))
        # the last active arm joins the answer if one is still missing
        last = (jnp.sum(alive) == 1) & (jnp.sum(accepted) < m)
        accepted = accepted | (last & alive)
        return state._replace(alive=alive, accepted=accepted)
