"""Tao, Blanco, Peng and Zhou (2019), the thresholding bandit's LSA: Figure 1's setups and their claims.

``reproduce.py`` runs its experiments and draws its figures (``bandit-gym reproduce tao2019``); ``claims.py`` reads
the results they write and decides the ledger's rows (``bandit-gym claims``)."""
