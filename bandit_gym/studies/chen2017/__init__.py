"""Chen, Chen, Zhang and Zhou (2017), adaptive multiple-arm identification: Figures 1-4 and their claims.

``reproduce.py`` runs its experiments and draws its figures (``bandit-gym reproduce chen2017``); ``claims.py`` reads
the results they write and decides the ledger's rows (``bandit-gym claims``)."""
