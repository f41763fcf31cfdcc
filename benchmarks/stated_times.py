"""The times that the README and the documentation state, measured by one script.

    python -m benchmarks.stated_times                       # every command below, a few CPU-hours
    python -m benchmarks.stated_times tao2019-quick chen2017-quick
    python -m benchmarks.stated_times --list

Each command runs in a fresh process, in a temporary folder of its own (whatever it writes goes there, and is
removed after), twice: first with an empty compile cache (``NUMBA_CACHE_DIR`` and ``JAX_COMPILATION_CACHE_DIR`` set
to a new folder: what the first run on a machine pays), then with the cache that run left (what every later run
pays). Per run it records the wall-clock seconds, the CPU-seconds of the command and every process it started
(user + system, ``resource.getrusage(RUSAGE_CHILDREN)``), the peak resident memory of its largest process, and the
machine: its processor, its cores and the 1-minute load average just before the run (the CPU-seconds vary little
with the load; the wall-clock seconds are longer on a busy machine, by up to the load over the cores). Installing
the package is not measured: it depends on the network.

The rows are appended to ``benchmarks/stated_times.csv`` (``--out``), one per run, with the date and the commit,
and the latest row of each command and cache is written as a table to ``docs/times.md`` (``--page``; ``--page-only``
rewrites it from the CSV without running anything). The README and the pages quote those rows in whole CPU-seconds
(``tests/test_stated_times.py`` checks that they do). Nothing is asserted about the times: they depend on the machine.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: name -> (the command as a user types it, the pages that state its time)
COMMANDS: dict[str, tuple[list[str], tuple[str, ...]]] = {
    "tao2019-quick": (["bandit-gym", "reproduce", "tao2019", "--quick"],
                      ("README.md", "docs/install.md", "docs/reproductions/tao2019.md")),
    "gabillon2012-quick": (["bandit-gym", "reproduce", "gabillon2012", "--quick"],
                           ("docs/reproductions/gabillon2012.md",)),
    "chen2017-quick": (["bandit-gym", "reproduce", "chen2017", "--quick"], ("docs/reproductions/chen2017.md",)),
    "hoffman2014-quick": (["bandit-gym", "reproduce", "hoffman2014", "--quick"],
                          ("docs/reproductions/hoffman2014.md",)),
    "abernethy2016-quick": (["bandit-gym", "reproduce", "abernethy2016", "--quick"],
                            ("docs/reproductions/abernethy2016.md",)),
    "fixed-confidence-quick": (["bandit-gym", "reproduce", "fixed-confidence", "--quick"],
                               ("README.md", "docs/reproductions/fixed-confidence.md")),
    "rl-in-five-minutes": (["python", "examples/rl_in_five_minutes.py"], ("docs/rl.md",)),
}
FIELDS = ["command", "cache", "wall_s", "cpu_s", "peak_rss_mb", "load_1min", "cores", "processor", "date", "commit",
          "exit"]
#: one run, in its own process so that its children's usage is its own: prints a JSON line
RUN = """
import json, resource, subprocess, sys, time
start = time.perf_counter()
done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
wall = time.perf_counter() - start
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "peak_rss_mb": usage.ru_maxrss / 1024,
                  "exit": done.returncode, "stderr": done.stderr[-2000:]}))
"""


def processor() -> str:
    """The processor's model name (Linux's ``/proc/cpuinfo``), else ``platform.processor()``."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def commit() -> str:
    done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                          check=False)
    return done.stdout.strip() or "unknown"


def measure(name: str, cache: str, folder: str, label: str) -> dict[str, object]:
    """Run command ``name`` once in ``folder`` with the compile caches in ``cache``; its row."""
    env = {**os.environ, "NUMBA_CACHE_DIR": cache, "JAX_COMPILATION_CACHE_DIR": os.path.join(cache, "jax")}
    load = os.getloadavg()[0]
    command = COMMANDS[name][0]
    if command[0] == "bandit-gym":  # the console script of this Python's environment
        command = [shutil.which("bandit-gym", path=os.path.dirname(sys.executable)) or "bandit-gym", *command[1:]]
    elif command[0] == "python":  # this Python, on the repository's file
        command = [sys.executable, str(ROOT / command[1]), *command[2:]]
    done = subprocess.run([sys.executable, "-c", RUN, *command], cwd=folder, env=env, capture_output=True, text=True,
                          check=True)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    if result["exit"] != 0:
        print(f"{name} ({label}) exited {result['exit']}: {result['stderr'].strip().splitlines()[-1:]}",
              file=sys.stderr)
    return {"command": name, "cache": label, "wall_s": round(result["wall_s"], 1), "cpu_s": round(result["cpu_s"], 1),
            "peak_rss_mb": round(result["peak_rss_mb"]), "load_1min": round(load, 2), "cores": os.cpu_count(),
            "processor": processor(), "date": datetime.date.today().isoformat(), "commit": commit(),
            "exit": result["exit"]}


