"""Print the layout's numbers that docs/layout.md states: modules and lines of the installed package's sources
(`bandit_gym/`, `agents/`, `wrappers/`), the largest modules, the functions longer than 60 lines, the longest
constructor and the studies' share. The import contracts' cycles and upward imports: `lint-imports`
(tests/test_layout.py).

    python scripts/measure_layout.py
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
STUDIES = ("bandit_gym/studies", "bandit_gym/reproduce.py", "bandit_gym/claims.py", "bandit_gym/rl",
           "bandit_gym/notebooks.py")


def measure() -> dict[str, Any]:
    """The numbers: ``modules``, ``lines``, ``sizes`` (module -> lines), ``long`` ((lines, function) over 60
    lines), ``constructor`` (the longest ``__init__``: (lines, where)) and ``studies`` (their lines)."""
    files = [p for top in ("bandit_gym", "agents", "wrappers") for p in (ROOT / top).rglob("*.py")
             if "__pycache__" not in p.parts]
    sizes = {p.relative_to(ROOT).as_posix(): len(p.read_text().splitlines()) for p in files}
    long, inits = [], []
    for path in files:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                size = node.end_lineno - node.lineno + 1  # type: ignore[operator]
                where = f"{path.relative_to(ROOT).as_posix()}:{node.name}"
                long += [(size, where)] if size > 60 else []
                inits += [(size, where)] if node.name == "__init__" else []
    return {"modules": len(files), "lines": sum(sizes.values()), "sizes": sizes, "long": sorted(long, reverse=True),
            "constructor": max(inits), "studies": sum(n for name, n in sizes.items() if name.startswith(STUDIES))}


def main() -> None:
    m = measure()
    print(f"{m['modules']} modules, {m['lines']:,} lines")
    print("largest:", ", ".join(f"{name} {n}" for name, n in sorted(m["sizes"].items(), key=lambda kv: -kv[1])[:5]))
    print(f"{len(m['long'])} functions longer than 60 lines:", ", ".join(f"{w} {n}" for n, w in m["long"]))
    print("longest constructor:", "{1} {0}".format(*m["constructor"]))
    print(f"studies: {m['studies']:,} lines ({m['studies'] / m['lines']:.1%})")


if __name__ == "__main__":
    main()
