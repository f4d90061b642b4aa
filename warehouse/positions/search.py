"""Games by position: every game that reaches a FEN's position, with the first ply it stands at.

Two ways, one answer: the stored keys (`plies.key` for the first `KEYED_PLIES` plies, `games.final_key`)
answer through DuckDB in a few hundredths of a second; the positions after those plies are rebuilt by a
replay scan of `plies/` (`_core.find_position`: the move squares of each file and its twin's start
positions, XOR updates in Rust, files on parallel threads). `deep=False` skips the scan.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import duckdb
import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from warehouse import _core
from warehouse.errors import InputError
from warehouse.lake.layout import GAMES, plies_twin
from warehouse.lake.location import Lake
from warehouse.lake.plies import KEYED_PLIES
from warehouse.sql import connect

# The columns of the answer, from the games view, after `game_id`, `ply`.
GAME_COLUMNS = (
    "white_name", "white_elo", "black_name", "black_elo", "result", "datetime", "type", "opening_eco",
    "opening_name", "n_plies", "game_key",
)  # fmt: skip
# The move fields a replay reads.
MOVE_FIELDS = ("p", "f", "t", "promote", "castle")


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
    con: duckdb.DuckDBPyConnection | None = None,
    **filters: Any,
) -> pl.DataFrame:
    """The games of `lake` that reach the position of `fen` (pieces, side to move, castling rights and
    en-passant file, as PolyGlot keys them; move counters ignored): `game_id`, `ply` (the first ply index
    the position stands before, `n_plies` for the final position), then `GAME_COLUMNS`; by date, then id.
    `filters` are equalities on columns of the games view (`type="blitz"`, `white_name="x"`, `year=2025`).
    `con`, when given, is a `warehouse.connect(lake)` connection to reuse.

    :raises InputError: for an unreadable FEN or a filter on no column of the games view."""
    key = position_key(fen, chess960)
    con = con or connect(lake)
    known = {row[0] for row in con.sql("describe games").fetchall()}
    unknown = sorted(set(filters) - known)
    if unknown:
        raise InputError(f"no column {', '.join(unknown)} in the games view to filter on")
    found = stored(con, key)
    if deep:
        found = pa.concat_tables([found, replayed(Lake.open(lake), key)])
    con.register("positions_found", found)
    where = "".join(f" and games.{name} = ${name}" for name in filters)
    columns = ", ".join(f"any_value(games.{c}) as {c}" for c in GAME_COLUMNS)
    return con.sql(
        f"""
        select games.game_id, min(found.ply) as ply, {columns}
        from positions_found as found
        join games on games.game_key = found.game_key
        where true {where}
        group by games.game_id
        order by any_value(games.datetime), games.game_id
        """,
        params=filters,
    ).pl()


def stored(con: duckdb.DuckDBPyConnection, key: int) -> pa.Table:
    """`(game_key, ply)` of the stored keys equal to `key`: plies' first plies, games' final positions."""
    return con.sql(
        """
        select game_key, ply::int as ply from plies where key = $key
        union all
        select game_key, n_plies as ply from games where final_key = $key
        """,
        params={"key": key},
    ).to_arrow_table()


def replayed(lake: Lake, key: int) -> pa.Table:
    """`(game_key, ply)` of the positions from ply `KEYED_PLIES` on whose key is `key`, by a replay scan of
    every `games/` file's plies twin."""
    files = [lake.relative(info.path) for info in lake.files(GAMES) if info.path.endswith(".parquet")]
    with ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        parts = list(pool.map(lambda rel: replay_file(lake, rel, key), files))
    return pa.concat_tables(
        [pa.table({"game_key": pa.array([], pa.int64()), "ply": pa.array([], pa.int32())}), *parts]
    )


def moves_list(plies: pa.Table, counts: np.ndarray) -> pa.ListArray:
    """The `moves` lists the kernels replay (`MOVE_FIELDS`, and `san` null: the position gives it) of games
    whose plies are `plies` (`MOVE_FIELDS` columns), `counts[i]` of them for game i, in order."""
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
    fields = [plies[f].combine_chunks() for f in MOVE_FIELDS] + [pa.nulls(plies.num_rows, pa.string())]
    return pa.ListArray.from_arrays(
        pa.array(offsets), pa.StructArray.from_arrays(fields, [*MOVE_FIELDS, "san"])
    )


def replay_file(lake: Lake, rel: str, key: int) -> pa.Table:
    """The matches of one `games/` file (see `replayed`): its games' start positions, its twin's moves."""
    games = pq.read_table(
        lake.path(rel), columns=["game_key", "start_fen", "variant", "n_plies"], filesystem=lake.fs
    )
    plies = pq.read_table(lake.path(plies_twin(rel)), columns=list(MOVE_FIELDS), filesystem=lake.fs)
    moves = moves_list(plies, games["n_plies"].to_numpy())
    batch = pa.record_batch(
        [moves, games["start_fen"].combine_chunks(), games["variant"].combine_chunks()],
        names=["moves", "start_fen", "variant"],
    )
    ply = pa.array(_core.find_position(batch, key, KEYED_PLIES))
    hit = ply.is_valid()
    return pa.table({"game_key": games["game_key"].combine_chunks().filter(hit), "ply": ply.filter(hit)})
