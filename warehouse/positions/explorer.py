"""The opening explorer: from a position, each move played, with its SAN, results, mean Elo, mean eval after
it, mean think time and the first date it was played: `sql/explorer.sql`, run with its variables set, over
the games `warehouse.positions.search` finds at the position (any ply: the position index for the files it
covers, the replay scan for the others; `deep=False`: the stored keys only) and the moves they played
there, read here by row number (see `moves_at`)."""

from __future__ import annotations

import datetime as dt
import os

import duckdb
import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from warehouse.errors import InputError
from warehouse.filters import GameFilters
from warehouse.lake.layout import plies_twin
from warehouse.lake.location import Lake
from warehouse.lake.plies import KEYED_PLIES
from warehouse.positions.search import position_key, positions_at
from warehouse.sql import connected, question_text, resolve_lake, sql_string

# The name of the table of the moves played that sql/explorer.sql reads (its variable explorer_positions).
PLAYED = "explorer_played"
# The plies fields sql/explorer.sql reads of every move played, and those it reads of one game of each move
# (its SAN's: the same in every game that played the move from the position).
MOVE_FIELDS = ("f", "t", "promote", "eval_cp", "think")
SAN_FIELDS = ("p", "x", "c", "castle", "mates")
# No move, with the columns and types `moves_at` gives.
NO_MOVE = (
    "select null::bigint as game_key, null::integer as ply, "
    f"{', '.join(f'plies.{c}' for c in MOVE_FIELDS + SAN_FIELDS)} from plies where false"
)


def explore(
    fen: str,
    lake: str | os.PathLike[str] | None = None,
    *,
    con: duckdb.DuckDBPyConnection | None = None,
    deep: bool = True,
    index: bool = True,
    type: str | None = None,
    min_rating: int | None = None,
    max_rating: int | None = None,
    since: dt.date | None = None,
    until: dt.date | None = None,
    player: str | None = None,
    positions: pa.Table | None = None,
) -> pl.DataFrame:
    """The moves played from `fen`'s position in the lake's games, one row each, as sql/explorer.sql defines
    them (a game counts once, by the first ply it stands at the position), over the games the filters keep
    (None: no filter). The games are found at any ply: by the position index for the files it covers and a
    replay scan of the others (`index=False`: the replay scan alone, past the stored keys); `deep=False`
    reads the stored keys only (the first `KEYED_PLIES` plies). `con`, when given, is a
    `warehouse.connect(lake)` connection to reuse (`lake` then defaults to its lake). No row when no game
    reaches the position. `positions`: `positions_at`'s answer at the position (with the same `deep` and
    `index`), when the caller has it (one read of the lake for the explorer and `search`).

    :raises InputError: for a FEN that is not a legal position, a filter `GameFilters` refuses, or, with
        `deep=False`, a position no game reaches in its first plies (the stored keys cannot tell a deeper
        one from one no game reaches)."""
    # One reading of a FEN, the Rust core's; a filter the shared parser refuses is refused here too.
    key = position_key(fen)
    filters = GameFilters(type, min_rating, max_rating, since, until, player)
    opened, con = connected(lake, con)
    found = positions_at(opened, con, key, deep, index) if positions is None else positions
    if not deep:  # the index, when used, gave every ply
        found = found.filter(pc.less(found["ply"], KEYED_PLIES))
        if found.num_rows == 0:
            raise InputError(
                f"no game reaches this position in its first {KEYED_PLIES} plies (the stored keys, a "
                "shallow search): a deeper one needs the replay scan or the position index (deep)"
            )
    con.register(PLAYED, moves_at(opened, con, found))
    values: dict[str, str | int | dt.date | None] = {"fen": fen, "positions": PLAYED}
    values |= {"speed": filters.type, "player": filters.player}
    values |= {name: getattr(filters, name) for name in ("min_rating", "max_rating", "since", "until")}
    try:
        for name, value in values.items():
            con.execute(f"set variable explorer_{name} = $value", {"value": value})
        return con.sql(question_text("explorer")).pl()
    finally:
        con.execute("reset variable explorer_positions")
        con.unregister(PLAYED)


