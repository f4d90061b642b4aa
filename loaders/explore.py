"""The opening explorer: python -m loaders.explore [--lake DIR|s3://...] [FEN] [--line MOVES] [filters]

Prints the moves played from the position (the FEN's, else the start; after --line's moves, if given), at
any ply: UCI and SAN, games, white wins, draws, black wins, mean Elo, mean eval after the move, mean think
time, first date played (sql/explorer.sql's columns; a game counts once, by the first ply it stands at the
position). The games are found by the position index for the files it covers (`python -m
loaders.position_index` builds it) and a replay scan of the others; --shallow reads the stored keys only
(the first 10 plies). A position no game plays from is one line on stderr and exit 2.
`warehouse.positions.explorer.explore` in Python; `sql/explorer.sql` in the duckdb CLI.
"""

from __future__ import annotations

import argparse
import sys

import polars as pl

# cli first: it handles Ctrl-C while the libraries load.
from loaders import cli
from warehouse.errors import LakeError
from warehouse.lake.location import Lake
from warehouse.positions.explorer import explore
from warehouse.queries.sql import connect


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = cli.OneLineParser(prog="python -m loaders.explore", description=cli.paragraph(__doc__))
    cli.add_lake_argument(p)
    p.add_argument(
        "fen",
        metavar="FEN",
        nargs="?",
        default=cli.STARTING_FEN,
        help="the position, as a FEN (its move counters are ignored; default: the starting position)",
    )
    p.add_argument("--line", metavar="MOVES", help=cli.LINE_HELP)
    p.add_argument("--shallow", action="store_true", help="the stored keys only: no replay of deeper plies")
    cli.add_game_filters(p)
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    return cli.run(lambda: run(args), "nothing was written")


def run(args: argparse.Namespace) -> int:
    lake = Lake.open_existing(args.lake)
    filters = cli.game_filters(args).chosen()
    fen = cli.position(args.fen, args.line)
    moves = explore(fen, lake.location, con=connect(lake.location), deep=not args.shallow, **filters)
    if moves.is_empty():
        kept = " the filters keep" if filters else ""
        raise LakeError(f"{lake.location}: no game{kept} plays a move from this position")
    with pl.Config(tbl_rows=-1, tbl_cols=-1, tbl_width_chars=200, tbl_hide_dataframe_shape=True):
        print(moves)
    print(f"{len(moves):,} moves, {moves['games'].sum():,} games")
    return 0


if __name__ == "__main__":
    sys.exit(main())
