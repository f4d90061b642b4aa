"""The opening explorer: from a position, each move played, with its results, mean Elo, mean eval after
it, mean think time and the first date it was played: `sql/explorer.sql`, run with its variables set."""

from __future__ import annotations

import datetime as dt
import os

import duckdb
import polars as pl

from warehouse.filters import GameFilters
from warehouse.positions.search import position_key
from warehouse.sql import connect, question_text


def explore(
    fen: str,
    lake: str | os.PathLike[str] | None = None,
    *,
    con: duckdb.DuckDBPyConnection | None = None,
    speed: str | None = None,
    min_rating: int | None = None,
    max_rating: int | None = None,
    since: dt.date | None = None,
    until: dt.date | None = None,
    player: str | None = None,
) -> pl.DataFrame:
    """The moves played from `fen`'s position in the first 10 plies of the lake's games (the stored keys),
    one row each, as sql/explorer.sql defines them, over the games the filters keep (None: no filter).

    :raises InputError: for a FEN that is not a legal position, or a filter `GameFilters` refuses."""
    # One reading of a FEN, the Rust core's: the query is handed its key, not the FEN to read again.
    key = position_key(fen)
    filters = GameFilters(speed, min_rating, max_rating, since, until, player)
    con = con or connect(lake)
    values: dict[str, str | int | dt.date | None] = {"key": key, "fen": None, "speed": filters.type}
    values |= {name: getattr(filters, name) for name in ("min_rating", "max_rating", "since", "until")}
    values["player"] = filters.player
    for name, value in values.items():
        con.execute(f"set variable explorer_{name} = $value", {"value": value})
    return con.sql(question_text("explorer")).pl()
