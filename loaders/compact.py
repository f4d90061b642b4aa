"""Merge small files: bgn compact (python -m warehouse.compact) [--lake DIR|s3://…] [--target-games N]
[--dry-run]

What it merges and how it verifies: `warehouse.compact`, docs/operations.md.
"""

from __future__ import annotations

import argparse
import sys

# cli first: it handles Ctrl-C while the libraries load.
from loaders import cli
from warehouse import compact
from warehouse.lake.location import Lake
from warehouse.lake.parquet import FILE_GAMES

# Below 2, no two files could be merged; a file beyond this many games would be slow to scan and to redo.
TARGET_GAMES_MAX = 100_000_000


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = cli.OneLineParser(prog="python -m warehouse.compact", description=cli.paragraph(compact.__doc__))
    cli.add_lake_argument(p)
    p.add_argument(
        "--target-games",
        type=cli.whole_number(2, TARGET_GAMES_MAX),
        default=FILE_GAMES,
        help=f"games per file, 2 to {TARGET_GAMES_MAX:,} (default: {FILE_GAMES:,})",
    )
    p.add_argument("--dry-run", action="store_true", help="say what would be merged, change nothing")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    return cli.run(lambda: run(args), "compaction stopped before its commit; the lake is unchanged")


def run(args: argparse.Namespace) -> int:
    lake = Lake.open_existing(args.lake)
    done = compact.compact(lake, args.target_games, args.dry_run)
    if isinstance(done, compact.Plan):
        for part, part_groups in done.groups.items():
            print(f"{part}: would merge {sum(map(len, part_groups))} files into {len(part_groups)}")
        if not done.merges:
            print(f"{lake.location}: nothing to compact")
    else:
        print(
            f"{lake.location}: merged {len(done.removes) // 2} files into {len(done.files)} "
            f"({sum(done.file_rows.values()):,} games, same rows and content hash; their plies likewise), "
            f"{done.seconds} s"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
