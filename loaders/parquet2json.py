"""Export the lake as BGN JSON-lines, bz2, in the BGN archive's layout.

python -m loaders.parquet2json [--lake DIR|s3://...] OUT [--type blitz] [--year 2025] [--month 5]
"""

from __future__ import annotations

import argparse
import sys
import time

from loaders.export_cli import add_selection_arguments, lake_location, run_export, selection
from warehouse.export_json import GAMES_PER_FILE, export_json


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m loaders.parquet2json",
        description="Export the lake's games as BGN JSON-lines (one game a line), bz2-compressed, laid out "
        "as OUT/<type>/<year>/<month>/G.<n>.<type>.json.bz2 for spark.read.json. See docs/exports.md.",
    )
    p.add_argument("out", metavar="OUT", help="output directory or s3://bucket/prefix; must be empty or new")
    p.add_argument(
        "--games-per-file",
        type=int,
        default=GAMES_PER_FILE,
        help=f"games per .json.bz2 file (default: {GAMES_PER_FILE:,})",
    )
    add_selection_arguments(p)
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.games_per_file < 1:
        print("error: --games-per-file must be at least 1", file=sys.stderr)
        return 2
    lake = lake_location(args.lake)
    start = time.monotonic()
    result = run_export(lambda: export_json(lake, args.out, args.games_per_file, selection(args)))
    if result is None:
        return 2
    seconds = time.monotonic() - start
    print(
        f"{args.out}: {result.games:,} games in {len(result.files)} files, {result.bytes / 1e6:,.1f} MB, "
        f"{seconds:.1f} s ({result.games / max(seconds, 1e-9):,.0f} games/s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
