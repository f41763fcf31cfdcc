"""Compute the table of rewards of bandit_gym.model_selection: column j = all 160 arms on split j (common to all).

    python scripts/make_model_selection_table.py --splits 100 --seed 0 --jobs 2

Deterministic: the rewards depend only on --seed and --splits (not on --jobs). Parallel across splits, one task
per split; every model runs on one thread (random forests n_jobs=1, BLAS/OpenMP limited to 1 thread per worker).
"""

from __future__ import annotations

import argparse
import datetime
import os
import time
from pathlib import Path

import numpy as np

from bandit_gym.model_selection import MODELS, TABLE_FILE, load_data, pull_split, split_seeds

DEFAULT_OUT = Path(__file__).resolve().parents[1] / "bandit_gym" / "data" / TABLE_FILE
_THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def one_split(split_seed: int) -> np.ndarray:
    """The rewards of all arms on the split of ``split_seed`` (one joblib task)."""
    return pull_split(range(len(MODELS)), split_seed)


def make_table(splits: int, seed: int, jobs: int) -> np.ndarray:
    """(160, splits) rewards, computed by ``jobs`` worker processes with a progress bar."""
    import sklearn
    from joblib import Parallel, delayed, parallel_config
    from threadpoolctl import threadpool_limits
    from tqdm import tqdm

    load_data()  # fails early, in this process, if scikit-learn is missing
    tasks = (delayed(one_split)(s) for s in split_seeds(seed, splits))
    with threadpool_limits(1), parallel_config(backend="loky", inner_max_num_threads=1):
        columns = Parallel(n_jobs=jobs, return_as="generator")(tasks)
        columns = list(tqdm(columns, total=splits, desc=f"splits (sklearn {sklearn.__version__})", mininterval=10))
    return np.stack(columns, axis=1)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splits", type=int, default=100, help="number of random splits (columns), default 100")
    parser.add_argument("--seed", type=int, default=0, help="root seed of the splits, default 0")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes, default 2")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"output .npz, default {DEFAULT_OUT}")
    args = parser.parse_args(argv)
    for variable in _THREAD_VARIABLES:  # inherited by the workers; parallelism is across splits
        os.environ.setdefault(variable, "1")

    import sklearn

    start = time.perf_counter()
    rewards = make_table(args.splits, args.seed, args.jobs)
    seconds = time.perf_counter() - start
    args.out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(
        args.out, rewards=rewards, splits=args.splits, seed=args.seed, sklearn_version=sklearn.__version__,
        seconds=seconds, created=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        dataset="sklearn.datasets.load_diabetes", labels=np.array([arm.label for arm in MODELS]),
    )
    print(f"{rewards.shape} rewards in {seconds:.1f} s ({seconds / args.splits:.2f} s per split, {args.jobs} jobs)"
          f" -> {args.out}")


if __name__ == "__main__":
    main()
