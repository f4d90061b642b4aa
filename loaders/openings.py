"""Export the opening tables: python -m loaders.openings OUT_DIR

Writes OUT_DIR/opening_codes.tsv (code, eco, name: the 6-character codes of games.opening_code) and
OUT_DIR/eco_book.tsv (eco, name, code, fen, pgn: each line of the chess-openings table and the position
it names). Existing files are refused.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

# cli first: it handles Ctrl-C while the libraries load.
from loaders import cli


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = cli.OneLineParser(prog="python -m loaders.openings", description=cli.paragraph(__doc__))
    p.add_argument(
        "out", metavar="OUT_DIR", type=cli.location, help="the folder to write them in (made if needed)"
    )
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    return cli.run(lambda: run(args), "the tables may be partly written")


def run(args: argparse.Namespace) -> int:
    from warehouse.positions.openings import (  # the FENs: python-chess (an extra)
        code_map,
        eco_book,
        write_tsv,
    )

    out = Path(args.out)
    for name, rows in (("opening_codes.tsv", code_map()), ("eco_book.tsv", eco_book())):
        write_tsv(rows, out / name)
        print(f"{out / name}: {len(rows):,} rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
