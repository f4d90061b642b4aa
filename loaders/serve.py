"""The opening explorer as a local web page: python -m loaders.serve [--lake DIR|s3://...] [--port N]

Serves on 127.0.0.1 only (this machine) a board, the moves played from its position with their results,
mean rating, eval and think time, the games through it and their PGN, under filters of speed, rating, dates,
player and variant; the position and the filters live in the URL. Ctrl-C stops it. Details:
docs/explorer-page.md.
"""

from __future__ import annotations

import argparse
import sys

# cli first: it handles Ctrl-C while the libraries load.
from loaders import cli
from warehouse.errors import InputError
from warehouse.lake.location import Lake
from warehouse.sql import connect

DEFAULT_PORT = 8765


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = cli.OneLineParser(prog="python -m loaders.serve", description=cli.paragraph(__doc__))
    cli.add_lake_argument(p)
    p.add_argument(
        "--port",
        type=cli.whole_number(0, 65535),
        default=DEFAULT_PORT,
        help=f"the port on 127.0.0.1 (default {DEFAULT_PORT}; 0: any free one)",
    )
    p.add_argument("--verbose", action="store_true", help="log each request on stderr")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    return cli.run(lambda: run(args), "the server stopped")


def run(args: argparse.Namespace) -> int:
    try:  # the board's drawing and the moves' reading: python-chess, an optional dependency
        from warehouse.explorer_page.answers import Answers
        from warehouse.explorer_page.server import HOST, ExplorerServer
    except ModuleNotFoundError as e:
        if e.name != "chess":
            raise
        raise InputError("the explorer page needs python-chess: pip install 'bgn-warehouse[chess]'") from None
    lake = Lake.open_existing(args.lake)
    connect(lake.location).close()  # a lake the views cannot read is refused now, not on the first page
    with ExplorerServer(Answers(lake.location), args.port, args.verbose) as server:
        print(f"the explorer of {lake.location}: http://{HOST}:{server.server_port}/ (Ctrl-C stops it)")
        sys.stdout.flush()
        server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
