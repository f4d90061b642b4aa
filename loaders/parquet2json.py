"""Export the lake as BGN JSON-lines, bz2 (or zstd), in the BGN archive's layout; or as study JSON.

python -m loaders.parquet2json [--lake DIR|s3://...] OUT [--compression zst] [--type blitz] [--year 2025]
python -m loaders.parquet2json --format study [--lines] OUT ...
"""

from __future__ import annotations

import argparse
import sys
import time

# cli first: it handles Ctrl-C while the libraries load.
from loaders.cli import OneLineParser, location, whole_number
from loaders.exports import add_selection_arguments, run_export, selection
from loaders.progress import add_progress_argument, export_bar
from warehouse.exports.bgn_json import COMPRESSIONS, GAMES_PER_FILE, ExportResult, export_json
from warehouse.exports.study import export_study
from warehouse.lake.location import Lake


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = OneLineParser(
        prog="python -m loaders.parquet2json",
        description="Export the lake's games as BGN JSON-lines (one game a line), bz2-compressed, laid out "
        "as OUT/<type>/<year>/<month>/G.<n>.<type>.json.bz2 for spark.read.json; or as study JSON, one "
        "OUT/<game_id>.json a game (--lines: one document a line in the file OUT). See docs/exports.md.",
    )
    p.add_argument(
        "out",
        metavar="OUT",
        type=location,
        help="output directory or s3://bucket/prefix, empty or new; with --lines a new file "
        "(.bz2/.zst compressed) or `-` for standard output",
    )
    p.add_argument(
        "--format",
        choices=("bgn", "study"),
        default="bgn",
        help="bgn: BGN JSON-lines (default); study: study JSON with nested variations",
    )
    p.add_argument(
        "--lines",
        action="store_true",
        help="study JSON only: one document a line in the file OUT, instead of a file a game",
    )
    p.add_argument(
        "--fen",
        action="store_true",
        help="study JSON only: each move with the position after it (FEN)",
    )
    p.add_argument(
        "--games-per-file",
        type=whole_number(1),
        default=GAMES_PER_FILE,
        help=f"games per .json.bz2 file, at least 1 (default: {GAMES_PER_FILE:,})",
    )
    p.add_argument(
        "--compression",
        choices=COMPRESSIONS,
        default="bz2",
        help="bgn only: the archive's files as .json.bz2 (default: BGN's archive, splittable by Spark) or "
        ".json.zst (~5x faster to write and read; see docs/cluster.md for Spark)",
    )
    add_selection_arguments(p)
    add_progress_argument(p)
    args = p.parse_args(argv)
    if (args.lines or args.fen) and args.format != "study":
        p.error("--lines and --fen go with --format study")
    return args


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

    def export() -> ExportResult:
        lake = Lake.open(args.lake)
        with export_bar(args, str(args.out)) as bar:
            if args.format == "study":
                return export_study(lake, args.out, args.lines, selection(args), args.fen, bar)
            return export_json(lake, args.out, args.games_per_file, selection(args), args.compression, bar)

    return run_export(
        export,
        report,
        f"nothing was written to {args.out}",
    )


if __name__ == "__main__":
    sys.exit(main())
