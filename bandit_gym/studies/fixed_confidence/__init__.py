"""The fixed-confidence study: every fixed-confidence best-arm rule against the lower bound T*(mu), and
the claims of the papers behind it (Garivier and Kaufmann 2016, the Top Two papers, the stopping rules').

``reproduce.py`` runs its experiments and draws its figures (``bandit-gym reproduce fixed-confidence``), with
``sweep.py``'s delta-sweep (best arm, epsilon-best arm, top-m, thresholding, each against its own bound);
``claims.py`` reads the results they write and decides the ledger's rows (``bandit-gym claims``)."""
