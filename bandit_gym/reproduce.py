"""Paper reproductions: the experiment specs of each paper and the artefacts they produce
(``bandit-gym reproduce PAPER``).

``PAPER_NAMES`` is the registry of reproductions: each paper's folder, ``bandit_gym/studies/NAME/``, holds its
experiments and figures in ``reproduce.py`` (which defines ``reproduce_NAME`` and ``NAME_specs``) beside its claims
(``claims.py``, read by ``bandit_gym.claims``). Nothing is imported until it is used, so the command line reads the
names without loading pandas or the papers' code; ``PAPERS[name]`` and ``from bandit_gym.reproduce import
reproduce_tao2019`` import the paper's module then.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping
from typing import Any

PAPER_NAMES = ("tao2019", "abernethy2016", "gabillon2012", "chen2017", "hoffman2014", "fixed-confidence")
"""The papers with a reproduction, in the order the docs list them, and the studies beyond them
(``fixed-confidence``: the fixed-confidence agents against the lower bound; its module is ``fixed_confidence``)."""


def _module(name: str) -> str:
    return name.replace("-", "_")


def _paper(module: str) -> Any:
    """The reproduction module of the paper folder ``bandit_gym/studies/<module>/``."""
    return importlib.import_module(f"bandit_gym.studies.{module}.reproduce")


class _Papers(Mapping[str, Callable[..., Any]]):
    """Paper short name -> its reproduction (what ``bandit-gym reproduce PAPER`` calls), imported on first use."""

    def __getitem__(self, name: str) -> Callable[..., Any]:
        if name not in PAPER_NAMES:
            raise KeyError(name)
        module = _paper(_module(name))
        return getattr(module, f"reproduce_{_module(name)}")  # type: ignore[no-any-return]

    def __iter__(self) -> Iterator[str]:
        return iter(PAPER_NAMES)

    def __len__(self) -> int:
        return len(PAPER_NAMES)


PAPERS: Mapping[str, Callable[..., Any]] = _Papers()
"""Paper short name -> its reproduction (what `bandit-gym reproduce PAPER` calls)."""

__all__ = ["PAPERS", "PAPER_NAMES", "abernethy2016_specs", "chen2017_specs", "fixed_confidence_specs",
           "gabillon2012_specs", "hoffman2014_specs", "reproduce_abernethy2016", "reproduce_chen2017",
           "reproduce_fixed_confidence", "reproduce_gabillon2012", "reproduce_hoffman2014", "reproduce_tao2019",
           "tao2019_specs"]


def __getattr__(name: str) -> Any:
    """``reproduce_PAPER``, ``PAPER_specs`` and ``TAO2019_AGENTS`` (documented in
    ``bandit_gym.studies.tao2019.reproduce``), from the paper's module at first use."""
    paper = name.removeprefix("reproduce_").removesuffix("_specs")
    if name == "TAO2019_AGENTS":
        paper = "tao2019"
    if paper in map(_module, PAPER_NAMES) and (name in __all__ or name == "TAO2019_AGENTS"):
        return getattr(_paper(paper), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
