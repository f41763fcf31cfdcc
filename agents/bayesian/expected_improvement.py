"""Expected improvement (Mockus 1982; Jones et al. 1998) over correlated arms (a hoffman2014 baseline)."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from scipy import special

from bandit_gym.agents.base import Obs
from bandit_gym.agents.bayesian._base import ImprovementAgent


class EI(ImprovementAgent):
    """EI: pull the arm of largest expected improvement over the incumbent.

    Paper: Mockus 1982, Jones 2001; a baseline of hoffman2014 §6 (ALGORITHMS.md §E.5 (7)).

    ``a_t = argmax_k (mu_k - mu+ - xi) Phi(z_k) + s_k phi(z_k)``, ``z_k = (mu_k - mu+ - xi) / s_k``, with the
    incumbent ``mu+`` the largest posterior mean among the arms pulled so far (all arms before the first pull,
    as pybo's ``GPAcq``). An arm with ``s_k = 0`` has improvement 0. Default ``xi = 0`` (pybo's). Recommendation
    as :class:`ThompsonSampling`. Anytime.
    """

    default_xi: ClassVar[float] = 0.0

    def choose(self, obs: Obs, t: np.ndarray) -> np.ndarray:
        d, z, std, uncertain = self.improvement(obs)
        gain = np.where(uncertain, d * special.ndtr(z) + std * np.exp(-0.5 * z**2) / np.sqrt(2.0 * np.pi), 0.0)
        return self.best(gain)
