"""Opening books from the lake at any depth: each position of the standard games' first plies, the moves
played from it and how they scored (`count`, `build`); `warehouse.positions.book_out` writes them as
Parquet, Ormulogun's TSV or PolyGlot `.bin`.

A book row is one (position, move): `key` (PolyGlot, signed), `fen` (the position's, without move counters),
`uci`, `san`, `white_wins`, `draws`, `black_wins`, `games` (results unknown included), `rated` (games with
both Elos) and `mean_rating` (their mean Elo), `first_date`, `last_date`, and its position's totals
(`POSITION_COLUMNS`: the games that stood in it, whichever move they played or if they ended there); sorted
by `key`, then `uci`. The moves are those of the first `max_ply` plies, replayed from the plies' move
columns (`_core.BookCounter`): files counted on every core this process may use, each counter holding its
share of a memory budget and spilling sorted runs to a work folder when full; the runs and the rows left
in memory merged at the end (`_core.book_rows`), where `min_games` applies (docs/positions.md).
"""

from __future__ import annotations

import tempfile
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from warehouse import _core
from warehouse.cores import default_jobs
from warehouse.errors import LakeError
from warehouse.lake.dedup import SortedIds
from warehouse.lake.layout import GAMES, plies_twin
from warehouse.lake.location import Lake
from warehouse.lake.parquet import read_parquet
from warehouse.queries.filters import GameFilters
from warehouse.queries.sql import connected

BOOK_SCHEMA = pa.schema(
    [
        ("key", pa.int64()),
        ("fen", pa.string()),
        ("uci", pa.string()),
        ("san", pa.string()),
        ("white_wins", pa.int64()),
        ("draws", pa.int64()),
        ("black_wins", pa.int64()),
        ("games", pa.int64()),
        ("rated", pa.int64()),
        ("mean_rating", pa.float64()),
        ("first_date", pa.timestamp("ms", "UTC")),
        ("last_date", pa.timestamp("ms", "UTC")),
    ]
)
# The totals of a row's position: the games that stood in it (played any move from it, or ended there),
# before any of its moves was left out by `min_games`. Not in the Parquet book: books merged by `merge`
# would sum a position's totals of only the parts that kept one of its moves.
POSITION_COLUMNS = ("position_white_wins", "position_draws", "position_black_wins", "position_games")
ROWS_SCHEMA = pa.schema([*BOOK_SCHEMA, *((name, pa.int64()) for name in POSITION_COLUMNS)])
# The moves of each game's first DEFAULT_MAX_PLY plies (15 moves each side): where books and the explorer
# are asked about; deeper positions are mostly a game's own.
DEFAULT_MAX_PLY = 30
# Bytes of rows the counters hold in memory, all threads together, before spilling runs (each row ~190 B
# with its share of the hash table: ~5.7 M rows a GiB).
DEFAULT_MEMORY = 1 << 30
# The plies are counted in batches of this many rows, read while still in the CPU's cache.
PLY_BATCH_ROWS = 1 << 16
# The book's rows come in batches of about this many.
BATCH_ROWS = 1 << 16
# What a book reads of each games file (the Elos alone of the players), and of its plies.
GAME_COLUMNS = [
    "n_plies",
    "game_key",
    "variant",
    "result",
    "datetime",
    "start_fen",
    "players.list.element.elo",
]
MOVE_COLUMNS = ["f", "t", "promote"]


@dataclass(frozen=True)
class Filters(GameFilters):
    """Which games count (`GameFilters`), and rows of at least `min_games` games."""

    min_games: int = 1


def count(
    con: duckdb.DuckDBPyConnection,
    work: Path,
    filters: Filters = Filters(),
    max_ply: int = DEFAULT_MAX_PLY,
    memory: int = DEFAULT_MEMORY,
) -> Iterator[pa.RecordBatch]:
    """The rows of the book of the lake `con` reads (`warehouse.connect`), for the games `filters` keeps:
    the moves of their first `max_ply` plies, in batches of whole positions (`ROWS_SCHEMA`). The counters
    hold at most `memory` bytes of rows together and spill runs to `work` (an empty folder, removed by
    the caller); with any game filter, the games the view keeps (`Filters.where`) are the ones counted."""
    lake, _ = connected(None, con)
    kept = kept_keys(con, filters) if filters.selective() else None
    counters = count_lake(lake, kept, max_ply, memory, work)
    try:
        rows = _core.book_rows(counters, filters.min_games, work, BATCH_ROWS)
        for array in rows:
            yield pa.record_batch(array).cast(ROWS_SCHEMA)
    except ValueError as e:  # a move its position does not allow: the lake's moves are damaged
        raise LakeError(f"{lake.location}: {str(e).splitlines()[0]}") from None


