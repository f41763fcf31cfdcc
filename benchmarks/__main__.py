"""``python -m benchmarks``: the performance suite (see :mod:`benchmarks.suite`)."""

from benchmarks.suite import main

raise SystemExit(main())