def latest(rows: list[dict[str, str]]) -> dict[tuple[str, str], dict[str, str]]:
    """The last row of each (command, cache) of a CSV's ``rows``."""
    return {(row["command"], row["cache"]): row for row in rows}


def cpu(row: dict[str, str]) -> str:
    """A row's CPU-seconds as the pages quote them: whole seconds (``"23 CPU-s"``)."""
    return f"{round(float(row['cpu_s']))} CPU-s"


def page(rows: list[dict[str, str]]) -> str:
    """The Markdown page of the latest rows: one line per command, both caches side by side."""
    found = latest(rows)
    lines = ["# Times", "",
             "What the commands that the README and these pages time take, measured by one script,",
             "`python -m benchmarks.stated_times`, from `benchmarks/stated_times.csv` (its latest run of each",
             "command; this page is written by the script). Each command ran in a fresh process in an empty",
             "folder, first with an empty compile cache (the first run on a machine compiles the package's code),",
             "then with the cache that run left (every later run). CPU-seconds are the command's and its",
             "children's (user + system); they change little with the machine's load, whereas the wall-clock",
             "seconds grow with it. Installing is not counted: it depends on the network.", "",
             "| command | first run: CPU-s | wall s | later runs: CPU-s | wall s | peak memory | load | machine "
             "| date, commit |",
             "|---|---|---|---|---|---|---|---|---|"]
    for name, (command, _) in COMMANDS.items():
        empty, filled = found.get((name, "empty")), found.get((name, "filled"))
        if empty is None or filled is None:
            continue
        machine = f"{empty['cores']} cores, {empty['processor']}"
        lines.append(f"| `{' '.join(command)}` | {round(float(empty['cpu_s']))} | {float(empty['wall_s']):.0f} "
                     f"| {round(float(filled['cpu_s']))} | {float(filled['wall_s']):.0f} "
                     f"| {max(int(empty['peak_rss_mb']), int(filled['peak_rss_mb']))} MB "
                     f"| {empty['load_1min']}, {filled['load_1min']} | {machine} "
                     f"| {empty['date']}, {empty['commit']} |")
    lines += ["", "The load is the 1-minute load average just before each run (first, later), on a machine of the "
              "cores given: a load above the cores means other work shared the machine, and the wall-clock seconds "
              "are longer by up to the load over the cores.", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.stated_times", description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="*", help=f"commands to time (default: all): {', '.join(COMMANDS)}")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "stated_times.csv"),
                        help="CSV file the rows are appended to")
    parser.add_argument("--page", default=str(ROOT / "docs" / "times.md"),
                        help="Markdown page the latest rows are written to")
    parser.add_argument("--page-only", action="store_true", help="rewrite the page from the CSV, run nothing")
    parser.add_argument("--list", action="store_true", help="print the commands and where their times are stated")
    args = parser.parse_args(argv)
    if args.list:
        for name, (command, where) in COMMANDS.items():
            print(f"{name:24s} {' '.join(command)}    ({', '.join(where)})")
        return 0
    if args.page_only:
        write_page(Path(args.out), Path(args.page))
        return 0
    unknown = [name for name in args.names if name not in COMMANDS]
    if unknown:
        parser.error(f"unknown command(s) {unknown}; choose from {list(COMMANDS)}")
    out = Path(args.out)
    new = not out.exists()
    with out.open("a", newline="") as file:
        writer = csv.DictWriter(file, fieldnames=FIELDS)
        if new:
            writer.writeheader()
        for name in args.names or list(COMMANDS):
            cache, folder = tempfile.mkdtemp(prefix="bg-cache-"), tempfile.mkdtemp(prefix="bg-run-")
            try:
                for label in ("empty", "filled"):
                    row = measure(name, cache, folder, label)
                    writer.writerow(row)
                    file.flush()
                    print(f"{name:24s} {label:6s} wall {row['wall_s']:7.1f} s  CPU {row['cpu_s']:7.1f} s  "
                          f"peak {row['peak_rss_mb']} MB  load {row['load_1min']}", flush=True)
                    shutil.rmtree(folder, ignore_errors=True)  # the second run starts from no stored cells
                    os.makedirs(folder)
            finally:
                shutil.rmtree(cache, ignore_errors=True)
                shutil.rmtree(folder, ignore_errors=True)
    write_page(out, Path(args.page))
    return 0


def write_page(out: Path, target: Path) -> None:
    with out.open(newline="") as file:
        target.write_text(page(list(csv.DictReader(file))))
    print(f"wrote {target}")


if __name__ == "__main__":
    raise SystemExit(main())
