"""Export the lake as BGN JSON-lines, bz2, in the BGN archive's layout.

python -m loaders.parquet2json [--lake DIR|s3://...] OUT [--type blitz] [--year 2025] [--month 5]
"""

from __future__ import annotations

import argparse
import sys
import time

# cli first: it handles Ctrl-C while the libraries load.
from loaders.cli import OneLineParser, location, whole_number
from loaders.exports import add_selection_arguments, run_export, selection
from warehouse.export_json import GAMES_PER_FILE, ExportResult, export_json
from warehouse.lake.location import Lake


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = OneLineParser(
        prog="python -m loaders.parquet2json",
        description="Export the lake's games as BGN JSON-lines (one game a line), bz2-compressed, laid out "
        "as OUT/<type>/<year>/<month>/G.<n>.<type>.json.bz2 for spark.read.json. See docs/exports.md.",
    )
    p.add_argument(
        "out",
        metavar="OUT",
        type=location,
        help="output directory or s3://bucket/prefix; must be empty or new",
    )
    p.add_argument(
        "--games-per-file",
        type=whole_number(1),
        default=GAMES_PER_FILE,
        help=f"games per .json.bz2 file, at least 1 (default: {GAMES_PER_FILE:,})",
    )
    add_selection_arguments(p)
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    start = time.monotonic()

    def report(result: ExportResult) -> None:
        seconds = time.monotonic() - start
        rate = result.games / max(seconds, 1e-9)
        print(
            f"{args.out}: {result.games:,} games in {len(result.files)} files, "
            f"{result.bytes / 1e6:,.1f} MB, {seconds:.1f} s ({rate:,.0f} games/s)"
        )

    return run_export(
        lambda: export_json(Lake.open(args.lake), args.out, args.games_per_file, selection(args)),
        report,
        f"nothing was written to {args.out}",
    )


if __name__ == "__main__":
    sys.exit(main())
