"""Draw the opening tree: python -m loaders.opening_graph [--lake DIR|s3://...] OUT.dot [--min-share 0.01]

Positions as nodes, labelled with their opening's name where lichess's chess-openings names them, else with
the moves that reach them; moves as edges labelled with their share of the games at their position, pruned
at a share of all games (--min-share); rendered to OUT.svg by Graphviz's `dot`, each node linking to its
board (OUT_boards/<key>.svg, drawn by python-chess's chess.svg). The positions are the book's: the first
--max-ply plies (default 30) of the lake's standard games.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

# cli first: it handles Ctrl-C while the libraries load.
from loaders import cli
from warehouse.errors import InputError
from warehouse.lake.location import Lake
from warehouse.output import work_folder
from warehouse.positions.book import DEFAULT_MAX_PLY, Filters, build
from warehouse.queries.sql import connect


def share(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"{value} is not a share from 0 to 1")
    return value


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = cli.OneLineParser(prog="python -m loaders.opening_graph", description=cli.paragraph(__doc__))
    cli.add_lake_argument(p)
    p.add_argument("out", metavar="OUT.dot", type=cli.location, help="the graph to write")
    p.add_argument(
        "--min-share", type=share, default=0.01, help="keep moves of at least this share of all games"
    )
    p.add_argument(
        "--max-ply",
        type=cli.whole_number(1),
        default=DEFAULT_MAX_PLY,
        help=f"the moves of each game's first N plies (default {DEFAULT_MAX_PLY})",
    )
    cli.add_game_filters(p)
    p.add_argument("--no-svg", action="store_true", help="write the .dot and the boards only")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    return cli.run(lambda: run(args), "the graph may be partly written")


def run(args: argparse.Namespace) -> int:
    from warehouse.positions.graph import graph_outputs, min_games  # python-chess draws its boards (an extra)

    if Path(args.out).suffix != ".dot":
        raise InputError(f"{args.out}: name a .dot file")
    lake = Lake.open_existing(args.lake)
    con = connect(lake.location)
    chosen = cli.game_filters(args).chosen()
    # Opened before the work: existing outputs, or ones inside the lake, are refused at once.
    with graph_outputs(args.out, svg=not args.no_svg, lake=lake) as graph:
        where, params = Filters(**chosen).where()
        query = f"select count(*) from games where variant = 'Standard' and start_fen is null and {where}"
        ((games,),) = con.sql(query, params=params).fetchall()
        # Rows under the share of the games from the start need not be named: the book is cut there.
        filters = Filters(**chosen, min_games=min_games(args.min_share, games))
        # Its runs beside OUT, in a folder the next graph into OUT takes over if this one is killed.
        with work_folder(Path(args.out)) as work:
            book = build(con, filters, args.max_ply, work=work)
        graph.write(book, args.min_share)
    print(f"{graph.shown}: the opening tree of {book.num_rows:,} book rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
