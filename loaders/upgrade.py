"""Upgrade a lake in place: bgn upgrade (python -m loaders.upgrade) [--lake DIR|s3://bucket/prefix]

What changes and how it stays crash-safe: `warehouse.upgrade`, docs/operations.md.
"""

from __future__ import annotations

import argparse
import sys

# cli first: it handles Ctrl-C while the libraries load.
from loaders import cli
from warehouse import upgrade
from warehouse.lake.layout import LAYOUT
from warehouse.lake.location import Lake


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = cli.OneLineParser(prog="python -m loaders.upgrade", description=cli.paragraph(upgrade.__doc__))
    cli.add_lake_argument(p)
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    return cli.run(lambda: run(args), "the upgrade stopped before its commit; the lake is unchanged")


def run(args: argparse.Namespace) -> int:
    lake = Lake.open_existing(args.lake, any_layout=True)
    done = upgrade.upgrade(lake)
    if done is None:
        print(f"{lake.location}: already of layout {LAYOUT}, nothing to do")
    else:
        print(
            f"{lake.location}: upgraded to layout {LAYOUT}: {len(done.files)} files rewritten "
            f"({sum(done.file_rows.values()):,} games with their keys, {sum(done.ply_rows.values()):,} "
            f"plies), {done.seconds} s"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
