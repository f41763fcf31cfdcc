"""Abernethy, Amin and Zhu (2016), the threshold bandit with censored feedback: the m- and T-scaling
of its theorems and their claims.

``reproduce.py`` runs its experiments and draws its figures (``bandit-gym reproduce abernethy2016``);
``claims.py`` reads the results they write and decides the ledger's rows (``bandit-gym claims``)."""
