"""Paper reproductions: the experiment specs of each paper and the artefacts they produce
(``bandit-gym reproduce PAPER``)."""

from __future__ import annotations

from bandit_gym.reproduce.abernethy2016 import abernethy2016_specs, reproduce_abernethy2016
from bandit_gym.reproduce.chen2017 import chen2017_specs, reproduce_chen2017
from bandit_gym.reproduce.gabillon2012 import gabillon2012_specs, reproduce_gabillon2012
from bandit_gym.reproduce.hoffman2014 import hoffman2014_specs, reproduce_hoffman2014
from bandit_gym.reproduce.tao2019 import TAO2019_AGENTS, reproduce_tao2019, tao2019_specs

PAPERS = {"tao2019": reproduce_tao2019, "abernethy2016": reproduce_abernethy2016,
          "gabillon2012": reproduce_gabillon2012, "chen2017": reproduce_chen2017, "hoffman2014": reproduce_hoffman2014}
"""Paper short name -> its reproduction (what `bandit-gym reproduce PAPER` calls)."""

__all__ = ["PAPERS", "TAO2019_AGENTS", "abernethy2016_specs", "chen2017_specs", "gabillon2012_specs",
           "hoffman2014_specs", "reproduce_abernethy2016", "reproduce_chen2017", "reproduce_gabillon2012",
           "reproduce_hoffman2014", "reproduce_tao2019", "tao2019_specs"]
