"""The times the README and the pages state are the ones ``python -m benchmarks.stated_times`` measured: its page,
``docs/times.md``, is what its CSV gives, and every page that states a command's time quotes that command's latest
CPU-seconds, with an empty compile cache and with a filled one (the times themselves are never asserted)."""

from __future__ import annotations

import csv

import pytest

from benchmarks import stated_times

from .conftest import ROOT


@pytest.fixture(scope="module")
def rows() -> list[dict[str, str]]:
    with (ROOT / "benchmarks" / "stated_times.csv").open(newline="") as file:
        return list(csv.DictReader(file))


def test_the_times_page_is_what_the_measures_give(rows: list[dict[str, str]]) -> None:
    assert (ROOT / "docs" / "times.md").read_text() == stated_times.page(rows)


def test_every_command_was_measured_with_both_caches(rows: list[dict[str, str]]) -> None:
    found = stated_times.latest(rows)
    for name in stated_times.COMMANDS:
        for cache in ("empty", "filled"):
            row = found[(name, cache)]
            assert row["exit"] == "0" and float(row["cpu_s"]) > 0, row


def test_each_page_quotes_the_latest_cpu_seconds_of_the_commands_it_times(rows: list[dict[str, str]]) -> None:
    found = stated_times.latest(rows)
    missing = []
    for name, (_, pages) in stated_times.COMMANDS.items():
        quoted = [stated_times.cpu(found[(name, cache)]) for cache in ("empty", "filled")]
        for page in pages:
            text = " ".join((ROOT / page).read_text().split())  # lines may break anywhere
            missing += [f"{page} lacks {name}'s {value}" for value in quoted if value not in text]
    assert not missing, missing
