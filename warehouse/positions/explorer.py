"""The opening explorer: from a position, each move played, with its SAN, results, mean Elo, mean eval after
it, mean think time and the first date it was played: `sql/explorer.sql`, run with its variables set, over
the games `warehouse.positions.search` finds at the position (any ply: the position index for the files it
covers, the replay scan for the others; `deep=False`: the stored keys only)."""

from __future__ import annotations

import datetime as dt
import os

import duckdb
import polars as pl
import pyarrow.compute as pc

from warehouse.errors import InputError
from warehouse.lake.location import Lake
from warehouse.lake.plies import KEYED_PLIES
from warehouse.positions.search import position_key, positions_at
from warehouse.sql import connect, question_text

# The name of the table of positions found that sql/explorer.sql reads (its variable explorer_positions).
FOUND = "explorer_found"


def explore(
    fen: str,
    lake: str | os.PathLike[str] | None = None,
    *,
    con: duckdb.DuckDBPyConnection | None = None,
    deep: bool = True,
    index: bool = True,
    speed: str | None = None,
    min_rating: int | None = None,
    max_rating: int | None = None,
    since: dt.date | None = None,
    until: dt.date | None = None,
    player: str | None = None,
) -> pl.DataFrame:
    """The moves played from `fen`'s position in the lake's games, one row each, as sql/explorer.sql defines
    them (a game counts once, by the first ply it stands at the position), over the games the filters keep
    (None: no filter). The games are found at any ply: by the position index for the files it covers and a
    replay scan of the others (`index=False`: the replay scan alone, past the stored keys); `deep=False`
    reads the stored keys only (the first `KEYED_PLIES` plies). `con`, when given, is a
    `warehouse.connect(lake)` connection to reuse. No row when no game reaches the position.

    :raises InputError: for a FEN that is not a legal position, or, with `deep=False`, a position no game
        reaches in its first plies (the stored keys cannot tell a deeper one from one no game reaches)."""
    key = position_key(fen)
    con = con or connect(lake)
    found = positions_at(Lake.open(lake), con, key, deep, index)
    if not deep:  # the index, when used, gave every ply
        found = found.filter(pc.less(found["ply"], KEYED_PLIES))
    if not deep and found.num_rows == 0:
        raise InputError(
            f"no game reaches this position in its first {KEYED_PLIES} plies (the stored keys); "
            "a deeper position needs the replay scan or the position index (deep=True)"
        )
    con.register(FOUND, found)
    values: dict[str, str | int | dt.date | None] = {"fen": fen, "positions": FOUND, "speed": speed}
    values |= {"player": player, "min_rating": min_rating, "max_rating": max_rating}
    values |= {"since": since, "until": until}
    try:
        for name, value in values.items():
            con.execute(f"set variable explorer_{name} = $value", {"value": value})
        return con.sql(question_text("explorer")).pl()
    finally:
        con.execute("reset variable explorer_positions")
        con.unregister(FOUND)
