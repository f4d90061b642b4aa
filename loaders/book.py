"""Build an opening book from the lake: python -m loaders.book [--lake DIR|s3://...] OUT [filters]

Each move of the first 9 plies of standard games (the moves between the 10 positions whose keys the lake
stores), by position: its FEN, UCI and SAN, white wins, draws, black wins, games, mean rating, first and
last date. OUT's name picks the format: .parquet, .tsv, or .bin (PolyGlot, weight = 2 x wins + draws of the
side to move; python-chess's chess.polyglot reads it). --merge joins Parquet books built apart (a month
each) into OUT in one streaming pass: build them with the default --min-games 1 for exact sums.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import PurePosixPath

# cli first: it handles Ctrl-C while the libraries load.
from loaders import cli
from warehouse.errors import InputError
from warehouse.export_out import output_file
from warehouse.lake.location import Lake
from warehouse.positions.book import FORMATS, Filters, build, merge, write
from warehouse.sql import connect


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = cli.OneLineParser(prog="python -m loaders.book", description=cli.paragraph(__doc__))
    cli.add_lake_argument(p)
    p.add_argument(
        "out", metavar="OUT", type=cli.location, help="the book to write (a new file): .parquet, .tsv or .bin"
    )
    p.add_argument("--merge", nargs="+", metavar="BOOK", help="merge these Parquet books instead of building")
    cli.add_game_filters(p)
    p.add_argument(
        "--min-games", type=cli.whole_number(1), default=1, help="rows of at least this many games"
    )
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    return cli.run(lambda: run(args), "the book was not written")


def run(args: argparse.Namespace) -> int:
    out = args.out
    fmt = PurePosixPath(out).suffix.lstrip(".")
    if fmt not in FORMATS:
        raise InputError(f"{out}: name a .parquet, .tsv or .bin book")
    if args.merge and fmt != "parquet":
        raise InputError("--merge writes a .parquet book")
    start = time.monotonic()
    lake = None if args.merge else Lake.open_existing(args.lake)
    filters = Filters(**cli.game_filters(args).chosen(), min_games=args.min_games)
    # Opened before the work (an existing OUT, or one inside the lake, is refused at once); the book
    # appears at OUT only once whole.
    with output_file(out, lake) as file:
        if lake is None:
            rows = merge(args.merge, file)
        else:
            book = build(connect(lake.location), filters)
            write(book, file, fmt)
            rows = book.num_rows
    source = f" from {len(args.merge)} books" if args.merge else ""
    print(f"{out}: {rows:,} rows{source}, {time.monotonic() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
