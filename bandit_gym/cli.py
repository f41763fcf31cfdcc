"""Command line: ``bandit-gym list`` (more commands arrive with the experiment engine)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import gymnasium as gym


def _list() -> str:
    import bandit_gym
    from bandit_gym.agents import AGENTS

    lines = ["Environments (gym.make(id); gym.make_vec(id, num_envs=N, vectorization_mode='vector_entry_point')):"]
    width = max(map(len, bandit_gym.ENV_SPECS))
    for env_id, (_stem, _kwargs, paper, description) in bandit_gym.ENV_SPECS.items():
        assert env_id in gym.registry
        lines.append(f"  {env_id.ljust(width)}  [{paper}] {description}")
    lines.append("")
    lines.append("Agents (bandit_gym.agents):")
    width = max(map(len, AGENTS))
    for name, cls in AGENTS.items():
        summary = (cls.__doc__ or "").strip().splitlines()[0]
        lines.append(f"  {name.ljust(width)}  [{', '.join(cls.families)}] {summary}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bandit-gym", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="print the registered envs and the agents")
    args = parser.parse_args(argv)
    if args.command == "list":
        print(_list())
    return 0


if __name__ == "__main__":
    sys.exit(main())
