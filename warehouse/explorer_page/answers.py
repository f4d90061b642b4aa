"""What the page asks the lake: the moves played from a position (`explore`), the games through it
(`search`) and their PGN (`export_pgn.keyed_pgn`), under a view's filters.

The lake is opened again for each answer (`Lake.open_existing`: a folder that stopped being a lake is one
line, not a stale answer); DuckDB connections are kept per variant and used one answer at a time (a
connection's registered tables and variables are its own, and `explore` sets them)."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import chess
import duckdb
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

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
# How a page found the position's games (`Answers.found`).
INDEX, STORED, REPLAY = "index", "stored", "replay"


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

    def found(self, lake: Lake, con: duckdb.DuckDBPyConnection, fen: str) -> tuple[pa.Table, str]:
        """The positions (`positions_at`) of `fen` the page counts, and how they were found: by the
        position index, at any ply, when it was built; else by the stored keys (the games that stand there
        within their first `KEYED_PLIES` plies: a click's cost on a large lake); else, when no game stands
        there that early, by a replay of every game (deeper positions; slow on a large lake)."""
        key = position_key(fen)
        if PositionIndex.open(lake) is not None:
            return positions_at(lake, con, key), INDEX
        stored = positions_at(lake, con, key, deep=False, use_index=False)
        if pc.any(pc.less(stored["ply"], KEYED_PLIES)).as_py():
            return stored, STORED
        return positions_at(lake, con, key, use_index=False), REPLAY

    def answer(self, view: View) -> tuple[pl.DataFrame, pl.DataFrame, str]:
        """`explore`'s rows at the view's position under its filters; every game through the position the
        filters keep (`search`'s columns), the best rated (the mean of both Elos) first, then the latest;
        and how they were found (`found`, whose positions both read: the lake searched once)."""
        lake = self.lake()
        fen, kept = view.board().fen(), view.kept
        with self.lock:
            con = self.connection(view.variant)
            found, how = self.found(lake, con, fen)
            # deep: the positions given say how deep the page looks (with the stored keys' alone, `explore`
            # would refuse a position no game reaches early, where the page shows an empty table).
            moves = explore(
                fen,
                lake.location,
                con=con,
                type=kept.type,
                min_rating=kept.min_rating,
                max_rating=kept.max_rating,
                since=kept.since,
                until=kept.until,
                player=kept.player,
                positions=found,
            )
            games = search(fen, lake.location, con=con, kept=kept, positions=found)
        mean = (pl.col("white_elo") + pl.col("black_elo")) / 2
        return moves, games.sort([mean, pl.col("datetime")], descending=True, nulls_last=True), how

    def pgn(self, view: View) -> Iterator[str]:
        """The PGN text of each game through the view's position its filters keep (the page's games)."""
        lake = self.lake()
        fen = view.board().fen()
        with self.lock:
            con = self.connection(view.variant)
            found, _ = self.found(lake, con, fen)
            keys = search(fen, lake.location, con=con, kept=view.kept, positions=found)["game_key"]
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
