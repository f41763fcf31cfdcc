"""A damaged results folder heals: a cell file that is truncated, empty, foreign, lacks a metric, has the wrong
shape or holds NaN is named, moved aside (never deleted), recomputed and reported; the final table equals an
uninterrupted run's, byte for byte."""

from __future__ import annotations

import io
import warnings
from pathlib import Path

import numpy as np
import pytest

from bandit_gym.cli import main
from bandit_gym.experiments import AgentSpec, ExperimentResult, ExperimentSpec, run_experiment

SPEC = ExperimentSpec(env="ThresholdingBandit-Tao2019Setup1-v0", agents=(AgentSpec("APT"), AgentSpec("LSA")),
                      budgets=(20, 40), runs=6, chunk=2)


def _npz(**arrays: np.ndarray) -> bytes:
    stream = io.BytesIO()
    np.savez(stream, **arrays)  # type: ignore[arg-type]
    return stream.getvalue()


def _damages(cell: bytes) -> dict[str, bytes]:
    """Six ways to damage a cell file, from its sound bytes."""
    if not cell:
        return dict.fromkeys(("truncated", "empty", "foreign", "missing key", "wrong shape", "NaN"), b"")
    with np.load(io.BytesIO(cell)) as data:
        arrays = {key: data[key] for key in data.files}
    metric = "aggregate_regret"
    return {
        "truncated": cell[: len(cell) // 2],
        "empty": b"",
        "foreign": b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4,
        "missing key": _npz(**{key: value for key, value in arrays.items() if key != metric}),
        "wrong shape": _npz(**{**arrays, metric: arrays[metric][:1]}),
        "NaN": _npz(**{**arrays, metric: np.full_like(arrays[metric], np.nan)}),
    }


@pytest.mark.filterwarnings("ignore:.*was damaged")
def test_damaged_cells_are_moved_aside_recomputed_and_reported(tmp_path: Path) -> None:
    clean = tmp_path / "clean"
    run_experiment(SPEC, out=clean, progress=False)
    damaged = tmp_path / "damaged"
    run_experiment(SPEC, out=damaged, progress=False)
    cells = sorted((damaged / "cells").glob("*.npz"))
    ways = {way: _damages(path.read_bytes())[way] for way, path in zip(_damages(b""), cells, strict=False)}
    assert len(cells) >= len(ways) == 6
    for path, bad in zip(cells, ways.values(), strict=False):
        path.write_bytes(bad)
    with pytest.raises(ValueError, match=r"cells/.*\.npz is damaged \(.*\); run the same spec"):
        ExperimentResult.load(damaged)  # loading names the file and what to do; it moves nothing

    result = run_experiment(SPEC, out=damaged, progress=False)
    assert len(result.damaged) == len(ways)
    reasons = {"truncated": "unreadable", "empty": "unreadable", "foreign": "unreadable",
               "missing key": "lacks ['aggregate_regret']", "wrong shape": "aggregate_regret has shape (1, 2), not "
               "(2, 2)", "NaN": "aggregate_regret holds non-numbers or non-finite values"}
    for path, (way, bad) in zip(cells, ways.items(), strict=False):
        aside = damaged / "cells" / "damaged" / path.name
        assert aside.read_bytes() == bad, way  # kept as it was
        assert any(line.startswith(f"cells/{path.name} ({reasons[way]}") for line in result.damaged), way
    assert (damaged / "results.csv").read_bytes() == (clean / "results.csv").read_bytes()
    assert ExperimentResult.load(damaged).summary().equals(ExperimentResult.load(clean).summary())

    cells[0].write_bytes(b"")  # damaged again: the second copy moved aside does not replace the first
    run_experiment(SPEC, out=damaged, progress=False)
    assert (damaged / "cells" / "damaged" / f"{cells[0].name}.1").read_bytes() == b""
    assert (damaged / "cells" / "damaged" / cells[0].name).read_bytes() == ways["truncated"]


def test_the_command_line_reports_the_recomputed_cells(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "spec.toml"
    spec.write_text('env = "ThresholdingBandit-Tao2019Setup1-v0"\nagents = ["APT"]\nbudgets = [20]\nruns = 4\n')
    assert main(["run", str(spec), "--quiet", "--jobs", "1"]) == 0
    cell = next((tmp_path / "spec" / "cells").glob("*.npz"))
    cell.write_bytes(cell.read_bytes()[:100])  # truncated
    capsys.readouterr()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert main(["run", str(spec), "--quiet", "--jobs", "1"]) == 0
    out = capsys.readouterr()
    # one line on stdout (the file, what is wrong, what was done), no Python warning with its source line
    lines = [line for line in out.out.splitlines() if "damaged" in line]
    assert lines == [f"recomputed a damaged cell: {tmp_path / 'spec'}/cells/{cell.name} (unreadable: BadZipFile: "
                     f"File is not a zip file) -> cells/damaged/{cell.name}"]
    assert not [w for w in caught if "damaged" in str(w.message)] and "damaged" not in out.err
