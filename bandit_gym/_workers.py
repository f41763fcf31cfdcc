"""Worker processes end with the run that started them.

A joblib (loky) worker busy with a cell does not notice that its parent died (killed, or ended by a signal)
until it returns the cell, which can take minutes; a worker process of a killed ``bandit-gym run`` would go on
computing for nobody. ``end_with_parent``, called at the start of every cell in the worker, starts once per
process a daemon thread that ends the process within about a second of the parent's death (when the worker is
re-parented). In the parent process itself (``jobs=1``) it does nothing.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import time

POLL = 0.5
"""Seconds between two looks at the parent process."""
_watching: set[int] = set()  # the processes (by pid) that already watch their parent


def end_with_parent() -> None:
    """In a worker process (a process with a parent in the multiprocessing sense: loky's, multiprocessing's and
    Dask's workers), end the process when its parent ends."""
    pid = os.getpid()
    if pid in _watching or multiprocessing.parent_process() is None:
        return
    _watching.add(pid)
    parent = os.getppid()
    threading.Thread(target=_watch, args=(parent,), name="bandit-gym-parent-watch", daemon=True).start()


def _watch(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(POLL)
    os._exit(1)  # the parent is gone: no one will read this cell
