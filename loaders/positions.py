"""Find the games that reach a position: python -m loaders.positions [--lake DIR|s3://...] [FEN]
[--line MOVES] [--pgn OUT]

Prints the games (id, the ply the position stands at, players, result, date) or, with --pgn, writes them
as PGN. Exact match on the position (pieces, side to move, castling rights, en-passant file): the stored
keys of the first plies and the final positions, then a replay scan of the deeper plies (`--shallow`
skips it); or the position index, when `python -m loaders.position_index` built it, for the files it
covers. `warehouse.positions.search` in Python, `games_at(fen)` in SQL.
"""

from __future__ import annotations

import argparse
import sys

import duckdb
import polars as pl

# cli first: it handles Ctrl-C while the libraries load.
from loaders import cli
from warehouse.exports.pgn import keyed_pgn
from warehouse.lake.location import Lake
from warehouse.output import output_file
from warehouse.positions.search import search
from warehouse.queries.sql import connect


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = cli.OneLineParser(prog="python -m loaders.positions", description=cli.paragraph(__doc__))
    cli.add_lake_argument(p)
    p.add_argument(
        "fen",
        metavar="FEN",
        nargs="?",
        help="the position, as a FEN (its move counters are ignored; with --line, default: the start)",
    )
    p.add_argument("--line", metavar="MOVES", help=cli.LINE_HELP)
    p.add_argument(
        "--pgn", metavar="OUT", type=cli.location, help="write the games as PGN to OUT (a new file)"
    )
    p.add_argument("--chess960", action="store_true", help="read the FEN's castling rights as Chess960's")
    p.add_argument("--shallow", action="store_true", help="the stored keys only: no replay of deeper plies")
    cli.add_game_filters(p, ("type", "player"))
    args = p.parse_args(argv)
    if args.fen is None and args.line is None:
        p.error("give the position: a FEN, or --line MOVES (from the start)")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    return cli.run(lambda: run(args), "nothing was written")


def run(args: argparse.Namespace) -> int:
    lake = Lake.open_existing(args.lake)
    con = connect(lake.location)
    if args.pgn is None:
        found = find(args, lake, con)
        with pl.Config(tbl_rows=-1, tbl_cols=-1, tbl_width_chars=200, fmt_str_lengths=40):
            print(found.drop("game_key"))
        print(f"{len(found):,} games")
        return 0
    # Opened before the search: an existing OUT, or one inside the lake, is refused at once.
    with output_file(args.pgn, lake) as out:
        found = find(args, lake, con)
        for text in keyed_pgn(con, found["game_key"].to_arrow()):
            out.write(text.encode())
    print(f"{args.pgn}: {len(found):,} games")
    return 0


def find(args: argparse.Namespace, lake: Lake, con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """The games at the position of `args`, of its filters."""
    filters = {"type": args.type} if args.type else {}
    fen = cli.position(args.fen or cli.STARTING_FEN, args.line, args.chess960)
    found = search(fen, lake.location, chess960=args.chess960, deep=not args.shallow, con=con, **filters)
    if args.player:
        found = found.filter((pl.col("white_name") == args.player) | (pl.col("black_name") == args.player))
    return found


if __name__ == "__main__":
    sys.exit(main())
