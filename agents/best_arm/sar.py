"""Successive Accepts and Rejects (Bubeck, Wang, Viswanathan 2013), fixed-budget m-best identification."""

from __future__ import annotations

from bandit_gym.agents.best_arm.successive_rejects import SuccessiveRejects


class SAR(SuccessiveRejects):
    """Successive Accepts and Rejects: SR's phases, but each phase removes the active arm of largest empirical
    gap, accepting it if it is among the active top ones, rejecting it otherwise.

    Paper: S. Bubeck, T. Wang, N. Viswanathan, Multiple Identifications in Multi-Armed Bandits, ICML 2013.
    Not in ALGORITHMS.md; the fixed-budget baseline for m > 1 that gabillon2012's issue names.

    Phase lengths as :class:`SuccessiveRejects`. At the end of phase k, with the active arms sorted by empirical
    mean ``sigma_1 >= ... `` and ``l`` arms still to accept::

        Delta_hat_r = mu_hat_{sigma_r} - mu_hat_{sigma_(l+1)}  (r <= l),  mu_hat_{sigma_l} - mu_hat_{sigma_r}  (r > l)

    the arm of largest ``Delta_hat`` leaves: accepted if ``r <= l`` (then ``l <- l - 1``), rejected otherwise.
    Output: the accepted arms and, after the last phase, the active arm if one is still to accept. Choices: ties
    go to the higher-ranked arm (then the smaller index); with nothing left to accept the worst active arm is
    rejected, with every active arm to accept the best is accepted. The answer submitted before the end: the
    accepted arms plus the best active ones. m = 1 gives SR's answers with SAR's removal rule.
    """

    rule = "SAR"

    def check_m(self, m: int) -> None:
        """Any m."""
