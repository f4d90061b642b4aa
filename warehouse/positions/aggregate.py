"""The explorer's pre-aggregate: for the positions many games reach (`FREQUENT_GAMES` or more by default), the
explorer's sums per move played there and per cell of the explorer's filters (variant, speed, rating band,
month), and the best rated games of each cell, written by the position index's build
(`warehouse.positions.index`) beside its key files, so that the explorer and its page answer those
positions without reading each game's move (at ply 2 a fifth of a million-game lake: 1.7 s by row number).

Exact, never approximate: it answers only where the filters' bounds are the cells' (`cells`: a speed, a
rating range of whole hundreds, whole months, no player), the position is one it holds, and the index
covers every `games/` file of the lake (`PositionIndex.uncovered`: the index's own coverage rule, so a load or
a compaction since the build sends the explorer back to the row path until the next `bgn index`); else
`usable` says no and the caller reads the games' moves (`warehouse.positions.explorer.moves_at`).

Files, in the index's folder: `explorer.parquet`, a row per position `key`, cell, and move (`uci`, null for
the games that end there), the SAN's fields of one game, and the sums `sql/explorer.sql`'s columns are made
of (games, results, the sum of both Elos and how many games have both, the evals', the think times', the
first date); `top_games.parquet`, the `TOP_GAMES` games of each position and cell by the players' mean
rating, then date (any top N of a union of cells is among its cells' top N). Both sorted by key, in small
row groups: a position's rows are a read of the groups whose statistics can hold its key.

The cells are defined once, in SQL (sql/views/schema.sql: `explorer_band`, `explorer_aligned`,
`explorer_cell_kept`), for the build, this module and sql/explorer.sql alike: rating bands are of the sum of
both Elos (twice the mean, an integer): a mean of exactly a hundred (1500.0) is a band of its own, the means
strictly between two hundreds another (1500.5-1599.5), so that a bound of whole hundreds is a bound of bands
on both sides (min 1500: mean >= 1500; max 2000: mean <= 2000).
"""

from __future__ import annotations

import datetime as dt
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import duckdb
import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from warehouse import extras
from warehouse.lake.layout import plies_twin
from warehouse.lake.location import Lake
from warehouse.queries.filters import GameFilters
from warehouse.queries.sql import connect, resolve_lake, sql_string
from warehouse.scratch import process_folder

if TYPE_CHECKING:  # the index imports this module to build it
    from warehouse.positions.index import PositionIndex

# Positions reached by at least this many games are aggregated (docs/positions.md: the row path's page took
# 0.52 s at 2,283 games on the million-game lake, its fixed costs ~0.3 s; the aggregate grows as it falls).
FREQUENT_GAMES = 1_000
# The games the explorer page lists per position: the top ones by the players' mean rating, then the latest;
# and the games view's columns it shows of them.
TOP_GAMES = 20
TOP_COLUMNS = (
    "game_id", "white_name", "white_elo", "black_name", "black_elo", "result", "datetime", "type", "game_key",
)  # fmt: skip
# The files' names in the index's folder: the sums per move, the top games.
FILES = ("explorer.parquet", "top_games.parquet")
ROW_GROUP = 4_096
# The filter cells of a row: `variant`, `type`, `band` (the lowest sum of both Elos of its band, null
# when either is unknown), `month` (the first day of the game's month, null without a date).
CELL = ("variant", "type", "band", "month")


def frequent(rows: pa.Table, min_games: int) -> pa.Table:
    """Of index rows (`key`, `file`, `row`, `ply`, sorted so), each game's first ply at each key that at
    least `min_games` games reach."""
    key, file, row = (rows[c].to_numpy() for c in ("key", "file", "row"))
    first = np.ones(len(key), bool)
    first[1:] = (key[1:] != key[:-1]) | (file[1:] != file[:-1]) | (row[1:] != row[:-1])
    games = rows.filter(pa.array(first))
    keys = games["key"].to_numpy()
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]]) if len(keys) else np.array([], np.int64)
    counts = np.diff(np.r_[starts, len(keys)])
    return games.filter(pa.array(np.repeat(counts >= min_games, counts)))


