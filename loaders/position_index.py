"""Build the optional position index: python -m loaders.position_index [--lake DIR|s3://...]

Keys every position of every game of the lake (each ply's and the final one) into a key-sorted table
beside it (`_index/positions/`), so that a search by FEN (`python -m loaders.positions`,
`warehouse.positions.search`) reads a few row groups instead of replaying every ply; with it, the
explorer's pre-aggregate of the positions many games reach (the explorer and `bgn serve` answer
those from it). It replaces the index built before; files loaded or compacted after it are searched by the
replay scan (and the explorer reads the games' moves) until the next build.
"""

from __future__ import annotations

import argparse
import sys
import time

# cli first: it handles Ctrl-C while the libraries load.
from loaders import cli
from warehouse.lake.location import Lake
from warehouse.positions.index import build


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = cli.OneLineParser(prog="python -m loaders.position_index", description=cli.paragraph(__doc__))
    cli.add_lake_argument(p)
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    return cli.run(lambda: run(args), "the index was not built; the lake is unchanged")


def run(args: argparse.Namespace) -> int:
    lake = Lake.open_existing(args.lake)
    start = time.monotonic()
    record = build(lake)
    print(
        f"{lake.location}: position index of {sum(record.covers.values()):,} games, "
        f"{record.positions:,} positions in {len(record.index_files)} files, {time.monotonic() - start:.1f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
