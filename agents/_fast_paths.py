"""Which fast paths play an agent's decisions: the marks a class's fast path carries (``plays``,
``writes_answer``) and the rule that switches a parent's fast paths off for a subclass that overrides the hooks
they stand for (``resolve_fast_paths``; ``bandit_gym.agents.base.fast_paths`` resolves it once per class)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple


def plays(*hooks: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Mark a class's fast path (its ``_act_batch``) that calls ``self.<hook>`` for each of ``hooks`` (``"select"``
    for the arm, ``"answer"`` for the answer bits): a subclass's override of those hooks is played through it (see
    ``fast_paths``)."""
    def mark(method: Callable[..., Any]) -> Callable[..., Any]:
        method.plays = hooks  # type: ignore[attr-defined]
        return method
    return mark


plays_select = plays("select")
"""Mark a class's ``_act_batch`` that calls ``self.select`` for the arm (``plays("select")``)."""


def writes_answer(method: Callable[..., Any]) -> Callable[..., Any]:
    """Mark a class's fast path (its ``_act_batch``) that writes the answer of that class's own ``answer`` (a
    compiled step whose ``answer`` reads the same rule): ``act`` adds ``answer`` only for a subclass that overrides
    it (see ``fast_paths``)."""
    method.writes_answer = True  # type: ignore[attr-defined]
    return method


#: the methods through which an agent plays, which a fast path defined above them does not play
_PLAY_METHODS = ("act", "_act_batch", "select", "stop")


class FastPaths(NamedTuple):
    """Which of its class's fast paths an agent plays by (``fast_paths``)."""

    #: the class's ``_act_batch`` (a compiled or vectorised step); False: ``Agent._plain_step``
    step: bool
    #: the class's ``compiled_rollout`` (``Agent.rollout_plan``)
    rollout: bool
    #: the class's batched pulls (``_batch_pulls``, ``batches_on``)
    batches: bool
    #: ``act`` replaces the step's answer by the class's own ``answer`` (which the step does not call)
    own_answer: bool


def resolve_fast_paths(cls: type[Any], base: type[Any]) -> FastPaths:
    """The fast paths that play the decisions of agents of class ``cls``, a subclass of ``base`` (``Agent``).

    An agent decides through ``select``, ``stop`` and ``answer``. A fast path (a compiled step ``_act_batch``, a
    compiled rollout ``compiled_rollout``, a batched allocation ``_batch_pulls``) stands for the decisions of the
    class that defines it: a subclass that overrides one of them (or ``act``), or a mixin listed before that class,
    is played through its override, so each fast path defined in a class after the override in the method
    resolution order is off for it (an ``LSA`` subclass whose ``select`` returns another arm would otherwise be
    played by LSA's compiled index and score exactly LSA's numbers). An
    override of ``answer`` alone keeps the step, whose answer ``act`` replaces by the override's (unless the step
    calls ``answer`` itself, ``plays("answer")``), and the batched allocation (which submits no answer), and
    turns off the compiled rollout (which composes the parent's answer itself). Hooks that a fast path marks with
    ``plays`` are played through by it as they are; a step marked ``writes_answer`` already holds its class's own
    ``answer``."""
    def owner(name: str) -> type:
        return next(klass for klass in cls.__mro__ if name in vars(klass))

    def stands(fast: str, hooks: tuple[str, ...]) -> bool:
        """Whether none of ``hooks`` (other than those the fast path calls itself, ``plays``) is defined in a
        class that comes before the class defining ``fast`` in ``cls``'s method resolution order: a subclass of it,
        or a mixin listed before it (``base``'s own defaults stand for nothing)."""
        above = owner(fast)
        if above is base:
            return True
        played = getattr(vars(above)[fast], "plays", ())
        return not any(before(owner(name), above) for name in hooks if name not in played)

    def before(first: type, second: type) -> bool:
        """Whether ``first`` comes before ``second`` in ``cls``'s method resolution order (overrides it)."""
        return cls.__mro__.index(first) < cls.__mro__.index(second)

    step = stands("_act_batch", ("act", "select", "stop"))
    played = getattr(cls._act_batch, "plays", ()) if step else ()
    # a step that writes its own class's answer (``writes_answer``) needs ``act`` to add only an override of it
    written = step and getattr(cls._act_batch, "writes_answer", False) and not before(owner("answer"),
                                                                                       owner("_act_batch"))
    return FastPaths(
        step=step,
        rollout=stands("compiled_rollout", (*_PLAY_METHODS, "answer")),
        batches=stands("_batch_pulls", _PLAY_METHODS) and stands("batched_family", _PLAY_METHODS),
        own_answer=cls.answer is not base.answer and "answer" not in played and not written,
    )

