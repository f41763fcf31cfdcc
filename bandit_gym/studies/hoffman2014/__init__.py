"""Hoffman, Shahriari and de Freitas (2014), BayesGap: correlated best-arm identification on traffic
speeds and the automatic model selection study, with their claims.

``reproduce.py`` runs its experiments and draws its figures (``bandit-gym reproduce hoffman2014``), with the
traffic studies' inputs and tables in ``traffic.py`` and the model selection study's runs in ``model_selection.py``;
``claims.py`` reads the results they write and decides the ledger's rows (``bandit-gym claims``)."""
