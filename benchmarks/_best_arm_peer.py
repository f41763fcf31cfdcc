"""Run one rule of the peer package ``best-arm`` (0.1.1) for ``benchmarks/peer_best_arm.py``.

Runs under the interpreter of an environment where ``best-arm`` is installed (it pins numpy < 2 and scipy < 1.13,
so it cannot share this package's environment); imports nothing of bandit_gym. Reads one JSON object from argv[1]
(``algo``, ``tracker``, ``stopping``, ``stopping_args``, ``algo_args``, ``means``, ``delta``, ``runs``, ``seed``)
and prints one JSON object: each run's pulls and answer, and the CPU seconds of all runs. The peer draws from the
global ``np.random`` (its only seeding): run r is seeded ``seed + r``. The environment is built from a dict, as
``Bandit.load_env`` does, so that the peer writes no ``env_NNNN.json`` file into the working directory.
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np
from best_arm import Bandit, BaseEnvironment  # type: ignore[import-not-found]


def main() -> None:
    job = json.loads(sys.argv[1])
    env = BaseEnvironment.from_dict({"env_name": "bernoulli", "state": {"probs": job["means"]}})
    bandit = Bandit(env_instance=env, algo_name=job["algo"], algo_args={"confidence": job["delta"],
                                                                        **job.get("algo_args", {})},
                    tracker_name=job.get("tracker"), stopping_name=job.get("stopping"),
                    stopping_args=job.get("stopping_args"))
    pulls, answers, cpu = [], [], 0.0
    for run in range(job["runs"]):
        np.random.seed(job["seed"] + run)  # noqa: NPY002 (the peer draws from the global generator only)
        start = time.process_time()
        best, counts, _, _ = bandit.run()
        cpu += time.process_time() - start
        pulls.append(int(counts.sum()))
        answers.append(int(best))
    print(json.dumps({"pulls": pulls, "answers": answers, "cpu": cpu}))


if __name__ == "__main__":
    main()
