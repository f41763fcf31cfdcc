"""Gabillon, Ghavamzadeh and Lazaric (2012), UGapE: best-arm identification on Audibert, Bubeck and
Munos's problems and the paper's claims.

``reproduce.py`` runs its experiments and draws its figures (``bandit-gym reproduce gabillon2012``); ``claims.py`` reads
the results they write and decides the ledger's rows (``bandit-gym claims``)."""
