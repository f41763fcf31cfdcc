r"""Agents of \(\epsilon\)-top-K identification (chen2017).

The agents are imported from their own modules, or from ``bandit_gym.agents`` (whose ``AGENTS`` lists them all).
"""
