"""The worker processes of a `bandit-gym run` end with it: killed (SIGKILL), terminated (SIGTERM) or interrupted
(SIGINT, Ctrl-C), the parent leaves no worker computing for nobody."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

#: busy for minutes on 2 workers: the parent is ended long before it finishes
BUSY = """env = "ThresholdingBandit-Tao2019Setup1-v0"
agents = ["APT", "LSA", "Uniform", "UCBE"]
budgets = [5000, 10000, 20000]
runs = 400000
chunk = 500
"""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state != "Z"


def _children(pid: int) -> list[int]:
    tasks = Path(f"/proc/{pid}/task")
    found: list[int] = []
    for task in tasks.iterdir() if tasks.exists() else []:
        children = task / "children"
        if children.exists():
            found += [int(child) for child in children.read_text().split()]
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM, signal.SIGINT], ids=lambda s: s.name)
def test_workers_end_with_the_run(tmp_path: Path, sig: signal.Signals) -> None:
    (tmp_path / "busy.toml").write_text(BUSY)
    command = [sys.executable, "-m", "bandit_gym.cli", "run", "busy.toml", "--jobs", "2", "--quiet"]
    # SIGINT at its default, as for a terminal's foreground job (a background job of a shell ignores it)
    run = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                           preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    workers: list[int] = []
    try:
        deadline = time.monotonic() + 600  # generous: a busy machine starts workers slowly
        while len(_children(run.pid)) < 2 or not any((tmp_path / "busy" / "cells").glob("*.npz")):
            assert run.poll() is None and time.monotonic() < deadline, run.stderr.read() if run.stderr else ""
            time.sleep(0.2)
        workers = _children(run.pid)
        run.send_signal(sig)
        run.wait(timeout=300)
        deadline = time.monotonic() + 120
        while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not [pid for pid in workers if _alive(pid)]
        if sig == signal.SIGINT:
            assert run.returncode == 130
            assert "interrupted" in (run.stderr.read() if run.stderr else "")
    finally:
        if run.poll() is None:
            run.kill()
        for pid in workers + _children(run.pid):
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)  # a failed test leaves no process behind either
