"""Export the lake back to PGN: tags, moves, NAGs, comments with [%eval]/[%clk], variations.

python -m loaders.parquet2pgn [--lake DIR|s3://...] OUT.pgn[.bz2|.zst] [--type blitz] [--year 2025]
"""

from __future__ import annotations

import argparse
import sys
import time

# cli first: it handles Ctrl-C while the libraries load.
from loaders.cli import OneLineParser, location
from loaders.exports import add_selection_arguments, run_export, selection
from loaders.progress import add_progress_argument, export_bar
from warehouse.exports.bgn_json import ExportResult
from warehouse.exports.pgn import export_pgn
from warehouse.lake.location import Lake


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = OneLineParser(
        prog="python -m loaders.parquet2pgn",
        description="Export the lake's games as PGN, one file. The tag order and comment format are in "
        "docs/exports.md.",
    )
    p.add_argument(
        "out",
        metavar="OUT",
        type=location,
        help="output file or s3://bucket/key: .pgn, .pgn.bz2 or .pgn.zst (compressed by the name); "
        "`-` writes plain PGN to standard output; an existing file or directory is refused",
    )
    add_selection_arguments(p)
    add_progress_argument(p)
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    start = time.monotonic()

    def report(result: ExportResult) -> None:
        if args.out != "-":
            seconds = time.monotonic() - start
            print(f"{args.out}: {result.games:,} games, {result.bytes / 1e6:,.1f} MB, {seconds:.1f} s")

    interrupted = (
        "standard output holds the games written so far"
        if args.out == "-"
        else f"nothing was written to {args.out}"
    )

    def export() -> ExportResult:
        with export_bar(args, str(args.out)) as bar:
            return export_pgn(Lake.open(args.lake), args.out, selection(args), bar)

    return run_export(export, report, interrupted)


if __name__ == "__main__":
    sys.exit(main())
