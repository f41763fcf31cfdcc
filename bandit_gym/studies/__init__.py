"""The studies: one folder per paper (``tao2019``, ``abernethy2016``, ``gabillon2012``, ``chen2017``,
``hoffman2014``) and per study beyond one paper (``fixed_confidence``), each holding its experiments and figures
(``reproduce.py``) beside its claims (``claims.py``).

Below the paper folders, the parts they share: ``_report`` (running a paper's specs, its report and tables),
``_figures`` (the figures several papers draw), ``_ledger`` (the ledger's row types and readers), ``_verdict``
(the one procedure that decides every verdict), ``_compare`` and ``_stats`` (the tests). No paper folder imports
another. ``bandit_gym.reproduce`` and ``bandit_gym.claims``, above them, are what the command line calls.
The RL study is its own package, ``bandit_gym.rl``.
"""