def write(
    lake: Lake, parts: str, covers: list[str], moves_rel: str, top_rel: str, workdir: str | None
) -> None:
    """Writes the pre-aggregate of the games under the lake's folder `parts` (`frequent`'s rows, in
    `<file>/<any>.parquet`, `file` the number of a file of `covers`) to the lake's paths `moves_rel` and
    `top_rel`: the sums and top games of each part `file_parts` gives, then of those (memory holds a file's
    frequent rows and games, and a part; DuckDB `MEMORY_LIMIT`, spilling past it to a temporary folder in
    the local folder `workdir`, or this process's scratch folder when None, which also holds each part's
    sums and top games until they are summed)."""
    with tempfile.TemporaryDirectory(prefix="aggregate-", dir=workdir or process_folder()) as spill:
        con = connect(lake.location, variant="all", spill=spill)
        con.execute(f"set memory_limit = '{MEMORY_LIMIT}'")
        con.execute("set preserve_insertion_order = false")
        per_part = {
            "sums": SUMS.format(source=GAMES_MOVES, **GAMES_SUMMED),
            "top": TOP.format(source="frequent_games"),
        }
        written_parts = 0
        for number, rel in enumerate(covers):
            files = lake.files(f"{parts}/{number}")
            if not files:
                continue
            rows = pa.concat_tables(pq.read_table(i.path, filesystem=lake.fs) for i in files)
            for part in file_parts(lake, con, rel, rows):
                con.register("frequent_games", part)
                for name, question in per_part.items():
                    target = sql_string(f"{spill}/{name}-{written_parts}.parquet")
                    con.execute(f"copy ({question}) to {target} (format parquet)")
                con.unregister("frequent_games")
                written_parts += 1
        across = SUMS.format(source="{source}", **SUMS_SUMMED)
        for rel, name, question in ((moves_rel, "sums", across), (top_rel, "top", TOP)):
            source = f"read_parquet({sql_string(f'{spill}/{name}-*.parquet')})"
            written(lake, rel, con.sql(question.format(source=source)).to_arrow_reader(ROW_GROUP))
        con.close()


# DuckDB's memory while it sums (past it, it spills to a temporary folder): with a `games/` file's frequent
# rows and games and one part of `CHUNK` plies rows (~0.15 GB), the aggregate's memory, whatever the lake's
# size (docs/positions.md).
MEMORY_LIMIT = "256MB"
# Plies rows read at once.
CHUNK = 500_000
# The plies fields each game's move there gives (the SAN's, eval and think time).
PLY_FIELDS = ["p", "f", "t", "x", "c", "castle", "promote", "mates", "eval_cp", "think"]


def file_parts(lake: Lake, con: duckdb.DuckDBPyConnection, rel: str, found: pa.Table) -> Iterator[pa.Table]:
    """The games of `found` in the `games/` file `rel` (`row`, at `ply`), one row per position and game,
    in parts: their cell (`CELL`) and the columns the sums read (the games view's), and their move there
    (`PLY_FIELDS` of the `plies/` twin's row, read `CHUNK` rows at a time; null for the games that end
    there, a part of their own)."""
    games = con.sql(
        f"""
        select variant, {", ".join(TOP_COLUMNS)}, white_elo + black_elo as elo2,
            explorer_band(elo2) as band,
            date_trunc('month', datetime)::date as month, n_plies
        from games
        where filename = $path
        order by file_row_number
        """,
        params={"path": f"{resolve_lake(lake)}/{rel}"},
    ).to_arrow_table()
    rows, plies = found["row"].to_numpy(), found["ply"].to_numpy()
    counts = games["n_plies"].to_numpy()
    # The plies row of each position's move (-1: the game ends there); in that order, a read's are a slice.
    target = np.where(plies < counts[rows], (np.cumsum(counts) - counts)[rows] + plies, -1)
    order = np.argsort(target, kind="stable")
    target, found = target[order], found.take(order)
    twin = pq.ParquetFile(lake.path(plies_twin(rel)), filesystem=lake.fs)
    ended = int(np.searchsorted(target, 0))
    if ended:
        fields = [twin.schema_arrow.field(name) for name in PLY_FIELDS]
        yield with_moves(
            games,
            found.slice(0, ended),
            pa.table([pa.nulls(ended, f.type) for f in fields], pa.schema(fields)),
        )
    start = 0
    for batch in twin.iter_batches(CHUNK, columns=PLY_FIELDS):
        low, high = (int(i) for i in np.searchsorted(target, [start, start + batch.num_rows]))
        if high > low:
            moves = pa.Table.from_batches([batch]).take(pa.array(target[low:high] - start))
            yield with_moves(games, found.slice(low, high - low), moves)
        start += batch.num_rows


