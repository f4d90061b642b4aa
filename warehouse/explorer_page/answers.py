"""What the page asks the lake: the moves played from a position (`explore`), the games through it
(`search`) and their PGN (`export_pgn.keyed_pgn`), under a view's filters.

The lake is opened again for each answer (`Lake.open_existing`: a folder that stopped being a lake is one
line, not a stale answer); DuckDB connections are kept per variant and used one answer at a time (a
connection's registered tables and variables are its own, and `explore` sets them)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass

import chess
import duckdb
import polars as pl

from warehouse.explorer_page.view import View
from warehouse.export_pgn import keyed_pgn
from warehouse.lake.location import Lake
from warehouse.lake.plies import KEYED_PLIES
from warehouse.positions.explorer import explore
from warehouse.positions.graph import opening_names
from warehouse.positions.index import PositionIndex
from warehouse.positions.search import position_key, positions_at, search
from warehouse.sql import connect

# The games the page lists: the top ones by the players' mean rating, then the latest.
TOP_GAMES = 20


@dataclass(frozen=True)
class Depth:
    """How the position's games are found: `ply` of the position from the start position given, and
    whether the stored keys (`KEYED_PLIES`) reach it or a deeper read (the index, else a replay) does."""

    ply: int
    stored: bool
    indexed: bool


class Answers:
    def __init__(self, location: str) -> None:
        self.location = location
        self.lock = threading.Lock()
        self.connections: dict[str | None, duckdb.DuckDBPyConnection] = {}
        self.names = opening_names()

    def lake(self) -> Lake:
        return Lake.open_existing(self.location)

    def connection(self, variant: str | None) -> duckdb.DuckDBPyConnection:
        """The connection of `variant`'s views (made at its first use; the caller holds the lock)."""
        if variant not in self.connections:
            self.connections[variant] = connect(self.location, variant=variant)
        return self.connections[variant]

    def answer(self, view: View) -> tuple[pl.DataFrame, pl.DataFrame]:
        """`explore`'s rows at the view's position under its filters; and every game through the position
        the filters keep (`search`'s columns), the best rated (the mean of both Elos) first, then the
        latest. One search of the lake's positions for both."""
        lake = self.lake()
        fen, kept = view.board().fen(), view.kept
        with self.lock:
            con = self.connection(view.variant)
            found = positions_at(lake, con, position_key(fen))
            moves = explore(
                fen,
                lake.location,
                con=con,
                speed=kept.type,
                min_rating=kept.min_rating,
                max_rating=kept.max_rating,
                since=kept.since,
                until=kept.until,
                player=kept.player,
                positions=found,
            )
            games = search(fen, lake.location, con=con, kept=kept, positions=found)
        mean = (pl.col("white_elo") + pl.col("black_elo")) / 2
        return moves, games.sort([mean, pl.col("datetime")], descending=True, nulls_last=True)

    def pgn(self, view: View) -> Iterator[str]:
        """The PGN text of each game through the view's position its filters keep."""
        lake = self.lake()
        with self.lock:
            con = self.connection(view.variant)
            keys = search(view.board().fen(), lake.location, con=con, kept=view.kept)["game_key"]
            return keyed_pgn(con, keys.to_arrow())

    def opening(self, view: View) -> tuple[str | None, bool]:
        """The chess-openings name of the view's position, else of the last position of its line that has
        one; and whether the name is the position's own."""
        board = chess.Board(view.fen)
        named = self.names.get(position_key(board.fen()))
        for uci in view.moves:
            board.push_uci(uci)
            named = self.names.get(position_key(board.fen()), named)
        return named, position_key(board.fen()) in self.names

    def depth(self, view: View) -> Depth:
        board = view.board()
        ply = (board.fullmove_number - 1) * 2 + (board.turn == chess.BLACK)
        return Depth(ply, ply < KEYED_PLIES, PositionIndex.open(self.lake()) is not None)
