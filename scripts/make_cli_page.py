"""Write docs/cli.md: every subcommand of ``bandit-gym`` with its options, from the CLI's own parser.

    python scripts/make_cli_page.py            # rewrites docs/cli.md
    python scripts/make_cli_page.py --check    # exit 1 if docs/cli.md differs

(argparse's layout differs a little between Python versions; the test suite checks that the page names every
subcommand and option instead of comparing the text.)
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

PAGE = Path(__file__).resolve().parents[1] / "docs" / "cli.md"


def cli_page() -> str:
    from bandit_gym.cli import _parser

    os.environ["COLUMNS"] = "100"  # argparse wraps help at the terminal's width: fix it
    parser = _parser()
    sub = next(action for action in parser._actions if isinstance(action, argparse._SubParsersAction))
    lines = ["# Command line: `bandit-gym`", "",
             "Every subcommand prints its own help with `--help`. A mistake on the command line is one line on "
             "stderr and exit code 2; `--debug` (or `BANDIT_GYM_DEBUG=1`) shows the traceback instead.", "",
             "```text", parser.format_help().rstrip(), "```", ""]
    for name, command in sub.choices.items():
        lines += [f"## `bandit-gym {name}`", "", "```text", command.format_help().rstrip(), "```", ""]
    return "\n".join(lines)


def main() -> int:
    check = "--check" in sys.argv[1:]
    text = cli_page()
    if check:
        if PAGE.read_text() != text:
            print(f"{PAGE} is stale: run python scripts/make_cli_page.py", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(text)
    print(f"wrote {PAGE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