def with_moves(games: pa.Table, found: pa.Table, moves: pa.Table) -> pa.Table:
    """The rows `found` (`key`, `row`) with their game's columns (its row of `games`) and `moves`."""
    columns = {
        "key": found["key"],
        **dict(zip(games.column_names, games.take(found["row"]).columns, strict=True)),
    }
    return pa.table(columns | dict(zip(moves.column_names, moves.columns, strict=True)))


# The sums of each position, cell and move: over games (`GAMES_SUMMED`), then over those sums
# (`SUMS_SUMMED`).
SUMS = """
    select key, variant, type, band, month, uci,
        any_value(p) as p, any_value(f) as f, any_value(t) as t, any_value(x) as x,
        any_value(castle) as castle, any_value(promote) as promote, any_value(c) as c,
        any_value(mates) as mates,
        {games} as games, {white_wins} as white_wins, {draws} as draws, {black_wins} as black_wins,
        {elo2_sum} as elo2_sum, {elo_games} as elo_games, {eval_sum} as eval_sum,
        {eval_games} as eval_games, {think_sum} as think_sum, {think_games} as think_games,
        min({first_played}) as first_played
    from {source}
    group by all
    order by all
"""
# A part's games (`file_parts`) with their move's UCI (null for a game that ends there).
GAMES_MOVES = "(select *, f || t || coalesce(lower(promote), '') as uci from frequent_games)"
GAMES_SUMMED = {
    "games": "count(*)",
    "white_wins": "count(*) filter (where result = 'W')",
    "draws": "count(*) filter (where result = 'D')",
    "black_wins": "count(*) filter (where result = 'B')",
    "elo2_sum": "sum(elo2)::bigint",
    "elo_games": "count(elo2)",
    "eval_sum": "sum(eval_cp)::bigint",
    "eval_games": "count(eval_cp)",
    "think_sum": "sum(think)",
    "think_games": "count(think)",
    "first_played": "datetime",
}
SUMS_SUMMED = {name: f"sum({name})::bigint" for name in GAMES_SUMMED} | {
    "think_sum": "sum(think_sum)",
    "first_played": "first_played",
}
# The page's order of games: the players' mean rating, then the latest, then the game's key.
TOP_ORDER = "elo2 desc nulls last, datetime desc nulls last, game_key"
# The `TOP_GAMES` games of each position and cell, of games, then of those tops.
TOP = f"""
    select key, {", ".join(CELL)}, elo2, {", ".join(c for c in TOP_COLUMNS if c != "type")}
    from {{source}}
    qualify row_number() over (partition by key, {", ".join(CELL)} order by {TOP_ORDER}) <= {TOP_GAMES}
    order by key
"""


def written(lake: Lake, rel: str, batches: pa.RecordBatchReader) -> None:
    """Writes `batches` to the lake's file `rel`, a row group of up to `ROW_GROUP` rows per batch."""
    lake.make_parent(rel)
    with pq.ParquetWriter(lake.path(rel), batches.schema, filesystem=lake.fs, compression="zstd") as out:
        for batch in batches:
            out.write_batch(batch, row_group_size=ROW_GROUP)


def cells(con: duckdb.DuckDBPyConnection, filters: GameFilters) -> str | None:
    """The SQL test of a pre-aggregate row's cell that keeps exactly the games `filters` keep, None when
    their bounds are not the cells' (a player; a rating not of whole hundreds; dates not of whole months):
    the views' `explorer_aligned` and `explorer_cell_kept`, as sql/explorer.sql asks them."""
    bounds = [filters.min_rating, filters.max_rating, filters.since, filters.until]
    ((aligned,),) = con.execute(
        "select explorer_aligned($1, $2, $3, $4, $5)", [filters.player, *bounds]
    ).fetchall()
    if not aligned:
        return None
    values = ", ".join(sql_value(v) for v in [filters.type, *bounds])
    return f"explorer_cell_kept(type, band, month, {values})"


def sql_value(value: str | int | dt.date | None) -> str:
    """`value` as an SQL literal."""
    if value is None:
        return "null"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, dt.date):
        return f"'{value.isoformat()}'::date"
    return sql_string(value)


def rows_at(lake: Lake, rel: str, key: int) -> pa.Table | None:
    """The rows of the pre-aggregate file `rel` whose key is `key`; None when it holds none (a position
    fewer than `FREQUENT_GAMES` games reach)."""
    found = keyed_rows(pq.ParquetFile(lake.path(rel), filesystem=lake.fs), key)
    return found if found is not None and found.num_rows else None