def moves_at(lake: Lake, con: duckdb.DuckDBPyConnection, found: pa.Table) -> pa.Table:
    """The move each game of `found` (`warehouse.positions.index.POSITIONS`) played the first time it stood
    at the position, as sql/explorer.sql reads them: the game's `game_key`, `ply`, `MOVE_FIELDS`, and
    `SAN_FIELDS` on one game of each move (null on the others); none for a game that ends there. Read by
    row number, a file at a time: a `games/` file and its `plies/` twin hold the same games in the same
    order, each game's plies in a row, so a game's ply is the twin's row (the plies of the games before
    it) + ply, and DuckDB reads those rows alone (a join on `(game_key, ply)` decodes `game_key` for every
    ply of the lake), the fewer columns the cheaper."""
    targets = plies_rows(lake, found)
    if targets.num_rows == 0:
        return con.sql(NO_MOVE).to_arrow_table()
    moves = targets.join(read_rows(con, targets, MOVE_FIELDS), ["plies_file", "plies_row"])
    uci = pc.binary_join_element_wise(moves["f"], moves["t"], pc.fill_null(moves["promote"], ""), "")
    numbered = pa.table({"uci": uci, "index": pa.array(np.arange(len(uci)))})
    firsts = numbered.group_by("uci").aggregate([("index", "min")])["index_min"]
    sample = moves.take(firsts).select(["plies_file", "plies_row"])
    moves = moves.join(
        read_rows(con, sample, SAN_FIELDS), ["plies_file", "plies_row"], join_type="left outer"
    )
    return moves.select(["game_key", "ply", *MOVE_FIELDS, *SAN_FIELDS])


def plies_rows(lake: Lake, found: pa.Table) -> pa.Table:
    """Each game of `found` once, at its first ply there, but those that end there: the game's `game_key`,
    `ply`, and where its move is: `plies_file` (the twin, as DuckDB reads it) and `plies_row` in it."""
    first = found.group_by(["file", "row", "game_key"]).aggregate([("ply", "min")])
    first = first.rename_columns(["file", "row", "game_key", "ply"])
    root = resolve_lake(lake)
    parts = []
    for rel in sorted(set(first["file"].to_pylist())):
        games = first.filter(pc.equal(first["file"], rel))
        counts = pq.read_table(lake.path(rel), columns=["n_plies"], filesystem=lake.fs)["n_plies"].to_numpy()
        rows, plies = games["row"].to_numpy(), games["ply"].to_numpy()
        moved = plies < counts[rows]  # the final position has no move
        rows, plies = rows[moved], plies[moved]
        parts.append(
            pa.table(
                {
                    "game_key": games["game_key"].filter(moved),
                    "ply": pa.array(plies, pa.int32()),
                    "plies_file": pa.repeat(glob_literal(f"{root}/{plies_twin(rel)}"), len(rows)),
                    "plies_row": pa.array((np.cumsum(counts) - counts)[rows] + plies, pa.int64()),
                }
            )
        )
    names = ["game_key", "ply", "plies_file", "plies_row"]
    return pa.concat_tables(parts) if parts else pa.table({n: [] for n in names})


def read_rows(con: duckdb.DuckDBPyConnection, targets: pa.Table, columns: tuple[str, ...]) -> pa.Table:
    """`columns` of the plies rows `targets` names (`plies_file`, `plies_row`), with those two: a read of
    each file keeping the rows asked for (DuckDB skips the others' pages by `file_row_number`)."""
    reads = []
    try:
        for number, path in enumerate(sorted(set(targets["plies_file"].to_pylist()))):
            name = f"{PLAYED}_{number}"
            con.register(name, targets.filter(pc.equal(targets["plies_file"], path)).select(["plies_row"]))
            reads.append(
                f"select {sql_string(path)} as plies_file, file_row_number as plies_row, "
                f"{', '.join(columns)} from read_parquet({sql_string(path)}, file_row_number = true) "
                f"where file_row_number in (select plies_row from {name})"
            )
        return con.sql(" union all ".join(reads)).to_arrow_table()
    finally:
        for number in range(len(reads)):
            con.unregister(f"{PLAYED}_{number}")


def glob_literal(path: str) -> str:
    """`path` as a DuckDB file pattern naming that file alone: its `[`, `]`, `?` and `*` escaped."""
    return "".join(f"[{c}]" if c in "[]?*" else c for c in path)