def build(
    con: duckdb.DuckDBPyConnection,
    filters: Filters = Filters(),
    max_ply: int = DEFAULT_MAX_PLY,
    memory: int = DEFAULT_MEMORY,
    work: Path | None = None,
) -> pa.Table:
    """The book's rows (`count`) as one table, its runs spilled to a folder made in `work` (the system's
    temporary folder by default) and removed after."""
    with tempfile.TemporaryDirectory(prefix=".book-", dir=work) as runs:
        batches = list(count(con, Path(runs), filters, max_ply, memory))
    return pa.Table.from_batches(batches, ROWS_SCHEMA)


def count_lake(
    lake: Lake, kept: SortedIds | None, max_ply: int, memory: int, work: Path
) -> list[_core.BookCounter]:
    """Counters of every `games/` file of `lake`, counted on as many threads as the process may use
    (`default_jobs`), each taking the next file as it is done and holding its share of `memory`."""
    files = lake.parquet_files(GAMES)
    workers = max(1, min(default_jobs(), len(files)))
    counters = [_core.BookCounter(max_ply, memory // workers, work, f"w{i}") for i in range(workers)]
    pending = iter(files)
    lock, failed = threading.Lock(), threading.Event()

    def work_on(counter: _core.BookCounter) -> None:
        while not failed.is_set():
            with lock:
                rel = next(pending, None)
            if rel is None:
                return
            try:  # the kernel's errors are ValueErrors: moves that do not fit their games
                count_file(lake, counter, rel, kept)
            except ValueError as e:
                failed.set()
                raise LakeError(f"{lake.location}/{rel}: {str(e).splitlines()[0]}") from None
            except BaseException:
                failed.set()
                raise

    with ThreadPoolExecutor(workers, thread_name_prefix="book") as pool:
        for done in [pool.submit(work_on, counter) for counter in counters]:
            done.result()
    return counters


def kept_keys(con: duckdb.DuckDBPyConnection, filters: Filters) -> SortedIds:
    """The `game_key`s of the standard games `filters` keep."""
    where, params = filters.where()
    kept = con.sql(f"select game_key from games where games.variant = 'Standard' and {where}", params=params)
    keys = SortedIds()
    keys.add(kept.to_arrow_table()["game_key"].to_numpy())
    return keys


def count_file(lake: Lake, counter: _core.BookCounter, rel: str, kept: SortedIds | None) -> None:
    """Counts the moves of the `games/` file `rel` (its `plies/` twin's move columns) of its standard games
    (of those whose `game_key` is in `kept`, unless None)."""
    with read_parquet(lake, rel) as parquet:
        games = parquet.read(columns=GAME_COLUMNS, use_threads=False).combine_chunks()
    counted = pc.equal(games["variant"], "Standard")
    if kept is not None:
        counted = pc.and_(counted, pa.array(kept.contains(games["game_key"].to_numpy())))
    players = games["players"]
    elos = [pc.struct_field(pc.list_element(players, side), "elo") for side in (0, 1)]
    columns = {
        "n_plies": games["n_plies"],
        "game_key": games["game_key"],
        "counted": counted,
        "result": games["result"],
        "elo_sum": pc.add(*elos),
        "date_ms": games["datetime"].cast(pa.int64()),
        "start_fen": games["start_fen"],
    }
    counter.start_file(
        pa.RecordBatch.from_arrays([c.combine_chunks() for c in columns.values()], list(columns))
    )
    with read_parquet(lake, plies_twin(rel)) as parquet:
        for batch in parquet.iter_batches(PLY_BATCH_ROWS, columns=MOVE_COLUMNS, use_threads=False):
            counter.add_moves(*batch.columns)
    counter.end_file()
