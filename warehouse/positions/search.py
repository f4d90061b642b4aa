"""Games by position: every game that reaches a FEN's position, with the first ply it stands at.

Three ways, one answer: the stored keys (`plies.key` for the first `KEYED_PLIES` plies, `games.final_key`)
answer through DuckDB; the positions after those plies are rebuilt by a replay scan of `plies/`
(`_core.find_position`: the move squares of each file and its twin's start positions, XOR updates in Rust,
files on parallel threads); and when the optional position index was built (`warehouse.positions.index`),
it answers for the files it covers, the replay scan for the others. `deep=False` reads the stored keys only.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import duckdb
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from warehouse import _core
from warehouse.errors import InputError
from warehouse.filters import GameFilters, speed
from warehouse.lake.layout import GAMES
from warehouse.lake.location import Lake
from warehouse.lake.plies import KEYED_PLIES
from warehouse.positions.index import POSITIONS, PositionIndex
from warehouse.positions.replay import replay_batch
from warehouse.sql import connected

# The columns of the answer, from the games view, after `game_id`, `ply`.
GAME_COLUMNS = (
    "white_name", "white_elo", "black_name", "black_elo", "result", "datetime", "type", "opening_eco",
    "opening_name", "n_plies", "game_key",
)  # fmt: skip


def position_key(fen: str, chess960: bool = False) -> int:
    """The PolyGlot key of `fen` (signed, as the lake stores keys).

    :raises InputError: for a FEN that is not a legal position (one line)."""
    try:
        return _core.fen_key(fen, chess960)
    except ValueError as e:
        raise InputError(str(e)) from None


def search(
    fen: str,
    lake: str | os.PathLike[str] | None = None,
    *,
    chess960: bool = False,
    deep: bool = True,
    index: bool = True,
    con: duckdb.DuckDBPyConnection | None = None,
    kept: GameFilters | None = None,
    positions: pa.Table | None = None,
    **filters: Any,
) -> pl.DataFrame:
    """The games of `lake` that reach the position of `fen` (pieces, side to move, castling rights and
    en-passant file, as PolyGlot keys them; move counters ignored): `game_id`, `ply` (the first ply index
    the position stands before, `n_plies` for the final position), then `GAME_COLUMNS`; by date, then id.
    `filters` are equalities on columns of the games view (`type="blitz"`, `white_name="x"`, `year=2025`),
    a speed read as `warehouse.filters.speed` reads it; `kept`, the games the shared filters keep (ratings
    and dates as ranges, as `explore` reads them); `positions`, `positions_at`'s answer at the position
    (with the same `deep` and `index`), when the caller has it.
    `deep=False` reads the stored keys only (the first `KEYED_PLIES` plies, final positions); `index=False`
    ignores the position index (the same answer, by the stored keys and the replay scan). `con`, when
    given, is a `warehouse.connect(lake)` connection to reuse (`lake` then defaults to its lake).

    :raises InputError: for an unreadable FEN or a filter on no column of the games view."""
    key = position_key(fen, chess960)
    if "type" in filters:
        speed(filters["type"])
    opened, con = connected(lake, con)
    if filters:  # `describe` binds the games view (~35 ms of a search): only to check filters
        known = {row[0] for row in con.sql("describe games").fetchall()}
        unknown = sorted(set(filters) - known)
        if unknown:
            raise InputError(f"no column {', '.join(unknown)} in the games view to filter on")
    kept_where, kept_params = (kept or GameFilters()).where()
    if set(kept_params) & set(filters):
        raise InputError(f"{', '.join(sorted(set(kept_params) & set(filters)))}: filtered twice")
    found = positions_at(opened, con, key, deep, index) if positions is None else positions
    con.register("positions_found", found)
    where = "".join(f" and games.{name} = ${name}" for name in filters)
    columns = ", ".join(f"games.{c}" for c in GAME_COLUMNS)
    # A shallow search answers as the stored keys would, whatever found the positions: the first stored
    # ply, else the final position (the last ply found, when it is the game's end).
    ply = (
        "found.first"
        if deep
        else "coalesce(found.first_stored, if(found.last = games.n_plies, found.last, null))"
    )
    # One row per game before the join: the join then carries no wide group by.
    answer = con.sql(
        f"""
        with found as (
            select
                game_key,
                min(ply) as first,
                min(ply) filter (where ply < {KEYED_PLIES}) as first_stored,
                max(ply) as last
            from positions_found
            group by game_key
        ),
        answer as (
            select
                games.game_id,
                {ply} as ply,
                {columns}
            from found
            join games on games.game_key = found.game_key
            where {kept_where} {where}
        )
        select * from answer where ply is not null
        """,
        params=filters | kept_params,
    ).pl()
    # Sorted by Polars: DuckDB sorts the whole wide rows, ~0.4 s for 200,000 games against ~0.1 s here.
    # Lichess ids sort like their game_key (docs/schema.md; content ids' keys are negative): then the
    # tiebreak is an integer, ~3x cheaper than comparing the ids' strings.
    lichess_only = (answer["game_key"].min() or 0) >= 0
    return answer.sort(["datetime", "game_key" if lichess_only else "game_id"], nulls_last=True)


def stored(con: duckdb.DuckDBPyConnection, key: int) -> pa.Table:
    """The positions (`POSITIONS`) of the stored keys equal to `key`: plies' first plies, games' final
    positions."""
    found = con.sql(
        """
        with keyed as (
            select game_key, ply::int as ply from plies where key = $key
            union all
            select game_key, n_plies as ply from games where final_key = $key
        )
        select
            keyed.game_key,
            substr(games.filename, length(getvariable('chess_lake')) + 2) as file,
            games.file_row_number::int as row,
            keyed.ply
        from keyed
        join all_games as games using (game_key)
        """,
        params={"key": key},
    )
    return found.to_arrow_table().cast(POSITIONS)


def positions_at(
    lake: Lake, con: duckdb.DuckDBPyConnection, key: int, deep: bool = True, use_index: bool = True
) -> pa.Table:
    """The positions (`POSITIONS`) whose key is `key` (a game may come more than once): from the
    position index for the files it covers and a replay of every ply of the others, when the index was
    built (`warehouse.positions.index`) and `use_index`; else the stored keys, and with `deep` a replay
    from ply `KEYED_PLIES` on."""
    index = PositionIndex.open(lake) if use_index else None
    if index is None and not deep:
        return stored(con, key)
    files = lake.parquet_files(GAMES)
    if index is None:
        return pa.concat_tables([stored(con, key), replayed(lake, files, key, KEYED_PLIES)])
    uncovered = [rel for rel in files if rel not in index.covered]
    return pa.concat_tables([index.lookup(key), replayed(lake, uncovered, key, 0)])


def replayed(lake: Lake, files: list[str], key: int, from_ply: int) -> pa.Table:
    """The positions (`POSITIONS`) from ply `from_ply` on whose key is `key` (a game's first), by a
    replay scan of the plies twins of the `games/` files `files` (on parallel threads: the kernel releases
    the GIL)."""
    with ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        parts = list(pool.map(lambda rel: replay_file(lake, rel, key, from_ply), files))
    return pa.concat_tables([POSITIONS.empty_table(), *parts])


def replay_file(lake: Lake, rel: str, key: int, from_ply: int) -> pa.Table:
    """The matches of one `games/` file (see `replayed`): its games' start positions, its twin's moves."""
    games, batch = replay_batch(lake, rel)
    ply = pa.array(_core.find_position(batch, key, from_ply))
    rows = pc.indices_nonzero(ply.is_valid()).cast(pa.int32())
    return pa.table(
        [games["game_key"].take(rows), pa.repeat(rel, len(rows)), rows, ply.take(rows)], schema=POSITIONS
    )
