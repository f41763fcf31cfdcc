"""Per-copy episode bookkeeping shared by the single and vector wrappers (arrays with a leading axis N).

The trackers read the instance from the env's engine (``env.unwrapped.engine``), which holds it with a
leading copy axis for a single env (N = 1) and a vector env alike.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import VectorWrapper
from gymnasium.wrappers import TimeLimit

from bandit_gym.envs._base import engine_of, refuse_time_limit


def below(env: Any) -> list[Any]:
    """The wrappers between ``env`` (itself included) and the env it wraps, outermost first."""
    chain = []
    while isinstance(env, (gym.Wrapper, VectorWrapper)):
        chain.append(env)
        env = env.env
    return chain


def refuse_time_limits_below(env: Any, engine: Any, user: str) -> None:
    """Raise a ValueError if a ``TimeLimit`` under ``env`` would end a pure-exploration episode before its answer
    step (see ``bandit_gym.envs._base.refuse_time_limit``)."""
    for wrapper in below(env):
        if isinstance(wrapper, TimeLimit):
            refuse_time_limit(engine, int(wrapper._max_episode_steps), f"{user} over a TimeLimit: ")


def pure_exploration_engine(env: Any, user: str) -> Any:
    """The engine of ``env``, or a ValueError naming ``user`` if the env is online (threshold or multi-armed
    bandit: a ``Discrete(K)`` action and a reward at every round)."""
    engine = engine_of(env)
    if not engine.pure_exploration:
        raise ValueError(f"{user} needs a pure-exploration env (thresholding, best arm, top K, correlated arms), got "
                         f"{type(env.unwrapped).__name__}, whose action is already Discrete(K) and whose reward is "
                         "paid at every round")
    return engine


def check_info_key(info_key: object) -> str:
    """``info_key`` as given, or a clear error: a non-empty string."""
    if not isinstance(info_key, str) or not info_key:
        raise TypeError(f"info_key must be a non-empty string, got {info_key!r}")
    return info_key


def write_info(info: dict[str, Any], key: str, value: Any, ended: np.ndarray | None = None) -> None:
    """Put ``value`` into ``info[key]`` (and a vector env's mask of the copies that ended into ``info["_" +
    key]``), refusing to overwrite a key the env or another wrapper wrote, as Gymnasium's
    ``RecordEpisodeStatistics`` does."""
    keys = (key,) if ended is None else (key, "_" + key)
    taken = [name for name in keys if name in info]
    if taken:
        raise ValueError(f"info already holds the key {taken[0]!r} (written by the env or a wrapper under this one); "
                         f"pass another info_key; the info keys are {list(info)}")
    info[key] = value
    if ended is not None:
        info["_" + key] = ended


def refuse_unscored_ends(engine: Any, rows: np.ndarray, user: str) -> None:
    """Raise a ValueError if an episode of a pure-exploration engine ended (truncated from outside the env, e.g.
    by a time limit) in ``rows`` without the env scoring its answer: its regret would stand next to a return
    that never paid the loss."""
    if engine.answer_step is None:
        return
    cut = rows[~engine.finished[rows]]
    if cut.size:
        raise ValueError(f"{user}: the episode of copy {int(cut[0])} was truncated by a wrapper before the env "
                         f"scored its answer (step {engine.answer_step}); a pure-exploration env takes no time limit: "
                         f"pass budget=n - 1 to the env for episodes of n steps")


class EpisodeTracker:
    """Return, length, pulls and (threshold and multi-armed bandits) pseudo-regret of N running episodes."""

    def __init__(self, env: Any, num: int) -> None:
        self.env = env
        self.num = num
        self.ret = np.zeros(num)
        self.length = np.zeros(num, dtype=np.int64)
        self.regret = np.zeros(num)

    def start(self, rows: np.ndarray | slice) -> None:
        self.ret[rows] = 0.0
        self.length[rows] = 0
        self.regret[rows] = 0.0

    def add(self, rows: np.ndarray, rewards: np.ndarray, info: dict[str, Any]) -> None:
        self.ret[rows] += rewards[rows]
        self.length[rows] += 1
        if not self.env.pure_exploration:  # online: the pseudo-regret of the pulls
            self.regret[rows] += info["best_expected_reward"][rows] - info["expected_reward"][rows]

    def finish(self, rows: np.ndarray, actions: np.ndarray, obs: dict[str, np.ndarray],
               means: np.ndarray | None = None) -> dict[str, np.ndarray]:
        """Metrics of the episodes ending in ``rows``, one array entry per copy (zeros elsewhere); ``actions``
        the full last actions (answer bits in ``[:, 1:]``), ``obs`` the last observations, ``means`` the rows'
        instance (default: the engine's, which must not have been reset yet)."""
        out = {"regret": np.zeros(self.num), "return": np.zeros(self.num),
               "length": np.zeros(self.num, dtype=np.int64), "pulls": np.zeros(self.num, dtype=np.int64)}
        out["return"][rows] = self.ret[rows]
        out["length"][rows] = self.length[rows]
        if self.env.pure_exploration:
            truth = self.env.means[rows] if means is None else means
            for key, value in self.env.answer_metrics(actions[rows, 1:], truth).items():
                out.setdefault(key, np.zeros(self.num))[rows] = value
            out["answer"] = np.zeros((self.num, actions.shape[1] - 1), dtype=np.int8)
            out["answer"][rows] = actions[rows, 1:]
            out["pulls"][rows] = obs["counts"][rows].sum(axis=1)
        else:
            out["regret"][rows] = self.regret[rows]
            out["pulls"][rows] = self.length[rows]
        return out


def checkpoint_budgets(env: Any, budgets: Any) -> np.ndarray:
    """The checkpoints of an anytime record as int64, after checking them against the engine ``env``: a
    pure-exploration env, and a non-empty strictly increasing sequence of integers in ``0..env.budget``."""
    if not env.pure_exploration:
        raise ValueError(f"the anytime wrapper needs a pure-exploration env, got a {env.family.value!r} env")
    if getattr(env, "budget_range", None) is not None:
        raise ValueError(f"the anytime wrapper needs a fixed budget; this env draws one per episode "
                         f"(budget={env.budget_range}): pass an integer budget")
    b = np.asarray(budgets)
    if b.ndim != 1 or b.size == 0 or not np.issubdtype(b.dtype, np.integer):
        raise ValueError(f"budgets must be a non-empty 1-D sequence of integers, got {budgets!r}")
    if np.any(np.diff(b) <= 0) or b[0] < 0 or b[-1] > env.budget:
        raise ValueError(f"budgets must be strictly increasing integers in 0..budget={env.budget}, got {b.tolist()}")
    return b.astype(np.int64)


class AnytimeTracker:
    """Loss of the submitted answer at checkpoint budgets, for N running pure-exploration episodes (thresholding,
    best arm, top K).

    The answer submitted when exactly b pulls have been made is the answer formed from b samples; its regret
    and error are recorded for checkpoint b. An episode that stops before a checkpoint keeps its final answer
    for the remaining checkpoints; a batched allocation that jumps past checkpoints records the next answer
    for all of them.
    """

    def __init__(self, env: Any, num: int, budgets: Any) -> None:
        b = checkpoint_budgets(env, budgets)
        self.env = env
        self.num = num
        self.budgets = b
        self.next = np.zeros(num, dtype=np.int64)
        self.regret = np.full((num, b.size), np.nan)
        self.error = np.full((num, b.size), np.nan)

    def start(self, rows: np.ndarray | slice) -> None:
        self.next[rows] = 0
        self.regret[rows] = np.nan
        self.error[rows] = np.nan

    def observe(self, rows: np.ndarray, pulls: np.ndarray, actions: np.ndarray) -> None:
        """Record the answers of copies ``rows`` for every checkpoint their pull count has reached.

        With single pulls a checkpoint b is reached exactly at the step whose answer comes from b samples; a
        batched allocation may pass several checkpoints at once, which then all get the next answer."""
        reached = np.searchsorted(self.budgets, pulls[rows], side="right")
        hit = rows[reached > self.next[rows]]
        if not hit.size:
            return
        first, last = self.next[hit], reached[reached > self.next[rows]]
        single = last - first == 1
        self._record(hit[single], first[single], actions[hit[single], 1:])
        for row, lo, hi in zip(hit[~single], first[~single], last[~single], strict=True):
            cols = np.arange(lo, hi)
            self._record(np.full(cols.size, row), cols, np.repeat(actions[row, None, 1:], cols.size, axis=0))
        self.next[hit] = last

    def finish(self, rows: np.ndarray, actions: np.ndarray) -> dict[str, np.ndarray]:
        for row in rows[self.next[rows] < self.budgets.size]:
            cols = np.arange(self.next[row], self.budgets.size)
            self._record(np.full(cols.size, row), cols, np.repeat(actions[row, None, 1:], cols.size, axis=0))
        return {"budget": self.budgets, "regret": self.regret.copy(), "error": self.error.copy()}

    def _record(self, rows: np.ndarray, cols: np.ndarray, answers: np.ndarray) -> None:
        scores = self.env.answer_metrics(answers, self.env.means[rows])
        for key in ("regret", "error"):
            getattr(self, key)[rows, cols] = scores[key]
