"""Verify a lake: bgn check (python -m warehouse.check) [--lake DIR|s3://bucket/prefix] [--full]

What it checks, and its exit codes: `warehouse.check`.
"""

from __future__ import annotations

import argparse
import sys

# cli first: it handles Ctrl-C while the libraries load.
from loaders import cli
from warehouse import check
from warehouse.lake.location import Lake

EXIT_PROBLEMS = 1


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = cli.OneLineParser(prog="python -m warehouse.check", description=cli.paragraph(check.__doc__))
    cli.add_lake_argument(p)
    p.add_argument("--full", action="store_true", help="decode every column of every file, not only game_id")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    return cli.run(lambda: run(args), "the lake was only read, nothing changed")


def run(args: argparse.Namespace) -> int:
    lake = Lake.open_existing(args.lake)
    problems, stats = check.check(lake, full=args.full)
    for line in problems:
        print(f"problem: {line}")
    verdict = f"{len(problems)} problems" if problems else "ok"
    counts = (
        f"{stats['files']} games files, {stats['plies_files']} plies files, {stats['games']:,} games, "
        f"{stats['loads']} loads"
    )
    print(f"{lake.location}: {counts}: {verdict}")
    return EXIT_PROBLEMS if problems else 0


if __name__ == "__main__":
    sys.exit(main())
