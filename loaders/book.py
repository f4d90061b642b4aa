"""Build an opening book from the lake: python -m loaders.book [--lake DIR|s3://...] OUT [--max-ply N] [...]

Each move of the first --max-ply plies (default 30) of standard games, by position: its FEN, UCI and SAN,
white wins, draws, black wins, games, mean rating, first and last date; --min-games K keeps the positions
and moves at least K games reached. OUT's name picks the format: .parquet, .tsv (Ormulogun's: a line of
each position's totals, then its moves), or .bin (PolyGlot, weight = 2 x wins + draws of the side to move;
python-chess's chess.polyglot reads it). Counts on every core, in --memory of rows (default 1G), spilling
sorted runs to a folder beside OUT that is removed at the end. --merge joins Parquet books built apart (a
month each) into OUT in one streaming pass: build them with the default --min-games 1 for exact sums.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

# cli first: it handles Ctrl-C while the libraries load.
from loaders import cli
from warehouse.errors import InputError
from warehouse.lake.location import Lake
from warehouse.output import naming, output_location, work_folder
from warehouse.positions.book import DEFAULT_MAX_PLY, DEFAULT_MEMORY, Filters, count
from warehouse.positions.book_out import FORMATS, merge, publish, refuse_existing, write
from warehouse.queries.sql import connect


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = cli.OneLineParser(prog="python -m loaders.book", description=cli.paragraph(__doc__))
    cli.add_lake_argument(p)
    p.add_argument("out", metavar="OUT", help="the book to write (a new file): .parquet, .tsv or .bin")
    p.add_argument("--merge", nargs="+", metavar="BOOK", help="merge these Parquet books instead of building")
    cli.add_game_filters(p)
    p.add_argument(
        "--max-ply",
        type=cli.whole_number(1),
        default=DEFAULT_MAX_PLY,
        help=f"the moves of each game's first N plies (default {DEFAULT_MAX_PLY})",
    )
    p.add_argument(
        "--min-games",
        type=cli.whole_number(1),
        default=1,
        help="positions and moves reached by at least this many games",
    )
    p.add_argument(
        "--memory",
        type=byte_size,
        default=DEFAULT_MEMORY,
        help="bytes of rows counted in memory before spilling runs to disk: 512M, 2G… (default 1G)",
    )
    return p.parse_args(argv)


UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def byte_size(text: str) -> int:
    """A size in bytes, with an optional K, M or G (binary) suffix."""
    found = re.fullmatch(r"(\d+)([KMG]?)B?", text.strip(), re.IGNORECASE)
    if found is None or int(found[1]) == 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size such as 512M or 2G")
    return int(found[1]) * UNITS[found[2].upper()]


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    return cli.run(lambda: run(args), "the book was not written")


def run(args: argparse.Namespace) -> int:
    out = Path(args.out)
    fmt = out.suffix.lstrip(".")
    if fmt not in FORMATS:
        raise InputError(f"{out}: name a .parquet, .tsv or .bin book")
    if args.merge and fmt != "parquet":
        raise InputError("--merge writes a .parquet book")
    lake = None if args.merge else Lake.open_existing(args.lake)
    output_location(out, lake)  # an OUT inside the lake is refused before the work
    refuse_existing(out)
    start = time.monotonic()
    # The runs and the book being written go to a folder beside OUT (its filesystem: renamed into place);
    # a full disk is named by OUT.
    with naming(str(out)), work_folder(out) as work:
        if lake is None:
            written = merge(args.merge, work / "book.parquet")
            publish(work / "book.parquet", out)
        else:
            filters = Filters(**cli.game_filters(args).chosen(), min_games=args.min_games)
            rows = count(connect(lake.location), work, filters, args.max_ply, args.memory)
            written = write(rows, out, fmt, work)
    source = f" from {len(args.merge)} books" if args.merge else ""
    print(f"{out}: {written:,} rows{source}, {time.monotonic() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