def keyed_rows(parquet: pq.ParquetFile, key: int) -> pa.Table | None:
    """The rows of `parquet` (sorted by its first column, `key`) whose key is `key`, read from the row groups
    whose statistics can hold it; None when none can."""
    meta = parquet.metadata
    groups = [g for g in range(meta.num_row_groups) if may_hold(meta.row_group(g).column(0).statistics, key)]
    if not groups:
        return None
    found = parquet.read_row_groups(groups)
    return found.filter(pc.equal(found["key"], key))


def may_hold(stats: pq.Statistics | None, key: int) -> bool:
    return stats is None or not stats.has_min_max or stats.min <= key <= stats.max


@dataclass(frozen=True)
class Cells:
    """A position's rows of the pre-aggregate (`moves`, `top`) and the SQL test of the cells the filters
    keep (`kept`, the variants the connection counts included)."""

    moves: pa.Table
    top: pa.Table
    kept: str


def at(
    index: PositionIndex | None, con: duckdb.DuckDBPyConnection, key: int, filters: GameFilters
) -> Cells | None:
    """The pre-aggregate of the lake's `index` (None: no index) at the position `key` under `filters`, None
    when it cannot answer exactly (see the module's doc): the one choice between it and the games' moves,
    for the explorer and its page."""
    # Its moves' SAN is python-chess's (the optional extra): without it the row path answers (SQL's SAN).
    if index is None or not index.record.explorer_files or not extras.installed("chess"):
        return None
    kept = cells(con, filters)
    if kept is None or index.uncovered():
        return None
    lake = index.lake
    moves_rel, top_rel = index.record.explorer_files
    moves = rows_at(lake, moves_rel, key)
    if moves is None:
        return None
    top = rows_at(lake, top_rel, key)
    return Cells(
        moves, top if top is not None else moves.schema.empty_table(), f"{kept} and variant_selected(variant)"
    )


# Registered names of a position's rows while a question reads them.
MOVES_AT, TOP_AT = "aggregate_moves", "aggregate_top"


def explored(con: duckdb.DuckDBPyConnection, fen: str, found: Cells) -> pl.DataFrame:
    """sql/explorer.sql's answer at `fen` from the pre-aggregate's rows `found`: its columns, each the sum
    of the kept cells' sums (a mean: their sum over their count), the SAN python-chess's (which the SQL's
    `move_san` equals; binding that macro costs more than the rest of the question)."""
    con.register(MOVES_AT, found.moves)
    try:
        rows = con.sql(
            f"""
            with final as (
                select
                    uci,
                    coalesce(sum(games), 0)::bigint as games,
                    coalesce(sum(white_wins), 0)::bigint as white_wins,
                    coalesce(sum(draws), 0)::bigint as draws,
                    coalesce(sum(black_wins), 0)::bigint as black_wins,
                    round(sum(elo2_sum) / 2 / sum(elo_games), 3) as mean_elo,
                    round(sum(eval_sum) / sum(eval_games), 3) as mean_eval_cp,
                    round(sum(think_sum) / sum(think_games), 3) as mean_think,
                    strftime(min(first_played), '%Y-%m-%d %H:%M:%S') as first_played
                from {MOVES_AT}
                where uci is not null and {found.kept}
                group by uci
            )
            select * from final where games > 0 order by games desc, uci
            """
        ).pl()
    finally:
        con.unregister(MOVES_AT)
    import chess  # the optional extra, which `at` found

    board = chess.Board(fen)
    san = pl.Series("san", [board.san(chess.Move.from_uci(uci)) for uci in rows["uci"]], pl.String)
    return rows.insert_column(1, san)


def top_games(con: duckdb.DuckDBPyConnection, found: Cells) -> tuple[pl.DataFrame, int]:
    """The `TOP_GAMES` best rated games at the position the filters keep, then the latest (`TOP_ORDER`),
    their `TOP_COLUMNS`; and how many games the filters keep there."""
    con.register(MOVES_AT, found.moves)
    con.register(TOP_AT, found.top)
    try:
        ((total,),) = con.sql(f"select coalesce(sum(games), 0) from {MOVES_AT} where {found.kept}").fetchall()
        games = con.sql(
            f"select {', '.join(TOP_COLUMNS)} from {TOP_AT} where {found.kept} "
            f"order by {TOP_ORDER} limit {TOP_GAMES}"
        ).pl()
        return games, int(total)
    finally:
        con.unregister(MOVES_AT)
        con.unregister(TOP_AT)
